// The kernels' switches (COLLSCOPE_NO_HALF_SIMD, COLLSCOPE_NO_WIDE_SIMD).
#pragma once

#include <cstdlib>
#include <cstring>

namespace collscope::kernels {

// Whether environment variable `name` is set to anything but 0 or nothing (=0 reads as
// unset, so that both sides of a comparison can run with environments of one size:
// bench/wide.sh).
inline bool switched_on(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 && std::strcmp(v, "0") != 0;
}

}  // namespace collscope::kernels
