// The nccl backend across processes (nccl_processes.cpp): one process per GPU under a
// launcher, bootstrapped over MPI.
#pragma once

#include <memory>

#include "../cuda/probe.h"
#include "collscope/backend.h"

namespace collscope::gpu {

std::unique_ptr<Backend> make_nccl_process_backend(const GpuProbe& probe);

}  // namespace collscope::gpu
