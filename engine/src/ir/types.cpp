// Names and sizes of element types and reduction operators. What a collective is
// (its name included) comes from its descriptor (collective.h, ir/collective.cpp).
#include "collscope/types.h"

#include <array>

namespace collscope {
namespace {
constexpr std::array<std::string_view, 8> kDTypeNames = {"int8",    "uint8",    "int32",   "int64",
                                                         "float16", "bfloat16", "float32", "float64"};
constexpr std::array<std::string_view, 5> kOpNames = {"sum", "prod", "min", "max", "avg"};

template <class E, std::size_t N>
std::optional<E> find_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}
}  // namespace

std::string_view name_of(DType t) { return kDTypeNames[static_cast<std::size_t>(t)]; }
std::string_view name_of(ReduceOp op) { return kOpNames[static_cast<std::size_t>(op)]; }
std::optional<DType> parse_dtype(std::string_view s) { return find_name<DType>(kDTypeNames, s); }
std::optional<ReduceOp> parse_reduce_op(std::string_view s) { return find_name<ReduceOp>(kOpNames, s); }

std::size_t size_of(DType t) {
  switch (t) {
    case DType::int8:
    case DType::uint8:
      return 1;
    case DType::float16:
    case DType::bfloat16:
      return 2;
    case DType::int32:
    case DType::float32:
      return 4;
    case DType::int64:
    case DType::float64:
      return 8;
  }
  return 1;
}

bool is_floating(DType t) {
  return t == DType::float16 || t == DType::bfloat16 || t == DType::float32 || t == DType::float64;
}

int precision_bits(DType t) {
  switch (t) {
    case DType::float16:
      return 11;
    case DType::bfloat16:
      return 8;
    case DType::float32:
      return 24;
    case DType::float64:
      return 53;
    default:
      return 63;
  }
}

}  // namespace collscope
