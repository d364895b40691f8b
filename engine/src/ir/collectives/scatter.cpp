// scatter: the root's buffer is cut into one block per rank; rank r receives block r.
//
//   before (root 0)          after
//   rank 0: A B C            rank 0: A
//   rank 1: .                rank 1: B
//   rank 2: .                rank 2: C
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t g) { return {g == a.root ? a.count * ranks_of(a) : 0, a.count}; }
// In place the root keeps its own block where it already is, at root*count.
std::uint64_t output_at(const CollArgs& a, std::int32_t g) { return g == a.root ? block(a, g) : 0; }

// Output element i of rank g is element g*count + i of the root's input.
ExpectedElement postcondition(const CollArgs& a, std::int32_t g, std::uint64_t i) {
  return {a.root, a.root + 1, block(a, g) + i, a.count - i};
}

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g) out.copy(g, 0, a.root, block(a, g), a.count);
}

}  // namespace

const CollectiveDescriptor& scatter() {
  static const CollectiveDescriptor d{
      .coll = Collective::scatter,
      .name = "scatter",
      .definition = "the root's buffer is cut into one block per rank and rank r receives block r",
      .reducing = false,
      .rooted = true,
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
      .nccl = {"ncclScatter", NcclForm::rooted},
      .mpi = {"MPI_Scatter", kMpiSendRecvRoot, MpiInPlace::root_recv_in_place},
  };
  return d;
}

}  // namespace collscope::collectives
