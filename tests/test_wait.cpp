// How a rank waits (backends/cpu/wait.h): spin, yield, sleep, each stage given a time.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "backends/cpu/plan.h"
#include "backends/cpu/wait.h"

using namespace collscope::cpu;
using Clock = std::chrono::steady_clock;
using Stage = WaitStages::Stage;

namespace {

// Microseconds from `t0` until the wait reaches `stage` or a later one, looking as a
// waiting rank does. (A thread descheduled past a whole stage goes on to the next: a
// loaded machine may never show it the stage in between.)
double us_until(WaitStages& w, Stage stage, Clock::time_point t0) {
  while (w.next() < stage) {
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

}  // namespace

TEST_CASE("wait: each stage lasts its time, in order, and a stage of no time is skipped") {
  WaitStages none(WaitTuning{0, 0});
  CHECK(none.next() == Stage::sleep);

  // Each stage ends once its time since the wait began has passed (the wait's clock
  // starts at its first look at the time, after t0).
  WaitStages yields(WaitTuning{0, 2000});
  auto t0 = Clock::now();
  CHECK(yields.next() == Stage::yield);
  CHECK(us_until(yields, Stage::sleep, t0) >= 1900);
  CHECK(yields.next() == Stage::sleep);  // and stays there

  WaitStages spins(WaitTuning{2000, 1000});
  t0 = Clock::now();
  CHECK(spins.next() == Stage::spin);
  CHECK(us_until(spins, Stage::yield, t0) >= 1900);
  CHECK(us_until(spins, Stage::sleep, t0) >= 2900);
  CHECK(spins.next() == Stage::sleep);

  WaitStages spin_only(WaitTuning{1000, 0});
  t0 = Clock::now();
  CHECK(spin_only.next() == Stage::spin);
  CHECK(us_until(spin_only, Stage::sleep, t0) >= 900);
}

TEST_CASE("wait: a wait returns once the value arrives, from each stage, sleeping included") {
  for (const WaitTuning t : {WaitTuning{500, 20}, WaitTuning{0, 300}, WaitTuning{0, 0}}) {
    Counter c;
    std::thread owner([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // long enough for every stage to pass
      publish(c, 3);
    });
    wait_at_least(c, 3, t);
    CHECK(c.value.load() >= 3);
    owner.join();
    CHECK(c.waiters.load() == 0);
  }
}

TEST_CASE("wait: ranks with a core each spin longer than a virtual machine's wake-up, with shared cores they yield") {
  unsetenv("COLLSCOPE_WAIT");
  const WaitTuning own = wait_tuning(2, 2);
  CHECK(own.spin_us >= 200);  // a halted virtual core takes the host 25 to 100 us to wake
  const WaitTuning shared = wait_tuning(8, 2);
  CHECK(shared.spin_us == 0);
  CHECK(shared.yield_us >= 200);
  setenv("COLLSCOPE_WAIT", "sleep", 1);
  CHECK(wait_tuning(2, 2).spin_us == 0);
  CHECK(wait_tuning(2, 2).yield_us == 0);
  setenv("COLLSCOPE_WAIT", "yield", 1);
  CHECK(wait_tuning(2, 2).spin_us == 0);
  CHECK(wait_tuning(2, 2).yield_us > 0);
  unsetenv("COLLSCOPE_WAIT");
}
