// The transfers of one step as arrows, and where each arrow's token is at animation
// time t (0 = the step begins, 1 = it has landed). Transfers of a step between the
// same two ranks with the same action are one arrow (a chunked algorithm sends
// several slices at once; the hover lists them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/schedule.h"
#include "gui/view/cells.h"
#include "gui/view/layout.h"
#include "gui/view/palette.h"

namespace collscope::view {

struct Arrow {
  std::int32_t src = 0, dst = 0;  // ranks (equal for a local copy, reduce or scale)
  Action action = Action::copy;
  std::int32_t src_buf = 0, dst_buf = 0;
  std::uint64_t src_offset = 0, dst_offset = 0;  // of the first transfer
  std::uint64_t elements = 0;                    // all transfers of the arrow
  std::uint64_t bytes = 0;
  std::vector<std::int32_t> transfers;    // indices inside the step
  std::vector<std::int32_t> token_ranks;  // what the token carries (contributors)
  Rgba token;                             // coloured like that data
  std::string label;                      // a compute span: its label ("forward")
  std::uint32_t duration_us = 0;          // a compute span: how long it works
};

// `before` gives the contributors as they are when the step begins.
std::vector<Arrow> build_arrows(const Schedule& s, std::int32_t step, const ContributorsFn& before);

// Ease in and out (cubic), so a token starts and lands gently.
float ease_in_out(float t);

// Fraction of the step's animation spent travelling; the rest shows the landed result.
inline constexpr float kTravelFraction = 0.7f;

struct TokenPos {
  Vec2 at;
  bool landed = false;  // the receiving cell shows the new value from now on
};

// A token on the arrow from `a` to `b`, bent sideways by `bend` pixels (so that the
// two directions between a pair of ranks do not overlap), at animation time t.
TokenPos token_at(Vec2 a, Vec2 b, float bend, float t);
// The control point of that bent path (a quadratic Bezier curve).
Vec2 bend_point(Vec2 a, Vec2 b, float bend);

// How much of each pixel of a size x size square a ring covers (0 to 255, row by row):
// outer radius `radius`, `width` pixels thick (width >= radius: a filled disc), centred,
// with a one-pixel soft edge. The canvas draws its tokens from such images, two
// triangles each instead of a polygon's dozens.
std::vector<std::uint8_t> ring_coverage(float radius, float width, int size);

}  // namespace collscope::view
