// allgather: every rank receives every rank's buffer, rank r's as block r.
//
//   before               after
//   rank 0: A            rank 0: A B C
//   rank 1: B            rank 1: A B C
//   rank 2: C            rank 2: A B C
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t) { return {a.count, a.count * ranks_of(a)}; }
// In place rank r's input is its own block of the output.
std::uint64_t input_at(const CollArgs& a, std::int32_t g) { return block(a, g); }

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g)
    for (std::int32_t s = 0; s < a.ranks; ++s) out.copy(g, block(a, s), s, 0, a.count);
}

}  // namespace

const CollectiveDescriptor& allgather() {
  static const CollectiveDescriptor d{
      .coll = Collective::allgather,
      .name = "allgather",
      .definition = "every rank receives every rank's buffer, rank r's as block r",
      .reducing = false,
      .rooted = false,
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
      .postcondition = block_s_from_rank_s,  // on every rank
      .reference = reference,
      .nccl = {"ncclAllGather", NcclForm::plain},
      .mpi = {"MPI_Allgather", kMpiSendRecv, MpiInPlace::send_in_place},
  };
  return d;
}

}  // namespace collscope::collectives
