// All-to-all: every rank has one block for every rank. Block j of rank r's input
// goes to rank j, where it lands at position r of the output. Think of the n x n
// matrix of blocks being transposed.
//
// pairwise: a local step, then n-1 steps. In step k every rank r sends its block
// for rank r+k straight there (and receives the block of rank r-k):
//
//   step 1:    r keeps its own block
//   step 1+k:  0 --> k    1 --> 1+k    2 --> 2+k   ...   (all mod n)
//
// bruck: a local rotation, ceil(log2 n) steps, and a local rotation back. Blocks
// travel in bundles: a block that must go j ranks further hops 1, 2, 4, ... ranks
// following the binary digits of j, so every step moves about half of all blocks,
// but only log2 n messages are needed instead of n-1 (5 ranks, rank r's work buffer):
//
//   index j in rank r's work buffer:        0   1   2   3   4
//   rotate:          work[j] = r's block for rank r+j
//   step 1 (d = 1):  sends j with bit 0 set     1       3
//   step 2 (d = 2):  sends j with bit 1 set         2   3
//   step 3 (d = 4):  sends j with bit 2 set                 4
//                    ... to rank r+d, which keeps them at the same index j
//   rotate back:     work[j] now holds the block from rank r-j: it goes to
//                    position r-j of the output
//
// A rank receives into the very indices it sends from, so received blocks go to a
// receive buffer first (two of them, used in turns), and the step after files them
// back into the work buffer while it sends the next bundle. Blocks are merged into one
// transfer wherever they are neighbours on both sides; the rotation back reverses
// the order, so there each block is its own transfer.
//
// linear (spread out, like Open MPI's linear all-to-all): one step. Every rank sends
// all its blocks at once instead of one peer per step. The sends are staggered so that
// the peers differ at every moment: rank r's k-th transfer goes to rank r+k, so its
// k-th round pairs the ranks as pairwise step k does, and no rank is flooded by
// everybody's first send (4 ranks):
//
//   k = 1:   0 --> 1   1 --> 2   2 --> 3   3 --> 0
//   k = 2:   0 --> 2   1 --> 3   2 --> 0   3 --> 1      all in one step
//   k = 3:   0 --> 3   1 --> 0   2 --> 1   3 --> 2
//
// All-to-all is out of place only.
#include "common.h"
#include "families.h"

namespace collscope::algo {
namespace {

// What the single rank does, in its own words.
constexpr const char* kOneRank = "only one rank: it copies its one block from its input to its output";

// "j = 1, 3, 5, ..." : the first indices below n with bit `bit` set, for captions.
std::string indices_with_bit(std::int32_t bit, std::int32_t n) {
  std::string s = "j = ";
  int shown = 0;
  for (std::int64_t j = 1; j < n; ++j) {
    if (!((j >> bit) & 1)) continue;
    if (shown == 4) return s + ", ...";
    s += (shown > 0 ? ", " : "") + std::to_string(j);
    ++shown;
  }
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// pairwise: 1 + (n-1) steps.

void alltoall_pairwise(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, kOneRank);

  b.begin_step("local copy", step_of(1, n) + "every rank copies its block for itself to its own place in its output");
  for (std::int32_t r = 0; r < n; ++r) b.copy(b.in(r, at_block(r, c)), b.out(r, at_block(r, c)), c);

  for (std::int32_t k = 1; k < n; ++k) {
    b.begin_step("pairwise", step_of(k + 1, n) + "every rank r sends its block for rank r+" + std::to_string(k) +
                                 " there, and receives the block of rank r-" + std::to_string(k));
    for (std::int32_t r = 0; r < n; ++r) {
      const std::int32_t to = wrap(static_cast<std::int64_t>(r) + k, n);
      b.copy(b.in(r, at_block(to, c)), b.out(to, at_block(r, c)), c);
    }
  }
}

// ---------------------------------------------------------------------------
// bruck: 1 + ceil(log2 n) + 1 steps.

void alltoall_bruck(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, kOneRank);

  const std::int32_t rounds = ceil_log2(n);
  const std::int32_t total = rounds + 2;
  const std::uint64_t size = static_cast<std::uint64_t>(n) * c;
  const std::int32_t work = b.add_scratch("bruck-work", size);
  const std::int32_t received[2] = {b.add_scratch("bruck-recv-even", size),
                                    rounds > 1 ? b.add_scratch("bruck-recv-odd", size) : -1};
  auto has_bit = [](std::int64_t j, std::int32_t bit) { return bit >= 0 && ((j >> bit) & 1) != 0; };
  // Where block j of rank r sits before round k: in the receive buffer if it arrived in
  // round k-1, else in the work buffer (it never moved, or was filed back already).
  auto block_at = [&](std::int32_t r, std::int64_t j, std::int32_t k) {
    if (has_bit(j, k - 1)) return b.scratch(received[(k - 1) % 2], r, at_block(j, c));
    return b.scratch(work, r, at_block(j, c));
  };

  // Rotate: work[j] = the block for rank r+j (two contiguous pieces of the input).
  b.begin_step("rotate", step_of(1, total) + "every rank r copies its input into a work buffer rotated by r: " +
                             "work block j is its block for rank r+j");
  for (std::int32_t r = 0; r < n; ++r)
    move_blocks(
        b, Action::copy, 0, n, c, [&](std::int64_t j) { return b.in(r, at_block(wrap(r + j, n), c)); },
        [&](std::int64_t j) { return b.scratch(work, r, at_block(j, c)); });

  for (std::int32_t k = 0; k < rounds; ++k) {
    const std::int64_t d = std::int64_t{1} << k;
    std::string caption = step_of(k + 2, total) + "every rank r sends the blocks with bit " + std::to_string(k) +
                          " of j set (" + indices_with_bit(k, n) + ") to rank r+" + std::to_string(d);
    if (k > 0) caption += ", and files last step's arrivals back";
    b.begin_step("bruck", caption);
    for (std::int32_t r = 0; r < n; ++r) {
      const std::int32_t to = wrap(r + d, n);
      // The indices with bit k set come in runs of d: [d, 2d), [3d, 4d), ...
      for (std::int64_t first = d; first < n; first += 2 * d)
        move_blocks(
            b, Action::copy, first, std::min<std::int64_t>(first + d, n), c,
            [&](std::int64_t j) { return block_at(r, j, k); },
            [&](std::int64_t j) { return b.scratch(received[k % 2], to, at_block(j, c)); });
      // File back the blocks that arrived in round k-1 and are not sent on right now
      // (bit k-1 set, bit k clear): runs of d/2 starting at d/2, 5d/2, ...
      if (k > 0)
        for (std::int64_t first = d / 2; first < n; first += 2 * d)
          move_blocks(
              b, Action::copy, first, std::min<std::int64_t>(first + d / 2, n), c,
              [&](std::int64_t j) { return b.scratch(received[(k - 1) % 2], r, at_block(j, c)); },
              [&](std::int64_t j) { return b.scratch(work, r, at_block(j, c)); });
    }
  }

  // Rotate back: work[j] holds the block from rank r-j, which belongs at position r-j.
  b.begin_step("rotate back", step_of(total, total) + "every rank r puts work block j, which came from rank r-j, " +
                                  "at position r-j of its output");
  for (std::int32_t r = 0; r < n; ++r)
    move_blocks(
        b, Action::copy, 0, n, c, [&](std::int64_t j) { return block_at(r, j, rounds); },
        [&](std::int64_t j) { return b.out(r, at_block(wrap(r - j, n), c)); });
}

// ---------------------------------------------------------------------------
// linear: 1 step.

void alltoall_linear(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, kOneRank);

  b.begin_step("spread out", "every rank r sends all its blocks at once, the k-th to rank r+k for k = 1.." +
                                 std::to_string(n - 1) + ", and copies its own block to its output");
  for (std::int32_t r = 0; r < n; ++r) b.copy(b.in(r, at_block(r, c)), b.out(r, at_block(r, c)), c);
  // Round k of the sends, for every rank, before round k+1: a rank receives in the
  // same order (from r-1, then r-2, ...), so at each moment the peers differ.
  for (std::int32_t k = 1; k < n; ++k)
    for (std::int32_t r = 0; r < n; ++r) {
      const std::int32_t to = wrap(static_cast<std::int64_t>(r) + k, n);
      b.copy(b.in(r, at_block(to, c)), b.out(to, at_block(r, c)), c);
    }
}

}  // namespace collscope::algo
