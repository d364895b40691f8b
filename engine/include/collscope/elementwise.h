// The element-wise operation of a transfer, for every dtype and reduction operator.
//
// One definition shared by the host (cpu backend, numeric reference) and, when it is
// built, device code: everything here is COLLSCOPE_HD (host and device callable) and
// header-only. float16 and bfloat16 are stored as 16-bit patterns and computed in
// float, rounded back to nearest-even after every operation, as GPUs do.
// Integer sum and prod wrap around (two's complement), so their results do not depend
// on the order in which a schedule combines values.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define COLLSCOPE_HD __host__ __device__
#else
#define COLLSCOPE_HD
#endif

namespace collscope {

struct f16 {
  std::uint16_t bits;
};
struct bf16 {
  std::uint16_t bits;
};

COLLSCOPE_HD inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
COLLSCOPE_HD inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

COLLSCOPE_HD inline float to_float(bf16 h) { return bits_float(static_cast<std::uint32_t>(h.bits) << 16); }
COLLSCOPE_HD inline bf16 to_bf16(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<std::uint16_t>((u >> 16) | 0x40)};  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return bf16{static_cast<std::uint16_t>(u >> 16)};
}

COLLSCOPE_HD inline float to_float(f16 h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h.bits & 0x8000u) << 16;
  std::uint32_t exp = (h.bits >> 10) & 0x1fu;
  std::uint32_t man = h.bits & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));  // inf / NaN
  if (exp == 0) {
    if (man == 0) return bits_float(sign);
    // Subnormal: normalise.
    exp = 127 - 15 + 1;
    while (!(man & 0x400u)) {
      man <<= 1;
      --exp;
    }
    man &= 0x3ffu;
    return bits_float(sign | (exp << 23) | (man << 13));
  }
  return bits_float(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

COLLSCOPE_HD inline f16 to_f16(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return f16{static_cast<std::uint16_t>(sign | 0x7e00u)};   // NaN
  if (a >= 0x477ff000u) return f16{static_cast<std::uint16_t>(sign | 0x7c00u)};  // overflow -> inf
  if (a < 0x38800000u) {
    // Subnormal or zero in half: value = a * 2^24 rounded to an integer number of 2^-24 units.
    if (a < 0x33000000u) return f16{sign};  // below half of the smallest subnormal
    // |f| = man * 2^(exp-150); in units of 2^-24 that is man >> (126 - exp).
    const std::uint32_t exp = a >> 23;
    const std::uint32_t man = (a & 0x7fffffu) | 0x800000u;
    const std::uint32_t drop = 126 - exp;  // 14..24
    std::uint32_t q = man >> drop;
    const std::uint32_t rem = man & ((1u << drop) - 1);
    const std::uint32_t halfway = 1u << (drop - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return f16{static_cast<std::uint16_t>(sign | q)};
  }
  // Normal: rebias the exponent and round the mantissa to 10 bits, nearest even.
  std::uint32_t v = a - ((127u - 15u) << 23);
  v += 0xfffu + ((v >> 13) & 1u);
  return f16{static_cast<std::uint16_t>(sign | (v >> 13))};
}

// The reduction operators. `avg` reduces like `sum`; the division happens once at the end.
enum class OpKind : std::uint8_t { sum, prod, min, max };

template <class T>
COLLSCOPE_HD inline T combine(OpKind op, T a, T b) {
  if constexpr (std::is_same_v<T, f16>) {
    return to_f16(combine<float>(op, to_float(a), to_float(b)));
  } else if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(combine<float>(op, to_float(a), to_float(b)));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case OpKind::sum:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case OpKind::prod: {
        // Promote to a wide unsigned type so the multiplication wraps without UB.
        using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
        return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
      }
      case OpKind::min:
        return b < a ? b : a;
      case OpKind::max:
        return a < b ? b : a;
    }
    return a;
  } else {
    switch (op) {
      case OpKind::sum:
        return a + b;
      case OpKind::prod:
        return a * b;
      // NaN propagates, like fmin/fmax would not: a wrong input must stay visible.
      case OpKind::min:
        return (b < a || b != b) ? b : a;
      case OpKind::max:
        return (a < b || b != b) ? b : a;
    }
    return a;
  }
}

// dst / divisor, finishing an average. Integers divide with truncation.
template <class T>
COLLSCOPE_HD inline T divide(T a, std::uint32_t divisor) {
  if constexpr (std::is_same_v<T, f16>) {
    return to_f16(to_float(a) / static_cast<float>(divisor));
  } else if constexpr (std::is_same_v<T, bf16>) {
    return to_bf16(to_float(a) / static_cast<float>(divisor));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::int64_t>(a) / static_cast<std::int64_t>(divisor));
  } else {
    return a / static_cast<T>(divisor);
  }
}

template <class T>
COLLSCOPE_HD inline double to_double(T v) {
  if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16>) return static_cast<double>(to_float(v));
  else return static_cast<double>(v);
}

template <class T>
COLLSCOPE_HD inline T from_double(double v) {
  if constexpr (std::is_same_v<T, f16>) return to_f16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bf16>) return to_bf16(static_cast<float>(v));
  else if constexpr (std::is_integral_v<T>)
    // Wrap like a two's-complement store of an integer value.
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<std::int64_t>(v)));
  else return static_cast<T>(v);
}

}  // namespace collscope
