// One checking macro for every CUDA and NCCL call: a failure becomes the engine's
// error value (exit 3, backend failure) naming the call, what the runtime said, and
// the file and line, and the function returns it.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "collscope/result.h"

namespace collscope::gpu {

inline Error cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  std::string where = file;
  if (const auto slash = where.rfind("engine/"); slash != std::string::npos) where = where.substr(slash);
  return make_error("backend.cuda",
                    std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " +
                        where + ":" + std::to_string(line),
                    "check the GPUs with nvidia-smi; `collscope list` shows what this machine has", {},
                    ExitCode::backend_failure);
}

}  // namespace collscope::gpu

// Evaluates a CUDA runtime call; on failure returns its error from the enclosing
// function (which returns Status or Result<T>).
#define COLLSCOPE_CUDA(call)                                                            \
  do {                                                                                  \
    const cudaError_t collscope_cuda_e = (call);                                        \
    if (collscope_cuda_e != cudaSuccess)                                                \
      return ::collscope::gpu::cuda_error(collscope_cuda_e, #call, __FILE__, __LINE__); \
  } while (0)
