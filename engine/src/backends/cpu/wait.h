// Waiting for another rank without burning the machine.
//
// A rank waits until a counter reaches a target, in three stages:
//   1. spin: cheap when every rank has a core of its own, since the value usually
//      arrives within a microsecond;
//   2. yield: hand the core to another runnable thread (sched_yield) and look again;
//      when ranks outnumber cores this lets the rank being waited for run at once,
//      for the price of a context switch instead of a sleep and a wake-up;
//   3. sleep in the kernel on a futex until the counter's owner wakes us, so that a
//      rank with nothing to do for a long time costs nothing.
// When ranks outnumber cores the spin is skipped: it would only steal time from the
// rank being waited for.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
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

inline void wait_at_least(Counter& c, std::uint32_t target, std::uint32_t spins, std::uint32_t yields = 0) {
  for (std::uint32_t i = 0; i < spins; ++i) {
    if (c.value.load(std::memory_order_acquire) >= target) return;
    COLLSCOPE_PAUSE();
  }
  for (std::uint32_t i = 0; i < yields; ++i) {
    if (c.value.load(std::memory_order_acquire) >= target) return;
    sched_yield();
  }
  if (c.value.load(std::memory_order_acquire) >= target) return;
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
