// What both GPU backends share: every rank's buffers in device memory (rank r on GPU
// r mod G, several ranks per GPU allowed), a stream per rank (and one for its compute
// spans), peer access where the GPUs allow it, and copies to and from the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope::gpu {

class DeviceWorld {
 public:
  DeviceWorld() = default;
  ~DeviceWorld();
  DeviceWorld(const DeviceWorld&) = delete;
  DeviceWorld& operator=(const DeviceWorld&) = delete;

  // Allocates every rank's buffers (cudaMalloc, never managed memory) and streams.
  // `staging[r]`: bytes of staging space rank r needs (0 = none).
  Status open(const Schedule& s, int devices, const std::vector<std::uint64_t>& staging);

  int device_of(std::int32_t rank) const { return rank % devices_; }
  std::string label(std::int32_t rank) const { return "GPU " + std::to_string(device_of(rank)); }
  std::uint8_t* ptr(const Loc& l) const {
    return static_cast<std::uint8_t*>(buf_[static_cast<std::size_t>(l.rank)][static_cast<std::size_t>(l.buf)]) +
           l.offset * esize_;
  }
  // Start of a whole buffer (nullptr when the rank holds none of it).
  void* buffer(std::int32_t rank, std::int32_t buf) const {
    return buf < 0 ? nullptr : buf_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)];
  }
  void* staging(std::int32_t rank) const { return staging_[static_cast<std::size_t>(rank)]; }
  cudaStream_t stream(std::int32_t rank) const { return stream_[static_cast<std::size_t>(rank)]; }
  cudaStream_t compute_stream(std::int32_t rank) const { return compute_[static_cast<std::size_t>(rank)]; }
  // Can a kernel on rank d's GPU read rank s's memory directly?
  bool direct(std::int32_t d, std::int32_t s) const {
    return peer_[static_cast<std::size_t>(device_of(d)) * static_cast<std::size_t>(devices_) +
                 static_cast<std::size_t>(device_of(s))] != 0;
  }
  std::size_t esize() const { return esize_; }
  int devices() const { return devices_; }

  Status write(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes);
  Status read(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes);
  // Waits for every stream (all of them, even after an error; the first error is kept).
  Status synchronize();
  // Waits for everything on one GPU, the legacy default stream included.
  Status settle(int device) const;

  // A flag in pinned host memory that kernels read: raised when a run is aborted, it
  // releases parked streams and cuts busy kernels short. Created by open().
  const int* abort_flag() const { return abort_device_; }
  void raise_abort() const {
    if (abort_host_) __atomic_store_n(abort_host_, 1, __ATOMIC_SEQ_CST);
  }

 private:
  int devices_ = 1;
  std::size_t esize_ = 1;
  std::vector<std::vector<void*>> buf_;  // [rank][buffer]
  std::vector<void*> staging_;
  std::vector<cudaStream_t> stream_, compute_;
  std::vector<char> peer_;  // [device * devices + device]
  int* abort_host_ = nullptr;
  int* abort_device_ = nullptr;
};

}  // namespace collscope::gpu
