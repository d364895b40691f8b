// Reduce-scatter: every rank's input has n blocks; block k of the result, the sum
// over all ranks of their block k, ends up in the output of rank k.
//
// A reduce (dst = dst (+) src) needs a place that already holds one part before the
// next part is added. None of the algorithms here copies its own parts there first:
// where a rank adds to a block for the first time, a reduce-copy writes (what arrives)
// + (its own part, read from its input) into the place where the sum is built.
//
// ring: n-1 steps. The partial sum of each block walks once round the ring,
// each rank adding its part, and arrives complete at the block's owner (4 ranks,
// blocks A B C D = 0 1 2 3; "B:2" = partial sum of block B holding 2 ranks' parts):
//
//   ring 1:   0 -D:1-> 1 -A:1-> 2 -B:1-> 3 -C:1-> 0      (each receiver adds its part)
//   ring 2:   0 -C:2-> 1 -D:2-> 2 -A:2-> 3 -B:2-> 0
//   ring 3:   0 -B:3-> 1 -C:3-> 2 -D:3-> 3 -A:3-> 0      rank 1 now holds all of B, ...
//
// recursive_halving: 1 + log2 n steps. Pairs of ranks n/2, n/4, ... 1 apart: each
// sends the partial sums of the half of its remaining blocks that the partner keeps,
// and adds the partner's sums of the half it keeps (8 ranks, rank 0):
//
//   halving 1 (d = 4):  rank 0 keeps blocks 0-3, sends 4-7 to rank 4
//   halving 2 (d = 2):  rank 0 keeps blocks 0-1, sends 2-3 to rank 2
//   halving 3 (d = 1):  rank 0 keeps block 0,    sends 1   to rank 1
//
//   When n is not a power of two, the first few even ranks first add their whole
//   input into the odd rank after them (fold-in) and wait; at the end they get
//   their finished block back (fold-out).
//
// pairwise: n-1 steps. In step k every rank
// r sends its part of block r+k straight to rank r+k, which adds it to its output:
//
//   pairwise k:   r --part of block r+k--> r+k        (for every r at once)
//
// Outside its output a rank's buffers never change: partial sums live in scratch
// buffers, also in place (where the input and the output share memory).
#include "common.h"
#include "families.h"

namespace collscope::algo {
namespace {

// What the single rank does, in its own words.
constexpr const char* kOneRank = "only one rank: its block is already the full sum, it copies it into its output";

}  // namespace

// ---------------------------------------------------------------------------
// ring: n-1 steps round the ring.
//
// Block j's partial sum starts at rank j+1 and walks right: after step k it holds
// the parts of k+1 ranks, and in step n-1 it reaches rank j. Each step is one
// reduce-copy per rank: (the partial sum that arrives) + (the rank's own part, read
// from its input) -> a work slot, or the output in the last step. Two slots take
// turns: in one step a rank writes one while its neighbour reads the other.

void reduce_scatter_ring(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, kOneRank);

  const std::int32_t slots = n >= 3 ? b.add_scratch("ring-partial", 2 * c) : -1;
  // The block whose partial sum rank r receives in step k.
  auto received_block = [&](std::int32_t r, std::int32_t k) { return wrap(static_cast<std::int64_t>(r) - k - 1, n); };
  // Where rank r collects that block in step k: a work slot, or its output in the last step.
  auto collect_at = [&](std::int32_t r, std::int32_t k) {
    return k == n - 1 ? b.out(r) : b.scratch(slots, r, at_block(k % 2, c));
  };

  for (std::int32_t k = 1; k < n; ++k) {
    std::string caption = step_of(k, n - 1);
    if (k == 1) caption += "every rank sends its part of one block to its right neighbour, which adds its own part";
    else
      caption += "every rank passes its partial sum (" + plural(k, "part") +
                 ") to its right neighbour, which adds its own part";
    if (k == n - 1) caption += ": now complete";
    b.begin_step("ring", caption);
    for (std::int32_t r = 0; r < n; ++r) {
      const std::int32_t from = wrap(r - 1, n);
      const std::int64_t blk = received_block(r, k);
      const Loc src = k == 1 ? b.in(from, at_block(blk, c)) : collect_at(from, k - 1);
      // In place the last step adds straight into the rank's own block (a plain reduce).
      b.reduce_copy(src, b.in(r, at_block(blk, c)), collect_at(r, k), c);
    }
  }
}

// ---------------------------------------------------------------------------
// recursive_halving: log2 n halving steps; when n is not a power of two, a fold-in step
// before and a fold-out step after.

void reduce_scatter_recursive_halving(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, kOneRank);

  const PowerOfTwoFold fold(n);
  const std::int32_t rounds = ceil_log2(fold.p);
  // Blocks of virtual ranks v .. w-1 are the blocks first_block(v) .. first_block(w)-1: a
  // virtual rank that absorbed a folded-in partner finishes two neighbouring blocks.
  auto first_block = [&](std::int64_t v) -> std::int64_t { return v < fold.extra ? 2 * v : v + fold.extra; };

  // Partial sums: rank r adds block x into its scratch at block x, except its own
  // block, which it adds straight into its output.
  const std::int32_t partial = b.add_scratch("halving-partial", static_cast<std::uint64_t>(n) * c);
  auto sum_at = [&](std::int32_t r, std::int64_t x) {
    return x == r ? b.out(r) : b.scratch(partial, r, at_block(x, c));
  };
  auto input_at = [&](std::int32_t r) { return [&b, r, c](std::int64_t x) { return b.in(r, at_block(x, c)); }; };
  auto sums_of = [&](std::int32_t r) { return [&sum_at, r](std::int64_t x) { return sum_at(r, x); }; };

  const std::int32_t total = rounds + (fold.extra > 0 ? 2 : 0);
  std::int32_t step = 0;
  // A virtual rank below `extra` stands in for a folded-in partner: its sums of every
  // block start in the fold-in, the others' in round 1.
  auto stands_in = [&](std::int32_t v) { return v < fold.extra; };

  // Fold-in: an even rank below 2e adds its whole input to the next rank's, writing the
  // sums into that rank's work buffer (a reduce-copy), and waits.
  if (fold.extra > 0) {
    b.begin_step("fold-in", step_of(++step, total) + std::to_string(n) +
                                " is not a power of two: each even rank below " + std::to_string(2 * fold.extra) +
                                " adds its whole input into the next rank and waits");
    for (std::int32_t r = 0; r < 2 * fold.extra; r += 2)
      move_blocks(b, Action::reduce_copy, 0, n, c, input_at(r), input_at(r + 1), sums_of(r + 1));
  }

  // Halving: virtual ranks v and v^d split their common group of 2d virtual ranks;
  // each sends the partial sums of the partner's half and adds in those of its own.
  for (std::int32_t i = 0; i < rounds; ++i) {
    const std::int32_t d = fold.p >> (i + 1);
    std::string caption = step_of(++step, total) + "pairs of ranks " + std::to_string(d) + " apart ";
    if (fold.extra > 0) caption += "(among the " + std::to_string(fold.p) + " taking part) ";
    caption += "swap partial sums of the half the other keeps";
    if (fold.extra == 0) caption += " (" + plural(d, "block") + ")";
    caption += " and add them in";
    b.begin_step("halving", caption);
    for (std::int32_t v = 0; v < fold.p; ++v) {
      const std::int32_t partner = v ^ d;
      const std::int32_t theirs = partner & ~(d - 1);  // first virtual rank of the partner's half
      const std::int32_t me = fold.real_rank(v);
      const std::int32_t to = fold.real_rank(partner);
      // In round 1 a rank that absorbed nobody sends straight from its input, and one
      // that absorbed nobody receives with a reduce-copy: (what arrives) + (its own
      // input's part) into its work buffer.
      const std::int64_t lo = first_block(theirs), hi = first_block(theirs + d);
      const bool first_round = i == 0;
      const Action add = first_round && !stands_in(partner) ? Action::reduce_copy : Action::reduce;
      if (first_round && !stands_in(v)) move_blocks(b, add, lo, hi, c, input_at(me), input_at(to), sums_of(to));
      else move_blocks(b, add, lo, hi, c, sums_of(me), input_at(to), sums_of(to));
    }
  }

  // Fold-out: the odd rank finished its partner's block too and hands it over.
  if (fold.extra > 0) {
    b.begin_step("fold-out", step_of(++step, total) + "each rank that sat out gets its finished block from the " +
                                 "rank it folded into");
    for (std::int32_t r = 0; r < 2 * fold.extra; r += 2) b.copy(sum_at(r + 1, r), b.out(r), c);
  }
}

// ---------------------------------------------------------------------------
// pairwise: n-1 steps.

void reduce_scatter_pairwise(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b, kOneRank);

  // Step 1 writes (what arrives) + (the receiver's own part) into the output (a
  // reduce-copy; in place the own part is already there), the later steps add to it.
  for (std::int32_t k = 1; k < n; ++k) {
    b.begin_step("pairwise", step_of(k, n - 1) + "every rank r sends its part of block r+" + std::to_string(k) +
                                 " to rank r+" + std::to_string(k) + ", which adds it to its output");
    for (std::int32_t r = 0; r < n; ++r) {
      const std::int32_t to = wrap(static_cast<std::int64_t>(r) + k, n);
      if (k == 1) b.reduce_copy(b.in(r, at_block(to, c)), b.in(to, at_block(to, c)), b.out(to), c);
      else b.reduce(b.in(r, at_block(to, c)), b.out(to), c);
    }
  }
}

}  // namespace collscope::algo
