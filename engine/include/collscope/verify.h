// Verification (docs/ARCHITECTURE.md, "Verification"). Two independent checks, both on every run:
//  - symbolic: the schedule runs on contribution sets instead of numbers, and each
//    call's postcondition is checked (plus the conflict rule inside every step);
//  - numeric: after a backend ran, outputs are compared with a host reference
//    computed from the inputs by the collective's definition (compute_reference in run.h).
// The two share nothing but the inputs and the call's buffer layout: each collective's
// descriptor (collective.h) states its postcondition and its numeric definition
// separately, so a mistake in one of them is still caught by the other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/collective.h"
#include "collscope/result.h"
#include "collscope/run.h"
#include "collscope/schedule.h"

namespace collscope {

// Conflict rule: inside one step no transfer may write a slice that another transfer
// of the same step reads or writes. Error id "verify.conflict", naming both transfers.
Status check_conflicts(const Schedule& s);

// Structural checks: ranks, buffer ids and slices in bounds. Error id "verify.out_of_bounds".
Status check_bounds(const Schedule& s);

// Runs the steps of one call on contribution sets and checks the collective's
// postcondition. Error ids: "verify.double_count", "verify.missing_contribution",
// "verify.wrong_data", "verify.input_modified". Messages name the first bad step,
// rank, buffer and element.
Status verify_call_symbolic(const Schedule& s, std::int32_t call);

// Bounds + conflicts + every call's postcondition + the scenario's expectations.
Status verify_symbolic(const Schedule& s);
// The same, with `d` standing in for the descriptor of d.coll: lets a test break a
// postcondition on purpose and show that the numeric check still catches a wrong schedule.
Status verify_symbolic(const Schedule& s, const CollectiveDescriptor& d);

// The scenario's expectations (Schedule::expect), on the contribution sets of the
// whole program from its inputs. Error id "verify.expectation", naming the rank, the
// element, what it holds and what the expectation says. Literal values are left to the
// numeric side.
Status check_expectations_symbolic(const Schedule& s);
// The same expectations on the values a backend left (`got`, every user buffer) against
// the inputs the run started from. Counts every wrong element, like compare_numeric.
NumericReport check_expectations_numeric(const Schedule& s, const HostMemory& got, const HostMemory& inputs);

// What "verified" covers for this schedule, in words: "postcondition of allreduce
// (call 2); expectations on y and out", or "no expectation: the run only matched its
// schedule" for a program of point-to-point steps without any.
std::string verdict_scope(const Schedule& s);

// ---------------------------------------------------------------------------
// Contribution sets, for views that colour cells by the ranks whose data they hold.

// The inputs an element holds: for every source rank in `ranks`, element `index` of
// buffer `buf` as it was when the call began, `times` times each.
struct Contribution {
  std::int32_t buf = 0;
  std::uint64_t index = 0;
  std::vector<std::int32_t> ranks;
};

// A run of elements and what they hold: elements [start, end) of the slice asked for,
// element i holding input element base + (i - start) of every term's buffer, from every
// rank of the term.
struct HeldRun {
  std::uint64_t start = 0, end = 0;  // relative to the slice
  std::vector<Contribution> terms;   // index: the base, at `start`
  bool initialised = true;           // false: scratch space nothing wrote
  std::uint32_t divisions = 0;       // how many times an average divided it
  // False when the sets cannot tell what it holds: an input counted twice, or data
  // combined after an average (possible only in a whole-program state).
  bool exact = true;
  std::int32_t last_step = -1;  // the step that last wrote it (-1: never written)
};

// Symbolic state of one call, advanced step by step.
class SymbolicState {
 public:
  // `descriptor`: whose postcondition to check (null: the call's collective's own).
  SymbolicState(const Schedule& s, std::int32_t call, const CollectiveDescriptor* descriptor = nullptr);
  // The whole schedule from the program's inputs, every call after the other; where an
  // input would be counted twice the element is marked inexact instead of failing.
  struct WholeProgram {};
  SymbolicState(const Schedule& s, WholeProgram);
  // Steps [first, end) from the inputs, as leniently: the parts of a split group's call
  // that share those steps, together (shared_span in schedule.h).
  struct Steps {
    std::int32_t first = 0, end = 0;
  };
  SymbolicState(const Schedule& s, Steps steps);
  ~SymbolicState();
  SymbolicState(const SymbolicState&) = delete;
  SymbolicState& operator=(const SymbolicState&) = delete;

  // Applies the next step of the call; returns an error on double counting.
  Status advance();
  std::int32_t next_step() const;  // absolute step index
  bool done() const;
  // What element `index` of `buf` on `rank` holds now.
  std::vector<Contribution> contents(std::int32_t rank, std::int32_t buf, std::uint64_t index) const;
  // Which ranks' inputs element `index` of `buf` on `rank` holds now, over all its terms,
  // as bits (rank r is bit r % 64 of word r / 64); `words` is resized to the world's
  // words. What contents() says without a list per rank: a picture of 1024 ranks asks
  // it of every chunk.
  void holders(std::int32_t rank, std::int32_t buf, std::uint64_t index, std::vector<std::uint64_t>& words) const;
  // What elements [offset, offset + count) of `buf` on `rank` hold now, run by run.
  std::vector<HeldRun> held(std::int32_t rank, std::int32_t buf, std::uint64_t offset, std::uint64_t count) const;
  // After the last step: checks the call's postcondition.
  Status check_postcondition() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace collscope
