// Our transfer kernels (docs/ARCHITECTURE.md, "Backends"): copy, reduce (dst = dst op src), reduce-copy
// (dst = aux op src), scale (finish an average), and the fault and compute helpers,
// launched on a stream.
// The element-wise operation is collscope/elementwise.h, the same definition the cpu
// backend and the numeric reference use.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "collscope/elementwise.h"
#include "collscope/types.h"

namespace collscope::gpu {

// dst[0, bytes) = src[0, bytes): 16-byte accesses where both are aligned, then the tail.
cudaError_t launch_copy(void* dst, const void* src, std::uint64_t bytes, cudaStream_t stream);
// dst[i] = aux[i] op src[i] for n elements of dtype t, aux the left operand: 16-byte
// accesses where all three are aligned, element by element around them. src does not
// overlap dst; aux either is dst itself or does not overlap it.
cudaError_t launch_reduce_copy(DType t, OpKind op, void* dst, const void* aux, const void* src, std::uint64_t n,
                               cudaStream_t stream);
// dst[i] = dst[i] op src[i]: a reduce-copy whose left operand is dst itself.
cudaError_t launch_reduce(DType t, OpKind op, void* dst, const void* src, std::uint64_t n, cudaStream_t stream);
// dst[i] = dst[i] / divisor.
cudaError_t launch_scale(DType t, void* dst, std::uint64_t n, std::uint32_t divisor, cudaStream_t stream);
// Keeps the stream busy for `us` microseconds (compute spans, delay faults), or until
// *abort (host-mapped memory, see DeviceWorld::abort_flag) becomes non-zero.
cudaError_t launch_busy(std::uint64_t us, cudaStream_t stream, const int* abort = nullptr);
// Parks the stream until *abort becomes non-zero: an injected crash or hang, the rank
// never gets past this point on its own.
cudaError_t launch_park(const int* abort, cudaStream_t stream);
// Flips the second-highest bit of the first element of `esize` bytes (corrupt faults,
// as on the cpu backend: no later addition or rounding hides it).
cudaError_t launch_flip(void* dst, std::size_t esize, cudaStream_t stream);

}  // namespace collscope::gpu
