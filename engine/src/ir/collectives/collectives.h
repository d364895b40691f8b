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

}  // namespace collscope::collectives
