// Waiting for another rank without burning the machine.
//
// A rank waits until a counter reaches a target, in three stages, each given a time
// (WaitTuning) rather than a count, since a cpu's pause instruction takes 1 to 40 ns
// depending on the model:
//   1. spin: cheap when every rank has a core of its own, since the value usually
//      arrives within a microsecond;
//   2. yield: hand the core to another runnable thread (sched_yield) and look again;
//      when ranks outnumber cores this lets the rank being waited for run at once,
//      for the price of a context switch instead of a sleep and a wake-up;
//   3. sleep in the kernel on a futex until the counter's owner wakes us, so that a
//      rank with nothing to do for a long time costs nothing.
// When ranks outnumber cores the spin is skipped: it would only steal time from the
// rank being waited for.
//
// Why the first two stages last hundreds of microseconds: on a virtual machine, waking
// a rank whose core went idle in the kernel takes the host 25 to 100 us. A rank that
// gives up waiting sooner than that sleeps, the rank it waited for then waits in turn
// for the sleeper to come back, gives up and sleeps too, and every later exchange pays
// a wake-up: a 2-rank all-reduce of 8 B then took 50 to 180 us a call instead of 0.3,
// in one invocation of five (bench/RESULTS.md, "Small-message latency: waits that
// outlast a wake-up"). Waiting longer than a wake-up takes breaks that cycle at once.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define COLLSCOPE_PAUSE() _mm_pause()
#else
#define COLLSCOPE_PAUSE() ((void)0)
#endif

namespace collscope::cpu {

struct alignas(64) Counter {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> waiters{0};
};

inline void futex_wait(std::atomic<std::uint32_t>* addr, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
// Sleeps until woken or `timeout_us` microseconds have passed (or the value changed).
inline void futex_wait_for(std::atomic<std::uint32_t>* addr, std::uint32_t expected, std::int64_t timeout_us) {
  if (timeout_us <= 0) return;
  timespec ts{static_cast<time_t>(timeout_us / 1000000), static_cast<long>(timeout_us % 1000000) * 1000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAIT_PRIVATE, expected, &ts, nullptr, 0);
}
inline void futex_wake_all(std::atomic<std::uint32_t>* addr) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// How long a waiting rank spins, then yields, before it sleeps.
struct WaitTuning {
  std::uint32_t spin_us = 0;   // spin (the cpu's pause) for up to this long
  std::uint32_t yield_us = 0;  // then hand the core over for up to this long
};

// Which stage a wait is in, by the time since it began. Call next() once per look at
// the value; it reads the clock only every 64 spins.
class WaitStages {
 public:
  enum class Stage : std::uint8_t { spin, yield, sleep };
  explicit WaitStages(const WaitTuning& t) : t_(t) {}
  Stage next() {
    if (stage_ == Stage::spin) {
      // The clock every 64 spins, first after 64: most waits end sooner, without reading it.
      if (t_.spin_us != 0 && (++rounds_ & 63) != 0) return stage_;
      if (t_.spin_us != 0 && elapsed_us() < t_.spin_us) return stage_;
      stage_ = Stage::yield;
    }
    if (stage_ == Stage::yield && elapsed_us() >= std::uint64_t{t_.spin_us} + t_.yield_us) stage_ = Stage::sleep;
    return stage_;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::uint64_t elapsed_us() {
    const auto now = Clock::now();
    if (!started_) {
      start_ = now;
      started_ = true;
    }
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(now - start_).count());
  }
  WaitTuning t_;
  Stage stage_ = Stage::spin;
  std::uint32_t rounds_ = 0;
  bool started_ = false;
  Clock::time_point start_{};
};

inline void wait_at_least(Counter& c, std::uint32_t target, const WaitTuning& t) {
  if (c.value.load(std::memory_order_acquire) >= target) return;
  WaitStages stages(t);
  for (;;) {
    const WaitStages::Stage st = stages.next();
    if (st == WaitStages::Stage::sleep) break;
    if (st == WaitStages::Stage::spin) COLLSCOPE_PAUSE();
    else sched_yield();
    if (c.value.load(std::memory_order_acquire) >= target) return;
  }
  c.waiters.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    const std::uint32_t v = c.value.load(std::memory_order_seq_cst);
    if (v >= target) break;
    futex_wait(&c.value, v);
  }
  c.waiters.fetch_sub(1, std::memory_order_relaxed);
}

inline void publish(Counter& c, std::uint32_t v) {
  c.value.store(v, std::memory_order_seq_cst);
  if (c.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&c.value);
}

// Aborting a run: every counter a rank may be waiting on is set to its largest value
// and its sleepers are woken. Changing the value (not only waking) matters: a rank
// that read the old value just before the abort and is about to sleep on it finds the
// value changed and does not sleep at all. Whoever returns from a wait checks the
// session's abort flag before trusting what it waited for.
inline void poison(Counter& c) {
  c.value.store(UINT32_MAX, std::memory_order_seq_cst);
  futex_wake_all(&c.value);
}

}  // namespace collscope::cpu
