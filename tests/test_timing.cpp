// How `collscope bench` times its calls (run.h, time_calls): in batches, the median
// batch's time per call, so that one pause of the machine does not move the result.
#include <doctest/doctest.h>

#include "collscope/run.h"
#include "hand_schedules.h"

using namespace collscope;

namespace {

// A session whose run_all takes a scripted time per call: one batch of the scripted
// ones is slowed by a pause, as a host that takes the core away for a millisecond.
class ScriptedSession : public Session {
 public:
  explicit ScriptedSession(std::vector<double> pause_us) : pause_us_(std::move(pause_us)) {}
  std::vector<std::int32_t> calls;  // the iterations of each run_all, in order
  std::string device_label(std::int32_t) const override { return "cpu"; }
  Status write_buffer(std::int32_t, std::int32_t, const void*, std::uint64_t) override { return ok_status(); }
  Status read_buffer(std::int32_t, std::int32_t, void*, std::uint64_t) override { return ok_status(); }
  Status run_step(std::int32_t) override { return ok_status(); }
  Status run_all(std::int32_t iterations) override {
    if (fail_at_ == static_cast<int>(calls.size())) return make_error("backend.timeout", "scripted", "");
    const std::size_t k = calls.size();
    calls.push_back(iterations);
    last_us_ = 0.5 * iterations + (k < pause_us_.size() ? pause_us_[k] : 0.0);
    return ok_status();
  }
  double last_run_us() const override { return last_us_; }
  std::vector<TransferTiming> take_events() override { return {}; }
  double now_us() const override { return 0; }
  int fail_at_ = -1;

 private:
  std::vector<double> pause_us_;
  double last_us_ = 0;
};

// A session that marks its runs: one run of every call, cut at the marks it gives.
class MarkingSession : public ScriptedSession {
 public:
  MarkingSession(std::vector<double> marks, double start, double us)
      : ScriptedSession({}), marks_(std::move(marks)), start_(start), us_(us) {}
  bool mark_every(std::int32_t every) override {
    every_.push_back(every);
    return true;
  }
  std::vector<double> last_run_marks_us() const override { return marks_; }
  double last_run_start_us() const override { return start_; }
  double last_run_us() const override { return us_; }
  std::vector<std::int32_t> every_;

 private:
  std::vector<double> marks_;
  double start_, us_;
};

}  // namespace

TEST_CASE("timing: a marking backend runs every call at once, cut into batches at its marks") {
  // 100 calls in 4 batches of 25 from t = 1000 us: 25, 25, then a 500 us pause, then 25.
  MarkingSession s({1025, 1050, 1575}, 1000, 600);
  auto t = time_calls(s, 100, 4);
  REQUIRE(t);
  CHECK(s.calls == std::vector<std::int32_t>{100});  // one run, no stop between batches
  CHECK(s.every_ == std::vector<std::int32_t>{25, 0});
  CHECK(t->batches == 4);
  CHECK(t->median_us == doctest::Approx(1.0));
  CHECK(t->mean_us == doctest::Approx(6.0));
  CHECK(t->slowest_us == doctest::Approx(21.0));

  // Marks out of order or outside the run are held inside it; missing ones give the mean.
  MarkingSession wild({900, 1100, 1050}, 1000, 200);
  auto w = time_calls(wild, 40, 4);
  REQUIRE(w);
  CHECK(w->mean_us == doctest::Approx(5.0));
  CHECK(w->batches == 4);
  MarkingSession missing({1025}, 1000, 100);
  auto m = time_calls(missing, 100, 4);
  REQUIRE(m);
  CHECK(m->batches == 1);
  CHECK(m->median_us == doctest::Approx(1.0));
}

TEST_CASE("timing: on the cpu backend the batches cut one run: their mean is the run's") {
  auto s = collscope::testing::two_rank_allreduce(64);
  collscope::testing::add_step(
      s, {collscope::testing::copy(0, 0, 0, 1, 1, 0, 64), collscope::testing::copy(1, 0, 0, 0, 1, 0, 64)});
  collscope::testing::add_step(
      s, {collscope::testing::reduce(0, 1, 0, 0, 0, 0, 64), collscope::testing::reduce(1, 1, 0, 1, 0, 0, 64)});
  auto backend = make_cpu_backend();
  SessionOptions o;
  o.record_events = false;
  auto session = backend->open(s, o);
  REQUIRE(session);
  for (int iters : {1, 7, 200, 1001}) {
    auto t = time_calls(**session, iters);
    REQUIRE(t);
    CHECK(t->batches == std::min(iters, kTimingBatches));
    CHECK(t->mean_us == doctest::Approx((*session)->last_run_us() / iters));
    CHECK(t->median_us > 0);
    CHECK(t->median_us <= t->slowest_us);
  }
}

TEST_CASE("timing: the calls are shared out over the batches, and a pause in one batch does not move the median") {
  // 200 calls of 0.5 us in 10 batches of 20; the fourth batch loses 1 ms to the host.
  ScriptedSession s({0, 0, 0, 1000});
  auto t = time_calls(s, 200);
  REQUIRE(t);
  CHECK(s.calls == std::vector<std::int32_t>(10, 20));
  CHECK(t->batches == 10);
  CHECK(t->median_us == doctest::Approx(0.5));
  CHECK(t->mean_us == doctest::Approx(0.5 + 1000.0 / 200));  // the mean takes the pause: 11x
  CHECK(t->slowest_us == doctest::Approx(0.5 + 1000.0 / 20));

  ScriptedSession uneven({});
  auto u = time_calls(uneven, 23, 3);
  REQUIRE(u);
  CHECK(uneven.calls == std::vector<std::int32_t>{7, 7, 9});
  CHECK(u->median_us == doctest::Approx(0.5));

  // Fewer calls than batches: a batch per call; no calls at all still time one.
  ScriptedSession few({});
  REQUIRE(time_calls(few, 4));
  CHECK(few.calls == std::vector<std::int32_t>(4, 1));
  ScriptedSession none({});
  REQUIRE(time_calls(none, 0));
  CHECK(none.calls == std::vector<std::int32_t>{1});
}

TEST_CASE("timing: a failing batch fails the timing with its error, and later batches do not run") {
  ScriptedSession s({});
  s.fail_at_ = 2;
  auto t = time_calls(s, 100);
  REQUIRE_FALSE(t);
  CHECK(t.error().id == "backend.timeout");
  CHECK(s.calls.size() == 2);
}

TEST_CASE("timing: the median of an even count of batches is the mean of the middle two") {
  const auto t = call_timing({10, 30, 20, 1000}, {10, 10, 10, 10});
  CHECK(t.median_us == doctest::Approx(2.5));
  CHECK(t.mean_us == doctest::Approx(1060.0 / 40));
  CHECK(t.slowest_us == doctest::Approx(100));
  CHECK(call_timing({}, {}).batches == 0);
}

TEST_CASE("timing: a warm-up leads the timed calls in one run on a marking backend, and its batches are left out") {
  // 100 calls in 4 batches of 25 after 30 warm-up calls: the warm-up takes 2 whole
  // batches (50 calls), slow ones; then 25, 25, a 500 us pause, 25.
  MarkingSession s({1100, 1200, 1225, 1250, 1775}, 1000, 800);
  std::vector<double> batch_us;
  std::vector<std::int32_t> calls;
  REQUIRE(time_batches(s, 30, 100, 4, batch_us, calls));
  CHECK(s.calls == std::vector<std::int32_t>{150});  // one run: the ranks never stop between the two
  CHECK(s.every_ == std::vector<std::int32_t>{25, 0});
  CHECK(calls == std::vector<std::int32_t>{25, 25, 25, 25});
  REQUIRE(batch_us.size() == 4);
  CHECK(batch_us[0] == doctest::Approx(25));
  CHECK(batch_us[2] == doctest::Approx(525));
  const CallTiming t = call_timing(batch_us, calls);
  CHECK(t.median_us == doctest::Approx(1.0));
  CHECK(t.mean_us == doctest::Approx(6.0));  // the warm-up's 200 us are not in it

  // Marks missing: the timed calls' mean, from the end of the warm-up where it was seen.
  MarkingSession missing({1100, 1200}, 1000, 800);
  batch_us.clear();
  calls.clear();
  REQUIRE(time_batches(missing, 30, 100, 4, batch_us, calls));
  CHECK(calls == std::vector<std::int32_t>{100});
  CHECK(batch_us == std::vector<double>{600});

  // One batch after a warm-up: still one run, the batch timed from the warm-up's last
  // mark, not from its last rank's start.
  MarkingSession one({1300}, 1000, 500);
  batch_us.clear();
  calls.clear();
  REQUIRE(time_batches(one, 1, 2, 1, batch_us, calls));
  CHECK(one.calls == std::vector<std::int32_t>{4});  // the warm-up rounded up to a whole batch of 2
  CHECK(one.every_ == std::vector<std::int32_t>{2, 0});
  CHECK(calls == std::vector<std::int32_t>{2});
  CHECK(batch_us == std::vector<double>{200});
  // No warm-up and one batch: a plain run.
  MarkingSession bare({}, 1000, 500);
  batch_us.clear();
  calls.clear();
  REQUIRE(time_batches(bare, 0, 2, 1, batch_us, calls));
  CHECK(bare.calls == std::vector<std::int32_t>{2});
  CHECK(bare.every_.empty());
  CHECK(batch_us == std::vector<double>{500});

  // A backend that does not mark runs the warm-up on its own first; no warm-up, no run.
  ScriptedSession plain({});
  batch_us.clear();
  calls.clear();
  REQUIRE(time_batches(plain, 7, 20, 4, batch_us, calls));
  CHECK(plain.calls == std::vector<std::int32_t>{7, 5, 5, 5, 5});
  CHECK(calls == std::vector<std::int32_t>{5, 5, 5, 5});
  ScriptedSession cold({});
  batch_us.clear();
  calls.clear();
  REQUIRE(time_batches(cold, 0, 20, 4, batch_us, calls));
  CHECK(cold.calls == std::vector<std::int32_t>{5, 5, 5, 5});
}

TEST_CASE(
    "timing (property): turns give every measurement all its calls and batches, once a round, in turning orders") {
  for (std::size_t k = 1; k <= 6; ++k)
    for (std::int32_t n : {0, 1, 2, 3, 7, 10, 23, 200, 1000})
      for (std::int32_t w : {0, 1, 2, 5, 100})
        for (std::int32_t b : {1, 2, 4, 10})
          for (std::int32_t r : {1, 2, 3, 5, 8})
            for (std::int32_t least : {kMinTurnCalls, kMinShortTurnCalls}) {
              CAPTURE(k);
              CAPTURE(n);
              CAPTURE(w);
              CAPTURE(b);
              CAPTURE(r);
              CAPTURE(least);
              const auto plan = plan_turns(k, n, w, b, r, least);
              const std::int32_t iters = std::max(1, n), batches = std::clamp(b, 1, iters);
              const std::int32_t expected = std::clamp(std::min(r, iters / least), 1, batches);
              CHECK(plan.size() == static_cast<std::size_t>(expected));
              std::vector<std::int32_t> got_iters(k, 0), got_batches(k, 0), got_warm(k, 0), first(k, 0);
              std::vector<std::size_t> position_sum(k, 0);
              for (const auto& round : plan) {
                REQUIRE(round.size() == k);
                std::vector<int> seen(k, 0);
                for (std::size_t j = 0; j < round.size(); ++j) {
                  const Turn& t = round[j];
                  REQUIRE(t.measurement < k);
                  ++seen[t.measurement];
                  CHECK(t.batches >= 1);
                  CHECK(t.batches <= t.iterations);
                  if (plan.size() > 1) CHECK(t.iterations >= least);  // runs long enough to time
                  got_iters[t.measurement] += t.iterations;
                  got_batches[t.measurement] += t.batches;
                  got_warm[t.measurement] += t.warmup;
                  position_sum[t.measurement] += j;
                  if (j == 0) ++first[t.measurement];
                }
                CHECK(seen == std::vector<int>(k, 1));
              }
              const auto rounds = static_cast<std::int32_t>(plan.size());
              for (std::size_t m = 0; m < k; ++m) {
                CHECK(got_iters[m] == iters);
                CHECK(got_batches[m] == batches);
                CHECK(got_warm[m] >= w);
                CHECK(got_warm[m] < w + rounds);
                if (w == 0) CHECK(got_warm[m] == 0);
                // Nobody goes first every time; over two rounds every one stands, on
                // average, in the middle.
                if (rounds >= 2 && k >= 2) CHECK(first[m] < rounds);
                if (rounds == 2) CHECK(position_sum[m] == k - 1);
              }
            }
}

TEST_CASE("timing: the largest messages take turns of a few calls, the others of kMinTurnCalls") {
  CHECK(min_turn_calls(8) == kMinTurnCalls);
  CHECK(min_turn_calls(16ull << 20) == kMinTurnCalls);
  CHECK(min_turn_calls(kShortTurnBytes - 1) == kMinTurnCalls);
  CHECK(min_turn_calls(kShortTurnBytes) == kMinShortTurnCalls);
  CHECK(min_turn_calls(64ull << 20) == kMinShortTurnCalls);
  CHECK(kMinShortTurnCalls < kMinTurnCalls);
  // 10 calls of 64 MiB: five rounds of two, a warm-up call leading each; of 2 MiB: one run.
  const auto large = plan_turns(3, 10, 5, kTimingBatches, kTurnRounds, min_turn_calls(64ull << 20));
  REQUIRE(large.size() == 5);
  for (const auto& round : large)
    for (const Turn& t : round) {
      CHECK(t.iterations == 2);
      CHECK(t.warmup == 1);
    }
  CHECK(plan_turns(3, 10, 5, kTimingBatches, kTurnRounds, min_turn_calls(2ull << 20)).size() == 1);
}

namespace {

// Sessions on one machine that runs slow for its first `slow_calls` calls (a host
// bringing a core up to speed), whichever session makes them: each call takes 1 us, or
// 2 us while the machine is slow.
struct WarmingMachine {
  std::int32_t slow_calls = 0;
  std::int32_t made = 0;
};
class WarmingSession : public ScriptedSession {
 public:
  explicit WarmingSession(WarmingMachine& m) : ScriptedSession({}), m_(m) {}
  Status run_all(std::int32_t iterations) override {
    last_ = 0;
    for (std::int32_t i = 0; i < iterations; ++i) last_ += m_.made++ < m_.slow_calls ? 2.0 : 1.0;
    return ok_status();
  }
  double last_run_us() const override { return last_; }

 private:
  WarmingMachine& m_;
  double last_ = 0;
};

}  // namespace

TEST_CASE(
    "timing: measurements taken in turns see the same machine, taken one after another, the first pays its warming") {
  // Three sessions running the same calls, 100 each in 10 batches; the machine is slow
  // for the first 120 calls it makes.
  auto measure = [](std::int32_t rounds) {
    WarmingMachine machine{120, 0};
    std::vector<std::unique_ptr<WarmingSession>> sessions;
    for (int i = 0; i < 3; ++i) sessions.push_back(std::make_unique<WarmingSession>(machine));
    std::vector<int> taken(3, 0), given(3, 0);
    auto out = time_in_turns(
        3,
        [&](std::size_t k) -> Result<Session*> {
          ++taken[k];
          return sessions[k].get();
        },
        [&](std::size_t k) { ++given[k]; }, 100, 0, 10, rounds);
    REQUIRE(out);
    CHECK(taken == std::vector<int>(3, rounds));
    CHECK(given == taken);
    std::vector<double> medians;
    for (const auto& t : *out) {
      CHECK(t.batches == 10);
      medians.push_back(t.median_us);
    }
    return medians;
  };
  // One after another: the first one's whole measurement falls in the slow stretch.
  const auto in_a_row = measure(1);
  CHECK(in_a_row[0] == doctest::Approx(2.0));
  CHECK(in_a_row[1] == doctest::Approx(1.0));
  // In turns: a slow batch or two each, and every median the machine's own speed.
  for (double m : measure(kTurnRounds)) CHECK(m == doctest::Approx(1.0));
}

TEST_CASE("timing: a turn that fails stops the turns with its error, its session given back") {
  ScriptedSession ok({}), bad({});
  bad.fail_at_ = 0;
  std::vector<int> given(2, 0);
  auto out = time_in_turns(
      2, [&](std::size_t k) -> Result<Session*> { return k == 0 ? static_cast<Session*>(&ok) : &bad; },
      [&](std::size_t k) { ++given[k]; }, 10, 0);
  REQUIRE_FALSE(out);
  CHECK(out.error().id == "backend.timeout");
  CHECK(given == std::vector<int>{1, 1});
  auto refused = time_in_turns(
      2, [&](std::size_t) -> Result<Session*> { return make_error("backend.unavailable", "no session", ""); },
      [&](std::size_t k) { ++given[k]; }, 10, 0);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().id == "backend.unavailable");
}
