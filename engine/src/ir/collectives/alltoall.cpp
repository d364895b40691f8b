// alltoall: block d of rank s's buffer goes to rank d, where it becomes block s:
// a transpose of the ranks x blocks matrix.
//
//   before                  after
//   rank 0: A0 A1 A2        rank 0: A0 B0 C0
//   rank 1: B0 B1 B2        rank 1: A1 B1 C1
//   rank 2: C0 C1 C2        rank 2: A2 B2 C2
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t) { return {a.count * ranks_of(a), a.count * ranks_of(a)}; }

// Output element i of rank g: block i / count holds rank (i / count)'s block g.
ExpectedElement postcondition(const CollArgs& a, std::int32_t g, std::uint64_t i) {
  if (a.count == 0) return {};
  const auto s = static_cast<std::int32_t>(i / a.count);
  const std::uint64_t at = i % a.count;
  return {s, s + 1, block(a, g) + at, a.count - at};
}

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g)
    for (std::int32_t s = 0; s < a.ranks; ++s) out.copy(g, block(a, s), s, block(a, g), a.count);
}

}  // namespace

const CollectiveDescriptor& alltoall() {
  static const CollectiveDescriptor d{
      .coll = Collective::alltoall,
      .name = "alltoall",
      .definition = "block d of rank s's buffer goes to rank d, where it becomes block s",
      .reducing = false,
      .rooted = false,
      .moves_data = true,
      .synchronizes = false,
      .in_place = false,
      .out_of_place = true,
      .count_of = CountOf::send,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = at_start,
      .message_count = block_per_rank,
      .bus_factor = bus_all_but_one,
      .postcondition = postcondition,
      .reference = reference,
      .nccl = {"ncclAlltoAll", NcclForm::plain},
      .mpi = {"MPI_Alltoall", kMpiSendRecv, MpiInPlace::unsupported},
  };
  return d;
}

}  // namespace collscope::collectives
