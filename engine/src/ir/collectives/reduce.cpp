// reduce: the root receives the reduction of every rank's buffer.
//
//   before               after (root 0)
//   rank 0: a0 a1        rank 0: a0+b0+c0  a1+b1+c1
//   rank 1: b0 b1        rank 1: (no output)
//   rank 2: c0 c1        rank 2: (no output)
#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t g) { return {a.count, g == a.root ? a.count : 0}; }

void reference(const CollArgs& a, ReferenceBuilder& out) { out.reduce(a.root, 0, 0, a.ranks, 0, a.count); }

constexpr MpiArg kMpi[] = {MpiArg::sendbuf, MpiArg::recvbuf, MpiArg::count, MpiArg::datatype,
                           MpiArg::op,      MpiArg::root,    MpiArg::comm};

}  // namespace

const CollectiveDescriptor& reduce() {
  static const CollectiveDescriptor d{
      .coll = Collective::reduce,
      .name = "reduce",
      .definition = "the root receives the element-wise reduction of every rank's buffer",
      .reducing = true,
      .rooted = true,
      .moves_data = true,
      .synchronizes = false,
      .in_place = true,
      .out_of_place = true,
      .count_of = CountOf::send,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = at_start,
      .message_count = one_block,
      .bus_factor = bus_one,
      .postcondition = reduced_element_i,  // on the root, the only output
      .reference = reference,
      .nccl = {"ncclReduce", NcclForm::rooted_reducing},
      .mpi = {"MPI_Reduce", kMpi, MpiInPlace::root_send_in_place},
  };
  return d;
}

}  // namespace collscope::collectives
