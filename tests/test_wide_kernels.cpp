// Reductions in place 32 bytes at a time (kernels/wide_kernels.h) against the loop they
// are built from: the same bits for every dtype they take, operator, length (the vector
// body and its tail) and alignment, on values that exercise the edges (for floats: NaNs,
// infinities, signed zeros, subnormals; for integers: wrap-around); and the kernels the
// backends call, reduce-copies included, against the element-wise loops.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collscope/elementwise.h"
#include "kernels/host_kernels.h"
#include "kernels/switches.h"
#include "kernels/wide_kernels.h"

using namespace collscope;

namespace {

std::size_t esize(DType t) { return size_of(t); }

bool is_nan_at(DType t, const unsigned char* p) {
  if (t == DType::float32) {
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
  }
  if (t == DType::float64) {
    double d;
    std::memcpy(&d, p, 8);
    return std::isnan(d);
  }
  return false;
}

// n elements of t as bytes: integers anything at all (sums and products wrap), floats a
// mix of any bit pattern, ordinary values and the specials.
std::vector<unsigned char> values(DType t, std::size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> byte(0, 255), pick(0, 9);
  std::vector<unsigned char> v(n * esize(t));
  for (auto& b : v) b = static_cast<unsigned char>(byte(rng));
  auto put = [&](std::size_t i, auto x) { std::memcpy(v.data() + i * sizeof(x), &x, sizeof(x)); };
  std::uniform_real_distribution<double> real(-1e3, 1e3);
  for (std::size_t i = 0; i < n; ++i) {
    const int k = pick(rng);
    if (k < 4) continue;  // the random bit pattern
    // An ordinary value (k < 8) or one of the specials, as F.
    auto one = [&]<class F>(F) {
      using L = std::numeric_limits<F>;
      const F specials[] = {F(0), -F(0), L::infinity(), -L::infinity(), L::quiet_NaN(), L::denorm_min(), L::max()};
      put(i, k < 8 ? static_cast<F>(real(rng)) : specials[static_cast<std::size_t>(byte(rng)) % std::size(specials)]);
    };
    if (t == DType::float32) one(float{});
    if (t == DType::float64) one(double{});
  }
  return v;
}

}  // namespace

TEST_CASE("wide kernels: 32 bytes at a time, the same bits as the loop they are built from") {
  std::mt19937 rng(20261206);
  int fast = 0;
  for (DType t : {DType::int8, DType::uint8, DType::int32, DType::int64, DType::float32, DType::float64})
    for (OpKind k : {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max})
      for (std::size_t n : {0, 1, 3, 7, 8, 15, 31, 32, 33, 63, 64, 65, 129, 1000, 4099})
        for (std::size_t skew : {0, 1}) {  // the buffers one element off 32-byte alignment
          CAPTURE(static_cast<int>(t));
          CAPTURE(static_cast<int>(k));
          CAPTURE(n);
          CAPTURE(skew);
          const std::size_t e = esize(t), off = skew * e;
          auto a = values(t, n + skew, rng), b = values(t, n + skew, rng);
          // Where both inputs are NaNs a sum may take either one's payload (the compiler
          // may swap the operands of a commutative add); one NaN is enough to check that
          // NaNs come through.
          for (std::size_t i = 0; i < n + skew; ++i)
            if (is_nan_at(t, a.data() + i * e) && is_nan_at(t, b.data() + i * e)) std::memset(b.data() + i * e, 0, e);
          // dst = dst op src, in place.
          auto want = a, got = a;
          kernels::reduce_bytes_elementwise(t, k, want.data() + off, b.data() + off, n);
          const bool wide = kernels::wide_reduce(t, k, got.data() + off, b.data() + off, n);
          CHECK(wide == kernels::wide_simd(t));
          if (!wide) kernels::reduce_bytes_elementwise(t, k, got.data() + off, b.data() + off, n);
          fast += wide;
          REQUIRE(got == want);
          // Through the kernels the backends call: in place, and dst = aux op src.
          auto got3 = a;
          kernels::reduce_bytes(t, k, got3.data() + off, b.data() + off, n);
          CHECK(got3 == want);
          std::vector<unsigned char> want2(a.size(), 0x5a), got2(a.size(), 0x5a);
          kernels::reduce_copy_bytes_elementwise(t, k, want2.data() + off, a.data() + off, b.data() + off, n);
          kernels::reduce_copy_bytes(t, k, got2.data() + off, a.data() + off, b.data() + off, n);
          CHECK(got2 == want2);
        }
  // Half precision is half_kernels.h's; the other dtypes go 32 bytes at a time on every
  // x86-64 cpu with AVX2 (every one of the last ten years) unless switched off.
  CHECK_FALSE(kernels::wide_simd(DType::float16));
  CHECK_FALSE(kernels::wide_simd(DType::bfloat16));
  if (kernels::switched_on("COLLSCOPE_NO_WIDE_SIMD")) {
    CHECK_FALSE(kernels::wide_simd(DType::float32));
    CHECK(fast == 0);
  } else {
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
      CHECK(kernels::wide_simd(DType::float32));
      CHECK(fast > 0);
    }
#endif
  }
}
