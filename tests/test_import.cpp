// Jobs from outside: PyTorch profiler traces, Flight Recorder dumps and NCCL logs read
// back (tests/data/import/: real gloo runs of the tutorial's programs under the
// profiler and `collscope record`, and small files written to the documented fields
// of newer PyTorch and NCCL), checked like torchfrtrace, and replayed as scenarios
// whose calls are the job's.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "collscope/job.h"
#include "collscope/scenario.h"
#include "gui_test_helpers.h"
#include "shell.h"

using namespace collscope;

namespace {

namespace fs = std::filesystem;
using test_shell::Output;

std::string data(const std::string& rel) { return std::string(COLLSCOPE_SOURCE_DIR) + "/tests/data/import/" + rel; }

Output cli(const std::string& args, bool with_stderr = false) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/collscope-import-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// What each rank does in a scenario, in order: "isend->1 x1024", "allreduce x1024".
std::vector<std::vector<std::string>> rank_ops(const nlohmann::json& sc, bool with_waits = false) {
  const int world = sc["ranks"];
  std::vector<std::vector<std::string>> out(static_cast<std::size_t>(world));
  std::map<std::string, std::vector<int>> groups;
  if (sc.contains("groups"))
    for (auto& [name, ranks] : sc["groups"].items()) groups[name] = ranks.get<std::vector<int>>();
  for (const auto& e : sc["program"]) {
    const std::string op = e["op"];
    if (op == "compute" || (op == "wait" && !with_waits)) continue;
    std::vector<int> who;
    if (e.contains("ranks") && e["ranks"].is_array()) who = e["ranks"].get<std::vector<int>>();
    else if (e.contains("group")) who = groups[e["group"]];
    else
      for (int r = 0; r < world; ++r) who.push_back(r);
    // A peer is a rank, or "(rank + d) % size" on entries several ranks share.
    auto peer = [&](const nlohmann::json& p, int r) {
      if (p.is_number()) return p.get<int>();
      const std::string t = p.get<std::string>();
      const int d = std::stoi(t.substr(t.find('+') + 1));
      REQUIRE(t == "(rank + " + std::to_string(d) + ") % size");
      return (r + d) % world;
    };
    for (int r : who) {
      std::string text = op;
      if (e.contains("to")) text += "->" + std::to_string(peer(e["to"], r));
      if (e.contains("from")) text += "<-" + std::to_string(peer(e["from"], r));
      if (e.contains("count")) text += " x" + std::to_string(e["count"].get<std::uint64_t>());
      if (e.contains("group")) text += " @" + e["group"].get<std::string>();
      out[static_cast<std::size_t>(r)].push_back(text);
    }
  }
  return out;
}

ImportedScenario import_ok(const std::vector<std::string>& files, const std::vector<std::string>& sizes = {},
                           ImportOptions opt = {}) {
  auto job = load_job(files, sizes);
  if (!job) FAIL(job.error().format());
  auto sc = job_scenario(*job, opt);
  if (!sc) FAIL(sc.error().format());
  // Like any lesson: it reads back and plans.
  auto parsed = parse_scenario(sc->json, "imported");
  if (!parsed) FAIL(parsed.error().format());
  auto lowered = lower_scenario(*parsed);
  if (!lowered) FAIL(lowered.error().format());
  return *sc;
}

bool has_finding(const JobAnalysis& a, const std::string& id, const std::string& part = "") {
  return std::any_of(a.findings.begin(), a.findings.end(),
                     [&](const JobFinding& f) { return f.id == id && f.message.find(part) != std::string::npos; });
}

}  // namespace

// --- reading the formats --------------------------------------------------------------

TEST_CASE("import: a Flight Recorder dump reads back with its groups, sizes, peers and times") {
  auto job = load_job({data("fr/ok")});
  REQUIRE(job);
  CHECK(job->format == JobFormat::flight_recorder);
  CHECK(job->world == 4);
  CHECK(job->clocks_comparable);
  REQUIRE(job->groups.count("1"));
  CHECK(job->groups.at("1").ranks == std::vector<std::int32_t>{0, 1});
  CHECK(job->groups.at("0").world);
  const auto& calls = job->ranks[1].calls;  // nccl_trace_rank_1: the rank comes from the name
  REQUIRE(calls.size() == 8);
  CHECK(calls[0].kind == "allreduce");
  CHECK(calls[0].name == "nccl:all_reduce");
  CHECK(calls[0].seq == 1);
  CHECK(calls[0].count == 262144u);
  CHECK(calls[0].dtype == "Float");
  CHECK(calls[0].state == "completed");
  CHECK(calls[2].kind == "allgather");
  CHECK(calls[2].count == 1024u);  // all-gather: each rank's input
  CHECK(calls[3].kind == "reduce_scatter");
  CHECK(calls[3].count == 1024u);  // reduce-scatter: each rank's output
  CHECK(calls[4].group == "1");
  // Odd ranks receive from the left first, then send right ("nccl:recv 1<-0").
  CHECK(calls[5].kind == "recv");
  CHECK(calls[5].peer == 0);
  CHECK(calls[6].kind == "send");
  CHECK(calls[6].peer == 2);
  CHECK(calls[6].seq == 2);  // p2p_seq_id
  CHECK(calls[1].t_start > calls[0].t_end);
}

TEST_CASE("import: newer profiler traces: record_param_comms, their kernels and distributedInfo") {
  auto job = load_job({data("kineto")});
  REQUIRE(job);
  CHECK(job->format == JobFormat::profiler);
  CHECK(job->world == 4);
  CHECK(job->clocks_comparable);  // baseTimeNanoseconds
  const auto& calls = job->ranks[2].calls;
  REQUIRE(calls.size() == 8);
  CHECK(calls[0].kind == "allreduce");
  CHECK(calls[0].reduce_op == "sum");  // from ncclDevKernel_AllReduce_Sum_f32_RING_LL
  CHECK(calls[0].count == 262144u);
  CHECK(calls[2].name == "_allgather_base");
  CHECK(calls[2].count == 1024u);
  CHECK(calls[4].group == "2");
  CHECK(job->groups.at("2").ranks == std::vector<std::int32_t>{2, 3});
  // For send and recv "Rank" is the peer.
  CHECK(calls[5].kind == "send");
  CHECK(calls[5].peer == 3);
  CHECK(calls[6].kind == "recv");
  CHECK(calls[6].peer == 1);
  // The kernel's time is when the call ran on the device.
  CHECK(calls[0].t_start > calls[0].t_issue);
}

TEST_CASE("import: torch 1.13's profiler traces have the calls and their order, and say they lack sizes") {
  auto job = load_job({data("profiled/collectives")});
  REQUIRE(job);
  CHECK(job->format == JobFormat::profiler_legacy);
  CHECK_FALSE(job->sizes_known);
  CHECK_FALSE(job->clocks_comparable);
  std::vector<std::string> kinds;
  for (const auto& c : job->ranks[0].calls) kinds.push_back(c.kind);
  CHECK(kinds == std::vector<std::string>{"broadcast", "reduce", "allgather", "scatter", "gather", "barrier"});
  CHECK(job->ranks[0].calls[0].name == "gloo:broadcast");
  bool said = false;
  for (const auto& n : job->notes) said = said || n.find("record no sizes") != std::string::npos;
  CHECK(said);
  // The replay says so too, and still runs: one element stands in for every call.
  auto sc = import_ok({data("profiled/collectives")});
  CHECK(sc.json.find("record no sizes") != std::string::npos);
}

TEST_CASE("import: an NCCL log gives communicators, rings, trees and calls") {
  auto job = load_job({data("nccl/job.log")});
  REQUIRE(job);
  CHECK(job->format == JobFormat::nccl_log);
  CHECK(job->world == 4);
  REQUIRE(job->channels.size() == 2);
  const auto& ch = job->channels[0];
  CHECK(ch.group == "0");
  REQUIRE(ch.rings.size() == 2);
  CHECK(ch.rings[0] == std::vector<std::int32_t>{0, 1, 2, 3});
  CHECK(ch.rings[1] == std::vector<std::int32_t>{0, 3, 2, 1});
  REQUIRE(ch.trees.size() == 2);
  CHECK(ch.trees[0][1] == std::vector<std::int32_t>{0, 2, -1, -1});  // rank 1: up 0, child 2
  // The communicator of ranks 1 and 3 that ncclCommSplit made, with its own ring.
  const auto& sub = job->channels[1];
  CHECK(sub.members == std::vector<std::int32_t>{1, 3});
  REQUIRE(sub.rings.size() == 1);
  CHECK(sub.rings[0] == std::vector<std::int32_t>{1, 3});
  CHECK(job->groups.at(sub.group).ranks == std::vector<std::int32_t>{1, 3});
  const auto& calls = job->ranks[3].calls;
  REQUIRE(calls.size() == 7);
  CHECK(calls[6].group == sub.group);
  CHECK(calls[6].count == 8192u);
  CHECK(calls[0].kind == "allreduce");
  CHECK(calls[0].count == 1048576u);
  CHECK(calls[0].dt == DType::float32);
  CHECK(calls[1].kind == "broadcast");
  CHECK(calls[1].root == 1);
  CHECK(calls[2].dt == DType::bfloat16);
  CHECK(calls[3].reduce_op == "max");
  CHECK(calls[4].kind == "send");
  CHECK(calls[4].peer == 0);
  CHECK(calls[5].peer == 2);
}

// --- what the replay is ------------------------------------------------------------

TEST_CASE(
    "import: the tutorial's ring all-reduce, recorded for real: every send and recv in order, with sizes and peers") {
  const auto sc = import_ok({data("recorded/ring")});
  const auto j = nlohmann::json::parse(sc.json);
  CHECK(j["ranks"] == 4);
  const auto ops = rank_ops(j, true);
  for (int r = 0; r < 4; ++r) {
    const int right = (r + 1) % 4, left = (r + 3) % 4;
    std::vector<std::string> want;
    for (int i = 0; i < 3; ++i) {
      want.push_back("isend->" + std::to_string(right) + " x1024");
      want.push_back("recv<-" + std::to_string(left) + " x1024");
      want.push_back("wait");
    }
    want.push_back("barrier");
    CHECK_MESSAGE(ops[static_cast<std::size_t>(r)] == want, "rank " << r);
  }
  // Every call names where it came from.
  // Every call names where it came from; the ranks that did the same share an entry, as
  // the tutorial writes it: isend to (rank + 1) % size.
  CHECK(sc.json.find("\"to\":\"(rank + 1) % size\",\"caption\":\"ranks 0-3, p2p seq 3, gloo:send to rank r+1 (mod 4), "
                     "4 KiB Float, from dump rank{{0..3}}.json (tutorial.py:") != std::string::npos);
}

TEST_CASE("import: the same ring profiled with torch 1.13 takes its sizes and peers from the recording") {
  // Alone, the trace cannot say who talks to whom.
  auto alone = load_job({data("profiled/ring")});
  REQUIRE(alone);
  auto none = job_scenario(*alone);
  REQUIRE_FALSE(none);
  CHECK(none.error().id == "import.no_peers");
  const auto sc = import_ok({data("profiled/ring")}, {data("recorded/ring")});
  const auto ops = rank_ops(nlohmann::json::parse(sc.json));
  for (int r = 0; r < 4; ++r) {
    std::vector<std::string> want;
    for (int i = 0; i < 3; ++i) {
      want.push_back("isend->" + std::to_string((r + 1) % 4) + " x1024");
      want.push_back("recv<-" + std::to_string((r + 3) % 4) + " x1024");
    }
    CHECK_MESSAGE(ops[static_cast<std::size_t>(r)] == want, "rank " << r);
  }
  CHECK(sc.json.find("come from") != std::string::npos);
}

TEST_CASE("import: every real run of the tutorial's programs replays with the calls each rank made") {
  struct Case {
    std::string program;
    int ranks;
    std::vector<std::string> rank0;  // what rank 0 did
  };
  const std::vector<Case> cases = {
      {"blocking", 2, {"send->1 x1024", "barrier"}},
      {"nonblocking", 2, {"isend->1 x1024", "barrier"}},
      {"allreduce", 4, {"allreduce x1024 @pg_1", "allreduce x1024", "barrier"}},
      {"collectives",
       4,
       {"broadcast x1024", "reduce x1024", "allgather x1024", "scatter x256", "gather x256", "barrier", "barrier"}},
      {"ddp", 4, {"allreduce x3072", "allreduce x2048", "allreduce x1024", "barrier"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.program);
    const auto sc = import_ok({data("recorded/" + c.program)});
    const auto j = nlohmann::json::parse(sc.json);
    CHECK(j["ranks"] == c.ranks);
    CHECK(rank_ops(j)[0] == c.rank0);
    // The profiled run of the same program, sizes from the recording: the profiler's window.
    const auto sp = import_ok({data("profiled/" + c.program)}, {data("recorded/" + c.program)});
    auto want = c.rank0;
    want.pop_back();  // the final barrier is outside the profiled region
    CHECK(rank_ops(nlohmann::json::parse(sp.json))[0] == want);
  }
  // The root and reduction the recorder saw come through (broadcast from 1, reduce to 2, max).
  const auto coll = nlohmann::ordered_json::parse(import_ok({data("recorded/collectives")}).json);
  CHECK(coll["program"].dump().find("\"op\":\"broadcast\",\"buffer\":\"x0\",\"count\":1024,\"root\":1") !=
        std::string::npos);
  const auto ar = nlohmann::json::parse(import_ok({data("recorded/allreduce")}).json);
  CHECK(ar["program"].dump().find("\"reduce_op\":\"max\"") != std::string::npos);
  CHECK(ar["groups"]["pg_1"] == nlohmann::json::array({0, 1}));
  CHECK(ar["groups"]["pg_2"] == nlohmann::json::array({2, 3}));
}

TEST_CASE("import: DDP's buckets overlap with the backward pass: the compute between them writes other buffers") {
  const auto j = nlohmann::json::parse(import_ok({data("recorded/ddp")}).json);
  // rank 0: compute, allreduce (async) on x_a, compute on another slot, allreduce on x_b, ...
  std::vector<std::string> seen;
  std::set<std::string> in_flight;
  bool overlapped = false;
  for (const auto& e : j["program"]) {
    const bool mine = !e.contains("ranks") || e["ranks"] == "all" ||
                      (e["ranks"].is_array() && std::count(e["ranks"].begin(), e["ranks"].end(), 0));
    if (!mine) continue;
    if (e["op"] == "allreduce" && e.contains("buffer")) {
      CHECK_FALSE(in_flight.count(e["buffer"]));  // never a buffer still in flight
      in_flight.insert(e["buffer"].get<std::string>());
    }
    if (e["op"] == "compute" && in_flight.size() >= 1 && e["duration_us"].get<int>() > 1000 &&
        !in_flight.count(e["writes"].get<std::string>()))
      overlapped = true;  // 3 ms of backward pass beside a bucket's all-reduce
  }
  CHECK(in_flight.size() == 3);
  CHECK(overlapped);
}

TEST_CASE("import: handwritten newer-format files replay: groups, p2p rings, all-gather and reduce-scatter") {
  for (const char* dir : {"kineto", "fr/ok"}) {
    CAPTURE(dir);
    const auto sc = import_ok({data(dir)});
    CHECK(sc.ranks == 4);
    CHECK(sc.collectives == 7);  // 6 per rank, one on each half's group
    CHECK(sc.p2p == 8);
    const auto ops = rank_ops(nlohmann::json::parse(sc.json));
    CHECK(ops[0] == std::vector<std::string>{"allreduce x262144", "broadcast x1024", "allgather x1024",
                                             "reduce_scatter x1024", "allreduce x2048 @pg_1", "send->1 x4096",
                                             "recv<-3 x4096", "allreduce x1024"});
    CHECK(ops[3][4] == "allreduce x2048 @pg_2");
  }
}

TEST_CASE("import: an NCCL log's rings become the algorithm: every channel's chunks go round its own ring") {
  const auto sc = import_ok({data("nccl/job.log")});
  CHECK(sc.custom_channels == 3);  // both all-reduces of the world, and the one of ranks 1 and 3
  auto parsed = parse_scenario(sc.json, "nccl");
  REQUIRE(parsed);
  auto s = lower_scenario(*parsed);
  REQUIRE(s);
  const Call& c = s->calls[0];
  CHECK(c.custom);
  // 1048576 elements: channel 0 holds the first half, channel 1 the second.
  const std::uint64_t half = 1048576 / 2;
  const Step& first = s->steps[static_cast<std::size_t>(c.first_step)];
  CHECK(first.phase == "reduce-scatter");
  int ring0 = 0, ring1 = 0;
  for (const auto& t : first.transfers) {
    if (t.count == 0) continue;
    CHECK(t.action == Action::reduce);
    if (t.dst.offset < half) {
      CHECK(t.src.rank == (t.dst.rank + 3) % 4);  // ring 0 1 2 3: from the left neighbour
      ++ring0;
    } else {
      CHECK(t.src.rank == (t.dst.rank + 1) % 4);  // ring 0 3 2 1
      ++ring1;
    }
  }
  CHECK(ring0 == 4);
  CHECK(ring1 == 4);
  CHECK(c.num_steps == 6);  // 3 reduce-scatter and 3 all-gather steps
  // On the communicator of ranks 1 and 3: its ring, in world ranks.
  const Call& g = s->calls.back();
  CHECK(g.custom);
  CHECK(g.args.world_rank == std::vector<std::int32_t>{1, 3});
  for (std::int32_t k = 0; k < g.num_steps; ++k)
    for (const auto& t : s->steps[static_cast<std::size_t>(g.first_step + k)].transfers)
      if (t.count) CHECK((t.src.rank == 1 || t.src.rank == 3));
  // With a trace's calls and a log that only set the channels up, the trace's all-reduces use them.
  const auto both = import_ok({data("fr/ok"), data("nccl/init.log")});
  CHECK(both.custom_channels == 2);  // the 262144- and 1024-element all-reduces of the world
}

TEST_CASE("import: --scale-down divides every count and says so, and sizes over the limits name a factor") {
  ImportOptions opt;
  opt.scale_down = 8;
  const auto sc = import_ok({data("fr/ok")}, {}, opt);
  const auto ops = rank_ops(nlohmann::json::parse(sc.json));
  CHECK(ops[0][0] == "allreduce x32768");
  CHECK(ops[0][5] == "send->1 x512");
  CHECK(sc.json.find("divided by 8") != std::string::npos);
  CHECK(sc.json.find("(replayed 1/8)") != std::string::npos);

  Job job;
  job.world = 2;
  job.ranks.resize(2);
  JobGroup g;
  g.id = "0";
  g.world = true;
  g.ranks = {0, 1};
  job.groups["0"] = g;
  for (int r = 0; r < 2; ++r) {
    job.ranks[r].rank = r;
    job.ranks[r].present = true;
    JobCall c;
    c.rank = r;
    c.kind = "allreduce";
    c.name = "nccl:all_reduce";
    c.group = "0";
    c.seq = 1;
    c.count = std::uint64_t{3} << 30;  // 12 GiB of float32 per rank
    c.dtype = "Float";
    c.dt = DType::float32;
    c.dtype_bytes = 4;
    job.ranks[r].calls.push_back(c);
  }
  auto big = job_scenario(job);
  REQUIRE_FALSE(big);
  CHECK(big.error().id == "import.too_large");
  CHECK(big.error().hint.find("--scale-down") != std::string::npos);
  ImportOptions fit;
  fit.scale_down = 4;
  CHECK(job_scenario(job, fit));
}

// --- properties: any job of collectives, groups and point-to-point replays as it was ------

namespace {

struct Synth {
  Job job;
  std::vector<std::vector<std::string>> expect;  // per rank, as rank_ops writes them
  std::vector<double> gaps;                      // per rank: compute time between its calls
};

Synth synth_job(std::mt19937& rng, int world) {
  Synth s;
  Job& job = s.job;
  job.world = world;
  job.clocks_comparable = true;
  job.ranks.resize(static_cast<std::size_t>(world));
  s.expect.resize(static_cast<std::size_t>(world));
  s.gaps.assign(static_cast<std::size_t>(world), 0);
  auto add_group = [&](const std::string& id, std::vector<std::int32_t> ranks, bool world_group) {
    JobGroup g;
    g.id = id;
    g.ranks = std::move(ranks);
    g.world = world_group;
    job.groups[id] = g;
  };
  std::vector<std::int32_t> all(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) all[static_cast<std::size_t>(r)] = r;
  add_group("0", all, true);
  const int half = world / 2;
  if (world >= 4) {
    add_group("1", std::vector<std::int32_t>(all.begin(), all.begin() + half), false);
    add_group("2", std::vector<std::int32_t>(all.begin() + half, all.end()), false);
  }
  std::vector<double> clock(static_cast<std::size_t>(world), 0);
  std::vector<int> made(static_cast<std::size_t>(world), 0);
  std::map<std::string, std::int64_t> seq;
  std::map<std::pair<int, std::string>, std::int64_t> p2p_seq;
  for (int r = 0; r < world; ++r) {
    job.ranks[static_cast<std::size_t>(r)].rank = r;
    job.ranks[static_cast<std::size_t>(r)].present = true;
    job.ranks[static_cast<std::size_t>(r)].file = "synthetic" + std::to_string(r) + ".json";
  }
  const char* kinds[] = {"allreduce", "broadcast", "reduce",  "allgather", "reduce_scatter",
                         "alltoall",  "gather",    "scatter", "barrier"};
  auto make = [&](int r, const std::string& kind, const std::string& group, std::uint64_t count) {
    JobCall c;
    c.rank = r;
    c.kind = kind;
    c.name = "gloo:" + kind;
    c.group = group;
    c.count = kind == "barrier" ? 0 : count;
    c.dtype = "Float";
    c.dt = DType::float32;
    c.dtype_bytes = 4;
    c.state = "completed";
    c.async_known = true;
    const double gap = std::uniform_int_distribution<int>(0, 3)(rng) * 50.0;
    // The time before a rank's first call is no gap between calls.
    if (made[static_cast<std::size_t>(r)]++) s.gaps[static_cast<std::size_t>(r)] += gap;
    c.t_issue = c.t_start = clock[static_cast<std::size_t>(r)] + gap;
    c.t_return = c.t_end = c.t_start + 20;
    clock[static_cast<std::size_t>(r)] = c.t_end;
    return c;
  };
  const int calls = std::uniform_int_distribution<int>(3, 12)(rng);
  for (int i = 0; i < calls; ++i) {
    const int what = std::uniform_int_distribution<int>(0, 3)(rng);
    const std::uint64_t count = std::uniform_int_distribution<std::uint64_t>(1, 40)(rng);
    if (what <= 1 || world < 4) {  // a collective on everyone
      const std::string kind = kinds[std::uniform_int_distribution<int>(0, 8)(rng)];
      const std::int32_t root = std::uniform_int_distribution<std::int32_t>(0, world - 1)(rng);
      const bool async = std::uniform_int_distribution<int>(0, 2)(rng) == 0;
      ++seq["0"];
      for (int r = 0; r < world; ++r) {
        JobCall c = make(r, kind, "0", count);
        c.seq = seq["0"];
        c.root = root;
        c.async_op = async && kind != "barrier";
        if (c.async_op) c.t_wait_begin = c.t_wait_end = c.t_end + 500;  // waited after the next calls
        job.ranks[static_cast<std::size_t>(r)].calls.push_back(c);
        std::string text = kind;
        if (kind != "barrier") text += " x" + std::to_string(count);
        s.expect[static_cast<std::size_t>(r)].push_back(text);
      }
    } else if (what == 2) {  // each half on its own group
      for (const char* gid : {"1", "2"}) {
        ++seq[gid];
        for (auto r : job.groups[gid].ranks) {
          JobCall c = make(r, "allreduce", gid, count);
          c.seq = seq[gid];
          job.ranks[static_cast<std::size_t>(r)].calls.push_back(c);
          s.expect[static_cast<std::size_t>(r)].push_back("allreduce x" + std::to_string(count) + " @pg_" + gid);
        }
      }
    } else {  // a ring shift: isend right, recv from the left, wait (the tutorial's pattern)
      const int k = std::uniform_int_distribution<int>(1, world - 1)(rng);
      for (int r = 0; r < world; ++r) {
        const int to = (r + k) % world, from = (r - k + world) % world;
        JobCall snd = make(r, "send", "0", count);
        snd.p2p = true;
        snd.peer = to;
        snd.async_op = true;
        snd.seq = ++p2p_seq[{r, "0"}];
        JobCall rcv = make(r, "recv", "0", count);
        rcv.p2p = true;
        rcv.peer = from;
        rcv.seq = ++p2p_seq[{r, "0"}];
        snd.t_wait_begin = snd.t_wait_end = rcv.t_end;
        job.ranks[static_cast<std::size_t>(r)].calls.push_back(snd);
        job.ranks[static_cast<std::size_t>(r)].calls.push_back(rcv);
        s.expect[static_cast<std::size_t>(r)].push_back("isend->" + std::to_string(to) + " x" + std::to_string(count));
        s.expect[static_cast<std::size_t>(r)].push_back("recv<-" + std::to_string(from) + " x" + std::to_string(count));
      }
    }
  }
  // A wait after a rank's last call would add time the rank spent after it: keep every
  // wait within the rank's calls.
  for (auto& jr : job.ranks) {
    const double last = jr.calls.empty() ? 0 : jr.calls.back().t_end;
    for (auto& c : jr.calls)
      if (c.async_op) c.t_wait_begin = c.t_wait_end = std::min(c.t_wait_begin, last);
  }
  return s;
}

}  // namespace

TEST_CASE("import: property: random jobs replay with every rank's calls, sizes and peers, and their compute time") {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 60; ++trial) {
    const int world = std::uniform_int_distribution<int>(2, 9)(rng);
    Synth s = synth_job(rng, world);
    CAPTURE(trial);
    CAPTURE(world);
    const auto a = analyze_job(s.job);
    CHECK_MESSAGE(a.findings.empty(), (a.findings.empty() ? "" : a.findings[0].message));
    auto sc = job_scenario(s.job);
    REQUIRE_MESSAGE(sc, (sc ? "" : sc.error().format()));
    auto parsed = parse_scenario(sc->json, "synthetic");
    REQUIRE_MESSAGE(parsed, (parsed ? "" : parsed.error().format()));
    auto lowered = lower_scenario(*parsed);
    REQUIRE_MESSAGE(lowered, (lowered ? "" : lowered.error().format()));
    const auto j = nlohmann::json::parse(sc->json);
    const auto ops = rank_ops(j);
    for (int r = 0; r < world; ++r) CHECK(ops[static_cast<std::size_t>(r)] == s.expect[static_cast<std::size_t>(r)]);
    // The compute spans add up to the time each rank spent between its calls.
    std::vector<double> spans(static_cast<std::size_t>(world), 0);
    for (const auto& e : j["program"]) {
      if (e["op"] != "compute") continue;
      std::vector<int> who;
      if (e["ranks"] == "all")
        for (int r = 0; r < world; ++r) who.push_back(r);
      else who = e["ranks"].get<std::vector<int>>();
      for (int r : who) spans[static_cast<std::size_t>(r)] += e["duration_us"].get<double>();
    }
    for (int r = 0; r < world; ++r)
      CHECK(spans[static_cast<std::size_t>(r)] == doctest::Approx(s.gaps[static_cast<std::size_t>(r)]).epsilon(0.02));
  }
}

// --- checking ------------------------------------------------------------------------

TEST_CASE("analyze: a desync names the call, its sequence number and every rank's version") {
  auto job = load_job({data("fr/desync")});
  REQUIRE(job);
  const auto a = analyze_job(*job);
  REQUIRE(a.findings.size() == 1);
  CHECK(a.findings[0].id == "analyze.desync");
  CHECK(a.findings[0].message ==
        "ranks disagree on nccl:_allgather_base seq 3 of group 0 (default_pg): ranks 0, 1, 3 call "
        "nccl:_allgather_base [[1024]] Float; rank 2 calls nccl:_allgather_base [[2048]] Float");
  // import refuses it, saying why.
  auto sc = job_scenario(*job);
  REQUIRE_FALSE(sc);
  CHECK(sc.error().id == "import.inconsistent");
}

TEST_CASE("analyze: a hung job: the rank that never arrived, and the call the others started") {
  auto job = load_job({data("fr/hang")});
  REQUIRE(job);
  const auto a = analyze_job(*job);
  CHECK(has_finding(a, "analyze.missing_rank",
                    "rank 3 never reached nccl:all_reduce seq 5 of group 0 (default_pg), which ranks 0-2 entered; its "
                    "last call on group 0 (default_pg) was seq 4"));
  CHECK(has_finding(a, "analyze.incomplete",
                    "nccl:all_reduce seq 5 of group 0 (default_pg) never completed: it started on ranks 0-2"));
  // Problems come in a fixed order: missing ranks before incomplete calls.
  REQUIRE(a.findings.size() == 2);
  CHECK(a.findings[0].id == "analyze.missing_rank");
}

TEST_CASE("analyze: the straggler and how long the others waited, from the timestamps") {
  auto job = load_job({data("fr/straggler")});
  REQUIRE(job);
  const auto a = analyze_job(*job);
  REQUIRE(a.straggler);
  CHECK(a.straggler->rank == 1);
  CHECK(a.straggler->last_at == 6);
  CHECK(a.straggler->mean_wait_us == doctest::Approx(30000).epsilon(0.01));
  CHECK(has_finding(a, "analyze.straggler", "rank 1 arrived last at 6 of the 6 collectives it joined"));
  // The profiler's clock works the same way: rank 2 of the newer traces is 5 ms late.
  auto k = load_job({data("kineto")});
  REQUIRE(k);
  const auto ak = analyze_job(*k);
  REQUIRE(ak.straggler);
  CHECK(ak.straggler->rank == 2);
  CHECK(ak.straggler->mean_wait_us == doctest::Approx(5000).epsilon(0.01));
  // A clean job has nothing to say; a raised threshold silences a small straggler.
  auto ok = load_job({data("fr/ok")});
  REQUIRE(ok);
  CHECK(analyze_job(*ok).findings.empty());
  AnalyzeOptions lenient;
  lenient.straggler_ms = 50;
  CHECK(analyze_job(*job, lenient).findings.empty());
}

TEST_CASE("analyze: a rank whose file is missing, and a send nobody receives") {
  auto job =
      load_job({data("fr/ok/nccl_trace_rank_0"), data("fr/ok/nccl_trace_rank_2"), data("fr/ok/nccl_trace_rank_3")});
  REQUIRE(job);
  const auto a = analyze_job(*job);
  CHECK(has_finding(a, "analyze.missing_rank", "no file for rank 1 of the job's 4 ranks"));
  auto sc = job_scenario(*job);
  REQUIRE_FALSE(sc);
  CHECK(sc.error().id == "import.inconsistent");

  // Rank 0's last send to rank 1 is never received.
  auto ring = load_job({data("recorded/ring")});
  REQUIRE(ring);
  auto& calls = ring->ranks[1].calls;
  for (std::size_t i = calls.size(); i-- > 0;)
    if (calls[i].kind == "recv") {
      calls.erase(calls.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  const auto b = analyze_job(*ring);
  CHECK(has_finding(b, "analyze.unmatched",
                    "rank 0 sent 3 messages to rank 1 but rank 1 received 2 from it: message 3 (gloo:send p2p seq 5, "
                    "[[1024]] Float) was never received"));
}

// --- the command line --------------------------------------------------------------

TEST_CASE("cli: import writes a scenario that runs, verifies, predicts and opens in the window") {
  TempDir t;
  const std::string out = t / "job.json";
  auto o = cli("import " + data("recorded/ring") + " -o " + out);
  REQUIRE(o.code == 0);
  CHECK(o.out.find("4 ranks, 25 calls (1 collective, 24 point-to-point)") != std::string::npos);
  CHECK(o.out.find("wrote " + out) != std::string::npos);
  auto run = cli("run " + out + " --json");
  REQUIRE(run.code == 0);
  auto rj = nlohmann::json::parse(run.out);
  CHECK(rj["verified"] == true);
  auto pred = cli("predict " + out + " --topology dgx-h100 --json");
  CHECK(pred.code == 0);
  CHECK(pred.out.find("predicted_us") != std::string::npos);
  CHECK(cli("validate " + out).code == 0);
#ifdef COLLSCOPE_HAVE_GUI
  if (gui_test::have_xvfb()) {
    const std::string png = t / "job.png";
    auto gui = gui_test::gui(out + " --step 3 --screenshot " + png + " --size 800x500", t / "config");
    CHECK_MESSAGE(gui.code == 0, gui.out);
    CHECK((fs::exists(png) && fs::file_size(png) > 1000));
  } else {
    MESSAGE("the window's screenshot was skipped: xvfb-run is not installed");
  }
#endif
  // --json: a summary, with the scenario itself when there is no -o.
  auto js = cli("import " + data("fr/ok") + " --json");
  REQUIRE(js.code == 0);
  auto jj = nlohmann::json::parse(js.out);
  CHECK(jj["ranks"] == 4);
  CHECK(jj["collectives"] == 7);
  CHECK(jj["scenario"]["ranks"] == 4);
  // Without -o the scenario goes to stdout, the summary to stderr.
  auto plain = cli("import " + data("kineto"));
  REQUIRE(plain.code == 0);
  CHECK(nlohmann::json::parse(plain.out)["version"] == 1);
}

TEST_CASE("cli: analyze on a job's files: exit 0 when clean, 1 with the findings, 2 for unreadable files") {
  auto ok = cli("analyze " + data("fr/ok"));
  CHECK(ok.code == 0);
  CHECK(ok.out.find("no problem found") != std::string::npos);
  auto bad = cli("analyze " + data("fr/hang") + " --json");
  CHECK(bad.code == 1);
  auto j = nlohmann::json::parse(bad.out);
  CHECK(j["ok"] == false);
  CHECK(j["findings"][0]["id"] == "analyze.missing_rank");
  auto st = cli("analyze " + data("fr/straggler") + " --json");
  CHECK(st.code == 1);
  CHECK(nlohmann::json::parse(st.out)["straggler"]["rank"] == 1);
  TempDir t;
  write_text(t / "rank0.json", "{\"entries\": [{\"profiling_name\": \"nccl:all_reduce\",}]}");
  auto broken = cli("analyze " + (t / "rank0.json"), true);
  CHECK(broken.code == 2);
  CHECK(broken.out.find("error[analyze.parse] " + (t / "rank0.json") + ":1:51 /entries/0: a trailing comma") !=
        std::string::npos);
}

TEST_CASE("cli: import's bad inputs: one error each, with the place and what to do, exit 2") {
  TempDir t;
  struct Case {
    std::string args, expect;
  };
  write_text(t / "notes.txt", "hello\n");
  write_text(t / "cut.json", read_text(data("fr/ok/nccl_trace_rank_0")).substr(0, 300));
  write_text(t / "wrong.json", "{\"entries\": [{\"profiling_name\": 7}]}");
  write_text(t / "noname.json", "{\"entries\": [{\"state\": \"completed\"}]}");
  write_text(t / "record.json", "{\"flight_record\": 1, \"ranks\": []}");
  write_text(t / "nccl_trace_rank_0", std::string("\x80\x04\x95\x10\x00\x00\x00", 7) + "}\x94(\x8c\x07version");
  fs::create_directory(t / "empty");
  REQUIRE(mkfifo((t / "fifo").c_str(), 0600) == 0);
  fs::create_directory(t / "twice");
  fs::copy_file(data("fr/ok/nccl_trace_rank_0"), t / "twice/a_rank0.json");
  fs::copy_file(data("fr/ok/nccl_trace_rank_0"), t / "twice/b_rank0.json");
  const std::vector<Case> cases = {
      {t / "notes.txt", "error[import.unknown_format] " + (t / "notes.txt") + ":1:1: not a PyTorch profiler trace"},
      {t / "cut.json", "error[import.parse] " + (t / "cut.json") + ":"},
      {t / "wrong.json",
       "error[import.bad_field] " + (t / "wrong.json") + ":1:33 /entries/0: profiling_name should be a string"},
      {t / "noname.json",
       "error[import.bad_field] " + (t / "noname.json") + ":1:14 /entries/0: entry 0 has no profiling_name"},
      {t / "record.json",
       "error[import.unknown_format] " + (t / "record.json") + ": this is collscope's own flight record"},
      {t / "empty", "error[import.io] " + (t / "empty") + ": the folder has no files"},
      {t / "nccl_trace_rank_0", "error[import.unknown_format] " + (t / "nccl_trace_rank_0") +
                                    ": this looks like a pickled Flight Recorder dump"},
      {t / "fifo", "error[import.io] " + (t / "fifo") + ": path is not a regular file"},
      {t / "missing.json", "error[import.io] " + (t / "missing.json") + ": file not found"},
      {t / "twice", "error[import.ranks]"},
      {data("fr/ok") + " " + data("kineto"), "error[import.mixed_formats]"},
      {data("nccl/init.log"),
       "error[import.no_calls] " + data("nccl/init.log") + ": the NCCL log has no per-call lines"},
      {data("fr/desync"), "error[import.inconsistent]"},
      {data("profiled/ring") + " --sizes " + data("recorded/ddp"), "error[import.sources_disagree]"},
      {data("fr/ok") + " --scale-down 0", "error[cli.usage]"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    auto o = cli("import " + c.args + " -o " + (t / "out.json"), true);
    CHECK(o.code == 2);
    CHECK_MESSAGE(o.out.find(c.expect) != std::string::npos, o.out);
    CHECK_MESSAGE(o.out.find("help: ") != std::string::npos, o.out);
    CHECK_FALSE(fs::exists(t / "out.json"));  // never a half-written output
  }
}

TEST_CASE("import: mangled files are errors with a place, never a crash or a hang") {
  TempDir t;
  std::mt19937 rng(7);
  const std::vector<std::string> sources = {data("fr/ok/nccl_trace_rank_1"), data("kineto/rank2.json"),
                                            data("profiled/ring/rank0.json"), data("nccl/job.log"),
                                            data("recorded/ddp/rank3.json")};
  int errors = 0, ok = 0;
  for (int i = 0; i < 150; ++i) {
    std::string text = read_text(sources[static_cast<std::size_t>(i) % sources.size()]);
    REQUIRE(!text.empty());
    const int how = std::uniform_int_distribution<int>(0, 3)(rng);
    std::uniform_int_distribution<std::size_t> at(0, text.size() - 1);
    if (how == 0) text.resize(at(rng));  // cut short
    for (int k = 0; k < (how == 1 ? 8 : 1); ++k)
      text[at(rng)] = "{}[],:\"0-9e.ax\x80\xff"[rng() % 16];    // bytes changed
    if (how == 2) text.insert(at(rng), std::string(200, '['));  // nested deep
    if (how == 3) text.erase(at(rng), 40);
    const std::string path = t / ("mangled" + std::to_string(i) + "_rank0.json");
    write_text(path, text);
    auto job = load_job({path});
    if (!job) {
      ++errors;
      CHECK(job.error().id.rfind("import.", 0) == 0);
      CHECK(job.error().where.file == path);
      continue;
    }
    ++ok;
    (void)analyze_job(*job);
    (void)job_scenario(*job);  // may refuse (a lone rank of a larger job), but returns
  }
  CHECK(errors > 50);
  MESSAGE(errors << " mangled files refused, " << ok << " still read");
}

TEST_CASE("cli: record refuses a folder in use, a command that cannot start, and a program that records nothing") {
  TempDir t;
  fs::create_directory(t / "used");
  write_text(t / "used/old.json", "{}");
  auto used = cli("record -o " + (t / "used") + " -- true", true);
  CHECK(used.code == 2);
  CHECK(used.out.find("error[record.output] " + (t / "used") + ": the folder is not empty") != std::string::npos);
  auto missing = cli("record -o " + (t / "a") + " -- /nonexistent/python3 x.py", true);
  CHECK(missing.code == 2);
  CHECK(missing.out.find("error[record.exec]") != std::string::npos);
  auto nothing = cli("record -o " + (t / "b") + " -- /bin/sh -c 'exit 0'", true);
  CHECK(nothing.code == 2);
  CHECK(nothing.out.find("error[record.nothing]") != std::string::npos);
}

namespace {
// A Python that can import torch (Debian's python3-torch), or "".
std::string torch_python() {
  for (const char* p : {"python3", "/usr/bin/python3"}) {
    auto o = test_shell::shell(std::string(p) + " -c 'import torch.distributed' >/dev/null 2>&1 && echo yes");
    if (o.out.find("yes") != std::string::npos) return p;
  }
  return "";
}
}  // namespace

TEST_CASE("cli: record runs a real gloo program and every spawned rank writes its file") {
  const std::string python = torch_python();
  if (python.empty()) {
    MESSAGE("skipped: no python3 with torch here (scripts/deps.sh installs python3-torch)");
    return;
  }
  TempDir t;
  const std::string dir = t / "rec";
  // Two ranks spawned by torch.multiprocessing: each child process records itself.
  auto o = cli("record -o " + dir + " -- " + python + " " + data("tutorial.py") + " ring 2", true);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  CHECK(o.out.find("2 ranks") != std::string::npos);
  for (int r = 0; r < 2; ++r) CHECK(fs::exists(dir + "/rank" + std::to_string(r) + ".json"));
  const auto sc = import_ok({dir});
  const auto ops = rank_ops(nlohmann::json::parse(sc.json), true);
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> want;
    want.push_back("isend->" + std::to_string(1 - r) + " x1024");
    want.push_back("recv<-" + std::to_string(1 - r) + " x1024");
    want.push_back("wait");
    want.push_back("barrier");
    CHECK_MESSAGE(ops[static_cast<std::size_t>(r)] == want, "rank " << r);
  }
  CHECK(cli("analyze " + dir).code != 2);
}
