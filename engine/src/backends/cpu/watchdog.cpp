// The cpu session's watchdog (watchdog.h).
#include "backends/cpu/watchdog.h"

#include <algorithm>

namespace collscope::cpu {

// The launching thread sleeps until every lane has reported back: it must not compete
// with the ranks for a core. It wakes a few times per timeout to look at the lanes:
// a crashed rank aborts the run at once, a run in which no lane finished a step for
// timeout_s is aborted too. After an abort it still waits for every lane to report
// back, which they do promptly since every wait returns.
std::optional<Abort> watch(Lanes& lanes, std::uint32_t target, double timeout_s, std::int32_t ranks, bool fast) {
  const double timeout_us = timeout_s > 0 ? timeout_s * 1e6 : 0.0;
  const auto slice_us =
      static_cast<std::int64_t>(timeout_us > 0 ? std::clamp(timeout_us / 20, 1000.0, 50000.0) : 50000.0);
  std::optional<Abort> result;
  auto stop = [&](bool timed_out) {
    Abort a;
    a.timed_out = timed_out;
    a.frozen = lanes.snapshot();
    a.blame = find_blame(a.frozen, ranks, fast);
    result = std::move(a);
    lanes.abort_run();
  };
  std::uint64_t last = lanes.beats();
  double since = lanes.now_us();
  double crash_seen = -1;  // when a crashed rank was first seen
  lanes.done.waiters.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    const std::uint32_t v = lanes.done.value.load(std::memory_order_seq_cst);
    if (v >= target) break;
    if (!lanes.is_aborted()) {
      const std::uint64_t b = lanes.beats();
      const double now = lanes.now_us();
      const bool moved = b != last;
      if (moved) last = b, since = now;
      if (lanes.crashed.load(std::memory_order_acquire) != 0) {
        // Let the others run into the dead rank first (until nothing moves, at most
        // 200 ms), so that the error can say who waits for it.
        if (crash_seen < 0) crash_seen = now;
        if ((!moved && now - crash_seen >= 5000) || now - crash_seen >= 200000) stop(false);
      } else if (timeout_us > 0 && now - since >= timeout_us) {
        stop(true);
      }
    }
    futex_wait_for(&lanes.done.value, v, slice_us);
  }
  lanes.done.waiters.fetch_sub(1, std::memory_order_relaxed);
  return result;
}

}  // namespace collscope::cpu
