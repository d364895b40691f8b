// All-to-alls with split sizes from real jobs: PyTorch's all_to_all_single with
// input_split_sizes and output_split_sizes (a mixture of experts' dispatch and combine),
// and all_to_all with tensors of different sizes, import as the alltoallv collective with
// each pair of ranks' counts; an even all-to-all stays alltoall. Read from a real gloo run
// under `collscope record` (tests/data/import/recorded/moe), from newer PyTorch's
// profiler traces ("In split size", "Out split size") and from Flight Recorder dumps
// (one tensor per peer), and checked across ranks: what rank i sends rank j is what j
// expects from i.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "collscope/job.h"
#include "collscope/scenario.h"
#include "shell.h"

using namespace collscope;

namespace {

namespace fs = std::filesystem;
using Table = std::vector<std::vector<std::uint64_t>>;

std::string data(const std::string& rel) { return std::string(COLLSCOPE_SOURCE_DIR) + "/tests/data/import/" + rel; }

test_shell::Output cli(const std::string& args, bool with_stderr = true) {
  return test_shell::shell(std::string(COLLSCOPE_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
}

// tests/data/import/tutorial.py's moe_table, and the handwritten files' A2A_TABLE.
Table moe_table(int size, std::uint64_t token) {
  Table t(static_cast<std::size_t>(size), std::vector<std::uint64_t>(static_cast<std::size_t>(size)));
  for (int r = 0; r < size; ++r)
    for (int p = 0; p < size; ++p)
      t[static_cast<std::size_t>(r)][static_cast<std::size_t>(p)] =
          static_cast<std::uint64_t>((3 * r + 2 * p + 1) % 5) * token;
  return t;
}
const Table kHandwritten = {{8, 0, 20}, {4, 12, 4}, {16, 8, 0}};  // tokens of 4 elements

Table transpose(const Table& t) {
  Table o(t.size(), std::vector<std::uint64_t>(t.size()));
  for (std::size_t i = 0; i < t.size(); ++i)
    for (std::size_t j = 0; j < t.size(); ++j) o[j][i] = t[i][j];
  return o;
}

std::vector<std::uint64_t> column(const Table& t, std::size_t r) {
  std::vector<std::uint64_t> c;
  for (const auto& row : t) c.push_back(row[r]);
  return c;
}

// The per-peer counts each alltoallv call of the lowered schedule moves.
std::vector<Table> lowered_tables(const std::string& json) {
  auto parsed = parse_scenario(json, "imported");
  REQUIRE_MESSAGE(parsed, (parsed ? "" : parsed.error().format()));
  auto lowered = lower_scenario(*parsed);
  REQUIRE_MESSAGE(lowered, (lowered ? "" : lowered.error().format()));
  std::vector<Table> out;
  for (const auto& c : lowered->calls) {
    if (c.kind != CallKind::collective || c.args.coll != Collective::alltoallv) continue;
    REQUIRE(c.args.peers);
    const auto n = c.args.peers->ranks;
    Table t(static_cast<std::size_t>(n), std::vector<std::uint64_t>(static_cast<std::size_t>(n)));
    for (std::int32_t s = 0; s < n; ++s)
      for (std::int32_t d = 0; d < n; ++d)
        t[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)] = c.args.peers->count(s, d);
    out.push_back(t);
  }
  return out;
}

std::vector<std::string> ops_of(const std::string& json) {
  std::vector<std::string> ops;
  const auto sc = nlohmann::json::parse(json);
  for (const auto& e : sc["program"])
    if (e["op"] != "compute") ops.push_back(e["op"]);
  return ops;
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/collscope-a2a-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

}  // namespace

TEST_CASE("import: a real gloo run's all_to_all_single with split sizes becomes alltoallv with every peer's counts") {
  const Table dispatch = moe_table(4, 8);  // tokens of 8 floats
  auto job = load_job({data("recorded/moe")});
  REQUIRE_MESSAGE(job, (job ? "" : job.error().format()));
  REQUIRE(job->world == 4);
  for (std::size_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    std::vector<const JobCall*> a2a;
    for (const auto& c : job->ranks[r].calls)
      if (c.kind == "alltoall" || c.kind == "alltoallv") a2a.push_back(&c);
    REQUIRE(a2a.size() == 3);
    CHECK(a2a[0]->kind == "alltoallv");
    CHECK(a2a[0]->send_counts == dispatch[r]);
    CHECK(a2a[0]->recv_counts == column(dispatch, r));
    CHECK(a2a[1]->kind == "alltoallv");  // the combine: the transposed splits
    CHECK(a2a[1]->send_counts == column(dispatch, r));
    CHECK(a2a[1]->recv_counts == dispatch[r]);
    CHECK(a2a[2]->kind == "alltoall");  // no split sizes: an even all-to-all
    CHECK(a2a[2]->count == 4);
    CHECK(a2a[2]->send_counts.empty());
  }
  CHECK(analyze_job(*job).findings.empty());
  auto sc = job_scenario(*job);
  REQUIRE_MESSAGE(sc, (sc ? "" : sc.error().format()));
  CHECK(ops_of(sc->json) == std::vector<std::string>{"alltoallv", "alltoallv", "alltoall", "barrier"});
  const auto tables = lowered_tables(sc->json);
  REQUIRE(tables.size() == 2);
  CHECK(tables[0] == dispatch);
  CHECK(tables[1] == transpose(dispatch));
  // The caption keeps the job's own words.
  CHECK(sc->json.find("all_to_all") != std::string::npos);

  // It runs and verifies: every token reaches its expert and comes home.
  TempDir t;
  const std::string out = t / "moe.json";
  auto imp = cli("import " + data("recorded/moe") + " -o " + out);
  REQUIRE_MESSAGE(imp.code == 0, imp.out);
  auto run = cli("run " + out + " --json", false);
  REQUIRE_MESSAGE(run.code == 0, run.out);
  CHECK(nlohmann::json::parse(run.out)["verified"] == true);
}

TEST_CASE("import: torch 1.13's profiler trace of the same run takes the split sizes from the recording") {
  auto job = load_job({data("profiled/moe")}, {data("recorded/moe")});
  REQUIRE_MESSAGE(job, (job ? "" : job.error().format()));
  auto sc = job_scenario(*job);
  REQUIRE_MESSAGE(sc, (sc ? "" : sc.error().format()));
  const auto tables = lowered_tables(sc->json);
  REQUIRE(tables.size() == 2);
  CHECK(tables[0] == moe_table(4, 8));
  CHECK(tables[1] == transpose(moe_table(4, 8)));
}

TEST_CASE("import: newer profiler traces and Flight Recorder dumps carry the split sizes") {
  // The profiler's "In split size" / "Out split size" (rows of 4 elements), and the
  // dump's one tensor per peer of all_to_all.
  for (const char* dir : {"a2a/kineto", "a2a/fr_list"}) {
    CAPTURE(dir);
    auto job = load_job({data(dir)});
    REQUIRE_MESSAGE(job, (job ? "" : job.error().format()));
    for (std::size_t r = 0; r < 3; ++r) {
      CHECK(job->ranks[r].calls[0].kind == "alltoallv");
      CHECK(job->ranks[r].calls[0].send_counts == kHandwritten[r]);
      CHECK(job->ranks[r].calls[0].recv_counts == column(kHandwritten, r));
      CHECK(job->ranks[r].calls[1].kind == "alltoall");
      CHECK(job->ranks[r].calls[1].count == 8);
    }
    auto sc = job_scenario(*job);
    REQUIRE_MESSAGE(sc, (sc ? "" : sc.error().format()));
    CHECK(ops_of(sc->json) == std::vector<std::string>{"alltoallv", "alltoall", "allreduce"});
    const auto tables = lowered_tables(sc->json);
    REQUIRE(tables.size() == 1);
    CHECK(tables[0] == kHandwritten);
  }
}

TEST_CASE("import: a dump of all_to_all_single has no split sizes: one error, and --sizes supplies them") {
  auto job = load_job({data("a2a/fr_single")});
  REQUIRE(job);
  CHECK(job->ranks[0].calls[0].kind == "alltoallv");
  CHECK(job->ranks[0].calls[0].send_counts.empty());
  auto sc = job_scenario(*job);
  REQUIRE_FALSE(sc);
  CHECK(sc.error().id == "import.no_splits");
  CHECK(sc.error().message.find("rank 0's nccl:all_to_all (/entries/0)") != std::string::npos);
  CHECK(sc.error().hint.find("--sizes") != std::string::npos);
  auto o = cli("import " + data("a2a/fr_single"));
  CHECK(o.code == 2);
  CHECK(o.out.find("error[import.no_splits]") != std::string::npos);
  // The profiler's trace of the same calls knows them.
  auto merged = load_job({data("a2a/fr_single")}, {data("a2a/kineto")});
  REQUIRE_MESSAGE(merged, (merged ? "" : merged.error().format()));
  auto fixed = job_scenario(*merged);
  REQUIRE_MESSAGE(fixed, (fixed ? "" : fixed.error().format()));
  CHECK(lowered_tables(fixed->json) == std::vector<Table>{kHandwritten});
}

TEST_CASE("analyze: split sizes that do not match across ranks are a finding, import refuses them") {
  auto job = load_job({data("a2a/fr_mismatch")});
  REQUIRE_MESSAGE(job, (job ? "" : job.error().format()));
  const auto a = analyze_job(*job);
  REQUIRE(a.findings.size() == 1);
  CHECK(a.findings[0].id == "analyze.split_mismatch");
  CHECK(a.findings[0].message ==
        "the split sizes of nccl:all_to_all seq 1 of group 0 (default_pg) do not match: rank 0 sends 20 elements to "
        "rank 2 but rank 2 expects 12 from it; rank i's input split for rank j must equal rank j's output split for "
        "rank i");
  auto sc = job_scenario(*job);
  REQUIRE_FALSE(sc);
  CHECK(sc.error().id == "import.inconsistent");
  CHECK(sc.error().message.find("rank 0 sends 20 elements to rank 2 but rank 2 expects 12") != std::string::npos);
  auto an = cli("analyze " + data("a2a/fr_mismatch"));
  CHECK(an.code == 1);
  CHECK(an.out.find("analyze.split_mismatch") != std::string::npos);
  auto imp = cli("import " + data("a2a/fr_mismatch"));
  CHECK(imp.code == 2);
  CHECK(imp.out.find("error[import.inconsistent]") != std::string::npos);
}

TEST_CASE("import: property: random alltoallv tables, on the world and on groups, replay with their counts") {
  std::mt19937 rng(77);
  for (int trial = 0; trial < 40; ++trial) {
    const int world = std::uniform_int_distribution<int>(2, 7)(rng);
    CAPTURE(trial);
    CAPTURE(world);
    Job job;
    job.world = world;
    job.ranks.resize(static_cast<std::size_t>(world));
    JobGroup all;
    all.id = "0";
    all.world = true;
    for (int r = 0; r < world; ++r) all.ranks.push_back(r);
    job.groups["0"] = all;
    // A group of some ranks, in a shuffled order (group rank != world rank).
    JobGroup part;
    part.id = "1";
    part.ranks = all.ranks;
    std::shuffle(part.ranks.begin(), part.ranks.end(), rng);
    part.ranks.resize(static_cast<std::size_t>(std::uniform_int_distribution<int>(2, world)(rng)));
    job.groups["1"] = part;
    for (int r = 0; r < world; ++r) {
      job.ranks[static_cast<std::size_t>(r)].rank = r;
      job.ranks[static_cast<std::size_t>(r)].present = true;
    }
    const int calls = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<Table> want;
    std::map<std::string, std::int64_t> seq;
    for (int k = 0; k < calls; ++k) {
      const JobGroup& g = job.groups[std::uniform_int_distribution<int>(0, 1)(rng) ? "1" : "0"];
      const std::size_t n = g.ranks.size();
      Table t(n, std::vector<std::uint64_t>(n));
      for (auto& row : t)
        for (auto& x : row) x = std::uniform_int_distribution<std::uint64_t>(0, 9)(rng);
      t[0][n - 1] = 3, t[n - 1][0] = 5;  // never even
      want.push_back(t);
      ++seq[g.id];
      for (std::size_t i = 0; i < n; ++i) {
        JobCall c;
        c.rank = g.ranks[i];
        c.name = "gloo:all_to_all";
        c.kind = "alltoallv";
        c.group = g.id;
        c.seq = seq[g.id];
        c.dtype = "Float";
        c.dt = DType::float32;
        c.dtype_bytes = 4;
        c.state = "completed";
        c.send_counts = t[i];
        c.recv_counts = column(t, i);
        c.count = std::accumulate(t[i].begin(), t[i].end(), std::uint64_t{0});
        job.ranks[static_cast<std::size_t>(g.ranks[i])].calls.push_back(c);
      }
    }
    CHECK(analyze_job(job).findings.empty());
    auto sc = job_scenario(job);
    REQUIRE_MESSAGE(sc, (sc ? "" : sc.error().format()));
    CHECK(lowered_tables(sc->json) == want);
    // Any one count changed on one side is found, and import refuses it.
    const std::size_t at = std::uniform_int_distribution<std::size_t>(0, job.ranks.size() - 1)(rng);
    auto& victim = job.ranks[at].calls;
    if (victim.empty()) continue;
    auto& c = victim[std::uniform_int_distribution<std::size_t>(0, victim.size() - 1)(rng)];
    c.recv_counts[std::uniform_int_distribution<std::size_t>(0, c.recv_counts.size() - 1)(rng)] += 1;
    CHECK(analyze_job(job).findings.at(0).id == "analyze.split_mismatch");
    auto bad = job_scenario(job);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().id == "import.inconsistent");
  }
}

TEST_CASE("cli: record writes all_to_all_single's split sizes, live, on 3 gloo ranks") {
  std::string python;
  for (const char* p : {"python3", "/usr/bin/python3"})
    if (test_shell::shell(std::string(p) + " -c 'import torch.distributed' >/dev/null 2>&1 && echo yes")
            .out.find("yes") != std::string::npos) {
      python = p;
      break;
    }
  if (python.empty()) {
    MESSAGE("skipped: no python3 with torch here (scripts/deps.sh installs python3-torch)");
    return;
  }
  TempDir t;
  const std::string dir = t / "rec";
  auto o = cli("record -o " + dir + " -- " + python + " " + data("tutorial.py") + " moe 3");
  REQUIRE_MESSAGE(o.code == 0, o.out);
  auto job = load_job({dir});
  REQUIRE_MESSAGE(job, (job ? "" : job.error().format()));
  auto sc = job_scenario(*job);
  REQUIRE_MESSAGE(sc, (sc ? "" : sc.error().format()));
  const Table dispatch = moe_table(3, 8);
  CHECK(lowered_tables(sc->json) == std::vector<Table>{dispatch, transpose(dispatch)});
}
