#include "gui/view/canvas.h"

#include <algorithm>
#include <cmath>

namespace collscope::view {

Vec2 CanvasGeometry::box_min(std::int32_t r) const {
  const auto& b = layout.boxes[static_cast<std::size_t>(r)];
  return {area.min.x + b.centre.x - layout.box.x / 2, area.min.y + b.centre.y - layout.box.y / 2};
}

Rect CanvasGeometry::box(std::int32_t r) const {
  const Vec2 m = box_min(r);
  return {m, {m.x + layout.box.x, m.y + layout.box.y}};
}

Rect CanvasGeometry::cell(std::int32_t r, std::size_t row_index, std::size_t c, std::size_t cells) const {
  const Vec2 m = box_min(r);
  const float x0 = m.x + pad + label_w, x1 = m.x + layout.box.x - pad;
  const float w = (x1 - x0) / static_cast<float>(std::max<std::size_t>(1, cells));
  const float y = m.y + title_h + row_h * static_cast<float>(row_index);
  return {{x0 + w * static_cast<float>(c), y + row_h * 0.1f},
          {x0 + w * static_cast<float>(c + 1) - std::min(2.0f, w * 0.15f), y + row_h * 0.9f}};
}

Vec2 CanvasGeometry::element_centre(const CellsView& cv, std::int32_t r, std::int32_t buf, std::uint64_t index) const {
  const Rect bx = box(r);
  const Vec2 centre{(bx.min.x + bx.max.x) / 2, (bx.min.y + bx.max.y) / 2};
  if (r < 0 || static_cast<std::size_t>(r) >= cv.ranks.size()) return centre;
  const auto& rc = cv.ranks[static_cast<std::size_t>(r)];
  for (std::size_t ri = 0; ri < rc.rows.size(); ++ri) {
    const auto& row = rc.rows[ri];
    if (row.buf != buf || row.cells.empty()) continue;
    const std::int32_t c = std::max(0, cell_of(row, std::min(index, row.elements - 1)));
    const Rect a = cell(r, ri, static_cast<std::size_t>(c), row.cells.size());
    return {(a.min.x + a.max.x) / 2, (a.min.y + a.max.y) / 2};
  }
  return centre;  // no row for it (a buffer with nothing on this rank, a compute span without one)
}

CanvasGeometry canvas_geometry(const Schedule& s, const CellsView& cv, std::int32_t call, Vec2 origin, Vec2 size,
                               float legend_h, float font, float scale, const MeasureText& measure) {
  CanvasGeometry g;
  g.font = font;
  g.scale = scale;
  g.area = {origin, {origin.x + size.x, origin.y + std::max(1.0f, size.y - legend_h)}};
  std::size_t rows = std::max<std::size_t>(1, cv.rows_per_box);
  for (const auto& rc : cv.ranks) rows = std::max(rows, rc.rows.size());
  g.layout = layout_ranks(s, call, {size.x, std::max(1.0f, size.y - legend_h)}, static_cast<std::int32_t>(rows),
                          font * 1.6f, font + 14 * scale);
  g.small = g.layout.box.y < font * 2.2f || g.layout.box.x < font * 5;
  g.title_h = g.small ? std::min(g.layout.box.y * 0.3f, font) : font + 6 * scale;
  g.pad = std::max(1.0f, 4 * scale * (g.small ? 0.3f : 1.0f));
  g.row_h = (g.layout.box.y - g.title_h - g.pad) / static_cast<float>(rows);
  // Buffer names in a column of their own, as wide as the longest (at most 30% of the
  // box), in a smaller font when the rows are lower than the text.
  g.label_size = std::min(font, g.row_h * 0.95f);
  if (g.layout.box.x > font * 9 && !g.small && g.label_size >= font * 0.55f && !cv.ranks.empty() && measure) {
    float widest = 0;
    for (const auto& rc : cv.ranks)
      for (const auto& row : rc.rows) widest = std::max(widest, measure(g.label_size, row.name));
    g.label_w = std::min(widest + 2 * g.pad, g.layout.box.x * 0.3f);
  } else {
    g.label_size = 0;
  }
  return g;
}

namespace {

Vec2 clamp_to(Vec2 p, const Rect& r) {
  return {std::clamp(p.x, r.min.x, std::max(r.min.x, r.max.x)), std::clamp(p.y, r.min.y, std::max(r.min.y, r.max.y))};
}

// `r` shrunk by `m` on every side, but never past the points it must still hold.
Rect inset(const Rect& r, float m, Vec2 a, Vec2 b) {
  Rect out{{r.min.x + m, r.min.y + m}, {r.max.x - m, r.max.y - m}};
  out.min.x = std::min({out.min.x, a.x, b.x});
  out.min.y = std::min({out.min.y, a.y, b.y});
  out.max.x = std::max({out.max.x, a.x, b.x});
  out.max.y = std::max({out.max.y, a.y, b.y});
  return out;
}

}  // namespace

ArrowPath arrow_path(const CanvasGeometry& g, const CellsView& cv, const Arrow& a, bool lit) {
  ArrowPath p;
  const float scale = g.scale;
  p.p0 = clamp_to(g.element_centre(cv, a.src, a.src_buf, a.src_offset), g.area);
  p.p1 = clamp_to(g.element_centre(cv, a.dst, a.dst_buf, a.dst_offset), g.area);
  const float dist = std::hypot(p.p1.x - p.p0.x, p.p1.y - p.p0.y);
  p.bend = a.src == a.dst ? 25 * scale : dist * 0.18f;
  p.c = bend_point(p.p0, p.p1, p.bend);
  // The curve lies inside the triangle p0, c, p1: with all three on the canvas it never
  // leaves it. A control point outside (an arrow between two boxes at an edge, bent
  // outwards) is pulled in, a token's radius from the edge where the ends allow.
  const Rect keep = inset(g.area, 12 * scale, p.p0, p.p1);
  const Vec2 c = clamp_to(p.c, keep);
  if (c.x != p.c.x || c.y != p.c.y) {
    p.clipped = true;
    p.c = c;
  }
  p.thick = std::round((is_reduction(a.action) ? 4.0f : 2.5f) * scale * (lit ? 1.8f : 1.0f));
  // Arrowhead along the last part of the curve, its corners kept on the canvas too.
  const float dx = p.p1.x - p.c.x, dy = p.p1.y - p.c.y, len = std::max(1e-3f, std::hypot(dx, dy));
  const float ux = dx / len, uy = dy / len, hs = 9 * scale;
  p.head[0] = p.p1;
  p.head[1] = clamp_to({p.p1.x - ux * hs * 1.6f - uy * hs, p.p1.y - uy * hs * 1.6f + ux * hs}, g.area);
  p.head[2] = clamp_to({p.p1.x - ux * hs * 1.6f + uy * hs, p.p1.y - uy * hs * 1.6f - ux * hs}, g.area);
  return p;
}

Vec2 curve_at(const ArrowPath& p, float u) {
  const float w0 = (1 - u) * (1 - u), w1 = 2 * (1 - u) * u, w2 = u * u;
  return {w0 * p.p0.x + w1 * p.c.x + w2 * p.p1.x, w0 * p.p0.y + w1 * p.c.y + w2 * p.p1.y};
}

TokenPos token_on(const ArrowPath& p, float t) {
  const float travel = std::clamp(t / kTravelFraction, 0.0f, 1.0f);
  TokenPos out;
  out.at = curve_at(p, ease_in_out(travel));
  out.landed = t >= kTravelFraction;
  return out;
}

std::vector<ComputeBadge> compute_badges(const CanvasGeometry& g, const std::vector<Arrow>& arrows,
                                         const MeasureText& measure) {
  std::vector<ComputeBadge> out;
  for (const auto& a : arrows) {
    if (a.action != Action::compute) continue;
    if (a.dst < 0 || static_cast<std::size_t>(a.dst) >= g.layout.boxes.size()) continue;
    ComputeBadge b;
    b.rank = a.dst;
    b.text = "compute: " + (a.label.empty() ? std::string("work") : a.label);
    if (a.duration_us > 0) b.text += ", " + std::to_string(a.duration_us) + " us";
    const Rect bx = g.box(a.dst);
    const float size = std::min(g.font, std::max(1.0f, g.title_h));
    const float w = std::min(bx.max.x - bx.min.x - 2 * g.pad, (measure ? measure(size, b.text) : 0) + 2 * g.pad);
    const float x1 = bx.max.x - g.pad, y0 = bx.min.y + std::min(g.pad, (bx.max.y - bx.min.y) / 4);
    b.rect = {{std::max(bx.min.x, x1 - std::max(0.0f, w)), y0}, {x1, std::min(bx.max.y, y0 + size + g.pad)}};
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace collscope::view
