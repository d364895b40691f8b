// Barrier: no rank may leave before every rank has arrived. No data moves; a step
// only carries signals ("I have reached this point").
//
// dissemination: ceil(log2 n) steps. In step k every rank r signals rank r + 2^(k-1)
// (mod n). A signal passes on everything its sender has heard, so the set of ranks
// each rank has heard from (itself included) doubles every step (6 ranks):
//
//   step 1 (d = 1):  0->1  1->2  2->3  3->4  4->5  5->0    each has heard from 2 ranks
//   step 2 (d = 2):  0->2  1->3  2->4  3->5  4->0  5->1    ... from 4 ranks
//   step 3 (d = 4):  0->4  1->5  2->0  3->1  4->2  5->3    ... from all 6
//
// Rank r has then heard from r, r-1, ..., r-(2^k - 1): after ceil(log2 n) steps that
// is everybody. Unlike a tree barrier there is no root and every rank does the same
// work in every step.
//
// central: 2 steps, a central counter. Every rank tells rank 0 that it has arrived
// (rank 0 counts them); once all have, rank 0 releases everybody (5 ranks):
//
//   step 1 (arrive):   1->0  2->0  3->0  4->0         rank 0 has heard from all 5
//   step 2 (release):  0->1  0->2  0->3  0->4         ... and tells everyone
//
// Only two waits, but rank 0 waits for everybody and everybody waits for rank 0: with
// many ranks on few cores it is woken, and wakes the others, one at a time.
//
// tree: 2 ceil(log2 n) steps, a tournament on a binomial tree. In each round of the
// arrival the loser of a pair (the child) tells the winner (its parent) that its whole
// subtree has arrived, and the winner plays on; rank 0 wins the final. The release
// walks the same tree back down (8 ranks):
//
//   arrive 1:   1->0   3->2   5->4   7->6
//   arrive 2:   2->0   6->4
//   arrive 3:   4->0                               rank 0 knows that all 8 arrived
//   release 1:  0->4
//   release 2:  0->2   4->6
//   release 3:  0->1   2->3   4->5   6->7            everyone may leave
//
// Every rank waits for at most one signal per step, as in dissemination, but the
// signals travel up and down: twice the steps, but 2(n-1) signals instead of
// n ceil(log2 n).
#include "common.h"
#include "families.h"

namespace collscope::algo {

// ---------------------------------------------------------------------------
// dissemination: ceil(log2 n) steps.

void barrier_dissemination(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const std::int32_t rounds = ceil_log2(n);  // one rank: nothing to wait for
  for (std::int32_t k = 0; k < rounds; ++k) {
    const std::int64_t d = std::int64_t{1} << k;
    const std::int64_t heard = std::min<std::int64_t>(2 * d, n);
    b.begin_step("dissemination", step_of(k + 1, rounds) + "every rank r signals rank r+" + std::to_string(d) +
                                      "; now each rank has heard from " +
                                      (heard == n ? "all " + std::to_string(n) + " ranks"
                                                  : std::to_string(heard) + " ranks (itself included)"));
    for (std::int32_t r = 0; r < n; ++r) b.signal(r, wrap(r + d, n));
  }
}

// ---------------------------------------------------------------------------
// central: 2 steps.

void barrier_central(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  if (n == 1) return;  // nothing to wait for

  b.begin_step("arrive", step_of(1, 2) + "each of the other " + plural(n - 1, "rank") +
                             " tells rank 0 that it has arrived; rank 0 counts them");
  for (std::int32_t r = 1; r < n; ++r) b.signal(r, 0);

  b.begin_step("release", step_of(2, 2) + "all " + std::to_string(n) +
                              " ranks have arrived: rank 0 releases the others, who may now leave");
  for (std::int32_t r = 1; r < n; ++r) b.signal(0, r);
}

// ---------------------------------------------------------------------------
// tree: ceil(log2 n) steps up + ceil(log2 n) steps down.

void barrier_tree(StepBuilder& b) {
  const std::int32_t n = b.ranks();
  const auto rounds = binomial_rounds(n, 0);  // one rank: no rounds
  const auto total = static_cast<std::int32_t>(rounds.size());

  // Phase 1, the tournament (distance 1, 2, 4, ...): the loser of each pair signals
  // the winner, who now speaks for both subtrees.
  std::int64_t players = n;
  for (std::int32_t k = 0; k < total; ++k) {
    const TreeRound& round = rounds[static_cast<std::size_t>(k)];
    const auto losers = static_cast<std::int64_t>(round.edges.size());
    players -= losers;
    b.begin_step("arrive", step_of(k + 1, 2 * total) + plural(losers, "rank") +
                               agree(losers, " tells its", " tell their") + " partner " +
                               plural(round.distance, "rank") + " nearer rank 0 that " + agree(losers, "its", "their") +
                               " subtree arrived; " +
                               (players == 1 ? "rank 0 has heard from all" : std::to_string(players) + " play on"));
    for (const TreeEdge& e : round.edges) b.signal(e.child, e.parent);
  }

  // Phase 2, the release, down the same tree (largest distance first).
  std::int64_t released = 1;
  for (std::int32_t k = 0; k < total; ++k) {
    const TreeRound& round = rounds[static_cast<std::size_t>(total - 1 - k)];
    const auto senders = static_cast<std::int64_t>(round.edges.size());
    released += senders;
    b.begin_step("release", step_of(total + k + 1, 2 * total) + plural(senders, "rank") +
                                agree(senders, " releases its", " release their") + " partner " +
                                plural(round.distance, "rank") + " away; " + std::to_string(released) + " of " +
                                std::to_string(n) + " may leave");
    for (const TreeEdge& e : round.edges) b.signal(e.parent, e.child);
  }
}

}  // namespace collscope::algo
