// probe_device_bandwidth: cudaMemcpy against our copy and reduce kernels on GPU 0,
// timed with CUDA events, best of several runs.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <functional>

#include "check.h"
#include "collscope/device_probe.h"
#include "kernels.h"
#include "probe.h"

namespace collscope {

namespace {

// Device buffers and events released on every path.
struct Scratch {
  void* a = nullptr;
  void* b = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~Scratch() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
    if (a) cudaFree(a);
    if (b) cudaFree(b);
  }
};

}  // namespace

Result<DeviceBandwidth> probe_device_bandwidth(std::uint64_t bytes) {
  const GpuProbe gpus = probe_gpus();
  if (gpus.devices == 0)
    return make_error("backend.unavailable", "no GPU to measure: " + gpus.problem, "see `collscope list`", {},
                      ExitCode::backend_failure);
  bytes = std::max<std::uint64_t>(16, bytes / 16 * 16);
  DeviceBandwidth out;
  out.bytes = bytes;
  COLLSCOPE_CUDA(cudaSetDevice(0));
  cudaDeviceProp prop{};
  COLLSCOPE_CUDA(cudaGetDeviceProperties(&prop, 0));
  out.device = prop.name;
  Scratch s;
  COLLSCOPE_CUDA(cudaMalloc(&s.a, bytes));
  COLLSCOPE_CUDA(cudaMalloc(&s.b, bytes));
  COLLSCOPE_CUDA(cudaMemset(s.a, 0, bytes));
  COLLSCOPE_CUDA(cudaMemset(s.b, 0, bytes));
  COLLSCOPE_CUDA(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking));
  COLLSCOPE_CUDA(cudaEventCreate(&s.start));
  COLLSCOPE_CUDA(cudaEventCreate(&s.stop));

  // Best bytes-written-per-second of 2 warm-up and 10 timed launches.
  auto best_of = [&](const std::function<cudaError_t()>& launch, double& gbps) -> Status {
    for (int i = 0; i < 2; ++i) COLLSCOPE_CUDA(launch());
    for (int i = 0; i < 10; ++i) {
      COLLSCOPE_CUDA(cudaEventRecord(s.start, s.stream));
      COLLSCOPE_CUDA(launch());
      COLLSCOPE_CUDA(cudaEventRecord(s.stop, s.stream));
      COLLSCOPE_CUDA(cudaEventSynchronize(s.stop));
      float ms = 0;
      COLLSCOPE_CUDA(cudaEventElapsedTime(&ms, s.start, s.stop));
      if (ms > 0) gbps = std::max(gbps, static_cast<double>(bytes) / (static_cast<double>(ms) * 1e6));
    }
    return ok_status();
  };
  if (auto st = best_of([&] { return cudaMemcpyAsync(s.b, s.a, bytes, cudaMemcpyDeviceToDevice, s.stream); },
                        out.memcpy_gbps);
      !st)
    return st.error();
  if (auto st = best_of([&] { return gpu::launch_copy(s.b, s.a, bytes, s.stream); }, out.copy_kernel_gbps); !st)
    return st.error();
  if (auto st = best_of([&] { return gpu::launch_reduce(DType::float32, OpKind::sum, s.b, s.a, bytes / 4, s.stream); },
                        out.reduce_kernel_gbps);
      !st)
    return st.error();
  return out;
}

}  // namespace collscope
