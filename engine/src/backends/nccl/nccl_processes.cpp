// The nccl backend across processes, as nccl-tests runs: one process per GPU, started by
// a launcher (mpirun -np 8 collscope run FILE --backend nccl). Rank 0 makes NCCL's unique
// id, MPI broadcasts it, and every process joins the communicator (ncclCommInitRank) on
// the GPU of its rank within its node. MPI is only the bootstrap and the way the report
// comes together on rank 0 (collscope/processes.h); the data moves through NCCL.
//
// Each process holds its own rank's buffers. A step is one NCCL group of the sends and
// receives this rank takes part in (receives land in staging), then our kernels copy or
// reduce into place, all on one stream, so that the stream order carries every
// dependency; fast mode enqueues the whole run and waits once, observable mode waits and
// meets the other processes after every step. Per-transfer timings are not recorded in
// this mode: the report gives the run's time.
//
// Waiting polls the stream and ncclCommGetAsyncError; past the timeout the communicator
// is aborted and the run fails (exit 3), and the process leaves as every process of a
// failed job does (processes::finish).
#if defined(COLLSCOPE_HAVE_MPI)

#include "nccl_processes.h"

#include <mpi.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../cuda/check.h"
#include "../cuda/kernels.h"
#include "backends/mpi/job.h"
#include "collscope/processes.h"
#include "ir/digest.h"
#include "kernels/host_kernels.h"
#include "nccl_types.h"

namespace collscope::gpu {

namespace {

#define COLLSCOPE_NCCL_RANK(call)                                                                                \
  do {                                                                                                           \
    const ncclResult_t collscope_nccl_r = (call);                                                                \
    if (collscope_nccl_r != ncclSuccess)                                                                         \
      return make_error("backend.nccl", std::string(#call) + " failed: " + ncclGetErrorString(collscope_nccl_r), \
                        "set NCCL_DEBUG=WARN for NCCL's own explanation", {}, ExitCode::backend_failure);        \
  } while (0)

class NcclRankSession final : public Session {
 public:
  NcclRankSession(const Schedule& s, const SessionOptions& o, int devices) : s_(s), o_(o), devices_(devices) {}
  ~NcclRankSession() override {
    if (abort_host_) __atomic_store_n(abort_host_, 1, __ATOMIC_SEQ_CST);
    if (comm_) (failed_ ? ncclCommAbort(comm_) : ncclCommDestroy(comm_));
    if (stream_) cudaStreamSynchronize(stream_);
    for (void* p : buf_)
      if (p) cudaFree(p);
    if (staging_) cudaFree(staging_);
    if (stream_) cudaStreamDestroy(stream_);
    if (abort_host_) cudaFreeHost(abort_host_);
  }

  Status start() {
    if (auto st = mpi::join(); !st) return st;
    mpi::Job& j = mpi::job();
    std::string options = "nccl; timeout " + std::to_string(o_.timeout_s);
    for (const Fault& f : o_.faults) options += " " + fault_text(f);
    if (auto st =
            processes::agree(digest_more(schedule_digest(s_), options), "schedule \"" + schedule_summary(s_) + "\"");
        !st)
      return st;
    if (s_.ranks != j.size)
      return make_error(
          "processes.size",
          "the run has " + std::to_string(s_.ranks) + " ranks but the job has " + std::to_string(j.size) +
              " processes: the nccl backend across processes runs one rank per process",
          "start the job with as many processes as ranks (mpirun -np " + std::to_string(s_.ranks) + " ...)");
    me_ = j.rank;
    device_ = j.node_rank % std::max(1, devices_);
    esize_ = size_of(s_.dtype);
    // Where every rank runs, for the report: its node and GPU.
    std::vector<int> devs(static_cast<std::size_t>(j.size));
    MPI_Allgather(&device_, 1, MPI_INT, devs.data(), 1, MPI_INT, j.world);
    for (std::int32_t r = 0; r < j.size; ++r)
      labels_.push_back(j.node_names[static_cast<std::size_t>(j.node_of[static_cast<std::size_t>(r)])] + " · GPU " +
                        std::to_string(devs[static_cast<std::size_t>(r)]));

    COLLSCOPE_CUDA(cudaSetDevice(device_));
    COLLSCOPE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    COLLSCOPE_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&abort_host_), sizeof(int), cudaHostAllocMapped));
    *abort_host_ = 0;
    COLLSCOPE_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&abort_device_), abort_host_, 0));
    for (const auto& b : s_.buffers) {
      void* p = nullptr;
      const std::uint64_t bytes = b.count[static_cast<std::size_t>(me_)] * esize_;
      if (bytes) {
        COLLSCOPE_CUDA(cudaMalloc(&p, bytes));
        COLLSCOPE_CUDA(cudaMemset(p, 0, bytes));
      }
      buf_.push_back(p);
    }
    // Staging: room for everything this rank receives in one step, and a byte per signal.
    std::uint64_t most = 16;
    for (const auto& st : s_.steps) {
      std::uint64_t need = 0;
      for (const auto& t : st.transfers)
        if (t.dst.rank == me_ && t.src.rank != me_ && t.action != Action::compute)
          need += std::max<std::uint64_t>(1, t.count * esize_);
      most = std::max(most, need);
    }
    COLLSCOPE_CUDA(cudaMalloc(&staging_, most));

    ncclUniqueId id;
    if (me_ == 0) COLLSCOPE_NCCL_RANK(ncclGetUniqueId(&id));
    COLLSCOPE_MPI_CALL(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, j.world));
    COLLSCOPE_NCCL_RANK(ncclCommInitRank(&comm_, s_.ranks, id, me_));
    // One clock: the same origin on every process, through the offsets to rank 0.
    if (auto st = mpi::estimate_clocks(); !st) return st;
    double origin0 = mpi::steady_us();
    COLLSCOPE_MPI_CALL(MPI_Bcast(&origin0, 1, MPI_DOUBLE, 0, j.world));
    origin_us_ = origin0 + j.clock_offset_us;
    return ok_status();
  }

  std::string device_label(std::int32_t rank) const override { return labels_[static_cast<std::size_t>(rank)]; }
  bool hosts(std::int32_t rank) const override { return rank == me_; }
  bool reporting() const override { return me_ == 0; }

  Status write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) override {
    if (rank != me_ || !bytes) return ok_status();
    COLLSCOPE_CUDA(cudaSetDevice(device_));
    COLLSCOPE_CUDA(cudaMemcpy(buf_[static_cast<std::size_t>(buf)], data, bytes, cudaMemcpyHostToDevice));
    return ok_status();
  }

  // Another process's rank comes to rank 0 over MPI.
  Status read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) override {
    if (failure_) return *failure_;
    mpi::Job& j = mpi::job();
    if (rank == me_ && bytes) {
      COLLSCOPE_CUDA(cudaSetDevice(device_));
      COLLSCOPE_CUDA(cudaMemcpy(data, buf_[static_cast<std::size_t>(buf)], bytes, cudaMemcpyDeviceToHost));
    }
    if (!bytes || (rank == me_) == (me_ == 0)) return ok_status();
    for (std::uint64_t at = 0; at < bytes;) {
      const auto n = static_cast<int>(std::min<std::uint64_t>(bytes - at, 1ull << 30));
      auto* p = static_cast<std::uint8_t*>(data) + at;
      if (rank == me_) COLLSCOPE_MPI_CALL(MPI_Send(p, n, MPI_BYTE, 0, 15, j.control));
      else COLLSCOPE_MPI_CALL(MPI_Recv(p, n, MPI_BYTE, rank, 15, j.control, MPI_STATUS_IGNORE));
      at += static_cast<std::uint64_t>(n);
    }
    return ok_status();
  }

  Result<std::vector<std::string>> share(const std::string& mine) override {
    mpi::Job& j = mpi::job();
    const auto n = static_cast<std::size_t>(j.size);
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(n), at(n, 0);
    COLLSCOPE_MPI_CALL(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, j.world));
    int total = 0;
    for (std::size_t p = 0; p < n; ++p) at[p] = total, total += lens[p];
    std::string all(static_cast<std::size_t>(total), '\0');
    COLLSCOPE_MPI_CALL(
        MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), at.data(), MPI_CHAR, j.world));
    std::vector<std::string> out;
    for (std::size_t p = 0; p < n; ++p)
      out.push_back(all.substr(static_cast<std::size_t>(at[p]), static_cast<std::size_t>(lens[p])));
    return out;
  }

  Status run_step(std::int32_t k) override {
    if (failure_) return *failure_;
    if (auto st = enqueue(k); !st) return fail(st.error());
    if (auto st = wait(); !st) return st;
    COLLSCOPE_MPI_CALL(MPI_Barrier(mpi::job().world));  // every rank finished the step
    return ok_status();
  }

  Status run_all(std::int32_t iterations) override {
    if (failure_) return *failure_;
    const double t0 = now_us();
    for (std::int32_t it = 0; it < iterations; ++it)
      for (std::int32_t k = 0; k < static_cast<std::int32_t>(s_.steps.size()); ++k)
        if (auto st = enqueue(k); !st) return fail(st.error());
    if (auto st = wait(); !st) return st;
    double window[2] = {t0, now_us()}, latest[2] = {0, 0};
    COLLSCOPE_MPI_CALL(MPI_Allreduce(window, latest, 2, MPI_DOUBLE, MPI_MAX, mpi::job().world));
    last_us_ = std::max(0.0, latest[1] - latest[0]);
    return ok_status();
  }

  double last_run_us() const override { return last_us_; }
  std::vector<TransferTiming> take_events() override { return {}; }
  double now_us() const override { return mpi::steady_us() - origin_us_; }
  std::string detail() const override {
    int v = 0;
    ncclGetVersion(&v);
    return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100) +
           ", one process per GPU (" + mpi::job().version + " bootstrap)";
  }

 private:
  std::uint8_t* ptr(const Loc& l) const {
    return static_cast<std::uint8_t*>(buf_[static_cast<std::size_t>(l.buf)]) + l.offset * esize_;
  }

  Status enqueue(std::int32_t k) {
    const Step& st = s_.steps[static_cast<std::size_t>(k)];
    COLLSCOPE_CUDA(cudaSetDevice(device_));
    for (const Fault& f : o_.faults) {
      if (f.rank != me_ || f.step != k) continue;
      if (f.kind == Fault::Kind::delay)
        COLLSCOPE_CUDA(launch_busy(static_cast<std::uint64_t>(f.ms) * 1000, stream_, abort_device_));
      if (f.kind == Fault::Kind::hang) COLLSCOPE_CUDA(launch_park(abort_device_, stream_));
      if (f.kind == Fault::Kind::crash) {
        // What came before the step is done; then the process dies, as a crash ends it.
        cudaStreamSynchronize(stream_);
        _exit(static_cast<int>(ExitCode::backend_failure));
      }
    }
    const Call& call = s_.calls[static_cast<std::size_t>(st.call)];
    if (st.native) return enqueue_native(k, call.args);
    // Where each transfer this rank receives lands in staging.
    std::vector<std::uint64_t> slot(st.transfers.size(), 0);
    std::uint64_t used = 0;
    bool any = false;
    for (std::size_t i = 0; i < st.transfers.size(); ++i) {
      const Transfer& t = st.transfers[i];
      if (t.action == Action::compute || t.src.rank == t.dst.rank) continue;
      if (t.src.rank == me_ || t.dst.rank == me_) any = true;
      if (t.dst.rank != me_) continue;
      slot[i] = used;
      used += std::max<std::uint64_t>(1, t.count * esize_);
    }
    if (any) {
      COLLSCOPE_NCCL_RANK(ncclGroupStart());
      for (std::size_t i = 0; i < st.transfers.size(); ++i) {
        const Transfer& t = st.transfers[i];
        if (t.action == Action::compute || t.src.rank == t.dst.rank) continue;
        const bool signal = is_signal(t);
        const std::uint64_t bytes = signal ? 1 : t.count * esize_;
        if (t.src.rank == me_)
          COLLSCOPE_NCCL_RANK(ncclSend(signal ? staging_ : ptr(t.src), bytes, ncclUint8, t.dst.rank, comm_, stream_));
        if (t.dst.rank == me_)
          COLLSCOPE_NCCL_RANK(
              ncclRecv(static_cast<std::uint8_t*>(staging_) + slot[i], bytes, ncclUint8, t.src.rank, comm_, stream_));
      }
      COLLSCOPE_NCCL_RANK(ncclGroupEnd());
    }
    const OpKind op = kernels::op_kind(call.args.op);
    for (std::size_t i = 0; i < st.transfers.size(); ++i) {
      const Transfer& t = st.transfers[i];
      if (t.dst.rank != me_ || is_signal(t)) continue;
      const void* from = t.src.rank == me_ ? static_cast<const void*>(ptr(t.src))
                                           : static_cast<const std::uint8_t*>(staging_) + slot[i];
      switch (t.action) {
        case Action::copy:
          COLLSCOPE_CUDA(launch_copy(ptr(t.dst), from, t.count * esize_, stream_));
          break;
        case Action::reduce:
          COLLSCOPE_CUDA(launch_reduce(s_.dtype, op, ptr(t.dst), from, t.count, stream_));
          break;
        case Action::reduce_copy:
          COLLSCOPE_CUDA(launch_reduce_copy(s_.dtype, op, ptr(t.dst), ptr(t.aux), from, t.count, stream_));
          break;
        case Action::scale:
          COLLSCOPE_CUDA(launch_scale(s_.dtype, ptr(t.dst), t.count, t.divisor, stream_));
          break;
        case Action::compute:
          COLLSCOPE_CUDA(launch_busy(t.duration_us, stream_, abort_device_));
          break;
      }
      for (const Fault& f : o_.faults)
        if (f.kind == Fault::Kind::corrupt && f.step == k && f.rank == t.src.rank && t.src.rank != me_ && t.count)
          COLLSCOPE_CUDA(launch_flip(ptr(t.dst), esize_, stream_));
    }
    return ok_status();
  }

  // NCCL's own collective on this rank's buffers (every rank of the world: groups need
  // communicators of their own, which this mode does not make).
  Status enqueue_native(std::int32_t k, const CollArgs& a) {
    if (!a.world_rank.empty() || a.ranks != s_.ranks)
      return make_error("backend.native_unsupported", "algorithm \"nccl\" runs on every rank, not on a group",
                        "use one of our algorithms for collectives on groups", {}, ExitCode::bad_input);
    std::uint8_t* in =
        a.in_buf >= 0 && buf_[static_cast<std::size_t>(a.in_buf)]
            ? static_cast<std::uint8_t*>(buf_[static_cast<std::size_t>(a.in_buf)]) + a.in_offset(me_) * esize_
            : nullptr;
    std::uint8_t* out =
        a.out_buf >= 0 && buf_[static_cast<std::size_t>(a.out_buf)]
            ? static_cast<std::uint8_t*>(buf_[static_cast<std::size_t>(a.out_buf)]) + a.out_offset(me_) * esize_
            : nullptr;
    for (const Fault& f : o_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == k && f.rank == me_ && in && a.count)
        COLLSCOPE_CUDA(launch_flip(in, esize_, stream_));
    const auto n = static_cast<std::size_t>(a.count);
    const ncclDataType_t type = nccl_type(s_.dtype);
    const ncclRedOp_t op = nccl_op(a.op);
    switch (a.coll) {
      case Collective::allreduce:
        COLLSCOPE_NCCL_RANK(ncclAllReduce(in, out, n, type, op, comm_, stream_));
        break;
      case Collective::broadcast:
        COLLSCOPE_NCCL_RANK(ncclBroadcast(in, out, n, type, a.root, comm_, stream_));
        break;
      case Collective::reduce:
        COLLSCOPE_NCCL_RANK(ncclReduce(in, out, n, type, op, a.root, comm_, stream_));
        break;
      case Collective::allgather:
        COLLSCOPE_NCCL_RANK(ncclAllGather(in, out, n, type, comm_, stream_));
        break;
      case Collective::reduce_scatter:
        COLLSCOPE_NCCL_RANK(ncclReduceScatter(in, out, n, type, op, comm_, stream_));
        break;
      case Collective::alltoall:
        COLLSCOPE_NCCL_RANK(ncclAlltoAll(in, out, n, type, comm_, stream_));
        break;
      case Collective::gather:
        COLLSCOPE_NCCL_RANK(ncclGather(in, out, n, type, a.root, comm_, stream_));
        break;
      case Collective::scatter:
        COLLSCOPE_NCCL_RANK(ncclScatter(in, out, n, type, a.root, comm_, stream_));
        break;
      case Collective::alltoallv:  // NCCL has none (its descriptor says), so never lowered to a native step
      case Collective::barrier:
        break;
    }
    return ok_status();
  }

  // Waits for the stream, watching NCCL for asynchronous errors; past the timeout (60 s
  // at least, as in one process) the communicator is aborted.
  Status wait() {
    const auto start = std::chrono::steady_clock::now();
    const double limit_s = std::max(60.0, o_.timeout_s);
    COLLSCOPE_CUDA(cudaSetDevice(device_));
    for (;;) {
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) return ok_status();
      if (q != cudaErrorNotReady) return fail(cuda_error(q, "cudaStreamQuery", __FILE__, __LINE__));
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(comm_, &async) == ncclSuccess && async != ncclSuccess)
        return fail(make_error("backend.nccl", std::string("NCCL failed: ") + ncclGetErrorString(async),
                               "set NCCL_DEBUG=WARN for NCCL's own explanation", {}, ExitCode::backend_failure));
      if (o_.timeout_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit_s)
        return fail(make_error("backend.timeout",
                               "rank " + std::to_string(me_) + " did not finish within " +
                                   std::to_string(static_cast<int>(limit_s)) + " s",
                               "a peer may have failed; set NCCL_DEBUG=WARN and run again", {},
                               ExitCode::backend_failure));
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  // The run is over: the stream is released, the communicator aborted, and the job
  // cannot meet again (processes::finish exits at once).
  Error fail(Error e) {
    if (abort_host_) __atomic_store_n(abort_host_, 1, __ATOMIC_SEQ_CST);
    failed_ = true;
    mpi::job().failed = true;
    failure_ = e;
    return e;
  }

  const Schedule& s_;
  SessionOptions o_;
  int devices_ = 1, device_ = 0;
  std::int32_t me_ = 0;
  std::size_t esize_ = 1;
  std::vector<std::string> labels_;
  std::vector<void*> buf_;
  void* staging_ = nullptr;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  int* abort_host_ = nullptr;
  int* abort_device_ = nullptr;
  double origin_us_ = 0;
  double last_us_ = 0;
  bool failed_ = false;
  std::optional<Error> failure_;
};

class NcclRankBackend final : public Backend {
 public:
  explicit NcclRankBackend(GpuProbe p) : probe_(std::move(p)) {}
  BackendInfo info() const override {
    return {"nccl", "NCCL, one process per GPU (started by a launcher)", probe_.devices > 0, probe_.problem,
            BackendCapabilities{"nccl", false, true, true}};
  }
  Result<std::unique_ptr<Session>> open(const Schedule& s, const SessionOptions& o) const override {
    if (probe_.devices <= 0)
      return make_error("backend.unavailable", "backend \"nccl\" is not available: " + probe_.problem,
                        "use --backend cpu, or see `collscope list`", {}, ExitCode::backend_failure);
    auto session = std::make_unique<NcclRankSession>(s, o, probe_.devices);
    if (auto st = session->start(); !st) return st.error();
    return std::unique_ptr<Session>(std::move(session));
  }

 private:
  GpuProbe probe_;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_process_backend(const GpuProbe& probe) {
  return std::make_unique<NcclRankBackend>(probe);
}

}  // namespace collscope::gpu

#endif  // COLLSCOPE_HAVE_MPI
