// Buffer shapes and bandwidth factors per collective (see collective.h).
#include "collscope/collective.h"

#include "collscope/schedule.h"

namespace collscope {

CollectiveShape shape_of(Collective c, std::int32_t ranks, std::int32_t rank, std::int32_t root,
                         std::uint64_t count) {
  const auto n = static_cast<std::uint64_t>(ranks);
  const bool is_root = rank == root;
  switch (c) {
    case Collective::allreduce: return {count, count};
    case Collective::broadcast: return {is_root ? count : 0, count};
    case Collective::reduce: return {count, is_root ? count : 0};
    case Collective::scatter: return {is_root ? count * n : 0, count};
    case Collective::gather: return {count, is_root ? count * n : 0};
    case Collective::allgather: return {count, count * n};
    case Collective::reduce_scatter: return {count * n, count};
    case Collective::alltoall: return {count * n, count * n};
    case Collective::barrier: return {0, 0};
  }
  return {};
}

bool supports_in_place(Collective c) { return c != Collective::alltoall && c != Collective::barrier; }
bool supports_out_of_place(Collective c) { return c != Collective::barrier; }

std::uint64_t message_bytes(Collective c, std::int32_t ranks, std::uint64_t count, DType t) {
  // nccl-tests' "size": the larger of the send and receive buffer of one rank.
  const auto n = static_cast<std::uint64_t>(ranks);
  const auto e = static_cast<std::uint64_t>(size_of(t));
  switch (c) {
    case Collective::allgather:
    case Collective::gather:
    case Collective::scatter:
    case Collective::reduce_scatter:
    case Collective::alltoall: return count * n * e;
    default: return count * e;
  }
}

double bus_factor(Collective c, std::int32_t ranks) {
  const double n = ranks;
  switch (c) {
    case Collective::allreduce: return n > 1 ? 2.0 * (n - 1) / n : 0.0;
    case Collective::allgather:
    case Collective::reduce_scatter:
    case Collective::alltoall: return n > 1 ? (n - 1) / n : 0.0;
    default: return 1.0;
  }
}

std::uint64_t CollArgs::in_offset(std::int32_t r) const {
  if (!in_place) return 0;
  // In-place allgather: rank r's input is its own block of the output.
  if (coll == Collective::allgather) return static_cast<std::uint64_t>(r) * count;
  // In-place gather: the root's block sits at root*count of the receive buffer.
  if (coll == Collective::gather && r == root) return static_cast<std::uint64_t>(r) * count;
  return 0;
}

std::uint64_t CollArgs::out_offset(std::int32_t r) const {
  if (!in_place) return 0;
  // In-place reduce_scatter: rank r's result lands in its own block of the input.
  if (coll == Collective::reduce_scatter) return static_cast<std::uint64_t>(r) * count;
  // In-place scatter: the root keeps its block where it already is.
  if (coll == Collective::scatter && r == root) return static_cast<std::uint64_t>(r) * count;
  return 0;
}

}  // namespace collscope
