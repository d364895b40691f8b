// The canvas in pixels, without ImGui: where every rank's box, buffer row and cell is
// drawn, and the path of every arrow of a step (a quadratic curve, its arrowhead and
// the token's path). The canvas panel only draws what this computes, so the rule
// "nothing leaves the canvas" is tested here (tests/test_gui_views.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collscope/schedule.h"
#include "gui/view/arrows.h"
#include "gui/view/cells.h"
#include "gui/view/layout.h"

namespace collscope::view {

struct Rect {
  Vec2 min, max;
  bool contains(Vec2 p, float slop = 0.01f) const {
    return p.x >= min.x - slop && p.x <= max.x + slop && p.y >= min.y - slop && p.y <= max.y + slop;
  }
};

// Width in pixels of `text` at font size `size` (the panel measures with its font).
using MeasureText = std::function<float(float size, const std::string& text)>;

struct CanvasGeometry {
  Rect area;      // where boxes and arrows go: the canvas without the legend below
  Layout layout;  // boxes relative to area.min
  float font = 13, scale = 1;
  float title_h = 0, label_w = 0, row_h = 0, pad = 0;
  float label_size = 13;  // font size of the buffer names (0: no names)
  bool small = false;     // boxes too small for device labels and full padding

  Vec2 box_min(std::int32_t rank) const;
  Rect box(std::int32_t rank) const;
  // Cell `c` of the row at `row_index` of rank `r`'s box, which has `cells` cells.
  Rect cell(std::int32_t rank, std::size_t row_index, std::size_t c, std::size_t cells) const;
  // Centre of the cell holding element `index` of `buf` on `rank` (the box's centre
  // when that buffer has no row there).
  Vec2 element_centre(const CellsView& cv, std::int32_t rank, std::int32_t buf, std::uint64_t index) const;
};

// The geometry of one frame: `origin` and `size` are the canvas's pixels, the bottom
// `legend_h` of it the legend. `call` picks the layout (a tree call is drawn as its tree).
CanvasGeometry canvas_geometry(const Schedule& s, const CellsView& cv, std::int32_t call, Vec2 origin, Vec2 size,
                               float legend_h, float font, float scale, const MeasureText& measure);

struct ArrowPath {
  Vec2 p0, c, p1;        // from, control point, to (the curve lies inside their triangle)
  Vec2 head[3];          // the arrowhead: its tip (p1) and two back corners
  float bend = 0;        // what token_at takes to follow this curve
  float thick = 1;       // line width
  bool clipped = false;  // the curve was pulled in to stay on the canvas
};

// The path of `a`: from its source cell to its destination cell, bent sideways so the
// two directions between a pair of ranks do not overlap, and pulled in (control point
// and arrowhead kept inside `g.area`, `margin` pixels from its edges where the points
// allow) so that no arrow leaves the canvas.
ArrowPath arrow_path(const CanvasGeometry& g, const CellsView& cv, const Arrow& a, bool lit);

// A point of the curve of `p` at parameter u in [0, 1].
Vec2 curve_at(const ArrowPath& p, float u);
// The token on that curve at animation time t (eased, as token_at).
TokenPos token_on(const ArrowPath& p, float t);

// A compute span on the canvas: a labelled badge ("compute: forward, 20 us") over the
// box title of its rank, instead of a token, since it moves no data.
struct ComputeBadge {
  std::int32_t rank = 0;
  std::string text;
  Rect rect;
};
// Badges of the compute arrows of a step, inside the boxes (hence on the canvas).
std::vector<ComputeBadge> compute_badges(const CanvasGeometry& g, const std::vector<Arrow>& arrows,
                                         const MeasureText& measure);

}  // namespace collscope::view
