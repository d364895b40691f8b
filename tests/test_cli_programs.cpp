// `collscope run` on programs, as a user reads it: what a verdict covered, split-group
// calls named by their part, every op of every rank, errors as JSON.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "shell.h"

namespace {

using test_shell::Output;

Output collscope(const std::string& args, bool with_stderr = false) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

// Writes a scenario into a fresh file under the temporary folder and returns its path.
std::string scenario_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("collscope-cli-programs-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("cli programs: the verdict says what it covered, in text and JSON") {
  auto p2p = collscope("run " + lesson("13-send-recv.json"));
  CHECK(p2p.code == 0);
  CHECK_MESSAGE(p2p.out.find("  verified: no expectation: the run only matched its schedule\n") != std::string::npos, p2p.out);
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
