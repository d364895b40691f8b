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
