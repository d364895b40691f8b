// Transfer kernels. Each thread walks a grid-stride loop over 16-byte vectors from the
// first 16-byte boundary all of a kernel's pointers reach together (offsets that differ
// by a multiple of 16 bytes: buffers come from cudaMalloc), and over single
// elements for the head before it and the tail after it, so every count and offset is
// handled exactly (vector_split.h).
#include <algorithm>

#include "kernels.h"
#include "vector_split.h"

namespace collscope::gpu {

namespace {

constexpr int kThreads = 512;

int blocks_for(std::uint64_t items) {
  const std::uint64_t b = (items + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<std::uint64_t>(std::max<std::uint64_t>(b, 1), 4096));
}

__global__ void copy_vec(uint4* __restrict__ dst, const uint4* __restrict__ src, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void copy_bytes(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// Reduce-copy, dst[i] = aux[i] op src[i] with aux the left operand: vectors of 16 bytes
// hold 16 / sizeof(T) elements, combined one by one. aux may be dst itself (a reduce,
// dst = dst op src: every element is read before the same thread writes it), so only
// src, which never overlaps dst, is declared __restrict__.
template <class T, OpKind K>
__global__ void reduce_copy_vec(uint4* dst, const uint4* aux, const uint4* __restrict__ src, std::uint64_t n) {
  constexpr int kPer = 16 / sizeof(T);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    uint4 a = aux[i];
    const uint4 b = src[i];
    T* x = reinterpret_cast<T*>(&a);
    const T* y = reinterpret_cast<const T*>(&b);
#pragma unroll
    for (int j = 0; j < kPer; ++j) x[j] = combine<T>(K, x[j], y[j]);
    dst[i] = a;
  }
}

template <class T, OpKind K>
__global__ void reduce_copy_elems(T* dst, const T* aux, const T* __restrict__ src, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = combine<T>(K, aux[i], src[i]);
}

template <class T>
__global__ void scale_elems(T* dst, std::uint64_t n, std::uint32_t divisor) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    dst[i] = divide<T>(dst[i], divisor);
}

// Spins for `ns` nanoseconds of the GPU's global timer, or until the run is aborted.
__global__ void busy(std::uint64_t ns, const volatile int* abort) {
  std::uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    if (abort && *abort) return;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// An injected crash or hang: the stream gets no further until the run is aborted.
__global__ void park(const volatile int* abort) {
  while (*abort == 0) __nanosleep(100000);
}

__global__ void flip(unsigned char* p) { p[0] ^= 0x40u; }

VectorSplit split(const void* dst, const void* src, std::uint64_t n, std::uint64_t esize) {
  return split_for_vectors(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(src), n, esize);
}

VectorSplit split(const void* dst, const void* aux, const void* src, std::uint64_t n, std::uint64_t esize) {
  return split_for_vectors(reinterpret_cast<std::uintptr_t>(dst), reinterpret_cast<std::uintptr_t>(aux),
                           reinterpret_cast<std::uintptr_t>(src), n, esize);
}

template <class T, OpKind K>
cudaError_t reduce_copy_as(void* dst, const void* aux, const void* src, std::uint64_t n, cudaStream_t stream) {
  constexpr std::uint64_t per = 16 / sizeof(T);
  T* d = static_cast<T*>(dst);
  const T* a = static_cast<const T*>(aux);
  const T* s = static_cast<const T*>(src);
  // Head element by element up to the 16-byte boundary, middle 16 bytes per access, tail.
  const auto [head, vecs, tail] = split(dst, aux, src, n, sizeof(T));
  if (head > 0) reduce_copy_elems<T, K><<<blocks_for(head), kThreads, 0, stream>>>(d, a, s, head);
  if (vecs > 0)
    reduce_copy_vec<T, K><<<blocks_for(vecs), kThreads, 0, stream>>>(reinterpret_cast<uint4*>(d + head),
                                                                     reinterpret_cast<const uint4*>(a + head),
                                                                     reinterpret_cast<const uint4*>(s + head), vecs);
  const std::uint64_t done = head + vecs * per;
  if (tail > 0) reduce_copy_elems<T, K><<<blocks_for(tail), kThreads, 0, stream>>>(d + done, a + done, s + done, tail);
  return cudaGetLastError();
}

template <class T>
cudaError_t reduce_copy_typed(OpKind op, void* dst, const void* aux, const void* src, std::uint64_t n,
                              cudaStream_t stream) {
  switch (op) {
    case OpKind::sum:
      return reduce_copy_as<T, OpKind::sum>(dst, aux, src, n, stream);
    case OpKind::prod:
      return reduce_copy_as<T, OpKind::prod>(dst, aux, src, n, stream);
    case OpKind::min:
      return reduce_copy_as<T, OpKind::min>(dst, aux, src, n, stream);
    case OpKind::max:
      return reduce_copy_as<T, OpKind::max>(dst, aux, src, n, stream);
  }
  return cudaErrorInvalidValue;
}

// Calls F::template run<T>(args...) with T the storage type of dtype t.
template <template <class> class F, class... A>
cudaError_t with_type(DType t, A... args) {
  switch (t) {
    case DType::int8:
      return F<std::int8_t>::run(args...);
    case DType::uint8:
      return F<std::uint8_t>::run(args...);
    case DType::int32:
      return F<std::int32_t>::run(args...);
    case DType::int64:
      return F<std::int64_t>::run(args...);
    case DType::float16:
      return F<f16>::run(args...);
    case DType::bfloat16:
      return F<bf16>::run(args...);
    case DType::float32:
      return F<float>::run(args...);
    case DType::float64:
      return F<double>::run(args...);
  }
  return cudaErrorInvalidValue;
}

template <class T>
struct ReduceCopy {
  static cudaError_t run(OpKind op, void* dst, const void* aux, const void* src, std::uint64_t n, cudaStream_t stream) {
    return reduce_copy_typed<T>(op, dst, aux, src, n, stream);
  }
};

template <class T>
struct Scale {
  static cudaError_t run(void* dst, std::uint64_t n, std::uint32_t divisor, cudaStream_t stream) {
    scale_elems<T><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<T*>(dst), n, divisor);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launch_copy(void* dst, const void* src, std::uint64_t bytes, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // Head byte by byte up to the 16-byte boundary, middle 16 bytes per access, tail.
  const auto [head, vecs, tail] = split(dst, src, bytes, 1);
  if (head > 0) copy_bytes<<<blocks_for(head), kThreads, 0, stream>>>(d, s, head);
  if (vecs > 0)
    copy_vec<<<blocks_for(vecs), kThreads, 0, stream>>>(reinterpret_cast<uint4*>(d + head),
                                                        reinterpret_cast<const uint4*>(s + head), vecs);
  const std::uint64_t done = head + vecs * 16;
  if (tail > 0) copy_bytes<<<blocks_for(tail), kThreads, 0, stream>>>(d + done, s + done, tail);
  return cudaGetLastError();
}

cudaError_t launch_reduce_copy(DType t, OpKind op, void* dst, const void* aux, const void* src, std::uint64_t n,
                               cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type<ReduceCopy>(t, op, dst, aux, src, n, stream);
}

cudaError_t launch_reduce(DType t, OpKind op, void* dst, const void* src, std::uint64_t n, cudaStream_t stream) {
  return launch_reduce_copy(t, op, dst, dst, src, n, stream);
}

cudaError_t launch_scale(DType t, void* dst, std::uint64_t n, std::uint32_t divisor, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return with_type<Scale>(t, dst, n, divisor, stream);
}

cudaError_t launch_busy(std::uint64_t us, cudaStream_t stream, const int* abort) {
  if (us == 0) return cudaSuccess;
  busy<<<1, 1, 0, stream>>>(us * 1000, abort);
  return cudaGetLastError();
}

cudaError_t launch_park(const int* abort, cudaStream_t stream) {
  park<<<1, 1, 0, stream>>>(abort);
  return cudaGetLastError();
}

cudaError_t launch_flip(void* dst, std::size_t esize, cudaStream_t stream) {
  flip<<<1, 1, 0, stream>>>(static_cast<unsigned char*>(dst) + esize - 1);
  return cudaGetLastError();
}

}  // namespace collscope::gpu
