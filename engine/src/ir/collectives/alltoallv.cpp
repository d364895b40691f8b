// alltoallv: all-to-all with a count per pair of ranks, as mixture-of-experts token
// routing needs it (torch.distributed.all_to_all_single with split sizes,
// MPI_Alltoallv). Rank s sends count(s, d) elements to rank d: the block that starts
// at send_at(s, d) of s's input lands at recv_at(d, s) of d's output. Blocks may be
// empty; by default they are packed in rank order (CollArgs::peers, schedule.h).
//
//   counts (row: sender)     before                  after
//        to 0  1  2          rank 0: a a | a | -     rank 0: a a | b b b | c
//   0:      2  1  0          rank 1: b b b | - | b   rank 1: a | c c
//   1:      3  0  1          rank 2: c | c c | -     rank 2: b
//   2:      1  2  0
//
// Out of place only. Elements of an output that no block covers (gaps left by explicit
// receive offsets) keep what they held.
#include <algorithm>

#include "collectives.h"

namespace collscope::collectives {

namespace {

CollectiveShape shape(const CollArgs& a, std::int32_t g) {
  const auto p = peers_of(a);
  if (!p || g < 0 || g >= p->ranks) return {};
  return {p->in_need[static_cast<std::size_t>(g)], p->out_need[static_cast<std::size_t>(g)]};
}

// nccl-tests' size: the larger of one rank's send and receive buffer, on the busiest rank.
std::uint64_t message(const CollArgs& a) {
  const auto p = peers_of(a);
  std::uint64_t most = 0;
  if (p)
    for (std::int32_t r = 0; r < p->ranks; ++r)
      most = std::max({most, p->in_need[static_cast<std::size_t>(r)], p->out_need[static_cast<std::size_t>(r)]});
  return most;
}

// Output element i of rank g: inside the block from rank s, it is s's element
// send_at(s, g) + (i - recv_at(g, s)); outside every block it keeps what it held.
ExpectedElement postcondition(const CollArgs& a, std::int32_t g, std::uint64_t i) {
  const auto p = peers_of(a);
  if (!p) return {};
  std::uint64_t next = p->out_need[static_cast<std::size_t>(g)];  // the nearest block start after i
  for (std::int32_t s = 0; s < p->ranks; ++s) {
    const std::uint64_t c = p->count(s, g), at = p->recv_at(g, s);
    if (c == 0) continue;
    if (i >= at && i < at + c) return {s, s + 1, p->send_at(s, g) + (i - at), at + c - i};
    if (at > i) next = std::min(next, at);
  }
  ExpectedElement e;
  e.keeps = true;
  e.run = next > i ? next - i : 1;
  return e;
}

// Written from the definition: every block copied from its sender to its receiver.
void reference(const CollArgs& a, ReferenceBuilder& out) {
  const auto p = peers_of(a);
  if (!p) return;
  for (std::int32_t d = 0; d < p->ranks; ++d)
    for (std::int32_t s = 0; s < p->ranks; ++s) out.copy(d, p->recv_at(d, s), s, p->send_at(s, d), p->count(s, d));
}

constexpr MpiArg kMpi[] = {MpiArg::sendbuf,     MpiArg::send_counts, MpiArg::send_displs,
                           MpiArg::datatype,    MpiArg::recvbuf,     MpiArg::recv_counts,
                           MpiArg::recv_displs, MpiArg::datatype,    MpiArg::comm};

}  // namespace

const CollectiveDescriptor& alltoallv() {
  static const CollectiveDescriptor d{
      .coll = Collective::alltoallv,
      .name = "alltoallv",
      .definition = "rank s sends its own number of elements to every rank d, which puts them at its place for s",
      .reducing = false,
      .rooted = false,
      .moves_data = true,
      .synchronizes = false,
      .in_place = false,
      .out_of_place = true,
      .per_peer = true,
      .count_of = CountOf::send,
      .shape = shape,
      .in_place_input = at_start,
      .in_place_output = at_start,
      .message_count = message,
      .bus_factor = bus_all_but_one,
      .postcondition = postcondition,
      .reference = reference,
      // NCCL has no alltoallv (PyTorch builds one from grouped ncclSend/ncclRecv).
      .nccl = {"", NcclForm::none},
      .mpi = {"MPI_Alltoallv", kMpi, MpiInPlace::unsupported},
  };
  return d;
}

}  // namespace collscope::collectives
