// Programs: from a scenario's per-rank ops to the Schedule (docs/ARCHITECTURE.md, "Programs").
//
// Lowering happens in two passes:
//   expand (expand.cpp)  every rank walks the program on its own, as the tutorial's
//                        Python would run on that rank: repeats unrolled, "ranks"
//                        selectors and expressions evaluated. The result is one list
//                        of Instances per rank, in program order.
//   match  (match.cpp)   a deterministic simulation with MPI's semantics puts those
//                        lists into steps: messages between a pair of ranks match in
//                        program order, a blocking op completes when its message has
//                        moved, a non-blocking one returns at once and its wait
//                        completes when the message has moved; collectives (and
//                        written steps) start when every member has arrived and lower
//                        with the algorithms library. Whatever cannot complete is a
//                        deadlock, reported with its wait-for cycle.
// Between the two, every communicator's members must enter the same collectives in the
// same order with the same op, buffers, count, dtype and root (NCCL's rule, which
// torch's TORCH_DISTRIBUTED_DEBUG=DETAIL checks at run time): the n-th collective of
// every member is compared, calls written as different entries that agree are joined
// (`if rank == 0: allreduce(x) else: allreduce(x)`), and calls that disagree are a
// program.desync error listing every rank's call, instead of a deadlock report.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/scenario.h"
#include "collscope/schedule.h"
#include "scenario/expr.h"

namespace collscope::program {

// Expressions belong to the scenario language (scenario/expr.h); programs evaluate them.
using scenario::Env;
using scenario::Expression;
using scenario::parse_rank_range;

enum class Kind : std::uint8_t { send, recv, wait, compute, copy, accumulate, sync };

// A slice of one rank's buffer, evaluated.
struct Region {
  std::int32_t buf = -1;
  std::uint64_t offset = 0, count = 0;
};

inline bool overlaps(const Region& a, const Region& b) {
  return a.buf == b.buf && a.count && b.count && a.offset < b.offset + b.count && b.offset < a.offset + a.count;
}

// "x[0..4)"
inline std::string overlap_text(const Schedule& s, const Region& r) {
  return s.buffers[static_cast<std::size_t>(r.buf)].name + "[" + std::to_string(r.offset) + ".." +
         std::to_string(r.offset + r.count) + ")";
}

// One op of one rank's program with every expression evaluated.
struct Instance {
  Kind kind = Kind::send;
  bool blocking = true;  // send/recv; isend/irecv are not
  const ProgramOp* op = nullptr;
  std::string pointer;     // "/program/3/body/1"
  std::string where_text;  // "op 3.1, i=2"
  std::int32_t iteration = -1;
  std::int32_t peer = -1;             // send/recv
  Region region;                      // send/recv: the message's slice; compute: what it writes; local: destination
  Region src;                         // copy/accumulate: the source
  std::vector<Region> reads;          // compute: what it reads
  std::string caption, label;         // the op's, with its expressions ("F{mb}") evaluated
  std::string request;                // isend/irecv, a collective that returns at once
  std::vector<std::string> requests;  // wait
  std::int32_t sync = -1;             // collectives and steps: index into Expansion::syncs
  std::int32_t record = -1;           // index into Schedule::ops
};

// A collective call or written step that several ranks enter together.
struct Sync {
  const ProgramOp* op = nullptr;
  std::string pointer, where_text;
  std::vector<std::int32_t> members;                      // world ranks, in group order
  std::vector<std::pair<std::string, std::int64_t>> env;  // loop variables when it was reached
  std::string comm;            // the communicator: "" = every rank, else the group (and its part of a split)
  std::string caption, phase;  // the op's, with its loop variables filled in
  std::string group;           // the group it runs on ("" = the frame's ranks)
  std::int32_t part = -1;      // a split group: which part (in the order of their lowest ranks)
};

struct Expansion {
  std::vector<std::vector<Instance>> ranks;  // per rank, in program order
  std::vector<Sync> syncs;
};

// Where a program runs: every rank of the world, or, for the body of a custom
// algorithm, the members of the call it implements. Inside a frame, `rank` and `size`
// are the frame's (group rank g is world rank members[g]), and so are the peers,
// "ranks" selectors and written steps' ranks of its ops.
struct Frame {
  std::vector<std::int32_t> members;  // world ranks in group order; empty = the world
  std::string group;                  // the group's name, for messages ("" = the world)
  std::string comm;                   // the call's communicator (Sync::comm)
};

// "rank 5" in the world; "rank 5 (tp rank 1)" for group rank 1 of group tp.
std::string rank_text(const Frame& f, std::int32_t world, std::int32_t group_rank);

// Walks `ops` for every rank of `frame`. `records` receives one OpRecord per instance.
Result<Expansion> expand(const Scenario& s, const std::vector<ProgramOp>& ops, const std::string& pointer,
                         std::vector<OpRecord>& records, const Frame& frame = {});

// Everything the matcher appends to: the schedule being built and the scenario.
struct Target {
  const Scenario& scenario;
  Schedule& schedule;
  // When set, every step goes to this call (a custom algorithm's body); otherwise
  // runs of point-to-point steps get program calls of their own.
  std::int32_t fixed_call = -1;
  // What `auto` prices its candidates with (LowerOptions::machine); nullptr: this
  // machine's cpu model with its defaults.
  const Machine* tuner = nullptr;
  Frame frame;  // where the program runs (a custom algorithm's body: its call's members)
};

// The transfers of a written step, for every rank of `frame` its lines select; `vars`
// are the enclosing repeats' variables; more than `room` transfers is an error.
Result<std::vector<Transfer>> written_transfers(const Scenario& sc, const Schedule& s, const ProgramOp& op,
                                                const std::vector<std::pair<std::string, std::int64_t>>& vars,
                                                const std::string& pointer, std::uint64_t room,
                                                const Frame& frame = {});

// Puts the expanded program into steps (appended to t.schedule).
Status match(const Expansion& x, Target& t);

// Resolves the scenario's "expect" into sched.expect (expectations.cpp).
Status resolve_expectations(const Scenario& s, Schedule& sched);

// Lowers a whole scenario whose program is more than collectives on every rank.
Result<Schedule> lower_program(const Scenario& s, const LowerOptions& options);

}  // namespace collscope::program
