// Hostile inputs and situations, one class at a time: outputs that are not ours to
// destroy (devices, FIFOs, folders, links, the run's own inputs), readers that must
// never wait or read without end, limits that must hold whatever the ranks do, and
// numbers and messages that must say exactly what the input said. The signals that
// interrupt a write are tested on a real process by tests/signals.sh.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collscope/files.h"
#include "collscope/flight_record.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "gui/view/run_worker.h"
#include "gui/view/settings.h"
#include "scenario/json.h"
#include "scenario/resolve.h"
#include "scratch.h"

using namespace collscope;
namespace fs = std::filesystem;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A fresh folder for one test (removed when the test process ends).
fs::path scratch(const std::string& name) {
  const fs::path dir = test_scratch::dir("collscope-hostile-", name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Leftovers of the atomic writer: ".NAME.tmp-..." files.
std::vector<std::string> temp_files_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path().filename().string());
  return out;
}

bool is_fifo_node(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
}
bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// A character device node of our own (the null device's numbers: writing to it is
// harmless), or "" where nodes cannot be made (not root).
std::string make_device(const fs::path& p) {
  if (::mknod(p.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) return "";
  return p.string();
}

// --- running a real collscope -------------------------------------------------------------

struct Proc {
  int code = -1;   // exit status; -1 when killed by a signal or timed out
  int signal = 0;  // the signal that ended it
  bool timed_out = false;
  double seconds = 0;
  std::string out;  // stdout and stderr together
};

struct Spawn {
  std::vector<std::string> argv;
  double timeout_s = 60;
  std::vector<std::pair<std::string, std::string>> env;
  std::function<void()> in_child;      // before exec: setrlimit, setuid (the test process is single-threaded)
  std::vector<std::string> stop_when;  // kill the process once its output holds all of these
};

Proc spawn(const Spawn& s) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const auto t0 = Clock::now();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: a timeout kills everything it started
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    for (const auto& [k, v] : s.env) ::setenv(k.c_str(), v.c_str(), 1);
    if (s.in_child) s.in_child();
    std::vector<char*> args;
    for (const auto& a : s.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(fds[1]);
  Proc p;
  bool stopped = false;
  for (;;) {
    const double left = s.timeout_s - seconds_since(t0);
    if (left <= 0) {
      p.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd pf{fds[0], POLLIN, 0};
    const int r = ::poll(&pf, 1, static_cast<int>(std::min(left, 0.2) * 1000) + 1);
    if (r > 0) {
      char buf[4096];
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n <= 0) break;
      p.out.append(buf, static_cast<std::size_t>(n));
      if (!s.stop_when.empty() && !stopped) {
        bool all = true;
        for (const auto& w : s.stop_when) all = all && p.out.find(w) != std::string::npos;
        if (all) {
          stopped = true;
          ::kill(-pid, SIGTERM);
        }
      }
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!p.timed_out) {
    if (WIFEXITED(status)) p.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) p.signal = WTERMSIG(status);
  }
  p.seconds = seconds_since(t0);
  return p;
}

// `collscope ARGS...` with a time limit.
Proc cli(std::vector<std::string> args, double timeout_s = 60) {
  args.insert(args.begin(), COLLSCOPE_BINARY);
  Spawn s;
  s.argv = std::move(args);
  s.timeout_s = timeout_s;
  return spawn(s);
}

bool have_gui_display() {
#ifdef COLLSCOPE_HAVE_GUI
  return std::system("command -v xvfb-run >/dev/null 2>&1") == 0;
#else
  return false;
#endif
}

std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

// Runs `fn` on another thread; false when it is still running after `seconds` (it is
// then released by opening `fifo` for writing, which ends a reader blocked in open()).
template <class F>
bool finishes_within(double seconds, const fs::path& fifo, F fn) {
  auto fut = std::async(std::launch::async, fn);
  if (fut.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready) {
    fut.get();
    return true;
  }
  for (int i = 0; i < 100 && fut.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready; ++i) {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  fut.wait();
  return false;
}

// A valid flight record of `world` ranks: every rank finished one completed allreduce.
nlohmann::ordered_json good_record(int world) {
  nlohmann::ordered_json j;
  j["flight_record"] = 1;
  j["backend"] = "cpu";
  j["mode"] = "fast";
  j["reason"] = "";
  j["world"] = world;
  j["steps"] = 4;
  j["timeout_s"] = 5;
  j["capacity"] = 64;
  j["ranks"] = nlohmann::ordered_json::array();
  for (int r = 0; r < world; ++r) {
    nlohmann::ordered_json op{{"seq", 0},
                              {"call", 0},
                              {"collective", true},
                              {"op", "allreduce"},
                              {"text", "allreduce x"},
                              {"pointer", "/program/0"},
                              {"buffer", "x"},
                              {"count", 8},
                              {"dtype", "float32"},
                              {"root", -1},
                              {"reduce_op", "sum"},
                              {"first_step", 0},
                              {"last_step", 3},
                              {"state", "completed"},
                              {"scheduled_us", 1.0},
                              {"started_us", 2.0},
                              {"completed_us", 3.0}};
    j["ranks"].push_back({{"rank", r},
                          {"state", "finished"},
                          {"step", 3},
                          {"waiting_for", -1},
                          {"dropped", 0},
                          {"ops", nlohmann::ordered_json::array({op})}});
  }
  return j;
}

Error record_error(const nlohmann::ordered_json& j) {
  auto r = parse_flight_record(j.dump(1), "r.json");
  REQUIRE_MESSAGE(!r.ok(), j.dump());
  return r.error();
}

const std::string kTwoRankProgram = R"({"version": 1, "ranks": 2, "buffers": {"x": {"count": 8}}, "program": [)";

}  // namespace

// =====================================================================================
// 1. Outputs: never destroy what is not ours
// =====================================================================================

TEST_CASE("hostile: outputs: a device, FIFO or folder at an output path is refused and left as it was") {
  const fs::path dir = scratch("targets");
  std::vector<std::pair<fs::path, std::string>> targets;  // path, what it is
  if (const std::string dev = make_device(dir / "full"); !dev.empty()) targets.push_back({dev, "device"});
  else MESSAGE("not root: no device node of our own; FIFOs and folders only");
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0666) == 0);
  targets.push_back({dir / "fifo", "fifo"});
  fs::create_directories(dir / "folder");
  targets.push_back({dir / "folder", "folder"});

  for (const auto& [path, what] : targets) {
    for (const char* flag : {"--trace", "--flight-record"}) {
      CAPTURE(what);
      CAPTURE(flag);
      auto o = cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", flag, path.string()});
      CHECK_FALSE(o.timed_out);
      CHECK(o.code == 2);
      CHECK(o.out.find(what == "folder" ? "it is a folder" : "not a regular file") != std::string::npos);
      if (what == "device") CHECK(is_char_device(path));
      if (what == "fifo") CHECK(is_fifo_node(path));
      if (what == "folder") CHECK(fs::is_directory(path));
      CHECK_FALSE(fs::exists(path.string() + ".flight.json"));
      CHECK(temp_files_in(dir).empty());
    }
    // The engine's writer itself, whoever calls it.
    auto st = write_file_atomically(path.string(), "data", "test.io");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().id == "test.io");
    if (what == "device") CHECK(is_char_device(path));
    if (what == "fifo") CHECK(is_fifo_node(path));
    CHECK(check_output_target(path.string(), "test.io").ok() == false);
  }
  // A link to a device or FIFO is no way around it.
  fs::create_symlink(dir / "fifo", dir / "to-fifo");
  auto o = cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--trace", (dir / "to-fifo").string()});
  CHECK(o.code == 2);
  CHECK(is_fifo_node(dir / "fifo"));
  CHECK(fs::is_symlink(dir / "to-fifo"));
  CHECK(temp_files_in(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("hostile: outputs: a symbolic link is followed: the link stays and its target gets the new contents") {
  const fs::path dir = scratch("links");
  fs::create_symlink("target.json", dir / "link.json");  // dangling, relative
  auto o = cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--trace", (dir / "link.json").string()});
  REQUIRE(o.code == 0);
  CHECK(fs::is_symlink(dir / "link.json"));
  REQUIRE(fs::is_regular_file(dir / "target.json"));
  CHECK(nlohmann::json::parse(read_all(dir / "target.json")).contains("traceEvents"));

  // An existing target is replaced through the link and keeps its permissions.
  write_text(dir / "target.json", "old");
  fs::permissions(dir / "target.json", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  REQUIRE(write_file_atomically((dir / "link.json").string(), "new", "test.io"));
  CHECK(fs::is_symlink(dir / "link.json"));
  CHECK(read_all(dir / "target.json") == "new");
  CHECK(fs::status(dir / "target.json").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  // A chain of links.
  fs::create_symlink("link.json", dir / "link2.json");
  REQUIRE(write_file_atomically((dir / "link2.json").string(), "newer", "test.io"));
  CHECK(fs::is_symlink(dir / "link2.json"));
  CHECK(read_all(dir / "target.json") == "newer");
  CHECK(temp_files_in(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("hostile: outputs: an output that is one of the run's inputs, or two outputs on one file, are refused") {
  const fs::path dir = scratch("inputs");
  const fs::path s = dir / "s.json";
  fs::copy_file(lesson("00-allreduce-ring.json"), s);
  const std::string original = read_all(s);
  fs::create_hard_link(s, dir / "hard.json");
  fs::create_symlink(s, dir / "soft.json");

  for (const auto& [flag, out] :
       std::vector<std::pair<std::string, fs::path>>{{"--trace", s},
                                                     {"--flight-record", s},
                                                     {"--trace", dir / "hard.json"},
                                                     {"--flight-record", dir / "soft.json"}}) {
    CAPTURE(flag);
    CAPTURE(out);
    auto o = cli({"run", s.string(), flag, out.string()});
    CHECK(o.code == 2);
    CHECK(o.out.find("error[cli.output_path]") != std::string::npos);
    CHECK(read_all(s) == original);
  }
  // The same file twice.
  auto twice =
      cli({"run", s.string(), "--trace", (dir / "t.json").string(), "--flight-record", (dir / "t.json").string()});
  CHECK(twice.code == 2);
  CHECK(twice.out.find("error[cli.output_path]") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "t.json"));
  // An aborted run's record would land next to the trace: not on the scenario either.
  fs::copy_file(s, dir / "t.json.flight.json");
  auto next_to = cli({"run", (dir / "t.json.flight.json").string(), "--trace", (dir / "t.json").string()});
  CHECK(next_to.code == 2);
  CHECK(next_to.out.find("error[cli.output_path]") != std::string::npos);
  CHECK(read_all(dir / "t.json.flight.json") == original);

  // The window's exports, headless: never over the lesson they show.
  if (have_gui_display()) {
    for (const char* flag : {"--export-trace", "--screenshot"}) {
      Spawn g;
      g.argv = {"xvfb-run", "-a", COLLSCOPE_BINARY, "gui", s.string(), flag, s.string()};
      g.env = {{"XDG_CONFIG_HOME", (dir / "config").string()}};
      auto o = spawn(g);
      CAPTURE(o.out);
      CHECK(o.code == 2);
      CHECK(o.out.find("error[cli.output_path]") != std::string::npos);
      CHECK(read_all(s) == original);
    }
  } else {
    MESSAGE("window checks skipped: no window built or no xvfb-run");
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "hostile: outputs: a completed run writes no flight record beside its trace, and a failed output writes nothing") {
  const fs::path dir = scratch("flight");
  const std::string t = (dir / "t.json").string();
  auto ok = cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--trace", t});
  REQUIRE(ok.code == 0);
  CHECK(fs::exists(t));
  CHECK_FALSE(fs::exists(t + ".flight.json"));  // only aborted runs write it (README)

  // An aborted run does write it there, and no trace.
  fs::remove(t);
  auto hung = cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--trace", t, "--fault", "1:0:hang",
                   "--timeout", "0.3"});
  CHECK(hung.code == 3);
  CHECK(fs::exists(t + ".flight.json"));
  CHECK_FALSE(fs::exists(t));
  CHECK(load_flight_record(t + ".flight.json").ok());

  // --flight-record is written after every run.
  auto rec =
      cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--flight-record", (dir / "f.json").string()});
  CHECK(rec.code == 0);
  CHECK(load_flight_record((dir / "f.json").string()).ok());

  // A folder as --trace: refused before anything runs, nothing written anywhere.
  fs::create_directories(dir / "out");
  auto folder =
      cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--trace", (dir / "out").string() + "/"});
  CHECK(folder.code == 2);
  CHECK(fs::is_empty(dir / "out"));
  auto missing =
      cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "4", "--trace", (dir / "nowhere/t.json").string()});
  CHECK(missing.code == 2);
  CHECK_FALSE(fs::exists(dir / "nowhere"));

  // A write that fails half-way (the file-size limit) leaves the old trace and no temporary file.
  write_text(t, "old");
  Spawn small;
  small.argv = {COLLSCOPE_BINARY, "run", "--coll", "allreduce", "--ranks", "4", "--count", "64", "--trace", t};
  small.in_child = [] {
    ::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing
    rlimit lim{2048, 2048};
    ::setrlimit(RLIMIT_FSIZE, &lim);
  };
  auto big = spawn(small);
  CHECK(big.code == 2);
  CHECK(big.out.find("error[trace.io]") != std::string::npos);
  CHECK(read_all(t) == "old");
  CHECK(temp_files_in(dir).empty());
  fs::remove_all(dir);
}

TEST_CASE("hostile: outputs: a link planted at the settings' or a PNG's temporary name is never written through") {
  const fs::path dir = scratch("planted");
  write_text(dir / "victim", "precious");
  // The window's settings: they used to go to the fixed name settings.json.tmp.
  fs::create_symlink(dir / "victim", dir / "settings.json.tmp");
  app::Settings s;
  s.zoom = 2;
  REQUIRE(app::save_settings(dir.string(), s));
  CHECK(read_all(dir / "victim") == "precious");
  CHECK(app::load_settings(dir.string()).zoom == doctest::Approx(2.0f));
  // A FIFO as the settings file is refused, not renamed over.
  fs::remove(dir / "settings.json");
  REQUIRE(::mkfifo((dir / "settings.json").c_str(), 0666) == 0);
  CHECK_FALSE(app::save_settings(dir.string(), s));
  CHECK(is_fifo_node(dir / "settings.json"));

  // The window's PNG writer: it used to write PATH.tmp with fopen, following a link there.
  if (have_gui_display()) {
    fs::create_symlink(dir / "victim", dir / "shot.png.tmp");
    Spawn g;
    g.argv = {"xvfb-run",
              "-a",
              COLLSCOPE_BINARY,
              "gui",
              lesson("00-allreduce-ring.json"),
              "--screenshot",
              (dir / "shot.png").string(),
              "--size",
              "640x400"};
    g.env = {{"XDG_CONFIG_HOME", (dir / "config").string()}};
    auto o = spawn(g);
    CAPTURE(o.out);
    CHECK(o.code == 0);
    CHECK(read_all(dir / "victim") == "precious");
    CHECK(read_all(dir / "shot.png").substr(0, 8) == "\x89PNG\r\n\x1a\n");
    // A PNG over a FIFO is refused like any output.
    REQUIRE(::mkfifo((dir / "fifo.png").c_str(), 0666) == 0);
    g.argv[6] = (dir / "fifo.png").string();
    auto f = spawn(g);
    CHECK(f.code == 2);
    CHECK(is_fifo_node(dir / "fifo.png"));
  } else {
    MESSAGE("PNG checks skipped: no window built or no xvfb-run");
  }
  fs::remove_all(dir);
}

// =====================================================================================
// 2. Never hang
// =====================================================================================

TEST_CASE("hostile: never hang: every reader refuses a FIFO at once") {
  const fs::path dir = scratch("fifos");
  const fs::path fifo = dir / "x.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);

  // The flight record reader (`analyze`) used to block in open() for ever.
  Result<FlightRecord> rec = make_error("test", "not run");
  CHECK(finishes_within(10, fifo, [&] { rec = load_flight_record(fifo.string()); }));
  REQUIRE_FALSE(rec.ok());
  CHECK(rec.error().id == "analyze.io");
  auto o = cli({"analyze", fifo.string()}, 30);
  CHECK_FALSE(o.timed_out);
  CHECK(o.code == 2);
  CHECK(o.out.find("error[analyze.io]") != std::string::npos);

  // The window's settings file.
  fs::create_directories(dir / "config");
  REQUIRE(::mkfifo((dir / "config" / "settings.json").c_str(), 0666) == 0);
  app::Settings settings;
  settings.zoom = 3;
  CHECK(finishes_within(10, dir / "config" / "settings.json",
                        [&] { settings = app::load_settings((dir / "config").string()); }));
  CHECK(settings.zoom == doctest::Approx(1.0f));  // the defaults

  // Scenarios and lessons, and the shared reader itself.
  Result<Scenario> sc = make_error("test", "not run");
  CHECK(finishes_within(10, fifo, [&] { sc = load_scenario(fifo.string()); }));
  CHECK(sc.error().id == "scenario.io");
  CHECK(finishes_within(10, fifo, [&] { (void)read_heading(fifo.string()); }));
  const InputKind kind{"test.io", "test file", 1024, "", ""};
  Result<std::string> text = std::string();
  CHECK(finishes_within(10, fifo, [&] { text = read_input_file(fifo.string(), kind); }));
  REQUIRE_FALSE(text.ok());
  CHECK(text.error().message.find("FIFO") != std::string::npos);
  // `collscope list` over a lesson folder holding a FIFO.
  Spawn l;
  l.argv = {COLLSCOPE_BINARY, "list"};
  l.env = {{"COLLSCOPE_SCENARIOS", dir.string()}};
  l.timeout_s = 30;
  auto listed = spawn(l);
  CHECK_FALSE(listed.timed_out);
  CHECK(listed.code == 0);
  fs::remove_all(dir);
}

TEST_CASE("hostile: never hang: the window opens with FIFOs as its settings and layout files") {
  if (!have_gui_display()) {
    MESSAGE("skipped: no window built or no xvfb-run");
    return;
  }
  const fs::path dir = scratch("window-fifos");
  fs::create_directories(dir / "collscope");
  REQUIRE(::mkfifo((dir / "collscope" / "settings.json").c_str(), 0666) == 0);
  REQUIRE(::mkfifo((dir / "collscope" / "imgui.ini").c_str(), 0666) == 0);
  Spawn g;
  g.argv = {"xvfb-run", "-a", COLLSCOPE_BINARY, "gui", lesson("00-allreduce-ring.json")};
  g.env = {{"XDG_CONFIG_HOME", dir.string()}};
  g.timeout_s = 60;
  // The layout is read once the window exists: both warnings mean it got that far.
  g.stop_when = {"ignoring the settings", "ignoring the window layout"};
  auto o = spawn(g);
  CAPTURE(o.out);
  CHECK_FALSE(o.timed_out);
  CHECK(o.out.find("ignoring the settings") != std::string::npos);
  CHECK(o.out.find("ignoring the window layout") != std::string::npos);
  CHECK(is_fifo_node(dir / "collscope" / "settings.json"));
  CHECK(is_fifo_node(dir / "collscope" / "imgui.ini"));
  fs::remove_all(dir);
}

TEST_CASE("hostile: never hang: bench refuses sweeps it could never finish") {
  // Twenty million rows of one size.
  auto tiny = cli({"bench", "--ranks", "2", "-b", "8", "-e", "64", "-f", "1.0000001", "--probe", "0"}, 30);
  CHECK_FALSE(tiny.timed_out);
  CHECK(tiny.code == 2);
  CHECK(tiny.out.find("does not grow the count by one per step") != std::string::npos);
  CHECK(tiny.out.find("help: give a larger -f") != std::string::npos);  // a -b that would do lies beyond -e
  // Each step adds an element, but there are thousands of steps.
  auto many =
      cli({"bench", "--ranks", "2", "-d", "int8", "-b", "2000", "-e", "16G", "-f", "1.001", "--probe", "0"}, 30);
  CHECK_FALSE(many.timed_out);
  CHECK(many.code == 2);
  CHECK(many.out.find("sizes") != std::string::npos);
  // A sweep whose largest size is over the limits is refused before its first row.
  auto huge = cli({"bench", "--ranks", "4", "-b", "8", "-e", "16G", "--probe", "0"}, 30);
  CHECK(huge.code == 2);
  CHECK(huge.out.find("  8 ") == std::string::npos);
}

TEST_CASE("hostile: never hang: --timeout holds while a rank sleeps in a delay or a long compute span") {
  // A delay of 20 s with a timeout of 0.5 s used to end after the 20 s.
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.ranks = 2;
  q.count = 4;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc);
  auto sched = lower_scenario(*sc);
  REQUIRE(sched);
  auto init = [&](std::int32_t b, std::int32_t r, std::uint64_t i) {
    return initial_value(sc->buffers[static_cast<std::size_t>(b)], r, i);
  };
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    RunOptions o;
    o.mode = mode;
    o.timeout_s = 0.5;
    o.dump_on_failure = false;
    o.faults = {Fault{0, 0, Fault::Kind::delay, 20000}};
    const auto t0 = Clock::now();
    auto out = execute(*sched, init, o);
    const double took = seconds_since(t0);
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().id == "backend.timeout");
    CHECK(took < 8.0);
  }
  // A 30 s compute span with a timeout of 1 s.
  auto prog = parse_scenario(kTwoRankProgram + R"({"op": "compute", "ranks": "rank == 0", "duration_us": 30000000},
      {"op": "allreduce", "buffer": "x"}]})",
                             "compute.json");
  REQUIRE(prog);
  auto ps = lower_scenario(*prog);
  REQUIRE(ps);
  RunOptions o;
  o.timeout_s = 1;
  o.dump_on_failure = false;
  const auto t0 = Clock::now();
  auto out = execute(
      *ps, [](std::int32_t, std::int32_t, std::uint64_t) { return 1.0; }, o);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().id == "backend.timeout");
  CHECK(seconds_since(t0) < 10.0);
  // The command line, end to end: the record goes to $TMPDIR, and the error names it.
  const fs::path tmp = scratch("timeout-tmpdir");
  Spawn s;
  s.argv = {COLLSCOPE_BINARY, "run", "--coll",  "allreduce",       "--ranks",   "2",
            "--count",        "4",   "--fault", "0:0:delay:20000", "--timeout", "0.5"};
  s.env = {{"TMPDIR", tmp.string()}};
  auto end_to_end = spawn(s);
  CHECK(end_to_end.code == 3);
  CHECK(end_to_end.seconds < 10.0);
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(tmp)) records.push_back(e.path());
  REQUIRE(records.size() == 1);
  CHECK(records[0].filename().string().rfind("collscope-flight-", 0) == 0);
  CHECK_MESSAGE(end_to_end.out.find(records[0].string()) != std::string::npos, end_to_end.out);
}

// =====================================================================================
// 3. Never abort
// =====================================================================================

TEST_CASE("hostile: never abort: analyze on /dev/zero, a folder and a world of 2^31 ranks") {
  auto zero = cli({"analyze", "/dev/zero"}, 30);
  CHECK_FALSE(zero.timed_out);
  CHECK(zero.code == 2);
  CHECK(zero.out.find("error[analyze.io]") != std::string::npos);
  // A folder is a job's files; an empty one is an input problem (analyze.io).
  const fs::path empty = scratch("empty-folder");
  auto folder = cli({"analyze", empty.string()}, 30);
  CHECK(folder.code == 2);
  CHECK(folder.out.find("error[analyze.io]") != std::string::npos);
  CHECK(folder.out.find("the folder has no files") != std::string::npos);

  const fs::path dir = scratch("world");
  for (const char* world : {"2147483647", "2147483648", "4294967297"}) {
    CAPTURE(world);
    write_text(dir / "r.json", std::string(R"({"flight_record": 1, "world": )") + world + R"(, "ranks": []})");
    auto o = cli({"analyze", (dir / "r.json").string()}, 30);
    CHECK_FALSE(o.timed_out);
    CHECK(o.code == 2);
    CHECK(o.out.find("error[analyze.bad_record]") != std::string::npos);
    CHECK(o.out.find("/world") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "hostile: never abort: a scenario swapped for /dev/zero while it is read is refused, never read without end") {
  const fs::path dir = scratch("swap");
  const fs::path real = dir / "real.json", path = dir / "x.json";
  fs::copy_file(lesson("00-allreduce-ring.json"), real);
  fs::copy_file(real, path);
  std::atomic<bool> stop{false};
  // Swaps the path between the scenario and a link to /dev/zero, as fast as it can.
  std::thread swapper([&] {
    const fs::path a = dir / "a.json", b = dir / "b.json";
    for (int i = 0; !stop.load(); ++i) {
      std::error_code ec;
      if (i % 2) {
        fs::copy_file(real, a, fs::copy_options::overwrite_existing, ec);
        ::rename(a.c_str(), path.c_str());
      } else {
        fs::remove(b, ec);
        fs::create_symlink("/dev/zero", b, ec);
        ::rename(b.c_str(), path.c_str());
      }
    }
  });
  int good = 0, refused = 0, other = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < 3000 && seconds_since(t0) < 5; ++i) {
    auto r = load_scenario(path.string());
    if (r.ok()) ++good;
    else if (r.error().id == "scenario.io") ++refused;
    else ++other;
  }
  stop = true;
  swapper.join();
  MESSAGE("loads: " << good << " whole, " << refused << " refused");
  CHECK(other == 0);
  CHECK(good + refused > 0);
  fs::remove_all(dir);
}

TEST_CASE("hostile: never abort: thread creation failing under a limit is backend.out_of_resources, exit 3") {
  const bool root = ::geteuid() == 0;
  // The thread limit: as an unprivileged user (root ignores RLIMIT_NPROC).
  auto as_nobody_with = [](rlim_t threads) {
    return [threads] {
      rlimit lim{threads, threads};
      ::setrlimit(RLIMIT_NPROC, &lim);
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(126);
    };
  };
  if (root) {
    Spawn s;
    s.argv = {COLLSCOPE_BINARY, "run", "--coll", "allreduce", "--ranks", "1000", "--count", "4"};
    s.in_child = as_nobody_with(40);
    auto o = spawn(s);
    CAPTURE(o.out);
    CHECK(o.code == 3);
    CHECK(o.out.find("error[backend.out_of_resources]") != std::string::npos);
    CHECK(o.out.find("terminate") == std::string::npos);
    // bench: its memory probe's threads, or its ranks', whichever the limit hits first
    // (one thread beside the main one: the probe starts one per core, the ranks two).
    // The limit leaves room for LeakSanitizer's thread at exit.
    s.argv = {COLLSCOPE_BINARY, "bench", "--ranks", "2", "-b", "8", "-e", "8", "-n", "1", "-w", "0"};
    s.in_child = as_nobody_with(2);
    auto b = spawn(s);
    CAPTURE(b.out);
    CHECK(b.code == 3);
    CHECK(b.signal == 0);
    CHECK(b.out.find("error[backend.out_of_resources]") != std::string::npos);
    CHECK(b.out.find("terminate called") == std::string::npos);

    // The window's worker: the lesson's error comes back as its result.
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      as_nobody_with(8)();
      QuickSpec q;
      q.coll = Collective::allreduce;
      q.ranks = 64;
      q.count = 64;
      auto sc = scenario_from_spec(q);
      if (!sc) ::_exit(10);
      int rc = 11;
      {
        view::RunWorker w;
        w.submit(view::RunRequest{*sc, "cpu"});
        for (int i = 0; i < 3000; ++i) {
          if (auto r = w.take()) {
            rc = !r->run.ok() && r->run.error().id == "backend.out_of_resources" ? 0 : 12;
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
      ::_exit(rc);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  } else {
    MESSAGE("not root: the thread limit cannot be tested (RLIMIT_NPROC counts all of this user's threads)");
  }
  // The address-space limit of containers; AddressSanitizer needs terabytes of it.
  if (!kAsan) {
    Spawn s;
    s.argv = {COLLSCOPE_BINARY, "run", "--coll", "allreduce", "--ranks", "1000", "--count", "4"};
    s.in_child = [] {
      // Threads get stacks of RLIMIT_STACK (8 MiB by default): 1000 of them need 8 GB.
      rlimit stack{8ull << 20, 8ull << 20};
      ::setrlimit(RLIMIT_STACK, &stack);
      rlimit lim{4000000000ull, 4000000000ull};
      ::setrlimit(RLIMIT_AS, &lim);
    };
    auto o = spawn(s);
    CAPTURE(o.out);
    CHECK(o.code == 3);
    CHECK(o.out.find("error[backend.out_of_resources]") != std::string::npos);
    // main's own net: an exception no command catches (the memory probe's allocation
    // under an address-space limit just above what the rest of bench needs) is
    // internal.out_of_memory, exit 3, never an abort.
    auto bench_under = [](rlim_t bytes, bool probe) {
      Spawn b;
      b.argv = {COLLSCOPE_BINARY, "bench",          "--ranks", "2", "-b", "8", "-e", "8", "-n", "1", "-w", "0",
                "--probe",        probe ? "1" : "0"};
      b.in_child = [bytes] {
        rlimit lim{bytes, bytes};
        ::setrlimit(RLIMIT_AS, &lim);
      };
      return spawn(b);
    };
    rlim_t lo = 16ull << 20, hi = 8ull << 30;
    if (bench_under(hi, false).code != 0) {
      MESSAGE("bench does not run under an 8 GiB address-space limit here: the internal-error check is skipped");
    } else {
      // The smallest limit bench runs under without its probe, to 8 MiB.
      while (hi - lo > (8ull << 20)) {
        const rlim_t mid = lo + (hi - lo) / 2;
        (bench_under(mid, false).code == 0 ? hi : lo) = mid;
      }
      auto p = bench_under(hi + (32ull << 20), true);  // the probe needs 128 MiB
      CAPTURE(p.out);
      CHECK(p.code == 3);
      CHECK(p.signal == 0);
      CHECK(p.out.find("error[internal.out_of_memory]") != std::string::npos);
    }
  } else {
    MESSAGE("address-space limits skipped under AddressSanitizer");
  }
}

// =====================================================================================
// 4. Wrong answers from bad input
// =====================================================================================

TEST_CASE("hostile: wrong answers: analyze checks every number of a record against its type and the world") {
  REQUIRE(parse_flight_record(good_record(4).dump(1), "r.json").ok());

  // Rank 0 twice, rank 1 missing: was analysed as "did not complete on ranks 0, 0, 2 and 3".
  auto dup = good_record(4);
  dup["ranks"][1]["rank"] = 0;
  Error e = record_error(dup);
  CHECK(e.id == "analyze.bad_record");
  CHECK(e.where.pointer == "/ranks/1/rank");
  CHECK(e.where.line > 0);
  auto missing = good_record(4);
  missing["ranks"].erase(2);
  CHECK(record_error(missing).message.find("rank 2") != std::string::npos);

  struct Case {
    const char* what;
    std::function<void(nlohmann::ordered_json&)> edit;
    const char* pointer;
  };
  const std::vector<Case> cases = {
      {"rank 2^32 (was read as 0)", [](auto& j) { j["ranks"][0]["rank"] = 4294967296ull; }, "/ranks/0/rank"},
      {"rank outside the world", [](auto& j) { j["ranks"][3]["rank"] = 4; }, "/ranks/3/rank"},
      {"world 2^32 + 1", [](auto& j) { j["world"] = 4294967297ull; }, "/world"},
      {"world 0", [](auto& j) { j["world"] = 0; }, "/world"},
      {"world over the rank limit", [](auto& j) { j["world"] = kMaxRanks + 1; }, "/world"},
      {"waiting_for 99", [](auto& j) { j["ranks"][1]["waiting_for"] = 99; }, "/ranks/1/waiting_for"},
      {"waiting_for -2", [](auto& j) { j["ranks"][1]["waiting_for"] = -2; }, "/ranks/1/waiting_for"},
      {"step -5", [](auto& j) { j["ranks"][2]["step"] = -5; }, "/ranks/2/step"},
      {"step beyond the schedule", [](auto& j) { j["ranks"][2]["step"] = 4; }, "/ranks/2/step"},
      {"a negative member",
       [](auto& j) {
         j["ranks"][0]["ops"][0]["members"] = {0, -1};
       },
       "/ranks/0/ops/0/members/1"},
      {"a member twice",
       [](auto& j) {
         j["ranks"][0]["ops"][0]["members"] = {1, 1};
       },
       "/ranks/0/ops/0/members/1"},
      {"a member outside the world",
       [](auto& j) {
         j["ranks"][0]["ops"][0]["members"] = {0, 7};
       },
       "/ranks/0/ops/0/members/1"},
      {"a negative count", [](auto& j) { j["ranks"][0]["ops"][0]["count"] = -1; }, "/ranks/0/ops/0/count"},
      {"a negative seq", [](auto& j) { j["ranks"][0]["ops"][0]["seq"] = -1; }, "/ranks/0/ops/0/seq"},
      {"a root outside the world", [](auto& j) { j["ranks"][0]["ops"][0]["root"] = 4; }, "/ranks/0/ops/0/root"},
      {"a first step of -3", [](auto& j) { j["ranks"][0]["ops"][0]["first_step"] = -3; }, "/ranks/0/ops/0/first_step"},
      {"a negative dropped", [](auto& j) { j["ranks"][0]["dropped"] = -4; }, "/ranks/0/dropped"},
      {"a fractional rank", [](auto& j) { j["ranks"][0]["rank"] = 0.5; }, "/ranks/0/rank"},
      {"an unknown rank state", [](auto& j) { j["ranks"][0]["state"] = "asleep"; }, "/ranks/0/state"},
      {"a time of -7", [](auto& j) { j["ranks"][0]["ops"][0]["started_us"] = -7.0; }, "/ranks/0/ops/0/started_us"},
      {"a negative timeout", [](auto& j) { j["timeout_s"] = -1; }, "/timeout_s"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    auto j = good_record(4);
    c.edit(j);
    Error err = record_error(j);
    CHECK(err.id == "analyze.bad_record");
    CHECK(err.where.pointer == c.pointer);
    CHECK(err.exit == ExitCode::bad_input);
  }

  // The command line says so with exit 2.
  const fs::path dir = scratch("records");
  write_text(dir / "dup.json", dup.dump(1));
  auto o = cli({"analyze", (dir / "dup.json").string()});
  CHECK(o.code == 2);
  CHECK(o.out.find("error[analyze.bad_record]") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("hostile: wrong answers: bench and run refuse counts and factors they would round or wrap") {
  const std::vector<std::string> base = {"bench", "--ranks", "2", "-b", "8", "-e", "8", "--probe", "0"};
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{{"-n", "0"},
                                                                                     {"-n", "-1"},
                                                                                     {"-w", "-1"},
                                                                                     {"-c", "2"},
                                                                                     {"-f", "nan"},
                                                                                     {"-f", "inf"},
                                                                                     {"-f", "1"},
                                                                                     {"-n", "99999999999"},
                                                                                     {"-n", "1e3"}}) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    CAPTURE(extra[0] + " " + extra[1]);
    auto o = cli(args, 30);
    CHECK(o.code == 2);
  }
  for (const char* b : {"99999999999999999999", "0.5", "1e-400", "-8"}) {
    CAPTURE(b);
    auto o = cli({"bench", "--ranks", "2", "-b", b, "-e", "64", "-n", "1", "-w", "0", "--probe", "0"}, 30);
    CHECK(o.code == 2);
    CHECK(o.out.find("error[cli.usage]") != std::string::npos);
  }
  // run: a count CLI11 would saturate (and then report as 9223372036854775807) or read as hex.
  auto big = cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "99999999999999999999"});
  CHECK(big.code == 2);
  CHECK(big.out.find("99999999999999999999") != std::string::npos);
  CHECK(big.out.find("--count 9223372036854775807") == std::string::npos);
  CHECK(cli({"run", "--coll", "allreduce", "--ranks", "2", "--count", "0x10"}).code == 2);
  CHECK(cli({"run", "--coll", "allreduce", "--ranks", "99999999999", "--count", "4"}).code == 2);
}

TEST_CASE("hostile: wrong answers: every non-integral count is refused alike, however small") {
  for (const char* count : {"1e-400", "1e-324", "5e-324", "1e-5", "0.5", "4.00000000000000000001", "2.5e0"}) {
    CAPTURE(count);
    auto r = parse_scenario(
        std::string(R"({"version": 1, "ranks": 2, "buffers": {"x": {"count": )") + count + R"(}}, "program": []})",
        "c.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.wrong_type");
    CHECK(r.error().where.pointer == "/buffers/x/count");
  }
  for (const auto& [text, value] : std::vector<std::pair<const char*, std::uint64_t>>{
           {"1e3", 1000}, {"4.0", 4}, {"1.5e1", 15}, {"12300e-2", 123}, {"8.000000000000000000000e0", 8}}) {
    CAPTURE(text);
    auto r = parse_scenario(
        std::string(R"({"version": 1, "ranks": 2, "buffers": {"x": {"count": )") + text + R"(}}, "program": []})",
        "c.json");
    REQUIRE(r.ok());
    CHECK(r->buffers[0].count[0] == value);
  }
  // The integer reader on its own, at the edges of 64 bits.
  auto integer = [](const std::string& text) {
    auto doc = json::parse(text, "n.json");
    REQUIRE(doc);
    return json::to_integer(*doc);
  };
  CHECK(integer("18446744073709551615.0").uvalue == UINT64_MAX);
  CHECK(integer("1.8446744073709551616e19").status == json::IntegerValue::Status::too_large);
  CHECK(integer("-9223372036854775808.0").value == INT64_MIN);
  CHECK(integer("-9.223372036854775809e18").status == json::IntegerValue::Status::too_small);
  CHECK(integer("1e400").status == json::IntegerValue::Status::too_large);
  CHECK(integer("-1e400").status == json::IntegerValue::Status::too_small);
  CHECK(integer("9007199254740993.0").uvalue == 9007199254740993ull);  // no double in between
  CHECK(integer("-0.0").negative == false);
  CHECK(integer("0.0e-999").status == json::IntegerValue::Status::ok);
  CHECK(integer("0.000e5").value == 0);
  CHECK(integer("1e-400").status == json::IntegerValue::Status::not_integer);
}

// =====================================================================================
// 5. Messages that tell the truth
// =====================================================================================

TEST_CASE("hostile: messages: verify.conflict and an overflowing offset name their place in the file") {
  const std::string race = R"({"version": 1, "ranks": 2,
 "buffers": {"x": {"count": 2}},
 "program": [{"op": "allreduce", "buffer": "x", "algorithm": "custom", "body": [
    {"op": "step", "transfers": [{"ranks": "all", "from": {"rank": "1 - rank", "buffer": "x"}, "to": {"rank": "rank", "buffer": "x"}, "action": "reduce"}]}]}]})";
  // parse_scenario lowers what it read (so that a file that parses also runs).
  auto r = parse_scenario(race, "race.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().id == "verify.conflict");
  CHECK(r.error().where.file == "race.json");
  CHECK(r.error().where.line == 4);
  CHECK(r.error().where.col == 5);
  CHECK(r.error().where.pointer == "/program/0/body/0");
  CHECK(r.error().format().rfind("error[verify.conflict] race.json:4:5 /program/0/body/0: ", 0) == 0);

  // offset + count past 2^63: reported at the offset, with the true end.
  auto off = parse_scenario(
      kTwoRankProgram +
          R"({"op": "send", "ranks": "rank == 0", "buffer": "x", "offset": "9223372036854775807", "count": 2, "to": 1},
      {"op": "recv", "ranks": "rank == 1", "buffer": "x", "from": 0, "count": 2}]})",
      "off.json");
  REQUIRE_FALSE(off.ok());
  CHECK(off.error().where.pointer == "/program/0/offset");
  CHECK(off.error().where.line == 1);
  CHECK(off.error().message.find("9223372036854775809") != std::string::npos);
  CHECK(off.error().message.find("..-") == std::string::npos);
  // A negative offset, at the offset too.
  auto neg = parse_scenario(
      kTwoRankProgram +
          R"({"op": "send", "ranks": "rank == 0", "buffer": "x", "offset": "rank - 1", "count": 2, "to": 1},
      {"op": "recv", "ranks": "rank == 1", "buffer": "x", "from": 0, "count": 2}]})",
      "neg.json");
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.error().where.pointer == "/program/0/offset");
  // In a written step, too.
  auto step = parse_scenario(
      kTwoRankProgram +
          R"({"op": "allreduce", "algorithm": "custom", "buffer": "x", "body": [{"op": "step", "transfers": [{"from": {"rank": 0, "buffer": "x", "offset": 9223372036854775807}, "to": {"rank": 1, "buffer": "x"}, "count": 2}]}]}]})",
      "step.json");
  REQUIRE_FALSE(step.ok());
  CHECK(step.error().message.find("offset 9223372036854775807") != std::string::npos);
  CHECK(step.error().where.pointer == "/program/0/body/0/transfers/0/from");
}

TEST_CASE("hostile: messages: 64 levels of nesting are allowed and the 65th is refused where it is") {
  auto with = [](const std::string& expr) {
    return parse_scenario(kTwoRankProgram + R"({"op": "send", "ranks": "rank == 0", "buffer": "x", "to": ")" + expr +
                              R"("}, {"op": "recv", "ranks": "rank == 1", "buffer": "x", "from": 0}]})",
                          "n.json");
  };
  auto nested = [](int n, const std::string& open, const std::string& close) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += "1";
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  CHECK(with(nested(64, "(", ")")).ok());
  auto deep = with(nested(65, "(", ")"));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().id == "scenario.bad_expression");
  CHECK(deep.error().message.find("more than 64 levels") != std::string::npos);
  CHECK(deep.error().message.find("(at character 65)") != std::string::npos);
  // "-" counts the same way: 64 minus signs evaluate (to 1), a 65th is refused.
  CHECK(with(nested(64, "-", "")).ok());
  auto minus = with(nested(65, "-", ""));
  REQUIRE_FALSE(minus.ok());
  CHECK(minus.error().message.find("(at character 65)") != std::string::npos);
  // And "not", in a rank selector.
  auto nots = [](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += "not ";
    return parse_scenario(kTwoRankProgram + R"({"op": "allreduce", "buffer": "x", "ranks": ")" + s + R"(1"}]})",
                          "n.json");
  };
  CHECK(nots(64).ok());
  auto many = nots(65);
  REQUIRE_FALSE(many.ok());
  CHECK(many.error().message.find("(at character 257)") != std::string::npos);  // the 65th "not"
}

TEST_CASE("hostile: messages: a size just over its limit is printed in exact bytes") {
  // The scenario file: one byte over 4 MiB read "4.0 MiB, the limit is 4.0 MiB".
  const std::string text(scenario::kMaxScenarioBytes + 1, ' ');
  auto p = parse_scenario(text, "big.json");
  REQUIRE_FALSE(p.ok());
  CHECK(p.error().message.find("4194305 bytes") != std::string::npos);
  CHECK(p.error().message.find("4194304 bytes (4.0 MiB)") != std::string::npos);
  const fs::path dir = scratch("sizes");
  write_text(dir / "big.json", text);
  auto l = load_scenario((dir / "big.json").string());
  REQUIRE_FALSE(l.ok());
  CHECK(l.error().id == "scenario.io");
  CHECK(l.error().message.find("4194305 bytes") != std::string::npos);
  // A file of exactly the limit is read (and then parsed).
  write_text(dir / "edge.json", std::string(scenario::kMaxScenarioBytes, ' '));
  CHECK(load_scenario((dir / "edge.json").string()).error().id == "scenario.parse");
  fs::remove_all(dir);

  // All buffers: 32 bytes over 16 GiB read "needs 16384 MiB, over the limit of 16 GiB".
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.ranks = 4;
  q.count = (std::uint64_t{1} << 29) + 1;  // 4 ranks x (in + out) x 4 bytes = 2^34 + 32
  auto total = scenario_from_spec(q);
  REQUIRE_FALSE(total.ok());
  CHECK(total.error().message.find("17179869216 bytes") != std::string::npos);
  CHECK(total.error().message.find("17179869184 bytes (16.0 GiB)") != std::string::npos);
  // One buffer one element over 4 GiB.
  auto one = parse_scenario(
      R"({"version": 1, "ranks": 1, "dtype": "float16", "buffers": {"x": {"count": 2147483649}}, "program": []})",
      "b.json");
  REQUIRE_FALSE(one.ok());
  CHECK(one.error().message.find("4294967298 bytes") != std::string::npos);
  CHECK(one.error().message.find("4294967296 bytes (4.0 GiB)") != std::string::npos);
  // Far from the limit the rounded form stays.
  CHECK(scenario::human_bytes_pair(5ull << 30, 4ull << 30).first == "5.0 GiB");
}

TEST_CASE("hostile: messages: positions count lines ended by CR alone") {
  for (const std::string& nl : {std::string("\r"), std::string("\r\n"), std::string("\n")}) {
    CAPTURE(nl.size());
    auto r = parse_scenario("{" + nl + "\"version\": 1," + nl + "\"ranks\": 2," + nl + "  \"rnks\": 3}", "cr.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "scenario.unknown_key");
    CHECK(r.error().where.line == 4);
    CHECK(r.error().where.col == 3);
    // A syntax error, found by the parser itself, and invalid UTF-8, found before it.
    auto s = parse_scenario("{" + nl + nl + "\"version\" 1}", "cr.json");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().where.line == 3);
    auto u = parse_scenario("{" + nl + "\"title\": \"\xff\"}", "cr.json");
    REQUIRE_FALSE(u.ok());
    CHECK(u.error().where.line == 2);
  }
}

// =====================================================================================
// The shared reader's rules, on their own
// =====================================================================================

TEST_CASE("hostile: the bounded reader: exactly the limit is read, one byte more is refused, devices never") {
  const fs::path dir = scratch("reader");
  const InputKind kind{"test.io", "test file", 100, "missing", "too large"};
  write_text(dir / "100", std::string(100, 'a'));
  write_text(dir / "101", std::string(101, 'a'));
  write_text(dir / "empty", "");
  CHECK(read_input_file((dir / "100").string(), kind).value().size() == 100);
  CHECK(read_input_file((dir / "empty").string(), kind).value().empty());
  auto over = read_input_file((dir / "101").string(), kind);
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().id == "test.io");
  CHECK(over.error().message.find("101 bytes") != std::string::npos);
  CHECK(over.error().hint == "too large");
  for (const char* dev : {"/dev/zero", "/dev/null", "/dev/urandom"}) {
    auto r = read_input_file(dev, kind);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("character device") != std::string::npos);
  }
  auto folder = read_input_file(dir.string(), kind);
  CHECK(folder.error().message.find("directory") != std::string::npos);
  auto none = read_input_file((dir / "none").string(), kind);
  CHECK(none.error().message == "file not found");
  CHECK(none.error().hint == "missing");
  fs::create_symlink("/dev/zero", dir / "zero-link");
  CHECK_FALSE(read_input_file((dir / "zero-link").string(), kind).ok());
  fs::remove_all(dir);
}
