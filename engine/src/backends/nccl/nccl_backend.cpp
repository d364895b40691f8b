// The nccl backend: one communicator per GPU (ncclCommInitAll), one rank per GPU.
//
// Every step is one NCCL group: each transfer between ranks is an ncclSend from the
// sender's buffer and an ncclRecv into the receiver's staging space; then the
// receiver's stream copies or reduces from staging into place with our kernels (a
// reduce-copy's second operand is the receiver's own memory and never travels). A
// signal (barrier) is a one-byte message. All of a rank's work is on its stream, so
// the stream order carries every dependency and fast mode enqueues the whole schedule
// without waiting on the host; observable mode waits after every step.
//
// Waiting polls ncclCommGetAsyncError with a timeout: on an error or a timeout every
// communicator is aborted and the run fails with exit 3, never a hang. A crash or hang
// fault parks the rank's stream before the step (../cuda/park.h): its peers block in
// NCCL as they would on a dead process, until the wait aborts the communicators.
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../cuda/check.h"
#include "../cuda/clock.h"
#include "../cuda/cuda_backend.h"
#include "../cuda/gpu_backend.h"
#include "../cuda/gpu_session.h"
#include "../cuda/kernels.h"
#include "../cuda/nvtx.h"
#include "../cuda/park.h"
#include "../cuda/world.h"
#include "collscope/collective.h"
#include "collscope/processes.h"
#include "kernels/host_kernels.h"
#include "nccl_processes.h"
#include "nccl_types.h"

namespace collscope::gpu {

namespace {

Error nccl_error(ncclResult_t r, const char* call, const char* file, int line) {
  std::string where = file;
  if (const auto at = where.rfind("engine/"); at != std::string::npos) where = where.substr(at);
  return make_error(
      "backend.nccl",
      std::string(call) + " failed: " + ncclGetErrorString(r) + " at " + where + ":" + std::to_string(line),
      "set NCCL_DEBUG=WARN for NCCL's own explanation", {}, ExitCode::backend_failure);
}

#define COLLSCOPE_NCCL(call)                                                            \
  do {                                                                                  \
    const ncclResult_t collscope_nccl_r = (call);                                       \
    if (collscope_nccl_r != ncclSuccess)                                                \
      return ::collscope::gpu::nccl_error(collscope_nccl_r, #call, __FILE__, __LINE__); \
  } while (0)

// NCCL's collectives under the names the collective descriptors give them (NcclCall,
// collective.h), one pointer for the form of their argument list. A descriptor that
// names a function missing here is refused at run time, never called with the wrong
// arguments; a new collective with an NCCL call adds its row.
struct NcclFunction {
  std::string_view name;
  ncclResult_t (*plain)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*rooted)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*reducing)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*rooted_reducing)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                                  cudaStream_t) = nullptr;
};

const NcclFunction kNcclFunctions[] = {
    {.name = "ncclAllReduce", .reducing = ncclAllReduce},  {.name = "ncclReduceScatter", .reducing = ncclReduceScatter},
    {.name = "ncclReduce", .rooted_reducing = ncclReduce}, {.name = "ncclBroadcast", .rooted = ncclBroadcast},
    {.name = "ncclGather", .rooted = ncclGather},          {.name = "ncclScatter", .rooted = ncclScatter},
    {.name = "ncclAllGather", .plain = ncclAllGather},     {.name = "ncclAlltoAll", .plain = ncclAlltoAll},
};

// The bound function of that name with a pointer of that form; null when none.
const NcclFunction* find_nccl_function(const NcclCall& c) {
  for (const NcclFunction& f : kNcclFunctions) {
    if (f.name != c.function) continue;
    const bool bound = (c.form == NcclForm::plain && f.plain) || (c.form == NcclForm::rooted && f.rooted) ||
                       (c.form == NcclForm::reducing && f.reducing) ||
                       (c.form == NcclForm::rooted_reducing && f.rooted_reducing);
    return bound ? &f : nullptr;
  }
  return nullptr;
}

ncclResult_t call_native(const NcclFunction& f, NcclForm form, const void* in, void* out, size_t count,
                         ncclDataType_t type, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  switch (form) {
    case NcclForm::plain:
      return f.plain(in, out, count, type, comm, stream);
    case NcclForm::rooted:
      return f.rooted(in, out, count, type, root, comm, stream);
    case NcclForm::reducing:
      return f.reducing(in, out, count, type, op, comm, stream);
    case NcclForm::rooted_reducing:
      return f.rooted_reducing(in, out, count, type, op, root, comm, stream);
    case NcclForm::none:
      break;
  }
  return ncclInvalidUsage;
}

// How long a wait may take before the communicators are aborted, at least: a longer
// --timeout raises it, --timeout 0 waits for ever.
constexpr double kTimeoutSeconds = 60.0;

class NcclSession final : public GpuSession {
 public:
  NcclSession(const Schedule& s, const SessionOptions& o, int devices) : GpuSession(s, o, devices) {}
  ~NcclSession() override {
    world_.raise_abort();  // nothing may stay parked: the session is going away
    world_.synchronize();
    for (ncclComm_t c : comms_)
      if (c) ncclCommDestroy(c);
  }

  Status start() {
    if (s_.ranks != devices_)
      return make_error("backend.nccl_ranks",
                        "the nccl backend runs one rank per GPU: this machine has " + std::to_string(devices_) +
                            " GPU(s), the run has " + std::to_string(s_.ranks) + " ranks",
                        "use --ranks " + std::to_string(devices_) + ", or --backend cuda (several ranks per GPU)", {},
                        ExitCode::backend_failure);
    // Staging: per rank, room for everything it receives in one step, plus a byte for signals.
    const auto R = static_cast<std::size_t>(s_.ranks);
    std::vector<std::uint64_t> staging(R, 0);
    for (const auto& st : s_.steps) {
      std::vector<std::uint64_t> need(R, 0);
      for (const auto& t : st.transfers)
        if (t.src.rank != t.dst.rank && t.action != Action::compute)
          need[static_cast<std::size_t>(t.dst.rank)] += std::max<std::uint64_t>(1, t.count * size_of(s_.dtype));
      for (std::size_t r = 0; r < R; ++r) staging[r] = std::max(staging[r], need[r]);
    }
    for (auto& b : staging) b = std::max<std::uint64_t>(b, 16);
    if (auto st = world_.open(s_, devices_, staging); !st) return st;
    comms_.assign(R, nullptr);
    std::vector<int> devs(R);
    for (std::size_t r = 0; r < R; ++r) devs[r] = static_cast<int>(r);
    COLLSCOPE_NCCL(ncclCommInitAll(comms_.data(), s_.ranks, devs.data()));
    return clock_.open(devices_);
  }

  Status run_step(std::int32_t step) override {
    if (failure_) return *failure_;  // an aborted session runs nothing more
    if (auto st = clock_.mark(world_, s_.ranks, now_us()); !st) return st;
    if (auto st = enqueue(step); !st) return abort_with(st.error());
    return wait();
  }

  Status run_all(std::int32_t iterations) override {
    if (failure_) return *failure_;
    const double t0 = now_us();
    if (auto st = clock_.mark(world_, s_.ranks, t0); !st) return st;
    for (std::int32_t it = 0; it < iterations; ++it)
      for (std::int32_t k = 0; k < static_cast<std::int32_t>(s_.steps.size()); ++k)
        if (auto st = enqueue(k); !st) return abort_with(st.error());
    if (auto st = wait(); !st) return st;
    last_us_ = now_us() - t0;
    return ok_status();
  }

  // The NCCL version and the tuning variables passed through from the environment.
  std::string detail() const override {
    int v = 0;
    ncclGetVersion(&v);
    std::string d =
        "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    for (const char* name : {"NCCL_ALGO", "NCCL_PROTO"})
      if (const char* value = std::getenv(name)) d += std::string(", ") + name + "=" + value;
    return d;
  }

 private:
  // NCCL's own collective for a native step, on every rank of the call at once.
  Status enqueue_native(std::int32_t k) {
    const Step& st = s_.steps[static_cast<std::size_t>(k)];
    const Call& call = s_.calls[static_cast<std::size_t>(st.call)];
    const CollArgs& a = call.args;
    if (!a.world_rank.empty() || a.ranks != s_.ranks)
      return make_error("backend.native_unsupported", "algorithm \"nccl\" runs on every rank, not on a group",
                        "use one of our algorithms for collectives on groups", {}, ExitCode::bad_input);
    // The collective's own NCCL call, as its descriptor names it (collective.h).
    const NcclCall& native = nccl_call(a.coll);
    const NcclFunction* fn = find_nccl_function(native);
    if (!fn)
      return make_error("backend.native_unsupported",
                        "this build cannot call NCCL's own " + std::string(name_of(a.coll)) +
                            (native.function.empty() ? " (NCCL has none)" : " (" + std::string(native.function) + ")"),
                        "use one of our algorithms for " + std::string(name_of(a.coll)), {}, ExitCode::bad_input);
    const ncclDataType_t type = nccl_type(s_.dtype);
    const ncclRedOp_t op = nccl_op(a.op);
    const auto count = static_cast<std::size_t>(a.count);
    // A corrupting rank hands NCCL its input with one bit flipped: what it sends is wrong.
    for (const Fault& f : o_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == k && count > 0)
        if (auto* b = static_cast<std::uint8_t*>(world_.buffer(f.rank, a.in_buf))) {
          COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(f.rank)));
          COLLSCOPE_CUDA(launch_flip(b + a.in_offset(f.rank) * world_.esize(), world_.esize(), world_.stream(f.rank)));
        }
    COLLSCOPE_NCCL(ncclGroupStart());
    for (std::int32_t r = 0; r < s_.ranks; ++r) {
      const ncclComm_t comm = comms_[static_cast<std::size_t>(r)];
      cudaStream_t stream = world_.stream(r);
      const auto b_in = world_.buffer(r, a.in_buf), b_out = world_.buffer(r, a.out_buf);
      const void* in = b_in ? static_cast<const std::uint8_t*>(b_in) + a.in_offset(r) * world_.esize() : nullptr;
      void* out = b_out ? static_cast<std::uint8_t*>(b_out) + a.out_offset(r) * world_.esize() : nullptr;
      const ncclResult_t res = call_native(*fn, native.form, in, out, count, type, op, a.root, comm, stream);
      if (res != ncclSuccess) return nccl_error(res, std::string(native.function).c_str(), __FILE__, __LINE__);
    }
    COLLSCOPE_NCCL(ncclGroupEnd());
    return ok_status();
  }

  Status enqueue(std::int32_t k) {
    const Step& st = s_.steps[static_cast<std::size_t>(k)];
    const NvtxRange range("step " + std::to_string(k) + (st.native ? " (NCCL's own)" : ""), -1, step_bytes(s_, st));
    for (std::int32_t r = 0; r < s_.ranks; ++r)
      if (auto p = park_fault(o_, r, k)) {
        COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(r)));
        COLLSCOPE_CUDA(launch_park(world_.abort_flag(), world_.stream(r)));
        if (!parked_) parked_ = p;
      }
    for (const Fault& f : o_.faults)
      if (f.kind == Fault::Kind::delay && f.step == k) {
        COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(f.rank)));
        COLLSCOPE_CUDA(
            launch_busy(static_cast<std::uint64_t>(f.ms) * 1000, world_.stream(f.rank), world_.abort_flag()));
      }
    if (st.native) return enqueue_native(k);
    const auto R = static_cast<std::size_t>(s_.ranks);
    const std::size_t e = world_.esize();
    // Where each cross-rank transfer lands in its receiver's staging space.
    std::vector<std::uint64_t> slot(st.transfers.size(), 0), used(R, 0);
    bool any = false;
    for (std::size_t i = 0; i < st.transfers.size(); ++i) {
      const Transfer& t = st.transfers[i];
      if (t.src.rank == t.dst.rank || t.action == Action::compute) continue;
      slot[i] = used[static_cast<std::size_t>(t.dst.rank)];
      used[static_cast<std::size_t>(t.dst.rank)] += std::max<std::uint64_t>(1, t.count * e);
      any = true;
    }
    // A received transfer's time runs from when its step's communication was queued on
    // the receiver's stream (before NCCL's kernel) to when its data is in place.
    std::vector<std::size_t> timed(st.transfers.size(), 0);
    if (any && o_.record_events)
      for (std::size_t i = 0; i < st.transfers.size(); ++i) {
        const Transfer& t = st.transfers[i];
        if (t.src.rank == t.dst.rank || t.action == Action::compute) continue;
        COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(t.dst.rank)));
        if (auto s = clock_.start(world_.stream(t.dst.rank), k, static_cast<std::int32_t>(i), t.dst.rank,
                                  world_.device_of(t.dst.rank), &timed[i]);
            !s)
          return s;
      }
    if (any) {
      COLLSCOPE_NCCL(ncclGroupStart());
      for (std::size_t i = 0; i < st.transfers.size(); ++i) {
        const Transfer& t = st.transfers[i];
        if (t.src.rank == t.dst.rank || t.action == Action::compute) continue;
        // A signal carries one byte from the start of the sender's staging space.
        const bool signal = is_signal(t);
        const std::uint64_t bytes = signal ? 1 : t.count * e;
        const void* from = signal ? world_.staging(t.src.rank) : world_.ptr(t.src);
        void* into = static_cast<std::uint8_t*>(world_.staging(t.dst.rank)) + slot[i];
        COLLSCOPE_NCCL(ncclSend(from, bytes, ncclUint8, t.dst.rank, comms_[static_cast<std::size_t>(t.src.rank)],
                                world_.stream(t.src.rank)));
        COLLSCOPE_NCCL(ncclRecv(into, bytes, ncclUint8, t.src.rank, comms_[static_cast<std::size_t>(t.dst.rank)],
                                world_.stream(t.dst.rank)));
      }
      COLLSCOPE_NCCL(ncclGroupEnd());
    }
    const OpKind op = kernels::op_kind(s_.calls[static_cast<std::size_t>(st.call)].args.op);
    for (std::size_t i = 0; i < st.transfers.size(); ++i) {
      const Transfer& t = st.transfers[i];
      if (is_signal(t)) {  // its byte has arrived: the signal's record ends there
        if (o_.record_events && t.src.rank != t.dst.rank) {
          COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(t.dst.rank)));
          if (auto s = clock_.stop(world_.stream(t.dst.rank), timed[i]); !s) return s;
        }
        continue;
      }
      const std::int32_t r = t.dst.rank;
      cudaStream_t stream = world_.stream(r);
      COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(r)));
      const bool received = t.src.rank != r && t.action != Action::compute;
      if (o_.record_events && !received)
        if (auto s = clock_.start(stream, k, static_cast<std::int32_t>(i), r, world_.device_of(r)); !s) return s;
      const void* from = t.src.rank == r ? static_cast<const void*>(world_.ptr(t.src))
                                         : static_cast<const std::uint8_t*>(world_.staging(r)) + slot[i];
      switch (t.action) {
        case Action::copy:
          COLLSCOPE_CUDA(launch_copy(world_.ptr(t.dst), from, t.count * e, stream));
          break;
        case Action::reduce:
          COLLSCOPE_CUDA(launch_reduce(s_.dtype, op, world_.ptr(t.dst), from, t.count, stream));
          break;
        case Action::reduce_copy:  // aux is on this rank: only the source travels
          COLLSCOPE_CUDA(launch_reduce_copy(s_.dtype, op, world_.ptr(t.dst), world_.ptr(t.aux), from, t.count, stream));
          break;
        case Action::scale:
          COLLSCOPE_CUDA(launch_scale(s_.dtype, world_.ptr(t.dst), t.count, t.divisor, stream));
          break;
        case Action::compute:
          COLLSCOPE_CUDA(launch_busy(t.duration_us, stream, world_.abort_flag()));
          break;
      }
      for (const Fault& f : o_.faults)
        if (f.kind == Fault::Kind::corrupt && f.step == k && f.rank == t.src.rank && t.src.rank != r && t.count)
          COLLSCOPE_CUDA(launch_flip(world_.ptr(t.dst), world_.esize(), stream));
      if (o_.record_events)
        if (auto s = received ? clock_.stop(stream, timed[i]) : clock_.stop(stream); !s) return s;
    }
    return ok_status();
  }

  // Waits for every stream, watching NCCL for asynchronous errors; a parked rank (an
  // injected crash or hang) fails the run after park_patience_s.
  Status wait() {
    const auto start = Clock::now();
    const double limit_s = std::max(kTimeoutSeconds, o_.timeout_s);
    const auto deadline = start + std::chrono::duration<double>(limit_s);
    for (std::int32_t r = 0; r < s_.ranks; ++r) {
      for (;;) {
        COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(r)));
        const cudaError_t q = cudaStreamQuery(world_.stream(r));
        if (q == cudaSuccess) break;
        if (q != cudaErrorNotReady) return abort_with(cuda_error(q, "cudaStreamQuery", __FILE__, __LINE__));
        for (ncclComm_t c : comms_) {
          ncclResult_t async = ncclSuccess;
          if (ncclCommGetAsyncError(c, &async) == ncclSuccess && async != ncclSuccess)
            return abort_with(nccl_error(async, "ncclCommGetAsyncError", __FILE__, __LINE__));
        }
        if (parked_ && std::chrono::duration<double>(Clock::now() - start).count() >= park_patience_s(*parked_, o_)) {
          std::vector<std::int32_t> waiting;
          for (std::int32_t other = 0; other < s_.ranks; ++other) {
            COLLSCOPE_CUDA(cudaSetDevice(world_.device_of(other)));
            if (cudaStreamQuery(world_.stream(other)) == cudaErrorNotReady) waiting.push_back(other);
          }
          return abort_with(park_error(s_, *parked_, waiting, o_));
        }
        if (o_.timeout_s > 0 && Clock::now() > deadline)
          return abort_with(make_error("backend.timeout",
                                       "rank " + std::to_string(r) + " did not finish within " +
                                           std::to_string(static_cast<int>(limit_s)) + " s",
                                       "a peer may have failed; set NCCL_DEBUG=WARN and run again", {},
                                       ExitCode::backend_failure));
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    return world_.synchronize();
  }

  // Aborts the communicators (NCCL's kernels stop waiting for peers), releases parked
  // streams, lets every stream drain, and keeps the error: the session runs nothing more.
  Error abort_with(Error e) {
    // The flag first: aborting the last communicator waits for the kernels NCCL put on
    // the ranks' streams, and on a parked rank those wait behind the park.
    world_.raise_abort();
    for (ncclComm_t& c : comms_)
      if (c) {
        ncclCommAbort(c);
        c = nullptr;
      }
    (void)world_.synchronize();
    failure_ = e;
    return e;
  }

  std::vector<ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const GpuProbe& probe) {
#if defined(COLLSCOPE_HAVE_MPI)
  // Under a launcher with several processes: one process per GPU (nccl_processes.cpp).
  if (const auto l = processes::from_environment(); l.launched && l.size > 1) return make_nccl_process_backend(probe);
#endif
  return std::make_unique<GpuBackend<NcclSession>>(probe, "nccl", "NCCL send/recv per step, one rank per GPU",
                                                   BackendCapabilities{"nccl", false, true, false});
}

}  // namespace collscope::gpu
