// gather: the root receives every rank's buffer, rank r's as block r.
//
//   before               after (root 0)
//   rank 0: A            rank 0: A B C
//   rank 1: B            rank 1: (no output)
//   rank 2: C            rank 2: (no output)
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t g) { return {a.count, g == a.root ? a.count * ranks_of(a) : 0}; }
// In place the root's own block already sits where it belongs, at root*count.
std::uint64_t input_at(const CollArgs& a, std::int32_t g) { return g == a.root ? block(a, g) : 0; }

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t s = 0; s < a.ranks; ++s) out.copy(a.root, block(a, s), s, 0, a.count);
}

}  // namespace

const CollectiveDescriptor& gather() {
  static const CollectiveDescriptor d{
      .coll = Collective::gather,
      .name = "gather",
      .definition = "the root receives every rank's buffer, rank r's as block r",
      .reducing = false,
      .rooted = true,
      .moves_data = true,
      .synchronizes = false,
      .in_place = true,
      .out_of_place = true,
      .count_of = CountOf::send,
      .shape = shape,
      .in_place_input = input_at,
      .in_place_output = at_start,
      .message_count = block_per_rank,
      .bus_factor = bus_all_but_one,
      .postcondition = block_s_from_rank_s,  // on the root, the only output
      .reference = reference,
      .nccl = {"ncclGather", NcclForm::rooted},
      .mpi = {"MPI_Gather", kMpiSendRecvRoot, MpiInPlace::root_send_in_place},
  };
  return d;
}

}  // namespace collscope::collectives
