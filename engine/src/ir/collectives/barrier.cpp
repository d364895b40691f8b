// barrier: no rank leaves before every rank has arrived. No data moves; the symbolic
// check demands a chain of signals from every rank to every rank.
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs&, std::int32_t) { return {}; }
std::uint64_t message(const CollArgs&) { return 0; }
ExpectedElement postcondition(const CollArgs&, std::int32_t, std::uint64_t) { return {}; }
void reference(const CollArgs&, ReferenceBuilder&) {}

constexpr MpiArg kMpi[] = {MpiArg::comm};

}  // namespace

const CollectiveDescriptor& barrier() {
  static const CollectiveDescriptor d{
      .coll = Collective::barrier,
      .name = "barrier",
      .definition = "no rank leaves before every rank has arrived",
      .reducing = false,
      .rooted = false,
      .moves_data = false,
      .synchronizes = true,
      .in_place = false,
      .out_of_place = false,
      .count_of = CountOf::none,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = at_start,
      .message_count = message,
      .bus_factor = bus_one,
      .postcondition = postcondition,
      .reference = reference,
      .nccl = {},  // NCCL has no barrier: an all-reduce of one element stands in for one
      .mpi = {"MPI_Barrier", kMpi, MpiInPlace::unsupported},
  };
  return d;
}

}  // namespace collscope::collectives
