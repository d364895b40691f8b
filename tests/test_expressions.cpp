// The expression language's min, max and abs, and loop variables in labels and
// captions ("F{mb}"), so that a 1F1B pipeline and its timeline read naturally.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "program_helpers.h"
#include "scenario/expr.h"

using namespace collscope;
using namespace collscope::testing;

TEST_CASE("expressions: min, max and abs") {
  using scenario::Expression;
  const scenario::Env env = {{"rank", 2}, {"size", 4}, {"mb", 5}, {"min", 7}};
  auto eval = [&](const std::string& text) {
    auto e = Expression::parse(text);
    REQUIRE_MESSAGE(e.ok(), (e.ok() ? "" : e.error().format()));
    auto v = e->eval(env);
    REQUIRE_MESSAGE(v.ok(), (v.ok() ? "" : v.error().format()));
    return *v;
  };
  CHECK(eval("min(rank, 1)") == 1);
  CHECK(eval("max(rank, size - 1, mb)") == 5);
  CHECK(eval("min(mb, size - 1 - rank, 3) + 1") == 2);
  CHECK(eval("abs(rank - size)") == 2);
  CHECK(eval("abs(3)") == 3);
  CHECK(eval("max(min(mb, 3), abs(-4))") == 4);
  CHECK(eval("-max(1, 2)") == -2);
  CHECK(eval("min") == 7);  // without parentheses, still a name
  CHECK(eval("min(rank,size)*2") == 4);
  auto names = Expression::parse("max(rank, mb) + abs(i)");
  REQUIRE(names.ok());
  CHECK(names->names() == std::vector<std::string>{"rank", "mb", "i"});
  for (const char* bad : {"min(1)", "abs(1, 2)", "max(1, 2", "min()", "abs", "max(,)"}) {
    CAPTURE(bad);
    auto e = Expression::parse(bad);
    if (std::string(bad) == "abs") {  // a name: fails when evaluated, not parsed
      REQUIRE(e.ok());
      CHECK_FALSE(e->eval(env).ok());
      continue;
    }
    REQUIRE_FALSE(e.ok());
    CHECK(e.error().id == "scenario.bad_expression");
  }
}

TEST_CASE("expressions: text templates fill in their expressions") {
  using scenario::TextTemplate;
  const scenario::Env env = {{"rank", 1}, {"mb", 2}};
  auto render = [&](const std::string& text) {
    auto t = TextTemplate::parse(text);
    REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().format()));
    auto out = t->render(env);
    REQUIRE(out.ok());
    return *out;
  };
  CHECK(render("F{mb}") == "F2");
  CHECK(render("stage {rank}: micro-batch {mb + 1} of {max(mb, 3)}") == "stage 1: micro-batch 3 of 3");
  CHECK(render("{{literal}} braces") == "{literal} braces");
  CHECK(render("plain") == "plain");
  for (const char* bad : {"F{mb", "F}", "F{mb +}", "{}"}) {
    CAPTURE(bad);
    auto t = TextTemplate::parse(bad);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().id == "scenario.bad_expression");
  }
}

TEST_CASE("expressions: a 1F1B pipeline with min and max, labelled per micro-batch") {
  // Four stages, six micro-batches: stage r warms up with min(size - 1 - r, mb) forward
  // passes, then alternates one forward and one backward (1F1B), then drains.
  const std::string text =
      program_text(4, R"("act": {"count": 4, "init": "rank"}, "grad": {"count": 4, "init": "rank"})", R"J(
    {"op": "repeat", "times": "min(size - 1 - rank, 6)", "var": "mb", "body": [
      {"op": "recv", "ranks": "rank > 0", "buffer": "act", "from": "rank - 1"},
      {"op": "compute", "duration_us": 10, "label": "F{mb}", "writes": "act", "caption": "stage {rank} runs forward {mb}"},
      {"op": "send", "ranks": "rank < size - 1", "buffer": "act", "to": "rank + 1"}]},
    {"op": "repeat", "times": "max(6 - (size - 1 - rank), 0)", "var": "k", "body": [
      {"op": "recv", "ranks": "rank > 0", "buffer": "act", "from": "rank - 1"},
      {"op": "compute", "duration_us": 10, "label": "F{k + size - 1 - rank}", "writes": "act"},
      {"op": "isend", "ranks": "rank < size - 1", "buffer": "act", "to": "rank + 1", "request": "a"},
      {"op": "recv", "ranks": "rank < size - 1", "buffer": "grad", "from": "rank + 1"},
      {"op": "wait", "ranks": "rank < size - 1", "request": "a"},
      {"op": "compute", "duration_us": 20, "label": "B{k}", "writes": "grad"},
      {"op": "send", "ranks": "rank > 0", "buffer": "grad", "to": "rank - 1"}]},
    {"op": "repeat", "times": "min(size - 1 - rank, 6)", "var": "d", "body": [
      {"op": "recv", "ranks": "rank < size - 1", "buffer": "grad", "from": "rank + 1"},
      {"op": "compute", "duration_us": 20, "label": "B{6 - (size - 1 - rank) + d}", "writes": "grad"},
      {"op": "send", "ranks": "rank > 0", "buffer": "grad", "to": "rank - 1"}]},
    {"op": "repeat", "times": 2, "var": "i", "body": [
      {"op": "allreduce", "buffer": "grad", "caption": "gradient all-reduce {i + 1} of 2"}]})J");
  const Schedule s = lower_program_ok(text);
  // Every stage ran F0..F5 and B0..B5, each named by its micro-batch.
  std::set<std::string> labels(s.labels.begin(), s.labels.end());
  for (int mb = 0; mb < 6; ++mb) {
    CHECK(labels.count("F" + std::to_string(mb)) == 1);
    CHECK(labels.count("B" + std::to_string(mb)) == 1);
  }
  for (std::int32_t r = 0; r < 4; ++r) {
    std::vector<std::string> mine;
    for (const auto& op : s.ops)
      if (op.rank == r && op.op == "compute") mine.push_back(op.text.substr(9, op.text.find('"', 9) - 9));
    CHECK(mine.size() == 12);
    CHECK(std::count_if(mine.begin(), mine.end(), [](const std::string& l) { return l[0] == 'F'; }) == 6);
  }
  // Captions: per rank for the ops, loop variables for the collective calls.
  bool said = false;
  for (const auto& st : s.steps) said = said || st.caption.find("stage 2 runs forward 0") != std::string::npos;
  CHECK(said);
  std::vector<std::string> calls;
  for (const auto& c : s.calls)
    if (c.kind == CallKind::collective) calls.push_back(c.caption);
  CHECK(calls == std::vector<std::string>{"gradient all-reduce 1 of 2", "gradient all-reduce 2 of 2"});
  // The file keeps what was written.
  const Scenario sc = parse_ok(text);
  CHECK(to_json(sc).find("\"label\": \"F{mb}\"") != std::string::npos);
  const ProgramRun p = run_program(text);
  CHECK_MESSAGE(p.outcome.verified(), verdict_text(p.outcome));
}

TEST_CASE("expressions: a written step's phase and caption show its loop variable") {
  const Schedule s =
      lower_program_ok(program_text(2, R"("x": {"count": 2, "init": "rank"}, "t": {"count": 2, "scratch": true})", R"(
    {"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
      {"op": "repeat", "times": 1, "var": "k", "body": [
        {"op": "step", "phase": "round {k}", "caption": "copy {k} of {size}",
         "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "t"}}]},
        {"op": "step", "phase": "round {k}", "caption": "add",
         "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "t"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]}]})"));
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].phase == "round 0");
  CHECK(s.steps[0].caption == "copy 0 of 2");
}

TEST_CASE("expressions: labels and captions with unknown names or bad braces are refused where they are") {
  const std::string bufs = R"("x": {"count": 2, "init": "rank"})";
  struct Case {
    const char* program;
    const char* says;
    const char* pointer;
  };
  const Case cases[] = {
      {R"({"op": "compute", "duration_us": 1, "label": "F{mb}"})", "label \"F{mb}\" uses unknown name \"mb\"",
       "/program/0/label"},
      {R"({"op": "repeat", "times": 2, "var": "mb", "body": [{"op": "compute", "duration_us": 1, "label": "F{mb"}]})",
       "never closed", "/program/0/body/0/label"},
      {R"({"op": "allreduce", "buffer": "x", "caption": "on rank {rank}"})",
       "caption \"on rank {rank}\" uses unknown name \"rank\"", "/program/0/caption"},
      {R"J({"op": "compute", "duration_us": 1, "caption": "x{1 / (rank - rank)}"})J", "division by zero",
       "/program/0/caption"},
  };
  for (const Case& c : cases) {
    const std::string program = c.program;
    CAPTURE(program);
    const Error e = parse_fails(program_text(2, bufs, program));
    CHECK(e.id == (std::string(c.says) == "division by zero" ? "program.bad_value" : "scenario.bad_expression"));
    CHECK_MESSAGE(e.message.find(c.says) != std::string::npos, e.message);
    CHECK(e.where.pointer == c.pointer);
  }
}
