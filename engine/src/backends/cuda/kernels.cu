// Transfer kernels. Each thread walks a grid-stride loop over 16-byte vectors from the
// first 16-byte boundary all of a kernel's pointers reach together (offsets that differ
// by a multiple of 16 bytes: buffers come from cudaMalloc), and over single
// elements for the head before it and the tail after it, so every count and offset is
// handled exactly (vector_split.h). Head, middle and tail are one kernel: a transfer is
// one launch. (With 8 ranks sharing one H200 a launch costs the host about 5 us, and
// chunks of a buffer split 3 ways start off the boundary: three launches a transfer made
// a 3-rank all-reduce twice as slow as its transfers' count says; bench/RESULTS.md.)
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

// The grid-stride loop's start and step for this thread.
__device__ inline std::uint64_t first_index() {
  return blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
}
__device__ inline std::uint64_t stride() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }

// Copies `split.head` bytes one by one, then `split.vecs` 16-byte vectors, then
// `split.tail` bytes.
__global__ void copy_split(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src, VectorSplit split) {
  for (std::uint64_t i = first_index(); i < split.head; i += stride()) dst[i] = src[i];
  if (split.vecs > 0) {
    auto* d = reinterpret_cast<uint4*>(dst + split.head);
    const auto* s = reinterpret_cast<const uint4*>(src + split.head);
    for (std::uint64_t i = first_index(); i < split.vecs; i += stride()) d[i] = s[i];
  }
  const std::uint64_t done = split.head + split.vecs * 16;
  for (std::uint64_t i = first_index(); i < split.tail; i += stride()) dst[done + i] = src[done + i];
}

// Reduce-copy, dst[i] = aux[i] op src[i] with aux the left operand: vectors of 16 bytes
// hold 16 / sizeof(T) elements, combined one by one. aux may be dst itself (a reduce,
// dst = dst op src: every element is read before the same thread writes it), so only
// src, which never overlaps dst, is declared __restrict__.
// Head and tail element by element, the middle in vectors (split in elements of T).
template <class T, OpKind K>
__global__ void reduce_copy_split(T* dst, const T* aux, const T* __restrict__ src, VectorSplit split) {
  constexpr int kPer = 16 / sizeof(T);
  for (std::uint64_t i = first_index(); i < split.head; i += stride()) dst[i] = combine<T>(K, aux[i], src[i]);
  if (split.vecs > 0) {
    auto* d = reinterpret_cast<uint4*>(dst + split.head);
    const auto* a4 = reinterpret_cast<const uint4*>(aux + split.head);
    const auto* s4 = reinterpret_cast<const uint4*>(src + split.head);
    for (std::uint64_t i = first_index(); i < split.vecs; i += stride()) {
      uint4 a = a4[i];
      const uint4 b = s4[i];
      T* x = reinterpret_cast<T*>(&a);
      const T* y = reinterpret_cast<const T*>(&b);
#pragma unroll
      for (int j = 0; j < kPer; ++j) x[j] = combine<T>(K, x[j], y[j]);
      d[i] = a;
    }
  }
  const std::uint64_t done = split.head + split.vecs * kPer;
  for (std::uint64_t i = first_index(); i < split.tail; i += stride())
    dst[done + i] = combine<T>(K, aux[done + i], src[done + i]);
}

template <class T>
__global__ void scale_elems(T* dst, std::uint64_t n, std::uint32_t divisor) {
  for (std::uint64_t i = first_index(); i < n; i += stride()) dst[i] = divide<T>(dst[i], divisor);
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
  // Head element by element up to the 16-byte boundary, middle 16 bytes per access, tail.
  const VectorSplit v = split(dst, aux, src, n, sizeof(T));
  reduce_copy_split<T, K><<<blocks_for(std::max({v.head, v.vecs, v.tail})), kThreads, 0, stream>>>(
      static_cast<T*>(dst), static_cast<const T*>(aux), static_cast<const T*>(src), v);
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
  // Head byte by byte up to the 16-byte boundary, middle 16 bytes per access, tail.
  const VectorSplit v = split(dst, src, bytes, 1);
  copy_split<<<blocks_for(std::max({v.head, v.vecs, v.tail})), kThreads, 0, stream>>>(
      static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), v);
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
