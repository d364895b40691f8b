// The descriptors of ../../include/collscope/collective.h, one file per collective,
// and the few pieces several of them share.
#pragma once

#include <cstdint>

#include "collscope/collective.h"
#include "collscope/schedule.h"

namespace collscope::collectives {

const CollectiveDescriptor& broadcast();
const CollectiveDescriptor& reduce();
const CollectiveDescriptor& allreduce();
const CollectiveDescriptor& scatter();
const CollectiveDescriptor& gather();
const CollectiveDescriptor& allgather();
const CollectiveDescriptor& reduce_scatter();
const CollectiveDescriptor& alltoall();
const CollectiveDescriptor& alltoallv();
const CollectiveDescriptor& barrier();

inline std::uint64_t ranks_of(const CollArgs& a) { return static_cast<std::uint64_t>(a.ranks); }

// In place, input and output start at the beginning of the buffer.
inline std::uint64_t at_start(const CollArgs&, std::int32_t) { return 0; }

// nccl-tests' busbw factors: one rank has nothing to move.
inline double bus_one(std::int32_t) { return 1.0; }
inline double bus_all_but_one(std::int32_t n) { return n > 1 ? static_cast<double>(n - 1) / n : 0.0; }

// Group rank g's block of a buffer of one block per rank.
inline std::uint64_t block(const CollArgs& a, std::int32_t g) { return static_cast<std::uint64_t>(g) * a.count; }

// The elements of the call's message (nccl-tests' "size"): one block, or one block
// per rank.
inline std::uint64_t one_block(const CollArgs& a) { return a.count; }
inline std::uint64_t block_per_rank(const CollArgs& a) { return a.count * ranks_of(a); }

// Postconditions more than one collective has:
// output element i is element i of every rank's input, reduced (allreduce, reduce);
inline ExpectedElement reduced_element_i(const CollArgs& a, std::int32_t, std::uint64_t i) {
  return {0, a.ranks, i, a.count - i};
}
// output element i is element i % count of rank i / count's input: block s of the
// output comes from rank s (allgather, gather).
inline ExpectedElement block_s_from_rank_s(const CollArgs& a, std::int32_t, std::uint64_t i) {
  if (a.count == 0) return {};
  const auto s = static_cast<std::int32_t>(i / a.count);
  const std::uint64_t at = i % a.count;
  return {s, s + 1, at, a.count - at};
}

// The argument lists of MPI's calls, by form:
// (sendbuf, count, type, recvbuf, count, type, comm): MPI_Allgather, MPI_Alltoall;
inline constexpr MpiArg kMpiSendRecv[] = {MpiArg::sendbuf, MpiArg::count,    MpiArg::datatype, MpiArg::recvbuf,
                                          MpiArg::count,   MpiArg::datatype, MpiArg::comm};
// the same with a root before comm: MPI_Gather, MPI_Scatter;
inline constexpr MpiArg kMpiSendRecvRoot[] = {MpiArg::sendbuf, MpiArg::count,    MpiArg::datatype, MpiArg::recvbuf,
                                              MpiArg::count,   MpiArg::datatype, MpiArg::root,     MpiArg::comm};
// (sendbuf, recvbuf, count, type, op, comm): MPI_Allreduce, MPI_Reduce_scatter_block.
inline constexpr MpiArg kMpiReduction[] = {MpiArg::sendbuf,  MpiArg::recvbuf, MpiArg::count,
                                           MpiArg::datatype, MpiArg::op,      MpiArg::comm};

}  // namespace collscope::collectives
