// broadcast: the root's buffer ends up on every rank.
//
//   before (root 0)          after
//   rank 0: a b c            rank 0: a b c
//   rank 1: . . .            rank 1: a b c
//   rank 2: . . .            rank 2: a b c
#include "collectives.h"

namespace collscope::collectives {

namespace {

// Only the root has an input; out of place the root's output gets a copy too.
CollectiveShape shape(const CollArgs& a, std::int32_t g) { return {g == a.root ? a.count : 0, a.count}; }

// Output element i of every rank is the root's input element i.
ExpectedElement postcondition(const CollArgs& a, std::int32_t, std::uint64_t i) {
  return {a.root, a.root + 1, i, a.count - i};
}

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g) out.copy(g, 0, a.root, 0, a.count);
}

constexpr MpiArg kMpi[] = {MpiArg::buffer, MpiArg::count, MpiArg::datatype, MpiArg::root, MpiArg::comm};

}  // namespace

const CollectiveDescriptor& broadcast() {
  static const CollectiveDescriptor d{
      .coll = Collective::broadcast,
      .name = "broadcast",
      .definition = "the root's buffer is copied to every rank",
      .reducing = false,
      .rooted = true,
      .moves_data = true,
      .synchronizes = false,
      .in_place = true,
      .out_of_place = true,
      .count_of = CountOf::recv,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = at_start,
      .message_count = one_block,
      .bus_factor = bus_one,
      .postcondition = postcondition,
      .reference = reference,
      .nccl = {"ncclBroadcast", NcclForm::rooted},
      .mpi = {"MPI_Bcast", kMpi, MpiInPlace::one_buffer},
  };
  return d;
}

}  // namespace collscope::collectives
