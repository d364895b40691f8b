// Collectives inside a custom algorithm's body, on the call's ranks or on groups: their
// steps are the custom call's, verified against the outer collective's postcondition
// and definition (a hierarchical all-reduce: reduce-scatter on each node, all-reduce
// across the nodes, all-gather on each node).
#include <doctest/doctest.h>

#include <string>

#include "collscope/verify.h"
#include "program_helpers.h"
#include "program_order_checks.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

// Eight ranks as two nodes of four. x: 8 elements per rank; part: the node's block.
std::string hierarchical(const std::string& rs_group, const std::string& ar_group, const std::string& extra_body = "",
                         const std::string& dtype = "int32") {
  return program_text(8, R"("x": {"count": 8, "init": "rank_index"}, "part": {"count": 2, "scratch": true})",
                      R"(
    {"op": "allreduce", "buffer": "x", "algorithm": "custom", "caption": "hierarchical all-reduce", "body": [
      {"op": "reduce_scatter", "send": "x", "recv": "part", "group": ")" +
                          rs_group + R"(", "algorithm": "ring",
       "caption": "every node sums its ranks' x, a quarter on each rank"},
      {"op": "allreduce", "buffer": "part", "group": ")" +
                          ar_group + R"(", "caption": "the nodes add their sums"},)" + extra_body + R"(
      {"op": "allgather", "send": "part", "recv": "x", "group": ")" +
                          rs_group + R"(", "caption": "every node shares the total"}]})",
                      R"(, "groups": {"node": {"split": "rank / 4"}, "cross": {"split": "rank % 4"}, "pair": [0, 1]})",
                      dtype);
}

}  // namespace

TEST_CASE("custom collectives: a hierarchical all-reduce from collectives on groups verifies as an all-reduce") {
  const std::string text = hierarchical("node", "cross");
  const Schedule s = lower_program_ok(text);
  REQUIRE(s.calls.size() == 1);  // the inner calls are steps of the custom one
  CHECK(s.calls[0].custom);
  CHECK(s.calls[0].num_steps == static_cast<std::int32_t>(s.steps.size()));
  for (const auto& st : s.steps) {
    CHECK(st.call == 0);
    CHECK_FALSE(st.caption.empty());
  }
  // Both nodes' reduce-scatters run side by side, in the same steps.
  CHECK_MESSAGE(s.steps.front().caption.rfind("reduce_scatter on node groups {0-3} and {4-7}: ", 0) == 0,
                s.steps.front().caption);
  CHECK(verify_symbolic(s).ok());
  CHECK(verdict_scope(s) == "postcondition of allreduce (call 0)");
  CHECK(check_order_in_deps(s) > 0);
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(text, mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    for (int r = 0; r < 8; ++r)
      for (int i = 0; i < 8; ++i) CHECK(int_at(p.outcome, 0, r, static_cast<std::size_t>(i)) == 2800 + 8 * i);
    CHECK(check_order_in_times(p.schedule, p.outcome.record) > 0);
  }
}

TEST_CASE("custom collectives: a hierarchy that forgets a level fails the outer postcondition") {
  // All-reducing across the wrong ranks (each node with itself) leaves the other node out.
  const ProgramRun p = run_program(hierarchical("node", "node"));
  CHECK_FALSE(p.outcome.verified());
  REQUIRE_FALSE(p.outcome.symbolic.ok());
  CHECK(p.outcome.symbolic.error().id != "");
  CHECK(p.outcome.numeric.wrong > 0);
}

TEST_CASE("custom collectives: inner calls on the call's own ranks, inside a custom call on a group") {
  // A custom all-reduce on each half of a split, written as reduce then broadcast on the
  // half (no group named: the call's ranks, numbered from 0 in the half).
  const std::string text =
      program_text(8, R"("x": {"count": 4, "init": "rank"}, "t": {"count": 4, "scratch": true})", R"(
    {"op": "allreduce", "buffer": "x", "algorithm": "custom", "group": "half", "body": [
      {"op": "reduce", "send": "x", "recv": "t", "root": 1, "algorithm": "binomial"},
      {"op": "copy", "ranks": [1], "src": "t", "dst": "x"},
      {"op": "broadcast", "buffer": "x", "root": 1}]})",
                   R"(, "groups": {"half": {"split": "rank / 4"}})");
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(text, mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    for (int r = 0; r < 8; ++r) CHECK(int_at(p.outcome, 0, r, 0) == (r < 4 ? 0 + 1 + 2 + 3 : 4 + 5 + 6 + 7));
  }
}

TEST_CASE("custom collectives: what an inner call may not do") {
  const std::string bufs = R"("x": {"count": 4, "init": "rank"}, "t": {"count": 4, "scratch": true})";
  struct Case {
    const char* program;
    const char* id;
    const char* says;
    const char* pointer;
  };
  const Case cases[] = {
      {R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "group": "pair", "body": [
          {"op": "allreduce", "buffer": "x", "group": "trio"}]})",
       "scenario.bad_call", "allreduce on group trio inside this custom algorithm includes rank 2",
       "/program/0/body/0/group"},
      {R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
          {"op": "allreduce", "buffer": "x", "reduce_op": "max"}]})",
       "scenario.bad_call",
       "allreduce inside this custom allreduce combines with max, but the allreduce it implements combines with sum",
       "/program/0/body/0/reduce_op"},
      {R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
          {"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": []}]})",
       "scenario.bad_call", "a custom algorithm cannot contain another one", "/program/0/body/0/body"},
  };
  for (const Case& c : cases) {
    const std::string program = c.program;
    CAPTURE(program);
    const Error e = parse_fails(program_text(4, bufs, program, R"(, "groups": {"pair": [0, 1], "trio": [0, 1, 2]})"));
    CHECK(e.id == c.id);
    CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
    CHECK(e.where.pointer == c.pointer);
  }
}
