// The cost model's terms one at a time (collscope/model.h), as properties rather than
// timings: a bigger call never costs less, a step costs something even when nothing
// waits, ranks sharing cores pay for each other's steps, bytes found in the cache
// move at the in-cache bandwidth, repeated calls find the last call's bytes there,
// fast mode pays no observable barrier, and a calibration changes the prediction.
#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/calibration.h"
#include "collscope/collective.h"
#include "collscope/model.h"
#include "collscope/schedule.h"
#include "hand_schedules.h"
#include "model/reuse.h"

using namespace collscope;

namespace {

Schedule world(std::int32_t ranks, std::uint64_t n) { return testing::model_world(ranks, n); }
void step(Schedule& s, std::vector<Transfer> ts) { testing::add_plain_step(s, std::move(ts)); }

// A machine with every term in play: 2 cores, an 8 MiB cache, in-cache bandwidths
// above the from-memory ones, a step's own cost.
CostModel machine() {
  CostModel m;
  m.cores = 2;
  m.cache_bytes = 8 << 20;
  m.beta_gbps = 5;
  m.gamma_gbps = 7;
  m.beta_cache_gbps = 40;
  m.gamma_cache_gbps = 25;
  m.shared_gbps = 14;
  m.wake_us = 0.2;
  m.switch_us = 0.5;
  m.step_us = 0.3;
  m.repeated_calls = true;
  return m;
}

// machine() pricing only the ranks' own work (no shared bandwidth), one call, a 64 MB
// cache with copies at 40 GB/s in it.
CostModel own_work_machine() {
  CostModel m = machine();
  m.shared_gbps = 0;
  m.repeated_calls = false;
  m.cache_bytes = 64e6;
  m.beta_cache_gbps = 40;
  return m;
}

// Two ranks with two float32 buffers of n elements each.
Schedule two_buffers(std::uint64_t n) {
  Schedule w = world(2, n);
  w.dtype = DType::float32;
  w.buffers.push_back(w.buffers[0]);
  return w;
}

Schedule lowered(Collective coll, const std::string& algo, std::int32_t ranks, std::uint64_t count) {
  Schedule s = world(ranks, count * static_cast<std::uint64_t>(ranks));
  s.buffers.push_back({"y", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), count * ranks), false});
  CollArgs a;
  a.coll = coll;
  a.ranks = ranks;
  a.count = count;
  a.in_buf = 0;
  a.out_buf = 1;
  REQUIRE(lower_call(s, a, algo).ok());
  return s;
}

}  // namespace

TEST_CASE("model terms: a bigger call never costs less, for every algorithm of the grid") {
  const CostModel m = machine();
  for (Collective coll : {Collective::allreduce, Collective::broadcast, Collective::allgather,
                          Collective::reduce_scatter, Collective::alltoall})
    for (const auto& algo : algorithm_names(coll))
      for (std::int32_t ranks : {2, 3, 8}) {
        // From an element per rank up (below that an algorithm's steps change shape).
        double last = 0;
        for (std::uint64_t count = 8; count <= (1u << 21); count *= 8) {
          const double us = predict_auto_us(lowered(coll, algo, ranks, count), m);
          CHECK_MESSAGE(us >= last * 0.999, name_of(coll) << " " << algo << " ranks=" << ranks << " count=" << count);
          last = us;
        }
      }
}

TEST_CASE("model terms: a step costs something even when nothing waits, and more when ranks share cores") {
  // Every rank copies within its own memory: no rank ever waits for another.
  auto local = [](std::int32_t ranks, int steps) {
    Schedule s = world(ranks, 2);
    for (int k = 0; k < steps; ++k) {
      std::vector<Transfer> ts;
      for (std::int32_t r = 0; r < ranks; ++r) ts.push_back(Transfer{{r, 0, 0}, {r, 0, 1}, 1, Action::copy, 1});
      step(s, ts);
    }
    return s;
  };
  CostModel m = machine();
  CHECK(predict_sync_us(local(2, 1), m) == doctest::Approx(m.step_us));
  CHECK(predict_sync_us(local(2, 10), m) == doctest::Approx(10 * m.step_us));
  // 8 ranks on 2 cores: four ranks take turns on each core, every step.
  CHECK(predict_sync_us(local(8, 10), m) == doctest::Approx(40 * m.step_us));
  CHECK(predict_sync_us(local(8, 10), m) / 10 > predict_sync_us(local(2, 10), m) / 10);
  m.step_us = 0;
  CHECK(predict_sync_us(local(2, 10), m) == 0);
  // A one-step broadcast of one element is not free.
  CHECK(predict_auto_us(lowered(Collective::broadcast, "flat", 2, 1), machine()) >= machine().step_us);
  // 3 ranks on 2 cores, pinned as the backend pins them: ranks 0 and 1 share the first
  // core, rank 2 has the second. Their steps cost what that core's two lanes make them,
  // not the average of 1.5 lanes a core.
  m = machine();
  CHECK(predict_sync_us(local(3, 10), m) == doctest::Approx(20 * m.step_us));
  // A ring of waits: every hop onto the shared core costs two lanes' turns, the hop onto
  // the lone rank's core one.
  Schedule ring = world(3, 2);
  for (int k = 0; k < 3; ++k) {
    std::vector<Transfer> ts;
    for (std::int32_t r = 0; r < 3; ++r)
      ts.push_back(Transfer{{(r + 2) % 3, 0, static_cast<std::uint64_t>(k % 2)},
                            {r, 0, static_cast<std::uint64_t>((k + 1) % 2)},
                            1,
                            Action::copy,
                            1});
    step(ring, ts);
  }
  m.repeated_calls = false;
  const double sync = predict_sync_us(ring, m);
  CHECK(sync > 3 * (1.5 * m.switch_us + 1.5 * m.step_us));      // more than the cores' average
  CHECK(sync <= 3 * (2 * m.switch_us + 2 * m.step_us) + 1e-9);  // at most the busier core's
  // One hop each way between the cores: onto the shared core it takes that core's two
  // lanes' turns; onto the lone rank's core a wake-up, as a spinning lane's (that rank
  // yields with nothing else to run).
  auto hop = [](std::int32_t from, std::int32_t to) {
    Schedule s = world(3, 2);
    step(s, {Transfer{{from, 0, 0}, {from, 0, 1}, 1, Action::copy, 1}});
    step(s, {Transfer{{from, 0, 1}, {to, 0, 0}, 1, Action::copy, 1}});
    return s;
  };
  m.remote_look_us = 0;
  m.step_us = 0;
  CHECK(predict_sync_us(hop(1, 2), m) == doctest::Approx(m.wake_us));
  CHECK(predict_sync_us(hop(2, 1), m) == doctest::Approx(2 * m.switch_us));
  CHECK(predict_sync_us(hop(0, 1), m) == doctest::Approx(2 * m.switch_us));
}

TEST_CASE(
    "model terms: with ranks beyond the cores, each look at a rank on another core costs its core a line's trip") {
  // Linear all-to-all: every rank waits for every other rank's last call. 8 ranks on 2
  // cores: each rank looks at the 4 on the other core, 16 looks a core; back to back,
  // a call costs every rank its core's 16 looks.
  CostModel m = machine();
  const Schedule a2a = lowered(Collective::alltoall, "linear", 8, 1);
  m.remote_look_us = 0;
  const double without = predict_sync_us(a2a, m);
  m.remote_look_us = 0.1;
  CHECK(predict_sync_us(a2a, m) == doctest::Approx(without + 16 * 0.1));
  // A flat broadcast: the root looks at the 4 receivers on the other core, and those 4
  // look at the root: 4 looks on each core, and as the root and the receivers each wait
  // for the other's last call at once, a call costs one core's 4.
  const Schedule flat = lowered(Collective::broadcast, "flat", 8, 1);
  m.remote_look_us = 0;
  const double flat_without = predict_sync_us(flat, m);
  m.remote_look_us = 0.1;
  CHECK(predict_sync_us(flat, m) == doctest::Approx(flat_without + 4 * 0.1));
  // A core per rank: a wait spins, and the line's trip is part of the wake-up.
  m.cores = 8;
  const double spinning = predict_sync_us(a2a, m);
  m.remote_look_us = 0;
  CHECK(predict_sync_us(a2a, m) == doctest::Approx(spinning));
}

TEST_CASE("model terms: the busiest core carries its ranks' share of a step's work") {
  // Every rank copies 1 MB within its own memory, from memory (no cache), one step.
  CostModel m = machine();
  m.cache_bytes = 0;
  m.shared_gbps = 0;
  m.alpha_us = m.alpha_per_rank_us = 0;
  const std::uint64_t n = 250000;
  auto local = [&](std::int32_t ranks) {
    Schedule s = world(ranks, 2 * n);
    s.dtype = DType::float32;
    std::vector<Transfer> ts;
    for (std::int32_t r = 0; r < ranks; ++r) ts.push_back(Transfer{{r, 0, 0}, {r, 0, n}, n, Action::copy, 1});
    step(s, ts);
    return predict_us(s, m);
  };
  const double one = 1e6 / (m.beta_gbps * 1e3);
  CHECK(local(2) == doctest::Approx(one));      // a core each
  CHECK(local(4) == doctest::Approx(2 * one));  // two a core
  // 3 ranks on 2 cores: two share the first, so it takes two ranks' time, not 1.5.
  CHECK(local(3) == doctest::Approx(2 * one));
  // 5 on 2: three on the first.
  CHECK(local(5) == doctest::Approx(3 * one));
}

TEST_CASE("model terms: bytes found in the cache move at the in-cache bandwidth") {
  CostModel m = machine();
  m.shared_gbps = 0;  // only the ranks' own work
  m.repeated_calls = false;
  const std::uint64_t n = 250000;  // 1 MB of float32
  Schedule s = world(2, n);
  s.dtype = DType::float32;
  step(s, {Transfer{{0, 0, 0}, {1, 0, 0}, n, Action::copy, 1}});  // new bytes: from memory
  step(s, {Transfer{{0, 0, 0}, {1, 0, 0}, n, Action::copy, 1}});  // the same bytes: in the cache
  const double bytes = 4.0 * n;
  const double alpha = 2 * m.alpha_us;
  CHECK(predict_us(s, m) == doctest::Approx(alpha + bytes / (m.beta_gbps * 1e3) + bytes / (m.beta_cache_gbps * 1e3)));
  // Reading back what rank 1 has just written: the bytes sit in rank 1's core, and
  // rank 0 fetches them at about the from-memory rate.
  Schedule back = world(2, n);
  back.dtype = DType::float32;
  step(back, {Transfer{{0, 0, 0}, {1, 0, 0}, n, Action::copy, 1}});
  step(back, {Transfer{{1, 0, 0}, {0, 0, 0}, n, Action::copy, 1}});
  CHECK(predict_us(back, m) > predict_us(s, m));
  CHECK(predict_us(back, m) <= alpha + 2 * bytes / (m.beta_gbps * 1e3) + 1e-9);
  m.beta_cache_gbps = 0;  // unknown: as from memory
  CHECK(predict_us(s, m) == doctest::Approx(alpha + 2 * bytes / (m.beta_gbps * 1e3)));
  m.cache_bytes = 0;  // no cache at all
  m.beta_cache_gbps = 40;
  CHECK(predict_us(s, m) == doctest::Approx(alpha + 2 * bytes / (m.beta_gbps * 1e3)));
}

TEST_CASE("model terms: a reduce-copy in the cache moves at its own rate, a reduce at the reduce's") {
  CostModel m = machine();
  m.shared_gbps = 0;        // only the ranks' own work
  m.repeated_calls = true;  // the second call finds every byte in the cache
  m.cache_bytes = 64e6;
  m.gamma_cache_gbps = 40;
  const std::uint64_t n = 250000;  // 1 MB of float32
  // Rank 1 adds rank 0's buffer 0 to its own buffer 0: in place (reduce), or into its
  // buffer 1 (reduce-copy, buffer 0 the second operand).
  auto one = [&](Action a) {
    Schedule s = world(2, n);
    s.dtype = DType::float32;
    s.buffers.push_back(s.buffers[0]);
    Transfer t{{0, 0, 0}, {1, a == Action::reduce ? 0 : 1, 0}, n, a, 1};
    t.aux = {1, 0, 0};
    step(s, {t});
    return s;
  };
  const double bytes = 4.0 * n;
  const Schedule reduce = one(Action::reduce), reduce_copy = one(Action::reduce_copy);
  m.gamma_copy_cache_gbps = 0;  // not measured: a reduce-copy is priced as a reduce
  CHECK(predict_us(reduce_copy, m) == doctest::Approx(predict_us(reduce, m)));
  CHECK(predict_us(reduce, m) == doctest::Approx(m.alpha_us + bytes / (40 * 1e3)));
  m.gamma_copy_cache_gbps = 25;
  CHECK(predict_us(reduce_copy, m) == doctest::Approx(m.alpha_us + bytes / (25 * 1e3)));
  CHECK(predict_us(reduce, m) == doctest::Approx(m.alpha_us + bytes / (40 * 1e3)));  // unchanged
  // From memory both move at the reduce's rate.
  m.cache_bytes = 0;
  CHECK(predict_us(reduce_copy, m) == doctest::Approx(predict_us(reduce, m)));
}

TEST_CASE("model terms: bytes beyond a core's own cache but in the shared one move at the shared cache's rate") {
  CostModel m = own_work_machine();
  const std::uint64_t n = 250000;  // 1 MB of float32
  // Rank 1 copies rank 1's own bytes twice (buffer 0 into buffer 1): the second time they
  // were touched one step ago, 2 MB of traffic back.
  Schedule s = two_buffers(n);
  step(s, {Transfer{{1, 0, 0}, {1, 1, 0}, n, Action::copy, 1}});
  step(s, {Transfer{{1, 0, 0}, {1, 1, 0}, n, Action::copy, 1}});
  const double bytes = 4.0 * n, alpha = 2 * m.alpha_us;
  const double first = bytes / (m.beta_gbps * 1e3);
  // No core cache known: the second copy at the in-cache rate, as before.
  CHECK(predict_us(s, m) == doctest::Approx(alpha + first + bytes / (40 * 1e3)));
  // A core's cache of 4 MB (8 MB of reach on 2 cores): still within it.
  m.near_cache_bytes = 4e6;
  m.beta_far_gbps = 10;
  CHECK(predict_us(s, m) == doctest::Approx(alpha + first + bytes / (40 * 1e3)));
  // 0.5 MB per core (1 MB of reach): the 2 MB back are beyond it, in the shared cache only.
  m.near_cache_bytes = 0.5e6;
  CHECK(predict_us(s, m) == doctest::Approx(alpha + first + bytes / (10 * 1e3)));
  // 1.5 MB per core (3 MB of reach): hits fade out between half the reach and all of it,
  // so 2 MB back finds two thirds of the bytes in the core's cache.
  m.near_cache_bytes = 1.5e6;
  CHECK(predict_us(s, m) == doctest::Approx(alpha + first + bytes * (2.0 / 3 / 40 + 1.0 / 3 / 10) / 1e3));
  m.near_cache_bytes = 0.5e6;
  // A shared-cache rate not measured: as in the core's own.
  m.beta_far_gbps = 0;
  CHECK(predict_us(s, m) == doctest::Approx(alpha + first + bytes / (40 * 1e3)));
  // Another rank's bytes found in the shared cache (read, not written, by their owner
  // lately) are never in the reader's core: rank 0 reads what rank 1 read a step ago.
  m.beta_far_gbps = 10;
  m.near_cache_bytes = 4e6;
  Schedule other = two_buffers(n);
  step(other, {Transfer{{1, 0, 0}, {1, 1, 0}, n, Action::copy, 1}});
  step(other, {Transfer{{1, 0, 0}, {0, 1, 0}, n, Action::copy, 1}});
  // Half the second copy's bytes are the read (in the shared cache), half the write of
  // a buffer rank 0 never touched (from memory).
  CHECK(predict_us(other, m) == doctest::Approx(alpha + first + bytes * (0.5 / m.beta_gbps + 0.5 / 10) / 1e3));
  m.beta_far_gbps = 0;
  CHECK(predict_us(other, m) == doctest::Approx(alpha + first + bytes * (0.5 / m.beta_gbps + 0.5 / 40) / 1e3));
  // But what the reader's own core read lately, and nobody wrote since, is still there:
  // rank 0 copies rank 1's bytes again (a broadcast's receiver at every call).
  m.beta_far_gbps = 10;
  Schedule again = two_buffers(n);
  step(again, {Transfer{{1, 0, 0}, {0, 1, 0}, n, Action::copy, 1}});
  step(again, {Transfer{{1, 0, 0}, {0, 1, 0}, n, Action::copy, 1}});
  CHECK(predict_us(again, m) == doctest::Approx(alpha + first + bytes / (40 * 1e3)));
}

TEST_CASE("model terms: what another core wrote and still holds in its own cache is read at the memory's rate") {
  CostModel m = own_work_machine();
  const std::uint64_t n = 250000;  // 1 MB of float32
  // Rank 0 (core 0) writes its buffer 1, then rank 1 (core 1) copies it into its own.
  Schedule s = two_buffers(n);
  step(s, {Transfer{{0, 0, 0}, {0, 1, 0}, n, Action::copy, 1}});
  step(s, {Transfer{{0, 1, 0}, {1, 1, 0}, n, Action::copy, 1}});
  const double bytes = 4.0 * n, alpha = 2 * m.alpha_us;
  const double first = bytes / (m.beta_gbps * 1e3);
  // No core cache known: the read (half the second copy's traffic) as from memory, the
  // write of rank 1's untouched buffer from memory too.
  CHECK(predict_us(s, m) == doctest::Approx(alpha + 2 * first));
  // The second copy writes a buffer rank 1's core has in its cache: only the read is
  // another core's, half the traffic at the memory's rate.
  Schedule warm = s;
  warm.steps.insert(warm.steps.begin(), warm.steps[0]);
  warm.steps[0].transfers[0] = Transfer{{1, 0, 0}, {1, 1, 0}, n, Action::copy, 1};
  const double no_core_cache = predict_us(warm, m);
  // With a core cache of 4 MB (8 MB of reach): rank 0's 1 MB is still in core 0's own
  // cache when rank 1 reads it, and the copy runs at the memory's rate throughout.
  m.near_cache_bytes = 4e6;
  m.beta_far_gbps = 10;
  const double in_writer_core = predict_us(warm, m);
  CHECK(in_writer_core - no_core_cache == doctest::Approx(bytes * (0.5 / m.beta_gbps - 0.5 / 40) / 1e3));
  // A core cache too small to hold it (0.25 MB, 0.5 MB of reach: 2 MB of traffic came
  // between): the read is found in the shared cache, the write in rank 1's core.
  m.near_cache_bytes = 0.25e6;
  CHECK(predict_us(warm, m) < in_writer_core);
}

TEST_CASE(
    "model terms: what another core wrote comes from that core while its own cache holds it, from the shared one "
    "after") {
  CostModel m = own_work_machine();
  m.beta_far_gbps = 10;
  const std::uint64_t n = 250000;  // 1 MB of float32
  const double bytes = 4.0 * n;
  // Rank 0 (core 0) writes its buffer 1, with a copy or with a reduce-copy, and then
  // rank 1 (core 1) copies it out; core 0 does nothing more.
  auto written_by = [&](Action a) {
    Schedule s = two_buffers(n);
    Transfer w{{0, 0, 0}, {0, 1, 0}, n, a, 1};
    if (a == Action::reduce_copy) w.aux = {0, 0, 0};
    step(s, {w});
    step(s, {Transfer{{0, 1, 0}, {1, 1, 0}, n, Action::copy, 1}});
    return s;
  };
  const Schedule by_copy = written_by(Action::copy), by_sum = written_by(Action::reduce_copy);
  // An 8 MB own cache holds all of it: the read (half the copy's traffic) at the memory's
  // 5 GB/s, whatever wrote it.
  m.near_cache_bytes = 8e6;
  const double all_theirs = predict_steps_us(by_copy, m)[1];
  CHECK(predict_steps_us(by_sum, m)[1] == doctest::Approx(all_theirs));
  // A 0.25 MB own cache holds only the tail of the write (the copy's 2 MB, the
  // reduce-copy's 3 MB ran over the elements in order: hits fade from 0.125 MB to 0.25);
  // the rest comes from the shared cache at 10 GB/s.
  m.near_cache_bytes = 0.25e6;
  for (const auto& [s, moved] : {std::pair{&by_copy, 2.0}, std::pair{&by_sum, 3.0}}) {
    const double tail = (0.125 + 0.0625) / moved;
    CHECK(all_theirs - predict_steps_us(*s, m)[1] ==
          doctest::Approx(bytes * 0.5 * (1 - tail) * (1 / 5.0 - 1 / 10.0) / 1e3));
  }
}

TEST_CASE("model terms: the cache's clock read further on (a step's own traffic) finds fewer bytes") {
  const std::uint64_t n = 250000;  // 1 MB of float32
  Schedule s = two_buffers(n);
  collscope::model_detail::Reuse r(s, 8e6);  // found for sure within 4 MB, none beyond 16 MB
  r.touch({0, 0, 0}, n);
  r.advance(2e6);
  CHECK(r.missed({0, 0, 0}, n, 4.0) == doctest::Approx(0.0));
  // 12 MB on: a third of the way from 16 MB back to 4 MB, a third found.
  CHECK(r.missed({0, 0, 0}, n, 4.0, 0, 10e6) == doctest::Approx(4.0 * n * 2 / 3));
  CHECK(r.missed({0, 0, 0}, n, 4.0, 0, 20e6) == doctest::Approx(4.0 * n));
}

TEST_CASE("model terms: writing lines another core holds takes each from that core first") {
  CostModel m = own_work_machine();
  const std::uint64_t n = 250000;  // 1 MB of float32
  const double bytes = 4.0 * n;
  // Rank 1 (core 1) copies rank 0's buffer 1, then rank 0 (core 0) overwrites that
  // buffer: core 1 still holds the lines it read. The control: rank 1 copies rank 0's
  // buffer 0 instead, and nobody else holds what rank 0 writes.
  Schedule held = two_buffers(n), control = two_buffers(n);
  step(held, {Transfer{{0, 1, 0}, {1, 1, 0}, n, Action::copy, 1}});
  step(control, {Transfer{{0, 0, 0}, {1, 1, 0}, n, Action::copy, 1}});
  for (Schedule* s : {&held, &control}) step(*s, {Transfer{{0, 0, 0}, {0, 1, 0}, n, Action::copy, 1}});
  m.near_cache_bytes = 4e6;  // 8 MB of reach on 2 cores: core 1 still holds them
  m.beta_far_gbps = 10;
  const double before = predict_steps_us(held, m)[1];
  m.beta_held_gbps = 1;  // a line's trip dominates
  CHECK(predict_steps_us(held, m)[1] == doctest::Approx(m.alpha_us + bytes / 1e3));
  CHECK(predict_steps_us(held, m)[1] > 4 * before);
  CHECK(predict_steps_us(control, m)[1] < predict_steps_us(held, m)[1] / 4);
  // A reduce into them (it reads them too) the same.
  Schedule sum = held;
  sum.steps[1].transfers[0].action = Action::reduce;
  CHECK(predict_steps_us(sum, m)[1] == doctest::Approx(m.alpha_us + bytes / 1e3));
  // Lines still within core 1's first-level cache come at a rate of their own: with a
  // 4 MB first level, the 2 MB core 1 moved in step 0 (and nothing since) are within half
  // of it, all of them.
  m.first_cache_bytes = 4e6;
  m.beta_held_first_gbps = 4;
  CHECK(predict_steps_us(held, m)[1] == doctest::Approx(m.alpha_us + bytes / 4e3));
  CHECK(predict_steps_us(control, m)[1] < predict_steps_us(held, m)[1] / 2);
  // A 0.1 MB first level holds only the tail of core 1's copy: its 2 MB ran over the
  // elements in order, so an element's age is what the copy moved after it (0 to 2 MB);
  // hits fade from 0.05 MB to 0.1 MB, a share of (0.05 + 0.025) / 2 of the elements.
  m.first_cache_bytes = 1e5;
  const double tail = (0.05 + 0.025) / 2;
  CHECK(predict_steps_us(held, m)[1] == doctest::Approx(m.alpha_us + bytes * ((1 - tail) / 1 + tail / 4) / 1e3));
  m.beta_held_first_gbps = 0;
  m.first_cache_bytes = 4e6;  // no rate of its own: as any line core 1 holds
  CHECK(predict_steps_us(held, m)[1] == doctest::Approx(m.alpha_us + bytes / 1e3));
  m.first_cache_bytes = 0;
  // Core 1 moving bytes of its own while rank 0 writes gives the lines up as it goes: with
  // a 2 MB own cache, idle it keeps 3/4 of them (ages 0 to 2 MB, hits fading from 1 MB),
  // copying 1 MB of its own (2 MB moved) at the same time none (every element 2 MB old
  // when its turn comes).
  m.near_cache_bytes = 2e6;
  Schedule busy = held;
  busy.steps[1].transfers.push_back(Transfer{{1, 0, 0}, {1, 1, 0}, n, Action::copy, 1});
  const double idle = predict_steps_us(held, m)[1];  // 3/4 at 1 GB/s, the rest at a copy's rate
  CHECK(idle > m.alpha_us + bytes * 0.75 / 1e3);
  CHECK(idle < m.alpha_us + bytes * 0.75 / 1e3 + 0.25 * bytes / (m.beta_gbps * 1e3));
  const double busy_near = predict_steps_us(busy, m)[1];
  m.beta_held_gbps = 1e-9;  // any held line would now cost a lifetime
  CHECK(predict_steps_us(busy, m)[1] == doctest::Approx(busy_near));
  m.beta_held_gbps = 1;
  // Beyond core 1's own cache, in the last level: core 1 moves 4 MB of its own after its
  // read (two copies of 1 MB), past a 4 MB own cache. Priced only where such lines have a
  // rate of their own.
  m.near_cache_bytes = 4e6;
  Schedule moved_on = held, sum_moved_on = sum;
  for (Schedule* s : {&moved_on, &sum_moved_on})
    for (int i = 0; i < 2; ++i) {
      Step own_copy = s->steps[0];
      own_copy.transfers = {Transfer{{1, 0, 0}, {1, 1, 0}, n, Action::copy, 1}};
      s->steps.insert(s->steps.begin() + 1, own_copy);
    }
  const double beyond = predict_steps_us(moved_on, m)[3];
  CHECK(beyond < 2 * m.alpha_us + bytes / 5e3);
  const double sum_alone = predict_steps_us(sum_moved_on, m)[3];  // no rate for those lines: the sum's own time
  m.beta_held_far_gbps = 2;
  CHECK(predict_steps_us(moved_on, m)[3] == doctest::Approx(m.alpha_us + bytes / 2e3));
  CHECK(predict_steps_us(control, m)[1] < predict_steps_us(moved_on, m)[3] / 3);
  // A sum into them pays their trip on top of its own time: what the copy into them takes
  // beyond a copy in the shared cache (1/2 - 1/10 ns a byte).
  CHECK(predict_steps_us(sum_moved_on, m)[3] == doctest::Approx(sum_alone + bytes * (1 / 2.0 - 1 / 10.0) / 1e3));
  // Rank 0 writing them once takes them from core 1: a second write finds them its own.
  Schedule twice = held;
  twice.steps.push_back(twice.steps[1]);
  CHECK(predict_steps_us(twice, m)[2] < predict_steps_us(twice, m)[1] / 3);
}

TEST_CASE("model terms: with a core per rank, a rank with less to do in a step is not held to the slowest") {
  // A 2-rank pipeline: in step 0 rank 0 copies its whole buffer 0 into its buffer 1 while
  // rank 1 copies the first quarter of rank 0's buffer 0; in steps 1-3 rank 1 copies the
  // other quarters. Rank 1 reads what rank 0 never writes and never waits for it, so in
  // fast mode the two work side by side: the call takes about the longer rank's work,
  // not every step's slowest added up (step 0's whole copy, then three quarters more).
  CostModel m = own_work_machine();
  m.cache_bytes = 0;  // every byte from memory
  const std::uint64_t n = 1 << 20, q = n / 4;
  Schedule s = two_buffers(n);
  step(s, {Transfer{{0, 0, 0}, {0, 1, 0}, n, Action::copy, 1}, Transfer{{0, 0, 0}, {1, 0, 0}, q, Action::copy, 1}});
  for (std::uint64_t j = 1; j < 4; ++j) step(s, {Transfer{{0, 0, j * q}, {1, 0, j * q}, q, Action::copy, 1}});
  CostModel data = m;
  data.alpha_us = 0;
  const std::vector<double> steps = predict_steps_us(s, data);
  const double in_turn = std::accumulate(steps.begin(), steps.end(), 0.0);
  CHECK(steps[0] == doctest::Approx(4 * steps[1]));
  CHECK(predict_auto_us(s, m) < 0.65 * in_turn);
  CHECK(predict_auto_us(s, m) >= steps[0]);
  // The memory serves both ranks' traffic, though: with a slow one the call takes what
  // all of it takes (2n elements copied, each read and written).
  m.shared_gbps = 1;
  CHECK(predict_auto_us(s, m) >= 2 * 2 * 4.0 * n / 1e3);
  // Two ranks on one core take turns: the steps add up again.
  m.shared_gbps = 0;
  m.cores = data.cores = 1;
  const std::vector<double> one_core = predict_steps_us(s, data);
  CHECK(predict_auto_us(s, m) ==
        doctest::Approx(std::accumulate(one_core.begin(), one_core.end(), 0.0) + predict_sync_us(s, m)));
}

TEST_CASE("model terms: in fast mode ranks that never wait for each other reach the cache a core at a time") {
  // 8 ranks on 2 cores, a cache of 8 MB: a pairwise reduce-scatter's ranks only read the
  // others' inputs, so each core runs one rank through all its steps, then the next.
  // Between two steps of a rank the cache sees its own 2 MB and the other core's, not
  // every rank's 16 MB: its sums stay in the cache.
  CostModel m = machine();
  m.cache_bytes = 8e6;
  m.shared_gbps = 0;
  CostModel data = m;  // the data part alone, in step order (observable mode's order)
  data.alpha_us = 0;
  data.alpha_per_rank_us = 0;
  const std::uint64_t count = 1 << 18;  // 1 MiB of float32 a rank
  const Schedule pairwise = lowered(Collective::reduce_scatter, "pairwise", 8, count);
  const double fast = predict_auto_us(pairwise, m) - predict_sync_us(pairwise, m);
  CHECK(fast < 0.8 * predict_us(pairwise, data));
  // With a core per rank every rank runs at once: step order it is.
  m.cores = data.cores = 8;
  CHECK(predict_auto_us(pairwise, m) - predict_sync_us(pairwise, m) == doctest::Approx(predict_us(pairwise, data)));
  // A ring's ranks wait for their neighbours at every step: step order on 2 cores too.
  m.cores = data.cores = 2;
  const Schedule ring = lowered(Collective::reduce_scatter, "ring", 8, count);
  CHECK(predict_auto_us(ring, m) - predict_sync_us(ring, m) == doctest::Approx(predict_us(ring, data)));
}

TEST_CASE(
    "model terms: ranks that wait only for ranks their core runs before them also take the cache a core at a time") {
  // A chain broadcast on 8 ranks, 4 on each of 2 cores: each rank waits for the one
  // before it, and no wait runs back against the order in which each core runs its ranks
  // (0 to 3, 4 to 7). Each core runs one rank through the whole call, then the next,
  // which then finds the chunks it reads a whole turn old: from memory with a cache of
  // 8 MB and 8 MiB a rank, though step order reads each one step after it was written.
  CostModel m = machine();
  m.cache_bytes = 8e6;
  m.shared_gbps = 0;
  CostModel data = m;
  data.alpha_us = 0;
  data.alpha_per_rank_us = 0;
  const std::uint64_t count = 1 << 21;  // 8 MiB of float32
  const Schedule chain = lowered(Collective::broadcast, "chain", 8, count);
  const double fast = predict_auto_us(chain, m) - predict_sync_us(chain, m);
  CHECK(fast > 1.2 * predict_us(chain, data));
  // With a cache that holds everything the order does not matter.
  m.cache_bytes = data.cache_bytes = 1e9;
  CHECK(predict_auto_us(chain, m) - predict_sync_us(chain, m) == doctest::Approx(predict_us(chain, data)));
  // A ring all-reduce's waits run back through the cores (rank 0 waits for what rank 7
  // passes on): step order.
  m.cache_bytes = data.cache_bytes = 8e6;
  const Schedule ring = lowered(Collective::allreduce, "ring", 8, count);
  CHECK(predict_auto_us(ring, m) - predict_sync_us(ring, m) == doctest::Approx(predict_us(ring, data)));
}

TEST_CASE("model terms: ranks reading the same bytes in one step bring them from memory once") {
  CostModel m = machine();
  m.repeated_calls = false;
  m.cache_bytes = 64e6;
  m.shared_gbps = 1.0;             // memory traffic decides
  const std::uint64_t n = 250000;  // 1 MB of float32, never touched before
  // Ranks 1..3 each copy rank 0's buffer in one step (a flat broadcast), or each copy a
  // buffer of its own from rank 0 (three different sources).
  Schedule same = world(4, n), apart = world(4, n);
  for (Schedule* s : {&same, &apart}) {
    s->dtype = DType::float32;
    for (int b = 0; b < 3; ++b) s->buffers.push_back(s->buffers[0]);
  }
  std::vector<Transfer> one_source, three_sources;
  for (std::int32_t r = 1; r < 4; ++r) {
    one_source.push_back(Transfer{{0, 0, 0}, {r, 0, 0}, n, Action::copy, 1});
    three_sources.push_back(Transfer{{0, r, 0}, {r, 0, 0}, n, Action::copy, 1});
  }
  step(same, one_source);
  step(apart, three_sources);
  const double mb = 4.0 * n / 1e3;  // us per MB at 1 GB/s
  // Memory traffic: one read of the shared source and three writes, against three reads
  // and three writes.
  CHECK(predict_us(same, m) == doctest::Approx(m.alpha_us + 4 * mb));
  CHECK(predict_us(apart, m) == doctest::Approx(m.alpha_us + 6 * mb));
  // Without a cache to share them in, every reader brings its own.
  m.cache_bytes = 0;
  CHECK(predict_us(same, m) == doctest::Approx(m.alpha_us + 6 * mb));
  // Ranks 2 and 3 share core 1 and run one after the other: the second finds the source
  // only while what the first moved is within its core's share of the cache (32 MB of 64).
  m.cache_bytes = 64e6;
  for (const std::uint64_t count : {n, 4 * n}) {  // 1 MB, 4 MB: 8 MB moved, well within
    Schedule w = world(4, count);
    w.dtype = DType::float32;
    step(w, {Transfer{{0, 0, 0}, {2, 0, 0}, count, Action::copy, 1},
             Transfer{{0, 0, 0}, {3, 0, 0}, count, Action::copy, 1}});
    const double each = 4.0 * static_cast<double>(count) / 1e3;
    CHECK(predict_us(w, m) == doctest::Approx(m.alpha_us + 3 * each));
  }
  Schedule big = world(4, 10 * n);
  big.dtype = DType::float32;
  step(big, {Transfer{{0, 0, 0}, {2, 0, 0}, 10 * n, Action::copy, 1},
             Transfer{{0, 0, 0}, {3, 0, 0}, 10 * n, Action::copy, 1}});
  CHECK(predict_us(big, m) < m.alpha_us + 4 * 10 * mb);  // 20 MB moved: some of it still there
  m.cache_bytes = 32e6;                                  // 16 MB a core: the first rank's 20 MB pushed the source out
  CHECK(predict_us(big, m) == doctest::Approx(m.alpha_us + 4 * 10 * mb));
}

TEST_CASE("model terms: two cores streaming one buffer at once find of it what their drift leaves") {
  CostModel m = machine();
  m.repeated_calls = false;
  m.shared_gbps = 1.0;             // memory traffic decides
  m.beta_gbps = 1000;              // the ranks' own work is quick
  const std::uint64_t n = 250000;  // 1 MB of float32, never touched before
  // Ranks 0 and 1, one on each core, copy rank 0's second buffer at the same time: 2 MB
  // of traffic each, 4 MB in flight.
  Schedule w = world(2, n);
  w.dtype = DType::float32;
  w.buffers.push_back(w.buffers[0]);
  step(w, {Transfer{{0, 1, 0}, {0, 0, 0}, n, Action::copy, 1}, Transfer{{0, 1, 0}, {1, 0, 0}, n, Action::copy, 1}});
  const double mb = 4.0 * n / 1e3;  // us per MB at 1 GB/s
  // Twice the cache covers what is in flight: the source comes from memory once, and
  // the two writes.
  m.cache_bytes = 8e6;
  CHECK(predict_us(w, m) == doctest::Approx(m.alpha_us + 3 * mb));
  m.cache_bytes = 2e6;  // just covers it
  CHECK(predict_us(w, m) == doctest::Approx(m.alpha_us + 3 * mb));
  // Twice the cache covers half, then a quarter, of the 4 MB: the second core finds that
  // share of the source and brings the rest again.
  m.cache_bytes = 1e6;
  CHECK(predict_us(w, m) == doctest::Approx(m.alpha_us + 3.5 * mb));
  m.cache_bytes = 0.5e6;
  CHECK(predict_us(w, m) == doctest::Approx(m.alpha_us + 3.75 * mb));
}

TEST_CASE("model terms: a reduce's and a reduce-copy's memory traffic move at rates of their own") {
  CostModel m = machine();
  m.repeated_calls = false;
  m.cache_bytes = 0;                  // every byte from memory
  m.beta_gbps = m.gamma_gbps = 1000;  // the ranks' own work is quick: memory decides
  m.shared_gbps = 1.0;                // 1 byte per ns of copy traffic
  const std::uint64_t n = 250000;     // 1 MB of float32
  Schedule w = two_buffers(n);
  w.buffers.push_back(w.buffers[0]);  // a third buffer for the reduce-copy
  Schedule copy = w, sum = w, sum_copy = w;
  step(copy, {Transfer{{0, 0, 0}, {1, 1, 0}, n, Action::copy, 1}});
  step(sum, {Transfer{{0, 0, 0}, {1, 1, 0}, n, Action::reduce, 1}});
  Transfer rc{{0, 0, 0}, {1, 2, 0}, n, Action::reduce_copy, 1};
  rc.aux = {1, 1, 0};
  step(sum_copy, {rc});
  const double mb = 4.0 * n / 1e3;  // us per MB at 1 GB/s
  // Without rates of their own: a copy's traffic is two bytes a byte, the others' three,
  // all at the copy's rate.
  CHECK(predict_us(copy, m) == doctest::Approx(m.alpha_us + 2 * mb));
  CHECK(predict_us(sum, m) == doctest::Approx(m.alpha_us + 3 * mb));
  CHECK(predict_us(sum_copy, m) == doctest::Approx(m.alpha_us + 3 * mb));
  // The memory serving a sum's traffic twice as fast, a reduce-copy's half as fast.
  m.shared_reduce_gbps = 2.0;
  m.shared_reduce_copy_gbps = 0.5;
  CHECK(predict_us(copy, m) == doctest::Approx(m.alpha_us + 2 * mb));
  CHECK(predict_us(sum, m) == doctest::Approx(m.alpha_us + 1.5 * mb));
  CHECK(predict_us(sum_copy, m) == doctest::Approx(m.alpha_us + 6 * mb));
  // With the cache tracked too (what a step finds there is not memory traffic).
  m.cache_bytes = 64e6;
  CHECK(predict_us(sum, m) == doctest::Approx(m.alpha_us + 1.5 * mb));
  CHECK(predict_us(sum_copy, m) == doctest::Approx(m.alpha_us + 6 * mb));

  // A rank's own reduce-copy from memory at its own rate (gamma_copy_gbps), else a reduce's.
  CostModel own = machine();
  own.repeated_calls = false;
  own.cache_bytes = 0;
  own.shared_gbps = 0;
  own.gamma_gbps = 4;
  CHECK(predict_us(sum_copy, own) == doctest::Approx(own.alpha_us + mb / 4));
  own.gamma_copy_gbps = 2;
  CHECK(predict_us(sum_copy, own) == doctest::Approx(own.alpha_us + mb / 2));
  CHECK(predict_us(sum, own) == doctest::Approx(own.alpha_us + mb / 4));
}

TEST_CASE("model terms: calls repeated back to back find the last call's bytes in the cache") {
  CostModel m = machine();
  m.shared_gbps = 0;
  Schedule s = lowered(Collective::allreduce, "ring", 2, 4096);
  m.repeated_calls = false;
  const double first = predict_us(s, m);
  m.repeated_calls = true;
  const double again = predict_us(s, m);
  CHECK(again < first);
  // A call too big for the cache gains nothing from the one before.
  Schedule big = lowered(Collective::allreduce, "ring", 2, 8u << 20);
  m.repeated_calls = false;
  const double big_first = predict_us(big, m);
  m.repeated_calls = true;
  CHECK(predict_us(big, m) == doctest::Approx(big_first).epsilon(0.01));
}

TEST_CASE("model terms: fast mode pays no observable barrier") {
  CostModel m = machine();
  const Schedule s = lowered(Collective::allreduce, "ring", 8, 16);
  const double without = predict_auto_us(s, m);
  m.alpha_us = 13;
  m.alpha_per_rank_us = 2;
  CHECK(predict_auto_us(s, m) == doctest::Approx(without));
  CHECK(predict_us(s, m) > without);  // observable mode does
}

TEST_CASE("model terms: a calibration changes the prediction, term by term") {
  Calibration c;
  c.cores = 2;
  c.cache_bytes = 8 << 20;
  c.copy_gbps = 4;
  c.copy_in_cache_gbps = 30;
  for (std::size_t i = 0; i < kCalibratedDTypes; ++i) c.reduce_gbps[i] = c.reduce_in_cache_gbps[i] = 0;
  c.reduce_gbps[static_cast<std::size_t>(DType::float32)] = 6;
  c.reduce_in_cache_gbps[static_cast<std::size_t>(DType::float32)] = 20;
  c.reduce_copy_in_cache_gbps[static_cast<std::size_t>(DType::float32)] = 12;
  c.shared_gbps = 7;
  c.wake_us = 0.5;
  c.switch_us = 0.8;
  c.step_us = 0.3;
  const CostModel m = c.model(DType::float32);
  CHECK(m.beta_cache_gbps == 30);
  CHECK(m.gamma_cache_gbps == 20);
  CHECK(m.gamma_copy_cache_gbps == 12);
  CHECK(c.model(DType::int8).gamma_copy_cache_gbps == 0);  // not measured for int8 here: as a reduce
  CHECK(m.step_us == doctest::Approx(0.3));
  // The chain's hop was a wake-up and a step: the model keeps them apart.
  CHECK(m.wake_us == doctest::Approx(0.2));
  CHECK(m.switch_us == doctest::Approx(0.5));
  // Every core copying 7 GB/s is 14 GB/s of memory traffic (read and written).
  CHECK(m.shared_gbps == doctest::Approx(14));
  CHECK(m.repeated_calls);
  // The file keeps the step's cost.
  auto back = parse_calibration(to_json(c), "c.json");
  REQUIRE(back.ok());
  CHECK(back->step_us == doctest::Approx(0.3));
  CHECK(back->reduce_copy_in_cache_gbps[static_cast<std::size_t>(DType::float32)] == doctest::Approx(12));
  // The cache as a copy sees it is kept in the file, and the model counts the cache it
  // implies (the properties below, in their own test).
  Calibration seen = c;
  seen.cache_bytes = 32 << 20;
  seen.cache_seen_bytes = 16 << 20;
  auto seen_back = parse_calibration(to_json(seen), "seen.json");
  REQUIRE(seen_back.ok());
  CHECK(seen_back->cache_seen_bytes == doctest::Approx(16 << 20));
  CHECK(seen.model(DType::float32).cache_bytes == doctest::Approx(seen.priced_cache_bytes()));
  CHECK(seen.model(DType::float32).cache_bytes < 32 << 20);
  std::string negative = to_json(seen);
  const auto seen_at = negative.find("\"cache_seen_bytes\": ");
  REQUIRE(seen_at != std::string::npos);
  negative.insert(seen_at + std::string("\"cache_seen_bytes\": ").size(), "-");
  auto refused = parse_calibration(negative, "seen.json");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().id == "calibration.parse");
  CHECK(refused.error().where.pointer == "/cache_seen_bytes");
  // A calibration written before reduce-copies had a rate of their own still reads, and
  // prices them as reduces.
  std::string old = to_json(c);
  const auto at = old.find("\"reduce_copy_in_cache_gbps\"");
  REQUIRE(at != std::string::npos);
  old.erase(at, old.find('}', at) + 2 - at);
  auto before = parse_calibration(old, "old.json");
  REQUIRE_MESSAGE(before.ok(), old);
  CHECK(before->model(DType::float32).gamma_copy_cache_gbps == 0);
  CHECK(before->model(DType::float32).gamma_cache_gbps == 20);
  // Nor the shared cache's rates: one level of cache, as before.
  CHECK(m.near_cache_bytes == 0);
  CHECK(m.beta_far_gbps == 0);
  Calibration two = c;
  two.near_cache_bytes = 1 << 20;
  two.copy_far_cache_gbps = 15;
  two.reduce_far_cache_gbps = 9;
  two.reduce_copy_far_cache_gbps = 30;  // above the core's own reduce-copy: capped at it
  const CostModel t = two.model(DType::float32);
  CHECK(t.near_cache_bytes == 1 << 20);
  CHECK(t.beta_far_gbps == 15);
  CHECK(t.gamma_far_gbps == 9);
  CHECK(t.gamma_copy_far_gbps == 12);
  // A dtype whose reduce is slower in the core's cache than float32's in the shared one keeps its own.
  two.reduce_in_cache_gbps[static_cast<std::size_t>(DType::float16)] = 1.5;
  CHECK(two.model(DType::float16).gamma_far_gbps == doctest::Approx(1.5));
  auto again = parse_calibration(to_json(two), "two.json");
  REQUIRE(again.ok());
  CHECK(again->near_cache_bytes == 1 << 20);
  CHECK(again->copy_far_cache_gbps == 15);
  CHECK(again->reduce_far_cache_gbps == 9);
  CHECK(again->reduce_copy_far_cache_gbps == 30);
  // A look across cores: measured, kept in the file and used; not measured (an older
  // file), the default.
  CHECK(m.remote_look_us == doctest::Approx(CostModel{}.remote_look_us));
  two.remote_look_us = 0.09;
  CHECK(two.model(DType::float32).remote_look_us == doctest::Approx(0.09));
  auto looked = parse_calibration(to_json(two), "two.json");
  REQUIRE(looked.ok());
  CHECK(looked->remote_look_us == doctest::Approx(0.09));

  const Schedule small = lowered(Collective::allreduce, "ring", 2, 2);
  const Schedule large = lowered(Collective::allreduce, "ring", 2, 1 << 22);
  const CostModel d = CostModel::cpu_default();
  CHECK(predict_auto_us(small, m) != doctest::Approx(predict_auto_us(small, d)));
  CHECK(predict_auto_us(large, m) != doctest::Approx(predict_auto_us(large, d)));
  Calibration slower = c;
  slower.copy_gbps = 2;
  slower.reduce_gbps[static_cast<std::size_t>(DType::float32)] = 3;
  CHECK(predict_auto_us(large, slower.model(DType::float32)) > predict_auto_us(large, m));
  Calibration sluggish = c;
  sluggish.step_us = 1.0;
  sluggish.wake_us = 1.5;
  CHECK(predict_auto_us(small, sluggish.model(DType::float32)) > predict_auto_us(small, m));

  // Memory for sums and reduce-copies: measured as bytes written by every core at once
  // (three bytes of traffic a byte), and one thread's reduce-copy from memory; kept in the
  // file; a file without them prices them as before (the copy's rate, a reduce's).
  CHECK(m.shared_reduce_gbps == 0);
  CHECK(m.shared_reduce_copy_gbps == 0);
  CHECK(m.gamma_copy_gbps == 0);
  Calibration sums = c;
  sums.shared_reduce_gbps = 9;
  sums.shared_reduce_copy_gbps = 5;
  sums.reduce_copy_gbps[static_cast<std::size_t>(DType::float32)] = 4.5;
  const CostModel s = sums.model(DType::float32);
  CHECK(s.shared_reduce_gbps == doctest::Approx(27));
  CHECK(s.shared_reduce_copy_gbps == doctest::Approx(15));
  CHECK(s.gamma_copy_gbps == doctest::Approx(4.5));
  CHECK(sums.model(DType::int8).gamma_copy_gbps == 0);
  auto kept = parse_calibration(to_json(sums), "sums.json");
  REQUIRE(kept.ok());
  CHECK(kept->shared_reduce_gbps == doctest::Approx(9));
  CHECK(kept->shared_reduce_copy_gbps == doctest::Approx(5));
  CHECK(kept->reduce_copy_gbps[static_cast<std::size_t>(DType::float32)] == doctest::Approx(4.5));
  CHECK(predict_auto_us(large, s) != doctest::Approx(predict_auto_us(large, m)));

  // Copies into lines another core holds: within its own cache and beyond it; the second
  // only with the first (a calibration without a core cache measures neither).
  CHECK(m.beta_held_gbps == 0);
  Calibration held = c;
  held.held_far_gbps = 20;
  CHECK(held.model(DType::float32).beta_held_far_gbps == 0);
  held.held_gbps = 8;
  CHECK(held.model(DType::float32).beta_held_gbps == doctest::Approx(8));
  CHECK(held.model(DType::float32).beta_held_far_gbps == doctest::Approx(20));
  auto read_back = parse_calibration(to_json(held), "held.json");
  REQUIRE(read_back.ok());
  CHECK(read_back->held_gbps == doctest::Approx(8));
  CHECK(read_back->held_far_gbps == doctest::Approx(20));
  // And within its first-level cache: priced only with that cache's size and the held rate.
  held.held_first_gbps = 30;
  CHECK(held.model(DType::float32).beta_held_first_gbps == 0);
  held.first_cache_bytes = 32768;
  CHECK(held.model(DType::float32).beta_held_first_gbps == doctest::Approx(30));
  CHECK(held.model(DType::float32).first_cache_bytes == doctest::Approx(32768));
  read_back = parse_calibration(to_json(held), "held.json");
  REQUIRE(read_back.ok());
  CHECK(read_back->held_first_gbps == doctest::Approx(30));
  CHECK(read_back->first_cache_bytes == doctest::Approx(32768));
  held.held_gbps = 0;
  CHECK(held.model(DType::float32).beta_held_first_gbps == 0);
}

TEST_CASE("model terms: back to back, a call waits for the ranks still busy with the one before") {
  // Recursive doubling on 2 ranks is one step in which each rank reads the other's
  // input; the next call may overwrite that input only once the other has read it.
  const Schedule s = lowered(Collective::allreduce, "recursive_doubling", 2, 1);
  CostModel m = machine();
  m.repeated_calls = false;
  const double alone = predict_sync_us(s, m);
  CHECK(alone == doctest::Approx(m.step_us));
  m.repeated_calls = true;
  const double repeated = predict_sync_us(s, m);
  CHECK(repeated > alone);
  CHECK(repeated <= m.step_us + m.wake_us + 1e-9);
}

TEST_CASE("model terms: the cache a copy sees is priced as the cache whose fade gives its halfway rate") {
  const double MiB = 1 << 20;
  for (const double kernel : {8 * MiB, 32 * MiB, 256 * MiB})
    for (const double lo : {4.0, 10.0})
      for (const double q : {1.5, 3.6, 8.0})
        for (const bool far : {false, true}) {
          Calibration c;
          c.cache_bytes = kernel;
          c.copy_gbps = lo;
          // The shared cache's rate, where the calibration has one, is the copy's "in the
          // cache" (beyond a core's own cache); otherwise the in-cache rate.
          c.copy_in_cache_gbps = far ? 100 : q * lo;
          if (far) c.copy_far_cache_gbps = q * lo;
          const double hi = q * lo;
          // Nothing seen: the kernel's size.
          CHECK(c.priced_cache_bytes() == doctest::Approx(kernel));
          double before = 0;
          for (const double share : {0.25, 0.4, 0.5, 0.625, 0.8, 1.2, 2.0}) {
            CAPTURE(kernel);
            CAPTURE(q);
            CAPTURE(share);
            c.cache_seen_bytes = share * kernel;
            const double C = c.priced_cache_bytes();
            CHECK(C <= kernel * (1 + 1e-12));
            CHECK(C >= before);  // more seen, no smaller a cache
            before = C;
            CHECK(c.model(DType::float32).cache_bytes == doctest::Approx(C));
            if (C < kernel) {
              // The model's fade at the seen reuse distance (found within C/2, gone after
              // 2C) prices a copy halfway between the two rates.
              const double d = c.cache_seen_bytes;
              REQUIRE(d > C / 2);
              REQUIRE(d < 2 * C);
              const double h = (2 * C - d) / (1.5 * C);
              CHECK(1 / (h / hi + (1 - h) / lo) == doctest::Approx((hi + lo) / 2));
            } else {
              CHECK(C == doctest::Approx(kernel));
            }
          }
          // A rate from memory no slower than the cache's: no step to read, the kernel's size.
          c.copy_gbps = hi;
          CHECK(c.priced_cache_bytes() == doctest::Approx(kernel));
        }
}
