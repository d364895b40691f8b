// `collscope run` on programs, as a user reads it: what a verdict covered, split-group
// calls named by their part, every op of every rank, errors as JSON.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "scratch.h"
#include "shell.h"

namespace {

using test_shell::Output;

Output collscope(const std::string& args, bool with_stderr = false) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

// Writes a scenario into a fresh file under the temporary folder and returns its path.
std::string scenario_file(const std::string& name, const std::string& text) {
  const auto path = test_scratch::dir("collscope-cli-programs-", "") / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("cli programs: the verdict says what it covered, in text and JSON") {
  auto p2p = collscope("run " + lesson("19-pipeline-parallel.json"));
  CHECK(p2p.code == 0);
  CHECK_MESSAGE(p2p.out.find("  verified: no expectation: the run only matched its schedule\n") != std::string::npos,
                p2p.out);
  auto coll = collscope("run --coll allreduce --ranks 4 --count 8 --json");
  REQUIRE(coll.code == 0);
  CHECK(nlohmann::json::parse(coll.out)["covers"] == "postcondition of allreduce (call 0)");

  const std::string bad = scenario_file("expect-bad.json", R"({"version": 1, "ranks": 2, "dtype": "int32",
    "buffers": {"x": {"count": 2, "init": "rank"}, "y": {"count": 2}},
    "program": [{"op": "send", "ranks": [0], "buffer": "x", "to": 1}, {"op": "recv", "ranks": [1], "buffer": "y", "from": 0}],
    "expect": [{"buffer": "y", "ranks": [1], "holds": {"rank": 1, "buffer": "x"}}]})");
  auto failed = collscope("run " + bad);
  CHECK(failed.code == 1);
  CHECK_MESSAGE(failed.out.find("  NOT VERIFIED (checked: expectations on y)\n") != std::string::npos, failed.out);
  CHECK(failed.out.find("should hold rank 1's x[0], but it holds rank 0's x[0]") != std::string::npos);
  auto json = collscope("run " + bad + " --json");
  CHECK(json.code == 1);
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["verified"] == false);
  CHECK(j["covers"] == "expectations on y");
  CHECK(j["symbolic"]["ok"] == false);
}

TEST_CASE("cli programs: split-group calls name their part in the report, --explain and JSON") {
  const std::string file = scenario_file("split.json", R"({"version": 1, "ranks": 8, "dtype": "int32",
    "buffers": {"g": {"count": 4, "init": "rank"}}, "groups": {"tp": {"split": "rank / 4"}},
    "program": [{"op": "allreduce", "buffer": "g", "group": "tp", "algorithm": "flat", "caption": "tensor parallel"}]})");
  auto text = collscope("run " + file + " --explain");
  CHECK(text.code == 0);
  CHECK_MESSAGE(text.out.find("  call 0 (group tp, part 0: ranks 0-3): allreduce count 4") != std::string::npos,
                text.out);
  CHECK(text.out.find("  call 0 (group tp, part 1: ranks 4-7): allreduce count 4") != std::string::npos);
  // Both parts run at once, in the same steps, under one heading.
  CHECK_MESSAGE(text.out.find("  call 0, group tp, parts 0 and 1 at once: {0-3} and {4-7}:\n") != std::string::npos,
                text.out);
  CHECK(text.out.find("part 1: ranks 4-7:\n") == std::string::npos);
  CHECK(text.out.find(", shared with the other parts)") != std::string::npos);
  CHECK(text.out.find("tp group {0-3}: ") != std::string::npos);
  CHECK(text.out.find("; tp group {4-7}: ") != std::string::npos);
  // Captions speak in world ranks, with the group rank beside them.
  CHECK(text.out.find("rank 4 (tp rank 0) adds the buffer of rank 5 (tp rank 1)") != std::string::npos);
  auto json = collscope("run " + file + " --json");
  REQUIRE(json.code == 0);
  const auto calls = nlohmann::json::parse(json.out)["calls"];
  REQUIRE(calls.size() == 2);
  CHECK(calls[1]["group"] == "tp");
  CHECK(calls[1]["part"] == 1);
  CHECK(calls[1]["ranks"] == nlohmann::json::array({4, 5, 6, 7}));
  CHECK(calls[0]["first_step"] == calls[1]["first_step"]);
  CHECK(calls[0]["steps"] == calls[1]["steps"]);
  CHECK(calls[0]["shares_steps_with"] == nlohmann::json::array({1}));
  CHECK(calls[1]["shares_steps_with"] == nlohmann::json::array({0}));
  CHECK(nlohmann::json::parse(json.out)["steps"] == calls[0]["steps"]);
  CHECK(nlohmann::json::parse(json.out)["covers"] == "postcondition of allreduce (call 0, 2 parts)");
}

TEST_CASE("cli programs: --json prints a planning error as JSON on stdout, and on stderr as always") {
  const std::string file = scenario_file("deadlock.json", R"({"version": 1, "ranks": 2,
    "buffers": {"x": {"count": 1}, "y": {"count": 1}},
    "program": [{"op": "recv", "buffer": "y", "from": "1 - rank"}, {"op": "send", "buffer": "x", "to": "1 - rank"}]})");
  auto out = collscope("run " + file + " --json");
  CHECK(out.code == 2);
  const auto j = nlohmann::json::parse(out.out);
  CHECK(j["verified"] == false);
  CHECK(j["error"]["id"] == "program.deadlock");
  CHECK(j["error"]["file"] == file);
  CHECK(j["error"]["line"] == 3);
  CHECK(j["error"]["pointer"] == "/program/0");
  CHECK(j["error"]["exit"] == 2);
  CHECK(j["error"]["message"].get<std::string>().rfind("deadlock: rank 0 waits in recv from rank 1", 0) == 0);
  auto both = test_shell::shell(std::string(COLLSCOPE_BINARY) + " run " + file + " --json 2>&1 >/dev/null");
  CHECK(both.out.rfind("error[program.deadlock] ", 0) == 0);
  auto usage = collscope("run --coll allreduce --ranks 0 --json");
  CHECK(usage.code == 2);
  CHECK(nlohmann::json::parse(usage.out)["error"]["id"] == "scenario.out_of_range");
}

TEST_CASE("cli programs: --ops shows every op of every rank, in program order, bodies after their call") {
  const std::string file = scenario_file("many.json", R"({"version": 1, "ranks": 10, "dtype": "int32",
    "buffers": {"x": {"count": 2, "init": "rank"}, "t": {"count": 2, "scratch": true}},
    "program": [
      {"op": "repeat", "times": 20, "body": [{"op": "compute", "duration_us": 0, "label": "w{i}"}]},
      {"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
        {"op": "step", "phase": "copy", "caption": "copy", "transfers": [{"ranks": "all", "from": {"rank": "rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "t"}}]},
        {"op": "repeat", "times": "size - 1", "var": "k", "body": [
          {"op": "step", "phase": "add", "caption": "add", "transfers": [{"ranks": "all", "from": {"rank": "(rank + k + 1) % size", "buffer": "t"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]}]},
      {"op": "compute", "duration_us": 0, "label": "after"}]})");
  auto some = collscope("run " + file);
  CHECK(some.code == 0);
  CHECK_MESSAGE(some.out.find("      ... 16 more (use --ops all)\n") != std::string::npos, some.out);
  CHECK(some.out.find("    ... ranks 8..9 not shown (use --ops all)\n") != std::string::npos);
  auto all = collscope("run " + file + " --ops all");
  CHECK(all.code == 0);
  CHECK(all.out.find("more (use --ops all)") == std::string::npos);
  CHECK(all.out.find("    rank 9: 32 ops") != std::string::npos);
  // The body's ops come right after their call, and before the op that follows it.
  const auto call = all.out.find("op 1       allreduce x (custom)");
  const auto body = all.out.find("  op 1.0   step \"copy\"");
  const auto after = all.out.find("op 2       compute \"after\"");
  CHECK(call != std::string::npos);
  CHECK(body != std::string::npos);
  CHECK(after != std::string::npos);
  CHECK((call < body && body < after));
  auto three = collscope("run " + file + " --ops 3");
  CHECK(three.out.find("      ... 29 more (use --ops all)\n") != std::string::npos);
  auto bad = collscope("run " + file + " --ops lots", true);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("error[cli.usage] --ops \"lots\" is neither all nor a number") != std::string::npos);
}

TEST_CASE("cli programs: --explain names what a program step does") {
  auto out = collscope("run " + lesson("19-pipeline-parallel.json") + " --explain");
  CHECK(out.code == 0);
  CHECK(out.out.find("[compute]") != std::string::npos);
  CHECK(out.out.find("[point-to-point]") != std::string::npos);
  // A step that only computes is never called point-to-point.
  std::size_t at = 0;
  while ((at = out.out.find("[point-to-point]", at)) != std::string::npos) {
    const auto end = out.out.find('\n', at);
    CHECK(out.out.substr(at, end - at).find("transfers") != std::string::npos);
    ++at;
  }
}
