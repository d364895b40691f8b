// Reduce: the root's output ends up holding the sum (or min, max, ...) of every
// rank's input.
//
// flat: the root adds the other ranks' buffers one after another (n-1 steps; every
// step writes the same result buffer, so they cannot overlap).
//
//   step 1:  1 --+--> root          step 2:  2 --+--> root      ...  step n-1
//
// binomial: pairs combine, halving the ranks still holding partial sums every step
// (8 ranks, counted from the root):
//
//   step 1:   0 <- 1      2 <- 3    4 <- 5      6 <- 7
//   step 2:   0 <-------- 2         4 <-------- 6
//   step 3:   0 <------------------ 4
//
// ring: a ring reduce-scatter leaves rank k with block k of the result, then every
// rank sends its block to the root (4 ranks, blocks A B C D, sums built in place):
//
//   reduce-scatter, 3 steps:  0 -> 1 -> 2 -> 3 -> 0   each rank adds the block it
//                             receives to its own and passes it on the next step
//   gather, 1 step:           1 --B--> root, 2 --C--> root, 3 --D--> root  (root = 0)
//
// Buffers: every rank has an input, only the root has an output, and inputs must not
// change. So a partial sum lives in the root's output on the root, and in a scratch
// buffer on any other rank that has to add something. Where a rank adds something for
// the first time, a reduce-copy writes (what arrives) + (its own input) into that
// buffer, so no rank copies its input aside first.
#include "common.h"
#include "families.h"

namespace collscope::algo {

// ---------------------------------------------------------------------------
// flat: n-1 steps.

void reduce_flat(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();

  if (n == 1) return single_rank(b);
  // Fan in: one rank after another, since every step writes the same place. The sum
  // grows in the root's output, which the first step writes: (the root's input) + (the
  // first rank's input).
  for (std::int32_t k = 1; k < n; ++k) {
    const std::int32_t r = absolute_rank(k, root, n);
    b.begin_step("fan-in", step_of(k, n - 1) + "the root (" + b.rank_name(root) + ") adds the buffer of " +
                               b.rank_name(r) + "; " + std::to_string(k + 1) + " of " + std::to_string(n) +
                               " inputs are in");
    if (k == 1) b.reduce_copy(b.in(r), b.in(root), b.out(root), b.count());
    else b.reduce(b.in(r), b.out(root), b.count());
  }
}

// ---------------------------------------------------------------------------
// binomial: ceil(log2 n) steps.

void reduce_binomial(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  const std::uint64_t count = b.count();
  if (n == 1) return single_rank(b);

  // Where rank r builds its partial sum: the root in its output, others in scratch
  // (only ranks with children in the tree build one; from 4 ranks on, some non-root does).
  const std::int32_t partial = n >= 4 ? b.add_scratch("partial", count) : -1;
  auto sum_at = [&](std::int32_t r) { return r == root ? b.out(root) : b.scratch(partial, r); };
  auto has_children = [&](std::int32_t r) { return binomial_has_children(relative_rank(r, root, n), n); };
  // What a rank passes up: its partial sum, or its bare input when it is a leaf.
  auto passes_up = [&](std::int32_t r) { return has_children(r) ? sum_at(r) : b.in(r); };

  // Up the tree: at distance 1, 2, 4, ... a child hands its sum to its parent, which
  // adds it; the first child's sum it adds to its own input, writing into its sum.
  binomial_tree_up(b, binomial_rounds(n, root), n, "the root", passes_up, sum_at,
                   [&](std::int32_t r) { return b.in(r); });
}

// ---------------------------------------------------------------------------
// ring: (n-1) reduce-scatter steps + 1 gather step.

void reduce_ring(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t root = b.root();
  const std::uint64_t count = b.count();
  if (n == 1) return single_rank(b);
  const auto parts = static_cast<std::uint64_t>(n);
  const std::int32_t partial = b.add_scratch("partial", count);
  auto sum_at = [&](std::int32_t r, std::uint64_t elem) {
    return r == root ? b.out(root, elem) : b.scratch(partial, r, elem);
  };

  // Phase 1, reduce-scatter round the ring r -> r+1: in step s rank r passes block
  // r-1-s (from its input in step 1), to which its right neighbour adds its own input's
  // piece, writing the sum into its partial sums, and passes it on in step s+1. After
  // n-1 steps rank r's block r holds every rank's contribution.
  for (std::int32_t s = 0; s + 1 < n; ++s) {
    b.begin_step("reduce-scatter", step_of(s + 1, n - 1) +
                                       "every rank sends one block of partial sums to its right neighbour, "
                                       "which adds its own input's piece to it");
    for (std::int32_t r = 0; r < n; ++r) {
      const auto blk = static_cast<std::uint64_t>(wrap(std::int64_t{r} - 1 - s, n));
      const std::uint64_t off = block_begin(count, parts, blk);
      const std::int32_t next = (r + 1) % n;
      b.reduce_copy(s == 0 ? b.in(r, off) : sum_at(r, off), b.in(next, off), sum_at(next, off),
                    block_size(count, parts, blk));
    }
  }

  // Phase 2, gather: every rank sends its finished block to the root.
  b.begin_step("gather", "every other rank sends its finished block to the root (" + b.rank_name(root) +
                             "), which now holds the whole result");
  for (std::int32_t r = 0; r < n; ++r) {
    if (r == root) continue;
    const auto blk = static_cast<std::uint64_t>(r);
    const std::uint64_t off = block_begin(count, parts, blk);
    b.copy(sum_at(r, off), b.out(root, off), block_size(count, parts, blk));
  }
}

}  // namespace collscope::algo
