// All-to-all with counts per pair of ranks (alltoallv): rank s has a block of its own
// size for every rank d (b.peer_count(s, d) elements, possibly none). It is the
// all-to-all of alltoall.cpp, but the blocks differ in size, so the matrix being
// transposed is ragged. Mixture-of-experts routing is the classic user: rank s sends
// rank d the tokens its router gave to d's expert, and a popular expert receives a lot.
//
//   counts (row: sender)     rank 0's input, by receiver     rank 0's output, by sender
//        to 0  1  2  3       | 0 | 1  1  1 | 3  3 |           | 0 | 1  1 | 3  3  3  3 |
//   0:      1  3  0  2        (nothing for rank 2)              (nothing from rank 2)
//   1:      2  0  1  1
//   2:      0  4  0  0       a column is what a rank receives: rank 0 gets 1 + 2 + 0 + 4
//   3:      4  0  1  0
//
// pairwise: a local step, then n-1 rounds. In round k every rank r sends its block for
// rank r+k and receives the block of rank r-k (all mod n), so every rank talks to one
// peer at a time. A round lasts as long as its largest block: with skewed counts the
// rounds differ a lot, and a round whose blocks are all empty disappears.
//
//   round 1:  0 --> 1   1 --> 2   2 --> 3   3 --> 0
//   round 2:  0 --> 2   1 --> 3   2 --> 0   3 --> 1
//   round 3:  0 --> 3   1 --> 0   2 --> 1   3 --> 2
//
// linear (spread out): one step. Every rank posts all its sends at once, the k-th to
// rank r+k, so that no rank is flooded by everybody's first send; the slow pair no
// longer holds back a whole round, but every rank has n-1 messages in flight.
//
// scattered (a window of rounds, like MPI libraries' throttled alltoallv): the rounds
// of pairwise, kWindow of them per step. Fewer steps than pairwise, fewer messages in
// flight than linear:
//
//   step 1: local copy and rounds 1..4    step 2: rounds 5..8    ...
//
// Out of place only (alltoallv cannot run in one buffer).
#include "common.h"
#include "families.h"

namespace collscope::algo {
namespace {

constexpr const char* kOneRank = "only one rank: it copies the block it sends itself from its input to its output";
// Rounds per step of `scattered`.
constexpr std::int32_t kWindow = 4;

// The block rank r sends itself: a local copy.
void copy_own_blocks(StepBuilder& b) {
  for (std::int32_t r = 0; r < b.ranks(); ++r) b.copy(b.send_block(r, r), b.recv_block(r, r), b.peer_count(r, r));
}

// Round k: every rank r sends its block for r+k.
void send_round(StepBuilder& b, std::int32_t k) {
  const std::int32_t n = b.ranks();
  for (std::int32_t r = 0; r < n; ++r) {
    const std::int32_t to = wrap(static_cast<std::int64_t>(r) + k, n);
    b.copy(b.send_block(r, to), b.recv_block(to, r), b.peer_count(r, to));
  }
}

// The largest and the number of non-empty blocks of round k, for captions: a round is
// as slow as its largest block.
std::string round_sizes(const StepBuilder& b, std::int32_t k) {
  const std::int32_t n = b.ranks();
  std::uint64_t largest = 0;
  std::int32_t moving = 0;
  for (std::int32_t r = 0; r < n; ++r) {
    const std::uint64_t c = b.peer_count(r, wrap(static_cast<std::int64_t>(r) + k, n));
    largest = std::max(largest, c);
    moving += c > 0 ? 1 : 0;
  }
  return std::to_string(moving) + " of " + std::to_string(n) + " blocks are non-empty, the largest " +
         std::to_string(largest) + " elements";
}

std::uint64_t total_sent(const StepBuilder& b) {
  std::uint64_t total = 0;
  for (std::int32_t s = 0; s < b.ranks(); ++s)
    for (std::int32_t d = 0; d < b.ranks(); ++d) total += b.peer_count(s, d);
  return total;
}

}  // namespace

// ---------------------------------------------------------------------------
// pairwise: 1 + (n-1) steps (rounds whose blocks are all empty are dropped).

void alltoallv_pairwise(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (total_sent(b) == 0) return;
  if (n == 1) {
    b.begin_step("local copy", kOneRank);
    copy_own_blocks(b);
    return;
  }

  // Phase 1: what a rank keeps for itself never leaves it.
  b.begin_step("local copy", "every rank copies the block it keeps for itself to its own place in its output");
  copy_own_blocks(b);

  // Phase 2: n-1 rounds, one partner to send to and one to receive from in each.
  for (std::int32_t k = 1; k < n; ++k) {
    b.begin_step("pairwise", "round " + std::to_string(k) + " of " + std::to_string(n - 1) +
                                 ": every rank r sends its block for rank r+" + std::to_string(k) +
                                 " and receives the block of rank r-" + std::to_string(k) + "; " + round_sizes(b, k));
    send_round(b, k);
  }
}

// ---------------------------------------------------------------------------
// linear: 1 step.

void alltoallv_linear(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (total_sent(b) == 0) return;
  if (n == 1) {
    b.begin_step("local copy", kOneRank);
    copy_own_blocks(b);
    return;
  }
  b.begin_step("spread out",
               "every rank sends all its blocks at once, of whatever size, the k-th to rank r+k for k = 1.." +
                   std::to_string(n - 1) + ", and copies the block it keeps for itself");
  copy_own_blocks(b);
  // Round k of the sends, for every rank, before round k+1, so at each moment the
  // ranks a rank receives from differ (as in alltoall's linear).
  for (std::int32_t k = 1; k < n; ++k) send_round(b, k);
}

// ---------------------------------------------------------------------------
// scattered: ceil((n-1) / kWindow) steps, the first with the local copy.

void alltoallv_scattered(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (total_sent(b) == 0) return;
  if (n == 1) {
    b.begin_step("local copy", kOneRank);
    copy_own_blocks(b);
    return;
  }
  const std::int32_t steps = (n - 1 + kWindow - 1) / kWindow;
  for (std::int32_t j = 0; j < steps; ++j) {
    const std::int32_t first = 1 + j * kWindow, last = std::min(n - 1, first + kWindow - 1);
    std::string caption = step_of(j + 1, steps) + "every rank r sends its blocks for ranks r+" + std::to_string(first);
    if (last > first) caption += " .. r+" + std::to_string(last);
    caption += " at once (a window of at most " + std::to_string(kWindow) + " messages in flight)";
    if (j == 0) caption += ", and copies the block it keeps for itself";
    b.begin_step("scattered", caption);
    if (j == 0) copy_own_blocks(b);
    for (std::int32_t k = first; k <= last; ++k) send_round(b, k);
  }
}

}  // namespace collscope::algo
