// The memory bandwidth of one GPU as cudaMemcpy and our own kernels see it: the ceiling
// that GPU-backend numbers are read against (`collscope bench --backend cuda|nccl`
// prints it, as it prints memcpy's for the cpu backend).
#pragma once

#include <cstdint>
#include <string>

#include "collscope/result.h"

namespace collscope {

struct DeviceBandwidth {
  std::string device;       // the GPU's name
  std::uint64_t bytes = 0;  // buffer size measured
  // Bytes of destination written per second, best of several runs:
  double memcpy_gbps = 0;         // cudaMemcpyAsync, device to device
  double copy_kernel_gbps = 0;    // our vectorized copy kernel
  double reduce_kernel_gbps = 0;  // our reduce kernel (float32 sum: dst = dst + src)
  // Memory traffic per byte written: 2 for the copies (read, write), 3 for the reduce
  // (read both, write one). Traffic bandwidth = gbps x this.
  static constexpr double kCopyTraffic = 2, kReduceTraffic = 3;
};

// Measures GPU 0 with buffers of `bytes`. Fails (backend.unavailable, exit 3) without a
// CUDA build or a GPU.
Result<DeviceBandwidth> probe_device_bandwidth(std::uint64_t bytes);

}  // namespace collscope
