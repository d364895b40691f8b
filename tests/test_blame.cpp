// The cpu watchdog's verdict (backends/cpu/blame.h) over synthetic snapshots of the
// lanes: who is blamed, for what, and who waits for it, without threads or clocks.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "backends/cpu/blame.h"

using namespace collscope;
using namespace collscope::cpu;

namespace {

LaneSnapshot idle(std::int32_t step = -1) { return {LaneState::idle, step, -1}; }
LaneSnapshot finished(std::int32_t step) { return {LaneState::finished, step, -1}; }
LaneSnapshot running(std::int32_t step) { return {LaneState::running, step, -1}; }
LaneSnapshot waiting(std::int32_t step, std::int32_t on) { return {LaneState::waiting, step, on}; }
LaneSnapshot hung(std::int32_t step) { return {LaneState::hung, step, -1}; }
LaneSnapshot crashed(std::int32_t step) { return {LaneState::crashed, step, -1}; }

using Ranks = std::vector<std::int32_t>;

}  // namespace

TEST_CASE("blame: a crash in observable mode: the crashed rank, the idle ranks wait at the barrier") {
  const std::vector<LaneSnapshot> lanes = {idle(2), idle(2), crashed(2), idle(2)};
  const Blame b = find_blame(lanes, 4, false);
  CHECK(b.conduct == Conduct::crashed);
  CHECK(b.lane == 2);
  CHECK(b.rank == 2);
  CHECK(b.step == 2);
  CHECK(b.waiting == Ranks{0, 1, 3});
  CHECK(blame_message(b, "step 2", 1) == "rank 2 crashed at step 2; ranks 0, 1 and 3 are waiting for it");
}

TEST_CASE("blame: a hang in observable mode: did not arrive, with the timeout") {
  const std::vector<LaneSnapshot> lanes = {idle(1), hung(1)};
  const Blame b = find_blame(lanes, 2, false);
  CHECK(b.conduct == Conduct::hung);
  CHECK(b.rank == 1);
  CHECK(b.waiting == Ranks{0});
  CHECK(blame_message(b, "step 1 (seq 0: allreduce x)", 0.5) ==
        "rank 1 did not arrive at step 1 (seq 0: allreduce x) within 0.5 s; rank 0 is waiting for it");
}

TEST_CASE("blame: a late rank in observable mode: did not finish its part of the step") {
  const std::vector<LaneSnapshot> lanes = {idle(3), idle(3), running(3)};
  const Blame b = find_blame(lanes, 3, false);
  CHECK(b.conduct == Conduct::late);
  CHECK(b.rank == 2);
  CHECK(b.waiting == Ranks{0, 1});
  CHECK(blame_message(b, "step 3", 2) == "rank 2 did not finish step 3 within 2 s; ranks 0 and 1 are waiting for it");
}

TEST_CASE("blame: a crash wins over a hang, and a hang over a late rank, wherever they stand") {
  CHECK(find_blame({running(0), hung(1), crashed(4), idle(0)}, 4, false).lane == 2);
  CHECK(find_blame({running(0), hung(1), idle(0), idle(0)}, 4, true).lane == 1);
  // Two crashed lanes: the first is named.
  CHECK(find_blame({crashed(0), crashed(1)}, 2, true).lane == 0);
  CHECK(find_blame({idle(0), crashed(1), crashed(0)}, 3, false).lane == 1);
}

TEST_CASE("blame: fast mode follows the wait-for chains to their end") {
  // 0 waits for 1, 1 waits for 2, 3 waits for 2; 2 is stuck inside its step.
  const std::vector<LaneSnapshot> lanes = {waiting(4, 1), waiting(4, 2), running(3), waiting(5, 2)};
  CHECK(chain_ends(lanes) == Ranks{2, 2, 2, 2});
  const Blame b = find_blame(lanes, 4, true);
  CHECK(b.conduct == Conduct::late);
  CHECK(b.rank == 2);
  CHECK(b.step == 3);
  CHECK(b.waiting == Ranks{0, 1, 3});
}

TEST_CASE("blame: fast mode: the lane most chains end at, not the first that is busy") {
  // Lane 0 is running and nobody waits for it; lanes 2, 3 and 4 wait (directly or not) for lane 1.
  const std::vector<LaneSnapshot> lanes = {running(7), idle(0), waiting(0, 1), waiting(0, 2), waiting(0, 1)};
  const Blame b = find_blame(lanes, 5, true);
  CHECK(b.lane == 1);
  CHECK(b.conduct == Conduct::absent);  // it never arrived at a step
  CHECK(b.step == 0);                   // no step yet: named at step 0
  CHECK(b.waiting == Ranks{2, 3, 4});
  CHECK(blame_message(b, "step 0", 1) ==
        "rank 1 did not arrive at step 0 within 1 s; ranks 2, 3 and 4 are waiting for it");
  // Observable mode ignores the chains: the busy lane is to blame, the idle lane waits at the barrier.
  const Blame o = find_blame(lanes, 5, false);
  CHECK(o.lane == 0);
  CHECK(o.waiting == Ranks{1});
}

TEST_CASE("blame: fast mode: a cycle of waits ends, and one of its lanes is blamed") {
  const std::vector<LaneSnapshot> lanes = {waiting(1, 1), waiting(1, 2), waiting(1, 0), finished(9)};
  const auto ends = chain_ends(lanes);
  for (std::size_t l = 0; l < 3; ++l) CHECK(ends[l] >= 0);
  CHECK(ends[3] == 3);
  const Blame b = find_blame(lanes, 4, true);
  REQUIRE(b.lane >= 0);
  CHECK(b.lane < 3);
  CHECK(b.conduct == Conduct::absent);
  CHECK(std::find(b.waiting.begin(), b.waiting.end(), b.rank) == b.waiting.end());
}

TEST_CASE("blame: compute lanes count as their rank") {
  // 2 ranks, 4 lanes: lane 3 is rank 1's compute lane, hung; rank 0's lanes wait for it.
  const std::vector<LaneSnapshot> lanes = {waiting(2, 3), idle(0), waiting(2, 3), hung(2)};
  const Blame b = find_blame(lanes, 2, true);
  CHECK(b.lane == 3);
  CHECK(b.rank == 1);
  CHECK(b.conduct == Conduct::hung);
  CHECK(b.waiting == Ranks{0});  // rank 0 once, although both its lanes wait
  // A rank's own lanes never wait "for it".
  const Blame self = find_blame({waiting(0, 2), finished(0), running(0), finished(0)}, 2, true);
  CHECK(self.lane == 2);
  CHECK(self.rank == 0);
  CHECK(self.waiting.empty());
  CHECK(blame_message(self, "step 0", 1) == "rank 0 did not finish step 0 within 1 s");
}

TEST_CASE("blame: nobody to blame when every lane is idle or finished, or there are no lanes") {
  for (const bool fast : {false, true}) {
    CHECK(find_blame({idle(0), idle(0)}, 2, fast).conduct == Conduct::nobody);
    CHECK(find_blame({finished(3), finished(3), idle(1)}, 3, fast).lane == -1);
    CHECK(find_blame({}, 4, fast).conduct == Conduct::nobody);
  }
  CHECK(blame_message(Blame{}, "", 5) == "no rank finished a step within 5 s");
}

TEST_CASE("blame: a wait on a lane outside the world ends the chain where it is") {
  const std::vector<LaneSnapshot> lanes = {waiting(0, 17), waiting(0, -1), idle(0)};
  CHECK(chain_ends(lanes) == Ranks{0, 1, 2});
  const Blame b = find_blame(lanes, 3, true);
  CHECK(b.lane == 0);  // first of the lanes with a vote of their own
}

TEST_CASE("blame: properties over random snapshots") {
  std::mt19937 rng(21);
  for (int trial = 0; trial < 4000; ++trial) {
    const std::int32_t ranks = 1 + static_cast<std::int32_t>(rng() % 9);
    const std::int32_t L = ranks * (rng() % 2 ? 2 : 1);
    std::vector<LaneSnapshot> lanes(static_cast<std::size_t>(L));
    for (auto& x : lanes) {
      x.state = static_cast<LaneState>(rng() % 6);
      x.step = static_cast<std::int32_t>(rng() % 5) - 1;
      x.waiting_on = x.state == LaneState::waiting ? static_cast<std::int32_t>(rng() % (L + 1)) - 1 : -1;
    }
    const bool fast = rng() % 2;
    const Blame b = find_blame(lanes, ranks, fast);
    const auto ends = chain_ends(lanes);
    for (std::int32_t l = 0; l < L; ++l) {
      const auto e = ends[static_cast<std::size_t>(l)];
      REQUIRE(e >= 0);
      REQUIRE(e < L);
    }
    const auto has = [&](LaneState s) {
      return std::any_of(lanes.begin(), lanes.end(), [&](const LaneSnapshot& x) { return x.state == s; });
    };
    if (has(LaneState::crashed)) {
      CHECK(b.conduct == Conduct::crashed);
    } else if (has(LaneState::hung)) {
      CHECK(b.conduct == Conduct::hung);
    }
    if (b.conduct == Conduct::nobody) {
      // Nobody is blamed only when nobody is inside a step (and, fast, nobody waits).
      CHECK_FALSE(has(LaneState::running));
      if (fast) CHECK_FALSE(has(LaneState::waiting));
      CHECK(b.waiting.empty());
      continue;
    }
    REQUIRE(b.lane >= 0);
    REQUIRE(b.lane < L);
    CHECK(b.rank == b.lane % ranks);
    CHECK(b.step == std::max(0, lanes[static_cast<std::size_t>(b.lane)].step));
    CHECK(std::is_sorted(b.waiting.begin(), b.waiting.end()));
    CHECK(std::set<std::int32_t>(b.waiting.begin(), b.waiting.end()).size() == b.waiting.size());
    for (const auto r : b.waiting) {
      CHECK(r != b.rank);
      CHECK(r >= 0);
      CHECK(r < ranks);
    }
    const std::string msg = blame_message(b, "step " + std::to_string(b.step), 1);
    CHECK(msg.rfind("rank " + std::to_string(b.rank) + " ", 0) == 0);
    CHECK((msg.find("waiting for it") != std::string::npos) == !b.waiting.empty());
  }
}
