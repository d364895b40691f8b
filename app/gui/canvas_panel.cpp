#include "gui/canvas_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>

#include "gui/style.h"
#include "gui/view/canvas.h"
#include "gui/view/layout.h"

namespace collscope::app {

namespace {

ImVec2 iv(view::Vec2 v) { return {v.x, v.y}; }

void draw_cell(ImDrawList* dl, const view::Cell& cell, ImVec2 a, ImVec2 b, float scale) {
  const float w = b.x - a.x, h = b.y - a.y;
  // Rounded corners only where they can be seen: a tiny rounded cell costs many
  // vertices, and 64 ranks x 64 cells must still draw at frame rate.
  dl->AddRectFilled(a, b, to_u32(cell.colour.fill), w > 14 ? 2 * scale : 0.0f);
  if (cell.colour.coverage == view::Coverage::partial && cell.ranks.size() <= 16 && w > 6) {
    // A strip of the contributors' own colours along the bottom: the mix, spelled out.
    const float sw = w / static_cast<float>(cell.ranks.size());
    for (std::size_t i = 0; i < cell.ranks.size(); ++i)
      dl->AddRectFilled({a.x + sw * static_cast<float>(i), b.y - h * 0.22f},
                        {a.x + sw * static_cast<float>(i + 1), b.y}, to_u32(view::rank_colour(cell.ranks[i])));
  }
  if (cell.colour.coverage == view::Coverage::complete) {
    // The distinct mark of "every rank is in here": a dark corner flag.
    const float k = std::min(w, h) * 0.35f;
    dl->AddTriangleFilled({b.x - k, a.y}, {b.x, a.y}, {b.x, a.y + k}, IM_COL32(20, 20, 20, 255));
  }
  if (!cell.text.empty()) {
    const ImVec2 ts = ImGui::CalcTextSize(cell.text.c_str());
    if (ts.x <= w - 2 && ts.y <= h + 2)
      dl->AddText({(a.x + b.x - ts.x) / 2, (a.y + b.y - ts.y) / 2}, to_u32(view::text_on(cell.colour.fill)),
                  cell.text.c_str());
  }
}

// A cell of the row the quiz asks about: outlined in white when picked, in grey when
// not; a click on it is handed to the quiz.
void quiz_cell(ImDrawList* dl, CanvasQuiz& quiz, const view::BufferRow& row, const view::Cell& cell, ImVec2 a, ImVec2 b,
               bool over, float scale) {
  const auto& p = quiz.picked;
  const bool picked = std::find(p.begin(), p.end(), cell.first) != p.end();
  dl->AddRect(a, b, picked ? IM_COL32(255, 255, 255, 255) : IM_COL32(150, 150, 160, 200), 0, 0,
              std::round((picked ? 3.0f : 1.0f) * scale));
  if (over && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    quiz.clicked_first = static_cast<std::int64_t>(cell.first);
    quiz.clicked_count = cell.count;
  }
  quiz.per_cell = row.per_cell;
}

void cell_tooltip(const view::LessonRun& run, std::int32_t rank, const view::BufferRow& row, const view::Cell& cell) {
  ImGui::BeginTooltip();
  ImGui::Text("rank %d, buffer \"%s\"", rank, row.name.c_str());
  if (row.scratch) ImGui::TextUnformatted("scratch space of the algorithm, shown while a step uses it");
  if (cell.count == 1) ImGui::Text("element %llu", static_cast<unsigned long long>(cell.first));
  else
    ImGui::Text("elements %llu..%llu (%llu per cell)", static_cast<unsigned long long>(cell.first),
                static_cast<unsigned long long>(cell.first + cell.count - 1),
                static_cast<unsigned long long>(row.per_cell));
  if (cell.min == cell.max) ImGui::Text("value %s", view::format_value(cell.min).c_str());
  else ImGui::Text("values %s .. %s", view::format_value(cell.min).c_str(), view::format_value(cell.max).c_str());
  std::string who;
  for (std::size_t i = 0; i < cell.ranks.size() && i < 24; ++i) who += (i ? ", " : "") + std::to_string(cell.ranks[i]);
  if (cell.ranks.size() > 24) who += ", ...";
  switch (cell.colour.coverage) {
    case view::Coverage::none:
      ImGui::TextUnformatted("holds no rank's input yet");
      break;
    case view::Coverage::single:
      ImGui::Text("holds rank %s's data", who.c_str());
      break;
    case view::Coverage::partial:
      ImGui::Text("a partial result of ranks %s", who.c_str());
      break;
    case view::Coverage::complete:
      ImGui::Text("complete: holds the data of all %d ranks", run.schedule.ranks);
      break;
  }
  ImGui::EndTooltip();
}

}  // namespace

void CanvasPanel::make_sprites(float radius, float scale) {
  if (radius == sprites_radius_ && scale == sprites_scale_) return;
  // (outer radius, width) of each: the token's disc under its ring, the ring on its
  // edge, and the flash where it landed; as ImGui's AddCircle strokes a circle.
  const float ring = std::round(2.5f * scale), flash = std::round(3 * scale);
  const float outer[kSprites] = {radius, radius + ring / 2, radius * 1.6f + flash / 2};
  const float width[kSprites] = {radius, ring, flash};
  int w = 0, h = 0;
  for (int i = 0; i < kSprites; ++i) {
    sprite_size_[i] = static_cast<int>(std::ceil(2 * outer[i])) + 2;
    sprite_x_[i] = w;
    w += sprite_size_[i];
    h = std::max(h, sprite_size_[i]);
  }
  std::vector<ImU32> pixels(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), 0);
  for (int i = 0; i < kSprites; ++i) {
    const auto cover = view::ring_coverage(outer[i], width[i], sprite_size_[i]);
    for (int y = 0; y < sprite_size_[i]; ++y)
      for (int x = 0; x < sprite_size_[i]; ++x)
        pixels[static_cast<std::size_t>(y * w + sprite_x_[i] + x)] =
            IM_COL32(255, 255, 255, cover[static_cast<std::size_t>(y * sprite_size_[i] + x)]);
  }
  sprites_.upload(w, h, pixels);
  sprites_radius_ = radius;
  sprites_scale_ = scale;
}

void CanvasPanel::draw_sprite(ImDrawList* dl, Sprite which, ImVec2 centre, ImU32 colour) const {
  const auto size = static_cast<float>(sprite_size_[which]);
  const float W = static_cast<float>(sprites_.width()), H = static_cast<float>(sprites_.height());
  const ImVec2 a{std::round(centre.x - size / 2), std::round(centre.y - size / 2)};  // texel to pixel
  const float u = static_cast<float>(sprite_x_[which]);
  dl->AddImage(sprites_.id(), a, {a.x + size, a.y + size}, {u / W, 0}, {(u + size) / W, size / H}, colour);
}

namespace {

// The legend: what a colour means, and the compute badge, in rows no wider than `width`
// (a projector's large fonts take two). Draws when `dl` is given; returns the rows.
int draw_legend(ImDrawList* dl, ImVec2 lp, float width, float font, float line_h, view::ColourScope scope) {
  const float sq = font * 0.8f;
  float x = lp.x, y = lp.y;
  int rows = 1;
  auto item = [&](const view::Rgba* c, const char* text, ImU32 text_colour) {
    const float w = (c ? sq + 4 : 0) + ImGui::CalcTextSize(text).x;
    if (x > lp.x && x + w > lp.x + width) x = lp.x, y += line_h, ++rows;
    if (dl && c) dl->AddRectFilled({x, y + 2}, {x + sq, y + 2 + sq}, to_u32(*c), 2);
    if (dl) dl->AddText({x + (c ? sq + 4 : 0), y}, text_colour, text);
    x += w + font;
  };
  const ImU32 text = IM_COL32(220, 220, 225, 255);
  const view::Rgba one = view::rank_colour(0), mix = view::mix_colour({0, 1}), all = view::palette().complete;
  item(&one, "one rank's data", text);
  item(&mix, "partial result (mix)", text);
  item(&all, "all ranks (complete)", text);
  item(&kCopyColour, "copy", text);
  item(&kReduceColour, "reduce (+)", text);
  item(&kComputeColour, "compute span (no data moves)", text);
  // What the colours count (C switches): said, since the two differ after the first call.
  item(nullptr,
       scope == view::ColourScope::call ? "colours: each call's own inputs (C)" : "colours: the program's inputs (C)",
       IM_COL32(160, 160, 170, 255));
  return rows;
}

}  // namespace

// Every rank's box, its title, row names and cells (one image per rank when dense);
// returns the rank under the pointer (-1: none).
std::int32_t CanvasPanel::draw_boxes(ImDrawList* dl, const LessonState& lesson, const view::LessonRun& run,
                                     const view::CellsView& cv, const view::CanvasGeometry& g, const Highlight& hl,
                                     bool presenter, float scale, CanvasQuiz* quiz) {
  const float font = g.font;
  const bool small = g.small;
  const float label_size = g.label_size;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hovered_window = ImGui::IsWindowHovered();
  std::int32_t hover_rank = -1;
  const ImU32 box_bg = presenter ? IM_COL32(18, 18, 22, 255) : IM_COL32(34, 36, 42, 255);
  // Dense pictures (many ranks, many cells): cells a few pixels wide show their colour and
  // nothing else, so each rank's rows are one image instead of hundreds of rectangles, and
  // the boxes are outlines. A software renderer spends its time filling pixels and
  // setting up triangles; this keeps 64 ranks x 64 cells within a frame.
  std::size_t max_cells = 1, image_rows = 0;
  for (const auto& rc : cv.ranks) {
    image_rows += rc.rows.size();
    for (const auto& row : rc.rows) max_cells = std::max(max_cells, row.cells.size());
  }
  const float cell_w = (g.layout.box.x - 2 * g.pad - g.label_w) / static_cast<float>(max_cells);
  const bool dense = cell_w < 6 * scale && image_rows > 0;
  if (dense && cells_version_ != lesson.cells_version()) {
    const std::size_t W = max_cells;
    cells_pixels_.assign(W * image_rows, 0);
    std::size_t y = 0;
    for (const auto& rc : cv.ranks)
      for (const auto& row : rc.rows) {
        for (std::size_t c = 0; c < row.cells.size(); ++c) cells_pixels_[y * W + c] = to_u32(row.cells[c].colour.fill);
        ++y;
      }
    cells_image_.upload(static_cast<int>(W), static_cast<int>(image_rows), cells_pixels_);
    cells_version_ = lesson.cells_version();
  }
  std::size_t image_row = 0;
  // Every cell image in one draw call: the images go to a channel underneath the outlines
  // and text, so the texture does not switch at every row (a software renderer pays for
  // each draw call).
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(1);
  for (const auto& rc : cv.ranks) {
    const ImVec2 m = iv(g.box_min(rc.rank));
    const ImVec2 mx{m.x + g.layout.box.x, m.y + g.layout.box.y};
    const bool lit = hl.rank == rc.rank;
    const bool inside = hovered_window && mouse.x >= m.x && mouse.x < mx.x && mouse.y >= m.y && mouse.y < mx.y;
    if (!dense) dl->AddRectFilled(m, mx, box_bg, 5 * scale);
    // Whole-pixel widths: ImGui draws those from its texture, with a third of the triangles.
    dl->AddRect(m, mx, lit ? IM_COL32(255, 255, 255, 255) : to_u32(view::rank_colour(rc.rank), 0.9f),
                dense ? 0.0f : 5 * scale, 0, std::max(1.0f, std::round((lit ? 3.0f : 1.5f) * scale)));
    if (g.title_h >= font * 0.9f) {
      std::string title = "rank " + std::to_string(rc.rank);
      if (!small && !dense && static_cast<std::size_t>(rc.rank) < run.outcome.record.device_labels.size())
        title += " \xC2\xB7 " + run.outcome.record.device_labels[static_cast<std::size_t>(rc.rank)];
      dl->AddText({m.x + g.pad, m.y + 2 * scale}, to_u32(view::rank_colour(rc.rank)), title.c_str());
    }
    for (std::size_t ri = 0; ri < rc.rows.size(); ++ri, ++image_row) {
      const auto& row = rc.rows[ri];
      if (g.label_w > 0) {
        const ImVec4 clip{m.x, m.y, m.x + g.label_w, mx.y};
        // A scratch row (an algorithm's workspace, shown while a step uses it) in amber.
        dl->AddText(ImGui::GetFont(), label_size,
                    {m.x + g.pad, m.y + g.title_h + g.row_h * (static_cast<float>(ri) + 0.5f) - label_size / 2},
                    row.scratch ? IM_COL32(230, 180, 90, 255) : IM_COL32(200, 200, 205, 255), row.name.c_str(), nullptr,
                    0, &clip);
      }
      if (row.cells.empty()) continue;
      if (dense) {
        const view::Rect first = g.cell(rc.rank, ri, 0, row.cells.size());
        const view::Rect last = g.cell(rc.rank, ri, row.cells.size() - 1, row.cells.size());
        const ImVec2 a = iv(first.min), b = iv(first.max), b_last = iv(last.max);
        const float H = static_cast<float>(image_rows), W = static_cast<float>(max_cells);
        dl->ChannelsSetCurrent(0);
        dl->AddImage(cells_image_.id(), a, {b_last.x, b.y}, {0, static_cast<float>(image_row) / H},
                     {static_cast<float>(row.cells.size()) / W, static_cast<float>(image_row + 1) / H});
        dl->ChannelsSetCurrent(1);
      }
      const bool pickable = quiz && quiz->rank == rc.rank && quiz->buf == row.buf;
      for (std::size_t c = 0; c < row.cells.size(); ++c) {
        if (dense && !inside && !pickable) break;  // only the hover test needs the cells one by one
        const view::Rect cr = g.cell(rc.rank, ri, c, row.cells.size());
        const ImVec2 a = iv(cr.min), b = iv(cr.max);
        if (!dense) draw_cell(dl, row.cells[c], a, b, scale);
        const bool over = inside && mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y;
        if (pickable) quiz_cell(dl, *quiz, row, row.cells[c], a, b, over, scale);
        if (over) cell_tooltip(run, rc.rank, row, row.cells[c]);
      }
    }
    if (inside) hover_rank = rc.rank;
  }
  dl->ChannelsMerge();
  return hover_rank;
}

// The step's transfers: arrows from the source cell to the destination cell, tokens
// on them, and compute spans as badges.
void CanvasPanel::draw_arrows(ImDrawList* dl, LessonState& lesson, const view::CellsView& cv,
                              const view::CanvasGeometry& g, const view::Playback& pb, const Highlight& hl, float scale,
                              const view::MeasureText& measure) {
  const float font = g.font;
  if (pb.applied >= lesson.steps()) return;
  const auto& arrows = lesson.arrows(pb.applied);
  const float fade = pb.t >= view::kTravelFraction ? 0.45f : 1.0f;
  // Many arrows at once (a ring of 64): coarser curves and tokens, which nobody can tell
  // apart at that size, and a third of the vertices. 0 lets ImGui choose.
  const int segments = arrows.size() > 16 ? 10 : 0;
  const float r = 11 * scale;  // a token big enough to follow from the back of a room
  make_sprites(r, scale);
  // Curves and arrowheads, then every token image, then the reduce tokens' "+" on top:
  // three channels, so the texture switches twice a frame, not at every token.
  dl->ChannelsSplit(3);
  for (const auto& a : arrows) {
    if (a.action == Action::compute) continue;  // a badge, below: it moves no data
    dl->ChannelsSetCurrent(0);
    const bool lit =
        hl.step == pb.applied && std::find(a.transfers.begin(), a.transfers.end(), hl.transfer) != a.transfers.end();
    const view::ArrowPath path = view::arrow_path(g, cv, a, lit);
    const ImVec2 p0 = iv(path.p0), p1 = iv(path.p1), c = iv(path.c);
    const view::Rgba col = is_reduction(a.action)      ? kReduceColour
                           : a.action == Action::scale ? kScaleColour
                                                       : kCopyColour;
    // Whole-pixel widths: ImGui draws those from its texture, with half the vertices.
    const float thick = path.thick;
    if (lit) dl->AddBezierQuadratic(p0, c, p1, IM_COL32(255, 255, 255, 255), thick + std::round(3 * scale), segments);
    dl->AddBezierQuadratic(p0, c, p1, to_u32(col, 0.85f * fade), thick, segments);
    dl->AddTriangleFilled(iv(path.head[0]), iv(path.head[1]), iv(path.head[2]), to_u32(col, fade));
    const auto tok = view::token_on(path, pb.t);
    dl->ChannelsSetCurrent(1);
    if (!tok.landed) {
      draw_sprite(dl, kDisc, iv(tok.at), to_u32(a.token));
      draw_sprite(dl, kTokenRing, iv(tok.at), to_u32(col));
      if (is_reduction(a.action)) {  // reduce tokens carry a "+": they add into what they land on
        dl->ChannelsSetCurrent(2);
        dl->AddLine({tok.at.x - r * 0.55f, tok.at.y}, {tok.at.x + r * 0.55f, tok.at.y}, IM_COL32(20, 20, 20, 255),
                    std::round(2 * scale));
        dl->AddLine({tok.at.x, tok.at.y - r * 0.55f}, {tok.at.x, tok.at.y + r * 0.55f}, IM_COL32(20, 20, 20, 255),
                    std::round(2 * scale));
      }
    } else {
      draw_sprite(dl, kFlashRing, p1, to_u32(col, 0.9f));  // the landing flash
    }
  }
  // Compute spans: a labelled badge on the rank's box (what it computes, how long).
  dl->ChannelsSetCurrent(2);
  const float badge_font = std::min(font, std::max(1.0f, g.title_h));
  for (const auto& b : view::compute_badges(g, arrows, measure)) {
    dl->AddRectFilled(iv(b.rect.min), iv(b.rect.max), to_u32(kComputeColour, fade), 3 * scale);
    const ImVec4 clip{b.rect.min.x, b.rect.min.y, b.rect.max.x, b.rect.max.y};
    dl->AddText(ImGui::GetFont(), badge_font, {b.rect.min.x + g.pad, b.rect.min.y + g.pad / 2},
                IM_COL32(20, 20, 20, 255), b.text.c_str(), nullptr, 0, &clip);
  }
  dl->ChannelsMerge();
}

void CanvasPanel::draw(LessonState& lesson, const view::Playback& pb, Highlight& hl, bool presenter, float scale,
                       CanvasQuiz* quiz) {
  const view::LessonRun* run = lesson.run();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!run || avail.x < 50 || avail.y < 50) return;
  const view::CellsView* cv = lesson.cells(pb.shown());
  if (!cv) {
    ImGui::TextWrapped("%s", lesson.error().c_str());
    return;
  }
  const Schedule& s = run->schedule;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const std::int32_t step = std::min(pb.applied, lesson.steps() - 1);
  const std::int32_t call = step >= 0 ? s.steps[static_cast<std::size_t>(step)].call : 0;

  const ImVec2 o0 = ImGui::GetCursorScreenPos();
  const float font = ImGui::GetFontSize();
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const float legend_h =
      line_h * static_cast<float>(draw_legend(nullptr, {o0.x, 0}, avail.x, font, line_h, lesson.colour_scope()));
  const view::MeasureText measure = [](float size, const std::string& text) {
    return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x;
  };
  const ImVec2 o = o0;
  const view::CanvasGeometry g =
      view::canvas_geometry(s, *cv, call, {o.x, o.y}, {avail.x, avail.y}, legend_h, font, scale, measure);

  // Tree edges first, underneath everything.
  if (g.layout.kind == view::LayoutKind::tree)
    for (const auto& b : g.layout.boxes)
      if (b.parent >= 0)
        dl->AddLine({g.area.min.x + b.centre.x, g.area.min.y + b.centre.y},
                    {g.area.min.x + g.layout.boxes[static_cast<std::size_t>(b.parent)].centre.x,
                     g.area.min.y + g.layout.boxes[static_cast<std::size_t>(b.parent)].centre.y},
                    IM_COL32(110, 110, 120, 160), 2 * scale);

  const std::int32_t hover_rank = draw_boxes(dl, lesson, *run, *cv, g, hl, presenter, scale, quiz);
  if (!quiz || !quiz->hide_arrows) draw_arrows(dl, lesson, *cv, g, pb, hl, scale, measure);
  draw_legend(dl, {o.x, o.y + avail.y - legend_h}, avail.x, font, line_h, lesson.colour_scope());
  if (ImGui::IsWindowHovered()) hl.rank = hover_rank;
  ImGui::Dummy(avail);
}

}  // namespace collscope::app
