// What the CUDA runtime says about this machine, for `collscope list` and for
// refusing GPU backends cleanly.
#pragma once

#include <string>

namespace collscope {

struct GpuProbe {
  int devices = 0;
  std::string problem;  // empty when the runtime answered
};

GpuProbe probe_gpus();

}  // namespace collscope
