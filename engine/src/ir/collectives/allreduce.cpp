// allreduce: every rank receives the reduction of every rank's buffer.
//
//   before               after
//   rank 0: a0 a1        rank 0: a0+b0+c0  a1+b1+c1
//   rank 1: b0 b1        rank 1: a0+b0+c0  a1+b1+c1
//   rank 2: c0 c1        rank 2: a0+b0+c0  a1+b1+c1
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t) { return {a.count, a.count}; }
// A ring moves 2(n-1)/n of the buffer in and out of every rank: reduce-scatter, then all-gather.
double bus(std::int32_t n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; }

// The reduction is the same on every rank: computed once, copied to the others.
void reference(const CollArgs& a, ReferenceBuilder& out) {
  out.reduce(0, 0, 0, a.ranks, 0, a.count);
  for (std::int32_t g = 1; g < a.ranks; ++g) out.same_as(g, 0, 0, 0, a.count);
}

}  // namespace

const CollectiveDescriptor& allreduce() {
  static const CollectiveDescriptor d{
      .coll = Collective::allreduce,
      .name = "allreduce",
      .definition = "every rank receives the element-wise reduction of every rank's buffer",
      .reducing = true,
      .rooted = false,
      .moves_data = true,
      .synchronizes = false,
      .in_place = true,
      .out_of_place = true,
      .count_of = CountOf::send,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = at_start,
      .message_count = one_block,
      .bus_factor = bus,
      .postcondition = reduced_element_i,  // on every rank
      .reference = reference,
      .nccl = {"ncclAllReduce", NcclForm::reducing},
      .mpi = {"MPI_Allreduce", kMpiReduction, MpiInPlace::send_in_place},
  };
  return d;
}

}  // namespace collscope::collectives
