// All-gather: every rank contributes one block; at the end every rank holds all
// n blocks, the block of rank k at position k of its output.
//
// ring: n-1 steps. Every rank passes the block it received last to its right
// neighbour, so each block walks once round the ring (4 ranks, blocks A B C D):
//
//   step 1:   0 -A-> 1 -B-> 2 -C-> 3 -D-> 0
//   step 2:   0 -D-> 1 -A-> 2 -B-> 3 -C-> 0
//   step 3:   0 -C-> 1 -D-> 2 -A-> 3 -B-> 0
//
// recursive_doubling: log2 n steps. Pairs of ranks 1, 2, 4, ... apart swap
// everything they hold, so what each rank holds doubles every step (8 ranks):
//
//   step 1:   0<->1   2<->3   4<->5   6<->7      each holds 2 blocks
//   step 2:   0<->2   1<->3   4<->6   5<->7      each holds 4 blocks
//   step 3:   0<->4   1<->5   2<->6   3<->7      each holds 8 blocks
//
//   When n is not a power of two, the first few even ranks first hand their block
//   to the odd rank after them (fold-in) and wait; at the end they get the full
//   result back (fold-out).
//
// bruck: ceil(log2 n) steps for any n, then one local rotation. Rank r keeps a work
// buffer where position j holds the block of rank r+j (mod n). At distance d, every
// rank sends the blocks it has to rank r-d, which appends them at position d
// (5 ranks, rank 0's work buffer):
//
//   start:           [0]                 (its own block)
//   step 1 (d = 1):  [0 1]               rank 1 sent its block
//   step 2 (d = 2):  [0 1 2 3]           rank 2 sent blocks 2 3
//   step 3 (d = 4):  [0 1 2 3 4]         rank 4 sent block 4 (only 1 was missing)
//   rotate:          out = work rotated by r, so block k lands at position k
//
// In place, rank r's input already is block r of its output, so the local copies of
// the own block are skipped.
#include "common.h"
#include "families.h"

namespace collscope::algo {
namespace {

// Out of place, rank r's own block must also land in its output (a local copy; in
// place it is already there).
void keep_own_block(StepBuilder& b, std::int32_t r) {
  copy_unless_same(b, b.in(r), b.out(r, at_block(r, b.count())), b.count());
}

}  // namespace

// ---------------------------------------------------------------------------
// ring: n-1 steps.

void allgather_ring(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  for (std::int32_t k = 1; k < n; ++k) {
    std::string caption = step_of(k, n - 1);
    if (k == 1)
      caption += std::string("every rank sends its own block to its right neighbour") +
                 (b.args().in_place ? "" : " and copies it into its own output");
    else caption += "every rank passes the block it received in the last step on to its right neighbour";
    b.begin_step("ring", caption);
    for (std::int32_t r = 0; r < n; ++r) {
      // In step k rank r forwards the block of rank r-k+1: its own in step 1, then
      // the one its left neighbour sent in the step before.
      const std::int32_t block = wrap(static_cast<std::int64_t>(r) - k + 1, n);
      const Loc src = k == 1 ? b.in(r) : b.out(r, at_block(block, c));
      b.copy(src, b.out(wrap(r + 1, n), at_block(block, c)), c);
      if (k == 1) keep_own_block(b, r);
    }
  }
}

// ---------------------------------------------------------------------------
// recursive_doubling: log2 n steps for a power of two, else 2 more (fold-in, fold-out).

void allgather_recursive_doubling(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;
  if (n == 1) return single_rank(b);

  const PowerOfTwoFold fold(n);
  const std::int32_t rounds = ceil_log2(fold.p);
  const std::int32_t total = rounds + (fold.extra > 0 ? 2 : 0);
  std::int32_t step = 0;

  // The blocks of virtual ranks v .. w-1 are the blocks first_block(v) .. first_block(w)-1:
  // a virtual rank that absorbed a folded-in partner owns two neighbouring blocks.
  auto first_block = [&](std::int64_t v) -> std::int64_t { return v < fold.extra ? 2 * v : v + fold.extra; };

  // Fold-in: an even rank below 2e hands its block to the odd rank after it.
  if (fold.extra > 0) {
    b.begin_step("fold-in", step_of(++step, total) + std::to_string(n) +
                                " is not a power of two: each even rank below " + std::to_string(2 * fold.extra) +
                                " hands its block to the next rank and waits");
    for (std::int32_t r = 0; r < n; ++r) {
      if (fold.sits_out(r)) b.copy(b.in(r), b.out(r + 1, at_block(r, c)), c);
      keep_own_block(b, r);
    }
  }

  // Doubling: virtual ranks v and v^d swap the blocks of their group of d virtual ranks.
  for (std::int32_t i = 0; i < rounds; ++i) {
    const std::int32_t d = 1 << i;
    const bool reads_input = i == 0 && fold.extra == 0;  // nothing copied into the output yet
    std::string caption = step_of(++step, total) + "pairs of ranks " + std::to_string(d) + " apart ";
    if (fold.extra > 0) caption += "(among the " + std::to_string(fold.p) + " taking part) ";
    caption += "swap everything they have gathered so far";
    if (fold.extra == 0) caption += " (" + plural(d, "block") + " each)";
    b.begin_step("doubling", caption);
    for (std::int32_t v = 0; v < fold.p; ++v) {
      const std::int32_t group = v & ~(d - 1);
      const std::int64_t begin = first_block(group);
      const std::int64_t end = first_block(group + d);
      const std::int32_t me = fold.real_rank(v);
      const std::int32_t partner = fold.real_rank(v ^ d);
      const Loc src = reads_input ? b.in(me) : b.out(me, at_block(begin, c));
      b.copy(src, b.out(partner, at_block(begin, c)), static_cast<std::uint64_t>(end - begin) * c);
      if (reads_input) keep_own_block(b, me);
    }
  }

  // Fold-out: the odd rank hands the full result back, except the block its partner
  // already has (its own).
  if (fold.extra > 0) {
    b.begin_step("fold-out", step_of(++step, total) + "each rank that sat out gets all blocks except its own " +
                                 "from the rank it handed its block to");
    for (std::int32_t r = 0; r < 2 * fold.extra; r += 2) {
      b.copy(b.out(r + 1), b.out(r), at_block(r, c));
      b.copy(b.out(r + 1, at_block(r + 1, c)), b.out(r, at_block(r + 1, c)), at_block(n - r - 1, c));
    }
  }
}

// ---------------------------------------------------------------------------
// bruck: ceil(log2 n) steps, then a local rotation.

void allgather_bruck(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::uint64_t c = b.count();
  if (c == 0) return;

  const std::int32_t rounds = ceil_log2(n);
  const std::int32_t total = rounds + 1;
  // work[j] of rank r = the block of rank r+j. work[0] is the rank's own block, which
  // is read straight from its input, so that slot of the scratch buffer stays unused.
  const std::int32_t work = b.add_scratch("bruck-work", static_cast<std::uint64_t>(n) * c);
  auto work_at = [&](std::int32_t r, std::int64_t j) { return j == 0 ? b.in(r) : b.scratch(work, r, at_block(j, c)); };

  for (std::int32_t i = 0; i < rounds; ++i) {
    const std::int64_t d = std::int64_t{1} << i;
    const std::int64_t sent = std::min<std::int64_t>(d, n - d);  // the last round may need fewer
    b.begin_step("bruck", step_of(i + 1, total) + "every rank r sends the first " + plural(sent, "block") +
                              " of its work buffer to rank r-" + std::to_string(d) + ", which stores " +
                              (sent == 1 ? "it" : "them") + " from position " + std::to_string(d) + " on");
    for (std::int32_t r = 0; r < n; ++r) {
      const std::int32_t to = wrap(r - d, n);
      move_blocks(
          b, Action::copy, 0, sent, c, [&](std::int64_t j) { return work_at(r, j); },
          [&](std::int64_t j) { return b.scratch(work, to, at_block(d + j, c)); });
    }
  }

  // Rotation: work[j] holds the block of rank r+j, which belongs at position r+j.
  b.begin_step("rotate", step_of(total, total) + "every rank r copies work block j to position r+j of its output, " +
                             "so the block of rank k lands at position k");
  for (std::int32_t r = 0; r < n; ++r)
    move_blocks(
        b, Action::copy, 0, n, c, [&](std::int64_t j) { return work_at(r, j); },
        [&](std::int64_t j) { return b.out(r, at_block(wrap(r + j, n), c)); });
}

}  // namespace collscope::algo
