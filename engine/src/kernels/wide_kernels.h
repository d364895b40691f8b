// Sums, products, minima and maxima in place (dst = dst op src) of int8, uint8, int32,
// int64, float32 and float64 32 bytes at a time, where the cpu has AVX2: the very loop of
// host_kernels.h, built a second time for AVX2 and chosen at run time, so a binary built
// for any x86-64 uses the wider registers where they exist. The same bits as that loop
// (each element combined on its own: only the width of the registers differs). On the
// machine of bench/RESULTS.md ("Reductions 32 bytes at a time") a sum in a core's cache
// ran 1.25x faster (45 GB/s against 36), and 8-rank pairwise reduce-scatters of 64 KiB
// to 1 MiB 1.15-1.54x.
// A reduce-copy (dst = aux op src) stays on the loop for any x86-64: built for AVX2 it ran
// no faster in the cache and slower from memory there.
#pragma once

#include <cstdint>

#include "collscope/elementwise.h"
#include "collscope/types.h"

namespace collscope::kernels {

// dst = dst op src for n elements of t. False where this cpu or dtype is not handled here
// (float16 and bfloat16 are half_kernels.h's), or COLLSCOPE_NO_WIDE_SIMD is set (to
// anything but 0 or nothing): the caller runs the loop of host_kernels.h.
bool wide_reduce(DType t, OpKind k, void* dst, const void* src, std::uint64_t n);

// Whether wide_reduce takes the reductions of `t` on this cpu.
bool wide_simd(DType t);

}  // namespace collscope::kernels
