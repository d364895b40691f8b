// The element-wise operations shared by the backends and the numeric reference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>

#include "collscope/elementwise.h"

using namespace collscope;

TEST_CASE("elementwise: float16 round-trips every finite pattern and rounds to nearest even") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const f16 h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (std::isnan(f)) {
      CHECK(std::isnan(to_float(to_f16(f))));
      continue;
    }
    REQUIRE(to_f16(f).bits == h.bits);
  }
  CHECK(to_float(to_f16(2049.0f)) == 2048.0f);  // tie -> even
  CHECK(to_float(to_f16(2051.0f)) == 2052.0f);  // tie -> even (upwards)
  CHECK(to_float(to_f16(65520.0f)) == INFINITY);
  CHECK(to_float(to_f16(65519.0f)) == 65504.0f);
  CHECK(to_float(to_f16(std::ldexp(1.0f, -24))) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(to_float(to_f16(std::ldexp(1.0f, -25))) == 0.0f);                   // tie -> even (zero)
  CHECK(to_float(to_f16(std::ldexp(1.5f, -25))) == std::ldexp(1.0f, -24));
}

TEST_CASE("elementwise: bfloat16 keeps 8 bits and rounds to nearest even") {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const bf16 h{static_cast<std::uint16_t>(b)};
    const float f = to_float(h);
    if (std::isnan(f)) continue;
    REQUIRE(to_bf16(f).bits == h.bits);
  }
  CHECK(to_float(to_bf16(257.0f)) == 256.0f);
  CHECK(to_float(to_bf16(259.0f)) == 260.0f);
  CHECK(to_float(combine<bf16>(OpKind::sum, to_bf16(256.0f), to_bf16(1.0f))) == 256.0f);
}

TEST_CASE("elementwise: integer sum and prod wrap, min and max, average truncates") {
  CHECK(combine<std::int8_t>(OpKind::sum, 100, 100) == static_cast<std::int8_t>(-56));
  CHECK(combine<std::uint8_t>(OpKind::prod, 16, 17) == static_cast<std::uint8_t>(16));
  CHECK(combine<std::int64_t>(OpKind::sum, INT64_MAX, 1) == INT64_MIN);
  CHECK(combine<std::int32_t>(OpKind::min, -3, 2) == -3);
  CHECK(combine<std::int32_t>(OpKind::max, -3, 2) == 2);
  CHECK(divide<std::int32_t>(-7, 2) == -3);
  CHECK(divide<float>(7.0f, 2) == 3.5f);
  CHECK(to_float(divide<f16>(to_f16(7.0f), 4)) == 1.75f);
}

TEST_CASE("elementwise: min and max propagate NaN") {
  const double nan = std::nan("");
  CHECK(std::isnan(combine<double>(OpKind::min, 1.0, nan)));
  CHECK(std::isnan(combine<double>(OpKind::max, 1.0, nan)));
  CHECK(std::isnan(combine<double>(OpKind::max, nan, 1.0)));
}
