// Collectives with a request, like `work = dist.all_reduce(x, async_op=True)` and
// `work.wait()`: the call returns at once, the rank goes on (its compute overlaps the
// collective), and a wait completes it. Touching its buffers before the wait is a race,
// with the same rules as isend and irecv.
#include <doctest/doctest.h>

#include <string>

#include "collscope/program.h"
#include "ir/deps.h"
#include "program_helpers.h"
#include "program_order_checks.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

const std::string kTwoBuckets = R"("a": {"count": 4, "init": "rank"}, "b": {"count": 4, "init": "rank"})";

}  // namespace

TEST_CASE("async collectives: a request is read, written back, named in the record and lowered") {
  const std::string text = program_text(2, kTwoBuckets, R"(
    {"op": "allreduce", "buffer": "a", "algorithm": "ring", "request": "h"},
    {"op": "wait", "request": "h"})");
  const Scenario s = parse_ok(text);
  CHECK(s.program[0].request == "h");
  const std::string once = to_json(s);
  CHECK(once.find("\"request\": \"h\"") != std::string::npos);
  CHECK(to_json(parse_ok(once)) == once);
  const Schedule sched = lower_program_ok(text);
  std::size_t calls = 0, waits = 0;
  for (const auto& op : sched.ops) {
    if (op.op == "allreduce") {
      ++calls;
      CHECK(op.order == OpOrder::nonblocking);
      CHECK(op.text == "allreduce a (ring) as h");
    }
    if (op.op == "wait") {
      ++waits;
      REQUIRE(op.completes.size() == 1);
      CHECK(sched.ops[static_cast<std::size_t>(op.completes[0])].op == "allreduce");
    }
  }
  CHECK(calls == 2);
  CHECK(waits == 2);
  const Error bad = parse_fails(program_text(2, kTwoBuckets, R"({"op": "allreduce", "buffer": "a", "request": 3})"));
  CHECK(bad.id == "scenario.bad_name");
  CHECK(bad.where.pointer == "/program/0/request");
}

TEST_CASE("async collectives: compute overlaps the collective until the wait, a blocking call does not") {
  // DDP's overlap: the gradients of a are all-reduced while b's are computed.
  auto second_span_waits_for_comm = [](const std::string& text) {
    const Schedule s = lower_program_ok(text);
    const auto deps = dataflow::compute_deps(s);
    std::int32_t second = -1;
    for (std::size_t k = 0; k < s.steps.size(); ++k)
      for (const auto& t : s.steps[k].transfers)
        if (t.action == Action::compute && t.dst.buf == 1 && t.dst.rank == 0 && second < 0)
          second = static_cast<std::int32_t>(k);
    REQUIRE(second >= 0);
    bool waits = false;
    for (const auto& d : deps[2][static_cast<std::size_t>(second)]) waits |= d.step >= 0 && d.rank < 2;
    CHECK(check_order_in_deps(s) > 0);
    return waits;
  };
  const std::string program = R"(
    {"op": "compute", "duration_us": 500, "label": "grad a", "writes": "a"},
    {"op": "allreduce", "buffer": "a", "algorithm": "ring", "request": "ha"},
    {"op": "compute", "duration_us": 500, "label": "grad b", "writes": "b"},
    {"op": "allreduce", "buffer": "b", "algorithm": "ring", "request": "hb"},
    {"op": "wait", "requests": ["ha", "hb"]},
    {"op": "compute", "duration_us": 100, "label": "optimizer", "reads": ["a", "b"]})";
  CHECK_FALSE(second_span_waits_for_comm(program_text(2, kTwoBuckets, program)));
  std::string blocking = program;
  for (const char* req : {R"(, "request": "ha")", R"(, "request": "hb")"})
    blocking.erase(blocking.find(req), std::string(req).size());
  blocking.erase(blocking.find(R"({"op": "wait", "requests": ["ha", "hb"]},)"),
                 std::string(R"({"op": "wait", "requests": ["ha", "hb"]},)").size());
  CHECK(second_span_waits_for_comm(program_text(2, kTwoBuckets, blocking)));

  // Measured: the optimizer starts after both all-reduces have completed on its rank.
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(program_text(2, kTwoBuckets, program), mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    CHECK(check_order_in_times(p.schedule, p.outcome.record) > 0);
    for (std::int32_t r = 0; r < 2; ++r) CHECK(int_at(p.outcome, 0, r, 0) == 1);  // 0 + 1
  }
}

TEST_CASE("async collectives: touching the buffers before the wait is a race, reading a send buffer is not") {
  struct Case {
    const char* program;
    const char* says;
    const char* pointer;
  };
  const Case races[] = {
      {R"({"op": "allreduce", "buffer": "a", "request": "h"}, {"op": "compute", "duration_us": 5, "reads": "a"}, {"op": "wait", "request": "h"})",
       "rank 0's compute 5 us reading a[0..4) (op 1) reads a[0..4) while rank 0's allreduce a as h (op 0) is still "
       "pending",
       "/program/1"},
      {R"({"op": "allreduce", "buffer": "a", "request": "h"}, {"op": "copy", "src": "a", "dst": "b"}, {"op": "wait", "request": "h"})",
       "reads a[0..4) while rank 0's allreduce a as h (op 0) is still pending", "/program/1"},
      {R"({"op": "allreduce", "buffer": "a", "request": "h"}, {"op": "send", "ranks": [0], "buffer": "a", "to": 1}, {"op": "recv", "ranks": [1], "buffer": "b", "from": 0}, {"op": "wait", "request": "h"})",
       "rank 0's send a[0..4) to rank 1 (op 1) reads a[0..4)", "/program/1"},
      {R"({"op": "allgather", "send": "a", "recv": "b", "count": 2, "request": "h"}, {"op": "copy", "src": "b", "dst": "a"}, {"op": "wait", "request": "h"})",
       "reads b[0..4) while rank 0's allgather a -> b as h (op 0) is still pending", "/program/1"},
      {R"({"op": "allgather", "send": "a", "recv": "b", "count": 2, "request": "h"}, {"op": "compute", "duration_us": 5, "writes": "a"}, {"op": "wait", "request": "h"})",
       "writes a[0..4) while rank 0's allgather a -> b as h (op 0) is still pending", "/program/1"},
      {R"({"op": "allreduce", "buffer": "a", "request": "h"}, {"op": "allreduce", "buffer": "a"}, {"op": "wait", "request": "h"})",
       "rank 0's allreduce a (op 1) writes a[0..4) while rank 0's allreduce a as h (op 0) is still pending",
       "/program/1"},
  };
  for (const Case& c : races) {
    const std::string program = c.program;
    CAPTURE(program);
    const Error e = parse_fails(program_text(2, kTwoBuckets, c.program));
    CHECK(e.id == "program.race");
    CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
    CHECK(e.where.pointer == c.pointer);
  }
  // Reading the send buffer of a pending all-gather is fine, as next to an isend.
  lower_program_ok(program_text(2, kTwoBuckets, R"(
    {"op": "allgather", "send": "a", "recv": "b", "count": 2, "request": "h"},
    {"op": "compute", "duration_us": 5, "reads": "a"},
    {"op": "wait", "request": "h"},
    {"op": "compute", "duration_us": 5, "reads": "b"})"));
}

TEST_CASE(
    "async collectives: requests follow the isend rules: waited once, never reused while pending, never forgotten") {
  struct Case {
    const char* program;
    const char* id;
    const char* says;
    const char* pointer;
  };
  const Case cases[] = {
      {R"({"op": "allreduce", "buffer": "a", "request": "h"})", "program.unwaited",
       "rank 0's allreduce a as h (op 0) is never waited for", "/program/0/request"},
      {R"({"op": "allreduce", "buffer": "a", "request": "h"}, {"op": "allreduce", "buffer": "b", "request": "h"}, {"op": "wait", "request": "h"})",
       "program.request_reused", "reuses request name \"h\" while rank 0's allreduce a as h (op 0) is still pending",
       "/program/1/request"},
      {R"({"op": "allreduce", "buffer": "a", "request": "h"}, {"op": "wait", "request": "h"}, {"op": "wait", "request": "h"})",
       "program.request_done", "which the wait of op 1 already completed", "/program/2/request"},
      // Rank 1 blocks in a recv that rank 0 only sends after waiting for the all-reduce
      // rank 1 has not called yet.
      {R"({"op": "recv", "ranks": [1], "buffer": "b", "from": 0}, {"op": "allreduce", "buffer": "a", "request": "h"},
          {"op": "wait", "request": "h"}, {"op": "send", "ranks": [0], "buffer": "b", "to": 1})",
       "program.deadlock",
       "deadlock: rank 0 waits in wait (op 2) for request h, its allreduce (op 1), for rank 1 while rank 1 waits in "
       "recv "
       "from rank 0 (op 0)",
       "/program/2"},
  };
  for (const Case& c : cases) {
    const std::string program = c.program;
    CAPTURE(program);
    const Error e = parse_fails(program_text(2, kTwoBuckets, c.program));
    CHECK(e.id == c.id);
    CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
    CHECK(e.where.pointer == c.pointer);
  }
}

TEST_CASE("async collectives: FSDP prefetches the next layer's parameters while computing this one") {
  // Two layers, every rank holds a shard of each. The all-gather of layer 1 runs while
  // layer 0 computes; each forward span reads its gathered parameters after its wait.
  const std::string text =
      program_text(4, R"("s0": {"count": 64, "init": "rank"}, "s1": {"count": 64, "init": "rank_index"},
      "p0": {"count": 256}, "p1": {"count": 256}, "act": {"count": 8})",
                   R"(
    {"op": "allgather", "send": "s0", "recv": "p0", "request": "g0"},
    {"op": "allgather", "send": "s1", "recv": "p1", "request": "g1"},
    {"op": "wait", "request": "g0"},
    {"op": "compute", "duration_us": 300, "label": "forward 0", "reads": "p0", "writes": "act"},
    {"op": "wait", "request": "g1"},
    {"op": "compute", "duration_us": 300, "label": "forward 1", "reads": ["p1", "act"], "writes": "act"})",
                   "", "float32");
  const Schedule s = lower_program_ok(text);
  CHECK(check_order_in_deps(s) > 0);
  // The all-gather of layer 1 does not wait for the forward pass of layer 0.
  const auto deps = dataflow::compute_deps(s);
  for (std::size_t k = 0; k < s.steps.size(); ++k)
    for (const auto& t : s.steps[k].transfers)
      if (t.action != Action::compute && t.dst.buf == s.find_buffer("p1"))
        for (const auto& d : deps[static_cast<std::size_t>(t.dst.rank)][k]) CHECK_FALSE((d.rank >= 4 && d.step >= 0));
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(text, mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    CHECK(check_order_in_times(p.schedule, p.outcome.record) > 0);
    // Each forward span starts after the last write into the parameters it reads.
    for (std::int32_t r = 0; r < 4; ++r)
      for (const char* params : {"p0", "p1"}) {
        const std::int32_t buf = s.find_buffer(params);
        double last_write = -1, start = -1;
        for (const auto& e : p.outcome.record.transfers) {
          const Transfer& t = s.steps[static_cast<std::size_t>(e.step)].transfers[static_cast<std::size_t>(e.transfer)];
          if (t.action != Action::compute && t.dst.rank == r && t.dst.buf == buf)
            last_write = std::max(last_write, e.t1_us);
          if (t.action == Action::compute && t.dst.rank == r && t.reads >= 0)
            for (const Slice& sl : s.reads[static_cast<std::size_t>(t.reads)])
              if (sl.at.buf == buf) start = e.t0_us;
        }
        REQUIRE(last_write >= 0);
        REQUIRE(start >= 0);
        CHECK(start >= last_write);
      }
  }
}
