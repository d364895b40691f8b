// The in-order binary tree and its twin, the two trees of a double binary tree
// (double_tree.cpp; shapes.cpp prices the same trees).
//
// Tree 1 over m positions 0..m-1: position p sits at height h = the number of trailing
// zero bits of p+1, and its children are p - 2^(h-1) and p + 2^(h-1). So every even
// position is a leaf and every odd one has children (7 positions):
//
//               3                  height 2
//            /     \                 (children 3 - 2 = 1 and 3 + 2 = 5)
//          1         5              height 1
//         / \       / \             (children p - 1 and p + 1)
//        0   2     4   6            height 0: leaves 0 2 4 6, interior 1 3 5
//
// When m is not 2^k - 1 a child can fall off the end; its nearest descendant that
// exists takes its place (m = 6: 5 has child 4 only; m = 5: 3's right child is 4).
//
// Tree 2 is tree 1 with every rank moved one place on: position p holds rank p+1
// (mod m). In tree 1 the interior ranks are the odd ones; in tree 2 they are the ones
// at odd positions, which hold even ranks. No rank is interior in both trees, so no
// rank has to receive, add and send for two trees at once:
//
//               4                  tree 2, m = 7: the same tree,
//            /     \                 every rank one place on
//          2         6
//         / \       / \             leaves 1 3 5 0, interior 2 4 6:
//        1   3     5   0            tree 1's leaves
#pragma once

#include <cstdint>
#include <vector>

#include "common.h"

namespace collscope::algo {

// Height of position p: trailing zero bits of p+1.
inline std::int32_t inorder_height(std::int64_t p) {
  std::int32_t h = 0;
  for (std::int64_t v = p + 1; (v & 1) == 0; v >>= 1) ++h;
  return h;
}

// The root of the tree over m positions: the highest position whose p+1 is a power of two.
inline std::int64_t inorder_root(std::int64_t m) {
  std::int64_t v = 1;
  while (v * 2 <= m) v *= 2;
  return v - 1;
}

// Parent of position p in the tree over m positions (-1 for the root). In the endless
// tree the parent of p (height h) is p + 2^h when bit h+1 of p+1 is clear, else p - 2^h;
// a parent beyond the end is skipped for its own parent, up to the first that exists.
inline std::int64_t inorder_parent(std::int64_t p, std::int64_t m) {
  if (p == inorder_root(m)) return -1;
  std::int64_t v = p + 1;  // counted from 1, where the bit arithmetic is simplest
  do {
    const std::int32_t h = inorder_height(v - 1);
    const std::int64_t step = std::int64_t{1} << h;
    v = ((v >> (h + 1)) & 1) == 0 ? v + step : v - step;
  } while (v > m);
  return v - 1;
}

// Rank at position p of tree t (0 or 1) over m ranks: tree 2 is tree 1 moved one place.
inline std::int64_t tree_rank(std::int32_t t, std::int64_t p, std::int64_t m) { return (p + t) % m; }

// The rounds of a reduction up the tree over m positions (edges in positions, child
// and parent). A parent can add only one child per round, so every height takes two:
// round 2h carries the left children of height h (those below their parent), round
// 2h+1 the right ones. A child's own children all sit lower, so its sum is complete
// when its round comes. Rounds without an edge are left out.
inline std::vector<std::vector<TreeEdge>> inorder_up_rounds(std::int64_t m) {
  const std::int32_t top = inorder_height(inorder_root(m));
  std::vector<std::vector<TreeEdge>> rounds(static_cast<std::size_t>(2 * top));
  for (std::int64_t p = 0; p < m; ++p) {
    const std::int64_t q = inorder_parent(p, m);
    if (q < 0) continue;
    const auto k = static_cast<std::size_t>(2 * inorder_height(p) + (p > q ? 1 : 0));
    rounds[k].push_back({static_cast<std::int32_t>(q), static_cast<std::int32_t>(p)});
  }
  std::erase_if(rounds, [](const auto& r) { return r.empty(); });
  return rounds;
}

// The rounds of a broadcast down the same tree: round k, every parent at height
// top - k sends to all its children at once (they are different ranks, so one round).
inline std::vector<std::vector<TreeEdge>> inorder_down_rounds(std::int64_t m) {
  const std::int32_t top = inorder_height(inorder_root(m));
  std::vector<std::vector<TreeEdge>> rounds(static_cast<std::size_t>(top));
  for (std::int64_t p = 0; p < m; ++p) {
    const std::int64_t q = inorder_parent(p, m);
    if (q < 0) continue;
    rounds[static_cast<std::size_t>(top - inorder_height(q))].push_back(
        {static_cast<std::int32_t>(q), static_cast<std::int32_t>(p)});
  }
  std::erase_if(rounds, [](const auto& r) { return r.empty(); });
  return rounds;
}

}  // namespace collscope::algo
