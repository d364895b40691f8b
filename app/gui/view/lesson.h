// A lesson as the window sees it: the scenario, its Schedule and one observable run
// of it (with snapshots). Produced by the worker thread, then only read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collscope/defaults.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/schedule.h"

namespace collscope::view {

struct LessonRun {
  Scenario scenario;
  Schedule schedule;
  RunOutcome outcome;
  std::string backend;                    // the backend that actually ran
  std::string model;                      // what predicted the times ("cpu model", "dgx-h100, assumed")
  double predicted_us = 0;                // cost model, whole schedule; -1: not priced (Prediction::unpriced)
  std::vector<double> predicted_step_us;  // cost model, per step
};

// Where a lesson is priced, and where its node-aware algorithms split the ranks: run's
// --topology, --nodes and --ranks-per-node (machine.h); empty: this machine's cpu model
// (a GPU backend's assumed topology), one node.
struct LessonPlace {
  std::string topology;
  std::int64_t nodes = 0;
  std::int32_t ranks_per_node = 0;
};

// Lowers, verifies and executes a scenario in observable mode (a barrier and a
// snapshot after every step, within `snapshot_budget` bytes). Blocking: call it from
// a worker thread. The scenario's faults are injected; a run whose ranks crash or hang
// fails within `timeout_s` seconds (backend.timeout, backend.rank_failed) instead of
// blocking. Errors are bad input (exit 2) or backend failures (exit 3).
Result<std::shared_ptr<LessonRun>> run_lesson(const Scenario& scenario, const std::string& backend,
                                              std::uint64_t snapshot_budget = kDefaultSnapshotBudget,
                                              double timeout_s = kDefaultTimeoutSeconds, const LessonPlace& place = {});

// The bytes of every buffer after `applied` steps (0 = the inputs). A kept snapshot
// is returned as is; for the others the nearest earlier snapshot is loaded into a
// fresh backend session and the missing steps are executed again, so stepping
// backwards shows exactly the bytes the run produced.
class MemoryTimeline {
 public:
  explicit MemoryTimeline(std::shared_ptr<const LessonRun> run);
  Result<HostMemory> at(std::int32_t applied) const;
  std::int32_t steps() const { return static_cast<std::int32_t>(run_->schedule.steps.size()); }
  // How many steps had to be executed again for the last `at` (0 = a kept snapshot).
  std::int32_t last_replayed() const { return last_replayed_; }

 private:
  std::shared_ptr<const LessonRun> run_;
  mutable std::int32_t last_replayed_ = 0;
};

// What the colours of the canvas count: the program's original inputs, carried across
// calls (a call that starts from another call's output inherits its sets, so after a
// hierarchical all-reduce in three calls every cell is complete), or each call's own
// inputs as they were when the call began (the colours start over at every call).
enum class ColourScope : std::uint8_t { program, call };

// Which ranks' inputs one element holds after `applied` steps, from the symbolic
// checker's contribution sets: of the whole program from its inputs (ColourScope::program,
// the engine's whole-program state), or relative to the start of the call that step
// belongs to (ColourScope::call).
class ContributionCursor {
 public:
  explicit ContributionCursor(const Schedule& s, ColourScope scope = ColourScope::program);
  ~ContributionCursor();
  ContributionCursor(const ContributionCursor&) = delete;
  ContributionCursor& operator=(const ContributionCursor&) = delete;
  // Moves to the state after `applied` steps (forward is incremental, backward restarts the call).
  void seek(std::int32_t applied);
  // Sorted, unique source ranks of element `index` of `buf` on `rank`.
  std::vector<std::int32_t> ranks_of(std::int32_t rank, std::int32_t buf, std::uint64_t index) const;
  // The same set as bits (rank r is bit r % 64 of word r / 64), without a list per rank.
  void bits_of(std::int32_t rank, std::int32_t buf, std::uint64_t index, std::vector<std::uint64_t>& words) const;
  std::int32_t applied() const { return applied_; }
  ColourScope scope() const { return scope_; }

 private:
  struct Impl;
  const Schedule& s_;
  ColourScope scope_;
  std::unique_ptr<Impl> impl_;
  std::int32_t applied_ = -1;
};

// Element `index` of a raw buffer of dtype `t`, as a double.
double element_value(const std::vector<std::uint8_t>& bytes, DType t, std::uint64_t index);

// "42", "3.5", "-1e+09": short enough to fit a cell.
std::string format_value(double v);

}  // namespace collscope::view
