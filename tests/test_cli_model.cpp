// `collscope predict`, `collscope calibrate` and bench's predicted column as a user runs them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/calibration.h"
#include "shell.h"

namespace {

using test_shell::Output;

Output cs(const std::string& args, bool with_stderr = false) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

}  // namespace

TEST_CASE("cli predict: every algorithm on a topology, with auto's pick and the model named") {
  auto o = cs("predict --coll allreduce --ranks 16 --count 4194304 --algo all --topology dgx-h100 --nodes 2 --json");
  REQUIRE(o.code == 0);
  const auto rows = json_lines(o.out);
  REQUIRE(rows.size() == collscope::algorithm_names(collscope::Collective::allreduce).size());
  int picks = 0;
  double fastest = 1e300;
  for (const auto& r : rows) {
    CHECK(r["predicted_us"].get<double>() > 0);
    CHECK(r["model"] == "topology dgx-h100, 2 nodes x 8 GPUs");
    CHECK(r["bytes"] == 4194304 * 4);
    CHECK(r["busbw_gbps"].get<double>() == doctest::Approx(r["algbw_gbps"].get<double>() * 2 * 15 / 16.0));
    double levels = 0;
    for (const auto& [name, us] : r["levels"].items()) levels += us.get<double>();
    CHECK(levels == doctest::Approx(r["predicted_us"].get<double>()));  // every step is bounded by one level
    if (r["algorithm"] == "ring") CHECK(r["levels"].contains("across nodes"));
    fastest = std::min(fastest, r["predicted_us"].get<double>());
    if (r["auto_pick"].get<bool>()) {
      ++picks;
      CHECK(r["predicted_us"].get<double>() <= 1.02 * fastest + 1e-9);
    }
  }
  CHECK(picks == 1);
  // --algo auto prints the pick alone; the text table names the model.
  auto one = cs("predict --coll allreduce --ranks 16 --count 4194304 --topology dgx-h100 --nodes 2 --json");
  REQUIRE(one.code == 0);
  REQUIRE(json_lines(one.out).size() == 1);
  auto text = cs("predict --coll allgather --ranks 8 --count 1024 --algo all");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("# predicted with the cpu model, ") != std::string::npos);
  CHECK(text.out.find("<- auto") != std::string::npos);
}

TEST_CASE("cli predict: algorithms that lower a call to the same steps say so") {
  // On one node the node-aware rings are the plain ring; flat and the trees are not.
  auto o = cs("predict --coll allreduce --ranks 3 --count 1000 --algo all --json");
  REQUIRE(o.code == 0);
  std::map<std::string, std::string> same;
  std::map<std::string, double> price;
  for (const auto& r : json_lines(o.out)) {
    const std::string a = r["algorithm"];
    same[a] = r.value("same_steps_as", "");
    price[a] = r["predicted_us"].get<double>();
  }
  REQUIRE(same.count("hierarchical"));
  CHECK(same["hierarchical"] == "ring");
  CHECK(same["rings"] == "ring");
  CHECK(price["hierarchical"] == doctest::Approx(price["ring"]));
  for (const char* a : {"flat", "tree", "ring", "recursive_doubling", "rabenseifner", "double_tree"})
    CHECK_MESSAGE(same[a].empty(), a);
  // Two ranks: a broadcast's binomial tree is the flat one.
  auto b = cs("predict --coll broadcast --ranks 2 --count 100 --algo all");
  CHECK(b.out.find("(the same steps as flat)") != std::string::npos);
  // Across nodes the node-aware ones are rings of another shape.
  auto nodes = cs("predict --coll allreduce --ranks 8 --count 1000 --algo all --ranks-per-node 4 --json");
  REQUIRE(nodes.code == 0);
  for (const auto& r : json_lines(nodes.out))
    if (r["algorithm"] == "hierarchical") CHECK(r.value("same_steps_as", "") != "ring");
}

TEST_CASE("cli predict: 65536 ranks on a cluster, from the algorithms' shapes, auto the fastest of them") {
  auto o =
      cs("predict --coll allreduce --ranks 65536 --count 1048576 --algo all --topology dgx-h100 --nodes 8192 --json");
  REQUIRE(o.code == 0);
  const auto rows = json_lines(o.out);
  REQUIRE(rows.size() >= 5);
  int picks = 0;
  double fastest = 1e300, picked = 0;
  for (const auto& r : rows) {
    CHECK(r["method"] == "shape");
    CHECK(r["model"] == "topology dgx-h100, 8192 nodes x 8 GPUs");
    CHECK(r["predicted_us"].get<double>() > 0);
    CHECK(r["bytes"] == 4194304);
    fastest = std::min(fastest, r["predicted_us"].get<double>());
    if (r["auto_pick"] == true) ++picks, picked = r["predicted_us"].get<double>();
  }
  CHECK(picks == 1);
  CHECK(picked == fastest);
  // The text names how it was priced and what it could not price.
  auto t = cs("predict --coll allreduce --ranks 65536 --count 1048576 --algo all --topology dgx-h100 --nodes 8192");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("priced from the algorithms' shapes") != std::string::npos);
  CHECK(t.out.find("<- auto") != std::string::npos);
  // What has no shape here, or no topology, is refused with what to do. All-to-all's
  // linear has a shape where the machine repeats (every node full), not on 8192 nodes
  // with the last one a rank short.
  auto none = cs("predict --coll alltoall --algo linear --ranks 65535 --topology dgx-h100 --nodes 8192", true);
  CHECK(none.code == 2);
  CHECK(none.out.find("error[predict.no_shape]") != std::string::npos);
  CHECK(none.out.find("it has none that prices in seconds on this topology and nodes") != std::string::npos);
  auto rs = cs("predict --coll reduce_scatter --algo all --ranks 65535 --count 16 --topology dgx-h100 --nodes 8192");
  REQUIRE(rs.code == 0);
  CHECK(rs.out.find("# not priced at this scale (every step its own, too many to price on this topology and "
                    "nodes): pairwise") != std::string::npos);
  // All-to-all at 65536 ranks on full nodes: every algorithm, its steps priced from one
  // node's transfers and the switch groups' loads counted; a rank short, Bruck's rounds only.
  auto a2a = cs("predict --coll alltoall --algo all --ranks 65536 --count 16 --topology dgx-h100 --nodes 8192 --json");
  REQUIRE_MESSAGE(a2a.code == 0, a2a.out);
  const auto a2a_rows = json_lines(a2a.out);
  REQUIRE(a2a_rows.size() == 3);
  for (const auto& r : a2a_rows) CHECK(r["method"] == "shape");
  auto short_a2a =
      cs("predict --coll alltoall --algo all --ranks 65535 --count 16 --topology dgx-h100 --nodes 8192 --json");
  REQUIRE_MESSAGE(short_a2a.code == 0, short_a2a.out);
  const auto short_rows = json_lines(short_a2a.out);
  REQUIRE(short_rows.size() == 1);
  CHECK(short_rows[0]["algorithm"] == "bruck");
  CHECK(short_rows[0]["method"] == "shape");
  auto pcie = cs("predict --coll alltoall --algo pairwise --ranks 65536 --topology pcie-8gpu --nodes 8192 --json");
  REQUIRE_MESSAGE(pcie.code == 0, pcie.out);
  CHECK(json_lines(pcie.out).at(0)["method"] == "shape");
  // The model has no cost per message: a step where one rank handles thousands is said
  // to be priced too low, and only such a step.
  auto fan = cs("predict --coll scatter --algo all --ranks 512 --count 64 --topology dgx-h100 --nodes 64");
  REQUIRE(fan.code == 0);
  CHECK(fan.out.find("# priced too low (the model has no cost per message, docs/TOPOLOGY.md): flat, where one rank "
                     "sends or receives 511 messages in a step\n") != std::string::npos);
  auto ring = cs("predict --coll allreduce --algo ring --ranks 512 --count 4096 --topology dgx-h100 --nodes 64");
  REQUIRE(ring.code == 0);
  CHECK(ring.out.find("priced too low") == std::string::npos);
  // A barrier's signals: every algorithm, no count in the header.
  auto barrier = cs("predict --coll barrier --algo all --ranks 65536 --topology dgx-h100 --nodes 8192");
  REQUIRE_MESSAGE(barrier.code == 0, barrier.out);
  CHECK(barrier.out.find("# barrier, 65536 ranks: priced from the algorithms' shapes") != std::string::npos);
  CHECK(barrier.out.find("dissemination") != std::string::npos);
  // The central barrier's one latency is priced fastest and too low: auto passes over it,
  // and says so.
  auto row = [&](const std::string& name) {
    const auto at = barrier.out.find("\n" + name + " ");
    return at == std::string::npos ? std::string()
                                   : barrier.out.substr(at + 1, barrier.out.find('\n', at + 1) - at - 1);
  };
  CHECK(row("central").find("8.000") != std::string::npos);
  CHECK(row("central").find("<- auto") == std::string::npos);
  CHECK(row("dissemination").find("<- auto") != std::string::npos);
  auto barrier_auto = cs("predict --coll barrier --ranks 65536 --topology dgx-h100 --nodes 8192");
  REQUIRE(barrier_auto.code == 0);
  CHECK(barrier_auto.out.find("auto picks dissemination (the fastest algorithm priced but for those priced too low, "
                              "docs/TOPOLOGY.md)") != std::string::npos);
  auto allreduce_auto = cs("predict --coll allreduce --ranks 65536 --count 1 --topology dgx-h100 --nodes 8192");
  REQUIRE(allreduce_auto.code == 0);
  CHECK(allreduce_auto.out.find("(the fastest algorithm priced)\n") != std::string::npos);
  auto one = cs("predict --coll allreduce --algo bruck --ranks 4096 --topology dgx-h100 --nodes 512", true);
  CHECK(one.code == 2);
  auto cpu = cs("predict --coll allreduce --ranks 4096", true);
  CHECK(cpu.code == 2);
  CHECK(cpu.out.find("--topology dgx-h100 --nodes 512") != std::string::npos);
  auto root =
      cs("predict --coll broadcast --algo binomial --ranks 4096 --root 4096 --topology dgx-h100 --nodes 512", true);
  CHECK(root.code == 2);
  CHECK(root.out.find("error[scenario.out_of_range]") != std::string::npos);
  auto huge = cs("predict --coll allreduce --ranks 1000000 --topology dgx-h100 --nodes 125000", true);
  CHECK(huge.code == 2);
}

TEST_CASE("cli predict: beyond a run's ranks, all-to-all priced from shapes, or transfer by transfer (flow level)") {
  // 1280 ranks: more than a schedule that runs may have. Bruck has a shape; pairwise and
  // linear have one where the machine repeats itself (160 nodes: five leaf groups of 256
  // ranks), and none where it does not (a node left partly empty) and every rank's
  // transfers of every step would be millions (2300 ranks): priced transfer by transfer.
  auto rows_of = [](const std::string& args) {
    auto o = cs("predict --coll alltoall --count 8 --algo all --topology dgx-h100 --json " + args);
    REQUIRE_MESSAGE(o.code == 0, o.out);
    return json_lines(o.out);
  };
  const auto big = rows_of("--ranks 1280 --nodes 160");
  REQUIRE(big.size() == 3);  // pairwise, bruck and linear; the libraries' own have no steps to price
  // auto: the fastest but for linear, priced too low (1279 messages a rank in its step).
  int picks = 0;
  double fastest = 1e300, picked = 0, pairwise_big = 0;
  for (const auto& r : big) {
    CHECK(r["method"] == "shape");
    CHECK(r["model"] == "topology dgx-h100, 160 nodes x 8 GPUs");
    CHECK(r["predicted_us"].get<double>() > 0);
    if (r["algorithm"] != "linear") fastest = std::min(fastest, r["predicted_us"].get<double>());
    if (r["auto_pick"] == true) ++picks, picked = r["predicted_us"].get<double>();
    if (r["algorithm"] == "pairwise") pairwise_big = r["predicted_us"].get<double>();
  }
  CHECK(picks == 1);
  CHECK(picked == fastest);
  for (const auto& r : big) {
    CAPTURE(r["algorithm"]);
    CHECK(r["priced_too_low"] == (r["algorithm"] == "linear"));
    CHECK(r["busiest_messages"] == (r["algorithm"] == "linear" ? 1279 : 1));
  }
  auto uneven =
      cs("predict --coll alltoall --count 8 --algo pairwise --ranks 2300 --nodes 288 --topology dgx-h100 --json");
  REQUIRE_MESSAGE(uneven.code == 0, uneven.out);
  CHECK(json_lines(uneven.out).at(0)["method"] == "flow");
  // The same pricing as a schedule that can run: pairwise takes n - 1 steps of one
  // message per rank, so twice the ranks cost about twice the time.
  double pairwise_small = 0;
  for (const auto& r : rows_of("--ranks 640 --nodes 80")) {
    CHECK(r["method"] == "schedule");
    if (r["algorithm"] == "pairwise") pairwise_small = r["predicted_us"].get<double>();
  }
  REQUIRE(pairwise_small > 0);
  CHECK(pairwise_big / pairwise_small == doctest::Approx(1279.0 / 639.0).epsilon(0.05));
  // The text says how they were priced.
  auto t = cs("predict --coll alltoall --ranks 1280 --count 8 --algo all --topology dgx-h100 --nodes 160");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("priced from the algorithms' shapes") != std::string::npos);
  auto flow = cs("predict --coll alltoall --ranks 2300 --nodes 288 --count 8 --algo pairwise --topology dgx-h100");
  REQUIRE(flow.code == 0);
  CHECK(flow.out.find("priced transfer by transfer (flow level)") != std::string::npos);
  // A library's own collective has no steps: it is priced by the model of the library's
  // algorithms, which names the one it priced (NCCL's all-to-all is sends and receives).
  auto lib = cs("predict --coll alltoall --algo nccl --ranks 1280 --topology dgx-h100 --nodes 160 --json");
  REQUIRE_MESSAGE(lib.code == 0, lib.out);
  const auto lib_rows = json_lines(lib.out);
  REQUIRE(lib_rows.size() == 1);
  CHECK(lib_rows[0]["library_algorithm"] == "P2P");
  CHECK(lib_rows[0]["method"] == "library model");
  CHECK(lib_rows[0]["predicted_us"].get<double>() > 0);
  auto lib_text =
      cs("predict --coll allreduce --algo nccl --ranks 65536 --count 1048576 --topology dgx-h100 --nodes 8192");
  REQUIRE_MESSAGE(lib_text.code == 0, lib_text.out);
  CHECK(lib_text.out.find("nccl (NVLS_TREE)") != std::string::npos);
}

TEST_CASE("cli predict: a scenario file beyond a run's ranks is priced on a topology, and refused by run") {
  const auto dir = std::filesystem::temp_directory_path() / ("collscope-predict-wide-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "wide.json";
  std::ofstream(file) << R"({"version": 1, "ranks": 1280,
    "buffers": {"outbox": {"count": 1280, "init": "rank_index"}, "inbox": {"count": 1280}},
    "program": [{"op": "alltoall", "send": "outbox", "recv": "inbox", "algorithm": "pairwise"}]})";
  auto o = cs("predict " + file.string() + " --topology dgx-h100 --nodes 160 --json");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const auto rows = json_lines(o.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["method"] == "schedule");
  // The same call described by flags is priced the same, from its shape.
  auto f = cs("predict --coll alltoall --algo pairwise --ranks 1280 --count 1 --topology dgx-h100 --nodes 160 --json");
  REQUIRE_MESSAGE(f.code == 0, f.out);
  const auto flags = json_lines(f.out);
  REQUIRE(flags.size() == 1);
  CHECK(flags[0]["method"] == "shape");
  CHECK(rows[0]["predicted_us"].get<double>() == doctest::Approx(flags[0]["predicted_us"].get<double>()));
  // Without a topology, or to run it: refused, saying what to do.
  auto cpu = cs("predict " + file.string(), true);
  CHECK(cpu.code == 2);
  CHECK(cpu.out.find("--topology dgx-h100 --nodes 160") != std::string::npos);
  auto run = cs("run " + file.string(), true);
  CHECK(run.code == 2);
  CHECK(run.out.find("error[scenario.out_of_range]") != std::string::npos);
  CHECK(run.out.find("wide.json:1:16") != std::string::npos);
  CHECK(run.out.find("collscope predict") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli predict: programs and custom algorithms beyond a run's ranks are priced, and run refuses them") {
  const auto dir = std::filesystem::temp_directory_path() / ("collscope-predict-program-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* lesson : {"22-custom-algorithm.json", "21-hybrid-parallel.json"}) {
    std::ifstream in(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + lesson);
    nlohmann::json doc = nlohmann::json::parse(in);
    doc["ranks"] = 1280;
    doc.erase("expect");  // the lesson's expectations name its own ranks
    const auto file = dir / lesson;
    std::ofstream(file) << doc.dump(1);
    auto o = cs("predict " + file.string() + " --topology dgx-h100 --nodes 160 --json", true);
    REQUIRE_MESSAGE(o.code == 0, lesson << ": " << o.out);
    const auto rows = json_lines(o.out);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["predicted_us"].get<double>() > 0);
    auto run = cs("run " + file.string(), true);
    CHECK(run.code == 2);
    CHECK(run.out.find("/ranks: ranks 1280 is out of range 1..1024") != std::string::npos);
  }
  // A file of calls whose schedule is larger than a run's (two all-to-alls on 2048 ranks,
  // 8.4 million transfers) is priced too.
  const auto wide = dir / "two.json";
  std::ofstream(wide) << R"({"version": 1, "ranks": 2048,
    "buffers": {"a": {"count": 2048, "init": "rank_index"}, "b": {"count": 2048}},
    "program": [{"op": "alltoall", "send": "a", "recv": "b", "algorithm": "linear"},
                {"op": "alltoall", "send": "b", "recv": "a", "algorithm": "linear"}]})";
  auto o = cs("predict " + wide.string() + " --topology dgx-h100 --nodes 256 --json", true);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli run and predict: --ranks-per-node splits the node-aware algorithms without a topology") {
  auto o = cs("run --coll allreduce --algo hierarchical --ranks 8 --ranks-per-node 4 --explain");
  REQUIRE(o.code == 0);
  CHECK(o.out.find("in each of 2 nodes of 4 ranks") != std::string::npos);
  CHECK(o.out.find("all-reduce across nodes") != std::string::npos);
  // Uneven nodes: one ring, and the caption says why.
  auto uneven = cs("run --coll allreduce --algo hierarchical --ranks 6 --ranks-per-node 4 --explain");
  REQUIRE(uneven.code == 0);
  CHECK(uneven.out.find("uneven nodes: one ring") != std::string::npos);
  for (const char* bad : {"-1", "9"}) {
    auto e = cs(std::string("run --coll allreduce --ranks 8 --ranks-per-node ") + bad, true);
    CHECK(e.code == 2);
    CHECK(e.out.find("error[cli.usage] --ranks-per-node") != std::string::npos);
  }
  // predict: on 2 nodes of 8, splitting at 4 makes the hierarchical all-reduce a different one.
  auto at8 =
      json_lines(cs("predict --coll allreduce --algo hierarchical --ranks 16 --count 4194304 --topology dgx-h100 "
                    "--nodes 2 --json")
                     .out);
  auto at4 =
      json_lines(cs("predict --coll allreduce --algo hierarchical --ranks 16 --count 4194304 --topology dgx-h100 "
                    "--nodes 2 --ranks-per-node 4 --json")
                     .out);
  REQUIRE(at8.size() == 1);
  REQUIRE(at4.size() == 1);
  CHECK(at8[0]["predicted_us"] != at4[0]["predicted_us"]);
}

TEST_CASE("cli predict: bad topologies and flags are usage errors") {
  auto o = cs("predict --coll allreduce --topology dgx-h10", true);
  CHECK(o.code == 2);
  CHECK(o.out.find("error[topology.unknown]") != std::string::npos);
  CHECK(o.out.find("did you mean \"dgx-h100\"") != std::string::npos);
  o = cs("predict --coll allreduce --topology this-machine --nodes 3", true);
  CHECK(o.code == 2);
  o = cs("predict --coll allreduce --mode sideways", true);
  CHECK(o.code == 2);
  const auto bad =
      std::filesystem::temp_directory_path() / ("collscope-bad-topology-" + std::to_string(::getpid()) + ".json");
  std::ofstream(bad) << "{\"version\": 1,\n  \"devices\": {\"kind\": \"gpu\", \"per_node\": 0, \"memory_gbps\": 1}}";
  o = cs("predict --coll allreduce --topology " + bad.string(), true);
  CHECK(o.code == 2);
  CHECK(o.out.find("error[topology.out_of_range] " + bad.string() + ":2:") != std::string::npos);
  CHECK(o.out.find("/devices/per_node") != std::string::npos);
  std::filesystem::remove(bad);
}

TEST_CASE("cli predict: -b -e -f sweep the sizes as bench does, every size with its own pick") {
  auto o = cs("predict --coll allreduce --ranks 16 --topology dgx-h100 --nodes 2 --algo all -b 1K -e 32M -f 32 --json");
  REQUIRE(o.code == 0);
  const auto rows = json_lines(o.out);
  const auto algos = collscope::algorithm_names(collscope::Collective::allreduce).size();
  REQUIRE(rows.size() == 4 * algos);  // 1K, 32K, 1M, 32M
  std::map<std::uint64_t, int> picks, per_size;
  for (const auto& r : rows) {
    const auto bytes = r["bytes"].get<std::uint64_t>();
    per_size[bytes]++;
    if (r["auto_pick"].get<bool>()) picks[bytes]++;
  }
  CHECK(per_size == std::map<std::uint64_t, int>{{1024, static_cast<int>(algos)},
                                                 {32768, static_cast<int>(algos)},
                                                 {1048576, static_cast<int>(algos)},
                                                 {33554432, static_cast<int>(algos)}});
  for (const auto& [bytes, n] : per_size) CHECK(picks[bytes] == 1);
  // Larger messages take no less time, algorithm by algorithm (small ones are latency alone),
  // and the largest longer than the smallest.
  for (std::size_t i = algos; i < rows.size(); ++i)
    CHECK(rows[i]["predicted_us"].get<double>() >= rows[i - algos]["predicted_us"].get<double>());
  for (std::size_t i = 0; i < algos; ++i)
    CHECK(rows[3 * algos + i]["predicted_us"].get<double>() > rows[i]["predicted_us"].get<double>());
  // The text names the model once and the count of every size (all-gather: bytes over ranks).
  auto text = cs("predict --coll allgather --ranks 4 -b 64 -e 4K -f 4");
  REQUIRE(text.code == 0);
  std::size_t headers = 0;
  for (std::size_t at = 0; (at = text.out.find("# predicted with", at)) != std::string::npos; ++at) ++headers;
  CHECK(headers == 1);
  for (const char* count : {"count 4 ", "count 16 ", "count 64 ", "count 256 "})
    CHECK(text.out.find(count) != std::string::npos);
  CHECK(text.out.find("count 1024 ") == std::string::npos);
  // -b alone is one size; nonsense is a usage error before any row.
  auto single = cs("predict --coll allreduce --ranks 4 -b 4K --json");
  REQUIRE(single.code == 0);
  REQUIRE(json_lines(single.out).size() == 1);
  CHECK(json_lines(single.out)[0]["bytes"] == 4096);
  for (const char* bad :
       {"-b 8 --count 16", "-f 2", "-b 1M -e 8", "-b 8 -e 1M -f 1", "-b 8x", "-b 8 -e 2G --ranks 16"}) {
    auto e = cs(std::string("predict --coll allreduce ") + bad, true);
    CHECK_MESSAGE(e.code == 2, bad);
    CHECK_MESSAGE(e.out.find("error[") != std::string::npos, bad);
    CHECK_MESSAGE(e.out.find("# predicted") == std::string::npos, bad);
  }
  const auto file = std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/00-allreduce-ring.json";
  CHECK(cs("predict " + file + " -b 8 -e 64").code == 2);
  // On a topology a call is priced, never run: more bytes than a run's buffers may hold.
  auto huge = cs("predict --coll allreduce --ranks 64 --topology dgx-h100 --nodes 8 -b 1G --json");
  REQUIRE_MESSAGE(huge.code == 0, huge.out);
  CHECK(json_lines(huge.out).at(0)["bytes"] == std::uint64_t{1} << 30);
  auto here = cs("predict --coll allreduce --ranks 64 -b 1G", true);
  CHECK(here.code == 2);
  CHECK(here.out.find("over the limit") != std::string::npos);
}

TEST_CASE("cli predict: auto_pick marks auto's own algorithm only") {
  const std::string call = "predict --coll allreduce --ranks 16 --count 4194304 --topology dgx-h100 --nodes 2 --json";
  auto o = cs(call);
  REQUIRE(o.code == 0);
  const auto pick = json_lines(o.out).at(0)["algorithm"].get<std::string>();
  for (const auto& name : collscope::algorithm_names(collscope::Collective::allreduce)) {
    auto one = cs(call + " --algo " + name);
    REQUIRE(one.code == 0);
    const auto rows = json_lines(one.out);
    REQUIRE(rows.size() == 1);
    CHECK_MESSAGE(rows[0]["auto_pick"].get<bool>() == (name == pick), name);
  }
  // Observable mode marks the same pick, and says that auto chooses by fast mode's prices.
  auto text = cs("predict --coll allreduce --ranks 16 --mode observable --algo all");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("auto picks by fast mode's prices") != std::string::npos);
}

TEST_CASE("cli run --topology: auto picks by the prices of the schedule that runs, predict by the devices'") {
  // The cpu backend cuts a ring of 64 MiB in cache slices: priced on dgx-h100, its auto
  // must not pick an algorithm that those same prices make slower than another.
  const std::string call = "--coll allreduce --ranks 7 --count 16777216 --topology dgx-h100";
  auto us = [&](const std::string& algo) {
    auto o = cs("run " + call + " --algo " + algo + " --dry-run --json");
    REQUIRE_MESSAGE(o.code == 0, o.out);
    return nlohmann::json::parse(o.out)["predicted_us"].get<double>();
  };
  const double picked = us("auto");
  for (const char* algo : {"ring", "rabenseifner", "tree", "recursive_doubling"})
    CHECK_MESSAGE(picked <= us(algo) * 1.02, algo);
  // predict lowers for the topology's devices (whole transfers): its auto is its cheapest row.
  auto p = cs("predict " + call + " --algo all --json");
  REQUIRE(p.code == 0);
  double best = 1e300, marked = 0;
  std::istringstream lines(p.out);
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    best = std::min(best, j["predicted_us"].get<double>());
    if (j["auto_pick"].get<bool>()) marked = j["predicted_us"].get<double>();
  }
  CHECK(marked > 0);
  CHECK(marked <= best * 1.02);
}

TEST_CASE("cli predict, run and bench: bad backends, node counts and numbers are usage errors") {
  for (const char* bad : {"predict --backend bogus", "predict --ranks 0", "predict --ranks -3",
                          "predict --count 99999999999999999999", "predict --topology dgx-h100 --nodes 0",
                          "predict --ranks-per-node 0", "predict --topology dgx-h100 --ranks 16 --nodes 99999999999",
                          "run --topology dgx-h100 --ranks 4 --nodes 5 --dry-run", "run --ranks-per-node 0 --dry-run",
                          "bench --topology dgx-h100 --ranks 2 --nodes 3 -b 8 -e 8", "bench --nodes 0 -b 8 -e 8"}) {
    auto e = cs(bad, true);
    CHECK_MESSAGE(e.code == 2, bad);
    CHECK_MESSAGE(e.out.find("error[") != std::string::npos, bad);
  }
  CHECK(cs("predict --backend bogus", true).out.find("error[backend.unknown]") != std::string::npos);
  CHECK(cs("predict --ranks 0", true).out.find("262144") != std::string::npos);
  CHECK(cs("predict --ranks 99999999999", true).out.find("out of range 1..262144") != std::string::npos);
  CHECK(cs("run --ranks 99999999999", true).out.find("out of range 1..1024") != std::string::npos);
  CHECK(cs("predict --count 99999999999999999999", true).out.find("out of range") != std::string::npos);
  // A dry run ran nothing: no time in JSON; a file's rows have no bandwidths in text either.
  CHECK(nlohmann::json::parse(cs("run --coll allreduce --dry-run --json").out)["time_us"].is_null());
  const std::string file_rows =
      cs("predict " + std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/00-allreduce-ring.json --topology dgx-h100").out;
  const auto as_written = file_rows.find("(as written)");
  REQUIRE(as_written != std::string::npos);
  const std::string row = file_rows.substr(as_written, file_rows.find('\n', as_written) - as_written);
  CHECK(row.find("            -            -  ") != std::string::npos);
  // Observable mode on a topology prices as fast mode does, and says so.
  const std::string on_topology = "predict --coll allreduce --ranks 16 --nodes 2 --topology dgx-h100 --json";
  CHECK(nlohmann::json::parse(cs(on_topology).out)["predicted_us"] ==
        nlohmann::json::parse(cs(on_topology + " --mode observable").out)["predicted_us"]);
  CHECK(cs("predict --coll allreduce --ranks 16 --nodes 2 --topology dgx-h100 --mode observable")
            .out.find("the two modes are priced alike") != std::string::npos);
  // A scenario file says its own call: the flags that describe one are refused beside it.
  const std::string lesson = std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/00-allreduce-ring.json";
  for (const char* flag :
       {"--count 99", "--ranks 64", "--algo tree", "--dtype float64", "--op max", "--root 1", "--in-place"})
    for (const char* cmd : {"predict ", "run "}) {
      auto e = cs(cmd + lesson + " " + flag, true);
      CHECK_MESSAGE(e.code == 2, cmd, flag);
      CHECK_MESSAGE(e.out.find("a scenario file says its own") != std::string::npos, cmd, flag);
    }
  CHECK(cs("predict " + lesson + " --topology dgx-h100").code == 0);
  // A sweep that starts below the call's smallest message, or at an empty one, says where to start.
  auto below = cs("predict --coll allgather --ranks 2000 --nodes 250 --topology dgx-h100 -b 8 -e 64", true);
  CHECK(below.code == 2);
  CHECK(below.out.find("-b 8 holds no element of this call (a count of 1 is 8000 bytes)") != std::string::npos);
  CHECK(below.out.find("give -b 8000 or more") != std::string::npos);
  auto empty = cs("predict --coll allreduce --ranks 4 -b 0 -e 64", true);
  CHECK(empty.code == 2);
  CHECK(empty.out.find("-b 0 cannot start a sweep") != std::string::npos);
  CHECK(cs("predict --coll allreduce --ranks 4 -b 0 -e 0").code == 0);
  // A sweep whose largest count no buffer holds is refused before its first row, in -e's terms.
  auto too_big = cs("predict --topology dgx-h100 --algo ring -b 8G -e 32G -f 2", true);
  CHECK(too_big.code == 2);
  CHECK(too_big.out.find("-e 32G is a count of 8589934592") != std::string::npos);
  CHECK(too_big.out.find("algorithm") == std::string::npos);
  // Sizes below a count of 1 that reach one in a step are rows of count 0, as nccl-tests prints them.
  CHECK(cs("predict --coll allgather --ranks 4 -e 64").code == 0);
  CHECK(cs("bench --coll allgather --ranks 4 -e 64 -n 1 -w 0 --probe 0").code == 0);
  // Nodes that the ranks, filling them in order, leave empty; and the shape path's flags
  // checked as a run's are (a count no buffer holds, an in-place call that cannot be).
  CHECK(cs("predict --ranks 4 --nodes 9223372036854775807 --topology dgx-h100", true).code == 2);
  CHECK(cs("run --coll allreduce --ranks 4 --nodes 9223372036854775806 --topology dgx-h100", true).code == 2);
  auto empty_node = cs("predict --ranks 5 --nodes 4 --topology dgx-h100", true);
  CHECK(empty_node.code == 2);
  CHECK(empty_node.out.find("5 ranks, 2 to a node, fill 3 nodes") != std::string::npos);
  CHECK(empty_node.out.find("give --nodes 3, or --ranks 8") != std::string::npos);
  for (const char* ranks : {"8", "2000"}) {
    auto big = cs(std::string("predict --coll allreduce --nodes 250 --count 4611686018427387904 --topology dgx-h100 ") +
                      "--ranks " + ranks,
                  true);
    CHECK_MESSAGE(big.code == 2, ranks);
    CHECK(big.out.find("is larger than any buffer can hold") != std::string::npos);
    auto in_place =
        cs(std::string("predict --coll alltoall --in-place --nodes 250 --topology dgx-h100 --ranks ") + ranks, true);
    CHECK(in_place.code == 2);
    CHECK(in_place.out.find("error[scenario.in_place_unsupported]") != std::string::npos);
  }
  // A backend that this machine cannot run may still be priced.
  CHECK(cs("predict --backend cuda --topology dgx-h100 --ranks 8").code == 0);
  // Nodes that the ranks do not fill evenly are named.
  auto uneven = cs("predict --coll allreduce --ranks 16 --topology dgx-h100 --nodes 3 --algo all");
  REQUIRE(uneven.code == 0);
  CHECK(uneven.out.find("# uneven nodes: 16 ranks on nodes of 6") != std::string::npos);
  // More ranks than the topology's GPUs share them, and the note says how many nodes would not.
  for (const char* ranks : {"20", "65536"}) {
    auto shared = cs(std::string("predict --coll allreduce --topology dgx-h100 --count 64 --ranks ") + ranks);
    REQUIRE(shared.code == 0);
    const std::string want = std::string("# ") + ranks + " ranks on 8 GPUs: up to " +
                             (std::string(ranks) == "20" ? "3" : "8192") + " share each one (give --nodes " +
                             (std::string(ranks) == "20" ? "3" : "8192") + " for one rank a GPU)";
    CHECK_MESSAGE(shared.out.find(want) != std::string::npos, shared.out);
  }
  CHECK(cs("predict --coll allreduce --topology dgx-h100 --ranks 16 --nodes 2").out.find("share each") ==
        std::string::npos);
}

TEST_CASE("cli calibrate: measures within its budget, writes a calibration that run then names") {
  const auto dir = std::filesystem::temp_directory_path() / ("collscope-cal-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string env = "XDG_CONFIG_HOME=" + dir.string() + " ";
  auto o = test_shell::shell(env + COLLSCOPE_BINARY + " calibrate --seconds 10 2>&1");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const std::string path = (dir / "collscope" / "calibration.json").string();
  auto c = collscope::load_calibration(path);
  REQUIRE(c.ok());
  CHECK(c->cores >= 1);
  CHECK(c->copy_gbps > 0);
  CHECK(c->shared_gbps > 0);
  CHECK(c->wake_us > 0);
  // The in-cache rates, every core at once: a copy, and per dtype a reduce and a reduce-copy.
  CHECK(c->copy_in_cache_gbps > 0);
  for (std::size_t i = 0; i < collscope::kCalibratedDTypes; ++i) {
    CAPTURE(i);
    CHECK(c->reduce_gbps[i] > 0);
    CHECK(c->reduce_in_cache_gbps[i] > 0);
    CHECK(c->reduce_copy_in_cache_gbps[i] > 0);
  }
  CAPTURE(o.out);
  CHECK(o.out.find("reduce-copy") != std::string::npos);
  // Where sysfs names a core's own cache inside a larger shared one, the shared cache's
  // rates are measured and printed; elsewhere they are absent, all three.
  if (c->near_cache_bytes > 0) {
    CHECK(c->near_cache_bytes < c->cache_bytes);
    CHECK(c->copy_far_cache_gbps > 0);
    CHECK(c->reduce_far_cache_gbps > 0);
    CHECK(c->reduce_copy_far_cache_gbps > 0);
    CHECK(o.out.find("in the shared cache") != std::string::npos);
  } else {
    CHECK(c->copy_far_cache_gbps == 0);
    CHECK(o.out.find("in the shared cache") == std::string::npos);
  }
  // The cache as a copy sees it: measured where the kernel names the last level, between
  // an eighth of it and twice it, printed when a step was seen.
  if (c->cache_seen_bytes > 0) {
    CHECK(c->cache_seen_bytes >= c->cache_bytes / 8 - 8192);
    CHECK(c->cache_seen_bytes <= 2 * c->cache_bytes);
  }
  CHECK((o.out.find("as a copy sees it") != std::string::npos) == (c->cache_seen_bytes > 0));
  // A look at a rank on another core: measured with two cores or more, never more than
  // handing the core over, printed when it was measured.
  if (c->cores < 2) CHECK(c->remote_look_us == 0);
  CHECK(c->remote_look_us <= c->switch_us);
  CHECK((o.out.find("a look across cores") != std::string::npos) == (c->remote_look_us > 0));
  CHECK(c->seconds < 30);  // asked for 2 s; a loaded machine stretches it, not without bound
  // The memory's rates for sums and reduce-copies; copies into lines another core holds
  // (with two cores and a core cache known), printed when measured.
  CHECK(c->shared_reduce_gbps > 0);
  CHECK(c->shared_reduce_copy_gbps > 0);
  CHECK(c->reduce_copy_gbps[static_cast<std::size_t>(collscope::DType::float32)] > 0);
  if (c->cores < 2 || c->near_cache_bytes <= 0) CHECK(c->held_gbps == 0);
  CHECK((o.out.find("lines another core holds") != std::string::npos) == (c->held_gbps > 0));

  // --placement measures again only what the cores' placement changes, on top of the
  // kept calibration: the rest is kept as it was.
  auto placed = test_shell::shell(env + COLLSCOPE_BINARY + " calibrate --placement 2>&1");
  REQUIRE_MESSAGE(placed.code == 0, placed.out);
  CHECK(placed.out.find("placement measured again") != std::string::npos);
  auto again = collscope::load_calibration(path);
  REQUIRE(again.ok());
  CHECK(again->copy_gbps == doctest::Approx(c->copy_gbps));
  CHECK(again->cache_bytes == doctest::Approx(c->cache_bytes));
  CHECK(again->barrier_us == doctest::Approx(c->barrier_us));
  CHECK(again->reduce_gbps == c->reduce_gbps);
  CHECK(again->reduce_in_cache_gbps == c->reduce_in_cache_gbps);
  CHECK(again->copy_far_cache_gbps == doctest::Approx(c->copy_far_cache_gbps));
  CHECK(again->shared_gbps > 0);
  CHECK(again->wake_us > 0);
  CHECK((again->held_gbps > 0) == (c->held_gbps > 0));
  CHECK(again->seconds < 10);
  // Without a calibration to refresh: one clear error.
  const auto empty = dir / "empty";
  auto none =
      test_shell::shell("XDG_CONFIG_HOME=" + empty.string() + " " + COLLSCOPE_BINARY + " calibrate --placement 2>&1");
  CHECK(none.code == 2);
  CHECK(none.out.find("error[calibration.missing]") != std::string::npos);
  CHECK(none.out.find("run `collscope calibrate` first") != std::string::npos);
  CHECK(!std::filesystem::exists(empty / "collscope" / "calibration.json"));
  auto run =
      test_shell::shell(env + COLLSCOPE_BINARY + " run --coll allreduce --ranks 4 --count 64 --json 2>/dev/null");
  REQUIRE_MESSAGE(run.code == 0, run.out);
  auto j = nlohmann::json::parse(run.out);
  CHECK(j["model"] == "cpu model, calibrated " + again->date);  // --placement dated it anew
  // A damaged calibration is named, and the defaults are used instead.
  std::ofstream(path) << "{\"version\": 1, \"cores\": \"two\"}";
  run = test_shell::shell(env + COLLSCOPE_BINARY + " run --coll allreduce --ranks 4 --count 64 --json 2>/dev/null");
  REQUIRE(run.code == 0);
  j = nlohmann::json::parse(run.out);
  CHECK(j["model"].get<std::string>().find("could not be read") != std::string::npos);
  auto bad = cs("calibrate --seconds 100", true);
  CHECK(bad.code == 2);
  CHECK(cs("calibrate --seconds 2", true).code == 2);
  // A folder for -o, or --seconds with --placement, is refused before any measuring.
  auto folder = cs("calibrate -o " + dir.string(), true);
  CHECK(folder.code == 2);
  CHECK(folder.out.find("it is a folder") != std::string::npos);
  CHECK(folder.out.find("calibrating") == std::string::npos);
  auto no_folder = cs("calibrate -o /proc/no-such-folder/calibration.json", true);
  CHECK(no_folder.code == 2);
  CHECK(no_folder.out.find("cannot make the folder") != std::string::npos);
  CHECK(no_folder.out.find("calibrating") == std::string::npos);
  CHECK(cs("calibrate --placement --seconds 5", true).out.find("--seconds does not apply") != std::string::npos);
  auto placement = cs("calibrate --placement --seconds 20", true);
  CHECK(placement.code == 2);
  CHECK(placement.out.find("--seconds does not apply") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli bench: a predicted column from --topology's model, named in the header and in --json") {
  const std::string sweep = "bench --coll allreduce --ranks 16 -b 64 -e 4K -f 8 -n 2 -w 0 --probe 0 ";
  auto o = cs(sweep + "--algo double_tree,rings --topology dgx-h100 --nodes 2 --json");
  REQUIRE(o.code == 0);
  const auto rows = json_lines(o.out);
  REQUIRE(rows.size() == 6);  // 64 B, 512 B and 4 KiB, each algorithm
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    CAPTURE(r.dump());
    CHECK(r["model"] == "topology dgx-h100, 2 nodes x 8 GPUs");
    for (const char* mode : {"out_of_place", "in_place"}) CHECK(r[mode]["predicted_us"].get<double>() > 0);
    // What run predicts for the same call on the same model.
    const std::string flags = " --coll allreduce --ranks 16 --count " + std::to_string(r["count"].get<int>()) +
                              " --algo " + r["algorithm"].get<std::string>() + " --topology dgx-h100 --nodes 2";
    auto run = nlohmann::json::parse(cs("run" + flags + " --dry-run --json").out);
    CHECK(r["out_of_place"]["predicted_us"].get<double>() == doctest::Approx(run["predicted_us"].get<double>()));
    // A tree across the nodes is ahead of the rings for small messages, on the model.
    if (i % 2 == 1) {
      CHECK(rows[i - 1]["algorithm"] == "double_tree");
      CHECK(rows[i - 1]["out_of_place"]["predicted_us"].get<double>() <
            r["out_of_place"]["predicted_us"].get<double>());
    }
  }
  auto text = cs(sweep + "--algo ring --topology dgx-h100 --nodes 2");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("# predicted: topology dgx-h100, 2 nodes x 8 GPUs, fast mode") != std::string::npos);
  CHECK(text.out.find("in-place      predicted") != std::string::npos);
  // A row: nccl-tests' 13 columns, then the two predicted times and the algorithm.
  std::istringstream table(text.out);
  int rows_seen = 0;
  for (std::string line; std::getline(table, line);) {
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    if (f.empty() || !std::isdigit(static_cast<unsigned char>(f[0][0]))) continue;
    ++rows_seen;
    REQUIRE(f.size() == 16);
    CHECK(std::stod(f[13]) > 0);
    CHECK(f[15] == "ring");
  }
  CHECK(rows_seen == 3);
}

TEST_CASE("cli bench: without --topology the predicted column is this machine's cpu model, calibrated or not") {
  const auto dir = std::filesystem::temp_directory_path() / ("collscope-bench-cal-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string env = "XDG_CONFIG_HOME=" + dir.string() + " ";
  const std::string sweep = " bench --coll allreduce --ranks 4 -b 8 -e 64 -f 8 -n 2 -w 0 --probe 0";
  auto plain = test_shell::shell(env + COLLSCOPE_BINARY + sweep + " 2>/dev/null");
  REQUIRE(plain.code == 0);
  CHECK(plain.out.find("# predicted: cpu model, defaults (not calibrated") != std::string::npos);
  // A calibration in the config folder: its model, and its date in the header and in --json.
  std::filesystem::create_directories(dir / "collscope");
  std::ofstream(dir / "collscope" / "calibration.json")
      << R"({"version": 1, "date": "2026-12-02T10:00Z", "cores": 2, "copy_gbps": 5, "shared_gbps": 9,
            "wake_us": 0.2, "switch_us": 2, "barrier_us": 3, "barrier_per_rank_us": 0.5})";
  auto cal = test_shell::shell(env + COLLSCOPE_BINARY + sweep + " 2>/dev/null");
  REQUIRE(cal.code == 0);
  CHECK(cal.out.find("# predicted: cpu model, calibrated 2026-12-02T10:00Z, fast mode") != std::string::npos);
  auto js = test_shell::shell(env + COLLSCOPE_BINARY + sweep + " --json 2>/dev/null");
  REQUIRE(js.code == 0);
  const auto rows = json_lines(js.out);
  REQUIRE(rows.size() == 2);
  for (const auto& r : rows) {
    CHECK(r["model"] == "cpu model, calibrated 2026-12-02T10:00Z");
    CHECK(r["in_place"]["predicted_us"].get<double>() > 0);
  }
  auto bad = cs(std::string(sweep) + " --topology dgx-h10", true);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("error[topology.unknown]") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("cli run: observable mode reports every step's measured and predicted time, beyond the cores it grows") {
  // A calibration of 2 cores, so that the ranks outnumber the model's cores on any machine.
  const auto dir = std::filesystem::temp_directory_path() / ("collscope-obs-cal-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "collscope");
  std::ofstream(dir / "collscope" / "calibration.json")
      << R"({"version": 1, "date": "2026-12-02T10:00Z", "cores": 2, "copy_gbps": 5, "shared_gbps": 9,
            "wake_us": 0.2, "switch_us": 2, "barrier_us": 3, "barrier_per_rank_us": 0.5})";
  const std::string env = "XDG_CONFIG_HOME=" + dir.string() + " ";
  std::vector<double> medians;
  for (int ranks : {2, 4, 8, 16}) {
    CAPTURE(ranks);
    auto o = test_shell::shell(env + COLLSCOPE_BINARY + " run --coll allreduce --algo ring --ranks " +
                               std::to_string(ranks) + " --count " + std::to_string(ranks) +
                               " --mode observable --json 2>/dev/null");
    REQUIRE(o.code == 0);
    const auto j = nlohmann::json::parse(o.out);
    REQUIRE(j.contains("step_times"));
    const auto& steps = j["step_times"];
    REQUIRE(steps.size() == j["steps"].get<std::size_t>());
    std::vector<double> predicted;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      CHECK(steps[k]["step"] == k);
      CHECK(steps[k]["measured_us"].get<double>() >= 0);
      CHECK(steps[k]["predicted_us"].get<double>() > 0);
      CHECK_FALSE(steps[k]["phase"].get<std::string>().empty());
      predicted.push_back(steps[k]["predicted_us"].get<double>());
    }
    std::sort(predicted.begin(), predicted.end());
    medians.push_back(predicted[predicted.size() / 2]);
  }
  // The barrier (3 us) alone on 2 cores, then half a microsecond per rank beyond them.
  CHECK(medians[0] == doctest::Approx(3.0).epsilon(0.05));
  for (std::size_t i = 1; i < medians.size(); ++i) CHECK(medians[i] > medians[i - 1]);
  CHECK(medians[3] - medians[0] == doctest::Approx(14 * 0.5).epsilon(0.1));
  // The text report gives the medians; fast mode has no per-step times.
  auto text = test_shell::shell(env + COLLSCOPE_BINARY +
                                " run --coll allreduce --ranks 4 --count 64 --mode observable 2>/dev/null");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("per step (median of ") != std::string::npos);
  CHECK(text.out.find("(barrier and wake-ups included)") != std::string::npos);
  auto fast =
      test_shell::shell(env + COLLSCOPE_BINARY + " run --coll allreduce --ranks 4 --count 64 --json 2>/dev/null");
  REQUIRE(fast.code == 0);
  CHECK_FALSE(nlohmann::json::parse(fast.out).contains("step_times"));
  std::filesystem::remove_all(dir);
}
