// reduce_scatter: the element-wise reduction of every rank's buffer, cut into one
// block per rank; rank r receives block r.
//
//   before                  after
//   rank 0: a0 a1 a2        rank 0: a0+b0+c0
//   rank 1: b0 b1 b2        rank 1: a1+b1+c1
//   rank 2: c0 c1 c2        rank 2: a2+b2+c2
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t) { return {a.count * ranks_of(a), a.count}; }
// In place rank r's result lands in its own block of the input.
std::uint64_t output_at(const CollArgs& a, std::int32_t g) { return block(a, g); }

// Output element i of rank g is element g*count + i of every rank's input, reduced.
ExpectedElement postcondition(const CollArgs& a, std::int32_t g, std::uint64_t i) {
  return {0, a.ranks, block(a, g) + i, a.count - i};
}

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g) out.reduce(g, 0, 0, a.ranks, block(a, g), a.count);
}

}  // namespace

const CollectiveDescriptor& reduce_scatter() {
  static const CollectiveDescriptor d{
      .coll = Collective::reduce_scatter,
      .name = "reduce_scatter",
      .definition = "every rank's buffer is reduced element-wise and rank r receives block r of the result",
      .reducing = true,
      .rooted = false,
      .moves_data = true,
      .synchronizes = false,
      .in_place = true,
      .out_of_place = true,
      .count_of = CountOf::recv,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = output_at,
      .message_count = block_per_rank,
      .bus_factor = bus_all_but_one,
      .postcondition = postcondition,
      .reference = reference,
      .nccl = {"ncclReduceScatter", NcclForm::reducing},
      // MPI_IN_PLACE would leave rank r's block at the start of the buffer, NCCL's
      // convention puts it at r*count and keeps the rest of the input intact.
      .mpi = {"MPI_Reduce_scatter_block", kMpiReduction, MpiInPlace::through_temporary},
  };
  return d;
}

}  // namespace collscope::collectives
