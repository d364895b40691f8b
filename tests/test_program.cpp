// Point-to-point programs: expressions, the matcher (order, blocking vs non-blocking
// steps), deadlocks, every program error, compute spans, groups, custom algorithms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/program.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/trace.h"
#include "collscope/verify.h"
#include "ir/deps.h"
#include "scenario/expr.h"

using namespace collscope;

namespace {

// A scenario around a program: `buffers` and `program` are JSON text.
std::string scenario_text(int ranks, const std::string& buffers, const std::string& program,
                          const std::string& extra = "") {
  return R"({"version": 1, "title": "t", "ranks": )" + std::to_string(ranks) + R"(, "dtype": "int32", "buffers": {)" +
         buffers + "}" + extra + R"(, "program": [)" + program + "]}";
}

Schedule lower_ok(const std::string& text) {
  auto s = parse_scenario(text, "p.json");
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().format()));
  auto sched = lower_scenario(*s);
  REQUIRE_MESSAGE(sched.ok(), (sched.ok() ? "" : sched.error().format()));
  return *sched;
}

Error fails(const std::string& text) {
  auto s = parse_scenario(text, "p.json");
  REQUIRE_FALSE(s.ok());
  return s.error();
}

// Runs a lowered scenario with the scenario's initial values.
RunOutcome run_schedule(const Scenario& sc, const Schedule& sched, RunMode mode = RunMode::fast) {
  RunOptions o;
  o.mode = mode;
  auto out = execute(
      sched,
      [&](std::int32_t b, std::int32_t r, std::uint64_t i) {
        return static_cast<std::size_t>(b) < sc.buffers.size()
                   ? initial_value(sc.buffers[static_cast<std::size_t>(b)], r, i)
                   : 0.0;
      },
      o);
  REQUIRE(out.ok());
  return std::move(*out);
}

RunOutcome run_ok(const std::string& text, RunMode mode = RunMode::fast) {
  auto s = parse_scenario(text, "p.json");
  REQUIRE(s.ok());
  auto sched = lower_scenario(*s);
  REQUIRE(sched.ok());
  return run_schedule(*s, *sched, mode);
}

std::int32_t element(const RunOutcome& o, std::int32_t buf, std::int32_t rank, std::size_t i) {
  std::int32_t v = 0;
  std::memcpy(&v, o.result[static_cast<std::size_t>(buf)][static_cast<std::size_t>(rank)].data() + i * 4, 4);
  return v;
}

}  // namespace

TEST_CASE("expressions: Python's arithmetic, precedence and logic") {
  using scenario::Expression;
  const scenario::Env env = {{"rank", 0}, {"size", 4}, {"i", 2}};
  auto eval = [&](const std::string& text) {
    auto e = Expression::parse(text);
    REQUIRE_MESSAGE(e.ok(), (e.ok() ? "" : e.error().format()));
    auto v = e->eval(env);
    REQUIRE(v.ok());
    return *v;
  };
  CHECK(eval("(rank - 1) % size") == 3);  // never negative
  CHECK(eval("-7 / 2") == -4);            // rounds down
  CHECK(eval("-7 // 2") == -4);
  CHECK(eval("7 % -2") == -1);
  CHECK(eval("1 + 2 * 3") == 7);
  CHECK(eval("(1 + 2) * 3") == 9);
  CHECK(eval("rank == 0") == 1);
  CHECK(eval("rank != 0 or i >= 2") == 1);
  CHECK(eval("not rank == 0") == 0);
  CHECK(eval("!(i < 2) && size > 3") == 1);
  CHECK(eval("i <= 2") == 1);
  CHECK(eval("rank > 0 and 8 / rank == 2") == 0);  // short-circuit: no division by zero
  CHECK(eval("size - 1 - i") == 1);

  for (const char* bad : {"", "1 +", "(1", "rank = 0", "1 $ 2", "and", "99999999999999999999"}) {
    CAPTURE(bad);
    auto e = Expression::parse(bad);
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().id == "scenario.bad_expression");
  }
  auto z = Expression::parse("1 / (rank)");
  REQUIRE(z.ok());
  auto v = z->eval(env);
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().message.find("division by zero") != std::string::npos);
}

TEST_CASE("matcher: two blocking sends take two steps, two isends share one") {
  const std::string bufs = R"("x": {"count": 2, "init": "rank"}, "y": {"count": 2})";
  const auto blocking = lower_ok(scenario_text(3, bufs, R"(
    {"op": "send", "ranks": [0], "buffer": "x", "to": 1},
    {"op": "send", "ranks": [0], "buffer": "x", "to": 2},
    {"op": "recv", "ranks": "1..2", "buffer": "y", "from": 0})"));
  CHECK(blocking.steps.size() == 2);
  CHECK(blocking.steps[0].transfers.size() == 1);
  CHECK(blocking.steps[0].transfers[0].dst.rank == 1);
  CHECK(blocking.steps[1].transfers[0].dst.rank == 2);

  const auto nonblocking = lower_ok(scenario_text(3, bufs, R"(
    {"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "a"},
    {"op": "isend", "ranks": [0], "buffer": "x", "to": 2, "request": "b"},
    {"op": "wait", "ranks": [0], "requests": ["a", "b"]},
    {"op": "recv", "ranks": "rank > 0", "buffer": "y", "from": 0})"));
  CHECK(nonblocking.steps.size() == 1);
  CHECK(nonblocking.steps[0].transfers.size() == 2);
  REQUIRE(nonblocking.calls.size() == 1);
  CHECK(nonblocking.calls[0].kind == CallKind::program);
}

TEST_CASE("matcher: messages between a pair match in program order") {
  // Rank 0 sends x[0] then x[1]; rank 1 receives into y[1] then y[0]: the first
  // message must land in y[1] whatever the slices look like.
  auto out =
      run_ok(scenario_text(2, R"("x": {"count": 2, "init": {"values": [[5, 6], [0, 0]]}}, "y": {"count": 2})", R"(
    {"op": "isend", "ranks": [0], "buffer": "x", "offset": 0, "count": 1, "to": 1, "request": "a"},
    {"op": "isend", "ranks": [0], "buffer": "x", "offset": 1, "count": 1, "to": 1, "request": "b"},
    {"op": "irecv", "ranks": [1], "buffer": "y", "offset": 1, "count": 1, "from": 0, "request": "a"},
    {"op": "irecv", "ranks": [1], "buffer": "y", "offset": 0, "count": 1, "from": 0, "request": "b"},
    {"op": "wait", "requests": ["a", "b"]})"));
  CHECK(out.verified());
  CHECK(element(out, 1, 1, 1) == 5);
  CHECK(element(out, 1, 1, 0) == 6);
}

TEST_CASE("matcher: a blocking recv waits for a send that comes later in the other rank's program") {
  // Rank 1 computes first, then sends; rank 0's recv blocks across steps until then.
  const auto s = lower_ok(scenario_text(2, R"("x": {"count": 1, "init": "rank"})", R"(
    {"op": "recv", "ranks": [0], "buffer": "x", "from": 1},
    {"op": "compute", "ranks": [1], "duration_us": 10},
    {"op": "compute", "ranks": [1], "duration_us": 10},
    {"op": "send", "ranks": [1], "buffer": "x", "to": 0})"));
  REQUIRE(s.steps.size() == 3);
  CHECK(s.steps[2].transfers[0].src.rank == 1);
  CHECK(s.steps[2].transfers[0].dst.rank == 0);
  // Rank 0's recv spans all three steps.
  const auto rec = std::find_if(s.ops.begin(), s.ops.end(), [](const OpRecord& o) { return o.rank == 0; });
  REQUIRE(rec != s.ops.end());
  CHECK(rec->first_step == 0);
  CHECK(rec->last_step == 2);
}

TEST_CASE("deadlock: a cycle of two and a cycle of three are named") {
  auto two = fails(scenario_text(2, R"("x": {"count": 1}, "y": {"count": 1})", R"(
    {"op": "recv", "buffer": "y", "from": "1 - rank"},
    {"op": "send", "buffer": "x", "to": "1 - rank"})"));
  CHECK(two.id == "program.deadlock");
  CHECK(two.message ==
        "deadlock: rank 0 waits in recv from rank 1 (op 0) while rank 1 waits in recv from rank 0 (op 0)");
  CHECK(two.where.pointer == "/program/0");
  CHECK(two.where.line == 2);

  auto three = fails(scenario_text(3, R"("x": {"count": 1}, "y": {"count": 1})", R"(
    {"op": "send", "buffer": "x", "to": "(rank + 1) % size"},
    {"op": "recv", "buffer": "y", "from": "(rank - 1) % size"})"));
  CHECK(three.id == "program.deadlock");
  CHECK(three.message ==
        "deadlock: rank 0 waits in send to rank 1 (op 0) while rank 1 waits in send to rank 2 (op 0) while rank 2 "
        "waits in send to rank 0 (op 0)");

  // The same ring with isend does not deadlock.
  auto fine = run_ok(scenario_text(3, R"("x": {"count": 1, "init": "rank"}, "y": {"count": 1})", R"(
    {"op": "isend", "buffer": "x", "to": "(rank + 1) % size", "request": "r"},
    {"op": "recv", "buffer": "y", "from": "(rank - 1) % size"},
    {"op": "wait", "request": "r"})"));
  CHECK(fine.verified());
  for (int r = 0; r < 3; ++r) CHECK(element(fine, 1, r, 0) == (r + 2) % 3);

  // Ranks calling collectives in different orders wait for each other too.
  auto order = fails(scenario_text(2, R"("x": {"count": 1}, "y": {"count": 1})", R"(
    {"op": "repeat", "times": 1, "body": [
      {"op": "send", "ranks": [0], "buffer": "x", "to": 1},
      {"op": "recv", "ranks": [1], "buffer": "x", "from": 0}]},
    {"op": "recv", "ranks": [0], "buffer": "y", "from": 1},
    {"op": "allreduce", "buffer": "x"},
    {"op": "send", "ranks": [1], "buffer": "y", "to": 0})"));
  CHECK(order.id == "program.deadlock");
  CHECK(order.message.find("rank 0 waits in recv from rank 1 (op 1)") != std::string::npos);
  CHECK(order.message.find("rank 1 waits in allreduce (op 2) for rank 0") != std::string::npos);
}

TEST_CASE("program errors: each has its id, its message and the op's location") {
  const std::string bufs = R"("x": {"count": 4}, "y": {"count": 8})";
  struct Case {
    const char* program;
    const char* id;
    const char* says;
    const char* pointer;
  };
  const Case cases[] = {
      {R"({"op": "send", "ranks": [0], "buffer": "x", "to": 1})", "program.unmatched",
       "rank 1 has finished its program", "/program/0"},
      {R"({"op": "recv", "ranks": [1], "buffer": "x", "from": 0})", "program.unmatched",
       "rank 1 waits in recv from rank 0 (op 0), but rank 0 has finished its program", "/program/0"},
      {R"({"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "r"}, {"op": "wait", "ranks": [0], "request": "r"})",
       "program.unmatched", "rank 1 has finished", "/program/1"},
      {R"({"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "r"}, {"op": "recv", "ranks": [1], "buffer": "x", "from": 0})",
       "program.unwaited", "rank 0's isend x[0..4) to rank 1 as r (op 0) is never waited for", "/program/0/request"},
      {R"({"op": "send", "ranks": [0], "buffer": "x", "to": 1}, {"op": "recv", "ranks": [1], "buffer": "y", "from": 0})",
       "program.size_mismatch", "sends 4 elements, but its matching rank 1's recv y[0..8) from rank 0 (op 1) expects 8",
       "/program/1"},
      {R"({"op": "send", "ranks": [0], "buffer": "x", "to": 1, "dtype": "float32"}, {"op": "recv", "ranks": [1], "buffer": "x", "from": 0, "dtype": "int32"})",
       "program.dtype_mismatch", "sends float32, but its matching", "/program/1/dtype"},
      {R"({"op": "wait", "request": "nope"})", "program.unknown_request", "which rank 0 never posted",
       "/program/0/request"},
      {R"({"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "r"}, {"op": "recv", "ranks": [1], "buffer": "x", "from": 0},
          {"op": "wait", "ranks": [0], "request": "r"}, {"op": "wait", "ranks": [0], "request": "r"})",
       "program.request_done", "which the wait of op 2 already completed", "/program/3/request"},
      {R"({"op": "irecv", "ranks": [1], "buffer": "x", "from": 0, "request": "r"}, {"op": "copy", "ranks": [1], "src": "x", "dst": "y"},
          {"op": "send", "ranks": [0], "buffer": "x", "to": 1}, {"op": "wait", "ranks": [1], "request": "r"})",
       "program.race",
       "rank 1's copy x[0..4) -> y[0..4) (op 1) reads x[0..4) while rank 1's irecv x[0..4) from rank 0 as r (op 0) is "
       "still pending",
       "/program/1"},
      {R"({"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "r"}, {"op": "copy", "ranks": [0], "src": {"buffer": "y", "count": 4}, "dst": "x"},
          {"op": "recv", "ranks": [1], "buffer": "x", "from": 0}, {"op": "wait", "ranks": [0], "request": "r"})",
       "program.race", "writes x[0..4) while rank 0's isend", "/program/1"},
      {R"({"op": "isend", "ranks": [0], "buffer": "x", "to": 1, "request": "r"}, {"op": "isend", "ranks": [0], "buffer": "y", "to": 1, "request": "r"})",
       "program.request_reused", "reuses request name \"r\"", "/program/1/request"},
      {R"({"op": "send", "buffer": "x", "to": "rank + 1"})", "program.bad_value", "goes to rank 2, outside 0..1",
       "/program/0/to"},
      {R"({"op": "send", "buffer": "x", "offset": 2, "count": 4, "to": 1})", "scenario.buffer_too_small",
       "needs x[2..6)", "/program/0/buffer"},
      {R"({"op": "send", "buffer": "x", "to": "rank + j"})", "scenario.bad_expression", "unknown name \"j\"",
       "/program/0/to"},
      {R"({"op": "sned", "buffer": "x", "to": 1})", "scenario.unknown_op", "did you mean \"send\"", "/program/0/op"},
      {R"({"op": "send", "buffer": "x"})", "scenario.missing_key", "send is missing \"to\"", "/program/0"},
      {R"({"op": "isend", "buffer": "x", "to": 1})", "scenario.missing_key", "isend is missing \"request\"",
       "/program/0"},
      {R"({"op": "allreduce", "buffer": "x", "group": "gg"})", "scenario.unknown_group", "unknown group \"gg\"",
       "/program/0/group"},
      {R"({"op": "allreduce", "buffer": "x", "algorithm": "custom"})", "scenario.missing_key", "needs a \"body\"",
       "/program/0/algorithm"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.program);
    const Error e = fails(scenario_text(2, bufs, c.program));
    CHECK(e.id == c.id);
    CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
    CHECK(e.where.pointer == c.pointer);
    CHECK(e.where.file == "p.json");
    CHECK(e.where.line >= 1);
    CHECK(e.exit == ExitCode::bad_input);
  }
}

TEST_CASE("compute spans: in the run record, in the trace, and on their own lane") {
  const std::string text =
      scenario_text(2, R"("a": {"count": 4, "init": "rank"}, "b": {"count": 4, "init": "rank"})", R"(
    {"op": "compute", "duration_us": 2000, "label": "grad a", "writes": "a"},
    {"op": "allreduce", "buffer": "a", "algorithm": "ring"},
    {"op": "compute", "duration_us": 2000, "label": "grad b", "writes": "b"},
    {"op": "allreduce", "buffer": "b", "algorithm": "ring"})");
  const Schedule s = lower_ok(text);
  REQUIRE(s.labels.size() == 2);
  CHECK(s.labels[0] == "grad a");
  // Dependencies: rank 0's compute thread waits for the all-reduce of a before its
  // second span (a blocking call holds back what follows it on the rank, even work
  // that touches other data); the all-reduce of b waits for the compute threads that
  // wrote b.
  const auto deps = dataflow::compute_deps(s);
  REQUIRE(deps.size() == 4);  // 2 ranks + 2 compute lanes
  std::int32_t second_compute = -1, first_b_step = -1;
  for (std::size_t k = 0; k < s.steps.size(); ++k)
    for (const auto& t : s.steps[k].transfers) {
      if (t.action == Action::compute && t.label == 1 && second_compute < 0)
        second_compute = static_cast<std::int32_t>(k);
      if (t.action != Action::compute && t.dst.buf == 1 && first_b_step < 0)
        first_b_step = static_cast<std::int32_t>(k);
    }
  REQUIRE(second_compute > 0);
  REQUIRE(first_b_step > second_compute);
  // (Negative steps are the previous iteration's, for repeated runs.)
  bool waits_for_allreduce = false;
  for (const auto& d : deps[2][static_cast<std::size_t>(second_compute)])
    waits_for_allreduce |= d.step >= 0 && d.rank < 2;
  CHECK(waits_for_allreduce);
  bool waits_for_compute = false;
  for (std::size_t lane = 0; lane < 2; ++lane)
    for (const auto& d : deps[lane][static_cast<std::size_t>(first_b_step)])
      waits_for_compute |= d.rank >= 2 && d.step >= 0;
  CHECK(waits_for_compute);

  auto out = run_ok(text);
  CHECK(out.verified());
  int spans = 0;
  for (const auto& e : out.record.transfers) {
    const auto& t = s.steps[static_cast<std::size_t>(e.step)].transfers[static_cast<std::size_t>(e.transfer)];
    if (t.action != Action::compute) continue;
    ++spans;
    CHECK(e.t1_us - e.t0_us >= 1500.0);
  }
  CHECK(spans == 4);
  const std::string trace = trace_json(s, out.record);
  CHECK(trace.find("\"grad a\"") != std::string::npos);
  CHECK(trace.find("\"cat\":\"compute\"") != std::string::npos);
  CHECK(trace.find("\"compute\"") != std::string::npos);
}

TEST_CASE("custom algorithms: checked against the collective's definition") {
  const std::string bufs = R"("x": {"count": 2, "init": "rank_index"}, "tmp": {"count": 2, "scratch": true})";
  // A correct exchange for 2 ranks.
  auto good = run_ok(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "tmp"}}]},
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "tmp"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]})"));
  CHECK(good.verified());
  CHECK(element(good, 0, 0, 1) == 1 + 101);

  // Forgetting rank 1's half: the symbolic check names the missing contribution.
  auto half = run_ok(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": [0], "from": {"rank": "rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "tmp"}}]},
    {"op": "step", "transfers": [{"ranks": [1], "from": {"rank": 0, "buffer": "tmp"}, "to": {"rank": 1, "buffer": "x"}, "action": "reduce"}]}]})"));
  CHECK_FALSE(half.verified());
  REQUIRE_FALSE(half.symbolic.ok());
  CHECK(half.symbolic.error().id == "verify.missing_contribution");
  CHECK(half.numeric.wrong > 0);

  // Adding twice is a double count.
  auto twice = run_ok(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "tmp"}}]},
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "tmp"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]},
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "tmp"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]})"));
  CHECK_FALSE(twice.symbolic.ok());
  CHECK(twice.symbolic.error().id == "verify.double_count");

  // A written step that races is refused while planning.
  auto race = fails(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]})"));
  CHECK(race.id == "verify.conflict");
  // A reduce-copy: (own x) + (the partner's x) into tmp, then back: one step fewer.
  auto rc = run_ok(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "x"}, "with": {"buffer": "x"}, "to": {"rank": "rank", "buffer": "tmp"}, "action": "reduce_copy"}]},
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "tmp"}, "to": {"rank": "rank", "buffer": "x"}}]}]})"));
  CHECK(rc.verified());
  CHECK(element(rc, 0, 0, 1) == 1 + 101);
  CHECK(element(rc, 0, 1, 0) == 0 + 100);
  // Its second operand is read on the receiving rank, at the given offset, and bounds
  // the count like the other two slices.
  auto sched = lower_ok(scenario_text(2, R"("x": {"count": 4}, "tmp": {"count": 2, "scratch": true})",
                                      R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": [1], "from": {"rank": 0, "buffer": "x"}, "with": {"buffer": "x", "offset": 1}, "to": {"rank": 1, "buffer": "tmp"}, "action": "reduce_copy"}]}]})"));
  REQUIRE(sched.steps.size() == 1);
  REQUIRE(sched.steps[0].transfers.size() == 1);
  const Transfer& t = sched.steps[0].transfers[0];
  CHECK(t.action == Action::reduce_copy);
  CHECK(t.aux.rank == 1);
  CHECK(t.aux.buf == sched.find_buffer("x"));
  CHECK(t.aux.offset == 1);
  CHECK(t.count == 2);

  // "with" is required by a reduce_copy and refused elsewhere.
  auto no_with = fails(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "tmp"}, "action": "reduce_copy"}]}]})"));
  CHECK(no_with.id == "scenario.missing_key");
  CHECK(no_with.message == "a reduce_copy transfer is missing \"with\"");
  CHECK(no_with.where.pointer == "/program/0/body/0/transfers/0");
  auto stray = fails(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "x"}, "with": "x", "to": {"rank": "rank", "buffer": "tmp"}}]}]})"));
  CHECK(stray.id == "scenario.bad_call");
  CHECK(stray.message == "\"with\" belongs to \"action\": \"reduce_copy\"");
  CHECK(stray.where.pointer == "/program/0/body/0/transfers/0/with");
  auto bad = fails(scenario_text(2, bufs, R"({"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "tmp"}, "action": "add"}]}]})"));
  CHECK(bad.id == "scenario.bad_call");
  CHECK(bad.message.find("\"copy\", \"reduce\" or \"reduce_copy\"") != std::string::npos);
}

TEST_CASE("groups: collectives on random subsets lower onto world ranks and verify") {
  std::mt19937 rng(42);
  const Collective colls[] = {Collective::allreduce, Collective::broadcast,      Collective::reduce,
                              Collective::allgather, Collective::reduce_scatter, Collective::alltoall,
                              Collective::scatter,   Collective::gather,         Collective::barrier};
  for (int trial = 0; trial < 60; ++trial) {
    const int world = 2 + static_cast<int>(rng() % 7);
    std::vector<int> members;
    for (int r = 0; r < world; ++r)
      if (rng() % 2) members.push_back(r);
    if (members.empty()) members.push_back(static_cast<int>(rng() % static_cast<unsigned>(world)));
    std::shuffle(members.begin(), members.end(), rng);  // group order need not be world order
    const Collective c = colls[rng() % std::size(colls)];
    const int n = static_cast<int>(members.size());
    std::string list;
    for (int m : members) list += (list.empty() ? "" : ", ") + std::to_string(m);
    std::string call = R"({"op": ")" + std::string(name_of(c)) + R"(", "group": "g")";
    if (c != Collective::barrier) {
      const bool big_in = c == Collective::scatter || c == Collective::alltoall || c == Collective::reduce_scatter;
      call += R"(, "send": "in", "recv": "out", "count": 2)";
      (void)big_in;
    }
    if (has_root(c)) call += R"(, "root": )" + std::to_string(static_cast<int>(rng() % static_cast<unsigned>(n)));
    call += "}";
    const std::string bufs = R"("in": {"count": )" + std::to_string(2 * n) +
                             R"(, "init": "rank_index"}, "out": {"count": )" + std::to_string(2 * n) + "}";
    const std::string text = scenario_text(world, bufs, call, R"(, "groups": {"g": [)" + list + "]}");
    CAPTURE(text);
    const Schedule s = lower_ok(text);
    REQUIRE(s.calls.size() == 1);
    const CollArgs& a = s.calls[0].args;
    CHECK(a.ranks == n);
    // Only members are touched.
    for (const auto& st : s.steps)
      for (const auto& t : st.transfers) {
        CHECK(std::find(members.begin(), members.end(), t.src.rank) != members.end());
        CHECK(std::find(members.begin(), members.end(), t.dst.rank) != members.end());
      }
    auto out = run_ok(text);
    CHECK_MESSAGE(out.verified(), out.numeric.message() << (out.symbolic.ok() ? "" : out.symbolic.error().format()));
  }
}

TEST_CASE("groups: a split runs one collective per part, all at once, in a few lines") {
  const std::string text = scenario_text(8, R"("g": {"count": 4, "init": "rank"})", R"(
    {"op": "allreduce", "buffer": "g", "group": "tp"},
    {"op": "allreduce", "buffer": "g", "group": "dp"})",
                                         R"(, "groups": {"tp": {"split": "rank / 4"}, "dp": {"split": "rank % 4"}})");
  const Schedule s = lower_ok(text);
  REQUIRE(s.calls.size() == 6);  // 2 tp parts + 4 dp parts
  CHECK(s.calls[0].args.world_rank == std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(s.calls[1].args.world_rank == std::vector<std::int32_t>{4, 5, 6, 7});
  CHECK(s.calls[2].args.world_rank == std::vector<std::int32_t>{0, 4});
  auto out = run_ok(text);
  CHECK(out.verified());
  // tp sums: 0+1+2+3 = 6 and 4+5+6+7 = 22; then dp adds the twins: 6 + 22 = 28 everywhere.
  for (int r = 0; r < 8; ++r) CHECK(element(out, 0, r, 0) == 28);
}

TEST_CASE("program: fast and observable modes give the same bytes for every program lesson shape") {
  const std::string text =
      scenario_text(4, R"("x": {"count": 8, "init": "rank_index"}, "t": {"count": 2, "scratch": true})", R"(
    {"op": "repeat", "times": "size - 1", "var": "i", "body": [
      {"op": "isend", "buffer": "x", "offset": "((rank - i) % size) * 2", "count": 2, "to": "(rank + 1) % size", "request": "o"},
      {"op": "recv", "buffer": "t", "from": "(rank - 1) % size"},
      {"op": "accumulate", "src": "t", "dst": {"buffer": "x", "offset": "((rank - i - 1) % size) * 2", "count": 2}},
      {"op": "wait", "request": "o"}]})");
  auto fast = run_ok(text);
  auto obs = run_ok(text, RunMode::observable);
  CHECK(fast.verified());
  CHECK(obs.verified());
  CHECK(fast.result == obs.result);
  // Rank r now owns the full sum of chunk (r + 1) % 4.
  for (int r = 0; r < 4; ++r) {
    const int c = (r + 1) % 4;
    const int want = (0 + 100 + 200 + 300) + 4 * (2 * c);
    CHECK(element(fast, 0, r, static_cast<std::size_t>(2 * c)) == want);
  }
}

TEST_CASE("programs (property): calls of the same shape take the same scratch again, and every call stays exact") {
  // Three calls of one algorithm, each from an input of its own into an output of its own:
  // what an earlier call left in the scratch it hands on must not show in a later call's
  // result, and the program holds one call's scratch, not three.
  auto entry = [](Collective c, const std::string& algorithm, std::uint64_t count, int k) {
    const CollectiveDescriptor& d = collective_descriptor(c);
    const std::string n = std::to_string(k);
    std::string e = R"({"op": ")" + std::string(d.name) + R"(", "algorithm": ")" + algorithm + "\"";
    e += d.out_of_place ? R"(, "send": "x)" + n + R"(", "recv": "y)" + n + "\"" : R"(, "buffer": "y)" + n + "\"";
    e += R"(, "count": )" + std::to_string(count);
    if (d.rooted) e += R"(, "root": )" + std::to_string(k % 2);
    return e + "}";
  };
  int with_scratch = 0;
  for (const AlgorithmInfo& a : all_algorithms()) {
    const CollectiveDescriptor& d = collective_descriptor(a.coll);
    if (!d.moves_data || d.per_peer) continue;
    for (int ranks : {2, 3, 4, 5, 8})
      for (std::uint64_t count : {1, 6}) {
        for (std::int32_t per_node : {0, 2}) {
          CAPTURE(a.name);
          CAPTURE(name_of(a.coll));
          CAPTURE(ranks);
          CAPTURE(count);
          CAPTURE(per_node);
          const std::string size = std::to_string(count * static_cast<std::uint64_t>(ranks));
          std::string buffers, one, three;
          for (int k = 0; k < 3; ++k) {
            buffers += (k ? ", " : "") + std::string("\"x") + std::to_string(k) + R"(": {"count": )" + size +
                       R"(, "init": {"random": {"seed": )" + std::to_string(k + 1) + R"(, "min": 0, "max": 9}}}, "y)" +
                       std::to_string(k) + R"(": {"count": )" + size + R"(, "init": {"random": {"seed": )" +
                       std::to_string(k + 7) + R"(, "min": 0, "max": 9}}})";
            three += (k ? ", " : "") + entry(a.coll, std::string(a.name), count, k);
          }
          one = entry(a.coll, std::string(a.name), count, 0);
          LowerOptions options;
          options.ranks_per_node = per_node;
          auto lower = [&](const std::string& program) {
            auto sc = parse_scenario(scenario_text(ranks, buffers, program), "p.json");
            REQUIRE_MESSAGE(sc.ok(), (sc.ok() ? "" : sc.error().format()));
            return lower_scenario(*sc, options);
          };
          auto alone = lower(one);
          if (!alone.ok()) continue;  // an algorithm that refuses this size (or node size)
          auto scratch_of = [](const Schedule& s) {
            return std::count_if(s.buffers.begin(), s.buffers.end(), [](const BufferDecl& b) { return b.scratch; });
          };
          if (scratch_of(*alone) == 0) continue;
          ++with_scratch;
          auto sc = parse_scenario(scenario_text(ranks, buffers, three), "p.json");
          REQUIRE(sc.ok());
          auto s = lower_scenario(*sc, options);
          REQUIRE(s.ok());
          CHECK(scratch_of(*s) == scratch_of(*alone));
          CHECK(verify_symbolic(*s).ok());
          for (RunMode mode : {RunMode::fast, RunMode::observable}) {
            const RunOutcome out = run_schedule(*sc, *s, mode);
            CHECK_MESSAGE(out.verified(), out.numeric.message());
            CHECK(out.numeric.checked > 0);
          }
        }
      }
  }
  CHECK(with_scratch > 40);
}
