// Faults that never hang: delay, crash, hang and corrupt on every algorithm family and
// in both modes; the watchdog's abort (no thread left behind, detected within the
// timeout); flight records and their analysis; the desync check; faults in scenario files.
#include <dirent.h>
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "collscope/flight_record.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/trace.h"
#include "gui/view/run_worker.h"
#include "scratch.h"
#include "shell.h"

using namespace collscope;

namespace {

constexpr double kTimeout = 1.0;  // seconds: short enough for a fast suite, long enough for a loaded machine

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

// The thread count once it falls to `expected`, or after a second. A joined thread
// leaves /proc/self/task a moment after pthread_join returns (the kernel releases it
// after waking the joiner), so under load a count taken at once may still include it;
// a thread that was never joined stays.
int settled_thread_count(int expected) {
  int n = thread_count();
  for (int i = 0; i < 100 && n > expected; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = thread_count();
  }
  return n;
}

std::string tmp_path(const std::string& name) { return (test_scratch::dir("collscope-faults-", "") / name).string(); }

std::string lesson_path(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

struct Case {
  std::string name;
  Scenario scenario;
  Schedule schedule;
};

Case quick_case(const std::string& algo) {
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.algorithm = algo;
  q.ranks = 4;
  q.count = 64;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  auto sched = lower_scenario(*sc);
  REQUIRE(sched.ok());
  return {"allreduce " + algo, *sc, std::move(*sched)};
}

Case lesson_case(const std::string& file) {
  auto sc = load_scenario(lesson_path(file));
  REQUIRE(sc.ok());
  auto sched = lower_scenario(*sc);
  REQUIRE(sched.ok());
  return {file, *sc, std::move(*sched)};
}

InitFn init_of(const Scenario& s) {
  return [&s](std::int32_t b, std::int32_t r, std::uint64_t i) {
    if (b < 0 || static_cast<std::size_t>(b) >= s.buffers.size()) return 0.0;
    return initial_value(s.buffers[static_cast<std::size_t>(b)], r, i);
  };
}

// The first step in which `rank` sends data to another rank (where corrupt shows).
std::int32_t sending_step(const Schedule& s, std::int32_t rank) {
  for (std::size_t k = 0; k < s.steps.size(); ++k)
    for (const auto& t : s.steps[k].transfers)
      if (t.src.rank == rank && t.dst.rank != rank && t.count && t.action != Action::compute)
        return static_cast<std::int32_t>(k);
  return -1;
}

Result<RunOutcome> run_with(const Case& c, Fault f, RunMode mode, const std::string& record = "") {
  RunOptions o;
  o.mode = mode;
  o.faults = {f};
  o.timeout_s = kTimeout;
  o.snapshot_budget = 0;
  o.flight_record_path = record;
  return execute(c.schedule, init_of(c.scenario), o);
}

using test_shell::Output;

Output run_cli(const std::string& args) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + " 2>&1");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("faults: every kind on ring, tree, recursive doubling and a program, in both modes") {
  std::vector<Case> cases = {quick_case("ring"), quick_case("tree"), quick_case("recursive_doubling"),
                             lesson_case("16-ring-allreduce-by-hand.json")};
  for (const auto& c : cases)
    for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
      const std::string label = c.name + (mode == RunMode::fast ? " fast" : " observable");
      const auto steps = static_cast<std::int32_t>(c.schedule.steps.size());
      REQUIRE(steps >= 2);
      const std::int32_t rank = 1, step = steps / 2;

      CAPTURE(label);
      // delay: the run completes and verifies; the straggler arrives late.
      {
        auto out = run_with(c, {rank, step, Fault::Kind::delay, 30}, mode);
        REQUIRE(out.ok());
        CHECK(out->verified());
        const auto& fr = out->record.flight;
        REQUIRE(fr.ranks.size() == static_cast<std::size_t>(c.schedule.ranks));
        for (const auto& r : fr.ranks)
          for (const auto& op : r.ops) CHECK(op.state == FlightState::completed);
      }
      // crash and hang: an error within the timeout that names the rank and the step, exit 3.
      for (const Fault::Kind kind : {Fault::Kind::crash, Fault::Kind::hang}) {
        const std::string record = tmp_path("rec.json");
        std::filesystem::remove(record);
        const int threads = thread_count();
        const auto t0 = std::chrono::steady_clock::now();
        auto out = run_with(c, {rank, step, kind, 0}, mode, record);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CAPTURE(name_of(kind));
        REQUIRE_FALSE(out.ok());
        const Error& e = out.error();
        CHECK(e.exit == ExitCode::backend_failure);
        CHECK(e.id == (kind == Fault::Kind::crash ? "backend.rank_failed" : "backend.timeout"));
        CHECK(e.message.find("rank 1 ") != std::string::npos);
        CHECK(e.message.find("step " + std::to_string(step)) != std::string::npos);
        CHECK(e.message.find("seq ") != std::string::npos);
        CHECK(e.message.find("flight record: " + record) != std::string::npos);
        CHECK(secs < kTimeout + 1.0);
        if (kind == Fault::Kind::crash) CHECK(secs < kTimeout);  // a dead rank is noticed at once
        CHECK(settled_thread_count(threads) == threads);         // every rank thread joined
        // The record shows the failed rank and what did not complete.
        auto rec = load_flight_record(record);
        REQUIRE(rec.ok());
        CHECK(rec->ranks[rank].state == (kind == Fault::Kind::crash ? "crashed" : "hung"));
        CHECK(rec->ranks[rank].step == step);
        CHECK_FALSE(analyze_flight_record(*rec).empty());
      }
      // corrupt: caught by the numeric check, which names the first wrong element.
      {
        const std::int32_t k = sending_step(c.schedule, rank);
        REQUIRE(k >= 0);
        auto out = run_with(c, {rank, k, Fault::Kind::corrupt, 0}, mode);
        REQUIRE(out.ok());
        CHECK(out->numeric.wrong > 0);
        CHECK_FALSE(out->verified());
        CHECK(out->numeric.message().find("rank") != std::string::npos);
      }
    }
}

TEST_CASE("faults: a delayed rank shows as a gap in the run record and the trace") {
  const Case c = quick_case("ring");
  const double delay_ms = 120;
  auto out = run_with(c, {2, 0, Fault::Kind::delay, static_cast<std::int32_t>(delay_ms)}, RunMode::fast);
  REQUIRE(out.ok());
  REQUIRE(out->verified());
  // Rank 2's first transfer starts about the delay after the others' first ones (less
  // what a busy machine takes to start the others' threads).
  const double gap_us = 0.75 * delay_ms * 1000;
  double others = 1e300, straggler = 1e300;
  for (const auto& t : out->record.transfers)
    (t.rank == 2 ? straggler : others) = std::min(t.rank == 2 ? straggler : others, t.t0_us);
  CHECK(straggler - others >= gap_us);
  // The flight record shows it too: rank 2 started the allreduce late.
  const auto& fr = out->record.flight;
  double first_start = 1e300;
  for (int r : {0, 1, 3})
    first_start = std::min(first_start, fr.ranks[static_cast<std::size_t>(r)].ops.at(0).started_us);
  CHECK(fr.ranks[2].ops.at(0).started_us - first_start >= gap_us);

  const std::string path = tmp_path("delay-trace.json");
  REQUIRE(write_trace(path, c.schedule, out->record).ok());
  const auto j = nlohmann::json::parse(read_text(path));
  double first_other = 1e300, first_rank2 = 1e300;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("cat", "") != "transfer") continue;
    // What each rank did itself: a send end is drawn on the sender but timed by the
    // receiver, which may read the stalled rank's input before it wakes up.
    if (e["name"].get<std::string>().rfind("send", 0) == 0) continue;
    const double ts = e["ts"].get<double>();
    if (e["pid"].get<int>() == 2) first_rank2 = std::min(first_rank2, ts);
    else first_other = std::min(first_other, ts);
  }
  REQUIRE(first_rank2 < 1e300);
  CHECK(first_rank2 - first_other >= gap_us);
}

TEST_CASE("faults: an aborted session leaves no thread behind and keeps failing") {
  const Case c = quick_case("ring");
  const int before = thread_count();
  {
    SessionOptions so;
    so.faults = {{3, 1, Fault::Kind::hang, 0}};
    so.timeout_s = 1.0;  // generous: on a loaded machine (sanitizers, CI) threads start slowly
    auto session = make_cpu_backend()->open(c.schedule, so);
    REQUIRE(session.ok());
    CHECK(thread_count() == before + c.schedule.ranks);  // one thread per rank
    auto st = (*session)->run_all(1);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().id == "backend.timeout");
    CHECK(st.error().message.find("rank 3 did not arrive at step 1") != std::string::npos);
    CHECK(st.error().message.find("waiting for it") != std::string::npos);
    // Every rank is back under the session's control: the next call fails at once.
    const auto t0 = std::chrono::steady_clock::now();
    auto again = (*session)->run_step(0);
    CHECK_FALSE(again.ok());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(500));
    const auto rec = (*session)->flight_record();
    CHECK(rec.reason.find("backend.timeout") != std::string::npos);
    CHECK(rec.ranks[3].state == "hung");
  }
  CHECK(settled_thread_count(before) == before);
}

TEST_CASE("faults: timeout 0 never aborts a slow but healthy run") {
  const Case c = quick_case("ring");
  RunOptions o;
  o.faults = {{0, 1, Fault::Kind::delay, 60}};
  o.timeout_s = 0;
  auto out = execute(c.schedule, init_of(c.scenario), o);
  REQUIRE(out.ok());
  CHECK(out->verified());
  // ... while a delay longer than the timeout is indistinguishable from a hang.
  o.timeout_s = 0.05;
  o.faults = {{0, 1, Fault::Kind::delay, 400}};
  o.dump_on_failure = false;
  auto slow = execute(c.schedule, init_of(c.scenario), o);
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.error().id == "backend.timeout");
  CHECK(slow.error().message.find("flight record") == std::string::npos);
}

TEST_CASE("faults: a fault outside the schedule is bad input") {
  const Case c = quick_case("ring");
  RunOptions o;
  o.faults = {{0, 99, Fault::Kind::hang, 0}};
  auto out = execute(c.schedule, init_of(c.scenario), o);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().id == "run.bad_fault");
  CHECK(out.error().exit == ExitCode::bad_input);
  o.faults = {{7, 0, Fault::Kind::crash, 0}};
  auto bad_rank = execute(c.schedule, init_of(c.scenario), o);
  REQUIRE_FALSE(bad_rank.ok());
  CHECK(bad_rank.error().message.find("rank 7") != std::string::npos);
}

TEST_CASE("flight record: bounded per rank, round trip through JSON, analysis of healthy and broken records") {
  // A program of many ops keeps only the last `capacity` of each rank.
  const Case c = lesson_case("17-ring-allreduce-chunked.json");
  RunOptions o;
  o.flight_capacity = 4;
  auto out = execute(c.schedule, init_of(c.scenario), o);
  REQUIRE(out.ok());
  const FlightRecord& rec = out->record.flight;
  REQUIRE(rec.ranks.size() == static_cast<std::size_t>(c.schedule.ranks));
  bool dropped = false;
  for (const auto& r : rec.ranks) {
    CHECK(r.ops.size() <= 4);
    dropped = dropped || r.dropped > 0;
    for (std::size_t i = 1; i < r.ops.size(); ++i) CHECK(r.ops[i - 1].seq < r.ops[i].seq);
  }
  CHECK(dropped);
  CHECK(analyze_flight_record(rec).empty());

  // Round trip.
  auto back = parse_flight_record(flight_record_json(rec), "r.json");
  REQUIRE(back.ok());
  CHECK(flight_record_json(*back) == flight_record_json(rec));

  // A collective with a different count on one rank is a desync.
  const Case ring = quick_case("ring");
  auto healthy = execute(ring.schedule, init_of(ring.scenario), RunOptions{});
  REQUIRE(healthy.ok());
  FlightRecord broken = healthy->record.flight;
  REQUIRE(analyze_flight_record(broken).empty());
  broken.ranks[1].ops.at(0).count = 32;
  auto f = analyze_flight_record(broken);
  REQUIRE(f.size() == 1);
  CHECK(f[0].id == "analyze.desync");
  CHECK(f[0].message.find("rank 1: allreduce count 32") != std::string::npos);
  CHECK(f[0].message.find("ranks 0, 2 and 3: allreduce count 64") != std::string::npos);
  // A rank that never got there.
  FlightRecord missing = healthy->record.flight;
  missing.ranks[2].ops.clear();
  auto g = analyze_flight_record(missing);
  REQUIRE_FALSE(g.empty());
  CHECK(g[0].id == "analyze.missing_rank");
  CHECK(g[0].message.find("missing rank 2") != std::string::npos);

  // Unreadable records are bad input with a place.
  auto bad =
      parse_flight_record("{\"flight_record\": 1, \"world\": 2, \"ranks\": [{\"rank\": 5, \"ops\": []}]}", "b.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().id == "analyze.bad_record");
  CHECK(bad.error().where.pointer == "/ranks/0/rank");
  auto garbage = parse_flight_record("{\"flight_record\": 1,", "g.json");
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().id == "analyze.parse");
}

TEST_CASE("desync: divergent collectives are a program.desync error listing every rank's call") {
  const std::string head = R"({"version": 1, "ranks": 4, "buffers": {"x": {"count": 8, "init": "rank"}}, "program": )";
  // Two entries with different "ranks" at the same position, different counts.
  auto a = parse_scenario(head + R"([
    {"op": "allreduce", "buffer": "x", "ranks": "rank != 1"},
    {"op": "allreduce", "buffer": "x", "count": 4, "ranks": [1]}]})",
                          "a.json");
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().id == "program.desync");
  CHECK(a.error().exit == ExitCode::bad_input);
  CHECK(
      a.error().message ==
      "ranks disagree on their collective call with seq 0: ranks 0, 2, 3 call allreduce x count 8 float32 sum (op 0); "
      "rank 1 calls allreduce x count 4 float32 sum (op 1)");
  CHECK(a.error().where.pointer == "/program/1");

  // A collective inside a repeat whose count depends on rank.
  auto b = parse_scenario(head + R"([
    {"op": "repeat", "times": "rank == 2", "body": [{"op": "allreduce", "buffer": "x"}]},
    {"op": "broadcast", "buffer": "x", "root": 3}]})",
                          "b.json");
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().id == "program.desync");
  CHECK(b.error().message.find("ranks 0, 1, 3 call broadcast x count 8 float32 root 3 (op 1)") != std::string::npos);
  CHECK(b.error().message.find("rank 2 calls allreduce x count 8 float32 sum (op 0.0, i=0)") != std::string::npos);

  // A rank whose program ends first.
  auto c = parse_scenario(head + R"([
    {"op": "repeat", "times": "2 - rank / 3", "body": [{"op": "allreduce", "buffer": "x"}]}]})",
                          "c.json");
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message.find("rank 3 calls nothing (its program ends first)") != std::string::npos);

  // The same call written as two entries for different ranks is one call, and runs.
  auto d = parse_scenario(head + R"([
    {"op": "allreduce", "buffer": "x", "ranks": "rank == 0"},
    {"op": "allreduce", "buffer": "x", "ranks": "rank != 0"}]})",
                          "d.json");
  REQUIRE(d.ok());
  auto sched = lower_scenario(*d);
  REQUIRE(sched.ok());
  CHECK(sched->calls.size() == 1);
  auto out = execute(*sched, init_of(*d), RunOptions{});
  REQUIRE(out.ok());
  CHECK(out->verified());
  // "ranks" on a collective survives the round trip.
  CHECK(to_json(*d).find("\"ranks\": \"rank == 0\"") != std::string::npos);
}

TEST_CASE("scenario faults: parsing errors and round trip") {
  const std::string head = R"({"version": 1, "ranks": 4, "buffers": {"x": {"count": 8}},
  "program": [{"op": "allreduce", "buffer": "x", "algorithm": "ring"}],
  "faults": )";
  auto ok = parse_scenario(
      head + R"([{"rank": 1, "step": 2, "kind": "delay", "ms": 50}, {"rank": 3, "step": 0, "kind": "hang"}]})",
      "f.json");
  REQUIRE(ok.ok());
  REQUIRE(ok->faults.size() == 2);
  CHECK(ok->faults[0].kind == Fault::Kind::delay);
  CHECK(ok->faults[0].ms == 50);
  CHECK(ok->faults[1].rank == 3);
  CHECK(ok->faults[1].kind == Fault::Kind::hang);
  auto again = parse_scenario(to_json(*ok), "f2.json");
  REQUIRE(again.ok());
  CHECK(to_json(*again) == to_json(*ok));
  REQUIRE(again->faults.size() == 2);
  CHECK(fault_text(again->faults[0]) == "1:2:delay:50");
  CHECK(fault_text(again->faults[1]) == "3:0:hang");

  struct Bad {
    std::string faults, id, pointer, text;
  };
  const std::vector<Bad> bad = {
      {R"([{"rank": 1, "step": 2, "kind": "hnag"}])", "scenario.unknown_fault", "/faults/0/kind",
       "(did you mean \"hang\"?)"},
      {R"([{"rank": 4, "step": 2, "kind": "crash"}])", "scenario.out_of_range", "/faults/0/rank", "out of range 0..3"},
      {R"([{"rank": 1, "step": -1, "kind": "crash"}])", "scenario.out_of_range", "/faults/0/step", "fault step -1"},
      {R"([{"rank": 1, "step": 2, "kind": "delay"}])", "scenario.missing_key", "/faults/0", "missing \"ms\""},
      {R"([{"rank": 1, "step": 2, "kind": "hang", "ms": 5}])", "scenario.unknown_key", "/faults/0/ms",
       "only applies to a delay"},
      {R"([{"rank": 1, "kind": "hang"}])", "scenario.missing_key", "/faults/0", "missing \"step\""},
      {R"([{"rank": 1, "step": 2, "kind": "hang", "when": 3}])", "scenario.unknown_key", "/faults/0",
       "unknown key \"when\""},
      {R"({"rank": 1})", "scenario.wrong_type", "/faults", "must be an array"},
      {R"([{"rank": "1", "step": 2, "kind": "hang"}])", "scenario.wrong_type", "/faults/0/rank", "must be an integer"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.faults);
    auto r = parse_scenario(head + b.faults + "}", "f.json");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == b.id);
    CHECK(r.error().where.pointer == b.pointer);
    CHECK(r.error().where.line > 0);
    CHECK(r.error().message.find(b.text) != std::string::npos);
  }
}

TEST_CASE("faults: the window's worker reports a hung lesson as an error and stays usable") {
  view::RunWorker w;
  QuickSpec q;
  q.ranks = 4;
  q.count = 16;
  q.algorithm = "ring";
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  Scenario hung = *sc;
  hung.faults = {{2, 1, Fault::Kind::hang, 0}};
  view::RunRequest req{hung, "cpu"};
  req.timeout_s = 1.0;
  const auto t0 = std::chrono::steady_clock::now();
  w.submit(req);
  std::optional<view::RunResult> r;
  for (int i = 0; i < 1000 && !r; ++i) {
    r = w.take();
    if (!r) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(r.has_value());
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(3000));
  REQUIRE_FALSE(r->run.ok());
  CHECK(r->run.error().id == "backend.timeout");
  CHECK(r->run.error().message.find("rank 2") != std::string::npos);
  // The window names the flight record the aborted run wrote (to $TMPDIR).
  const std::string& msg = r->run.error().message;
  const auto at = msg.find("; flight record: ");
  REQUIRE(at != std::string::npos);
  const std::string record = msg.substr(at + std::string("; flight record: ").size());
  CHECK(std::filesystem::exists(record));
  std::filesystem::remove(record);
  // The next lesson runs as usual.
  w.submit({*sc, "cpu"});
  r.reset();
  for (int i = 0; i < 2000 && !r; ++i) {
    r = w.take();
    if (!r) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(r.has_value());
  CHECK(r->run.ok());
}

TEST_CASE("cli: faults, --timeout, --flight-record and analyze") {
  const std::string dir = tmp_path("");
  const std::string rec = dir + "/cli-hang.json";
  std::filesystem::remove(rec);
  // hang: exit 3 within the timeout, the error names the rank, the step and the record.
  for (const std::string mode : {"fast", "observable"}) {
    auto o = run_cli("run --coll allreduce --algo ring --ranks 4 --count 64 --mode " + mode +
                     " --fault 2:2:hang --timeout 1 --flight-record " + rec);
    CHECK(o.code == 3);
    CHECK(o.out.find("error[backend.timeout] rank 2 did not arrive at step 2 (seq 0: allreduce") != std::string::npos);
    CHECK(o.out.find("within 1 s; ranks 0, 1 and 3 are waiting for it") != std::string::npos);
    CHECK(o.out.find("flight record: " + rec) != std::string::npos);
    auto a = run_cli("analyze " + rec);
    CHECK(a.code == 1);
    CHECK(a.out.find("did not complete on ranks 0, 1, 2 and 3; rank 2 hung at step 2") != std::string::npos);
  }
  // hang at the op's first step: the rank never joined it.
  auto first = run_cli(
      "run --coll allreduce --algo ring --ranks 4 --count 64 --fault 1:0:hang --timeout 0.3 --flight-record " + rec);
  CHECK(first.code == 3);
  auto a = run_cli("analyze " + rec + " --json");
  CHECK(a.code == 1);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["ok"] == false);
  CHECK(j["findings"][0]["id"] == "analyze.missing_rank");
  CHECK(j["findings"][0]["message"].get<std::string>().find(
            "not all ranks joined op 0 (allreduce, call 0): missing rank 1") == 0);
  // crash: exit 3, at once.
  auto crash = run_cli(
      "run --coll broadcast --algo binomial --ranks 8 --count 64 --fault 0:0:crash --timeout 5 "
      "--flight-record " +
      dir + "/cli-crash.json");
  CHECK(crash.code == 3);
  CHECK(crash.out.find("error[backend.rank_failed] rank 0 crashed at step 0") != std::string::npos);
  // a healthy run's record shows no problem.
  const std::string healthy = dir + "/cli-healthy.json";
  auto h = run_cli("run --coll allreduce --ranks 4 --count 64 --flight-record " + healthy);
  CHECK(h.code == 0);
  auto ha = run_cli("analyze " + healthy);
  CHECK(ha.code == 0);
  CHECK(ha.out.find("no problem found") != std::string::npos);
  // corrupt: exit 1, the first wrong element named.
  auto c = run_cli("run --coll allreduce --algo ring --ranks 4 --count 64 --fault 1:1:corrupt");
  CHECK(c.code == 1);
  CHECK(c.out.find("NOT VERIFIED") != std::string::npos);
  // a delay: verified.
  auto d = run_cli("run --coll allreduce --algo ring --ranks 4 --count 64 --fault 1:1:delay:20 --timeout 0.5");
  CHECK(d.code == 0);
  // bad input: exit 2 in the one error style.
  auto k = run_cli("run --coll allreduce --ranks 4 --fault 1:1:explode");
  CHECK(k.code == 2);
  CHECK(k.out.find("error[cli.bad_fault]") != std::string::npos);
  auto ms = run_cli("run --coll allreduce --ranks 4 --fault 1:1:hang:5");
  CHECK(ms.code == 2);
  CHECK(ms.out.find("hang takes no MS") != std::string::npos);
  auto st = run_cli("run --coll allreduce --algo ring --ranks 4 --fault 1:99:hang");
  CHECK(st.code == 2);
  CHECK(st.out.find("step 99") != std::string::npos);
  auto t = run_cli("run --coll allreduce --ranks 4 --timeout -1");
  CHECK(t.code == 2);
  std::ofstream(dir + "/garbage.json") << "{\"flight_record\": 1, \"world\": ";
  auto g = run_cli("analyze " + dir + "/garbage.json");
  CHECK(g.code == 2);
  CHECK(g.out.find("error[analyze.parse] " + dir + "/garbage.json:1:") != std::string::npos);
  auto none = run_cli("analyze " + dir + "/no-such-file.json");
  CHECK(none.code == 2);
  CHECK(none.out.find("error[analyze.io]") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("faults: one check of a fault against the schedule, whatever gave it, keeping its id and place") {
  const Case c = quick_case("ring");
  const auto steps = static_cast<std::int32_t>(c.schedule.steps.size());
  REQUIRE(steps > 1);
  // Every rank and step inside the schedule passes, from any source.
  for (std::int32_t r = 0; r < c.schedule.ranks; ++r)
    for (std::int32_t k = 0; k < steps; ++k) CHECK(check_fault(c.schedule, {r, k, Fault::Kind::hang, 0}).ok());
  struct Bad {
    Fault fault;
    std::string what;
  };
  const std::vector<Bad> bad = {
      {{c.schedule.ranks, 0, Fault::Kind::crash, 0}, "names rank " + std::to_string(c.schedule.ranks)},
      {{-1, 0, Fault::Kind::crash, 0}, "names rank -1"},
      {{0, steps, Fault::Kind::delay, 5}, "names step " + std::to_string(steps)},
      {{0, -1, Fault::Kind::hang, 0}, "names step -1"}};
  for (const auto& b : bad) {
    CAPTURE(b.what);
    const Status plain = check_fault(c.schedule, b.fault);
    REQUIRE_FALSE(plain.ok());
    CHECK(plain.error().id == "run.bad_fault");
    CHECK(plain.error().exit == ExitCode::bad_input);
    CHECK(plain.error().message.rfind("fault " + fault_text(b.fault) + " " + b.what, 0) == 0);
    const Location where{"f.json", 7, 5, "/faults/0"};
    const Status from_file = check_fault(c.schedule, b.fault, {"scenario.out_of_range", "", where});
    REQUIRE_FALSE(from_file.ok());
    CHECK(from_file.error().id == "scenario.out_of_range");
    CHECK(from_file.error().where.file == "f.json");
    CHECK(from_file.error().where.line == 7);
    CHECK(from_file.error().where.pointer == "/faults/0");
    CHECK(from_file.error().message == plain.error().message);
    const Status flag = check_fault(c.schedule, b.fault, {"cli.bad_fault", "--fault " + fault_text(b.fault), {}});
    REQUIRE_FALSE(flag.ok());
    CHECK(flag.error().id == "cli.bad_fault");
    CHECK(flag.error().message.rfind("--fault " + fault_text(b.fault) + " " + b.what, 0) == 0);
    // execute() runs the same check.
    RunOptions o;
    o.faults = {b.fault};
    auto out = execute(c.schedule, init_of(c.scenario), o);
    REQUIRE_FALSE(out.ok());
    CHECK(out.error().message == plain.error().message);
  }
}

TEST_CASE("faults: collscope run names a scenario's fault beyond the schedule at its place in the file") {
  const std::string file = tmp_path("late-fault.json");
  std::ofstream(file) << R"({"version": 1, "ranks": 4, "buffers": {"x": {"count": 8}},
  "program": [{"op": "allreduce", "buffer": "x", "algorithm": "ring"}],
  "faults": [{"rank": 1, "step": 0, "kind": "delay", "ms": 1},
             {"rank": 2, "step": 999, "kind": "hang"}]})";
  auto o = run_cli("run " + file);
  CHECK(o.code == 2);
  CHECK(o.out.find("error[scenario.out_of_range] " + file + ":4:14 /faults/1: fault 2:999:hang names step 999") !=
        std::string::npos);
  auto j = run_cli("run " + file + " --json");
  CHECK(j.code == 2);
  CHECK(j.out.find("\"pointer\": \"/faults/1\"") != std::string::npos);
  // The same fault as a flag: the flag's id, no place.
  auto flag = run_cli("run --coll allreduce --algo ring --ranks 4 --count 8 --fault 2:999:hang");
  CHECK(flag.code == 2);
  CHECK(flag.out.find("error[cli.bad_fault] --fault 2:999:hang names step 999, but the schedule has") !=
        std::string::npos);
  auto rank = run_cli("run --coll allreduce --algo ring --ranks 4 --count 8 --fault 9:0:crash");
  CHECK(rank.code == 2);
  CHECK(rank.out.find("error[cli.bad_fault] --fault 9:0:crash names rank 9, but the world has 4 ranks") !=
        std::string::npos);
}
