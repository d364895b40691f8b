// The catalogue of bad inputs (tests/data/bad/): every file is refused with its
// expected error id at its expected place, quickly, by the engine and by the binary
// (`collscope validate` and `collscope run --trace`), with exit code 2 and no trace
// written. tests/data/bad/EXPECTED.tsv lists, for each file, the error id, the
// line:col and the JSON Pointer of the error ("-" where there is none).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collscope/scenario.h"
#include "collscope/verify.h"
#include "shell.h"

using namespace collscope;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A bad input must be refused fast: everything is checked before anything big is
// allocated or unrolled. Generous, for a busy machine; sanitizers slow the engine's
// allocation-heavy lowering about ten times (scripts/sanitizers.sh).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr double kMaxSeconds = 200.0;
#else
constexpr double kMaxSeconds = 20.0;
#endif

struct Expected {
  std::string file;     // relative to tests/data/bad/
  std::string id;       // "scenario.parse"
  std::string where;    // "12:5" or "-"
  std::string pointer;  // "/program/0" or "-"
};

std::string bad_dir() { return std::string(COLLSCOPE_SOURCE_DIR) + "/tests/data/bad"; }

std::vector<Expected> catalogue() {
  std::ifstream in(bad_dir() + "/EXPECTED.tsv");
  REQUIRE(in);
  std::vector<Expected> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Expected e;
    std::getline(fields, e.file, '\t');
    std::getline(fields, e.id, '\t');
    std::getline(fields, e.where, '\t');
    std::getline(fields, e.pointer, '\t');
    REQUIRE_MESSAGE(!e.pointer.empty(), "EXPECTED.tsv: a line needs four tab-separated fields: " << line);
    out.push_back(e);
  }
  return out;
}

std::string location_text(const Error& e) {
  return e.where.line > 0 ? std::to_string(e.where.line) + ":" + std::to_string(e.where.col) : "-";
}

// What `collscope validate` checks, in the same order: the first error wins.
Error first_error(const std::string& path) {
  auto s = load_scenario(path);
  if (!s) return s.error();
  auto sched = lower_scenario(*s);
  if (!sched) return sched.error();
  if (auto st = verify_symbolic(*sched); !st) return st.error();
  FAIL("accepted: " << path);
  return {};
}

using test_shell::Output;

// Runs collscope with a hard time limit (timeout(1) exits 124 when it fires).
Output run_collscope(const std::string& args) {
  return test_shell::shell("timeout -k 5 " + std::to_string(static_cast<int>(kMaxSeconds * 2)) + " " +
                           COLLSCOPE_BINARY + " " + args + " 2>&1");
}

std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

// The first line a user sees: error[ID] FILE[:LINE:COL] [POINTER]...
std::string expected_head(const Expected& e, const std::string& path) {
  std::string head = "error[" + e.id + "] " + path;
  if (e.where != "-") head += ":" + e.where;
  if (e.pointer != "-") head += " " + e.pointer + ":";
  return head;
}

}  // namespace

TEST_CASE("bad inputs: the catalogue and its expectations list the same files") {
  std::set<std::string> listed, present;
  for (const auto& e : catalogue()) {
    CHECK_MESSAGE(listed.insert(e.file).second, "listed twice: " << e.file);
  }
  for (const auto& entry : fs::directory_iterator(bad_dir())) {
    const std::string name = entry.path().filename().string();
    if (name == "EXPECTED.tsv") continue;
    present.insert(name);
    CHECK_MESSAGE(listed.count(name) == 1, "no expectation in EXPECTED.tsv for " << name);
  }
  // Rows for files that do not exist are the "missing file" cases; there is exactly one.
  int missing = 0;
  for (const auto& name : listed)
    if (!present.count(name)) ++missing;
  CHECK(missing == 1);
  CHECK(listed.size() >= 60);
}

TEST_CASE("bad inputs: the engine refuses every file with its id and location, quickly") {
  for (const auto& e : catalogue()) {
    const std::string path = bad_dir() + "/" + e.file;
    const auto t0 = Clock::now();
    const Error err = first_error(path);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    INFO(e.file << ": " << err.format());
    CHECK(err.id == e.id);
    CHECK(location_text(err) == e.where);
    CHECK((err.where.pointer.empty() ? std::string("-") : err.where.pointer) == e.pointer);
    CHECK(err.where.file == path);
    CHECK(err.exit == ExitCode::bad_input);
    CHECK(!err.hint.empty());
    CHECK(seconds < kMaxSeconds);
  }
}

TEST_CASE("bad inputs: validate and run exit 2 with the error, write no trace, and never hang") {
  const fs::path out_dir = fs::temp_directory_path() / ("collscope-bad-" + std::to_string(::getpid()));
  fs::remove_all(out_dir);
  fs::create_directories(out_dir);
  const fs::path trace = out_dir / "trace.json";
  for (const auto& e : catalogue()) {
    const std::string path = bad_dir() + "/" + e.file;
    const std::string head = expected_head(e, path);
    for (const std::string& command : {std::string("validate"), std::string("run")}) {
      const std::string args = command + " " + shell_quote(path) +
                               (command == "run" ? " --trace " + shell_quote(trace.string()) : std::string());
      const auto t0 = Clock::now();
      const Output o = run_collscope(args);
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      INFO(command << " " << e.file << ":\n" << o.out);
      CHECK(o.code == 2);
      CHECK(seconds < kMaxSeconds);
      CHECK(o.out.rfind(head, 0) == 0);
      CHECK(o.out.find("\n  help: ") != std::string::npos);
      // Nothing written: no trace, and no temporary file left next to it.
      CHECK(fs::is_empty(out_dir));
    }
  }
  fs::remove_all(out_dir);
}
