#include "gui/matrix_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cfloat>
#include <string>

#include "gui/style.h"
#include "gui/view/arrows.h"
#include "gui/view/matrix_grid.h"

namespace collscope::app {

namespace {

ImVec2 iv(view::Vec2 v) { return {v.x, v.y}; }

constexpr ImU32 kLabel = IM_COL32(200, 200, 205, 255);
constexpr ImU32 kDim = IM_COL32(150, 150, 160, 255);

view::MatrixStyle matrix_style(bool presenter) {
  view::MatrixStyle st;
  st.copy = kCopyColour;
  st.reduce = kReduceColour;
  st.scale = kScaleColour;
  const auto bg = background_colour(presenter);
  st.background = {bg[0], bg[1], bg[2], 1};
  return st;
}

const char* mark_words(view::MarkKind k) {
  switch (k) {
    case view::MarkKind::reduce:
      return "adds";
    case view::MarkKind::copy:
      return "copies";
    case view::MarkKind::scale:
      return "scales";
    case view::MarkKind::signal:
      return "signals";
    case view::MarkKind::none:
      break;
  }
  return "";
}

// What a colour means, as the boxes' legend says it, and what a mark is.
void draw_legend(ImDrawList* dl, ImVec2 lp, float font, view::ColourScope scope) {
  const float sq = font * 0.8f;
  float x = lp.x;
  auto chip = [&](view::Rgba c, const char* text, bool frame) {
    if (frame) dl->AddRect({x, lp.y + 2}, {x + sq, lp.y + 2 + sq}, to_u32(c), 0, 0, 2);
    else dl->AddRectFilled({x, lp.y + 2}, {x + sq, lp.y + 2 + sq}, to_u32(c), 2);
    x += sq + 4;
    dl->AddText({x, lp.y}, IM_COL32(220, 220, 225, 255), text);
    x += ImGui::CalcTextSize(text).x + font;
  };
  chip(view::rank_colour(0), "one rank's data", false);
  chip(view::mix_colour({0, 1}), "partial result (mix)", false);
  chip(view::palette().complete, "all ranks (complete)", false);
  chip(kCopyColour, "copied in this step", true);
  chip(kReduceColour, "added in this step", true);
  dl->AddText(
      {x, lp.y}, IM_COL32(160, 160, 170, 255),
      scope == view::ColourScope::call ? "colours: each call's own inputs (C)" : "colours: the program's inputs (C)");
}

}  // namespace

bool MatrixPanel::shown(const LessonState& lesson) const {
  const view::LessonRun* run = lesson.run();
  if (!run) return choice_ == CanvasView::matrix;
  return view::matrix_wanted(choice_, run->scenario.view, run->schedule.ranks);
}

std::string MatrixPanel::title(bool matrix) const {
  // "###Canvas": the same window whatever the title says.
  return matrix ? "Canvas \xC2\xB7 matrix: a row per rank, a column per chunk (M: boxes)###Canvas"
                : "Canvas \xC2\xB7 boxes (M: matrix)###Canvas";
}

void MatrixPanel::draw_axes(ImDrawList* dl, const view::MatrixGeometry& g) const {
  const float font = g.font;
  const float axis_y = g.cells.min.y - font * 1.15f;
  // Rank numbers, right-aligned left of the margins; chunk numbers above the columns.
  for (const auto& t : g.rank_ticks) {
    const float w = ImGui::CalcTextSize(t.text.c_str()).x;
    dl->AddText({g.sends.min.x - g.pad - w, t.pos - font / 2}, kLabel, t.text.c_str());
    dl->AddLine({g.sends.min.x - g.pad / 2, t.pos}, {g.sends.min.x, t.pos}, kDim);
  }
  for (const auto& t : g.column_ticks) {
    const float w = ImGui::CalcTextSize(t.text.c_str()).x;
    const float x = std::clamp(t.pos - w / 2, g.cells.min.x, std::max(g.cells.min.x, g.cells.max.x - w));
    dl->AddText({x, axis_y}, kLabel, t.text.c_str());
  }
  dl->AddText({g.area.min.x + g.pad, axis_y}, kDim, "rank");
  dl->AddText({g.sends.min.x, axis_y}, kDim, "out");
  dl->AddText({g.receives.min.x, axis_y}, kDim, "in");
}

void MatrixPanel::draw_margins(ImDrawList* dl, const view::MatrixGeometry& g) const {
  const view::MatrixGrid& grid = cache_.grid();
  const float rh = g.row_h();
  const view::MatrixStyle st = matrix_style(false);
  auto column = [&](const view::Rect& r, const std::vector<view::MarkKind>& rows) {
    dl->AddRectFilled(iv(r.min), iv(r.max), IM_COL32(34, 36, 42, 255));
    // One rectangle per run of rows that do the same: a ring's step is one bar.
    for (const auto& run : view::margin_runs(rows))
      dl->AddRectFilled({r.min.x, r.min.y + rh * static_cast<float>(run.first)},
                        {r.max.x, r.min.y + rh * static_cast<float>(run.last + 1)},
                        to_u32(view::mark_colour(st, run.kind)));
  };
  column(g.sends, grid.sends);
  column(g.receives, grid.receives);
}

void MatrixPanel::tooltip(const view::MatrixGeometry& g, ImVec2 mouse) {
  const std::int32_t row = g.row_at(mouse.y), col = g.col_at(mouse.x);
  if (row < 0 || col < 0) return;
  const view::MatrixShape& sh = cache_.shape();
  const std::int32_t rank = row * g.ranks_per_row, column = col * g.columns_per_col;
  const std::uint64_t first = static_cast<std::uint64_t>(column) * sh.per_column;
  ImGui::BeginTooltip();
  if (g.ranks_per_row > 1)
    ImGui::Text("ranks %d..%d (this row), rank %d below", rank, std::min(sh.ranks, rank + g.ranks_per_row) - 1, rank);
  else ImGui::Text("rank %d, buffer \"%s\"", rank, sh.name.c_str());
  ImGui::Text("elements %llu..%llu", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(
                  std::min(sh.elements, first + sh.per_column * static_cast<std::uint64_t>(g.columns_per_col)) - 1));
  const auto who = cache_.contributors(rank, first);
  std::string list;
  for (std::size_t i = 0; i < who.size() && i < 16; ++i) list += (i ? ", " : "") + std::to_string(who[i]);
  if (who.size() > 16) list += ", ...";
  if (who.empty()) ImGui::TextUnformatted("holds no rank's input yet");
  else if (static_cast<std::int32_t>(who.size()) >= sh.ranks && sh.ranks > 1)
    ImGui::Text("complete: holds the data of all %d ranks", sh.ranks);
  else if (who.size() == 1) ImGui::Text("holds rank %d's data", who[0]);
  else ImGui::Text("a partial result of %zu ranks: %s", who.size(), list.c_str());
  for (const auto& mk : cache_.marks().cells)
    if (mk.rank == rank && mk.first <= column && column <= mk.last) {
      ImGui::Text("this step: rank %d %s its data here", mk.from, mark_words(mk.kind));
      break;
    }
  ImGui::EndTooltip();
}

void MatrixPanel::draw(LessonState& lesson, const view::Playback& pb, bool presenter, float scale) {
  const view::LessonRun* run = lesson.run();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!run || avail.x < 50 || avail.y < 50) return;
  const view::MatrixShape& shape = cache_.prepare(lesson.shared_run(), lesson.colour_scope(), pb.applied);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  if (shape.buf < 0 || shape.columns == 0) {
    ImGui::TextWrapped("This lesson has no buffer to show as a matrix; press M for the boxes.");
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float font = ImGui::GetFontSize();
  const float legend_h = ImGui::GetTextLineHeightWithSpacing();
  const view::MeasureText measure = [](float size, const std::string& text) {
    return ImGui::GetFont()->CalcTextSizeA(size, FLT_MAX, 0, text.c_str()).x;
  };
  const view::MatrixGeometry g =
      view::matrix_geometry(shape, {o.x, o.y}, {avail.x, avail.y}, legend_h, font, scale, measure);
  const std::int32_t texel = view::matrix_texel(g.col_w(), g.row_h(), g.rows, g.cols);
  const bool landed = pb.t >= view::kTravelFraction;
  if (cache_.update(pb.shown(), pb.applied, g.ranks_per_row, g.columns_per_col, texel, landed, matrix_style(presenter)))
    image_.upload(cache_.pixels().width, cache_.pixels().height, cache_.pixels().rgba);
  dl->AddImage(image_.id(), iv(g.cells.min), iv(g.cells.max));
  draw_margins(dl, g);
  draw_axes(dl, g);
  const std::string summary = view::matrix_summary(shape, g.ranks_per_row, g.columns_per_col);
  dl->AddText({g.header.min.x + g.pad, g.header.min.y + font * 0.2f}, kLabel, summary.c_str());
  draw_legend(dl, {o.x, o.y + avail.y - legend_h}, font, lesson.colour_scope());
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered()) tooltip(g, mouse);
  // The visible way back to the boxes, at the header's right end.
  const char* back = "boxes (M)";
  ImGui::SetCursorScreenPos(
      {g.header.max.x - ImGui::CalcTextSize(back).x - ImGui::GetStyle().FramePadding.x * 2 - g.pad, g.header.min.y});
  if (ImGui::SmallButton(back)) choice_ = CanvasView::boxes;
  ImGui::SetCursorScreenPos(o);
  ImGui::Dummy(avail);
}

}  // namespace collscope::app
