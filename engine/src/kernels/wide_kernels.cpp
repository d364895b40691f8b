// See wide_kernels.h.
#include "kernels/wide_kernels.h"

#include "kernels/host_kernels.h"
#include "kernels/switches.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define COLLSCOPE_WIDE_SIMD 1
#else
#define COLLSCOPE_WIDE_SIMD 0
#endif

namespace collscope::kernels {

namespace {

#if COLLSCOPE_WIDE_SIMD

// COLLSCOPE_NO_WIDE_SIMD=1: the loop as built for any x86-64 instead (the baseline of
// bench/RESULTS.md's comparison, in the same binary); =0 as unset, so that both sides of
// that comparison run with environments of one size (the environment's size moves the
// stack, and on that machine moved 64 MiB all-reduces by up to 6% where nothing else
// differed). Read once.
bool simd_off() {
  static const bool off = switched_on("COLLSCOPE_NO_WIDE_SIMD");
  return off;
}

bool handled(DType t) {
  return t == DType::int8 || t == DType::uint8 || t == DType::int32 || t == DType::int64 || t == DType::float32 ||
         t == DType::float64;
}

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");  // the cpu has it and the system saves its registers
  return yes;
}

// host_kernels.h's reduce, inlined here and so vectorised for AVX2.
template <class T>
__attribute__((target("avx2"))) void reduce_avx2(OpKind k, void* dst, const void* src, std::uint64_t n) {
  reduce_typed<T>(k, dst, src, n);
}

#endif

}  // namespace

bool wide_simd(DType t) {
#if COLLSCOPE_WIDE_SIMD
  return handled(t) && !simd_off() && have_avx2();
#else
  (void)t;
  return false;
#endif
}

bool wide_reduce(DType t, OpKind k, void* dst, const void* src, std::uint64_t n) {
  if (!wide_simd(t)) return false;
#if COLLSCOPE_WIDE_SIMD
  with_type(t, [&]<class T>() {
    if constexpr (sizeof(T) != 2) reduce_avx2<T>(k, dst, src, n);
  });
  return true;
#else
  (void)k, (void)dst, (void)src, (void)n;
  return false;
#endif
}

}  // namespace collscope::kernels
