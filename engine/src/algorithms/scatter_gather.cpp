// Scatter and gather: the root hands every rank its own block (scatter), or
// collects one block from every rank (gather).
//
// Ranks are drawn counted from the root (the root is 0; rank k is root+k mod n).
// Block k is the block that belongs to rank k.
//
// flat: one step, the root talks to everybody directly.
//
//   scatter                           gather
//            root [0 1 2 3]                   root [0 1 2 3]
//          /    |     \                         ^    ^     ^
//       [1]    [2]    [3]                      [1]  [2]   [3]
//        v      v      v                        |    |     |
//        1      2      3                        1    2     3
//
// binomial: a binomial tree. A scatter walks it from the root down: the root hands
// the far half of the blocks to a partner, then both hand half of what they still
// have to pass on to new partners, and so on (8 ranks):
//
//   step 1:   0 ==[4 5 6 7]==> 4
//   step 2:   0 ==[2 3]==> 2                4 ==[6 7]==> 6
//   step 3:   0 -[1]-> 1   2 -[3]-> 3       4 -[5]-> 5   6 -[7]-> 7
//
// A gather is the same picture read from the bottom up: pairs combine their blocks,
// and the bundles double in size on the way to the root:
//
//   step 1:   0 <-[1]- 1   2 <-[3]- 3       4 <-[5]- 5   6 <-[7]- 7
//   step 2:   0 <==[2 3]== 2                4 <==[6 7]== 6
//   step 3:   0 <==[4 5 6 7]== 4
//
// chain: the ranks form a chain, root -> 1 -> 2 -> ... -> n-1 (counted from the root),
// and the blocks flow along it like a pipeline, one rank further every step. A scatter
// sends the block for the far end first, so that all blocks arrive in the same last
// step (4 ranks):
//
//   step 1:   0 =[3]=> 1         2         3
//   step 2:   0 =[2]=> 1 =[3]=> 2         3
//   step 3:   0 =[1]=> 1 =[2]=> 2 =[3]=> 3        every rank gets its own block
//
// A gather is the mirror image: in step 1 every rank sends its own block one rank
// nearer the root, and later steps pass on what arrived, the nearest block first:
//
//   step 1:   0 <=[1]= 1 <=[2]= 2 <=[3]= 3
//   step 2:   0 <=[2]= 1 <=[3]= 2         3
//   step 3:   0 <=[3]= 1         2         3
//
// Every link carries one block per step, so no rank sends or receives more than one
// block at a time (flat has the root handle n-1 at once), for the price of n-1 steps.
//
// Buffers: only the root has the large buffer (n blocks); the others have room for
// exactly one block. A rank in the middle of the tree must hold the blocks of its
// whole subtree for a while, so it keeps them in a scratch buffer and keeps its own
// block in its output (scatter) or input (gather). A rank in the middle of the chain
// holds one block in passing, in one of two scratch slots: it receives the next block
// into the other slot while it passes this one on. In place, the root's own block
// already sits in the right spot of its large buffer and does not move.
#include <algorithm>

#include "common.h"
#include "families.h"

namespace collscope::algo {
namespace {

// The most blocks a rank other than the root has to hold for others at one time
// (its subtree minus its own block): the size of the scratch buffer.
std::int32_t most_held_for_others(std::int32_t n) {
  std::int32_t most = 0;
  for (std::int32_t v = 1; v < n; ++v) most = std::max(most, subtree_end(v, n) - v - 1);
  return most;
}

// Where block x (the block of relative rank x) sits on relative rank v while the
// blocks travel through the tree:
//  - on the root: in its large buffer (the input of a scatter, the output of a
//    gather), in group-rank order;
//  - on another rank: its own block in its one-block buffer (the output of a scatter,
//    the input of a gather), and the blocks it holds for its subtree in the scratch
//    buffer, in relative order (block v+1 first).
struct TreePlaces {
  const StepBuilder& b;
  bool scatter = true;
  std::int32_t held = -1;  // scratch id, -1 when no rank holds blocks for others

  Loc at(std::int32_t v, std::int64_t x) const {
    const std::int32_t n = b.ranks();
    const std::uint64_t c = b.count();
    const std::int32_t r = absolute_rank(v, b.root(), n);
    if (v == 0) {
      const std::uint64_t offset = at_block(absolute_rank(static_cast<std::int32_t>(x), b.root(), n), c);
      return scatter ? b.in(r, offset) : b.out(r, offset);
    }
    if (x == v) return scatter ? b.out(r) : b.in(r);
    return b.scratch(held, r, at_block(x - v - 1, c));
  }
};

TreePlaces tree_places(StepBuilder& b, bool scatter) {
  TreePlaces places{b, scatter, -1};
  const std::int32_t most = most_held_for_others(b.ranks());
  if (most > 0) places.held = b.add_scratch(scatter ? "scatter-hold" : "gather-hold", most * b.count());
  return places;
}

// The root's own block, between its large buffer and its one-block buffer.
// Out of place it is a local copy; in place it is already there and nothing moves.
void root_keeps_own_block(StepBuilder& b) {
  const std::int32_t root = b.root();
  const std::uint64_t own = at_block(root, b.count());
  if (b.collective() == Collective::scatter) copy_unless_same(b, b.in(root, own), b.out(root), b.count());
  else copy_unless_same(b, b.in(root), b.out(root, own), b.count());
}

}  // namespace

// ---------------------------------------------------------------------------
// scatter, flat: 1 step. The root sends block k straight to rank k.

void scatter_flat(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  b.begin_step("fan-out", "the root (" + b.rank_name(root) + ") sends each of the other " + plural(n - 1, "rank") +
                              " its own block directly, all at once");
  root_keeps_own_block(b);
  for (std::int32_t r = 0; r < n; ++r)
    if (r != root) b.copy(b.in(root, at_block(r, c)), b.out(r), c);
}

// ---------------------------------------------------------------------------
// scatter, binomial: ceil(log2 n) steps, from the largest distance down to 1.

void scatter_binomial(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  const TreePlaces places = tree_places(b, /*scatter=*/true);
  const std::int32_t steps = ceil_log2(n);
  std::int32_t step = 0;
  for (std::int64_t d = std::int64_t{1} << (steps - 1); d >= 1; d /= 2) {
    ++step;
    std::string caption = step_of(step, steps);
    if (d == 1) caption += "every rank still holding a block for another rank hands it to the next rank along";
    else
      caption += "every rank holding blocks for others hands the far half of them (up to " + plural(d, "block") +
                 ") to the rank " + std::to_string(d) + " further from the root";
    b.begin_step("tree down", caption);
    if (step == 1) root_keeps_own_block(b);
    // Parents are the multiples of 2d (counted from the root); child v + d gets the
    // blocks of its own subtree: its own block plus the ones it will pass on later.
    for (std::int64_t v = 0; v + d < n; v += 2 * d) {
      const auto parent = static_cast<std::int32_t>(v);
      const auto child = static_cast<std::int32_t>(v + d);
      move_blocks(
          b, Action::copy, child, subtree_end(child, n), c, [&](std::int64_t x) { return places.at(parent, x); },
          [&](std::int64_t x) { return places.at(child, x); });
    }
  }
}

// ---------------------------------------------------------------------------
// gather, flat: 1 step. Every rank sends its block straight to the root.

void gather_flat(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  b.begin_step("fan-in", "each of the other " + plural(n - 1, "rank") + " sends its block straight to the root (" +
                             b.rank_name(root) + "), which puts block k at position k");
  root_keeps_own_block(b);
  for (std::int32_t r = 0; r < n; ++r)
    if (r != root) b.copy(b.in(r), b.out(root, at_block(r, c)), c);
}

// ---------------------------------------------------------------------------
// gather, binomial: ceil(log2 n) steps, from distance 1 up.

void gather_binomial(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  const TreePlaces places = tree_places(b, /*scatter=*/false);
  const std::int32_t steps = ceil_log2(n);
  std::int32_t step = 0;
  for (std::int64_t d = 1; d < n; d *= 2) {
    ++step;
    std::string caption = step_of(step, steps);
    if (d == 1) caption += "every rank at an odd distance from the root sends its block to the rank just before it";
    else
      caption += "every rank an odd multiple of " + std::to_string(d) + " from the root sends the blocks it " +
                 "collected (up to " + std::to_string(d) + ") " + std::to_string(d) + " ranks towards the root";
    b.begin_step("tree up", caption);
    if (step == 1) root_keeps_own_block(b);
    // Child v + d has collected its whole subtree (its own block and what its
    // children sent) and hands it all to its parent v.
    for (std::int64_t v = 0; v + d < n; v += 2 * d) {
      const auto parent = static_cast<std::int32_t>(v);
      const auto child = static_cast<std::int32_t>(v + d);
      move_blocks(
          b, Action::copy, child, subtree_end(child, n), c, [&](std::int64_t x) { return places.at(child, x); },
          [&](std::int64_t x) { return places.at(parent, x); });
    }
  }
}

// ---------------------------------------------------------------------------
// chain: n-1 steps for scatter and gather alike.

namespace {

// The chain, counted from the root, and the two scratch slots where a rank in the
// middle holds a block in passing: the block that arrives in step s goes to slot
// s mod 2 (no slots with 2 ranks, where nobody holds blocks for others).
struct Chain {
  const StepBuilder& b;
  std::int32_t slots = -1;  // scratch id

  // The rank at chain position v (the root is position 0).
  std::int32_t rank_at(std::int64_t v) const {
    return absolute_rank(static_cast<std::int32_t>(v), b.root(), b.ranks());
  }
  // Where the rank at chain position v keeps the block that arrived in step s.
  Loc held(std::int64_t v, std::int64_t s) const { return b.scratch(slots, rank_at(v), at_block(s % 2, b.count())); }
};

Chain make_chain(StepBuilder& b) {
  Chain chain{b, -1};
  if (b.ranks() >= 3) chain.slots = b.add_scratch("chain-hold", 2 * b.count());
  return chain;
}

}  // namespace

void scatter_chain(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  const Chain chain = make_chain(b);
  const std::int32_t total = n - 1;
  for (std::int32_t s = 1; s <= total; ++s) {
    // Link i joins chain positions i and i+1. The root injects one block per step, the
    // far end's first: in step s link i carries the block injected in step s-i, the
    // block of position n-(s-i), which reaches its owner in the last step.
    const std::int32_t injected = n - s;  // position whose block the root sends now
    std::string caption = step_of(s, total);
    if (s < total) {
      caption += "the root (" + b.rank_name(root) + ") sends the block for " + b.rank_name(chain.rank_at(injected)) +
                 " down the chain";
      if (s > 1) caption += "; " + plural(s - 1, "rank") + agree(s - 1, " passes", " pass") + " on what arrived last";
    } else {
      caption += "the root (" + b.rank_name(root) + ") sends " + b.rank_name(chain.rank_at(1)) + " its block";
      if (s > 1) caption += ", and every other rank passes the block it holds on to its owner";
    }
    b.begin_step("chain", caption);
    if (s == 1) root_keeps_own_block(b);
    for (std::int32_t i = 0; i < s; ++i) {
      const std::int32_t x = n - (s - i);  // the block on link i
      const Loc src = i == 0 ? b.in(root, at_block(chain.rank_at(x), c)) : chain.held(i, s - 1);
      const Loc dst = x == i + 1 ? b.out(chain.rank_at(i + 1)) : chain.held(i + 1, s);
      b.copy(src, dst, c);
    }
  }
}

void gather_chain(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  const Chain chain = make_chain(b);
  const std::int32_t total = n - 1;
  for (std::int32_t s = 1; s <= total; ++s) {
    // Link i joins chain positions i+1 and i (towards the root). In step s it carries
    // the block of position i+s, which set out from its owner in step 1.
    const std::int32_t links = n - s;
    std::string caption = step_of(s, total);
    if (s == 1) caption += "every rank but the root sends its own block one rank nearer the root along the chain";
    else
      caption += plural(links, "rank") + agree(links, " passes on the block it", " pass on the blocks they") +
                 " got last; the root (" + b.rank_name(root) + ") receives the block of " +
                 b.rank_name(chain.rank_at(s));
    b.begin_step("chain", caption);
    if (s == 1) root_keeps_own_block(b);
    for (std::int32_t i = 0; i < links; ++i) {
      const std::int32_t x = i + s;  // the block on link i
      const Loc src = s == 1 ? b.in(chain.rank_at(i + 1)) : chain.held(i + 1, s - 1);
      const Loc dst = i == 0 ? b.out(root, at_block(chain.rank_at(x), c)) : chain.held(i, s);
      b.copy(src, dst, c);
    }
  }
}

}  // namespace collscope::algo
