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
#include "common.h"
#include "families.h"

namespace collscope::algo {

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

}  // namespace collscope::algo
