// The cuda backend: the Schedule on GPUs with our own kernels.
//
// Rank r lives on GPU r mod G. Its transfers run on its stream (the receiver executes
// a transfer, as in the cpu backend): a kernel on the receiver's GPU reads the
// sender's memory directly where peer access exists, else cudaMemcpyPeerAsync brings
// it into staging first and a local kernel combines it. Compute spans run on the
// rank's second stream.
//
// Fast mode enqueues the whole schedule at once: the dependencies the cpu backend
// waits for (deps.h: lane q has completed step j) become cudaStreamWaitEvent on an
// event lane q records after step j, so the host never synchronises until the end.
// Observable mode enqueues one step for every rank and waits for all of them.
// Crash and hang faults park the rank's stream (park.h); the wait then watches the
// streams and aborts the run, never hanging.
#include "cuda_backend.h"

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "clock.h"
#include "gpu_backend.h"
#include "gpu_session.h"
#include "ir/deps.h"
#include "kernels.h"
#include "kernels/host_kernels.h"
#include "nvtx.h"
#include "park.h"
#include "world.h"

namespace collscope::gpu {

namespace {

class CudaSession final : public GpuSession {
 public:
  CudaSession(const Schedule& s, const SessionOptions& o, int devices) : GpuSession(s, o, devices) {}
  ~CudaSession() override {
    world_.raise_abort();  // nothing may stay parked: the session is going away
    world_.synchronize();
    for (auto& per : done_)
      for (cudaEvent_t e : per)
        if (e) cudaEventDestroy(e);
  }

  Status start() {
    lanes_ = dataflow::lane_count(s_);
    deps_ = dataflow::compute_deps(s_);
    const auto R = static_cast<std::size_t>(s_.ranks);
    const auto S = s_.steps.size();
    // Staging: the largest transfer a rank must bring in through a copy first (what it
    // combines with its own data; a plain copy lands in place directly).
    std::vector<std::uint64_t> staging(R, 0);
    GpuTopology topo{devices_};
    for (const auto& st : s_.steps)
      for (const auto& t : st.transfers)
        if ((t.action == Action::reduce || t.action == Action::reduce_copy) && !topo.same_or_peer_unknown(t))
          staging[static_cast<std::size_t>(t.dst.rank)] =
              std::max(staging[static_cast<std::size_t>(t.dst.rank)], t.count * size_of(s_.dtype));
    if (auto st = world_.open(s_, devices_, staging); !st) return st;
    // Only the (lane, step) events somebody waits for are created.
    done_.assign(static_cast<std::size_t>(lanes_), std::vector<cudaEvent_t>(S, nullptr));
    for (std::size_t lane = 0; lane < deps_.size(); ++lane)
      for (const auto& per_step : deps_[lane])
        for (const auto& d : per_step) {
          const auto step = static_cast<std::size_t>(
              (d.step % static_cast<std::int32_t>(S) + static_cast<std::int32_t>(S)) % static_cast<std::int32_t>(S));
          auto& e = done_[static_cast<std::size_t>(d.rank)][step];
          if (e) continue;
          COLLSCOPE_CUDA(cudaSetDevice(device_of_lane(d.rank)));
          COLLSCOPE_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        }
    return clock_.open(devices_);
  }

  Status run_step(std::int32_t step) override {
    if (failure_) return *failure_;  // an aborted session runs nothing more
    if (auto st = clock_.mark(world_, s_.ranks, now_us()); !st) return st;
    for (std::int32_t lane = 0; lane < lanes_; ++lane)
      if (auto st = enqueue(lane, step, false, 0); !st) return st;
    return finish();
  }

  Status run_all(std::int32_t iterations) override {
    if (failure_) return *failure_;
    const double t0 = now_us();
    if (auto st = clock_.mark(world_, s_.ranks, t0); !st) return st;
    const auto S = static_cast<std::int32_t>(s_.steps.size());
    // Step-major order: when lane a waits for lane b's step j, the event's latest
    // record is the one of the iteration the dependency means.
    for (std::int32_t it = 0; it < iterations; ++it)
      for (std::int32_t k = 0; k < S; ++k)
        for (std::int32_t lane = 0; lane < lanes_; ++lane)
          if (auto st = enqueue(lane, k, true, it); !st) return st;
    if (auto st = finish(); !st) return st;
    last_us_ = now_us() - t0;
    return ok_status();
  }

 private:
  // Decides staging before the world (and its peer table) exists: conservatively
  // stage every cross-GPU reduce and reduce-copy; direct reads are chosen at run time.
  struct GpuTopology {
    int devices;
    bool same_or_peer_unknown(const Transfer& t) const {
      return t.src.rank == t.dst.rank || t.src.rank % devices == t.dst.rank % devices;
    }
  };

  // Waits for every stream. Without a parked rank every kernel ends by itself; with
  // one, the streams are watched and the run is failed after park_patience_s, the
  // parked stream released and every stream drained before returning.
  Status finish() {
    if (!parked_) return world_.synchronize();
    const auto t0 = Clock::now();
    for (;;) {
      bool done = true;
      std::vector<std::int32_t> waiting;
      for (std::int32_t lane = 0; lane < lanes_; ++lane) {
        COLLSCOPE_CUDA(cudaSetDevice(device_of_lane(lane)));
        const cudaError_t q = cudaStreamQuery(stream_of_lane(lane));
        if (q == cudaErrorNotReady) {
          done = false;
          waiting.push_back(lane % s_.ranks);
        } else if (q != cudaSuccess) {
          failure_ = cuda_error(q, "cudaStreamQuery", __FILE__, __LINE__);
          world_.raise_abort();
          (void)world_.synchronize();
          return *failure_;
        }
      }
      if (done) return world_.synchronize();
      if (std::chrono::duration<double>(Clock::now() - t0).count() >= park_patience_s(*parked_, o_)) {
        failure_ = park_error(s_, *parked_, waiting, o_);
        world_.raise_abort();
        (void)world_.synchronize();
        return *failure_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  int device_of_lane(std::int32_t lane) const { return world_.device_of(lane % s_.ranks); }
  cudaStream_t stream_of_lane(std::int32_t lane) const {
    return lane < s_.ranks ? world_.stream(lane) : world_.compute_stream(lane - s_.ranks);
  }

  Status enqueue(std::int32_t lane, std::int32_t k, bool wait_deps, std::int32_t iteration) {
    const auto S = static_cast<std::int32_t>(s_.steps.size());
    const std::int32_t rank = lane % s_.ranks;
    cudaStream_t stream = stream_of_lane(lane);
    COLLSCOPE_CUDA(cudaSetDevice(device_of_lane(lane)));
    if (wait_deps)
      for (const auto& d : deps_[static_cast<std::size_t>(lane)][static_cast<std::size_t>(k)]) {
        if (iteration == 0 && d.step < 0) continue;  // nothing ran before the first iteration
        cudaEvent_t e = done_[static_cast<std::size_t>(d.rank)][static_cast<std::size_t>((d.step + S) % S)];
        COLLSCOPE_CUDA(cudaStreamWaitEvent(stream, e, 0));
      }
    if (lane < s_.ranks) {
      for (const Fault& f : o_.faults)
        if (f.kind == Fault::Kind::delay && f.rank == rank && f.step == k)
          COLLSCOPE_CUDA(launch_busy(static_cast<std::uint64_t>(f.ms) * 1000, stream, world_.abort_flag()));
      if (auto p = park_fault(o_, rank, k)) {
        COLLSCOPE_CUDA(launch_park(world_.abort_flag(), stream));
        if (!parked_) parked_ = p;
      }
    }
    const Step& step = s_.steps[static_cast<std::size_t>(k)];
    std::uint64_t bytes = 0;
    for (const Transfer& t : step.transfers)
      if (dataflow::lane_of(s_, t) == lane && t.action != Action::compute) bytes += t.count * world_.esize();
    const NvtxRange range("step " + std::to_string(k) + (lane >= s_.ranks ? " compute" : ""), rank, bytes);
    for (std::size_t i = 0; i < step.transfers.size(); ++i) {
      const Transfer& t = step.transfers[i];
      if (dataflow::lane_of(s_, t) != lane) continue;
      // A signal (barrier) moves nothing: its wait is the dependency above, and its
      // record marks when the rank passed it.
      if (o_.record_events)
        if (auto st = clock_.start(stream, k, static_cast<std::int32_t>(i), rank, device_of_lane(lane)); !st) return st;
      if (!is_signal(t))
        if (auto r = transfer(t, k, stream); !r) return r;
      if (o_.record_events)
        if (auto st = clock_.stop(stream); !st) return st;
    }
    if (cudaEvent_t e = done_[static_cast<std::size_t>(lane)][static_cast<std::size_t>(k)])
      COLLSCOPE_CUDA(cudaEventRecord(e, stream));
    return ok_status();
  }

  Status transfer(const Transfer& t, std::int32_t k, cudaStream_t stream) {
    const std::uint64_t bytes = t.count * world_.esize();
    switch (t.action) {
      case Action::compute:
        COLLSCOPE_CUDA(launch_busy(t.duration_us, stream, world_.abort_flag()));
        return ok_status();
      case Action::scale:
        COLLSCOPE_CUDA(launch_scale(s_.dtype, world_.ptr(t.dst), t.count, t.divisor, stream));
        return ok_status();
      case Action::copy:
        if (world_.direct(t.dst.rank, t.src.rank)) {
          COLLSCOPE_CUDA(launch_copy(world_.ptr(t.dst), world_.ptr(t.src), bytes, stream));
        } else {
          COLLSCOPE_CUDA(cudaMemcpyPeerAsync(world_.ptr(t.dst), world_.device_of(t.dst.rank), world_.ptr(t.src),
                                             world_.device_of(t.src.rank), bytes, stream));
        }
        break;
      case Action::reduce:
      case Action::reduce_copy: {
        const OpKind op =
            kernels::op_kind(s_.calls[static_cast<std::size_t>(s_.steps[static_cast<std::size_t>(k)].call)].args.op);
        // The source comes from the sender's memory, or through staging without peer
        // access; the left operand (dst itself, or aux) is on this rank's GPU.
        const void* from = world_.ptr(t.src);
        if (!world_.direct(t.dst.rank, t.src.rank)) {
          void* staging = world_.staging(t.dst.rank);
          COLLSCOPE_CUDA(cudaMemcpyPeerAsync(staging, world_.device_of(t.dst.rank), from, world_.device_of(t.src.rank),
                                             bytes, stream));
          from = staging;
        }
        void* into = world_.ptr(t.dst);
        const void* left = t.action == Action::reduce_copy ? static_cast<const void*>(world_.ptr(t.aux)) : into;
        COLLSCOPE_CUDA(launch_reduce_copy(s_.dtype, op, into, left, from, t.count, stream));
        break;
      }
    }
    for (const Fault& f : o_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == k && f.rank == t.src.rank && t.dst.rank != t.src.rank && t.count)
        COLLSCOPE_CUDA(launch_flip(world_.ptr(t.dst), world_.esize(), stream));
    return ok_status();
  }

  std::int32_t lanes_ = 0;
  std::vector<std::vector<std::vector<dataflow::Dep>>> deps_;
  std::vector<std::vector<cudaEvent_t>> done_;  // [lane][step], only where awaited
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const GpuProbe& probe) {
  return std::make_unique<GpuBackend<CudaSession>>(probe, "cuda", "our CUDA kernels, rank r on GPU r mod G",
                                                   BackendCapabilities{{}, false, true, false, true});
}

}  // namespace collscope::gpu
