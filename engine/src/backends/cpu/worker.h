// The cpu session's worker loop: one thread per lane (docs/ARCHITECTURE.md, "Backends").
// A lane sleeps until the session publishes a command (Lanes::epoch), runs it and
// reports back (Lanes::done):
//   step: its part of one step (observable mode; the session's watch is the barrier);
//   all:  the whole schedule n times, waiting only for the lanes it depends on (ir/deps.h).
// It executes its plan's ops (plan.h), fires the faults of SessionOptions, keeps its
// flight record (backends/flight.h) and its timings, and says what it is doing in its
// LaneStatus for the watchdog. After an abort every wait returns and it goes back to idle.
#pragma once

#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "backends/cpu/lanes.h"
#include "backends/cpu/plan.h"
#include "backends/flight.h"
#include "collscope/backend.h"

namespace collscope::cpu {

class Workers {
 public:
  Workers(const Schedule& s, const SessionOptions& o, const std::vector<RankPlan>& plans, Lanes& lanes,
          flight::Recorder& recorder, WaitTuning waits);
  ~Workers() { stop(); }

  // Starts one thread per lane. Error: backend.out_of_resources (exit 3) when the system
  // refuses a thread; the threads already started are told to quit and joined.
  Status start();
  // Tells every thread to quit and joins them.
  void stop();

  // Per lane: the transfers' timings since the last take (with SessionOptions::record_events).
  std::vector<TransferTiming> take_events();
  // Per lane: when its last fast-mode run began and ended (session clock, us).
  std::vector<std::pair<double, double>>& window() { return window_; }
  // Lane 0 notes the time after every `every`-th iteration of the next fast-mode runs
  // (iterations counted from `base`, the iterations of the run's earlier rounds); 0 = never.
  void mark_every(std::int32_t every, std::int64_t base, std::int64_t total) {
    mark_every_ = every;
    mark_base_ = base;
    mark_total_ = total;
  }
  std::vector<double>& marks() { return marks_; }

 private:
  void pin_threads();
  void loop(std::int32_t lane);
  bool run_fast(std::int32_t lane, std::int32_t iterations);
  bool arrive(std::int32_t lane, std::int32_t step);
  bool execute(std::int32_t lane, std::int32_t step);
  bool inject_before(std::int32_t lane, std::int32_t rank, std::int32_t step);
  void inject_after(std::int32_t step, const Op& op);
  bool pause_us(double us);
  void block_until_abort(std::int32_t lane, std::int32_t step, LaneState why);
  ReduceOp op_of_step(std::int32_t step) const;

  const Schedule& s_;
  const SessionOptions& opts_;
  const std::vector<RankPlan>& plans_;
  Lanes& lanes_;
  flight::Recorder& recorder_;
  const WaitTuning waits_;
  const std::size_t esize_;
  std::vector<std::vector<TransferTiming>> events_;  // per lane
  std::vector<std::pair<double, double>> window_;    // per lane: start and end of the last run_all
  std::vector<std::thread> threads_;
  std::int32_t mark_every_ = 0;
  std::int64_t mark_base_ = 0, mark_total_ = 0;
  std::vector<double> marks_;  // written by lane 0 alone, read once the run is over
};

}  // namespace collscope::cpu
