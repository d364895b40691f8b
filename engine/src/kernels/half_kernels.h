// float16 and bfloat16 sums and products eight elements at a time, where the cpu converts
// half precision in hardware (x86-64 with AVX2, and F16C for float16): the same bits as
// the element-wise loop of host_kernels.h (each element to float, combined, rounded back
// to nearest even, a NaN written as elementwise.h writes it), many times faster than that
// loop, whose conversions do not vectorise (bench/RESULTS.md, "Half-precision reductions").
#pragma once

#include <cstdint>

#include "collscope/elementwise.h"
#include "collscope/types.h"

namespace collscope::kernels {

// dst = (aux, or dst where aux is null) op src for n elements of t. False where this
// cpu, dtype or operator is not handled here: the caller runs the element-wise loop.
bool half_combine(DType t, OpKind k, void* dst, const void* aux, const void* src, std::uint64_t n);

// Whether half_combine takes sums and products of `t` eight at a time on this cpu (and
// COLLSCOPE_NO_HALF_SIMD is not set).
bool half_simd(DType t);

}  // namespace collscope::kernels
