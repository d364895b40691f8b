// "expect": what a scenario says must hold at the end, on buffers, per rank: literal
// values, or symbolic statements (a copy of a rank's slice, a reduction over ranks)
// that both the symbolic and the numeric side check. And the words that say what a
// verdict covered.
#include <doctest/doctest.h>

#include <string>

#include "collscope/verify.h"
#include "program_helpers.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

// All-to-all written with isend/irecv, as in MoE token routing: rank r sends block d
// of its tokens to rank d and receives rank s's block for it at `recv_offset`.
std::string routing(const std::string& recv_offset, const std::string& expect) {
  return program_text(4, R"("tokens": {"count": 8, "init": "rank_index"}, "routed": {"count": 8})",
                      R"J(
    {"op": "repeat", "times": "size", "var": "k", "body": [
      {"op": "isend", "buffer": "tokens", "offset": "2 * ((rank + k) % size)", "count": 2, "to": "(rank + k) % size", "request": "s"},
      {"op": "irecv", "buffer": "routed", "offset": ")J" +
                          recv_offset + R"J(", "count": 2, "from": "(rank - k) % size", "request": "r"},
      {"op": "wait", "requests": ["s", "r"]}]})J",
                      expect.empty() ? "" : R"(, "expect": [)" + expect + "]");
}

const char* kRouted =
    R"({"buffer": "routed", "block": 2, "holds": {"rank": "b", "buffer": "tokens", "offset": "2 * rank"}})";

}  // namespace

TEST_CASE("expect: every form is read, written back and resolved rank by rank") {
  const std::string text = program_text(4, R"("x": {"count": 4, "init": "rank"}, "y": {"count": 8})", R"(
    {"op": "allreduce", "buffer": "x"}, {"op": "allgather", "send": "x", "recv": "y", "count": 2})",
                                        R"(, "groups": {"tp": {"split": "rank / 2"}}, "expect": [
    {"buffer": "x", "holds": {"reduce_op": "sum", "buffer": "x"}},
    {"buffer": "x", "ranks": [0], "offset": 1, "values": [6, 6, 6]},
    {"buffer": "y", "ranks": "rank < 2", "block": 2, "holds": {"rank": "b", "buffer": "x", "offset": 0}},
    {"buffer": "x", "ranks": "0..1", "count": 2, "holds": {"reduce_op": "max", "buffer": "x", "over": "tp"}},
    {"buffer": "x", "holds": {"reduce_op": "avg", "buffer": "x", "over": [1, 3]}}])");
  const Scenario s = parse_ok(text);
  REQUIRE(s.expect.size() == 5);
  CHECK(s.expect[1].values == std::vector<double>{6, 6, 6});
  CHECK(s.expect[2].block == "2");
  CHECK(s.expect[3].over_group == "tp");
  CHECK(s.expect[4].over.list == std::vector<std::int32_t>{1, 3});
  const std::string once = to_json(s);
  CHECK(to_json(parse_ok(once)) == once);
  CHECK(once.find("\"expect\"") != std::string::npos);
  const Schedule sched = lower_program_ok(text);
  // 4 ranks + 1 + 2 ranks x 4 blocks + 2 + 4.
  CHECK(sched.expect.size() == 4 + 1 + 8 + 2 + 4);
  const Expectation& block = sched.expect[5 + 3];  // rank 0, block 3
  CHECK(block.kind == Expectation::Kind::copy);
  CHECK(block.rank == 0);
  CHECK(block.offset == 6);
  CHECK(block.from_rank == 3);
  CHECK(sched.expect[13].over == std::vector<std::int32_t>{0, 1});  // tp part of rank 0
  REQUIRE(sched.expect_where.size() == 5);
  CHECK(sched.expect_where[2].pointer == "/expect/2");
  CHECK(sched.expect_where[2].line > 0);
}

TEST_CASE("expect: statements that do not fit are refused with their place") {
  const std::string bufs = R"("x": {"count": 4, "init": "rank"}, "t": {"count": 4, "scratch": true})";
  struct Case {
    const char* expect;
    const char* id;
    const char* says;
    const char* pointer;
  };
  const Case cases[] = {
      {R"({"buffer": "z", "values": [1]})", "scenario.unknown_buffer", "unknown buffer \"z\"", "/expect/0/buffer"},
      {R"({"buffer": "t", "values": [1]})", "scenario.bad_call", "scratch space", "/expect/0/buffer"},
      {R"({"buffer": "x"})", "scenario.missing_key", "missing \"values\" or \"holds\"", "/expect/0"},
      {R"({"buffer": "x", "values": [1], "holds": {"reduce_op": "sum", "buffer": "x"}})", "scenario.conflicting_keys",
       "both \"values\" and \"holds\"", "/expect/0/holds"},
      {R"({"buffer": "x", "count": 4, "values": [1, 2]})", "scenario.out_of_range", "gives 2 values for 4 elements",
       "/expect/0/values"},
      {R"({"buffer": "x", "block": 3, "holds": {"rank": "b", "buffer": "x"}})", "scenario.out_of_range",
       "block 3 does not divide the 4 elements", "/expect/0/block"},
      {R"({"buffer": "x", "block": 1, "holds": {"rank": "b + 1", "buffer": "x", "offset": 0}})", "program.bad_value",
       "names rank 4, outside 0..3", "/expect/0/holds/rank"},
      {R"({"buffer": "x", "holds": {"buffer": "x"}})", "scenario.missing_key", "missing \"rank\" or \"reduce_op\"",
       "/expect/0/holds"},
      {R"({"buffer": "x", "holds": {"reduce_op": "sum", "buffer": "x", "over": "pp"}})", "scenario.unknown_group",
       "neither a group", "/expect/0/holds/over"},
      {R"({"buffer": "x", "holds": {"rank": 0, "buffer": "x", "offset": 2}})", "scenario.buffer_too_small",
       "reads rank 0's x[2..6)", "/expect/0/holds"},
      {R"({"buffer": "x", "offset": 3, "count": 2, "values": [1, 1]})", "scenario.buffer_too_small", "about x[3..5)",
       "/expect/0/count"},
      {R"({"buffer": "x", "holds": {"rank": "j", "buffer": "x"}})", "scenario.bad_expression", "unknown name \"j\"",
       "/expect/0/holds/rank"},
  };
  for (const Case& c : cases) {
    const std::string expect = c.expect;
    CAPTURE(expect);
    const Error e =
        parse_fails(program_text(4, bufs, R"({"op": "allreduce", "buffer": "x"})", R"(, "expect": [)" + expect + "]"));
    CHECK(e.id == c.id);
    CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
    CHECK(e.where.pointer == c.pointer);
    CHECK(e.where.line > 0);
  }
}

TEST_CASE("expect: routing that overwrites every round at offset 0 no longer verifies") {
  // Without an expectation both versions "verify": the run matches its own schedule.
  for (const char* offset : {"2 * ((rank - k) % size)", "0"}) {
    const ProgramRun p = run_program(routing(offset, ""));
    CHECK(p.outcome.verified());
    CHECK(verdict_scope(p.schedule) == "no expectation: the run only matched its schedule");
  }
  // With one, the right routing verifies and says what it covered...
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun good = run_program(routing("2 * ((rank - k) % size)", kRouted), mode);
    CHECK_MESSAGE(good.outcome.verified(), verdict_text(good.outcome));
    CHECK(verdict_scope(good.schedule) == "expectations on routed");
    CHECK(good.outcome.numeric.checked >= 4 * 8 * 2);  // the buffers, and the expectations again
  }
  // ...and the bug fails both checks, named at its element.
  const ProgramRun bad = run_program(routing("0", kRouted));
  CHECK_FALSE(bad.outcome.verified());
  REQUIRE_FALSE(bad.outcome.symbolic.ok());
  const Error& e = bad.outcome.symbolic.error();
  CHECK(e.id == "verify.expectation");
  CHECK_MESSAGE(
      e.message ==
          "rank 0 routed[0] should hold rank 0's tokens[0], but it holds rank 1's tokens[0] (last written in step 3)",
      e.message);
  CHECK(e.where.pointer == "/expect/0");
  CHECK(e.where.file == "p.json");
  CHECK(bad.outcome.numeric.wrong > 0);
  CHECK(bad.outcome.numeric.buffer_name == "routed");
}

TEST_CASE("expect: reductions over the world, a group and a list, and an average, on both sides") {
  const std::string program = R"(
    {"op": "allreduce", "buffer": "g", "group": "tp"},
    {"op": "copy", "src": "g", "dst": "t"},
    {"op": "allreduce", "buffer": "t", "group": "dp"},
    {"op": "allreduce", "buffer": "a", "reduce_op": "avg"})";
  const std::string bufs =
      R"("g": {"count": 4, "init": "rank_index"}, "t": {"count": 4}, "a": {"count": 4, "init": "rank"})";
  const std::string groups = R"(, "groups": {"tp": {"split": "rank / 4"}, "dp": {"split": "rank % 4"}})";
  const std::string good = program_text(8, bufs, program, groups + R"(, "expect": [
    {"buffer": "g", "holds": {"reduce_op": "sum", "buffer": "g", "over": "tp"}},
    {"buffer": "t", "holds": {"reduce_op": "sum", "buffer": "g"}},
    {"buffer": "a", "holds": {"reduce_op": "avg", "buffer": "a"}},
    {"buffer": "a", "ranks": [5], "values": [3.5, 3.5, 3.5, 3.5]}])",
                                        "float32");
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    const ProgramRun p = run_program(good, mode);
    CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
  }
  // The sum over the world is not what g holds after the tensor-parallel all-reduce alone.
  const ProgramRun wrong = run_program(program_text(8, bufs, program, groups + R"(, "expect": [
    {"buffer": "g", "ranks": [5], "holds": {"reduce_op": "sum", "buffer": "g"}}])",
                                                    "float32"));
  REQUIRE_FALSE(wrong.outcome.symbolic.ok());
  CHECK_MESSAGE(wrong.outcome.symbolic.error().message.find(
                    "rank 5 g[0] should hold the sum over every rank of g[0], but it holds g[0] from ranks 4..7") == 0,
                wrong.outcome.symbolic.error().message);
  CHECK(wrong.outcome.numeric.wrong == 4);
  // A wrong literal value is the numeric side's to find.
  const ProgramRun value = run_program(program_text(8, bufs, program, groups + R"(, "expect": [
    {"buffer": "a", "ranks": [5], "offset": 2, "values": [3, 3.5]}])",
                                                    "float32"));
  CHECK(value.outcome.symbolic.ok());
  CHECK(value.outcome.numeric.wrong == 1);
  CHECK(value.outcome.numeric.rank == 5);
  CHECK(value.outcome.numeric.index == 2);
  CHECK(value.outcome.numeric.expected == 3);
  CHECK(value.outcome.numeric.got == 3.5);
}

TEST_CASE("expect: an input counted twice over the whole program is named") {
  // Two all-reduces in a row: every rank's x holds each input twice (times the ranks).
  const ProgramRun p =
      run_program(program_text(2, R"("x": {"count": 2, "init": "rank"})",
                               R"({"op": "allreduce", "buffer": "x"}, {"op": "allreduce", "buffer": "x"})",
                               R"(, "expect": [{"buffer": "x", "holds": {"reduce_op": "sum", "buffer": "x"}}])"));
  CHECK(p.outcome.numeric.wrong > 0);  // 2 * (0 + 1) = 2, not 1
  REQUIRE_FALSE(p.outcome.symbolic.ok());
  CHECK(p.outcome.symbolic.error().message.find("with an input counted twice") != std::string::npos);
}

TEST_CASE("expect: the verdict says what it covered") {
  auto scope = [](const std::string& text) { return verdict_scope(lower_program_ok(text)); };
  const std::string bufs = R"("x": {"count": 4, "init": "rank"}, "y": {"count": 4}, "out": {"count": 16})";
  CHECK(scope(program_text(4, bufs,
                           R"({"op": "allreduce", "buffer": "x"}, {"op": "allgather", "send": "x", "recv": "out"})")) ==
        "postcondition of allreduce (call 0); postcondition of allgather (call 1)");
  CHECK(
      scope(program_text(
          4, bufs,
          R"({"op": "send", "ranks": [0], "buffer": "x", "to": 1}, {"op": "recv", "ranks": [1], "buffer": "y", "from": 0},
                                       {"op": "allreduce", "buffer": "x"})")) ==
      "postcondition of allreduce (call 2); no expectation on the point-to-point steps: they only matched their "
      "schedule");
  CHECK(
      scope(program_text(
          4, bufs,
          R"({"op": "send", "ranks": [0], "buffer": "x", "to": 1}, {"op": "recv", "ranks": [1], "buffer": "y", "from": 0})",
          R"(, "expect": [{"buffer": "y", "ranks": [1], "holds": {"rank": 0, "buffer": "x"}},
                                           {"buffer": "out", "values": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}])")) ==
      "expectations on y and out");
  CHECK(scope(program_text(8, bufs, R"({"op": "allreduce", "buffer": "x", "group": "tp"})",
                           R"(, "groups": {"tp": {"split": "rank / 4"}})")) ==
        "postcondition of allreduce (call 0, 2 parts)");
}
