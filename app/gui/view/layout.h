// Where the ranks sit on the canvas: around a ring, as the call's tree when its
// transfers form one (binomial broadcast, tree all-reduce, ...), or in a grid when
// there are too many ranks for a readable ring, or when a ring's flat boxes would
// squash many buffer rows that a grid's taller ones fit. Pixels, origin at the top left.
#pragma once

#include <cstdint>
#include <vector>

#include "collscope/schedule.h"

namespace collscope::view {

struct Vec2 {
  float x = 0, y = 0;
};

enum class LayoutKind : std::uint8_t { ring, tree, grid };

struct RankBox {
  std::int32_t rank = 0;
  Vec2 centre;
  std::int32_t parent = -1;  // tree layout: the rank above (-1 for the root and other layouts)
};

struct Layout {
  LayoutKind kind = LayoutKind::ring;
  Vec2 box;                    // size of every rank's box
  std::vector<RankBox> boxes;  // indexed by rank
};

inline constexpr std::int32_t kMaxRingRanks = 16;

// The tree of call `call` when the distinct pairs of ranks that exchange data form a
// tree with more than one level below the root (a star or a chain reads better on a
// ring). parent[r] = -1 for the root; empty when there is no such tree.
std::vector<std::int32_t> call_tree(const Schedule& s, std::int32_t call);

// `rows_per_box`: buffer rows each box shows; a box is at most `row_px` per row plus
// `title_px` tall (rows of a readable height, not stretched over the whole canvas).
Layout layout_ranks(const Schedule& s, std::int32_t call, Vec2 canvas, std::int32_t rows_per_box, float row_px = 28,
                    float title_px = 30);

}  // namespace collscope::view
