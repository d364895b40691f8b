// The mpi backend as a user runs it: started by collscope itself or under a launcher,
// only rank 0 printing, mismatched processes refused, MPI's own collectives, and
// failures (a crash, a hang, a process killed from outside) that end the job with exit 3
// within the timeout and leave no process behind. (Every collective, algorithm and
// lesson against the cpu backend: tests/mpi/mpi_cases.cpp, one launch per process count.)
#include <doctest/doctest.h>

#if defined(COLLSCOPE_HAVE_MPI)

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "collscope/scenario.h"
#include "gui/view/lesson.h"
#include "shell.h"

namespace {

using test_shell::Output;
using Clock = std::chrono::steady_clock;

// collscope on its own: it starts the launcher itself.
Output job(const std::string& args, const std::string& env = "") {
  return test_shell::shell(env + " " + std::string(COLLSCOPE_BINARY) + " " + args + " 2>&1");
}

// collscope under the launcher, as a user starts it (root and more ranks than cores allowed).
Output launched(int np, const std::string& args, const std::string& env = "") {
  return test_shell::shell("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + env + " " +
                           std::string(COLLSCOPE_MPIEXEC) + " -n " + std::to_string(np) +
                           " " COLLSCOPE_MPIEXEC_FLAGS " " + std::string(COLLSCOPE_BINARY) + " " + args + " 2>&1");
}

std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

// A name no other test uses, to find this test's processes by their command lines.
std::string marker(const std::string& what) {
  static int n = 0;
  return (std::filesystem::temp_directory_path() /
          ("collscope-mpi-test-" + std::to_string(getpid()) + "-" + what + "-" + std::to_string(++n) + ".json"))
      .string();
}

// The pids of processes whose command line holds `text`.
std::vector<int> processes_with(const std::string& text) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline", std::ios::binary);
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(text) != std::string::npos) out.push_back(pid);
  }
  closedir(d);
  return out;
}

bool environ_has(int pid, const std::string& var) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string zero(1, '\0');
  const std::string env = zero + std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return env.find(zero + var + zero) != std::string::npos;
}

// No process of the job is left: give the launcher a moment to reap what it killed.
void check_none_left(const std::string& mark) {
  for (int i = 0; i < 50 && !processes_with(mark).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(processes_with(mark).empty());
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

TEST_CASE("mpi: a plain run on the mpi backend starts its processes itself and only rank 0 reports") {
  auto o = job("run --coll allreduce --algo ring --ranks 4 --count 1000 --backend mpi --json");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const auto j = nlohmann::json::parse(o.out);  // one JSON object: rank 0's, nothing else
  CHECK(j["verified"] == true);
  CHECK(j["backend"] == "mpi");
  CHECK(j["ranks"] == 4);
  CHECK(j["numeric"]["checked"] == 8000);  // every rank's in and out, checked by its own process
  const std::string detail = j["backend_detail"];
  CHECK(detail.find("4 processes on 1 node") != std::string::npos);
  CHECK(detail.find("ranks 0-3") != std::string::npos);
  CHECK(detail.find("clocks aligned to rank 0 within") != std::string::npos);
  // Each process on one core of its own machine (ranks 0-1 and 2-3 sharing on 2 cores),
  // unless told to leave them to the scheduler.
  if (std::thread::hardware_concurrency() >= 2)
    CHECK(detail.find("each process kept on one core") != std::string::npos);
  auto loose = job("run --coll allreduce --algo ring --ranks 4 --count 1000 --backend mpi --json", "COLLSCOPE_PIN=0");
  REQUIRE_MESSAGE(loose.code == 0, loose.out);
  CHECK(nlohmann::json::parse(loose.out)["verified"] == true);
  CHECK(std::string(nlohmann::json::parse(loose.out)["backend_detail"]).find("kept on one core") == std::string::npos);

  // A lesson with groups, in the terminal: one report.
  auto text = job("run " + lesson("21-hybrid-parallel.json") + " --backend mpi --mode observable");
  REQUIRE_MESSAGE(text.code == 0, text.out);
  CHECK(count_of(text.out, "collscope run:") == 1);
  CHECK(count_of(text.out, "  verified") == 1);
  CHECK(text.out.find("backend mpi (") != std::string::npos);
}

TEST_CASE("mpi: under a launcher every process runs its rank and rank 0 prints") {
  auto o = launched(3, "run --coll reduce --algo binomial --ranks 3 --count 33 --root 2 --backend mpi --json");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const auto j = nlohmann::json::parse(o.out);
  CHECK(j["verified"] == true);
  CHECK(j["ranks"] == 3);

  // The message path between nodes, forced on one machine, over TCP.
  auto tcp = launched(3, "run " + lesson("14-isend-irecv.json") + " --backend mpi --json",
                      "COLLSCOPE_MPI_SEPARATE_NODES=1 OMPI_MCA_btl=self,tcp");
  // (the lesson has 2 ranks: a job of 3 processes is refused, naming both numbers)
  CHECK(tcp.code == 2);
  CHECK(tcp.out.find("error[processes.size] the run has 2 ranks but the job has 3 processes") != std::string::npos);
  auto two = launched(2, "run " + lesson("14-isend-irecv.json") + " --backend mpi --json",
                      "COLLSCOPE_MPI_SEPARATE_NODES=1 OMPI_MCA_btl=self,tcp");
  REQUIRE_MESSAGE(two.code == 0, two.out);
  const auto t = nlohmann::json::parse(two.out);
  CHECK(t["verified"] == true);
  CHECK(t["backend_detail"].get<std::string>().find("2 nodes") != std::string::npos);
  CHECK(t["program"].size() == 2);
}

TEST_CASE("mpi: processes that would run different things are refused, naming the ranks") {
  const std::string bin = COLLSCOPE_BINARY;
  auto o = test_shell::shell(std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") +
                             COLLSCOPE_MPIEXEC + " " COLLSCOPE_MPIEXEC_FLAGS " -n 2 " + bin +
                             " run --coll allreduce --ranks 3 --count 8 --backend mpi : -n 1 " + bin +
                             " run --coll allreduce --ranks 3 --count 16 --backend mpi 2>&1");
  CHECK(o.code == 2);
  CHECK(count_of(o.out, "error[processes.mismatch]") == 1);
  CHECK(o.out.find("ranks 0 and 1 have schedule \"3 ranks, float32, allreduce") != std::string::npos);
  CHECK(o.out.find("count 8") != std::string::npos);
  CHECK(o.out.find("rank 2 has schedule") != std::string::npos);
  CHECK(o.out.find("count 16") != std::string::npos);

  // One process that cannot read its file: its error is named by rank 0.
  auto missing =
      test_shell::shell(std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ") + COLLSCOPE_MPIEXEC +
                        " " COLLSCOPE_MPIEXEC_FLAGS " -n 1 " + bin + " run " + lesson("13-send-recv.json") +
                        " --backend mpi : -n 1 " + bin + " run no-such-lesson.json --backend mpi 2>&1");
  CHECK(missing.code == 2);
  CHECK(missing.out.find("rank 1 has error: error[scenario.io]") != std::string::npos);
  CHECK(missing.out.find("rank 0 has schedule \"2 ranks") != std::string::npos);
}

TEST_CASE("mpi: --algo mpi runs MPI's own collectives on the same buffers, checked the same way") {
  for (const char* coll : {"allreduce", "broadcast", "reduce", "allgather", "reduce_scatter", "alltoall", "gather",
                           "scatter", "barrier"}) {
    CAPTURE(coll);
    auto o = job(std::string("run --coll ") + coll + " --algo mpi --ranks 3 --count 17 --root 1 --backend mpi --json");
    REQUIRE_MESSAGE(o.code == 0, o.out);
    const auto j = nlohmann::json::parse(o.out);
    CHECK(j["verified"] == true);
    CHECK(j["algorithm"] == "mpi");
    CHECK(j["steps"] == 1);
    CHECK(j["transfers"] == 0);
    CHECK(j["predicted_us"].is_null());  // MPI's own algorithms have no model here
    CHECK(j["unpriced"].get<std::string>().find("MPI's own collective") != std::string::npos);
  }
  auto half = job("run --coll allreduce --algo mpi --ranks 2 --dtype bfloat16 --backend mpi");
  CHECK(half.code == 2);
  CHECK(half.out.find("error[scenario.native_unsupported]") != std::string::npos);
  CHECK(half.out.find("MPI cannot reduce bfloat16") != std::string::npos);
  auto avg = job("run --coll reduce_scatter --algo mpi --ranks 2 --op avg --backend mpi");
  CHECK(avg.code == 2);
  CHECK(avg.out.find("MPI cannot reduce with op avg") != std::string::npos);
  auto cpu = job("run --coll allreduce --algo mpi --ranks 2");
  CHECK(cpu.code == 2);
  CHECK(cpu.out.find("error[backend.native_unsupported]") != std::string::npos);
  CHECK(cpu.out.find("use --backend mpi") != std::string::npos);
  // A corrupting rank hands MPI a wrong input: the numeric check names the element.
  auto bad = job("run --coll allreduce --algo mpi --ranks 3 --count 8 --backend mpi --fault 1:0:corrupt");
  CHECK(bad.code == 1);
  CHECK(bad.out.find("wrong") != std::string::npos);
}

TEST_CASE("mpi: MPI's own collective on a split group runs every part in one shared step") {
  const std::string file = marker("split");
  std::ofstream(file) << R"({"version": 1, "ranks": 6, "dtype": "int32", "buffers": {"g": {"count": 4, "init": "rank"}},
    "groups": {"tp": {"split": "rank / 2"}},
    "program": [{"op": "allreduce", "buffer": "g", "group": "tp", "algorithm": "mpi", "caption": "native"},
                {"op": "broadcast", "buffer": "g", "group": "tp", "root": 1, "algorithm": "mpi", "caption": "native"}]})";
  for (const char* mode : {"fast", "observable"}) {
    CAPTURE(mode);
    auto o = job("run " + file + " --backend mpi --json --mode " + mode);
    REQUIRE_MESSAGE(o.code == 0, o.out);
    const auto j = nlohmann::json::parse(o.out);
    CHECK(j["verified"] == true);
    CHECK(j["steps"] == 2);  // three parts each, side by side
    CHECK(j["calls"].size() == 6);
    CHECK(j["calls"][2]["first_step"] == 0);
    CHECK(j["calls"][2]["shares_steps_with"] == nlohmann::json::array({0, 1}));
  }
  std::filesystem::remove(file);
}

TEST_CASE("mpi: the trace has one process per rank, named with its node and pid, on one clock") {
  const std::string trace = marker("trace");
  auto o = job("run --coll allreduce --algo ring --ranks 3 --count 300 --backend mpi --trace " + trace);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  std::ifstream in(trace);
  const auto t = nlohmann::json::parse(in);
  int named = 0, flows = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      const std::string name = e["args"]["name"];
      if (name.rfind("rank ", 0) == 0 && name.find(" · pid ") != std::string::npos) ++named;
    }
    if (e["ph"] == "s") ++flows;
  }
  CHECK(named == 3);
  CHECK(flows > 0);
  CHECK(t["distributedInfo"]["world_size"] == 3);
  std::filesystem::remove(trace);
}

TEST_CASE("mpi: a crashed, hung or killed process ends the job with exit 3 within the timeout, none left behind") {
  for (const char* mode : {"fast", "observable"}) {
    CAPTURE(mode);
    const std::string fr = marker("crash");
    const auto t0 = Clock::now();
    auto o = job(std::string("run --coll allreduce --algo ring --ranks 4 --count 1000 --backend mpi --mode ") + mode +
                 " --fault 2:3:crash --timeout 5 --flight-record " + fr);
    CHECK(seconds_since(t0) < 5);
    CHECK_MESSAGE(o.code == 3, o.out);
    CHECK(o.out.find("error[backend.rank_failed] rank 2 crashed at step 3") != std::string::npos);
    CHECK(count_of(o.out, "error[") == 1);  // one report, from rank 0
    // The merged flight record: every rank, the crashed one with its state from the board.
    auto a = test_shell::shell(std::string(COLLSCOPE_BINARY) + " analyze " + fr + " --json 2>&1");
    CHECK(a.code == 1);
    CHECK(a.out.find("rank 2 crashed at step 3") != std::string::npos);
    check_none_left(fr);
    std::filesystem::remove(fr);
  }
  {
    const std::string fr = marker("hang");
    const auto t0 = Clock::now();
    auto o =
        job("run --coll allreduce --algo ring --ranks 4 --count 1000 --backend mpi --fault 1:2:hang --timeout 1 "
            "--flight-record " +
            fr);
    CHECK(seconds_since(t0) < 1 + 5);
    CHECK_MESSAGE(o.code == 3, o.out);
    CHECK(o.out.find("error[backend.timeout] rank 1 did not arrive at step 2") != std::string::npos);
    CHECK(o.out.find("within 1 s; ranks 0, 2 and 3 are waiting for it") != std::string::npos);
    check_none_left(fr);
    std::filesystem::remove(fr);
  }
  {
    // Killed from outside in the middle of the run (while rank 1 is held up by a delay).
    const std::string fr = marker("kill");
    std::thread killer([&] {
      for (int i = 0; i < 100; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        for (int pid : processes_with(fr))
          if (environ_has(pid, "OMPI_COMM_WORLD_RANK=3") || environ_has(pid, "PMI_RANK=3")) {
            // (well into the run: rank 1 holds everyone up for 4 s from step 2)
            std::this_thread::sleep_for(std::chrono::milliseconds(1500));
            kill(pid, SIGKILL);
            return;
          }
      }
    });
    const auto t0 = Clock::now();
    auto o =
        job("run --coll allreduce --algo ring --ranks 4 --count 1000 --backend mpi --fault 1:2:delay:4000 "
            "--timeout 10 --flight-record " +
            fr);
    killer.join();
    CHECK(seconds_since(t0) < 4.5);
    CHECK_MESSAGE(o.code == 3, o.out);
#if COLLSCOPE_MPIEXEC_OPEN_MPI
    // (MPICH's launcher goes down with a process killed from outside: collscope then says
    // the job ended without a report, still exit 3.)
    CHECK(o.out.find("error[backend.rank_failed] rank 3 (pid ") != std::string::npos);
    CHECK(o.out.find("died at step") != std::string::npos);
#endif
    check_none_left(fr);
    std::filesystem::remove(fr);
  }
  {
    // Between nodes (forced apart, over TCP) there is no board to read: the launcher's
    // SIGTERM tells the others, and rank 0 names the rank they waited for.
    const std::string fr = marker("apart");
    const auto t0 = Clock::now();
    auto o =
        job("run --coll allreduce --algo ring --ranks 4 --count 1000 --backend mpi --fault 2:3:crash --timeout 5 "
            "--flight-record " +
                fr,
            "COLLSCOPE_MPI_SEPARATE_NODES=1 OMPI_MCA_btl=self,tcp");
    CHECK(seconds_since(t0) < 5 + 5);  // (Open MPI's SIGTERM tells them at once; else the timeout)
    CHECK_MESSAGE(o.code == 3, o.out);
    CHECK(o.out.find("rank 2 (pid ") != std::string::npos);
    check_none_left(fr);
    std::filesystem::remove(fr);
  }
  {
    // Under the user's own launcher: a hang ends the same way.
    const std::string fr = marker("launched");
    const auto t0 = Clock::now();
    auto o = launched(3,
                      "run --coll allgather --algo ring --ranks 3 --count 10 --backend mpi --fault 0:1:hang "
                      "--timeout 0.5 --flight-record " +
                          fr);
    CHECK(seconds_since(t0) < 0.5 + 5);
    CHECK_MESSAGE(o.code == 3, o.out);
    CHECK(o.out.find("error[backend.timeout] rank 0 did not arrive at step 1") != std::string::npos);
    check_none_left(fr);
    std::filesystem::remove(fr);
  }
}

TEST_CASE("mpi: bench runs our algorithms and MPI's own on the same processes") {
  for (const char* algo : {"ring", "mpi"}) {
    CAPTURE(algo);
    auto o = job(std::string("bench --backend mpi --ranks 2 --algo ") + algo + " -b 8 -e 1K -f 4 -n 3 -w 1 --probe 0");
    REQUIRE_MESSAGE(o.code == 0, o.out);
    CHECK(count_of(o.out, "Out of bounds values : 0 OK") == 1);
    CHECK(count_of(o.out, "# collscope bench") == 1);
  }
  // Several algorithms at every size, their sessions open together and taking turns,
  // then each checked: every row right, size after size.
  auto o = job("bench --backend mpi --ranks 3 --algo ring,recursive_doubling,mpi -b 8 -e 32K -f 8 -n 6 -w 1 --probe 0");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  CHECK(count_of(o.out, "Out of bounds values : 0 OK") == 1);
  CHECK(count_of(o.out, " recursive_doubling\n") == 5);
}

TEST_CASE("mpi: the double binary tree across nodes runs on shared memory and on messages between nodes") {
  // Nodes of 4 ranks in one node's shared memory; and every process a node of its own
  // over TCP, nodes of 2 ranks for the algorithm: the tree's transfers are messages.
  auto o =
      job("run --coll allreduce --algo double_tree --ranks 8 --ranks-per-node 4 --count 1001 --backend mpi --json");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["verified"] == true);
  CHECK(j["algorithm"] == "double_tree");
  auto tcp = launched(6,
                      "run --coll allreduce --algo double_tree --ranks 6 --ranks-per-node 2 --count 37 --dtype "
                      "bfloat16 --backend mpi --mode observable --json",
                      "COLLSCOPE_MPI_SEPARATE_NODES=1 OMPI_MCA_btl=self,tcp");
  REQUIRE_MESSAGE(tcp.code == 0, tcp.out);
  j = nlohmann::json::parse(tcp.out);
  CHECK(j["verified"] == true);
  CHECK(j["wrong"] == 0);
  CHECK(j["backend_detail"].get<std::string>().find("6 nodes") != std::string::npos);
}

TEST_CASE("mpi: the window runs a lesson as real processes and steps back through its bytes") {
  using namespace collscope;
  auto sc = load_scenario(lesson("10-allreduce-algorithms.json"));
  REQUIRE(sc.ok());
  auto procs = view::run_lesson(*sc, "mpi", 256ull << 20, 10);
  REQUIRE_MESSAGE(procs.ok(), (procs.ok() ? "" : procs.error().format()));
  auto threads = view::run_lesson(*sc, "cpu", 256ull << 20, 10);
  REQUIRE(threads.ok());
  const RunOutcome& p = (*procs)->outcome;
  const RunOutcome& t = (*threads)->outcome;
  CHECK(p.verified());
  CHECK(p.record.backend == "mpi");
  CHECK(p.record.backend_detail.find("processes") != std::string::npos);
  REQUIRE(p.record.device_labels.size() == 8);
  CHECK(p.record.device_labels[7].find(" · pid ") != std::string::npos);
  CHECK_FALSE(p.record.transfers.empty());  // every rank's timings, on rank 0's clock
  CHECK(p.record.steps.size() == (*procs)->schedule.steps.size());
  // Every step's bytes, as the threads had them.
  REQUIRE(p.record.snapshots.size() == t.record.snapshots.size());
  for (std::size_t i = 0; i < p.record.snapshots.size(); ++i)
    CHECK(p.record.snapshots[i].memory == t.record.snapshots[i].memory);

  // The model prices the engine's algorithms; MPI's own collective in the window says it has no price.
  Scenario native = *sc;
  for (auto& op : native.program) op.algorithm = "mpi";
  auto mpi_own = view::run_lesson(native, "mpi", 256ull << 20, 10);
  REQUIRE_MESSAGE(mpi_own.ok(), (mpi_own.ok() ? "" : mpi_own.error().format()));
  CHECK((*mpi_own)->outcome.verified());
  CHECK((*mpi_own)->predicted_us < 0);
  CHECK((*mpi_own)->model.find("no model") != std::string::npos);
  CHECK((*procs)->predicted_us > 0);

  // Within a small budget, stepping back re-executes from the kept snapshots: the same bytes.
  auto small = view::run_lesson(*sc, "mpi", 4096, 10);
  REQUIRE(small.ok());
  CHECK((*small)->outcome.record.snapshots.size() < p.record.snapshots.size());
  view::MemoryTimeline timeline(*small);
  for (std::int32_t k = 0; k <= timeline.steps(); ++k) {
    auto mem = timeline.at(k);
    REQUIRE(mem.ok());
    CHECK(*mem == t.record.snapshots[static_cast<std::size_t>(k)].memory);
  }

  // A lesson whose rank hangs: the error comes back within the timeout, nothing is left.
  Scenario hung = *sc;
  hung.faults.push_back(Fault{3, 2, Fault::Kind::hang, 0});
  const auto t0 = Clock::now();
  auto failed = view::run_lesson(hung, "mpi", 256ull << 20, 1);
  REQUIRE_FALSE(failed.ok());
  CHECK(seconds_since(t0) < 1 + 6);
  CHECK(failed.error().id == "backend.timeout");
  CHECK(failed.error().message.find("rank 3 did not arrive at step 2") != std::string::npos);
  // It names the flight record it wrote (to $TMPDIR), which this test removes.
  const std::string& msg = failed.error().message;
  const auto at = msg.find("; flight record: ");
  REQUIRE(at != std::string::npos);
  const std::string record = msg.substr(at + std::string("; flight record: ").size());
  CHECK(std::filesystem::exists(record));
  std::filesystem::remove(record);
}

#endif  // COLLSCOPE_HAVE_MPI
