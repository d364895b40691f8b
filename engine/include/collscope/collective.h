// One descriptor per collective, like nccl-tests' per-collective files: everything
// collscope knows about a collective apart from its algorithms. Its name, the buffer
// sizes of every rank, the in-place rules, the bus-bandwidth factor, its postcondition
// (what the symbolic check demands), its numeric definition (what the numeric check
// computes), and the calls that run it natively in NCCL and in MPI. Each descriptor
// lives in its own file under engine/src/ir/collectives/; shared code asks
// collective_descriptor(c) instead of switching on the collective.
//
// `count` follows NCCL:
//   allreduce, broadcast, reduce : elements per rank
//   gather, allgather            : elements each rank sends
//   scatter, reduce_scatter      : elements each rank receives
//   alltoall                     : elements per peer block
//   alltoallv                    : the largest per-peer block; the counts themselves
//                                  are CollArgs::peers (without them: the default
//                                  pattern of `count`, alltoallv_default_count)
//   barrier                      : unused (0)
//
// Every function of a descriptor takes the whole call (CollArgs), not just its count,
// so that a collective whose counts differ per rank or per peer (alltoallv) can read
// them from the call.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "collscope/types.h"

namespace collscope {

struct CollArgs;    // schedule.h
struct PeerCounts;  // schedule.h

struct CollectiveShape {
  // Elements the input / output buffer of `rank` must hold (0 = not used on that rank).
  std::uint64_t in_count = 0;
  std::uint64_t out_count = 0;
};

// Out of place, which buffer NCCL's count is measured on: a scenario call without a
// "count" gets the largest count for which that buffer fits.
enum class CountOf : std::uint8_t { send, recv, none };

// The symbolic postcondition of one run of output elements: output element i of a
// rank holds element `index` of the input of every group rank in [first, last),
// combined with the call's operator when there are several (each exactly once; an
// average divided exactly once). The same holds for `run` elements (run >= 1), the
// index advancing by one per element. Indices count from the start of a rank's input
// region (CollArgs::in_offset); first == last: the element holds nothing.
struct ExpectedElement {
  std::int32_t first = 0, last = 0;
  std::uint64_t index = 0;
  std::uint64_t run = 1;
  // The element keeps what it held before the call (first and last are then unused):
  // the gaps an alltoallv's explicit receive offsets leave between its blocks.
  bool keeps = false;
};

// The vocabulary a collective's numeric definition is written in; the numeric
// verifier (verify/numeric.cpp) implements it on host memory, in the dtype's own
// arithmetic. Ranks are group ranks; `at` and `index` count elements from the start
// of a rank's output and input regions (the in-place offsets are applied for you).
class ReferenceBuilder {
 public:
  // out_to[at + j] = in_from[index + j] for j < n.
  virtual void copy(std::int32_t to, std::uint64_t at, std::int32_t from, std::uint64_t index, std::uint64_t n) = 0;
  // out_to[at + j] = in_first[index + j] (op) in_first+1[index + j] (op) ... (op) in_last-1[index + j],
  // folded in rank order; an average is then divided by the number of ranks folded.
  virtual void reduce(std::int32_t to, std::uint64_t at, std::int32_t first, std::int32_t last, std::uint64_t index,
                      std::uint64_t n) = 0;
  // out_to[at + j] = out_from[from_at + j]: values this definition already gave
  // another output, so that equal outputs (every rank's all-reduce result) are
  // computed once and copied.
  virtual void same_as(std::int32_t to, std::uint64_t at, std::int32_t from, std::uint64_t from_at,
                       std::uint64_t n) = 0;

 protected:
  ~ReferenceBuilder() = default;
};

// NCCL's own collective, as data (the nccl backend binds the name to the function):
// the function and the form of its argument list.
enum class NcclForm : std::uint8_t {
  none,             // NCCL has no such collective
  plain,            // f(send, recv, count, type, comm, stream): ncclAllGather, ncclAlltoAll
  rooted,           // f(send, recv, count, type, root, comm, stream): ncclBroadcast, ncclGather, ncclScatter
  reducing,         // f(send, recv, count, type, op, comm, stream): ncclAllReduce, ncclReduceScatter
  rooted_reducing,  // f(send, recv, count, type, op, root, comm, stream): ncclReduce
};
struct NcclCall {
  std::string_view function;  // "ncclAllReduce"; empty: none
  NcclForm form = NcclForm::none;
};

// An MPI collective, as data, for a backend that calls MPI (the engine links no MPI):
// the function, and what goes into each of its arguments in MPI's order.
enum class MpiArg : std::uint8_t {
  sendbuf,   // the call's input on this rank (at CollArgs::in_offset); MPI_IN_PLACE where `in_place` says
  recvbuf,   // the call's output on this rank (at CollArgs::out_offset); MPI_IN_PLACE where `in_place` says
  buffer,    // MPI_Bcast's one buffer: the output (out of place the root first copies its input there)
  count,     // the call's count: for these calls MPI's count means what NCCL's does
  datatype,  // the MPI datatype of the schedule's dtype (MPI has none for float16 and bfloat16)
  op,        // the MPI_Op of the reduction (avg has none: MPI_SUM, then divide by the ranks)
  root,      // the root, as a rank of the communicator
  comm,      // a communicator of the call's ranks, in group-rank order
  // Per-peer collectives (MPI_Alltoallv), from CollArgs::peers, as int arrays indexed by peer:
  send_counts,  // elements this rank sends to each peer
  send_displs,  // where in sendbuf each peer's block starts
  recv_counts,  // elements this rank receives from each peer
  recv_displs,  // where in recvbuf each peer's block lands
};
// How an in-place call (one buffer, NCCL's conventions, see CollArgs) is passed to MPI.
enum class MpiInPlace : std::uint8_t {
  unsupported,         // the collective has no in-place form
  send_in_place,       // every rank passes MPI_IN_PLACE as sendbuf; the data is already in recvbuf
  root_send_in_place,  // the root passes MPI_IN_PLACE as sendbuf (its block is already in recvbuf)
  root_recv_in_place,  // the root passes MPI_IN_PLACE as recvbuf (its block stays in sendbuf)
  one_buffer,          // the call has one buffer anyway
  through_temporary,   // MPI's in-place layout differs from NCCL's: run out of place into a
                       // temporary output of the call's out_count, then copy it to the output
};
struct MpiCall {
  std::string_view function;     // "MPI_Allreduce"; empty: none
  std::span<const MpiArg> args;  // in MPI's order
  MpiInPlace in_place = MpiInPlace::unsupported;
};

struct CollectiveDescriptor {
  Collective coll;
  std::string_view name;        // the CLI's and the scenario's name: "allreduce"
  std::string_view definition;  // one sentence for students
  bool reducing;                // combines values with the call's operator
  bool rooted;                  // has a root rank
  bool moves_data;              // has buffers and a count (false: barrier)
  bool synchronizes;            // no rank may leave before every rank has arrived (barrier)
  bool in_place;                // may run in one buffer
  bool out_of_place;            // may run from a send into a separate receive buffer
  // Counts differ per pair of ranks (alltoallv): a call gives them as "counts" (and
  // optional offsets) instead of one "count", and they travel in CollArgs::peers.
  bool per_peer;
  CountOf count_of;

  // Elements group rank g's input and output must hold.
  CollectiveShape (*shape)(const CollArgs& a, std::int32_t g);
  // In place: where group rank g's input and output start in the one buffer.
  std::uint64_t (*in_place_input)(const CollArgs& a, std::int32_t g);
  std::uint64_t (*in_place_output)(const CollArgs& a, std::int32_t g);
  // Elements of the message as nccl-tests counts it (its "size", for algbw), and the
  // factor that turns algbw into busbw.
  std::uint64_t (*message_count)(const CollArgs& a);
  double (*bus_factor)(std::int32_t ranks);
  // The symbolic postcondition of output element i of group rank g.
  ExpectedElement (*postcondition)(const CollArgs& a, std::int32_t g, std::uint64_t i);
  // The numeric definition: every output, written through `out`.
  void (*reference)(const CollArgs& a, ReferenceBuilder& out);

  NcclCall nccl;
  MpiCall mpi;
};

// The descriptor of every collective in kAllCollectives, in that order.
const CollectiveDescriptor& collective_descriptor(Collective c);

// Short forms of the descriptor's answers.
CollectiveShape shape_of(const CollArgs& a, std::int32_t g);
CollectiveShape shape_of(Collective c, std::int32_t ranks, std::int32_t rank, std::int32_t root, std::uint64_t count);
bool supports_in_place(Collective c);
bool supports_out_of_place(Collective c);
// Bytes of the message as nccl-tests counts it (for algbw) and the factor that turns
// algbw into busbw (allreduce 2(n-1)/n, allgather/reduce_scatter/alltoall (n-1)/n, else 1).
std::uint64_t message_bytes(Collective c, std::int32_t ranks, std::uint64_t count, DType t);
double bus_factor(Collective c, std::int32_t ranks);
const NcclCall& nccl_call(Collective c);
const MpiCall& mpi_call(Collective c);

// alltoallv's default pattern, what `--coll alltoallv --count N` runs and what a call
// without per-peer counts means: rank r sends N * ((r + peer + 1) mod 3) elements to
// peer, packed. Skewed (0, N or 2N per peer) and with empty blocks from 2 ranks on.
std::uint64_t alltoallv_default_count(std::uint64_t count, std::int32_t rank, std::int32_t peer);
// The same pattern as a scenario's "counts" expression: "N * ((rank + peer + 1) % 3)".
std::string alltoallv_default_counts_text(std::uint64_t count);
// The call's per-peer layout: CollArgs::peers, or the default pattern of its count
// (built once per thread and shape, packed); null for a collective that is not per peer.
std::shared_ptr<const PeerCounts> peers_of(const CollArgs& a);

}  // namespace collscope
