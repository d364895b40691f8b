// The cpu backend: one thread per rank, each owning its buffers (docs/ARCHITECTURE.md, "Backends").
//
// A transfer is executed by its receiver, which reads straight from the sender's
// buffer (one copy, like NCCL's peer-to-peer read). Two ways to run:
//   observable: the main thread hands out one step at a time; every rank runs its
//               part and reports back (a barrier per step);
//   fast:       every rank walks the whole schedule on its own and waits only for
//               the ranks it depends on (ir/deps.h), without any global barrier.
// Compute spans (Action::compute) run on a second thread per rank, its compute lane,
// so that a rank's computation and its communication overlap (ir/deps.h).
//
// Failures never hang the caller. The launching thread is a watchdog while the ranks
// run: when a rank crashes (an injected fault) or no rank finishes a step for
// timeout_s, it names the rank that the others wait for, raises the abort flag and
// poisons every counter a rank may sleep on (wait.h), so that every wait returns at
// once; the ranks go back to idle and the session's threads are joined as usual when
// it closes. Each lane keeps a flight record of its last ops (backends/flight.h).
//
// The parts: plan.h sets up the memory and the per-lane plans, worker.h is the loop
// every lane's thread runs, watchdog.h watches a command until every lane reports back,
// and blame.h is the pure verdict of whom an aborted run waited for. This file holds
// them together behind the Session interface.
#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/blame.h"
#include "backends/cpu/lanes.h"
#include "backends/cpu/plan.h"
#include "backends/cpu/watchdog.h"
#include "backends/cpu/worker.h"
#include "backends/flight.h"
#include "collscope/backend.h"
#include "ir/deps.h"

namespace collscope {
namespace cpu {
namespace {

// The session keeps a reference to the schedule: it must outlive the session.
class CpuSession final : public Session {
 public:
  CpuSession(const Schedule& s, const SessionOptions& o)
      : s_(s), opts_(o), lanes_(dataflow::lane_count(s)), recorder_(s, lanes_.count, o.flight_capacity) {}
  ~CpuSession() override {
    if (workers_) workers_->stop();
  }

  Status start() {
    auto mem = allocate_buffers(s_);
    if (!mem) return mem.error();
    mem_ = std::move(*mem);
    plans_ = build_plans(s_, mem_);
    workers_ = std::make_unique<Workers>(s_, opts_, plans_, lanes_, recorder_, wait_tuning(s_.ranks, opts_.cores));
    return workers_->start();
  }

  std::string device_label(std::int32_t) const override { return "cpu"; }

  Status write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) override {
    if (bytes) std::memcpy(mem_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)].get(), data, bytes);
    return ok_status();
  }
  Status read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) override {
    if (bytes) std::memcpy(data, mem_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)].get(), bytes);
    return ok_status();
  }

  Status run_step(std::int32_t step) override {
    mode_ = "observable";
    return command(Command::step, step);
  }
  Status run_all(std::int32_t iterations) override {
    mode_ = "fast";
    if (failure_) return *failure_;
    // Progress counts steps in 32 bits: a long run goes in rounds of fewer than 2^31
    // steps, each counted from 0. A round ends when every lane has finished it, so no
    // dependency crosses from one round into the next.
    const auto steps = static_cast<std::int64_t>(std::max<std::size_t>(1, s_.steps.size()));
    const std::int64_t per_round = std::max<std::int64_t>(1, (std::int64_t{1} << 31) / steps);
    auto& window = workers_->window();
    std::vector<std::pair<double, double>> first;
    std::int64_t done = 0;
    workers_->marks().clear();
    if (mark_every_ > 0) workers_->marks().reserve(static_cast<std::size_t>(iterations / mark_every_));
    do {
      const auto n = static_cast<std::int32_t>(std::clamp<std::int64_t>(iterations - done, 0, per_round));
      for (std::int32_t l = 0; l < lanes_.count; ++l) lanes_.progress[static_cast<std::size_t>(l)].value.store(0);
      workers_->mark_every(mark_every_, done, iterations);
      if (auto st = command(Command::all, n); !st) return st;
      if (done == 0) first = window;
      done += n;
    } while (done < iterations);
    for (std::size_t l = 0; l < first.size(); ++l) window[l].first = first[l].first;  // the whole run's window
    return ok_status();
  }

  FlightRecord flight_record() const override {
    FlightRecord rec;
    rec.backend = "cpu";
    rec.mode = mode_;
    rec.reason = failure_ ? failure_->format() : "";
    rec.world = s_.ranks;
    rec.steps = static_cast<std::int32_t>(s_.steps.size());
    rec.timeout_s = opts_.timeout_s;
    rec.capacity = std::max(1, opts_.flight_capacity);
    rec.ranks = recorder_.ranks();
    const auto lanes = failure_ ? frozen_ : lanes_.snapshot();
    for (auto& fr : rec.ranks) {
      // A rank's state is its communication lane's; its compute lane only adds a hang or crash.
      const LaneSnapshot& me = lanes[static_cast<std::size_t>(fr.rank)];
      fr.state = name_of(me.state);
      fr.step = me.step;
      fr.waiting_for = me.waiting_on >= 0 ? me.waiting_on % s_.ranks : -1;
      const auto compute = static_cast<std::size_t>(fr.rank + s_.ranks);
      if (compute < lanes.size() &&
          (lanes[compute].state == LaneState::hung || lanes[compute].state == LaneState::crashed)) {
        fr.state = name_of(lanes[compute].state);
        fr.step = lanes[compute].step;
      }
    }
    return rec;
  }

  std::vector<TransferTiming> take_events() override { return workers_->take_events(); }

  double last_run_us() const override {
    double end = 0;
    for (const auto& w : workers_->window()) end = std::max(end, w.second);
    return std::max(0.0, end - last_run_start_us());
  }

  bool mark_every(std::int32_t every) override {
    mark_every_ = std::max(0, every);
    return true;
  }
  std::vector<double> last_run_marks_us() const override { return workers_->marks(); }
  double last_run_start_us() const override {
    double start = 0;
    for (const auto& w : workers_->window()) start = std::max(start, w.first);
    return start;
  }

  double now_us() const override { return lanes_.now_us(); }

 private:
  // Hands a command to every lane and watches it until every lane has reported back.
  Status command(Command c, std::int32_t arg) {
    if (failure_) return *failure_;  // an aborted session runs nothing more
    lanes_.cmd = c;
    lanes_.arg = arg;
    const std::uint32_t target = lanes_.done.value.load() + static_cast<std::uint32_t>(lanes_.count);
    publish(lanes_.epoch, lanes_.epoch.value.load() + 1);
    if (auto aborted = watch(lanes_, target, opts_.timeout_s, s_.ranks, c == Command::all)) keep_failure(*aborted);
    if (failure_) return *failure_;
    return ok_status();
  }

  // The error every later call returns, naming the rank the others wait for.
  void keep_failure(const Abort& a) {
    frozen_ = a.frozen;
    const std::string where = a.blame.conduct == Conduct::nobody
                                  ? std::string()
                                  : flight::position_text(s_, recorder_.ops(), a.blame.rank, a.blame.step);
    const std::string msg = blame_message(a.blame, where, opts_.timeout_s);
    failure_ = a.timed_out
                   ? make_error("backend.timeout", msg,
                                "the run was aborted; a rank that is only slow needs a longer --timeout", {},
                                ExitCode::backend_failure)
                   : make_error("backend.rank_failed", msg, "the run was aborted; the other ranks were released", {},
                                ExitCode::backend_failure);
  }

  const Schedule& s_;
  SessionOptions opts_;
  Lanes lanes_;
  flight::Recorder recorder_;
  RankMemory mem_;
  std::vector<RankPlan> plans_;
  std::unique_ptr<Workers> workers_;  // last: its threads use everything above
  std::optional<Error> failure_;      // the error every call returns after an abort
  std::vector<LaneSnapshot> frozen_;  // the lanes when the run was aborted
  std::string mode_ = "fast";
  std::int32_t mark_every_ = 0;  // run_all: lane 0 notes the time every so many iterations (0 = never)
};

class CpuBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return {"cpu", "one thread per rank, receivers read straight from the sender's memory", true, "",
            BackendCapabilities{{}, true, false, false}};
  }
  Result<std::unique_ptr<Session>> open(const Schedule& s, const SessionOptions& o) const override {
    try {
      auto session = std::make_unique<CpuSession>(s, o);
      if (auto st = session->start(); !st) return st.error();
      return std::unique_ptr<Session>(std::move(session));
    } catch (const std::bad_alloc&) {  // the plans and tables of a huge schedule
      return make_error("backend.out_of_memory", "cpu backend: out of memory while preparing the run",
                        "use fewer ranks or a smaller count", {}, ExitCode::backend_failure);
    }
  }
};

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<cpu::CpuBackend>(); }

}  // namespace collscope
