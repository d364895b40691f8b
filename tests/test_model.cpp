// The cost model behind `auto`: the chain of wake-ups of fast mode on hand-made
// schedules with known answers, and the ordering it gives the allreduce algorithms
// when ranks outnumber cores (as measured in bench/RESULTS.md).
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/model.h"
#include "collscope/schedule.h"

using namespace collscope;

namespace {

// R ranks, one buffer "x" of n elements each, no call bookkeeping needed by the model.
Schedule world(std::int32_t ranks, std::uint64_t n) {
  Schedule s;
  s.ranks = ranks;
  s.buffers.push_back({"x", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), n), false});
  return s;
}

void step(Schedule& s, std::vector<Transfer> ts) {
  Step st;
  st.transfers = std::move(ts);
  s.steps.push_back(std::move(st));
}

Transfer copy(std::int32_t from, std::int32_t to, std::uint64_t n = 1) {
  return Transfer{{from, 0, 0}, {to, 0, 0}, n, Action::copy, 1};
}

CostModel model(int cores) {
  CostModel m;
  m.cores = cores;
  return m;
}

Schedule allreduce(const std::string& algo, std::int32_t ranks, std::uint64_t count) {
  Schedule s = world(ranks, count);
  CollArgs a;
  a.coll = Collective::allreduce;
  a.ranks = ranks;
  a.count = count;
  a.in_place = true;
  REQUIRE(lower_call(s, a, algo).ok());
  return s;
}

}  // namespace

TEST_CASE("model: a relay of R-1 hops waits R-2 times; independent transfers never wait") {
  for (std::int32_t ranks : {2, 5, 8}) {
    CAPTURE(ranks);
    Schedule relay = world(ranks, 4);
    for (std::int32_t r = 1; r < ranks; ++r) step(relay, {copy(r - 1, r)});
    // The first hop reads what was there from the start; each later one waits for the
    // hop before it.
    const CostModel m = model(ranks);  // a core per rank: spinning wake-ups
    CHECK(predict_sync_us(relay, m) == doctest::Approx((ranks - 2) * m.wake_us));
    // Ranks outnumber cores: each hop is a scheduler round trip, dearer per extra rank.
    const CostModel small = model(1);
    CHECK(predict_sync_us(relay, small) == doctest::Approx((ranks - 2) * small.switch_us * ranks));

    // Everyone copies rank 0's data in one step: nothing was written before, no waiting.
    Schedule fan = world(ranks, 4);
    std::vector<Transfer> ts;
    for (std::int32_t r = 1; r < ranks; ++r) ts.push_back(copy(0, r));
    step(fan, ts);
    CHECK(predict_sync_us(fan, m) == doctest::Approx(0.0));
  }
}

TEST_CASE("model: a crowd waiting for one rank is woken a core at a time") {
  // Step 1: rank 0 writes its own x (a local copy from rank 0's x to itself, offset 1).
  // Step 2: ranks 1..7 all read what rank 0 wrote: seven waiters on one event.
  Schedule s = world(8, 4);
  step(s, {Transfer{{0, 0, 0}, {0, 0, 1}, 1, Action::copy, 1}});
  std::vector<Transfer> ts;
  for (std::int32_t r = 1; r < 8; ++r) ts.push_back(Transfer{{0, 0, 1}, {r, 0, 2}, 1, Action::copy, 1});
  step(s, ts);
  const CostModel two = model(2);
  const double wake = two.switch_us * 8 / 2;
  CHECK(predict_sync_us(s, two) == doctest::Approx(wake * 4));  // ceil(7 / 2) rounds
  const CostModel eight = model(8);
  CHECK(predict_sync_us(s, eight) == doctest::Approx(eight.wake_us));  // one round
}

TEST_CASE("model: tiny allreduce with 8 ranks on 2 cores: flat, then tree, then ring (as measured)") {
  const CostModel m = model(2);
  std::map<std::string, double> us;
  for (const auto& name : algorithm_names(Collective::allreduce)) us[name] = predict_auto_us(allreduce(name, 8, 2), m);
  CHECK(us["flat"] < us["tree"]);
  CHECK(us["tree"] < us["ring"]);
  CHECK(us["rabenseifner"] < us["ring"]);
  // With a core per rank the wake-ups are cheap and every chain is short: the whole
  // estimate of a tiny call stays within a few microseconds.
  for (const auto& name : algorithm_names(Collective::allreduce))
    CHECK(predict_auto_us(allreduce(name, 8, 2), model(8)) < 5.0);
  // Large messages: the data time decides, and flat (one rank adds everything) loses.
  CHECK(predict_auto_us(allreduce("flat", 8, 1 << 22), m) > predict_auto_us(allreduce("ring", 8, 1 << 22), m));
  CHECK(predict_auto_us(allreduce("flat", 8, 1 << 22), m) >
        predict_auto_us(allreduce("rabenseifner", 8, 1 << 22), m));
}

TEST_CASE("model: bytes touched again within the cache come from it, not from memory") {
  // Only the shared memory system counts here: copies are free for the ranks themselves.
  CostModel m;
  m.alpha_us = 0;
  m.beta_gbps = m.gamma_gbps = 1e9;
  m.shared_gbps = 1.0;  // 1 byte per ns: a step's time in us is its memory bytes / 1000
  m.cores = 0;
  const std::uint64_t n = 250000;  // 1 MB of float32
  Schedule s = world(2, n);
  step(s, {copy(0, 1, n)});  // reads rank 0's x, writes rank 1's: 2 MB of traffic, all from memory
  step(s, {copy(1, 0, n)});  // the same bytes again, 2 MB after they were touched
  const double fresh = 2.0 * 4 * n / 1000.0;
  m.cache_bytes = 0;  // no cache: both steps from memory
  CHECK(predict_us(s, m) == doctest::Approx(2 * fresh));
  m.cache_bytes = 4e6;  // the second step finds both ranges in the cache
  CHECK(predict_us(s, m) == doctest::Approx(fresh));
  m.cache_bytes = 1e6;  // too small: 2 MB went by since
  CHECK(predict_us(s, m) == doctest::Approx(2 * fresh));
  // Half of the second read was touched before, half is new.
  Schedule half = world(2, 2 * n);
  step(half, {Transfer{{0, 0, 0}, {1, 0, 0}, n, Action::copy, 1}});
  step(half, {Transfer{{1, 0, 0}, {0, 0, n}, 2 * n, Action::copy, 1}});  // rank 1's [0, 2n) -> rank 0's [n, 3n)
  m.cache_bytes = 4e6;
  // step 2: reads 2n elements of which n were written in step 1; writes rank 0's [n, 2n), new
  CHECK(predict_us(half, m) == doctest::Approx(fresh + (4.0 * n + 8.0 * n) / 1000.0));
}

TEST_CASE("model: the ring in slices stays in a 32 MiB cache, the whole ring and rabenseifner do not") {
  // A memory system of 5 GB/s (about what this class of machine measures for its
  // reads and writes together), so that memory traffic decides.
  CostModel m = model(2);
  m.shared_gbps = 5;
  m.cache_bytes = 32 << 20;
  CostModel flat_memory = m;
  flat_memory.cache_bytes = 0;
  // 16 MiB per rank on 4 ranks, in place: every step of rabenseifner moves tens of MiB.
  const Schedule ring = allreduce("ring", 4, 1 << 22);
  const Schedule rab = allreduce("rabenseifner", 4, 1 << 22);
  CHECK(predict_us(ring, m) < 0.6 * predict_us(ring, flat_memory));
  CHECK(predict_us(rab, m) > 0.8 * predict_us(rab, flat_memory));
  CHECK(predict_auto_us(ring, m) < predict_auto_us(rab, m));
  // Without the cache the two cost the same data time and the ring's many slices lose.
  CHECK(predict_auto_us(ring, flat_memory) > predict_auto_us(rab, flat_memory));
}
