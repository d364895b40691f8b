// The Schedule: collscope's one intermediate representation (docs/ARCHITECTURE.md, "The Schedule").
//
// Every algorithm and every program lowers to a Schedule; every backend executes
// one; the verifier, the trace and the views only read it.
//
//   world of R ranks, each with the same named buffers (sizes may differ per rank)
//   schedule = ordered list of steps
//   step     = set of transfers that may run at the same time
//   transfer = move `count` elements (src rank, buffer, offset) -> (dst rank, buffer, offset)
//              with an action: copy (dst = src), reduce (dst = dst (+) src),
//              reduce_copy (dst = aux (+) src: the receiver adds a piece of its own
//              while the data arrives, so the sum needs no earlier local copy),
//              or scale (dst = dst / divisor, local, used to finish `avg`)
//              or compute (a labelled span of work on one rank: moves no data, but
//              counts as writing its slice and reading the slices it names, so the
//              dependencies order it like an op that touches them)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collscope/result.h"
#include "collscope/types.h"

namespace collscope {

enum class Action : std::uint8_t {
  copy,         // dst = src
  reduce,       // dst = dst (op) src   (op = the call's reduction operator)
  reduce_copy,  // dst = aux (op) src (aux on the destination rank, not overlapping dst)
  scale,        // dst = dst / divisor  (src == dst; finishes an average)
  compute,      // rank dst.rank works for duration_us (src == dst); data unchanged
};

// A place in memory: element `offset` of buffer `buf` on rank `rank`.
struct Loc {
  std::int32_t rank = 0;
  std::int32_t buf = 0;
  std::uint64_t offset = 0;
};

struct Transfer {
  Loc src;
  Loc dst;
  std::uint64_t count = 0;
  Action action = Action::copy;
  std::uint32_t divisor = 1;      // only for Action::scale
  std::uint32_t duration_us = 0;  // only for Action::compute
  std::int32_t label = -1;        // only for Action::compute: index into Schedule::labels
  Loc aux;                        // only for Action::reduce_copy: the second operand
  std::int32_t reads = -1;        // only for Action::compute: index into Schedule::reads (-1: none)
};

// A slice of one rank's buffer.
struct Slice {
  Loc at;
  std::uint64_t count = 0;
};

struct Step {
  std::string phase;      // "reduce-scatter", "tree up", ...
  std::string caption;    // plain words for teaching
  std::int32_t call = 0;  // index into Schedule::calls (a shared step: its first call)
  std::vector<Transfer> transfers;
  // The parts of one call on a split group touch disjoint ranks, so they run at once:
  // step k of every part is one step, and `shared` lists the calls after `call` whose
  // transfers it holds too (in call order). Empty for a step of one call.
  std::vector<std::int32_t> shared;
  // The whole call in one piece by a library's own implementation (algorithm "nccl" or
  // "mpi"): no transfers the engine can see; only the backend of that library runs it,
  // and only the numeric check can judge it.
  bool native = false;
  std::string library;  // native steps: the library ("nccl", "mpi"; NativeLibrary::algorithm)
};

struct BufferDecl {
  std::string name;
  std::vector<std::uint64_t> count;  // elements, one entry per rank
  bool scratch = false;              // created by an algorithm, not by the user
  // An algorithm's scratch: the first step of the call that took it last
  // (StepBuilder::add_scratch hands it on to a later call of the same shape).
  std::int32_t taken_at = -1;
};

// Who sends how much to whom, and where, for a collective whose counts differ per pair
// of ranks (alltoallv, like MPI_Alltoallv's sendcounts/sdispls/recvcounts/rdispls).
// Group ranks: s sends count(s, d) elements to d, read from element send_at(s, d) of
// s's input and written to element recv_at(d, s) of d's output.
struct PeerCounts {
  std::int32_t ranks = 0;
  std::vector<std::uint64_t> counts;        // [s * ranks + d]
  std::vector<std::uint64_t> send_offsets;  // [s * ranks + d]
  std::vector<std::uint64_t> recv_offsets;  // [d * ranks + s]
  // Elements rank r's input and output must hold (the furthest block end); finish() sets them.
  std::vector<std::uint64_t> in_need, out_need;

  std::uint64_t count(std::int32_t s, std::int32_t d) const { return counts[at(s, d)]; }
  std::uint64_t send_at(std::int32_t s, std::int32_t d) const { return send_offsets[at(s, d)]; }
  std::uint64_t recv_at(std::int32_t d, std::int32_t s) const { return recv_offsets[at(d, s)]; }
  std::size_t at(std::int32_t a, std::int32_t b) const {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(ranks) + static_cast<std::size_t>(b);
  }
  // With `counts` set: packs the blocks where an offset table is empty (exclusive prefix
  // sums, rank order: MPI's and PyTorch's default), then computes in_need and out_need.
  void finish();
  bool operator==(const PeerCounts& o) const {
    return ranks == o.ranks && counts == o.counts && send_offsets == o.send_offsets && recv_offsets == o.recv_offsets;
  }
};

// Arguments of one collective call after validation, in the engine's terms.
// Offsets follow NCCL's in-place conventions: for in-place allgather the input of
// rank r is out + r*count; for in-place reduce_scatter the output of rank r is
// in + r*count; for in-place scatter/gather the root's own block lives at
// root*count inside the large buffer.
struct CollArgs {
  Collective coll = Collective::allreduce;
  std::int32_t ranks = 1;
  std::uint64_t count = 0;  // NCCL's meaning of count, see collective.h
  std::int32_t root = 0;
  ReduceOp op = ReduceOp::sum;
  DType dtype = DType::float32;
  std::int32_t in_buf = 0;
  std::int32_t out_buf = 0;
  bool in_place = false;
  // When the call runs on a group, world_rank[g] is the world rank of group rank g;
  // empty = the whole world in order. Algorithms work on group ranks; the builder maps.
  std::vector<std::int32_t> world_rank;
  // alltoallv: the per-peer counts and offsets (then `count` is the largest block). Null
  // for the other collectives, and for an alltoallv built from a count alone (the
  // short forms of collective.h, tests), which means the default pattern of `count`
  // (alltoallv_default_count). Shared: the table is n x n and calls are copied.
  std::shared_ptr<const PeerCounts> peers;

  // Where rank r's input and output start (element offsets in in_buf / out_buf).
  std::uint64_t in_offset(std::int32_t r) const;
  std::uint64_t out_offset(std::int32_t r) const;
};

// What a Call is: one collective (built-in algorithm or a program's own steps), or a
// run of point-to-point and local ops that the matcher put into steps.
enum class CallKind : std::uint8_t {
  collective,  // args describe it; its postcondition is checked
  program,     // point-to-point messages, local copies and compute spans; args.op is
               // the operator of its accumulates, the other args are unused
};

// One collective call of the program and the range of steps it lowered to.
struct Call {
  CallKind kind = CallKind::collective;
  // A collective written by the program itself ("algorithm": "custom"): its other user
  // buffers are its workspace, so only the call's own input must survive it.
  bool custom = false;
  CollArgs args;
  std::string algorithm;  // the algorithm that ran (after `auto` was resolved)
  bool auto_picked = false;
  std::string caption;  // the program's caption for this call
  std::int32_t first_step = 0;
  std::int32_t num_steps = 0;
  std::int32_t program_index = 0;  // position in the scenario's program
  // A call on a group: its name, and for a split which part (0, 1, ... in the order of
  // their lowest ranks; -1 for a list). Its ranks are args.world_rank.
  std::string group;
  std::int32_t part = -1;
};

// "group tp, part 1: ranks 4-7", "group pair: ranks 0, 1"; "" for a call on every rank.
std::string group_text(const Call& c);
// Does world rank r take part in call c (every rank does in a call on every rank)?
bool takes_part(const Call& c, std::int32_t rank);
// "rank 4 (tp rank 0)" for group rank 0 of a call on group tp whose rank 0 is world
// rank 4; "rank 4" for a call on every rank.
std::string rank_text(const Call& c, std::int32_t group_rank);

// How an op orders the ops after it on its rank (MPI's rule, ir/deps.h): a blocking
// op holds back everything after it; a non-blocking one (isend, irecv, a collective
// with a request) does not, until the wait that completes it.
enum class OpOrder : std::uint8_t { blocking, nonblocking, wait };

// One op of one rank's program, and when it ran: the matcher's record of program
// order, for per-rank progress and per-op timings.
struct OpRecord {
  std::int32_t rank = 0;
  std::string op;                                // "send", "irecv", "allreduce", ...
  std::string text;                              // "isend x[0..4) to rank 1 as req0"
  std::string pointer;                           // JSON Pointer of the program entry ("/program/3/body/1")
  std::int32_t iteration = -1;                   // inside a repeat: the innermost loop value, else -1
  std::int32_t first_step = -1, last_step = -1;  // steps it spans (-1: none, e.g. a wait that was free)
  std::int32_t call = -1;                        // a collective: its call
  // Point-to-point, local and compute ops: the (step, transfer) pairs it owns.
  std::vector<std::pair<std::int32_t, std::int32_t>> transfers;
  // Program order. Records of a rank are in program order, except that the ops of a
  // custom algorithm's body come after the program's and name the call's record on
  // their rank as `parent`.
  OpOrder order = OpOrder::blocking;
  // A collective or a written step owns every transfer of its steps that touches its
  // rank, instead of the `transfers` listed above.
  bool spans_steps = false;
  std::vector<std::int32_t> completes;  // a wait: the records of the non-blocking ops it completed
  std::int32_t parent = -1;             // an op of a custom algorithm's body: its call's record
};

// What the scenario expects at the end of the run ("expect", scenario.h), resolved for
// one rank: elements [offset, offset + count) of `buf` on `rank` hold
//   values:    the given values,
//   copy:      from_rank's input element from_offset + i of from_buf (element i of the slice),
//   reduction: the reduction with `op` over the ranks `over` of input from_buf[from_offset + i].
// Inputs are the buffers as the program started. Both checks judge them: the symbolic
// one on the contribution sets of the whole program, the numeric one on the values.
struct Expectation {
  enum class Kind : std::uint8_t { values, copy, reduction };
  Kind kind = Kind::values;
  std::int32_t rank = 0, buf = 0;
  std::uint64_t offset = 0, count = 0;
  std::vector<double> values;
  std::int32_t from_buf = 0, from_rank = 0;
  std::uint64_t from_offset = 0;
  std::vector<std::int32_t> over;  // sorted world ranks
  ReduceOp op = ReduceOp::sum;
  std::int32_t spec = 0;  // its entry in the scenario's "expect"
};

// How much of each rank's buffer one slice of a sliced algorithm covers (the
// all-reduce ring goes round in slices that stay in a processor's cache).
inline constexpr std::uint64_t kCacheSliceBytes = 1u << 20;

struct Schedule {
  std::int32_t ranks = 1;
  DType dtype = DType::float32;
  std::vector<BufferDecl> buffers;
  std::vector<Call> calls;
  std::vector<Step> steps;
  std::vector<std::string> labels;  // compute span labels
  // What compute spans read (Transfer::reads): they move no data, but wait for the last
  // writes of these slices, and later writes of them wait for the span.
  std::vector<std::vector<Slice>> reads;
  std::vector<OpRecord> ops;           // empty for programs of collectives only
  std::vector<Expectation> expect;     // the scenario's "expect", rank by rank
  std::vector<Location> expect_where;  // per "expect" entry: where it is written ("/expect/0")
  // What the schedule was lowered for: bytes of each rank's buffer per slice, or 0 for
  // no slices (LowerOptions, scenario.h).
  std::uint64_t slice_bytes = kCacheSliceBytes;
  // Where the node boundaries are: world ranks [k * ranks_per_node, (k + 1) *
  // ranks_per_node) share node k. 0: one node. Algorithms that know the node boundary
  // (hierarchical.cpp) read it through StepBuilder::nodes().
  std::int32_t ranks_per_node = 0;

  std::int32_t find_buffer(const std::string& name) const;  // -1 when absent
  std::uint64_t buffer_count(std::int32_t buf, std::int32_t rank) const { return buffers[buf].count[rank]; }
  std::uint64_t total_transfers() const;
};

// A signal (barrier) moves nothing: count 0 and not a compute span.
inline bool is_signal(const Transfer& t) { return t.count == 0 && t.action != Action::compute; }
// Does the action combine data with the reduction operator (reduce, reduce_copy)?
inline bool is_reduction(Action a) { return a == Action::reduce || a == Action::reduce_copy; }
// Does the transfer read its source slice? (scale and compute only touch their destination)
inline bool reads_source(const Transfer& t) {
  return t.action == Action::copy || t.action == Action::reduce || t.action == Action::reduce_copy;
}
// Calls f(loc) for every slice the transfer reads other than its destination: the
// source, and a reduce-copy's second operand. (A reduce also reads its destination.)
template <class F>
void for_each_read(const Transfer& t, F&& f) {
  if (reads_source(t)) f(t.src);
  if (t.action == Action::reduce_copy) f(t.aux);
}

// A 64-bit digest of what a schedule runs: its ranks, dtype, buffer sizes and every
// step's transfers, leaving out every name and caption (of the algorithm, the buffers,
// the steps). Two algorithms that lower a call to the same steps (a node-aware ring on
// one node and the plain ring) have equal digests; `predict --algo all` says so.
std::uint64_t steps_digest(const Schedule& s);

// Bytes a step moves between ranks (local copies excluded).
std::uint64_t step_bytes(const Schedule& s, const Step& st);

// The calls whose transfers step k holds: Step::call, then Step::shared.
std::vector<std::int32_t> calls_of(const Step& st);
// The call of step k that world rank r takes part in: Step::call, or the shared call
// whose group holds r (Step::call when none does).
std::int32_t call_of(const Schedule& s, std::int32_t step, std::int32_t rank);
// call_of for every world rank at once.
std::vector<std::int32_t> calls_by_rank(const Schedule& s, std::int32_t step);
// Steps [first, end) of the calls that share steps with call c (the parts of its split
// group that run at once); [first_step, first_step + num_steps) for a call alone.
std::pair<std::int32_t, std::int32_t> shared_span(const Schedule& s, std::int32_t call);
// Which parts run at once in step k, as "group tp, parts 0 and 1 at once: {0-3} and
// {4-7}"; group_text of Step::call for a step of one call.
std::string parts_text(const Schedule& s, const Step& st);
// A set of world ranks in braces, runs of three or more as ranges: "{0-3}", "{0,4}".
std::string rank_set_text(const std::vector<std::int32_t>& ranks);

// "op 3" / "op 3.1" from a program entry's JSON Pointer "/program/3/body/1".
std::string program_op_label(const std::string& pointer);

}  // namespace collscope
