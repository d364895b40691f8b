// The GPU backends this build can offer (docs/ARCHITECTURE.md, "Backends").
#pragma once

#include <memory>

#include "collscope/backend.h"
#include "probe.h"

namespace collscope::gpu {

// Our kernels; available when the probe found at least one GPU.
std::unique_ptr<Backend> make_cuda_backend(const GpuProbe& probe);
// NCCL send/recv per step (and NCCL's own collectives); one communicator per GPU.
std::unique_ptr<Backend> make_nccl_backend(const GpuProbe& probe);

}  // namespace collscope::gpu
