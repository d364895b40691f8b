#include "world.h"

#include "check.h"

namespace collscope::gpu {

DeviceWorld::~DeviceWorld() {
  // Best effort: a failing device cannot make the destructor fail. Nothing may stay
  // parked, and the flag that parked and busy kernels read is freed last.
  raise_abort();
  (void)synchronize();
  for (std::size_t r = 0; r < buf_.size(); ++r) {
    cudaSetDevice(device_of(static_cast<std::int32_t>(r)));
    for (void* p : buf_[r])
      if (p) cudaFree(p);
    if (r < staging_.size() && staging_[r]) cudaFree(staging_[r]);
    if (r < stream_.size() && stream_[r]) cudaStreamDestroy(stream_[r]);
    if (r < compute_.size() && compute_[r]) cudaStreamDestroy(compute_[r]);
  }
  if (abort_host_) cudaFreeHost(abort_host_);
}

Status DeviceWorld::settle(int device) const {
  COLLSCOPE_CUDA(cudaSetDevice(device));
  COLLSCOPE_CUDA(cudaDeviceSynchronize());
  return ok_status();
}

Status DeviceWorld::open(const Schedule& s, int devices, const std::vector<std::uint64_t>& staging) {
  devices_ = devices > 0 ? devices : 1;
  esize_ = size_of(s.dtype);
  // Portable and mapped: every GPU's kernels can read it, the host writes it.
  COLLSCOPE_CUDA(
      cudaHostAlloc(reinterpret_cast<void**>(&abort_host_), sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  *abort_host_ = 0;
  COLLSCOPE_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&abort_device_), abort_host_, 0));
  const auto R = static_cast<std::size_t>(s.ranks);
  // Peer access between every pair of GPUs that allows it.
  peer_.assign(static_cast<std::size_t>(devices_) * static_cast<std::size_t>(devices_), 0);
  for (int a = 0; a < devices_; ++a) {
    peer_[static_cast<std::size_t>(a) * static_cast<std::size_t>(devices_) + static_cast<std::size_t>(a)] = 1;
    for (int b = 0; b < devices_; ++b) {
      if (a == b) continue;
      int can = 0;
      COLLSCOPE_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) continue;
      COLLSCOPE_CUDA(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        return cuda_error(e, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
      cudaGetLastError();  // clear "already enabled"
      peer_[static_cast<std::size_t>(a) * static_cast<std::size_t>(devices_) + static_cast<std::size_t>(b)] = 1;
    }
  }
  buf_.assign(R, {});
  staging_.assign(R, nullptr);
  stream_.assign(R, nullptr);
  compute_.assign(R, nullptr);
  for (std::size_t r = 0; r < R; ++r) {
    COLLSCOPE_CUDA(cudaSetDevice(device_of(static_cast<std::int32_t>(r))));
    COLLSCOPE_CUDA(cudaStreamCreateWithFlags(&stream_[r], cudaStreamNonBlocking));
    COLLSCOPE_CUDA(cudaStreamCreateWithFlags(&compute_[r], cudaStreamNonBlocking));
    for (const auto& b : s.buffers) {
      const std::uint64_t bytes = b.count[r] * esize_;
      void* p = nullptr;
      if (bytes) {
        COLLSCOPE_CUDA(cudaMalloc(&p, bytes));
        COLLSCOPE_CUDA(cudaMemset(p, 0, bytes));
      }
      buf_[r].push_back(p);
    }
    if (r < staging.size() && staging[r]) COLLSCOPE_CUDA(cudaMalloc(&staging_[r], staging[r]));
  }
  // The memsets ran on the legacy default stream, which the ranks' non-blocking streams
  // do not wait for: finish them before anything is enqueued.
  for (int g = 0; g < devices_; ++g)
    if (auto st = settle(g); !st) return st;
  return ok_status();
}

Status DeviceWorld::write(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) {
  if (!bytes) return ok_status();
  COLLSCOPE_CUDA(cudaSetDevice(device_of(rank)));
  COLLSCOPE_CUDA(cudaMemcpy(buf_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)], data, bytes,
                            cudaMemcpyHostToDevice));
  // From pageable memory cudaMemcpy may return before the data reached the device, and
  // the ranks' non-blocking streams would not wait for it.
  return settle(device_of(rank));
}

Status DeviceWorld::read(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) {
  if (!bytes) return ok_status();
  COLLSCOPE_CUDA(cudaSetDevice(device_of(rank)));
  // The legacy default stream does not wait for the rank's non-blocking streams.
  COLLSCOPE_CUDA(cudaStreamSynchronize(stream_[static_cast<std::size_t>(rank)]));
  COLLSCOPE_CUDA(cudaStreamSynchronize(compute_[static_cast<std::size_t>(rank)]));
  COLLSCOPE_CUDA(cudaMemcpy(data, buf_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)], bytes,
                            cudaMemcpyDeviceToHost));
  return ok_status();
}

Status DeviceWorld::synchronize() {
  // Every stream, even after one failed (an abort drains everything); the first error
  // is the one reported.
  cudaError_t first = cudaSuccess;
  const char* call = nullptr;
  for (std::size_t r = 0; r < stream_.size(); ++r) {
    cudaSetDevice(device_of(static_cast<std::int32_t>(r)));
    for (cudaStream_t s : {stream_[r], compute_[r]}) {
      if (!s) continue;
      const cudaError_t e = cudaStreamSynchronize(s);
      if (e != cudaSuccess && first == cudaSuccess) {
        first = e;
        call = "cudaStreamSynchronize";
      }
    }
  }
  if (first != cudaSuccess) return cuda_error(first, call, __FILE__, __LINE__);
  return ok_status();
}

}  // namespace collscope::gpu
