// Basic vocabulary shared by every layer: element types, reduction operators
// and the collectives collscope knows about.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collscope {

enum class DType : std::uint8_t { int8, uint8, int32, int64, float16, bfloat16, float32, float64 };
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };
// Each collective has a descriptor (collective.h) that says everything else about it;
// a new one is added here, to kAllCollectives, and as a descriptor in ir/collectives/.
enum class Collective : std::uint8_t {
  broadcast,
  reduce,
  allreduce,
  scatter,
  gather,
  allgather,
  reduce_scatter,
  alltoall,
  alltoallv,
  barrier,
};

inline constexpr DType kAllDTypes[] = {DType::int8,    DType::uint8,    DType::int32,   DType::int64,
                                       DType::float16, DType::bfloat16, DType::float32, DType::float64};
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                             ReduceOp::avg};
inline constexpr Collective kAllCollectives[] = {
    Collective::broadcast, Collective::reduce,    Collective::allreduce,      Collective::scatter,
    Collective::gather,    Collective::allgather, Collective::reduce_scatter, Collective::alltoall,
    Collective::alltoallv, Collective::barrier};

std::string_view name_of(DType t);
std::string_view name_of(ReduceOp op);
std::string_view name_of(Collective c);
std::optional<DType> parse_dtype(std::string_view s);
std::optional<ReduceOp> parse_reduce_op(std::string_view s);
std::optional<Collective> parse_collective(std::string_view s);

std::size_t size_of(DType t);
bool is_floating(DType t);
// Bits of precision: integers up to 2^p are exact in this type (63 for the integer types).
int precision_bits(DType t);

// From the collective's descriptor (collective.h): does it combine values with a
// reduction operator? Does it have a root rank?
bool is_reducing(Collective c);
bool has_root(Collective c);

}  // namespace collscope
