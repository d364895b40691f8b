// What the threads of a cpu session share while it runs: the command the session hands
// out, the counters lanes wait on (wait.h), and what every lane is doing, which the
// watchdog reads (watchdog.h). One Lanes per session.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/blame.h"
#include "backends/cpu/wait.h"
#include "backends/lane_state.h"

namespace collscope::cpu {

enum class Command : std::uint32_t { none, step, all, quit };

// Written by its lane only; read by the watchdog.
struct alignas(64) LaneStatus {
  std::atomic<LaneState> state{LaneState::idle};
  std::atomic<std::int32_t> step{-1};        // the step it is in
  std::atomic<std::int32_t> waiting_on{-1};  // the lane it waits for
  std::atomic<std::uint64_t> beat{0};        // steps it has finished
};

struct Lanes {
  using Clock = std::chrono::steady_clock;

  explicit Lanes(std::int32_t lanes)
      : count(lanes),
        progress(std::make_unique<Counter[]>(static_cast<std::size_t>(lanes))),
        status(std::make_unique<LaneStatus[]>(static_cast<std::size_t>(lanes))) {}

  const std::int32_t count;                 // one per rank, plus one per rank for compute spans
  Clock::time_point origin = Clock::now();  // the session's clock
  Command cmd = Command::none;              // set before epoch is published
  std::int32_t arg = 0;
  Counter epoch;  // one more per command
  Counter done;   // lanes that have reported back, ever
  Counter abort;  // 1 once the run is aborted (hung and crashed lanes sleep on it)
  std::atomic<bool> aborted{false};
  std::atomic<std::uint32_t> crashed{0};  // lanes that crashed
  std::unique_ptr<Counter[]> progress;    // per lane: steps done in this round (fast mode)
  std::unique_ptr<LaneStatus[]> status;   // per lane

  double now_us() const { return std::chrono::duration<double, std::micro>(Clock::now() - origin).count(); }
  bool is_aborted() const { return aborted.load(std::memory_order_relaxed); }

  // Steps finished by all lanes: the watchdog's sign that the run moves.
  std::uint64_t beats() const {
    std::uint64_t n = 0;
    for (std::int32_t l = 0; l < count; ++l)
      n += status[static_cast<std::size_t>(l)].beat.load(std::memory_order_relaxed);
    return n;
  }

  std::vector<LaneSnapshot> snapshot() const {
    std::vector<LaneSnapshot> out;
    for (std::int32_t l = 0; l < count; ++l) {
      const LaneStatus& st = status[static_cast<std::size_t>(l)];
      out.push_back({st.state.load(), st.step.load(), st.waiting_on.load()});
    }
    return out;
  }

  // Every wait returns: the flag first, then the counters' values change and sleepers wake.
  void abort_run() {
    aborted.store(true, std::memory_order_seq_cst);
    publish(abort, 1);
    for (std::int32_t l = 0; l < count; ++l) poison(progress[static_cast<std::size_t>(l)]);
  }
};

}  // namespace collscope::cpu
