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
std::uint64_t message(const CollArgs& a) { return a.count * ranks_of(a); }

// Output element i of every rank is element i % count of rank i / count's input.
ExpectedElement postcondition(const CollArgs& a, std::int32_t, std::uint64_t i) {
  if (a.count == 0) return {};
  const auto s = static_cast<std::int32_t>(i / a.count);
  const std::uint64_t at = i % a.count;
  return {s, s + 1, at, a.count - at};
}

void reference(const CollArgs& a, ReferenceBuilder& out) {
  for (std::int32_t g = 0; g < a.ranks; ++g)
    for (std::int32_t s = 0; s < a.ranks; ++s) out.copy(g, block(a, s), s, 0, a.count);
}

constexpr MpiArg kMpi[] = {MpiArg::sendbuf, MpiArg::count,    MpiArg::datatype, MpiArg::recvbuf,
                           MpiArg::count,   MpiArg::datatype, MpiArg::comm};

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
      .message_count = message,
      .bus_factor = bus_all_but_one,
      .postcondition = postcondition,
      .reference = reference,
      .nccl = {"ncclAllGather", NcclForm::plain},
      .mpi = {"MPI_Allgather", kMpi, MpiInPlace::send_in_place},
  };
  return d;
}

}  // namespace collscope::collectives
