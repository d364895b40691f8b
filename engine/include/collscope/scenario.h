// Scenarios: what the user asks for (docs/ARCHITECTURE.md, "Layers"), read from JSON format version 1.
//
//   {
//     "version": 1,
//     "title": "All-reduce on a ring",
//     "description": "Four ranks add their vectors ...",
//     "ranks": 4,
//     "dtype": "float32",
//     "buffers": {
//       "x":     {"count": 8, "init": "rank"},
//       "table": {"counts": [16, 0, 0, 0], "init": {"random": {"seed": 7, "min": 0, "max": 9}}}
//     },
//     "program": [
//       {"op": "allreduce", "buffer": "x", "algorithm": "ring", "reduce_op": "sum",
//        "caption": "every rank ends with the sum of all vectors"},
//       {"op": "scatter", "send": "table", "recv": "x", "root": 0, "count": 4}
//     ]
//   }
//
// A program entry is an object whose "op" names what it does. Collective calls use
// the keys below; point-to-point ops (send, recv, isend, irecv, wait, ...) will add
// their own keys under the same "op" field, so files written now stay valid.
//
// Defaults: "dtype" float32; a buffer's "init" "zeros"; "algorithm" "auto";
// "reduce_op" "sum"; "root" 0. A buffer with {"init": {"values": [...]}} may leave out
// "count": each rank's row gives its count. Keys a collective does not use ("root" on
// allreduce, "reduce_op" on gather, "count" on barrier) are refused, not ignored.
// A call names either "buffer" (in place) or both "send" and "recv"; barrier names none.
// alltoallv has no "count" but "counts" (elements rank sends to peer: an expression in
// rank, peer and size, or a table of one row per rank), and optional "send_offsets" and
// "recv_offsets" in the same forms (default: packed in rank order).
//
// When a call has no "count", it is derived from the buffers with NCCL's meaning of
// count (collective.h): the largest count for which the count-giving buffer fits on
// every rank that uses it:
//   in place ("buffer"):                    the one buffer, with the in-place layout, e.g.
//       allreduce/broadcast/reduce: buffer; allgather/reduce_scatter: buffer / ranks;
//       scatter/gather: min(root's buffer / ranks, other ranks' buffer)
//   out of place, from "send": allreduce, reduce, gather, allgather  (send count),
//                              alltoall                             (send count / ranks)
//   out of place, from "recv": broadcast, scatter, reduce_scatter    (recv count)
// Divisions round down. The other buffer must then be large enough on every rank
// (scenario.buffer_too_small otherwise), and a derived count of 0 is an error too.
//
// Errors (ids; each with file:line:col and a JSON Pointer, docs/ARCHITECTURE.md, "Errors"):
//   scenario.io, scenario.parse, scenario.duplicate_key, scenario.too_deep,
//   scenario.version, scenario.unknown_key, scenario.wrong_type, scenario.missing_key,
//   scenario.out_of_range, scenario.unknown_dtype, scenario.unknown_reduce_op,
//   scenario.unknown_op, scenario.unknown_buffer, scenario.unknown_algorithm,
//   scenario.unknown_init, scenario.buffer_too_small, scenario.in_place_unsupported,
//   scenario.bad_call, scenario.conflicting_keys ("count" and "counts"), scenario.unknown_fault
//   (a fault "kind" other than delay, corrupt, crash, hang), scenario.bad_name
//   (buffer names must be non-empty and not start with '~', kept for scratch buffers),
//   scenario.unknown_quiz_kind (a quiz "kind" other than changes, sender, value, complete),
//   scenario.unknown_view (a "view" other than boxes, matrix).
//   compare.unknown_algorithm, compare.no_call, compare.mixed ("compare", compare_scenario below).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collscope/backend.h"
#include "collscope/result.h"
#include "collscope/schedule.h"
#include "collscope/types.h"

namespace collscope {

enum class InitKind : std::uint8_t {
  zeros,       // 0
  rank,        // the rank number
  index,       // the element index
  rank_index,  // 100 * rank + index
  random,      // seeded random integers in [min, max]
  values,      // explicit values per rank
};

struct BufferInit {
  InitKind kind = InitKind::zeros;
  std::uint64_t seed = 0;
  std::int64_t min = 0, max = 9;
  std::vector<std::vector<double>> values;  // values[rank][i]; for InitKind::values
};

struct BufferSpec {
  std::string name;
  std::vector<std::uint64_t> count;  // one entry per rank
  BufferInit init;
  bool scratch = false;  // workspace: starts as zeros, not compared with a reference
  Location where;        // of the buffer's entry
};

// Which ranks run a program op: "all" (or ""), a list, a range "1..3" (inclusive), or
// an expression over rank and size that is true for the ranks that run it ("rank == 0").
struct RankSelector {
  std::vector<std::int32_t> list;  // when written as an array
  std::string text;                // otherwise
};

// Part of a buffer, in a local op or a written step. Offsets and counts are
// expressions (see program/expr.h); an empty count means "to the end of the buffer".
struct SliceSpec {
  std::string buffer;
  std::string rank;  // only in written steps: the rank that holds it
  std::string offset;
  std::string count;
};

// One line of a written step: for every selected rank, a transfer.
struct TransferSpec {
  RankSelector ranks;
  SliceSpec from, to;
  SliceSpec with;  // action reduce_copy only: the receiving rank's own operand (no rank)
  std::string count;
  Action action = Action::copy;
  Location where;
  std::map<std::string, Location> field_where;
};

// What a program entry does. The reader sets it once from "op" (code that builds a
// scenario leaves the default: a collective), and every part of the program layer
// dispatches on it.
enum class ProgramOpKind : std::uint8_t {
  collective,
  send,
  recv,
  isend,
  irecv,
  wait,
  compute,
  copy,
  accumulate,
  repeat,
  step
};

// The names of the ops a program has besides the collectives, with their kinds.
inline constexpr std::pair<std::string_view, ProgramOpKind> kProgramOps[] = {
    {"send", ProgramOpKind::send},     {"recv", ProgramOpKind::recv},
    {"isend", ProgramOpKind::isend},   {"irecv", ProgramOpKind::irecv},
    {"wait", ProgramOpKind::wait},     {"compute", ProgramOpKind::compute},
    {"copy", ProgramOpKind::copy},     {"accumulate", ProgramOpKind::accumulate},
    {"repeat", ProgramOpKind::repeat}, {"step", ProgramOpKind::step}};

// A message: send, recv, isend or irecv.
inline bool is_message(ProgramOpKind k) {
  return k == ProgramOpKind::send || k == ProgramOpKind::recv || k == ProgramOpKind::isend || k == ProgramOpKind::irecv;
}
// The sending end of a message.
inline bool is_send(ProgramOpKind k) { return k == ProgramOpKind::send || k == ProgramOpKind::isend; }
// isend and irecv: return at once, with a request.
inline bool is_nonblocking_message(ProgramOpKind k) { return k == ProgramOpKind::isend || k == ProgramOpKind::irecv; }
// Ops that every member of a communicator enters together: collectives and written steps.
inline bool is_sync(ProgramOpKind k) { return k == ProgramOpKind::collective || k == ProgramOpKind::step; }

// A number per (rank, peer) pair of a per-peer collective (alltoallv's "counts",
// "send_offsets", "recv_offsets"): an expression in rank, peer, size and the loop
// variables in scope, or a table with one row per rank and one column per peer. Ranks
// and peers are ranks of the call's group. Empty: not given.
struct PeerTable {
  std::string expr;
  std::vector<std::vector<std::uint64_t>> rows;
  bool empty() const { return expr.empty() && rows.empty(); }
};

struct ProgramOp {
  using Kind = ProgramOpKind;
  Kind kind = Kind::collective;
  std::string op;                      // as written: "allreduce", "scatter", "send", "repeat", ...
  std::optional<Collective> coll;      // set for collective calls
  std::string buffer;                  // in place: the one buffer
  std::string send, recv;              // out of place
  std::optional<std::uint64_t> count;  // NCCL's count; derived from the buffers when absent
  // alltoallv: elements rank sends to peer; where its blocks start in the send and the
  // receive buffer (empty: packed in rank order). Receive counts follow: rank r
  // receives counts[p][r] from p.
  PeerTable peer_counts, send_offsets, recv_offsets;
  std::string algorithm = "auto";
  ReduceOp reduce_op = ReduceOp::sum;
  std::int32_t root = 0;
  std::string caption;
  Location where;                               // of the program entry
  std::map<std::string, Location> field_where;  // of each key that was present

  // --- programs (point-to-point, local and structural ops) -----------------------
  std::string group;   // a collective on a named group ("" = every rank)
  RankSelector ranks;  // point-to-point and local ops: who runs it
  std::string peer;    // send/isend "to", recv/irecv "from" (an expression)
  std::string offset;  // send/recv family: slice of "buffer" (expressions)
  std::string count_expr;
  std::string request;                  // isend/irecv, and a collective that returns at once: the request's name
  std::vector<std::string> requests;    // wait
  std::optional<DType> dtype;           // send/recv family: the element type it declares
  std::uint32_t duration_us = 0;        // compute
  std::string label;                    // compute
  SliceSpec src, dst;                   // copy, accumulate (dst also: what a compute writes)
  std::vector<SliceSpec> reads;         // compute: the slices it reads
  std::string times, var;               // repeat: "times" iterations with variable "var"
  std::vector<ProgramOp> body;          // repeat; a collective with "algorithm": "custom"
  std::string phase;                    // step
  std::vector<TransferSpec> transfers;  // step
};

// A named group of ranks (like torch.distributed.new_group): a list of world ranks,
// or a split of every rank by the value of an expression (like MPI_Comm_split): ranks
// with equal values form one group, ordered by world rank. A collective on a split
// group runs on every part at once.
struct GroupSpec {
  std::string name;
  std::vector<std::int32_t> ranks;
  std::string split;
  Location where;
};

// What must hold at the end of the program ("expect"), on the buffers of every rank
// `ranks` selects: elements [offset, offset + count) of `buffer` hold literal `values`,
// or (`holds`) a copy of a rank's input slice, or a reduction over ranks of one input
// element by element. With `block`, the statement is made for every block of that many
// elements, with `b` the block's index in its expressions. Expressions use rank (the
// rank whose buffer is checked), size and b.
//
//   {"buffer": "y", "ranks": [0], "values": [6, 6, 6, 6]}
//   {"buffer": "out", "block": 4, "holds": {"rank": "b", "buffer": "x", "offset": "4 * rank"}}
//   {"buffer": "grad", "holds": {"reduce_op": "sum", "buffer": "grad", "over": "dp"}}
struct ExpectSpec {
  RankSelector ranks;                 // whose buffers; "all" when empty
  std::string buffer, offset, count;  // the slice; count "" = to the end (values: their number)
  std::string block;                  // holds: one statement per block of this many elements
  std::vector<double> values;         // literal values, the same on every selected rank
  bool holds = false;
  std::string from_rank;  // holds a copy of this rank's input ("": a reduction)
  std::string from_buffer, from_offset;
  ReduceOp reduce_op = ReduceOp::sum;
  RankSelector over;       // a reduction over these ranks ("all" when empty), or
  std::string over_group;  // over the part of this group that holds the checked rank
  Location where;
  std::map<std::string, Location> field_where;  // of each key present ("holds/rank" for nested ones)
};

// A quiz question a lesson asks before a step runs ("quiz": [...], see the README's
// "Quiz questions"); the answer is never written: the window and `collscope quiz`
// work it out from the schedule. Kinds:
//   changes   which cells of `rank`'s `buffer` does the step change?
//   sender    which rank sends to `rank` in the step?
//   value     what will `rank` hold at `element` of `buffer` after the step?
//   complete  which ranks hold a complete reduction (every rank's contribution) after the step?
//   {"step": 3, "kind": "value", "rank": 1, "element": 3, "text": "What does rank 1 hold at x[3] now?"}
enum class QuizKind : std::uint8_t { changes, sender, value, complete };
inline constexpr std::pair<std::string_view, QuizKind> kQuizKinds[] = {{"changes", QuizKind::changes},
                                                                       {"sender", QuizKind::sender},
                                                                       {"value", QuizKind::value},
                                                                       {"complete", QuizKind::complete}};
std::string_view name_of(QuizKind k);

struct QuizSpec {
  std::int32_t step = 0;  // the step index it comes before (0-based, as faults count steps)
  QuizKind kind = QuizKind::changes;
  std::int32_t rank = -1;     // changes, sender, value
  std::string buffer;         // changes, value ("": the buffer the step writes on that rank)
  std::int64_t element = -1;  // value
  std::string text;           // the question in the lesson's words ("": the generated wording)
  Location where;
  std::map<std::string, Location> field_where;  // of each key present
};

// How the window's canvas shows the lesson ("view": "matrix", see the README's "Scenario
// files"): the ranks as boxes with their buffers' cells, or the matrix of one row per
// rank and one column per chunk; `automatic` lets the window choose (the matrix from
// 32 ranks).
enum class CanvasView : std::uint8_t { automatic, boxes, matrix };
inline constexpr std::pair<std::string_view, CanvasView> kCanvasViews[] = {{"boxes", CanvasView::boxes},
                                                                           {"matrix", CanvasView::matrix}};
std::string_view name_of(CanvasView v);

struct Scenario {
  int version = 1;
  std::string title;
  std::string description;
  std::int32_t ranks = 1;
  DType dtype = DType::float32;
  std::vector<BufferSpec> buffers;
  std::vector<GroupSpec> groups;
  std::vector<ProgramOp> program;
  std::vector<ExpectSpec> expect;  // what must hold at the end (checked by both checks)
  // Faults injected on purpose ("faults": [{"rank": 1, "step": 2, "kind": "delay", "ms": 50}]),
  // for lessons about stragglers, crashes, hangs and corrupted data.
  std::vector<Fault> faults;
  std::vector<Location> fault_where;        // of each fault entry (for errors found once the schedule exists)
  std::vector<QuizSpec> quiz;               // questions of the lesson's own, asked before their steps
  CanvasView view = CanvasView::automatic;  // how the window shows it ("view")
  // A second algorithm the window runs the lesson's call with, side by side ("compare":
  // "tree"; "" = none). Checked by compare_scenario below.
  std::string compare;
  Location compare_where;
  std::string file;      // where it was read from ("" for scenarios built from flags)
  Location ranks_where;  // of "ranks" (for the limit a run checks)
};

// Hard limits, checked before anything is allocated.
inline constexpr std::int32_t kMaxRanks = 1024;  // of a schedule that runs
// Of a schedule that is only priced (`collscope predict`, LowerOptions::price_only): the
// reader takes files of up to this many ranks, and lowering refuses more than kMaxRanks
// unless it lowers for pricing.
inline constexpr std::int32_t kMaxPricedRanks = 4096;
inline constexpr std::uint64_t kMaxBufferBytes = 1ull << 32;  // 4 GiB per buffer per rank
inline constexpr std::uint64_t kMaxTotalBytes = 16ull << 30;  // 16 GiB over all buffers and ranks

// Parses and validates a scenario (syntax, keys, types, ranges, names, and every
// program call against the buffers: the checks lower_scenario makes, so a file that
// parses also lowers).
Result<Scenario> parse_scenario(const std::string& text, const std::string& file_name);
Result<Scenario> load_scenario(const std::string& path);

// A file's title and description, read without checking the rest: listings show
// lessons that fail on purpose (the deadlock lesson) by their titles too.
struct ScenarioHeading {
  std::string title, description;
};
Result<ScenarioHeading> read_heading(const std::string& path);

// Lowers the program to a Schedule (buffers + every call's steps). Errors with the
// location of the offending program entry: buffer too small, root out of range,
// unknown algorithm (listing the valid ones), in place not allowed, ...
// Schedule buffer ids follow the order of s.buffers; a barrier's CollArgs use -1 for
// in_buf and out_buf (it has no buffer).
//
// The options say what the schedule is lowered for. On the cpu backend the ring
// all-reduce goes round in cache-sized slices; on a GPU every transfer is a kernel
// launch (or a group of NCCL calls), and slices of 1 MiB would leave the GPU waiting
// for the host, so the GPU backends lower without slices.
struct Machine;
struct LowerOptions {
  std::uint64_t slice_bytes = kCacheSliceBytes;  // 0: no slices
  // What `auto` prices its candidates with (machine.h): the run's own model, so that
  // the pick and the reported prediction agree. nullptr: the cpu model's defaults.
  const Machine* machine = nullptr;
  // Where the node boundaries are (Schedule::ranks_per_node), for the algorithms that
  // know them; 0: from the machine's topology when it has several nodes, else one node.
  std::int32_t ranks_per_node = 0;
  // The schedule is priced, never run: up to kMaxPricedRanks ranks.
  bool price_only = false;
  // With price_only, on a topology (no cache slices): no limit on the buffers' bytes.
  bool unbounded_bytes = false;
};
struct BackendCapabilities;
LowerOptions lower_options_for(const BackendCapabilities& backend);
// The node size a schedule of `world` ranks is lowered with: the options' own, else the
// machine's topology's when the ranks fill several of its nodes, else 0 (one node).
std::int32_t ranks_per_node_for(const LowerOptions& options, std::int32_t world);
Result<Schedule> lower_scenario(const Scenario& s, const LowerOptions& options = {});

// Initial contents of buffer `buf` on `rank`, as doubles (converted to the dtype by the caller).
// random: an integer in [min, max] hashed (splitmix64) from (seed, rank, index), so each
// element's value does not depend on the order elements are filled in.
double initial_value(const BufferSpec& b, std::int32_t rank, std::uint64_t index);

// The buffer a quiz question is about: the one it names, else the first user buffer
// `step` writes on `rank`, else the first user buffer; -1 when there is none.
std::int32_t quiz_buffer_of(const Schedule& s, std::int32_t step, std::int32_t rank, const std::string& buffer);

// The lesson with its collective calls run by `algorithm` instead: what the window's
// compare mode shows beside the lesson. Every top-level collective call (and those in
// repeat bodies) must be of one collective, and `algorithm` one of the registry's
// algorithms for it (not auto, custom or a library's native call). Errors:
// compare.no_call (no collective call to compare), compare.mixed (calls of different
// collectives), compare.unknown_algorithm (listing the valid ones); `where` is where the
// algorithm was named (the "compare" key, or nothing for a command-line flag).
Result<Scenario> compare_scenario(const Scenario& s, const std::string& algorithm, const Location& where = {});
// The algorithms compare_scenario accepts for collective c, in the registry's order.
std::vector<std::string> compare_algorithms(Collective c);
// The collective the lesson's calls make (nullopt: none, or several different ones).
std::optional<Collective> compared_collective(const Scenario& s);

// Writes the scenario back as JSON (format version 1).
std::string to_json(const Scenario& s);

}  // namespace collscope

namespace collscope {

// A one-call scenario from command-line style parameters (`collscope run --coll ...`,
// `collscope bench`, the GUI's parameter panel). Buffers are "send" and "recv", or
// one buffer "buf" in place, filled with default_init().
struct QuickSpec {
  Collective coll = Collective::allreduce;
  std::string algorithm = "auto";
  std::int32_t ranks = 4;
  std::uint64_t count = 1024;
  DType dtype = DType::float32;
  ReduceOp op = ReduceOp::sum;
  std::int32_t root = 0;
  bool in_place = false;
  // Priced on a topology, never run: no buffer is allocated, so the limits on the bytes
  // of a run's buffers (kMaxBufferBytes, kMaxTotalBytes) do not apply.
  bool unbounded_bytes = false;
};

// Errors name the flag ("--root"), id as for scenario files (scenario.out_of_range, ...).
Result<Scenario> scenario_from_spec(const QuickSpec& q);

// Default inputs: seeded small integers, chosen so that every reduction order gives
// the exact same result in this dtype (sums stay within the mantissa; products of 1
// and 2), so the numeric check can demand bit-exact results.
BufferInit default_init(DType t, ReduceOp op, std::int32_t ranks);

}  // namespace collscope
