// Small helpers shared by the algorithm files: how a buffer is cut into blocks,
// ranks relative to a root, binomial trees, the power-of-two fold used by recursive
// doubling and halving, a few words for captions, moving runs of blocks, and the
// single rank that only copies its input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collscope/algorithms.h"

namespace collscope::algo {

// ---------------------------------------------------------------------------
// Blocks
//
// A buffer of `count` elements cut into `parts` blocks as evenly as possible: the
// first count % parts blocks get one element more. Blocks are empty when count < parts.
//
//   count = 10, parts = 4:   [0 1 2][3 4 5][6 7][8 9]
//                            block 0 block 1 b. 2 b. 3

inline std::uint64_t block_begin(std::uint64_t count, std::uint64_t parts, std::uint64_t i) {
  const std::uint64_t q = count / parts;
  const std::uint64_t rem = count % parts;
  return i * q + std::min(i, rem);
}

inline std::uint64_t block_size(std::uint64_t count, std::uint64_t parts, std::uint64_t i) {
  return block_begin(count, parts, i + 1) - block_begin(count, parts, i);
}

// Blocks first .. last-1 together, as one run of elements.
struct ElemRange {
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
};

inline ElemRange block_range(std::uint64_t count, std::uint64_t parts, std::uint64_t first, std::uint64_t last) {
  const std::uint64_t b = block_begin(count, parts, first);
  return {b, block_begin(count, parts, last) - b};
}

// Where block k starts when every block holds `count` elements: the buffers of n
// blocks of scatter, gather, all-gather, reduce-scatter and all-to-all.
inline std::uint64_t at_block(std::int64_t k, std::uint64_t count) { return static_cast<std::uint64_t>(k) * count; }

// ---------------------------------------------------------------------------
// Ranks

// Position of rank r when the ranks are counted from `root` onwards (root -> 0).
inline std::int32_t relative_rank(std::int32_t r, std::int32_t root, std::int32_t n) {
  return static_cast<std::int32_t>((static_cast<std::int64_t>(r) - root + n) % n);
}
// The inverse: the rank at position vr counted from `root`.
inline std::int32_t absolute_rank(std::int32_t vr, std::int32_t root, std::int32_t n) {
  return static_cast<std::int32_t>((static_cast<std::int64_t>(vr) + root) % n);
}
// i mod n for any integer i (the result is never negative).
inline std::int32_t wrap(std::int64_t i, std::int32_t n) {
  const std::int64_t m = i % n;
  return static_cast<std::int32_t>(m < 0 ? m + n : m);
}

// Smallest k with 2^k >= n (0 for n <= 1).
inline std::int32_t ceil_log2(std::int64_t n) {
  std::int32_t k = 0;
  while ((std::int64_t{1} << k) < n) ++k;
  return k;
}

// Largest power of two <= n (n >= 1).
inline std::int32_t floor_pow2(std::int32_t n) {
  std::int32_t p = 1;
  while (static_cast<std::int64_t>(p) * 2 <= n) p *= 2;
  return p;
}

// ---------------------------------------------------------------------------
// Binomial tree
//
// Counted from the root (relative ranks), 8 ranks:
//
//   distance 4:   0 ------------------> 4
//   distance 2:   0 --------> 2         4 --------> 6
//   distance 1:   0 -> 1      2 -> 3    4 -> 5      6 -> 7
//
// At distance d, every relative rank that is a multiple of 2d is the parent of the
// rank d further on (when it exists). A broadcast walks the rounds from the largest
// distance down; a reduce walks them from distance 1 up.

struct TreeEdge {
  std::int32_t parent = 0;  // group ranks
  std::int32_t child = 0;
};

struct TreeRound {
  std::int32_t distance = 1;
  std::vector<TreeEdge> edges;
};

// The rounds of the binomial tree of n ranks rooted at `root`, leaves first
// (distance 1, 2, 4, ...). There are ceil(log2 n) of them.
inline std::vector<TreeRound> binomial_rounds(std::int32_t n, std::int32_t root) {
  std::vector<TreeRound> rounds;
  for (std::int64_t d = 1; d < n; d *= 2) {
    TreeRound round;
    round.distance = static_cast<std::int32_t>(d);
    for (std::int64_t vr = 0; vr + d < n; vr += 2 * d)
      round.edges.push_back({absolute_rank(static_cast<std::int32_t>(vr), root, n),
                             absolute_rank(static_cast<std::int32_t>(vr + d), root, n)});
    rounds.push_back(std::move(round));
  }
  return rounds;
}

// In the binomial tree, counted from the root, the subtree of relative rank v is
// v .. v + lowbit(v) - 1 (lowbit = the lowest set bit), cut at n; the root's subtree
// is everything. Returns one past its last rank.
inline std::int32_t subtree_end(std::int32_t v, std::int32_t n) {
  if (v == 0) return n;
  const std::int64_t lowbit = v & -v;
  return static_cast<std::int32_t>(std::min<std::int64_t>(v + lowbit, n));
}

// Does the rank at relative position vr have children in the binomial tree?
// (Every even position except the last one.)
inline bool binomial_has_children(std::int32_t vr, std::int32_t n) { return vr % 2 == 0 && vr + 1 < n; }

// How many chunks the chain broadcast cuts the buffer into. More chunks keep more links
// busy at once, but every chunk costs a step of latency. Small buffers get 4 chunks (so
// the pipeline is visible), large ones about 64 KiB per chunk, never more than 64 chunks.
inline std::uint64_t chain_chunks(std::uint64_t count, DType dtype) {
  constexpr std::uint64_t kChunkBytes = 64 * 1024;
  constexpr std::uint64_t kMinChunks = 4;
  constexpr std::uint64_t kMaxChunks = 64;
  const std::uint64_t bytes = count * size_of(dtype);
  const std::uint64_t by_size = (bytes + kChunkBytes - 1) / kChunkBytes;
  return std::min(count, std::clamp(by_size, kMinChunks, kMaxChunks));
}

// ---------------------------------------------------------------------------
// Power-of-two fold
//
// Recursive doubling and halving pair ranks by flipping one bit, so they want a
// power-of-two number of ranks. With n = p + e (p the largest power of two <= n),
// the first 2e ranks pair up before the main phase: the even rank of each pair hands
// its data to the odd one (fold-in) and sits out; the odd one takes part. At the end
// the odd rank hands the result back (fold-out).
//
//   n = 6, p = 4, e = 2:   rank     0  1  2  3  4  5
//                          fold-in  0->1  2->3
//                          virtual     0     1  2  3

struct PowerOfTwoFold {
  std::int32_t p = 1;      // ranks taking part in the main phase
  std::int32_t extra = 0;  // ranks sitting out (e)

  explicit PowerOfTwoFold(std::int32_t n) : p(floor_pow2(n)), extra(n - floor_pow2(n)) {}

  bool sits_out(std::int32_t r) const { return r < 2 * extra && r % 2 == 0; }
  // Position among the p ranks of the main phase (-1 for a rank that sits out).
  std::int32_t virtual_rank(std::int32_t r) const {
    if (sits_out(r)) return -1;
    return r < 2 * extra ? r / 2 : r - extra;
  }
  std::int32_t real_rank(std::int32_t v) const { return v < extra ? 2 * v + 1 : v + extra; }
};

// ---------------------------------------------------------------------------
// Words for captions

// "1 rank", "3 ranks".
inline std::string plural(std::int64_t k, std::string_view noun) {
  std::string s = std::to_string(k) + " " + std::string(noun);
  if (k != 1) s += "s";
  return s;
}

// The verb form that agrees with a count: agree(1, "sends", "send") == "sends".
inline std::string agree(std::int64_t k, std::string_view one, std::string_view many) {
  return std::string(k == 1 ? one : many);
}

// "step 2 of 3: "
inline std::string step_of(std::int64_t k, std::int64_t total) {
  return "step " + std::to_string(k) + " of " + std::to_string(total) + ": ";
}

// "rank 5"

// ---------------------------------------------------------------------------
// Moving runs of blocks
//
// Many algorithms move a range of equal-sized blocks whose places are easiest to say
// block by block: block x of the range is read at src(x) and written to dst(x). The
// places may jump around (a ring that wraps, a rotated work buffer), so move_blocks
// emits one transfer per run of blocks that are neighbours on both sides, and skips
// a block that already sits where it should go (in place, src == dst).
//
//   blocks x = 5 6 7 0 1, src(x) = in + x, dst(x) = work + (x - 5) mod 8
//   -> two transfers: in[5..8) -> work[0..3) and in[0..2) -> work[3..5)

inline bool same_place(const Loc& a, const Loc& b) {
  return a.rank == b.rank && a.buf == b.buf && a.offset == b.offset;
}

// Does `next` start exactly `elems` elements after `start`, in the same buffer?
inline bool follows(const Loc& start, const Loc& next, std::uint64_t elems) {
  return next.rank == start.rank && next.buf == start.buf && next.offset == start.offset + elems;
}

// Moves blocks first .. last-1 of block_elems elements each from src(x) to dst(x) with
// `action`, as few transfers as possible: a run of blocks that stays contiguous on every
// side is one transfer. A reduce-copy also reads aux(x) (the receiver's own part).
template <class SrcFn, class AuxFn, class DstFn>
void move_blocks(StepBuilder& b, Action action, std::int64_t first, std::int64_t last, std::uint64_t block_elems,
                 SrcFn src, AuxFn aux, DstFn dst) {
  if (block_elems == 0) return;
  const bool with_aux = action == Action::reduce_copy;
  std::int64_t x = first;
  while (x < last) {
    const Loc s = src(x);
    const Loc d = dst(x);
    if (same_place(s, d)) {  // already there
      ++x;
      continue;
    }
    const Loc a = with_aux ? aux(x) : d;
    std::int64_t y = x + 1;  // grow the run while every side stays contiguous
    while (y < last) {
      const auto elems = static_cast<std::uint64_t>(y - x) * block_elems;
      if (!follows(s, src(y), elems) || !follows(d, dst(y), elems) || (with_aux && !follows(a, aux(y), elems))) break;
      ++y;
    }
    const auto elems = static_cast<std::uint64_t>(y - x) * block_elems;
    if (action == Action::reduce_copy) b.reduce_copy(s, a, d, elems);
    else if (action == Action::reduce) b.reduce(s, d, elems);
    else b.copy(s, d, elems);
    x = y;
  }
}

template <class SrcFn, class DstFn>
void move_blocks(StepBuilder& b, Action action, std::int64_t first, std::int64_t last, std::uint64_t block_elems,
                 SrcFn src, DstFn dst) {
  move_blocks(b, action, first, last, block_elems, src, dst, dst);
}

// One copy, skipped when source and destination are the same place (in place).
inline void copy_unless_same(StepBuilder& b, const Loc& src, const Loc& dst, std::uint64_t count) {
  if (!same_place(src, dst)) b.copy(src, dst, count);
}

// One rank: whatever the collective, its output is a copy of its input (count
// elements: with one rank every buffer holds one block). Out of place that is one
// local copy; in place the two are one place and there is nothing to do.
inline void single_rank(StepBuilder& b,
                        const std::string& caption = "only one rank: it copies its input into its output") {
  if (same_place(b.in(0), b.out(0))) return;
  b.begin_step("local copy", caption);
  b.copy(b.in(0), b.out(0), b.count());
}

// Phase "tree up" of a binomial reduction: at distance 1, 2, 4, ... a child hands its
// sum to its parent, which adds it to its own. `from(child)` is where the child's sum
// is, `into(parent)` where the parent builds its sum, `own(parent)` the parent's own
// contribution: the first child's sum is added to it and written into `into` (a
// reduce-copy; a plain reduce when the two are one place), later ones are added there.
// `root_name` says who ends with the full sum ("the root", "rank 0").
template <class From, class Into, class Own>
void binomial_tree_up(StepBuilder& b, const std::vector<TreeRound>& rounds, std::int64_t n,
                      const std::string& root_name, From from, Into into, Own own) {
  const auto total = static_cast<std::int32_t>(rounds.size());
  std::vector<char> started(static_cast<std::size_t>(n), 0);  // has the parent added a child yet?
  std::int64_t active = n;
  for (std::int32_t k = 0; k < total; ++k) {
    const TreeRound& round = rounds[static_cast<std::size_t>(k)];
    const auto senders = static_cast<std::int64_t>(round.edges.size());
    active -= senders;
    const std::string rest =
        active == 1 ? root_name + " now holds the full sum" : std::to_string(active) + " ranks still hold partial sums";
    b.begin_step("tree up", step_of(k + 1, total) + plural(senders, "rank") +
                                agree(senders, " sends its", " send their") + " sum to a partner " +
                                plural(round.distance, "rank") + " nearer " + root_name + ", which adds it; " + rest);
    for (const TreeEdge& e : round.edges) {
      if (std::exchange(started[static_cast<std::size_t>(e.parent)], 1))
        b.reduce(from(e.child), into(e.parent), b.count());
      else b.reduce_copy(from(e.child), own(e.parent), into(e.parent), b.count());
    }
  }
}

}  // namespace collscope::algo
