// The cost model behind `auto`: the chain of wake-ups of fast mode on hand-made
// schedules with known answers, the ordering it gives the allreduce algorithms
// when ranks outnumber cores (as measured in bench/RESULTS.md), what it charges the
// barriers, chains and the linear all-to-all, and auto's picks for a few sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/calibration.h"
#include "collscope/collective.h"
#include "collscope/model.h"
#include "collscope/schedule.h"
#include "hand_schedules.h"

using namespace collscope;

namespace {

Schedule world(std::int32_t ranks, std::uint64_t n) { return testing::model_world(ranks, n); }
void step(Schedule& s, std::vector<Transfer> ts) { testing::add_plain_step(s, std::move(ts)); }

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

TEST_CASE("model: a relay of R-1 hops waits R-2 times, independent transfers never wait") {
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

TEST_CASE("model: a crowd waiting for one rank is released in one round, as one waiter is") {
  // Step 1: rank 0 writes its own x (a local copy from rank 0's x to itself, offset 1).
  // Step 2: ranks 1..7 all read what rank 0 wrote: seven waiters on one event.
  Schedule s = world(8, 4);
  step(s, {Transfer{{0, 0, 0}, {0, 0, 1}, 1, Action::copy, 1}});
  std::vector<Transfer> ts;
  for (std::int32_t r = 1; r < 8; ++r) ts.push_back(Transfer{{0, 0, 1}, {r, 0, 2}, 1, Action::copy, 1});
  step(s, ts);
  // The same with one waiter: rank 1 alone reads it.
  Schedule one = world(8, 4);
  step(one, {Transfer{{0, 0, 0}, {0, 0, 1}, 1, Action::copy, 1}});
  step(one, {Transfer{{0, 0, 1}, {1, 0, 2}, 1, Action::copy, 1}});
  CostModel two = model(2);
  two.remote_look_us = 0;                      // the rounds alone (looks across cores: tests/test_model_terms.cpp)
  const double round = two.switch_us * 8 / 2;  // each core takes its 4 lanes in turn
  CHECK(predict_sync_us(s, two) == doctest::Approx(round));
  CHECK(predict_sync_us(s, two) == doctest::Approx(predict_sync_us(one, two)));
  const CostModel eight = model(8);
  CHECK(predict_sync_us(s, eight) == doctest::Approx(eight.wake_us));  // a core each: one wake-up
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
  CHECK(predict_auto_us(allreduce("flat", 8, 1 << 22), m) > predict_auto_us(allreduce("rabenseifner", 8, 1 << 22), m));
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

TEST_CASE("model: a slice that several transfers of a step read counts once on the cache's clock") {
  // A flat broadcast of 1 MB to 7 ranks, called back to back: 8 MB of distinct bytes a
  // call (the root's buffer and the 7 copies), 14 MB of transfers' traffic (each reads
  // the root's buffer). In a cache of 20 MB (bytes touched within its half are sure to
  // be found) the next call finds all of it: no memory traffic, as with a cache without
  // end.
  CostModel m;
  m.alpha_us = 0;
  m.beta_gbps = m.gamma_gbps = 1e9;
  m.shared_gbps = 1.0;  // a step's time in us is its memory bytes / 1000
  m.cores = 0;
  m.repeated_calls = true;
  const std::uint64_t n = 250000;  // 1 MB of float32
  Schedule s = world(8, n);
  std::vector<Transfer> to_all;
  for (std::int32_t r = 1; r < 8; ++r) to_all.push_back(copy(0, r, n));
  step(s, to_all);
  m.cache_bytes = 1e15;
  const double endless = predict_us(s, m);
  CHECK(endless < 1.0);
  m.cache_bytes = 20e6;
  CHECK(predict_us(s, m) == doctest::Approx(endless).epsilon(1e-3));
  // Without a cache, all 14 MB a call come from memory.
  m.cache_bytes = 0;
  CHECK(predict_us(s, m) == doctest::Approx(7 * 2.0 * 4 * n / 1000.0).epsilon(1e-3));
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
  CHECK(predict_us(rab, m) > 0.7 * predict_us(rab, flat_memory));
  CHECK(predict_auto_us(ring, m) < predict_auto_us(rab, m));
  // Without the cache the two cost the same data time and the ring's many slices lose.
  CHECK(predict_auto_us(ring, flat_memory) > predict_auto_us(rab, flat_memory));
}

namespace {

// One call lowered on its own schedule (one buffer, in place where the collective
// allows it, else an input and an output), as `auto` lowers its candidates.
Schedule lowered(Collective coll, const std::string& algo, std::int32_t ranks, std::uint64_t count) {
  CollArgs a;
  a.coll = coll;
  a.ranks = ranks;
  a.count = coll == Collective::barrier ? 0 : count;
  a.in_place = coll != Collective::alltoall && coll != Collective::barrier;
  Schedule s;
  s.ranks = ranks;
  std::vector<std::uint64_t> in, out;
  for (std::int32_t r = 0; r < ranks; ++r) {
    const CollectiveShape sh = shape_of(coll, ranks, r, 0, a.count);
    in.push_back(std::max(sh.in_count, sh.out_count));
    out.push_back(std::max(sh.in_count, sh.out_count));
  }
  s.buffers.push_back({"in", in, false});
  s.buffers.push_back({"out", out, false});
  a.in_buf = 0;
  a.out_buf = a.in_place ? 0 : 1;
  REQUIRE(lower_call(s, a, algo).ok());
  return s;
}

}  // namespace

TEST_CASE("model: barriers wait once (central), log2 n - 1 times (dissemination), 2 log2 n - 1 times (tree)") {
  // The signals of a call's first step come from before the call, so they cost
  // nothing here; every later step waits once for the step before it somewhere (with
  // a power of two of ranks; otherwise the tree's short branches wait less).
  for (std::int32_t n : {4, 8, 16}) {
    CAPTURE(n);
    const CostModel own = model(0);  // a core per rank: every wait is a spinning wake-up
    const double rounds = std::ceil(std::log2(n));
    CHECK(predict_sync_us(lowered(Collective::barrier, "central", n, 0), own) == doctest::Approx(own.wake_us));
    CHECK(predict_sync_us(lowered(Collective::barrier, "dissemination", n, 0), own) ==
          doctest::Approx((rounds - 1) * own.wake_us));
    CHECK(predict_sync_us(lowered(Collective::barrier, "tree", n, 0), own) ==
          doctest::Approx((2 * rounds - 1) * own.wake_us));
    // Ranks outnumber cores: rank 0's release of the n-1 others of a central barrier
    // ends in one round of each core through its lanes, the round one waiter takes.
    CostModel two = model(2);
    two.remote_look_us = 0;  // the rounds alone
    const double round = two.switch_us * n / 2;
    CHECK(predict_sync_us(lowered(Collective::barrier, "central", n, 0), two) == doctest::Approx(round));
    CHECK(predict_sync_us(lowered(Collective::barrier, "dissemination", n, 0), two) ==
          doctest::Approx((rounds - 1) * round));
  }
}

TEST_CASE(
    "model: linear all-to-all looks across cores once a call, pairwise at every step, a chain scatter or gather waits "
    "at every link") {
  CostModel no_looks = model(2);
  no_looks.remote_look_us = 0;
  for (const CostModel& m : {model(2), no_looks, model(0)})
    for (std::uint64_t count : {std::uint64_t{1}, std::uint64_t{1} << 16}) {
      CAPTURE(m.cores);
      CAPTURE(m.remote_look_us);
      CAPTURE(count);
      // The same blocks to the same ranks, and no rank reads what another writes within
      // a call: one step or n-1 steps, the same waits. With ranks beyond the cores, each
      // rank of linear looks at the ranks on the other core once a call, pairwise's again
      // at every step: linear is cheaper by pairwise's later looks, which tell most at one
      // element a block (measured: tests/test_model.cpp's picks below); otherwise the two
      // tie and pairwise (listed first) is picked.
      const double pairwise = predict_auto_us(lowered(Collective::alltoall, "pairwise", 8, count), m);
      const double linear = predict_auto_us(lowered(Collective::alltoall, "linear", 8, count), m);
      if (m.cores == 2 && m.remote_look_us > 0) {
        CHECK(linear < pairwise);
        if (count == 1) CHECK(linear < 0.7 * pairwise);
      } else {
        CHECK(linear == doctest::Approx(pairwise));
      }
      // The chain hands every block on through the ranks before it: n-2 waits for the
      // farthest block, where flat waits for nothing (it reads the root's input only).
      for (Collective c : {Collective::scatter, Collective::gather}) {
        const Schedule chain = lowered(c, "chain", 8, count);
        const Schedule flat = lowered(c, "flat", 8, count);
        if (m.remote_look_us == 0 || m.cores == 0) CHECK(predict_sync_us(flat, m) == doctest::Approx(0.0));
        CHECK(predict_sync_us(chain, m) >= 6 * m.wake_us);
        CHECK(predict_auto_us(chain, m) > predict_auto_us(flat, m));
      }
    }
}

TEST_CASE("model: auto's picks for a few sizes stay what they were") {
  // Each row: a machine (2 cores, or a core per rank; a 32 MiB cache), a collective and
  // ranks, in place or not, and the pick for 1, 16 Ki and 1 Mi elements. A change in
  // the model or a new algorithm that moves one of these must be shown to be faster
  // (bench/RESULTS.md) and the row updated with it.
  using C = Collective;
  struct Row {
    int cores;
    Collective coll;
    std::int32_t ranks;
    bool in_place;
    std::vector<std::string> picks;
  };
  const std::vector<Row> rows = {
      // Broadcast: the receivers of a flat broadcast read the root's bytes at once, which
      // come from memory once (the model grid of bench/RESULTS.md, 2026-12-03, 16 MiB: flat
      // 1678 / 2696 / 2759 / 5281 us on 2 / 3 / 4 / 8 ranks, where the picks before it,
      // scatter_allgather, binomial, chain and chain, took 2079 / 2642 / 3818 / 6439).
      {2, C::broadcast, 3, false, {"flat", "flat", "flat"}},
      {2, C::broadcast, 3, true, {"flat", "flat", "flat"}},
      {2, C::broadcast, 8, false, {"flat", "flat", "flat"}},
      {2, C::broadcast, 8, true, {"flat", "flat", "flat"}},
      {2, C::broadcast, 16, false, {"flat", "flat", "flat"}},
      // 16 Ki elements on 3 ranks (two on the first core): flat 4.09-4.11 us against the
      // ring's 6.41-6.68 (three runs, 2026-12-04), once the busier core carried its share.
      {2, C::reduce, 3, false, {"flat", "flat", "ring"}},
      {2, C::reduce, 8, false, {"flat", "binomial", "ring"}},
      {2, C::allreduce, 3, false, {"flat", "ring", "ring"}},
      // 8 B on 8 ranks of 2 cores: flat 13.2 us against recursive doubling's 14.9 (the
      // model grid of bench/RESULTS.md, 2026-12-03, 10.3 against 14.1 at 64 B). 4 MiB:
      // rabenseifner 1462-2044 us out of place, 978-1225 in place, against the ring's
      // 2570-2697 and 1222-1705 (three runs, 2026-12-04).
      {2, C::allreduce, 8, false, {"flat", "rabenseifner", "rabenseifner"}},
      {2, C::allreduce, 8, true, {"flat", "rabenseifner", "rabenseifner"}},
      {2, C::allreduce, 16, true, {"flat", "rabenseifner", "rabenseifner"}},
      {2, C::scatter, 3, false, {"flat", "flat", "flat"}},
      {2, C::scatter, 8, false, {"flat", "flat", "flat"}},
      {2, C::gather, 3, false, {"flat", "flat", "flat"}},
      {2, C::gather, 8, false, {"flat", "flat", "flat"}},
      {2, C::allgather, 3, false, {"bruck", "ring", "ring"}},
      {2, C::allgather, 8, false, {"recursive_doubling", "recursive_doubling", "recursive_doubling"}},
      // 1 Mi elements a rank: pairwise, whose ranks never wait for each other and keep
      // their sums in the cache, 7430-8088 us out of place on 8 ranks against recursive
      // halving's 11842-14021 (three runs, 2026-12-04). In place on 3 ranks this plain
      // machine (no in-cache rates) keeps the ring; a calibration of that machine picks
      // pairwise, measured faster (the test below).
      {2, C::reduce_scatter, 3, true, {"pairwise", "pairwise", "ring"}},
      {2, C::reduce_scatter, 8, false, {"pairwise", "pairwise", "pairwise"}},
      // One element a block: linear, every rank looking once at the ranks on the other core,
      // 1.40-1.87 us on 3 ranks and 11.0-11.6 us on 16 against pairwise's 1.82-2.44 and
      // 22.8-23.8, which looks again at every step (three runs, 2026-12-04).
      {2, C::alltoall, 3, false, {"linear", "pairwise", "pairwise"}},
      {2, C::alltoall, 16, false, {"linear", "pairwise", "pairwise"}},
      {0, C::broadcast, 3, true, {"flat", "flat", "flat"}},
      {0, C::broadcast, 8, false, {"flat", "flat", "flat"}},
      // 16 ranks with a core each, 1 Mi elements: 15 receivers stream the root's 4 MiB at
      // once, 120 MiB in flight, and find about half of it where another brought it in
      // (the drift measured on 2 cores, bench/RESULTS.md "Two cores reading one buffer at
      // once"): the chain, each rank copying what the one before it just wrote, is priced
      // below flat. No machine here has a core per rank to measure it on.
      {0, C::broadcast, 16, false, {"flat", "flat", "chain"}},
      {0, C::reduce, 8, false, {"flat", "ring", "ring"}},
      {0, C::allreduce, 3, true, {"flat", "ring", "ring"}},
      {0, C::allreduce, 8, false, {"flat", "rabenseifner", "ring"}},
      {0, C::allreduce, 16, true, {"flat", "rabenseifner", "ring"}},
      {0, C::scatter, 8, false, {"flat", "flat", "flat"}},
      {0, C::gather, 8, false, {"flat", "flat", "flat"}},
      {0, C::allgather, 3, false, {"bruck", "ring", "ring"}},
      {0, C::allgather, 8, false, {"recursive_doubling", "recursive_doubling", "recursive_doubling"}},
      {0, C::reduce_scatter, 8, true, {"pairwise", "pairwise", "recursive_halving"}},
      {0, C::alltoall, 8, false, {"pairwise", "pairwise", "pairwise"}},
      // Barriers (no count). Two ranks: dissemination's one round beats a round trip
      // to rank 0. With 2 cores the central counter's one release beats log2 n - 1
      // rounds from 3 ranks on (measured: 17.2 against 27.3 us with 8 ranks, 37.7
      // against 90.4 with 16, bench/RESULTS.md 2026-12-01); with a core per rank too.
      {2, C::barrier, 2, false, {"dissemination"}},
      {2, C::barrier, 3, false, {"central"}},
      {2, C::barrier, 5, false, {"central"}},
      {2, C::barrier, 8, false, {"central"}},
      {2, C::barrier, 16, false, {"central"}},
      {0, C::barrier, 2, false, {"dissemination"}},
      {0, C::barrier, 8, false, {"central"}},
      {0, C::barrier, 16, false, {"central"}},
  };
  const std::uint64_t counts[] = {1, 16384, 1 << 20};
  for (const Row& row : rows) {
    CostModel m = model(row.cores);
    m.cache_bytes = 32 << 20;
    for (std::size_t i = 0; i < row.picks.size(); ++i) {
      CollArgs a;
      a.coll = row.coll;
      a.ranks = row.ranks;
      a.count = row.coll == C::barrier ? 0 : counts[i];
      a.in_place = row.in_place;
      CHECK_MESSAGE(pick_algorithm(a, m) == row.picks[i],
                    name_of(row.coll) << " ranks=" << row.ranks << " count=" << a.count << " cores=" << row.cores
                                      << std::string(row.in_place ? " in place" : ""));
    }
  }
}

TEST_CASE("model: on a calibration of the 2-core machine, auto picks what measured fastest there") {
  // The figures calibrate measured on the machine of bench/RESULTS.md (2026-12-04, 02:35 UTC;
  // its own 1 MiB L2 inside a 32 MiB L3), and picks measured there (three runs each of
  // `collscope bench`, 1 Mi elements a rank).
  Calibration c;
  c.cores = 2;
  c.cache_bytes = 32 << 20;
  c.copy_gbps = 20.2;
  c.copy_in_cache_gbps = 108.6;
  c.reduce_gbps[static_cast<std::size_t>(DType::float32)] = 20.7;
  c.reduce_in_cache_gbps[static_cast<std::size_t>(DType::float32)] = 58.7;
  c.reduce_copy_in_cache_gbps[static_cast<std::size_t>(DType::float32)] = 56.0;
  c.near_cache_bytes = 1 << 20;
  c.copy_far_cache_gbps = 57.7;
  c.reduce_far_cache_gbps = 51.0;
  c.reduce_copy_far_cache_gbps = 34.9;
  c.shared_gbps = 21.9;
  c.wake_us = 0.129;
  c.switch_us = 0.720;
  c.step_us = 0.094;
  c.barrier_us = 10.9;
  c.barrier_per_rank_us = 4.47;
  const CostModel m = c.model(DType::float32);
  struct Case {
    Collective coll;
    std::int32_t ranks;
    bool in_place;
    const char* pick;
  };
  // Reduce-scatter in place on 3 ranks: pairwise 548-708 us against the ring's 981-1324;
  // out of place on 8: pairwise 7430-8088 against recursive halving's 11842-14021.
  // All-reduce of 4 MiB on 8 ranks: rabenseifner 978-1225 in place and 1462-2044 out of
  // place, the ring 1222-1705 and 2570-2697.
  for (const Case& k :
       {Case{Collective::reduce_scatter, 3, true, "pairwise"}, Case{Collective::reduce_scatter, 8, false, "pairwise"},
        Case{Collective::allreduce, 8, true, "rabenseifner"}}) {
    CollArgs a;
    a.coll = k.coll;
    a.ranks = k.ranks;
    a.count = 1 << 20;
    a.in_place = k.in_place;
    CHECK_MESSAGE(pick_algorithm(a, m) == k.pick, name_of(k.coll) << " ranks=" << k.ranks);
  }
}

TEST_CASE("model: observable mode's step is a barrier, and a wake-up on a busy core for every rank beyond them") {
  // The step of a ring all-reduce of one element per block: barely any data, so the
  // step is its synchronisation. With a core per rank it is the barrier alone; every
  // rank beyond the cores adds its wake-up, so the step grows with the ranks.
  CostModel m = CostModel::cpu_default();
  m.cores = 2;
  REQUIRE(m.alpha_per_rank_us > 0);
  std::vector<double> step_us;
  for (std::int32_t ranks : {1, 2, 4, 8, 16, 64}) {
    const Schedule s = allreduce("ring", ranks, static_cast<std::uint64_t>(ranks));
    if (ranks == 1) continue;  // (one rank has no step)
    REQUIRE(!s.steps.empty());
    const double us = predict_step_us(s, s.steps[0], m);
    CHECK(us > 0);
    for (const auto& st : s.steps) CHECK(predict_step_us(s, st, m) == doctest::Approx(us).epsilon(0.01));  // alike
    step_us.push_back(us);
  }
  CHECK(step_us[0] == doctest::Approx(m.alpha_us).epsilon(0.05));  // 2 ranks on 2 cores: the barrier
  for (std::size_t i = 1; i < step_us.size(); ++i) CHECK(step_us[i] > step_us[i - 1]);
  CHECK(step_us.back() - step_us[0] == doctest::Approx(62 * m.alpha_per_rank_us).epsilon(0.05));
  // Fast mode has no barrier: the same schedules cost the same there with and without the term.
  CostModel none = m;
  none.alpha_per_rank_us = 0;
  const Schedule s64 = allreduce("ring", 64, 64);
  CHECK(predict_auto_us(s64, m) == doctest::Approx(predict_auto_us(s64, none)));
  CHECK(predict_us(s64, m) > predict_us(s64, none));
  // Step by step, a step finds in the cache what the steps before it touched: the ring
  // on 4 MiB per rank in a 32 MiB cache. The steps add up to the whole.
  CostModel cached = m;
  cached.cache_bytes = 32 << 20;
  const Schedule big = allreduce("ring", 4, 1 << 20);
  const auto steps = predict_steps_us(big, cached);
  REQUIRE(steps.size() == big.steps.size());
  double sum = 0;
  for (double us : steps) sum += us;
  CHECK(sum == doctest::Approx(predict_us(big, cached)));
  CHECK(steps.back() < predict_step_us(big, big.steps.back(), cached));
}
