// The collscope binary as a user runs it: JSON reports, exit codes 0/1/2/3,
// traces, lessons, bench.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "registry_names.h"
#include "shell.h"

namespace {

using test_shell::Output;

// Runs collscope with arguments; stdout (and stderr when asked) captured.
Output collscope(const std::string& args, bool with_stderr = false) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::string lesson(const std::string& name) { return std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name; }

}  // namespace

TEST_CASE("cli: run --json on flags reports a verified run") {
  auto o = collscope("run --coll allreduce --algo ring --ranks 4 --count 100 --json");
  REQUIRE(o.code == 0);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["verified"] == true);
  CHECK(j["wrong"] == 0);
  CHECK(j["steps"].get<int>() == 6);  // 3 reduce-scatter and 3 all-gather steps
  CHECK(j["backend"] == "cpu");
  CHECK(j["ranks"] == 4);
  CHECK(j["collective"] == "allreduce");
  CHECK(j["algorithm"] == "ring");
  CHECK(j["time_us"].get<double>() >= 0);
  CHECK(j["numeric"]["checked"].get<int>() > 0);
}

TEST_CASE("cli: auto picks an algorithm and the report says which") {
  auto o = collscope("run --coll allgather --ranks 5 --count 3 --json");
  REQUIRE(o.code == 0);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["calls"][0]["auto_picked"] == true);
  const std::string algo = j["algorithm"];
  const auto names = test_registry::algorithm_names("allgather");
  CHECK(!names.empty());
  CHECK(std::find(names.begin(), names.end(), algo) != names.end());
}

TEST_CASE("cli: run --json on a lesson file") {
  auto o = collscope("run " + lesson("00-allreduce-ring.json") + " --json --mode observable");
  REQUIRE(o.code == 0);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["verified"] == true);
  CHECK(j["title"] == "All-reduce on a ring");
  CHECK(j["mode"] == "observable");
}

TEST_CASE("cli: a corrupted transfer is a wrong result: exit 1 naming the element") {
  auto o = collscope("run --coll allreduce --algo ring --ranks 4 --count 100 --dtype int32 --fault 1:1:corrupt --json");
  CHECK(o.code == 1);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["verified"] == false);
  CHECK(j["wrong"].get<int>() > 0);
  CHECK(j["numeric"]["first_wrong"].get<std::string>().find("rank ") != std::string::npos);
}

TEST_CASE("cli: a delayed rank still verifies") {
  auto o = collscope("run --coll allreduce --algo ring --ranks 3 --count 10 --fault 2:1:delay:20 --json");
  CHECK(o.code == 0);
  CHECK(nlohmann::json::parse(o.out)["time_us"].get<double>() >= 10000);  // without the stall: ~0.1 ms
}

TEST_CASE("cli: bad input exits 2 with one clear error") {
  auto a = collscope("run --coll allreduc --ranks 4", true);
  CHECK(a.code == 2);
  CHECK(a.out.find("error[scenario.unknown_op]") != std::string::npos);
  auto b = collscope("run --coll allreduce --ranks 0", true);
  CHECK(b.code == 2);
  CHECK(b.out.find("error[scenario.out_of_range]") != std::string::npos);
  auto c = collscope("run no/such/file.json", true);
  CHECK(c.code == 2);
  CHECK(c.out.find("error[scenario.io]") != std::string::npos);
  auto d = collscope("run --coll broadcast --algo ring --ranks 4", true);
  CHECK(d.code == 2);
  CHECK(d.out.find("valid algorithms for broadcast: auto, flat, binomial, chain, scatter_allgather") !=
        std::string::npos);
  auto e = collscope("run --coll allreduce --fault 1:x:corrupt", true);
  CHECK(e.code == 2);
  CHECK(e.out.find("error[cli.bad_fault]") != std::string::npos);
  auto f = collscope("run --nonsense", true);
  CHECK(f.code == 2);
  CHECK(f.out.find("error[cli.usage]") != std::string::npos);
}

TEST_CASE("cli: an unavailable backend is a backend failure: exit 3") {
  auto o = collscope("run --coll allreduce --ranks 2 --backend cuda", true);
  CHECK(o.code == 3);
  CHECK(o.out.find("error[backend.unavailable]") != std::string::npos);
}

TEST_CASE("cli: --dry-run verifies a large world without executing") {
  auto o = collscope("run --coll allreduce --algo ring --ranks 256 --count 4096 --dry-run --json");
  REQUIRE(o.code == 0);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["executed"] == false);
  CHECK(j["verified"] == true);
  CHECK(j["steps"].get<int>() == 2 * 255);
}

TEST_CASE("cli: a dry run for a GPU backend shows the schedule that would run there, without slices") {
  // Lowering needs no GPU: the cuda schedule of a 16 MiB ring is one lap (14 steps on
  // 8 ranks), the cpu one goes round in slices; the prediction names its model.
  auto gpu = collscope("run --coll allreduce --algo ring --ranks 8 --count 4194304 --backend cuda --dry-run");
  REQUIRE(gpu.code == 0);
  CHECK(gpu.out.find("14 steps") != std::string::npos);
  // A GPU backend is never priced with the cpu's parameters: a GPU topology, named.
  CHECK(gpu.out.find("cpu model") == std::string::npos);
  CHECK(gpu.out.find("(topology dgx-h100, 1 node x 8 GPUs (assumed: pass --topology))") != std::string::npos);
  auto pinned = collscope(
      "run --coll allreduce --algo ring --ranks 8 --count 4194304 --backend cuda --dry-run "
      "--topology dgx-h200");
  REQUIRE(pinned.code == 0);
  CHECK(pinned.out.find("(topology dgx-h200, 1 node x 8 GPUs)") != std::string::npos);
  auto refused = collscope("run --coll allreduce --ranks 8 --backend cuda --dry-run --topology this-machine", true);
  CHECK(refused.code == 2);
  CHECK(refused.out.find("error[topology.unsuitable]") != std::string::npos);
  auto cpu = collscope("run --coll allreduce --algo ring --ranks 8 --count 4194304 --dry-run");
  REQUIRE(cpu.code == 0);
  CHECK(cpu.out.find("14 steps") == std::string::npos);
  CHECK(cpu.out.find("(cpu model, ") != std::string::npos);
}

TEST_CASE("cli: --trace writes a trace that parses") {
  const auto path = std::filesystem::temp_directory_path() / "collscope-cli-trace.json";
  std::filesystem::remove(path);
  auto o = collscope("run --coll broadcast --algo binomial --ranks 5 --count 16 --trace " + path.string());
  REQUIRE(o.code == 0);
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in);
  CHECK(j["distributedInfo"]["world_size"] == 5);
  CHECK(j["traceEvents"].size() > 10);
  std::filesystem::remove(path);
}

TEST_CASE("cli: validate accepts every lesson and rejects a broken file") {
  std::string files;
  std::string deadlock;
  for (const auto& e : std::filesystem::directory_iterator(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".json") {
      if (e.path().string().find("deadlock") != std::string::npos) deadlock = e.path().string();
      else files += " " + e.path().string();
    }
  auto ok = collscope("validate" + files);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("ok ") != std::string::npos);

  const auto bad = std::filesystem::temp_directory_path() / "collscope-bad.json";
  std::ofstream(bad) << "{\"version\": 1, \"ranks\": 4, \"rnks\": 3}";
  auto b = collscope("validate " + bad.string(), true);
  CHECK(b.code == 2);
  CHECK(b.out.find("error[scenario.unknown_key]") != std::string::npos);
  CHECK(b.out.find("collscope-bad.json:1:28") != std::string::npos);
  std::filesystem::remove(bad);

  // The deadlock lesson is caught while planning, before anything runs.
  REQUIRE_FALSE(deadlock.empty());
  auto d = collscope("validate " + deadlock, true);
  CHECK(d.code == 2);
  CHECK(d.out.find("error[program.deadlock]") != std::string::npos);
  CHECK(d.out.find("rank 0 waits in recv from rank 1") != std::string::npos);
}

TEST_CASE("cli: list --json shows every algorithm and the backends") {
  auto o = collscope("list --json");
  REQUIRE(o.code == 0);
  auto j = nlohmann::json::parse(o.out);
  std::size_t algos = 0;
  std::size_t native = 0;
  for (const auto& c : j["collectives"])
    for (const auto& a : c["algorithms"]) (a.value("native", false) ? native : algos) += 1;
  CHECK(algos == test_registry::algorithm_count());
  CHECK(native == 18);  // NCCL's own for every collective but barrier and alltoallv, MPI's for every one
  CHECK(j["backends"][0]["name"] == "cpu");
  CHECK(j["backends"][0]["available"] == true);
  CHECK(j["lessons"].size() >= 9);
}

TEST_CASE("cli: bench prints the nccl-tests table and checks every size") {
  auto o = collscope("bench --coll allreduce --ranks 2 -b 8 -e 1K -f 4 -n 3 -w 1 --probe 0");
  REQUIRE(o.code == 0);
  CHECK(o.out.find("algbw") != std::string::npos);
  CHECK(o.out.find("busbw") != std::string::npos);
  CHECK(o.out.find("#wrong") != std::string::npos);
  CHECK(o.out.find("Out of bounds values : 0 OK") != std::string::npos);
  // 8, 32, 128, 512 bytes: four rows
  std::size_t rows = 0;
  for (std::size_t p = 0; (p = o.out.find("float32", p)) != std::string::npos; ++p) ++rows;
  CHECK(rows == 5);  // the header line names the dtype too
  // The header says how the time is taken: -n 3 gives 3 batches of one call.
  CHECK(o.out.find("# time: per call, the median of 3 batches of the 3 timed calls") != std::string::npos);
}

TEST_CASE(
    "cli: bench with several algorithms measures them in turns, then checks each: a row each, in the order asked") {
  auto o = collscope(
      "bench --coll allreduce --ranks 3 --algo ring,recursive_doubling,tree -b 8 -e 32K -f 8 -n 10 -w 2 --probe 0 "
      "--json");
  REQUIRE(o.code == 0);
  std::vector<nlohmann::json> rows;
  std::size_t start = 0;
  for (std::size_t end; (end = o.out.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto line = o.out.substr(start, end - start);
    if (line.empty() || line[0] != '{') continue;
    auto j = nlohmann::json::parse(line);
    if (j.contains("size")) rows.push_back(j);
  }
  const std::vector<std::string> algos = {"ring", "recursive_doubling", "tree"};
  const std::vector<std::uint64_t> sizes = {8, 64, 512, 4096, 32768};
  REQUIRE(rows.size() == algos.size() * sizes.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i]["size"].get<std::uint64_t>() == sizes[i / algos.size()]);
    CHECK(rows[i]["algorithm"].get<std::string>() == algos[i % algos.size()]);
    for (const char* mode : {"out_of_place", "in_place"}) {
      CAPTURE(mode);
      CHECK(rows[i][mode]["wrong"].get<std::int64_t>() == 0);  // checked, and right, at every size
      CHECK(rows[i][mode]["time_us"].get<double>() > 0);
    }
  }
}

TEST_CASE("cli: bench --json gives each mode's median time and its plain mean") {
  auto o = collscope("bench --coll allreduce --ranks 2 -b 64 -e 64 -n 40 -w 2 --probe 0 --json");
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out.substr(0, o.out.find('\n')));
  for (const char* mode : {"out_of_place", "in_place"}) {
    CAPTURE(mode);
    REQUIRE(j.contains(mode));
    CHECK(j[mode]["time_us"].get<double>() > 0);
    CHECK(j[mode]["mean_us"].get<double>() > 0);
    // algbw is the size over the median time
    CHECK(j[mode]["algbw"].get<double>() == doctest::Approx(64 / 1e9 / (j[mode]["time_us"].get<double>() * 1e-6)));
  }
}

TEST_CASE("cli: bench --json names the algorithm auto ran in each mode, the one run picks") {
  // In place and out of place may pick differently (the copy into the output costs more
  // for some algorithms than others); each row reports both.
  auto o = collscope("bench --coll allreduce --ranks 8 -b 4M -e 4M -n 1 -w 0 --probe 0 --json");
  REQUIRE(o.code == 0);
  nlohmann::json row;
  std::size_t start = 0;
  for (std::size_t end; (end = o.out.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto line = o.out.substr(start, end - start);
    if (line.empty() || line[0] != '{') continue;
    auto j = nlohmann::json::parse(line);
    if (j.contains("size")) row = j;
  }
  REQUIRE(row.contains("in_place"));
  for (const auto& [mode, flag] : {std::pair{"out_of_place", ""}, std::pair{"in_place", " --in-place"}}) {
    auto r = collscope(std::string("run --coll allreduce --ranks 8 --count 1048576 --dry-run --json") + flag);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CAPTURE(mode);
    CHECK(row[mode]["algorithm"] == j["calls"][0]["algorithm"]);
  }
  CHECK(row["algorithm"] == row["out_of_place"]["algorithm"]);
}

TEST_CASE("cli: run on a program reports every rank's ops, with timings in --json") {
  auto text = collscope("run " + lesson("14-isend-irecv.json"));
  CHECK(text.code == 0);
  CHECK(text.out.find("program, per rank") != std::string::npos);
  CHECK(text.out.find("isend tensor[0..4) to rank 1 as req") != std::string::npos);
  CHECK(text.out.find("irecv tensor[0..4) from rank 0 as req") != std::string::npos);

  auto o = collscope("run " + lesson("14-isend-irecv.json") + " --json");
  REQUIRE(o.code == 0);
  const auto j = nlohmann::json::parse(o.out);
  CHECK(j["verified"] == true);
  REQUIRE(j["program"].size() == 2);
  const auto& rank0 = j["program"][0]["ops"];
  REQUIRE(rank0.size() == 3);
  CHECK(rank0[0]["op"] == "isend");
  CHECK(rank0[1]["op"] == "compute");
  CHECK(rank0[2]["op"] == "wait");
  // The isend and the compute span were timed; the compute lasts about its 300 us.
  CHECK(rank0[0]["time_us"].get<double>() >= 0.0);
  CHECK(rank0[1]["time_us"].get<double>() >= 250.0);
  CHECK(j["program"][1]["ops"][0]["op"] == "irecv");
}

TEST_CASE("cli: list shows the lessons with their titles") {
  auto o = collscope("list");
  CHECK(o.code == 0);
  CHECK(o.out.find("Blocking send and recv") != std::string::npos);
  CHECK(o.out.find("Deadlock: both ranks receive first") != std::string::npos);
}

TEST_CASE("cli: algorithm nccl lowers to one native step that only the nccl backend runs") {
  auto dry = collscope("run --coll allreduce --algo nccl --ranks 4 --count 64 --dry-run --json");
  REQUIRE(dry.code == 0);
  const auto j = nlohmann::json::parse(dry.out);
  CHECK(j["steps"] == 1);
  CHECK(j["algorithm"] == "nccl");
  CHECK(j["transfers"] == 0);
  // This machine's cpu model prices the engine's transfers, and a library's call has
  // none: no number rather than a made-up one. On a GPU topology NCCL's model prices it.
  CHECK(j["predicted_us"].is_null());
  CHECK(j["unpriced"].get<std::string>().find("NCCL's own collective cannot be priced") != std::string::npos);
  auto text = collscope("run --coll allreduce --algo nccl --ranks 4 --count 64 --dry-run");
  CHECK(text.out.find("predicted - (NCCL's own collective") != std::string::npos);
  auto gpu =
      collscope("run --coll allreduce --algo nccl --ranks 8 --count 1048576 --dry-run --json --topology dgx-h100");
  REQUIRE_MESSAGE(gpu.code == 0, gpu.out);
  const auto g = nlohmann::json::parse(gpu.out);
  CHECK(g["predicted_us"].get<double>() > 4.0 * 1048576 / 450e3);  // at least its bytes at NVLink's line rate
  CHECK_FALSE(g.contains("unpriced"));
  auto refused = collscope("predict --coll allreduce --algo nccl --ranks 4 --count 64", true);
  CHECK(refused.code == 2);
  CHECK(refused.out.find("error[predict.no_model]") != std::string::npos);

  auto cpu = collscope("run --coll allreduce --algo nccl --ranks 4 --count 64", true);
  CHECK(cpu.code == 2);
  CHECK(cpu.out.find("error[backend.native_unsupported]") != std::string::npos);
  CHECK(cpu.out.find("use --backend nccl") != std::string::npos);

  auto barrier = collscope("run --coll barrier --algo nccl --ranks 4", true);
  CHECK(barrier.code == 2);
  CHECK(barrier.out.find("error[scenario.unknown_algorithm]") != std::string::npos);

  auto list = collscope("list --json");
  REQUIRE(list.code == 0);
  const auto l = nlohmann::json::parse(list.out);
  bool native = false;
  for (const auto& c : l["collectives"])
    if (c["name"] == "allreduce")
      for (const auto& a : c["algorithms"]) native = native || (a["name"] == "nccl" && a.value("native", false));
  CHECK(native);
}

TEST_CASE("cli: a COLLSCOPE_WAIT that names no wait strategy is refused, the three that do are taken") {
  const std::string run = std::string(COLLSCOPE_BINARY) + " run --coll allreduce --ranks 2 --count 64 --json";
  auto bad = test_shell::shell("COLLSCOPE_WAIT=bogus " + run + " 2>&1");
  CHECK(bad.code == 2);
  CHECK(bad.out.find("error[cli.usage] COLLSCOPE_WAIT=bogus names no wait strategy") != std::string::npos);
  for (const char* how : {"spin", "yield", "sleep", ""}) {
    auto ok = test_shell::shell(std::string("COLLSCOPE_WAIT=") + how + " " + run + " 2>/dev/null");
    CHECK_MESSAGE(ok.code == 0, how);
  }
}
