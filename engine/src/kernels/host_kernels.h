// The cpu backend's transfer kernels: copy, reduce (dst = dst op src), reduce-copy
// (dst = aux op src) and scale,
// for every dtype. Plain loops over typed pointers that the compiler vectorises (the
// reduce built a second time for AVX2 in wide_kernels.h, and for half precision, whose
// conversions it cannot vectorise, half_kernels.h, each where the cpu has it).
#pragma once

#include <cstdint>
#include <cstring>

#include "collscope/elementwise.h"
#include "collscope/schedule.h"
#include "kernels/half_kernels.h"
#include "kernels/wide_kernels.h"

namespace collscope::kernels {

inline OpKind op_kind(ReduceOp op) {
  switch (op) {
    case ReduceOp::prod:
      return OpKind::prod;
    case ReduceOp::min:
      return OpKind::min;
    case ReduceOp::max:
      return OpKind::max;
    default:
      return OpKind::sum;  // sum, and avg (divided at the end)
  }
}

// Always inlined, as reduce_typed: wide_kernels.cpp builds them into its AVX2 function.
template <class T, OpKind K>
[[gnu::always_inline]] inline void reduce_loop(T* __restrict dst, const T* __restrict src, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) dst[i] = combine<T>(K, dst[i], src[i]);
}

template <class T, OpKind K>
void reduce_copy_loop(T* __restrict dst, const T* __restrict aux, const T* __restrict src, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) dst[i] = combine<T>(K, aux[i], src[i]);
}

template <class T>
void reduce_copy_typed(OpKind k, void* dst, const void* aux, const void* src, std::uint64_t n) {
  T* d = static_cast<T*>(dst);
  const T* a = static_cast<const T*>(aux);
  const T* s = static_cast<const T*>(src);
  switch (k) {
    case OpKind::sum:
      reduce_copy_loop<T, OpKind::sum>(d, a, s, n);
      break;
    case OpKind::prod:
      reduce_copy_loop<T, OpKind::prod>(d, a, s, n);
      break;
    case OpKind::min:
      reduce_copy_loop<T, OpKind::min>(d, a, s, n);
      break;
    case OpKind::max:
      reduce_copy_loop<T, OpKind::max>(d, a, s, n);
      break;
  }
}

template <class T>
[[gnu::always_inline]] inline void reduce_typed(OpKind k, void* dst, const void* src, std::uint64_t n) {
  T* d = static_cast<T*>(dst);
  const T* s = static_cast<const T*>(src);
  switch (k) {
    case OpKind::sum:
      reduce_loop<T, OpKind::sum>(d, s, n);
      break;
    case OpKind::prod:
      reduce_loop<T, OpKind::prod>(d, s, n);
      break;
    case OpKind::min:
      reduce_loop<T, OpKind::min>(d, s, n);
      break;
    case OpKind::max:
      reduce_loop<T, OpKind::max>(d, s, n);
      break;
  }
}

template <class T>
void scale_typed(void* dst, std::uint64_t n, std::uint32_t divisor) {
  T* d = static_cast<T*>(dst);
  for (std::uint64_t i = 0; i < n; ++i) d[i] = divide<T>(d[i], divisor);
}

// Calls f.template operator()<T>() with T the storage type of dtype t.
template <class F>
void with_type(DType t, F&& f) {
  switch (t) {
    case DType::int8:
      f.template operator()<std::int8_t>();
      break;
    case DType::uint8:
      f.template operator()<std::uint8_t>();
      break;
    case DType::int32:
      f.template operator()<std::int32_t>();
      break;
    case DType::int64:
      f.template operator()<std::int64_t>();
      break;
    case DType::float16:
      f.template operator()<f16>();
      break;
    case DType::bfloat16:
      f.template operator()<bf16>();
      break;
    case DType::float32:
      f.template operator()<float>();
      break;
    case DType::float64:
      f.template operator()<double>();
      break;
  }
}

// float16 and bfloat16 sums and products go eight at a time where the cpu can
// (half_kernels.h), and the other dtypes' reductions in place 32 bytes at a time
// (wide_kernels.h), with the same bits as the loops here.
inline void reduce_bytes(DType t, OpKind k, void* dst, const void* src, std::uint64_t n) {
  if (half_combine(t, k, dst, nullptr, src, n) || wide_reduce(t, k, dst, src, n)) return;
  with_type(t, [&]<class T>() { reduce_typed<T>(k, dst, src, n); });
}

// dst = aux op src; aux and src must not overlap dst.
inline void reduce_copy_bytes(DType t, OpKind k, void* dst, const void* aux, const void* src, std::uint64_t n) {
  if (half_combine(t, k, dst, aux, src, n)) return;
  with_type(t, [&]<class T>() { reduce_copy_typed<T>(k, dst, aux, src, n); });
}

// The element-wise loops alone (what half_combine must match, bit for bit).
inline void reduce_bytes_elementwise(DType t, OpKind k, void* dst, const void* src, std::uint64_t n) {
  with_type(t, [&]<class T>() { reduce_typed<T>(k, dst, src, n); });
}
inline void reduce_copy_bytes_elementwise(DType t, OpKind k, void* dst, const void* aux, const void* src,
                                          std::uint64_t n) {
  with_type(t, [&]<class T>() { reduce_copy_typed<T>(k, dst, aux, src, n); });
}

inline void scale_bytes(DType t, void* dst, std::uint64_t n, std::uint32_t divisor) {
  with_type(t, [&]<class T>() { scale_typed<T>(dst, n, divisor); });
}

}  // namespace collscope::kernels
