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
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/flight.h"
#include "collscope/backend.h"
#include "ir/deps.h"
#include "kernels/host_kernels.h"
#include "wait.h"

namespace collscope {
namespace cpu {
namespace {

// The dataflow dependencies (ir/deps.h) and the element-wise kernels (kernels/) are
// shared with the other backends, the cost model and the numeric reference.
using dataflow::compute_deps;
using dataflow::Dep;
using dataflow::lane_count;
using dataflow::lane_of;
using kernels::op_kind;
using kernels::reduce_bytes;
using kernels::reduce_copy_bytes;
using kernels::scale_bytes;

struct Op {
  Action action;
  const std::uint8_t* src;
  std::uint8_t* dst;
  const std::uint8_t* aux;  // reduce_copy only
  std::uint64_t count;
  std::uint32_t divisor;
  std::int32_t transfer;
  std::uint32_t duration_us;
};

struct RankPlan {
  std::vector<std::vector<Op>> ops;   // per step
  std::vector<std::vector<Dep>> deps;  // per step
};

struct FreeDeleter {
  void operator()(std::uint8_t* p) const { std::free(p); }
};
using Memory = std::unique_ptr<std::uint8_t, FreeDeleter>;
constexpr std::uint64_t kHugePage = 2u << 20;  // x86-64's large page
constexpr std::uint64_t kHugeFrom = 4u << 20;  // buffers from this size on use them

enum class Command : std::uint32_t { none, step, all, quit };

// What a lane is doing, for the watchdog and the flight record.
enum class LaneState : std::uint32_t { idle, running, waiting, hung, crashed, finished };

const char* name_of(LaneState s) {
  switch (s) {
    case LaneState::idle: return "idle";
    case LaneState::running: return "running";
    case LaneState::waiting: return "waiting";
    case LaneState::hung: return "hung";
    case LaneState::crashed: return "crashed";
    case LaneState::finished: return "finished";
  }
  return "idle";
}

// Written by its lane only; read by the watchdog.
struct alignas(64) LaneStatus {
  std::atomic<LaneState> state{LaneState::idle};
  std::atomic<std::int32_t> step{-1};        // the step it is in
  std::atomic<std::int32_t> waiting_on{-1};  // the lane it waits for
  std::atomic<std::uint64_t> beat{0};        // steps it has finished
};

struct LaneSnapshot {
  LaneState state;
  std::int32_t step, waiting_on;
};

// The session keeps a reference to the schedule: it must outlive the session.
class CpuSession final : public Session {
 public:
  CpuSession(const Schedule& s, const SessionOptions& o)
      : s_(s), opts_(o), origin_(Clock::now()), recorder_(s, lane_count(s), o.flight_capacity) {}
  ~CpuSession() override { stop(); }

  Status start() {
    const auto R = static_cast<std::size_t>(s_.ranks);
    lanes_ = lane_count(s_);
    const auto L = static_cast<std::size_t>(lanes_);
    const int cores = opts_.cores > 0 ? opts_.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // Spin only when every rank can have a core (the launching thread sleeps while
    // the ranks run); otherwise a spinning rank steals the core of the rank it waits for.
    const bool own_core = s_.ranks <= cores;
    spins_ = own_core ? 2000u : 0u;
    yields_ = own_core ? 16u : 64u;
    // COLLSCOPE_WAIT=spin|yield|sleep forces one strategy, to measure them (bench/RESULTS.md).
    if (const char* w = std::getenv("COLLSCOPE_WAIT")) {
      const std::string how(w);
      if (how == "spin") spins_ = 2000u, yields_ = 0u;
      if (how == "yield") spins_ = 0u, yields_ = 64u;
      if (how == "sleep") spins_ = 0u, yields_ = 0u;
    }
    esize_ = size_of(s_.dtype);
    mem_.resize(R);
    for (std::size_t r = 0; r < R; ++r)
      for (const auto& b : s_.buffers) {
        const std::uint64_t bytes = b.count[r] * esize_;
        Memory m;
        if (bytes) {
          // Large buffers on 2 MiB pages where the kernel has them (transparent huge
          // pages): a 1 MiB slice then costs one TLB entry instead of 256.
          const std::uint64_t align = bytes >= kHugeFrom ? kHugePage : 64;
          const std::uint64_t rounded = (bytes + align - 1) / align * align;
          m.reset(static_cast<std::uint8_t*>(std::aligned_alloc(align, rounded)));
          if (m && align == kHugePage && !getenv("COLLSCOPE_NO_HUGE")) madvise(m.get(), rounded, MADV_HUGEPAGE);
          if (!m)
            return make_error("backend.out_of_memory",
                              "cpu backend: cannot allocate " + std::to_string(bytes) + " bytes for rank " +
                                  std::to_string(r) + "'s " + b.name,
                              "use fewer ranks or a smaller count", {}, ExitCode::backend_failure);
          std::memset(m.get(), 0, rounded);
        }
        mem_[r].push_back(std::move(m));
      }
    // Per-rank plans.
    auto deps = compute_deps(s_);
    plans_.resize(L);
    for (std::size_t r = 0; r < L; ++r) {
      plans_[r].ops.resize(s_.steps.size());
      plans_[r].deps = std::move(deps[r]);
    }
    for (std::size_t k = 0; k < s_.steps.size(); ++k) {
      const auto& st = s_.steps[k];
      for (std::size_t t = 0; t < st.transfers.size(); ++t) {
        const auto& x = st.transfers[t];
        // A signal (count 0) moves nothing; it is kept as an op so that it is timed.
        const bool data = x.count && x.action != Action::compute;
        Op op{x.action,     data ? ptr(x.src) : nullptr, data ? ptr(x.dst) : nullptr,
              data && x.action == Action::reduce_copy ? ptr(x.aux) : nullptr,
              x.count,      x.divisor, static_cast<std::int32_t>(t), x.duration_us};
        plans_[static_cast<std::size_t>(lane_of(s_, x))].ops[k].push_back(op);
      }
    }
    progress_ = std::make_unique<Counter[]>(L);
    status_ = std::make_unique<LaneStatus[]>(L);
    window_.assign(L, {0.0, 0.0});
    events_.resize(L);
    threads_.reserve(L);
    // Thread creation fails under a thread or address-space limit (containers, ulimit):
    // an error, exit 3, with every thread already started told to quit and joined.
    try {
      for (std::size_t r = 0; r < L; ++r) threads_.emplace_back([this, r] { worker(static_cast<std::int32_t>(r)); });
    } catch (const std::exception& e) {
      const std::size_t started = threads_.size();
      stop();
      return make_error("backend.out_of_resources",
                        "cpu backend: cannot start thread " + std::to_string(started + 1) + " of " +
                            std::to_string(L) + " (" + e.what() + ")",
                        "the system limits threads or address space (ulimit -u / -v, a container's pids limit): use "
                        "fewer ranks or raise the limit",
                        {}, ExitCode::backend_failure);
    }
    return ok_status();
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
    std::vector<std::pair<double, double>> first;
    std::int64_t done = 0;
    do {
      const auto n = static_cast<std::int32_t>(std::clamp<std::int64_t>(iterations - done, 0, per_round));
      for (std::size_t r = 0; r < static_cast<std::size_t>(lanes_); ++r) progress_[r].value.store(0);
      if (auto st = command(Command::all, n); !st) return st;
      if (done == 0) first = window_;
      done += n;
    } while (done < iterations);
    for (std::size_t l = 0; l < first.size(); ++l) window_[l].first = first[l].first;  // the whole run's window
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
    const auto lanes = failure_ ? frozen_ : snapshot();
    for (auto& fr : rec.ranks) {
      // A rank's state is its communication lane's; its compute lane only adds a hang or crash.
      const LaneSnapshot& me = lanes[static_cast<std::size_t>(fr.rank)];
      fr.state = name_of(me.state);
      fr.step = me.step;
      fr.waiting_for = me.waiting_on >= 0 ? me.waiting_on % s_.ranks : -1;
      const auto compute = static_cast<std::size_t>(fr.rank + s_.ranks);
      if (compute < lanes.size() && (lanes[compute].state == LaneState::hung || lanes[compute].state == LaneState::crashed)) {
        fr.state = name_of(lanes[compute].state);
        fr.step = lanes[compute].step;
      }
    }
    return rec;
  }

  std::vector<TransferTiming> take_events() override {
    std::vector<TransferTiming> all;
    for (auto& e : events_) {
      all.insert(all.end(), e.begin(), e.end());
      e.clear();
    }
    return all;
  }

  double last_run_us() const override {
    double start = 0, end = 0;
    for (const auto& w : window_) start = std::max(start, w.first), end = std::max(end, w.second);
    return std::max(0.0, end - start);
  }

  double now_us() const override { return std::chrono::duration<double, std::micro>(Clock::now() - origin_).count(); }

 private:
  using Clock = std::chrono::steady_clock;

  std::uint8_t* ptr(const Loc& l) const {
    return mem_[static_cast<std::size_t>(l.rank)][static_cast<std::size_t>(l.buf)].get() + l.offset * esize_;
  }

  Status command(Command c, std::int32_t arg) {
    if (failure_) return *failure_;  // an aborted session runs nothing more
    cmd_ = c;
    arg_ = arg;
    const std::uint32_t target = done_.value.load() + static_cast<std::uint32_t>(lanes_);
    publish(epoch_, epoch_.value.load() + 1);
    watch(target);
    if (failure_) return *failure_;
    return ok_status();
  }

  // --- the watchdog ------------------------------------------------------------------

  // The launching thread sleeps until every lane has reported back: it must not compete
  // with the ranks for a core. It wakes a few times per timeout to look at the lanes:
  // a crashed rank aborts the run at once, a run in which no lane finished a step for
  // timeout_s is aborted too. After an abort it still waits for every lane to report
  // back, which they do promptly since every wait returns.
  void watch(std::uint32_t target) {
    const double timeout_us = opts_.timeout_s > 0 ? opts_.timeout_s * 1e6 : 0.0;
    const auto slice_us = static_cast<std::int64_t>(timeout_us > 0 ? std::clamp(timeout_us / 20, 1000.0, 50000.0) : 50000.0);
    std::uint64_t last = beats();
    double since = now_us();
    double crash_seen = -1;  // when a crashed rank was first seen
    done_.waiters.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
      const std::uint32_t v = done_.value.load(std::memory_order_seq_cst);
      if (v >= target) break;
      if (!aborted_.load(std::memory_order_relaxed)) {
        const std::uint64_t b = beats();
        const double now = now_us();
        const bool moved = b != last;
        if (moved) last = b, since = now;
        if (crashed_.load(std::memory_order_acquire) != 0) {
          // Let the others run into the dead rank first (until nothing moves, at most
          // 200 ms), so that the error can say who waits for it.
          if (crash_seen < 0) crash_seen = now;
          if ((!moved && now - crash_seen >= 5000) || now - crash_seen >= 200000) fail(false);
        } else if (timeout_us > 0 && now - since >= timeout_us) {
          fail(true);
        }
      }
      futex_wait_for(&done_.value, v, slice_us);
    }
    done_.waiters.fetch_sub(1, std::memory_order_relaxed);
  }

  std::uint64_t beats() const {
    std::uint64_t n = 0;
    for (std::int32_t l = 0; l < lanes_; ++l) n += status_[static_cast<std::size_t>(l)].beat.load(std::memory_order_relaxed);
    return n;
  }

  std::vector<LaneSnapshot> snapshot() const {
    std::vector<LaneSnapshot> out;
    for (std::int32_t l = 0; l < lanes_; ++l) {
      const LaneStatus& st = status_[static_cast<std::size_t>(l)];
      out.push_back({st.state.load(), st.step.load(), st.waiting_on.load()});
    }
    return out;
  }

  // Names the rank the others wait for, keeps the error, and aborts the run.
  void fail(bool timed_out) {
    frozen_ = snapshot();
    const auto& lanes = frozen_;
    const auto L = static_cast<std::int32_t>(lanes.size());
    const bool fast = cmd_ == Command::all;
    auto blocked = [&](const LaneSnapshot& x) { return x.state != LaneState::idle && x.state != LaneState::finished; };
    // Who is to blame: the lane at the end of the wait-for chains (fast mode), a crashed
    // or hung lane, or a lane that has not finished the step (observable mode).
    std::vector<std::int32_t> end_of(static_cast<std::size_t>(L), -1);
    for (std::int32_t l = 0; l < L; ++l) {
      std::int32_t x = l;
      for (std::int32_t hops = 0; hops <= L && lanes[static_cast<std::size_t>(x)].state == LaneState::waiting &&
                                  lanes[static_cast<std::size_t>(x)].waiting_on >= 0;
           ++hops)
        x = lanes[static_cast<std::size_t>(x)].waiting_on;
      end_of[static_cast<std::size_t>(l)] = x;
    }
    std::int32_t culprit = -1;
    for (const LaneState want : {LaneState::crashed, LaneState::hung})
      for (std::int32_t l = 0; l < L && culprit < 0; ++l)
        if (lanes[static_cast<std::size_t>(l)].state == want) culprit = l;
    if (culprit < 0 && fast) {
      std::vector<std::int32_t> votes(static_cast<std::size_t>(L), 0);
      for (std::int32_t l = 0; l < L; ++l)
        if (lanes[static_cast<std::size_t>(l)].state == LaneState::waiting) ++votes[static_cast<std::size_t>(end_of[static_cast<std::size_t>(l)])];
      const auto most = std::max_element(votes.begin(), votes.end());
      if (*most > 0) culprit = static_cast<std::int32_t>(most - votes.begin());
    }
    for (std::int32_t l = 0; l < L && culprit < 0; ++l)
      if (blocked(lanes[static_cast<std::size_t>(l)]) && lanes[static_cast<std::size_t>(l)].state != LaneState::waiting) culprit = l;

    std::string msg;
    const std::string secs = seconds_text(opts_.timeout_s);
    if (culprit < 0) {
      msg = "no rank finished a step within " + secs;
    } else {
      const std::int32_t rank = culprit % s_.ranks;
      const LaneSnapshot& c = lanes[static_cast<std::size_t>(culprit)];
      std::vector<std::int32_t> waiting;
      for (std::int32_t l = 0; l < L; ++l) {
        const std::int32_t r = l % s_.ranks;
        if (r == rank || std::find(waiting.begin(), waiting.end(), r) != waiting.end()) continue;
        const LaneSnapshot& x = lanes[static_cast<std::size_t>(l)];
        // Observable mode: the others wait at the step's barrier. Fast mode: those whose
        // wait-for chain ends at the culprit.
        const bool waits = fast ? x.state == LaneState::waiting && end_of[static_cast<std::size_t>(l)] % s_.ranks == rank
                                : x.state == LaneState::idle;
        if (waits) waiting.push_back(r);
      }
      std::sort(waiting.begin(), waiting.end());
      const std::string where = flight::position_text(s_, recorder_.ops(), rank, std::max(0, c.step));
      const std::string tail = waiting.empty() ? "" : "; " + flight::ranks_text(waiting) + (waiting.size() == 1 ? " is" : " are") + " waiting for it";
      if (c.state == LaneState::crashed)
        msg = "rank " + std::to_string(rank) + " crashed at " + where + tail;
      else if (c.state == LaneState::running)
        msg = "rank " + std::to_string(rank) + " did not finish " + where + " within " + secs + tail;
      else
        msg = "rank " + std::to_string(rank) + " did not arrive at " + where + " within " + secs + tail;
    }
    failure_ = timed_out ? make_error("backend.timeout", msg,
                                      "the run was aborted; a rank that is only slow needs a longer --timeout",
                                      {}, ExitCode::backend_failure)
                         : make_error("backend.rank_failed", msg, "the run was aborted; the other ranks were released",
                                      {}, ExitCode::backend_failure);
    abort_run();
  }

  static std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g s", s);
    return buf;
  }

  // Every wait returns: the flag first, then the counters' values change and sleepers wake.
  void abort_run() {
    aborted_.store(true, std::memory_order_seq_cst);
    publish(abort_, 1);
    for (std::int32_t l = 0; l < lanes_; ++l) poison(progress_[static_cast<std::size_t>(l)]);
  }

  bool aborted() const { return aborted_.load(std::memory_order_relaxed); }

  // Sleeps `us` microseconds unless the run is aborted first (false then). A delay
  // fault or a compute span sleeps here, so the abort must wake it: it counts itself
  // among abort_'s waiters (publish() wakes only when there are some), and it sleeps
  // only while abort_ still reads 0 (so an abort just before the sleep is not missed).
  bool pause_us(double us) {
    const double until = now_us() + us;
    abort_.waiters.fetch_add(1, std::memory_order_seq_cst);
    bool finished = false;
    for (;;) {
      if (aborted() || abort_.value.load(std::memory_order_seq_cst) != 0) break;
      const double left = until - now_us();
      if (left <= 0) {
        finished = true;
        break;
      }
      futex_wait_for(&abort_.value, 0, static_cast<std::int64_t>(left) + 1);
    }
    abort_.waiters.fetch_sub(1, std::memory_order_relaxed);
    return finished;
  }

  // A hung or crashed lane does nothing until the run is aborted.
  void block_until_abort(std::int32_t lane, std::int32_t step, LaneState why) {
    LaneStatus& me = status_[static_cast<std::size_t>(lane)];
    me.step.store(step, std::memory_order_relaxed);
    me.state.store(why, std::memory_order_seq_cst);
    if (why == LaneState::crashed) {
      crashed_.fetch_add(1, std::memory_order_release);
      futex_wake_all(&done_.value);  // the watchdog looks at once
    }
    wait_at_least(abort_, 1, 0);
  }

  void stop() {
    if (threads_.empty()) return;
    cmd_ = Command::quit;
    publish(epoch_, epoch_.value.load() + 1);
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  // The lane arrives at a step: the ops that start there are scheduled, the faults of
  // the step fire (a straggler arrives late, a hung or crashed rank never does), then
  // the ops are started (they may still wait for their peers' data). False when the
  // run was aborted (or this rank died).
  bool arrive(std::int32_t lane, std::int32_t step) {
    LaneStatus& me = status_[static_cast<std::size_t>(lane)];
    me.step.store(step, std::memory_order_relaxed);
    me.state.store(LaneState::running, std::memory_order_relaxed);
    recorder_.reach(lane, step, now_us());
    if (!opts_.faults.empty() && lane < s_.ranks && !inject_before(lane, lane % s_.ranks, step)) return false;
    recorder_.begin(lane, step, now_us());
    return true;
  }

  // The lane's part of one step; false when the run was aborted.
  bool execute(std::int32_t lane, std::int32_t step) {
    const std::int32_t rank = lane % s_.ranks;
    LaneStatus& me = status_[static_cast<std::size_t>(lane)];
    me.step.store(step, std::memory_order_relaxed);
    me.state.store(LaneState::running, std::memory_order_relaxed);
    const auto& ops = plans_[static_cast<std::size_t>(lane)].ops[static_cast<std::size_t>(step)];
    for (const Op& op : ops) {
      const double t0 = opts_.record_events ? now_us() : 0.0;
      switch (op.action) {
        case Action::copy:
          if (op.count) std::memcpy(op.dst, op.src, op.count * esize_);
          break;
        case Action::reduce: reduce_bytes(s_.dtype, op_kind(op_of_step(step)), op.dst, op.src, op.count); break;
        case Action::reduce_copy:
          reduce_copy_bytes(s_.dtype, op_kind(op_of_step(step)), op.dst, op.aux, op.src, op.count);
          break;
        case Action::scale: scale_bytes(s_.dtype, op.dst, op.count, op.divisor); break;
        case Action::compute:
          if (!pause_us(op.duration_us)) return false;
          break;
      }
      if (!opts_.faults.empty()) inject_after(step, op);
      if (opts_.record_events)
        events_[static_cast<std::size_t>(lane)].push_back({step, op.transfer, rank, t0, now_us()});
    }
    recorder_.end(lane, step, now_us());
    me.beat.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  // Faults: a delayed rank sleeps before its part of the step; a hung rank blocks there
  // and a crashed one stops there, both until the run is aborted; a corrupting rank's
  // outgoing data arrives with one bit flipped.
  bool inject_before(std::int32_t lane, std::int32_t rank, std::int32_t step) {
    for (const Fault& f : opts_.faults) {
      if (f.rank != rank || f.step != step) continue;
      switch (f.kind) {
        case Fault::Kind::delay:
          if (!pause_us(f.ms * 1000.0)) return false;
          break;
        case Fault::Kind::hang: block_until_abort(lane, step, LaneState::hung); return false;
        case Fault::Kind::crash: block_until_abort(lane, step, LaneState::crashed); return false;
        case Fault::Kind::corrupt: break;
      }
    }
    return true;
  }
  void inject_after(std::int32_t step, const Op& op) {
    const auto& t = s_.steps[static_cast<std::size_t>(step)].transfers[static_cast<std::size_t>(op.transfer)];
    for (const Fault& f : opts_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == step && t.src.rank == f.rank && t.dst.rank != f.rank && t.count)
        // The first element's second-highest bit: the top exponent bit of a floating
        // type (0 becomes 2, 1 becomes infinity, 3 nearly 0), a high bit of an integer,
        // so that no later addition or rounding hides the damage.
        op.dst[esize_ - 1] ^= 0x40;
  }

  ReduceOp op_of_step(std::int32_t step) const {
    return s_.calls[static_cast<std::size_t>(s_.steps[static_cast<std::size_t>(step)].call)].args.op;
  }

  bool run_fast(std::int32_t lane, std::int32_t iterations) {
    const auto S = static_cast<std::int32_t>(s_.steps.size());
    const auto& plan = plans_[static_cast<std::size_t>(lane)];
    Counter& mine = progress_[static_cast<std::size_t>(lane)];
    LaneStatus& me = status_[static_cast<std::size_t>(lane)];
    for (std::int32_t it = 0; it < iterations; ++it) {
      const std::int64_t base = static_cast<std::int64_t>(it) * S;
      for (std::int32_t k = 0; k < S; ++k) {
        if (aborted() || !arrive(lane, k)) return false;
        for (const Dep& d : plan.deps[static_cast<std::size_t>(k)]) {
          const std::int64_t need = base + d.step + 1;
          if (need <= 0) continue;
          Counter& other = progress_[static_cast<std::size_t>(d.rank)];
          if (other.value.load(std::memory_order_acquire) >= static_cast<std::uint32_t>(need)) continue;
          me.step.store(k, std::memory_order_relaxed);
          me.waiting_on.store(d.rank, std::memory_order_relaxed);
          me.state.store(LaneState::waiting, std::memory_order_relaxed);
          wait_at_least(other, static_cast<std::uint32_t>(need), spins_, yields_);
          if (aborted()) return false;  // woken by the abort, not by the data
        }
        me.waiting_on.store(-1, std::memory_order_relaxed);
        if (!execute(lane, k)) return false;
        publish(mine, static_cast<std::uint32_t>(base + k + 1));
      }
    }
    return true;
  }

  void worker(std::int32_t lane) {
    std::uint32_t seen = 0;
    for (;;) {
      wait_at_least(epoch_, seen + 1, spins_);
      seen = epoch_.value.load(std::memory_order_acquire);
      const Command c = cmd_;
      if (c == Command::quit) return;
      LaneStatus& me = status_[static_cast<std::size_t>(lane)];
      if (c == Command::step && !aborted()) {
        if (arrive(lane, arg_) && execute(lane, arg_)) me.state.store(LaneState::idle, std::memory_order_relaxed);
      }
      if (c == Command::all && !aborted()) {
        const double t0 = now_us();
        if (run_fast(lane, arg_)) me.state.store(LaneState::finished, std::memory_order_relaxed);
        window_[static_cast<std::size_t>(lane)] = {t0, now_us()};
      }
      done_.value.fetch_add(1, std::memory_order_seq_cst);
      if (done_.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&done_.value);
    }
  }

  const Schedule& s_;
  SessionOptions opts_;
  Clock::time_point origin_;
  std::size_t esize_ = 1;
  std::uint32_t spins_ = 64;
  std::uint32_t yields_ = 0;
  std::vector<std::vector<Memory>> mem_;  // [rank][buf]
  std::vector<RankPlan> plans_;
  std::unique_ptr<Counter[]> progress_;
  std::vector<std::vector<TransferTiming>> events_;
  std::vector<std::pair<double, double>> window_;  // per rank: start and end of the last run_all
  std::vector<std::thread> threads_;
  Counter epoch_, done_;
  std::unique_ptr<LaneStatus[]> status_;
  flight::Recorder recorder_;
  Counter abort_;                      // 1 once the run is aborted (hung and crashed lanes sleep on it)
  std::atomic<bool> aborted_{false};
  std::atomic<std::uint32_t> crashed_{0};
  std::optional<Error> failure_;       // the error every call returns after an abort
  std::vector<LaneSnapshot> frozen_;   // the lanes when the run was aborted
  std::string mode_ = "fast";
  Command cmd_ = Command::none;
  std::int32_t arg_ = 0;
  std::int32_t lanes_ = 0;  // threads: one per rank, plus one per rank for compute spans
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
