// Every program op has one kind, set once by the reader from its "op"; the writer, the
// expander and the matcher dispatch on it, never on the name again.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "program_helpers.h"
#include "scenario/read_program.h"

using namespace collscope;
using namespace collscope::testing;

TEST_CASE("program ops: the reader gives every op its kind, and the names come from one table") {
  const std::string program = R"(
    {"op": "send", "ranks": [0], "buffer": "x", "to": 1},
    {"op": "recv", "ranks": [1], "buffer": "x", "from": 0},
    {"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "a"},
    {"op": "irecv", "ranks": [1], "buffer": "y", "from": 0, "request": "a"},
    {"op": "wait", "request": "a"},
    {"op": "compute", "duration_us": 1},
    {"op": "copy", "src": "x", "dst": "y"},
    {"op": "accumulate", "src": "x", "dst": "y"},
    {"op": "repeat", "times": 1, "body": [{"op": "allreduce", "buffer": "x"}]},
    {"op": "allreduce", "buffer": "y", "algorithm": "custom", "body": [
      {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "y"}, "to": {"rank": "rank", "buffer": "y"}, "count": 0}]}]})";
  const Scenario s = parse_ok(program_text(2, R"("x": {"count": 2, "init": "rank"}, "y": {"count": 2})", program));
  using K = ProgramOp::Kind;
  const K want[] = {K::send,    K::recv, K::isend,      K::irecv,  K::wait,
                    K::compute, K::copy, K::accumulate, K::repeat, K::collective};
  REQUIRE(s.program.size() == std::size(want));
  for (std::size_t i = 0; i < s.program.size(); ++i) {
    CAPTURE(s.program[i].op);
    CHECK(s.program[i].kind == want[i]);
  }
  CHECK(s.program[8].body[0].kind == K::collective);
  CHECK(s.program[9].body[0].kind == K::step);
  // The names a program accepts are the table's, and the unknown-op error lists them.
  std::vector<std::string> names;
  for (const auto& [name, kind] : kProgramOps) names.emplace_back(name);
  CHECK(scenario::program_op_names() == names);
  const Error e = parse_fails(program_text(2, R"("x": {"count": 2})", R"({"op": "sendd", "buffer": "x", "to": 1})"));
  CHECK(e.id == "scenario.unknown_op");
  for (const auto& n : names) CHECK(e.hint.find(n) != std::string::npos);
  // Written back and read again, every op keeps its kind.
  const Scenario again = parse_ok(to_json(s));
  for (std::size_t i = 0; i < s.program.size(); ++i) CHECK(again.program[i].kind == s.program[i].kind);
}

TEST_CASE("program ops: ops built in code dispatch on their kind") {
  // A scenario built in code, not read: a send and a recv with kinds and no "op" text.
  Scenario s;
  s.ranks = 2;
  s.dtype = DType::int32;
  BufferSpec x;
  x.name = "x";
  x.count = {2, 2};
  x.init.kind = InitKind::rank;
  s.buffers.push_back(x);
  ProgramOp send;
  send.kind = ProgramOp::Kind::send;
  send.op = "send";
  send.buffer = "x";
  send.peer = "1";
  send.ranks.list = {0};
  ProgramOp recv = send;
  recv.kind = ProgramOp::Kind::recv;
  recv.op = "recv";
  recv.ranks.list = {1};
  recv.peer = "0";
  s.program = {send, recv};
  auto sched = lower_scenario(s);
  REQUIRE_MESSAGE(sched.ok(), (sched.ok() ? "" : sched.error().format()));
  REQUIRE(sched->steps.size() == 1);
  CHECK(sched->steps[0].transfers[0].src.rank == 0);
  CHECK(sched->steps[0].transfers[0].dst.rank == 1);
  CHECK(sched->ops[0].op == "send");
}
