// See half_kernels.h. Each loop converts eight elements of each input to float, combines
// them with one instruction (IEEE, as the scalar `a + b` or `a * b`), rounds back to
// nearest even and rewrites NaNs as to_f16 / to_bf16 do; the last n % 8 elements take
// the element-wise path. Chosen at run time: a binary built for any x86-64 uses them
// where the cpu has them.
#include "kernels/half_kernels.h"

#include "kernels/switches.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define COLLSCOPE_HALF_SIMD 1
#else
#define COLLSCOPE_HALF_SIMD 0
#endif

namespace collscope::kernels {

namespace {

// COLLSCOPE_NO_HALF_SIMD=1: the element-wise loop instead (the baseline of
// bench/RESULTS.md's comparison, in the same binary); =0 (or nothing) as unset, as
// COLLSCOPE_NO_WIDE_SIMD. Read once.
bool simd_off() {
  static const bool off = switched_on("COLLSCOPE_NO_HALF_SIMD");
  return off;
}

template <class T, OpKind K>
void scalar_tail(T* d, const T* a, const T* s, std::uint64_t from, std::uint64_t n) {
  for (std::uint64_t i = from; i < n; ++i) d[i] = combine<T>(K, a[i], s[i]);
}

#if COLLSCOPE_HALF_SIMD

bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");  // the cpu has it and the system saves its registers
  return yes;
}

// F16C from cpuid (leaf 1, ecx bit 29): clang 14's __builtin_cpu_supports does not know it.
bool have_f16c() {
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return have_avx2() && __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
  }();
  return yes;
}

template <OpKind K>
__attribute__((target("avx2"))) inline __m256 combine8(__m256 x, __m256 y) {
  if constexpr (K == OpKind::prod) return _mm256_mul_ps(x, y);
  else return _mm256_add_ps(x, y);
}

template <OpKind K>
__attribute__((target("avx2,f16c"))) void f16_loop(std::uint16_t* d, const std::uint16_t* a, const std::uint16_t* s,
                                                   std::uint64_t n) {
  const __m128i magnitude = _mm_set1_epi16(0x7fff), inf = _mm_set1_epi16(0x7c00);
  const __m128i sign = _mm_set1_epi16(static_cast<short>(0x8000)), quiet = _mm_set1_epi16(0x7e00);
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    __m128i h = _mm256_cvtps_ph(combine8<K>(x, y), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // A NaN keeps its sign and becomes 0x7e00, as to_f16 writes it.
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), inf);
    h = _mm_blendv_epi8(h, _mm_or_si128(_mm_and_si128(h, sign), quiet), nan);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
  scalar_tail<f16, K>(reinterpret_cast<f16*>(d), reinterpret_cast<const f16*>(a), reinterpret_cast<const f16*>(s), i,
                      n);
}

// Eight bfloat16 as floats: each the top half of one.
__attribute__((target("avx2"))) inline __m256 widen_bf16(const std::uint16_t* p) {
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
}

template <OpKind K>
__attribute__((target("avx2"))) void bf16_loop(std::uint16_t* d, const std::uint16_t* a, const std::uint16_t* s,
                                               std::uint64_t n) {
  const __m256i one = _mm256_set1_epi32(1), half = _mm256_set1_epi32(0x7fff);
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  std::uint64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_castps_si256(combine8<K>(widen_bf16(a + i), widen_bf16(s + i)));
    // Round to nearest even, as to_bf16: u + 0x7fff + ((u >> 16) & 1), the top half.
    const __m256i top = _mm256_srli_epi32(u, 16);
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(half, _mm256_and_si256(top, one))), 16);
    // A NaN: its top half with the quiet bit set.
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, magnitude), inf);
    r = _mm256_blendv_epi8(r, _mm256_or_si256(top, quiet), nan);
    // Eight 32-bit values (each below 65536) to eight 16-bit ones, in order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_castsi256_si128(packed));
  }
  scalar_tail<bf16, K>(reinterpret_cast<bf16*>(d), reinterpret_cast<const bf16*>(a), reinterpret_cast<const bf16*>(s),
                       i, n);
}

template <OpKind K>
bool run(DType t, void* dst, const void* aux, const void* src, std::uint64_t n) {
  auto* d = static_cast<std::uint16_t*>(dst);
  const auto* a = static_cast<const std::uint16_t*>(aux ? aux : dst);
  const auto* s = static_cast<const std::uint16_t*>(src);
  if (t == DType::float16 && have_f16c()) {
    f16_loop<K>(d, a, s, n);
    return true;
  }
  if (t == DType::bfloat16 && have_avx2()) {
    bf16_loop<K>(d, a, s, n);
    return true;
  }
  return false;
}

#endif

}  // namespace

bool half_simd(DType t) {
#if COLLSCOPE_HALF_SIMD
  if (simd_off()) return false;
  return t == DType::float16 ? have_f16c() : t == DType::bfloat16 && have_avx2();
#else
  (void)t;
  return false;
#endif
}

bool half_combine(DType t, OpKind k, void* dst, const void* aux, const void* src, std::uint64_t n) {
#if COLLSCOPE_HALF_SIMD
  if (n < 8 || (t != DType::float16 && t != DType::bfloat16) || simd_off()) return false;
  if (k == OpKind::sum) return run<OpKind::sum>(t, dst, aux, src, n);
  if (k == OpKind::prod) return run<OpKind::prod>(t, dst, aux, src, n);
#else
  (void)t, (void)k, (void)dst, (void)aux, (void)src, (void)n;
#endif
  return false;
}

}  // namespace collscope::kernels
