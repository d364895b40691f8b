// The mpi backend's session, the lanes' work (session.h): arriving at a step, its ops,
// the communication and native steps, fast and observable mode.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backends/mpi/native.h"
#include "backends/mpi/session.h"
#include "kernels/host_kernels.h"

namespace collscope::mpi {

namespace {

using kernels::op_kind;

}  // namespace

// --- the lanes' work --------------------------------------------------------------------

bool MpiSession::arrive(std::int32_t lane, std::int32_t step) {
  LaneSlot& me = slot(lane);
  me.step.store(step, std::memory_order_relaxed);
  me.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
  recorder_.reach(lane, step, now_us());
  if (lane == me_)
    for (const Fault& f : opts_.faults) {
      if (f.rank != me_ || f.step != step) continue;
      switch (f.kind) {
        case Fault::Kind::delay:
          if (!pause_us(f.ms * 1000.0, true)) return false;
          break;
        case Fault::Kind::hang:
          // The rank never arrives; its process stays, and answers when the others ask.
          me.state.store(static_cast<std::uint32_t>(LaneState::hung), std::memory_order_seq_cst);
          while (!aborted()) {
            poll_mpi();
            sleep_on(&node_abort_->abort, 0, 20000);
          }
          return false;
        case Fault::Kind::crash:
          // The process really dies here, as a segfault would end it: nothing is written,
          // its state on the node's board is all the others learn.
          me.state.store(static_cast<std::uint32_t>(LaneState::crashed), std::memory_order_seq_cst);
          std::fflush(stdout);
          _exit(static_cast<int>(ExitCode::backend_failure));
        case Fault::Kind::corrupt:
          break;
      }
    }
  recorder_.begin(lane, step, now_us());
  return true;
}

bool MpiSession::execute_op(std::int32_t lane, std::int32_t k, const Op& op, bool fast) {
  (void)fast;
  const double t0 = opts_.record_events ? now_us() : 0.0;
  const ReduceOp rop = s_.calls[static_cast<std::size_t>(s_.steps[static_cast<std::size_t>(k)].call)].args.op;
  const std::uint8_t* src =
      op.into_staging ? reinterpret_cast<const std::uint8_t*>(staging_.data()) + op.staging : op.src;
  switch (op.action) {
    case Action::copy:
      if (op.count && op.src) std::memcpy(op.dst, op.src, op.count * esize_);
      break;
    case Action::reduce:
      kernels::reduce_bytes(s_.dtype, op_kind(rop), op.dst, src, op.count);
      break;
    case Action::reduce_copy:
      kernels::reduce_copy_bytes(s_.dtype, op_kind(rop), op.dst, op.aux, src, op.count);
      break;
    case Action::scale:
      kernels::scale_bytes(s_.dtype, op.dst, op.count, op.divisor);
      break;
    case Action::compute:
      if (!pause_us(op.duration_us, lane == me_)) return false;
      break;
  }
  // A corrupting rank's outgoing data arrives with one bit flipped (as on the cpu backend).
  const Transfer& t = s_.steps[static_cast<std::size_t>(k)].transfers[static_cast<std::size_t>(op.transfer)];
  for (const Fault& f : opts_.faults)
    if (f.kind == Fault::Kind::corrupt && f.step == k && t.src.rank == f.rank && t.dst.rank != f.rank && t.count &&
        t.action != Action::compute)
      op.dst[esize_ - 1] ^= 0x40;
  if (opts_.record_events) events_[lane >= R_ ? 1 : 0].push_back({k, op.transfer, me_, t0, now_us()});
  return true;
}

bool MpiSession::run_comm_step(std::int32_t k, std::int64_t base, bool fast) {
  const StepPlan& p = plans_[static_cast<std::size_t>(k)];
  // 1. What other nodes read from this rank goes out first, packed (see session.h).
  for (const Send& snd : p.sends) {
    if (fast && snd.need_compute != kNone) {
      const std::int64_t need = base + snd.need_compute + 1;
      if (need > 0 && !wait_lane(me_, R_ + me_, static_cast<std::uint64_t>(need), true)) return false;
    }
    Pending out;
    if (snd.bytes) {
      out.bytes.reset(new std::uint8_t[snd.bytes]);
      std::memcpy(out.bytes.get(), snd.src, snd.bytes);
    }
    if (auto st = send_bytes(out.bytes.get(), snd.bytes, snd.to, tag_of(k, snd.transfer), out, job_.world); !st) {
      raise_failure("mpi", snd.to, k, st.error().message);
      return false;
    }
    pending_.push_back(std::move(out));
  }
  // 2. Peers on this node (and this rank's other lane) this lane depends on.
  if (fast)
    for (const Wait& w : p.comm_waits) {
      const std::int64_t need = base + w.step + 1;
      if (need > 0 && !wait_lane(me_, w.lane, static_cast<std::uint64_t>(need), true)) return false;
    }
  // 3. Messages from other nodes: into place for a copy, into staging for a reduction.
  std::vector<std::vector<MPI_Request>> recvs(p.comm.size());
  for (std::size_t i = 0; i < p.comm.size(); ++i) {
    const Op& op = p.comm[i];
    if (op.from < 0) continue;
    std::uint8_t* into = op.into_staging ? reinterpret_cast<std::uint8_t*>(staging_.data()) + op.staging : op.dst;
    const std::uint64_t bytes = op.count && op.action != Action::compute ? op.count * esize_ : 0;
    if (auto st = recv_bytes(into, bytes, op.from, tag_of(k, op.transfer), recvs[i], job_.world); !st) {
      raise_failure("mpi", op.from, k, st.error().message);
      return false;
    }
  }
  // 4. The rank's transfers, in order.
  for (std::size_t i = 0; i < p.comm.size(); ++i) {
    const Op& op = p.comm[i];
    for (MPI_Request& r : recvs[i]) {
      LaneSlot& me = slot(me_);
      me.waiting_on.store(op.from, std::memory_order_relaxed);
      me.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
      if (!wait_request(r, true)) return false;
      me.waiting_on.store(-1, std::memory_order_relaxed);
      me.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
    }
    if (!execute_op(me_, k, op, fast)) return false;
  }
  return true;
}

bool MpiSession::run_native_step(std::int32_t k, std::int64_t base, bool fast) {
  const CollArgs& a = s_.calls[static_cast<std::size_t>(call_of(s_, k, me_))].args;
  // Around a native step among ours, a barrier: the library orders its own call, but not
  // our direct reads of a peer's memory before and after it.
  auto barrier = [&]() {
    MPI_Request r;
    if (MPI_Ibarrier(job_.world, &r) != MPI_SUCCESS) return false;
    LaneSlot& me = slot(me_);
    me.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
    const bool ok = wait_request(r, true);
    me.state.store(static_cast<std::uint32_t>(LaneState::running), std::memory_order_relaxed);
    return ok;
  };
  if (fast && compute_lane_ && base + k > 0 && !wait_lane(me_, R_ + me_, static_cast<std::uint64_t>(base + k), true))
    return false;
  if (fast && mixed_native_ && !barrier()) return false;
  const std::int32_t g = native_rank_[static_cast<std::size_t>(k)];
  if (g >= 0) {
    std::uint8_t* in = a.in_buf >= 0 && s_.buffer_count(a.in_buf, me_) ? ptr({me_, a.in_buf, 0}) : nullptr;
    std::uint8_t* out = a.out_buf >= 0 && s_.buffer_count(a.out_buf, me_) ? ptr({me_, a.out_buf, 0}) : nullptr;
    // A corrupting rank hands MPI its input with one bit flipped: what it sends is wrong.
    for (const Fault& f : opts_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == k && f.rank == me_ && in && a.count)
        in[a.in_offset(g) * esize_ + esize_ - 1] ^= 0x40;
    const double t0 = now_us();
    if (auto r = run_native(a, s_.dtype, g, in, out, native_comms_[static_cast<std::size_t>(k)]); !r) {
      raise_failure("mpi", me_, k, r.error().message);
      return false;
    }
    if (opts_.record_events) events_[0].push_back({k, 0, me_, t0, now_us()});
  }
  if (fast && mixed_native_ && !barrier()) return false;
  return true;
}

bool MpiSession::fast_comm(std::int32_t iterations) {
  const auto S = static_cast<std::int32_t>(s_.steps.size());
  LaneSlot& me = slot(me_);
  for (std::int32_t it = 0; it < iterations; ++it) {
    const std::int64_t base = fast_base_ + static_cast<std::int64_t>(it) * S;
    for (std::int32_t k = 0; k < S; ++k) {
      if (aborted() || !arrive(me_, k)) return false;
      const bool ok =
          s_.steps[static_cast<std::size_t>(k)].native ? run_native_step(k, base, true) : run_comm_step(k, base, true);
      if (!ok) return false;
      recorder_.end(me_, k, now_us());
      publish(me, static_cast<std::uint64_t>(base + k + 1));
      me.beat.fetch_add(1, std::memory_order_relaxed);
      // Sends that have arrived free their packed bytes as we go.
      if (pending_.size() > 64) poll_mpi();
    }
  }
  return wait_all_sends();
}

bool MpiSession::fast_compute(std::int32_t iterations) {
  const auto S = static_cast<std::int32_t>(s_.steps.size());
  const std::int32_t lane = R_ + me_;
  LaneSlot& me = slot(lane);
  for (std::int32_t it = 0; it < iterations; ++it) {
    const std::int64_t base = fast_base_ + static_cast<std::int64_t>(it) * S;
    for (std::int32_t k = 0; k < S; ++k) {
      if (aborted() || !arrive(lane, k)) return false;
      const StepPlan& p = plans_[static_cast<std::size_t>(k)];
      // Nothing of ours runs next to the library's own call (run_native_step).
      if (s_.steps[static_cast<std::size_t>(k)].native &&
          !wait_lane(lane, me_, static_cast<std::uint64_t>(base + k + 1), false))
        return false;
      for (const Wait& w : p.compute_waits) {
        const std::int64_t need = base + w.step + 1;
        if (need > 0 && !wait_lane(lane, w.lane, static_cast<std::uint64_t>(need), false)) return false;
      }
      for (const Op& op : p.compute)
        if (!execute_op(lane, k, op, true)) return false;
      recorder_.end(lane, k, now_us());
      publish(me, static_cast<std::uint64_t>(base + k + 1));
      me.beat.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return true;
}

void MpiSession::compute_thread() {
  std::uint64_t seen = 0;
  for (;;) {
    std::int32_t n = 0;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return quit_ || compute_epoch_ != seen; });
      if (quit_) return;
      seen = compute_epoch_;
      n = compute_iterations_;
      compute_busy_.store(true);
    }
    compute_busy_.store(true);
    const bool ok = fast_compute(n);
    compute_busy_.store(false);
    const double end = now_us();
    slot(R_ + me_).state.store(static_cast<std::uint32_t>(ok ? LaneState::finished : LaneState::idle));
    std::lock_guard<std::mutex> lock(m_);
    compute_ok_ = ok;
    compute_end_ = end;
  }
}

Status MpiSession::run_all(std::int32_t iterations) {
  if (error_) return *error_;
  if (auto st = settle(); !st) return st;
  mode_ = "fast";
  armed_.store(2);
  const double t0 = now_us();
  if (compute_lane_) {
    std::lock_guard<std::mutex> lock(m_);
    compute_iterations_ = iterations;
    ++compute_epoch_;
  }
  cv_.notify_all();
  bool ok = fast_comm(iterations);
  double t1 = now_us();
  const auto S = static_cast<std::int64_t>(s_.steps.size());
  if (ok && compute_lane_) {
    ok = wait_lane(me_, R_ + me_, static_cast<std::uint64_t>(fast_base_ + iterations * S), true);
    std::lock_guard<std::mutex> lock(m_);
    t1 = std::max(t1, compute_end_);
  }
  if (ok) slot(me_).state.store(static_cast<std::uint32_t>(LaneState::finished), std::memory_order_relaxed);
  fast_base_ += iterations * S;
  if (!ok) {
    armed_.store(0);
    return coordinate();
  }
  // The run as the ranks saw it: from the last one's start to the last one's end.
  double window[2] = {t0, t1}, latest[2] = {0, 0};
  MPI_Request r;
  COLLSCOPE_MPI_CALL(MPI_Iallreduce(window, latest, 2, MPI_DOUBLE, MPI_MAX, job_.world, &r));
  const bool met = wait_request(r, true);
  armed_.store(0);
  if (!met) return coordinate();
  last_us_ = std::max(0.0, latest[1] - latest[0]);
  return ok_status();
}

Status MpiSession::run_step(std::int32_t k) {
  if (error_) return *error_;
  if (auto st = settle(); !st) return st;
  mode_ = "observable";
  armed_.store(2);
  bool ok = arrive(me_, k);
  if (ok) {
    if (s_.steps[static_cast<std::size_t>(k)].native) {
      ok = run_native_step(k, 0, false);
    } else {
      ok = run_comm_step(k, 0, false);
      if (ok && compute_lane_) {
        const std::int32_t lane = R_ + me_;
        ok = arrive(lane, k);
        for (const Op& op : plans_[static_cast<std::size_t>(k)].compute)
          if (ok) ok = execute_op(lane, k, op, false);
        if (ok) recorder_.end(lane, k, now_us());
      }
    }
    if (ok) ok = wait_all_sends();
    if (ok) recorder_.end(me_, k, now_us());
  }
  if (ok) {
    LaneSlot& me = slot(me_);
    me.beat.fetch_add(1, std::memory_order_relaxed);
    me.state.store(static_cast<std::uint32_t>(LaneState::waiting), std::memory_order_relaxed);
    // The step's barrier: every rank has finished it before anyone starts the next.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    MPI_Request r;
    ok = MPI_Ibarrier(job_.world, &r) == MPI_SUCCESS && wait_request(r, true);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    me.state.store(static_cast<std::uint32_t>(LaneState::idle), std::memory_order_relaxed);
  }
  armed_.store(0);
  if (!ok) return coordinate();
  return ok_status();
}

}  // namespace collscope::mpi
