// One small descriptor per collective, like nccl-tests' per-collective files:
// buffer sizes from count and ranks, in-place rules and the bus-bandwidth factor.
//
// `count` follows NCCL:
//   allreduce, broadcast, reduce : elements per rank
//   gather, allgather            : elements each rank sends
//   scatter, reduce_scatter      : elements each rank receives
//   alltoall                     : elements per peer block
//   barrier                      : unused (0)
#pragma once

#include <cstdint>

#include "collscope/types.h"

namespace collscope {

struct CollectiveShape {
  // Elements the input / output buffer of `rank` must hold (0 = not used on that rank).
  std::uint64_t in_count = 0;
  std::uint64_t out_count = 0;
};

CollectiveShape shape_of(Collective c, std::int32_t ranks, std::int32_t rank, std::int32_t root, std::uint64_t count);

bool supports_in_place(Collective c);
bool supports_out_of_place(Collective c);

// Bytes of the message as nccl-tests counts it (for algbw) and the factor that turns
// algbw into busbw (allreduce 2(n-1)/n, allgather/reduce_scatter/alltoall (n-1)/n, else 1).
std::uint64_t message_bytes(Collective c, std::int32_t ranks, std::uint64_t count, DType t);
double bus_factor(Collective c, std::int32_t ranks);

}  // namespace collscope
