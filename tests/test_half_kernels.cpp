// Half-precision reductions eight at a time (kernels/half_kernels.h) against the
// element-wise loops they replace: the same bits for every length, operator, in place
// or not, on values that exercise every path of the conversions (subnormals, overflow to
// infinity, rounding ties, NaNs, signed zeros).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "collscope/elementwise.h"
#include "kernels/half_kernels.h"
#include "kernels/host_kernels.h"
#include "kernels/switches.h"

using namespace collscope;

namespace {

bool is_nan(DType t, std::uint16_t v) { return t == DType::float16 ? (v & 0x7fff) > 0x7c00 : (v & 0x7fff) > 0x7f80; }

// Bit patterns: a third anything at all, a third small (subnormals and their
// neighbours), a third near the largest finite values, and a few fixed specials.
std::vector<std::uint16_t> values(DType t, std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> any(0, 0xffff), small(0, 0x0fff), pick(0, 9);
  const std::uint16_t big = t == DType::float16 ? 0x7800 : 0x7f00;
  const std::uint16_t specials[] = {0x0000,
                                    0x8000,
                                    0x0001,
                                    0x8001,
                                    big,
                                    static_cast<std::uint16_t>(big | 0x8000),
                                    static_cast<std::uint16_t>(t == DType::float16 ? 0x7c00 : 0x7f80),
                                    static_cast<std::uint16_t>(t == DType::float16 ? 0xfc00 : 0xff80)};
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) {
    const int k = pick(rng);
    if (k < 3) x = static_cast<std::uint16_t>(any(rng));
    else if (k < 6) x = static_cast<std::uint16_t>(small(rng) | (any(rng) & 0x8000));
    else if (k < 9) x = static_cast<std::uint16_t>((big + (any(rng) & 0x03ff)) | (any(rng) & 0x8000));
    else x = specials[static_cast<std::size_t>(any(rng)) % std::size(specials)];
  }
  return v;
}

}  // namespace

TEST_CASE("half kernels: eight at a time, the same bits as the element-wise loop") {
  std::mt19937 rng(20261204);
  int fast = 0;
  for (DType t : {DType::float16, DType::bfloat16})
    for (OpKind k : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max})
      for (std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000}) {
        CAPTURE(static_cast<int>(t));
        CAPTURE(static_cast<int>(k));
        CAPTURE(n);
        for (int round = 0; round < 8; ++round) {
          auto a = values(t, n, rng), b = values(t, n, rng);
          // Where both inputs are NaNs the scalar sum may take either one's sign (the
          // compiler may swap the operands of a commutative add); one NaN is enough to
          // check that NaNs come out as elementwise.h writes them.
          for (std::size_t i = 0; i < n; ++i)
            if (is_nan(t, a[i]) && is_nan(t, b[i])) b[i] = 0x3c00;
          // dst = dst op src, in place.
          auto want = a, got = a;
          kernels::reduce_bytes_elementwise(t, k, want.data(), b.data(), n);
          const bool handled = kernels::half_combine(t, k, got.data(), nullptr, b.data(), n);
          if (!handled) kernels::reduce_bytes_elementwise(t, k, got.data(), b.data(), n);
          fast += handled;
          for (std::size_t i = 0; i < n; ++i) {
            CAPTURE(i);
            CAPTURE(a[i]);
            CAPTURE(b[i]);
            REQUIRE(got[i] == want[i]);
          }
          // dst = aux op src, through the kernel the backends call.
          std::vector<std::uint16_t> want2(n, 0x1234), got2(n, 0x4321);
          kernels::reduce_copy_bytes_elementwise(t, k, want2.data(), a.data(), b.data(), n);
          kernels::reduce_copy_bytes(t, k, got2.data(), a.data(), b.data(), n);
          for (std::size_t i = 0; i < n; ++i) {
            CAPTURE(i);
            REQUIRE(got2[i] == want2[i]);
          }
          // And reduce_bytes itself, in place.
          auto got3 = a;
          kernels::reduce_bytes(t, k, got3.data(), b.data(), n);
          CHECK(got3 == want);
        }
      }
  // Where the cpu converts half precision in hardware (x86-64 with AVX2 and F16C: every
  // one of the last ten years) sums and products of 8 elements or more take the fast path.
  if (kernels::half_simd(DType::float16) && kernels::half_simd(DType::bfloat16)) CHECK(fast > 0);
  if (kernels::switched_on("COLLSCOPE_NO_HALF_SIMD")) {
    CHECK_FALSE(kernels::half_simd(DType::float16));
    CHECK_FALSE(kernels::half_simd(DType::bfloat16));
  } else {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) CHECK(kernels::half_simd(DType::bfloat16));
#endif
  }
  CHECK_FALSE(kernels::half_simd(DType::float32));
}
