#include "probe.h"

#include <cuda_runtime_api.h>

namespace collscope {

GpuProbe probe_gpus() {
  GpuProbe p;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaErrorNoDevice) {
    p.problem = "no CUDA device";
  } else if (e == cudaErrorInsufficientDriver) {
    p.problem = "no CUDA driver";
  } else if (e != cudaSuccess) {
    p.problem = std::string("CUDA runtime: ") + cudaGetErrorString(e);
  } else if (n == 0) {
    p.problem = "no CUDA device";
  } else {
    p.devices = n;
  }
  return p;
}

}  // namespace collscope
