// The cpu session's worker loop (worker.h).
#include "backends/cpu/worker.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/host_kernels.h"

namespace collscope::cpu {

using kernels::op_kind;
using kernels::reduce_bytes;
using kernels::reduce_copy_bytes;
using kernels::scale_bytes;

Workers::Workers(const Schedule& s, const SessionOptions& o, const std::vector<RankPlan>& plans, Lanes& lanes,
                 flight::Recorder& recorder, WaitTuning waits)
    : s_(s), opts_(o), plans_(plans), lanes_(lanes), recorder_(recorder), waits_(waits), esize_(size_of(s.dtype)) {
  const auto L = static_cast<std::size_t>(lanes.count);
  events_.resize(L);
  window_.assign(L, {0.0, 0.0});
}

Status Workers::start() {
  const auto L = static_cast<std::size_t>(lanes_.count);
  threads_.reserve(L);
  // Thread creation fails under a thread or address-space limit (containers, ulimit):
  // an error, exit 3, with every thread already started told to quit and joined.
  try {
    for (std::size_t r = 0; r < L; ++r) threads_.emplace_back([this, r] { loop(static_cast<std::int32_t>(r)); });
    pin_threads();
  } catch (const std::exception& e) {
    const std::size_t started = threads_.size();
    stop();
    return make_error("backend.out_of_resources",
                      "cpu backend: cannot start thread " + std::to_string(started + 1) + " of " + std::to_string(L) +
                          " (" + e.what() + ")",
                      "the system limits threads or address space (ulimit -u / -v, a container's pids limit): use "
                      "fewer ranks or raise the limit",
                      {}, ExitCode::backend_failure);
  }
  return ok_status();
}

// Lanes stay on cores of their own choosing instead of where the scheduler puts them.
// Left to itself the scheduler sometimes puts two spinning lanes on one core while
// another core idles: the lane being waited for cannot run until the waiter gives up
// its spin and sleeps, and a 2-rank all-reduce of 8 B takes 80 us instead of 0.5 us,
// one run in two (bench/RESULTS.md, "Small-message latency"). So:
//   - lanes <= cores: lane k on the k-th core the process may use;
//   - more lanes than cores: neighbouring lanes share a core (lanes 0-3 on the first
//     of 2 cores for 8 lanes), so that most waits are for a lane on the same core,
//     which sched_yield hands the core to at once.
// COLLSCOPE_PIN=0 leaves the threads where the scheduler puts them.
void Workers::pin_threads() {
  const std::vector<int> cores = cores_to_pin();
  const std::size_t L = threads_.size(), C = cores.size();
  if (L < 2 || C < 2) return;  // one lane, or one core: nothing to place
  for (std::size_t r = 0; r < L; ++r) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cores[core_for_lane(r, L, C)], &one);
    pthread_setaffinity_np(threads_[r].native_handle(), sizeof one, &one);  // best effort: a refusal is harmless
  }
}

void Workers::stop() {
  if (threads_.empty()) return;
  lanes_.cmd = Command::quit;
  publish(lanes_.epoch, lanes_.epoch.value.load() + 1);
  for (auto& t : threads_) t.join();
  threads_.clear();
}

std::vector<TransferTiming> Workers::take_events() {
  std::vector<TransferTiming> all;
  for (auto& e : events_) {
    all.insert(all.end(), e.begin(), e.end());
    e.clear();
  }
  return all;
}

void Workers::loop(std::int32_t lane) {
  // Between two commands a lane waits for the launching thread, which has no core of its
  // own when the ranks take them all: at most a short spin (none when ranks outnumber
  // cores, where it would keep the lanes still at work off their core), then sleep.
  const WaitTuning epoch{std::min<std::uint32_t>(waits_.spin_us, 50), 0};
  std::uint32_t seen = 0;
  for (;;) {
    wait_at_least(lanes_.epoch, seen + 1, epoch);
    seen = lanes_.epoch.value.load(std::memory_order_acquire);
    const Command c = lanes_.cmd;
    if (c == Command::quit) return;
    LaneStatus& me = lanes_.status[static_cast<std::size_t>(lane)];
    if (c == Command::step && !lanes_.is_aborted()) {
      if (arrive(lane, lanes_.arg) && execute(lane, lanes_.arg))
        me.state.store(LaneState::idle, std::memory_order_relaxed);
    }
    if (c == Command::all && !lanes_.is_aborted()) {
      const double t0 = lanes_.now_us();
      if (run_fast(lane, lanes_.arg)) me.state.store(LaneState::finished, std::memory_order_relaxed);
      window_[static_cast<std::size_t>(lane)] = {t0, lanes_.now_us()};
    }
    lanes_.done.value.fetch_add(1, std::memory_order_seq_cst);
    if (lanes_.done.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&lanes_.done.value);
  }
}

bool Workers::run_fast(std::int32_t lane, std::int32_t iterations) {
  const auto S = static_cast<std::int32_t>(s_.steps.size());
  const auto& plan = plans_[static_cast<std::size_t>(lane)];
  Counter& mine = lanes_.progress[static_cast<std::size_t>(lane)];
  LaneStatus& me = lanes_.status[static_cast<std::size_t>(lane)];
  for (std::int32_t it = 0; it < iterations; ++it) {
    const std::int64_t base = static_cast<std::int64_t>(it) * S;
    for (std::int32_t k = 0; k < S; ++k) {
      if (lanes_.is_aborted() || !arrive(lane, k)) return false;
      for (const dataflow::Dep& d : plan.deps[static_cast<std::size_t>(k)]) {
        const std::int64_t need = base + d.step + 1;
        if (need <= 0) continue;
        Counter& other = lanes_.progress[static_cast<std::size_t>(d.rank)];
        if (other.value.load(std::memory_order_acquire) >= static_cast<std::uint32_t>(need)) continue;
        me.step.store(k, std::memory_order_relaxed);
        me.waiting_on.store(d.rank, std::memory_order_relaxed);
        me.state.store(LaneState::waiting, std::memory_order_relaxed);
        wait_at_least(other, static_cast<std::uint32_t>(need), waits_);
        if (lanes_.is_aborted()) return false;  // woken by the abort, not by the data
      }
      me.waiting_on.store(-1, std::memory_order_relaxed);
      if (!execute(lane, k)) return false;
      publish(mine, static_cast<std::uint32_t>(base + k + 1));
    }
    if (lane == 0 && mark_every_ > 0) {
      const std::int64_t done = mark_base_ + it + 1;
      if (done % mark_every_ == 0 && done < mark_total_) marks_.push_back(lanes_.now_us());
    }
  }
  return true;
}

// The lane arrives at a step: the ops that start there are scheduled, the faults of
// the step fire (a straggler arrives late, a hung or crashed rank never does), then
// the ops are started (they may still wait for their peers' data). False when the
// run was aborted (or this rank died).
bool Workers::arrive(std::int32_t lane, std::int32_t step) {
  LaneStatus& me = lanes_.status[static_cast<std::size_t>(lane)];
  me.step.store(step, std::memory_order_relaxed);
  me.state.store(LaneState::running, std::memory_order_relaxed);
  recorder_.reach(lane, step, lanes_.now_us());
  if (!opts_.faults.empty() && lane < s_.ranks && !inject_before(lane, lane % s_.ranks, step)) return false;
  recorder_.begin(lane, step, lanes_.now_us());
  return true;
}

// The lane's part of one step; false when the run was aborted.
bool Workers::execute(std::int32_t lane, std::int32_t step) {
  const std::int32_t rank = lane % s_.ranks;
  LaneStatus& me = lanes_.status[static_cast<std::size_t>(lane)];
  me.step.store(step, std::memory_order_relaxed);
  me.state.store(LaneState::running, std::memory_order_relaxed);
  const auto& ops = plans_[static_cast<std::size_t>(lane)].ops[static_cast<std::size_t>(step)];
  for (const Op& op : ops) {
    const double t0 = opts_.record_events ? lanes_.now_us() : 0.0;
    switch (op.action) {
      case Action::copy:
        if (op.count) std::memcpy(op.dst, op.src, op.count * esize_);
        break;
      case Action::reduce:
        reduce_bytes(s_.dtype, op_kind(op_of_step(step)), op.dst, op.src, op.count);
        break;
      case Action::reduce_copy:
        reduce_copy_bytes(s_.dtype, op_kind(op_of_step(step)), op.dst, op.aux, op.src, op.count);
        break;
      case Action::scale:
        scale_bytes(s_.dtype, op.dst, op.count, op.divisor);
        break;
      case Action::compute:
        if (!pause_us(op.duration_us)) return false;
        break;
    }
    if (!opts_.faults.empty()) inject_after(step, op);
    if (opts_.record_events)
      events_[static_cast<std::size_t>(lane)].push_back({step, op.transfer, rank, t0, lanes_.now_us()});
  }
  recorder_.end(lane, step, lanes_.now_us());
  me.beat.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// Faults: a delayed rank sleeps before its part of the step; a hung rank blocks there
// and a crashed one stops there, both until the run is aborted; a corrupting rank's
// outgoing data arrives with one bit flipped.
bool Workers::inject_before(std::int32_t lane, std::int32_t rank, std::int32_t step) {
  for (const Fault& f : opts_.faults) {
    if (f.rank != rank || f.step != step) continue;
    switch (f.kind) {
      case Fault::Kind::delay:
        if (!pause_us(f.ms * 1000.0)) return false;
        break;
      case Fault::Kind::hang:
        block_until_abort(lane, step, LaneState::hung);
        return false;
      case Fault::Kind::crash:
        block_until_abort(lane, step, LaneState::crashed);
        return false;
      case Fault::Kind::corrupt:
        break;
    }
  }
  return true;
}

void Workers::inject_after(std::int32_t step, const Op& op) {
  const auto& t = s_.steps[static_cast<std::size_t>(step)].transfers[static_cast<std::size_t>(op.transfer)];
  for (const Fault& f : opts_.faults)
    if (f.kind == Fault::Kind::corrupt && f.step == step && t.src.rank == f.rank && t.dst.rank != f.rank && t.count)
      // The first element's second-highest bit: the top exponent bit of a floating
      // type (0 becomes 2, 1 becomes infinity, 3 nearly 0), a high bit of an integer,
      // so that no later addition or rounding hides the damage.
      op.dst[esize_ - 1] ^= 0x40;
}

// Sleeps `us` microseconds unless the run is aborted first (false then). A delay
// fault or a compute span sleeps here, so the abort must wake it: it counts itself
// among abort's waiters (publish() wakes only when there are some), and it sleeps
// only while abort still reads 0 (so an abort just before the sleep is not missed).
bool Workers::pause_us(double us) {
  Counter& abort = lanes_.abort;
  const double until = lanes_.now_us() + us;
  abort.waiters.fetch_add(1, std::memory_order_seq_cst);
  bool finished = false;
  for (;;) {
    if (lanes_.is_aborted() || abort.value.load(std::memory_order_seq_cst) != 0) break;
    const double left = until - lanes_.now_us();
    if (left <= 0) {
      finished = true;
      break;
    }
    futex_wait_for(&abort.value, 0, static_cast<std::int64_t>(left) + 1);
  }
  abort.waiters.fetch_sub(1, std::memory_order_relaxed);
  return finished;
}

// A hung or crashed lane does nothing until the run is aborted.
void Workers::block_until_abort(std::int32_t lane, std::int32_t step, LaneState why) {
  LaneStatus& me = lanes_.status[static_cast<std::size_t>(lane)];
  me.step.store(step, std::memory_order_relaxed);
  me.state.store(why, std::memory_order_seq_cst);
  if (why == LaneState::crashed) {
    lanes_.crashed.fetch_add(1, std::memory_order_release);
    futex_wake_all(&lanes_.done.value);  // the watchdog looks at once
  }
  wait_at_least(lanes_.abort, 1, WaitTuning{});
}

ReduceOp Workers::op_of_step(std::int32_t step) const {
  return s_.calls[static_cast<std::size_t>(s_.steps[static_cast<std::size_t>(step)].call)].args.op;
}

}  // namespace collscope::cpu
