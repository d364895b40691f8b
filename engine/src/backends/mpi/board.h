// What the processes of one node share besides their buffers: one slot per lane (its
// progress and where it stands) and one per process (its pid, the node's abort word), in
// an MPI-3 shared window (MPI_Win_allocate_shared), so that a rank waits for a peer on the
// same node exactly as the cpu backend's threads wait for each other (backends/cpu/wait.h):
// spin while every rank has a core, then yield, then sleep on a futex. The futexes are
// process-shared (no FUTEX_PRIVATE_FLAG): the word lives in memory several processes map.
//
// The atomics are lock-free and address-free (static_assert below), which is what makes
// them meaningful in memory mapped by several processes; the window is opened with
// MPI_Win_lock_all so that MPI's unified memory model allows these direct loads and stores.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

#include "backends/lane_state.h"

namespace collscope::mpi {

using collscope::LaneState;  // backends/lane_state.h, shared with the cpu backend

static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free,
              "shared progress counters need lock-free atomics");

// One lane (a rank's communication thread, or its compute thread). `done` counts the
// steps it has completed since the session opened (fast mode; it never goes back, so
// nothing has to be reset between runs); `seq` is the word sleepers wait on.
struct alignas(64) LaneSlot {
  std::atomic<std::uint64_t> done{0};
  std::atomic<std::uint32_t> seq{0};
  std::atomic<std::uint32_t> waiters{0};
  std::atomic<std::uint32_t> state{0};       // LaneState
  std::atomic<std::int32_t> step{-1};        // the step it is in
  std::atomic<std::int32_t> waiting_on{-1};  // the lane it waits for
  std::atomic<std::uint64_t> beat{0};        // steps finished, for the watchdogs
};

// One process. `abort` of the node's first process is the node's abort word: raised by
// whichever watchdog sees a failure first, it releases every wait on the node.
struct alignas(64) ProcSlot {
  std::atomic<std::uint32_t> abort{0};
  std::atomic<std::int32_t> pid{0};
};

inline long futex(std::atomic<std::uint32_t>* addr, int op, std::uint32_t v, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), op, v, ts, nullptr, 0);
}

// Sleeps while *addr == expected, at most `us` microseconds.
inline void sleep_on(std::atomic<std::uint32_t>* addr, std::uint32_t expected, std::int64_t us) {
  if (us <= 0) return;
  const timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  futex(addr, FUTEX_WAIT, expected, &ts);
}
inline void wake_all(std::atomic<std::uint32_t>* addr) { futex(addr, FUTEX_WAKE, INT_MAX, nullptr); }

inline void publish(LaneSlot& l, std::uint64_t done) {
  l.done.store(done, std::memory_order_seq_cst);
  l.seq.fetch_add(1, std::memory_order_seq_cst);
  if (l.waiters.load(std::memory_order_seq_cst) != 0) wake_all(&l.seq);
}

// Releases a sleeper on the lane without changing its progress (an abort).
inline void nudge(LaneSlot& l) {
  l.seq.fetch_add(1, std::memory_order_seq_cst);
  wake_all(&l.seq);
}

}  // namespace collscope::mpi
