// Compute spans that say what they read ("reads"): the span waits for the last writes
// of those slices, later writes of them wait for the span, and reading a slice that a
// pending irecv still writes is a race.
#include <doctest/doctest.h>

#include <string>

#include "collscope/program.h"
#include "ir/deps.h"
#include "program_helpers.h"

using namespace collscope;
using namespace collscope::testing;

TEST_CASE("compute reads: one slice or a list, in the record's text and through the round trip") {
  const std::string text =
      program_text(2, R"("w": {"count": 8, "init": "rank"}, "b": {"count": 4, "init": "rank"}, "y": {"count": 4})", R"(
    {"op": "compute", "duration_us": 5, "label": "fwd", "reads": "w", "writes": "y"},
    {"op": "compute", "duration_us": 5, "reads": [{"buffer": "w", "offset": 4, "count": 4}, "b"]})");
  const Scenario s = parse_ok(text);
  REQUIRE(s.program[0].reads.size() == 1);
  REQUIRE(s.program[1].reads.size() == 2);
  CHECK(s.program[1].reads[0].offset == "4");
  const std::string once = to_json(s);
  CHECK(once.find("\"reads\": [\"w\"]") != std::string::npos);
  const Scenario again = parse_ok(once);
  CHECK(to_json(again) == once);
  const Schedule sched = lower_program_ok(text);
  bool found = false;
  for (const auto& op : sched.ops)
    if (op.rank == 0 && op.text == "compute \"fwd\" 5 us reading w[0..8) writing y[0..4)") found = true;
  CHECK(found);
  // Each span's transfer names its reads.
  std::size_t spans_with_reads = 0;
  for (const auto& st : sched.steps)
    for (const auto& t : st.transfers)
      if (t.action == Action::compute && t.reads >= 0) {
        ++spans_with_reads;
        REQUIRE(static_cast<std::size_t>(t.reads) < sched.reads.size());
        for (const Slice& sl : sched.reads[static_cast<std::size_t>(t.reads)]) CHECK(sl.at.rank == t.dst.rank);
      }
  CHECK(spans_with_reads == 4);

  const Error empty =
      parse_fails(program_text(2, R"("w": {"count": 8})", R"({"op": "compute", "duration_us": 5, "reads": []})"));
  CHECK(empty.id == "scenario.wrong_type");
  CHECK(empty.where.pointer == "/program/0/reads");
  const Error unknown = parse_fails(
      program_text(2, R"("w": {"count": 8})", R"({"op": "compute", "duration_us": 5, "reads": ["w", "v"]})"));
  CHECK(unknown.id == "scenario.unknown_buffer");
  CHECK(unknown.where.pointer == "/program/0/reads/1");
  const Error big = parse_fails(
      program_text(2, R"("w": {"count": 8})",
                   R"({"op": "compute", "duration_us": 5, "reads": {"buffer": "w", "offset": 6, "count": 4}})"));
  CHECK(big.id == "scenario.buffer_too_small");
  CHECK(big.where.pointer == "/program/0/reads");
}

TEST_CASE("compute reads: reading what a pending irecv writes is a race") {
  const Error e = parse_fails(program_text(2, R"("w": {"count": 4}, "y": {"count": 4})", R"(
    {"op": "irecv", "ranks": [1], "buffer": "w", "from": 0, "request": "r"},
    {"op": "compute", "ranks": [1], "duration_us": 10, "label": "forward", "reads": "w", "writes": "y"},
    {"op": "send", "ranks": [0], "buffer": "w", "to": 1},
    {"op": "wait", "ranks": [1], "request": "r"})"));
  CHECK(e.id == "program.race");
  CHECK_MESSAGE(
      e.message.find("rank 1's compute \"forward\" 10 us reading w[0..4) writing y[0..4) (op 1) reads w[0..4) "
                     "while rank 1's irecv w[0..4) from rank 0 as r (op 0) is still pending") != std::string::npos,
      e.message);
  CHECK(e.where.pointer == "/program/1");
  // Reading next to a pending isend is fine (the isend only reads too).
  lower_program_ok(program_text(2, R"("w": {"count": 4}, "y": {"count": 4})", R"(
    {"op": "isend", "ranks": [0], "buffer": "w", "to": 1, "request": "r"},
    {"op": "compute", "ranks": [0], "duration_us": 10, "reads": "w", "writes": "y"},
    {"op": "recv", "ranks": [1], "buffer": "w", "from": 0},
    {"op": "wait", "ranks": [0], "request": "r"})"));
}

TEST_CASE("compute reads: the span waits for the last write of what it reads, later writes wait for the span") {
  // By hand, without any program order: rank 1's data lands in rank 0's x (lane 0),
  // rank 0 computes on it (its compute lane, 2 + 0), then new data overwrites x.
  Schedule s;
  s.ranks = 2;
  s.buffers.push_back({"x", {4, 4}, false});
  s.buffers.push_back({"y", {4, 4}, false});
  Call c;
  c.kind = CallKind::program;
  c.num_steps = 3;
  s.calls.push_back(c);
  Step land;
  land.transfers.push_back(Transfer{{1, 0, 0}, {0, 0, 0}, 4, Action::copy, 1});
  Step work;
  Transfer span{{0, 1, 0}, {0, 1, 0}, 0, Action::compute, 1};
  span.duration_us = 10;
  span.reads = 0;
  s.reads.push_back({Slice{{0, 0, 1}, 2}});  // x[1..3) on rank 0
  work.transfers.push_back(span);
  Step again = land;
  s.steps = {land, work, again};
  const auto deps = dataflow::compute_deps(s);
  REQUIRE(deps.size() == 4);
  auto waits = [&](std::size_t lane, std::size_t step, std::int32_t on, std::int32_t at) {
    for (const auto& d : deps[lane][step])
      if (d.rank == on && d.step == at) return true;
    return false;
  };
  CHECK(waits(2, 1, 0, 0));  // read-after-write: the span waits for the data
  CHECK(waits(0, 2, 2, 1));  // write-after-read: the new data waits for the span
  // A span that reads nothing waits for nothing.
  s.steps[1].transfers[0].reads = -1;
  const auto none = dataflow::compute_deps(s);
  for (const auto& d : none[2][1]) CHECK(d.step < 0);
}

TEST_CASE("compute reads: FSDP's forward pass starts after its all-gathered parameters have arrived") {
  // Every rank holds a shard of the parameters; the forward pass needs all of them.
  const std::string text =
      program_text(4, R"("shard": {"count": 256, "init": "rank"}, "params": {"count": 1024}, "act": {"count": 8})", R"(
    {"op": "compute", "ranks": [2], "duration_us": 1500, "label": "slow data loader"},
    {"op": "allgather", "send": "shard", "recv": "params", "algorithm": "ring"},
    {"op": "compute", "duration_us": 200, "label": "forward", "reads": "params", "writes": "act"})",
                   "", "float32");
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(text, mode);
    CHECK(p.outcome.verified());
    const Schedule& s = p.schedule;
    for (std::int32_t r = 0; r < 4; ++r) {
      // The last write into rank r's params, and rank r's forward span.
      double last_write = -1, forward = -1;
      for (const auto& e : p.outcome.record.transfers) {
        const Transfer& t = s.steps[static_cast<std::size_t>(e.step)].transfers[static_cast<std::size_t>(e.transfer)];
        if (t.action != Action::compute && t.dst.rank == r && t.dst.buf == 1)
          last_write = std::max(last_write, e.t1_us);
        if (t.action == Action::compute && t.dst.rank == r && t.reads >= 0) forward = e.t0_us;
      }
      REQUIRE(last_write >= 0);
      REQUIRE(forward >= 0);
      CHECK(forward >= last_write);
    }
  }
}

TEST_CASE("compute reads: tensor parallelism's backward pass starts after the all-reduce of its input") {
  // Two data-parallel copies of four-way tensor parallelism: the partial outputs of the
  // row-parallel layer are all-reduced in each tensor-parallel part; the backward pass
  // reads the result. Blocking, and with a request and its wait.
  for (const char* request : {"", R"(, "request": "tp_sum")"}) {
    const std::string wait = std::string(request).empty() ? "" : R"({"op": "wait", "request": "tp_sum"},)";
    const std::string text = program_text(8, R"("y": {"count": 512, "init": "rank"}, "dx": {"count": 8})", R"J(
      {"op": "compute", "ranks": "rank % 4 == 1", "duration_us": 800, "label": "forward (slow shard)", "writes": "y"},
      {"op": "compute", "ranks": "rank % 4 != 1", "duration_us": 100, "label": "forward", "writes": "y"},
      {"op": "allreduce", "buffer": "y", "group": "tp", "algorithm": "ring")J" + std::string(request) + R"J(},
      )J" + wait + R"J(
      {"op": "compute", "duration_us": 100, "label": "backward", "reads": "y", "writes": "dx"})J",
                                          R"(, "groups": {"tp": {"split": "rank / 4"}})", "float32");
    CAPTURE(text);
    const ProgramRun p = run_program(text);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
    const Schedule& s = p.schedule;
    for (std::int32_t r = 0; r < 8; ++r) {
      double last_write = -1, backward = -1;
      for (const auto& e : p.outcome.record.transfers) {
        const Transfer& t = s.steps[static_cast<std::size_t>(e.step)].transfers[static_cast<std::size_t>(e.transfer)];
        if (t.action != Action::compute && t.dst.rank == r && t.dst.buf == 0)
          last_write = std::max(last_write, e.t1_us);
        if (t.action == Action::compute && t.dst.rank == r && t.reads >= 0) backward = e.t0_us;
      }
      REQUIRE(last_write >= 0);
      REQUIRE(backward >= 0);
      CHECK(backward >= last_write);
    }
  }
}
