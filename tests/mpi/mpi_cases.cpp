// The mpi backend against the cpu backend, many cases per launch: started under mpirun
// (tests/CMakeLists: one ctest entry per process count and transport), every process
// runs every case on the mpi backend, and rank 0 compares every rank's buffers byte for
// byte with the cpu backend's run of the same schedule on the same exact inputs.
//
//   collscope_mpi_cases --algorithms [--quick]   every collective, algorithm, count, root,
//                                                in place or not, fast and observable mode;
//                                                every dtype and op on a few; --algo mpi
//   collscope_mpi_cases --lessons DIR            every lesson of DIR whose world is the job's
//
// One launch per process count keeps the tests fast: starting a job costs more than
// running a few hundred small cases in it. Prints one line per failure and a summary on
// rank 0; exits 1 when any case failed (every process leaves with the same code).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/processes.h"
#include "collscope/run.h"
#include "collscope/scenario.h"

using namespace collscope;

namespace {

struct Tally {
  int cases = 0, failed = 0;
  void fail(const std::string& what) {
    ++failed;
    if (failed <= 40) std::printf("FAIL %s\n", what.c_str());
    std::fflush(stdout);
  }
};

InitFn init_of(const Scenario& sc) {
  return [&sc](std::int32_t b, std::int32_t r, std::uint64_t i) {
    return static_cast<std::size_t>(b) < sc.buffers.size()
               ? initial_value(sc.buffers[static_cast<std::size_t>(b)], r, i)
               : 0.0;
  };
}

// Runs `sc` on the mpi backend in both modes; rank 0 compares with the cpu backend (for
// MPI's own collectives: with the cpu backend's run of the call by our algorithms, which
// exact inputs make equal byte for byte). Every process makes the same calls (SPMD).
void check(const Scenario& sc, const std::string& what, Tally& t) {
  const int rank = processes::reporting() ? 0 : 1;
  auto s = lower_scenario(sc, lower_options_for(capabilities_of("mpi")));
  if (!s) {
    if (rank == 0) t.fail(what + ": " + s.error().format());
    return;
  }
  const InitFn init = init_of(sc);
  std::optional<RunOutcome> cpu;
  std::string cpu_error;
  for (const RunMode mode : {RunMode::fast, RunMode::observable}) {
    ++t.cases;
    const std::string name = what + (mode == RunMode::fast ? " (fast)" : " (observable)");
    RunOptions o;
    o.backend = "mpi";
    o.mode = mode;
    o.snapshot_budget = 0;
    o.timeout_s = 60;
    o.dump_on_failure = false;
    auto got = execute(*s, init, o);
    if (!got) {
      if (rank == 0) t.fail(name + ": " + got.error().format());
      // A failed job cannot go on: its processes cannot meet again.
      if (got.error().exit == ExitCode::backend_failure) processes::finish(3);
      continue;
    }
    if (!got->verified()) {
      if (rank == 0)
        t.fail(name + ": not verified: " + got->numeric.message() +
               (got->symbolic.ok() ? "" : " " + got->symbolic.error().format()));
      continue;
    }
    if (rank != 0) continue;
    if (!cpu && cpu_error.empty()) {
      Scenario ours = sc;
      for (auto& op : ours.program)
        if (find_native(op.algorithm)) op.algorithm = "auto";
      auto cs = lower_scenario(ours, lower_options_for(capabilities_of("mpi")));
      RunOptions c;
      c.snapshot_budget = 0;
      auto r = cs ? execute(*cs, init, c) : Result<RunOutcome>(cs.error());
      if (r) cpu = std::move(*r);
      else cpu_error = r.error().format();
    }
    if (!cpu) {
      t.fail(name + ": the cpu backend failed: " + cpu_error);
      continue;
    }
    // The user's buffers (another algorithm may have scratch buffers of its own).
    const std::size_t user = sc.buffers.size();
    got->result.resize(user);
    cpu->result.resize(user);
    if (got->result != cpu->result) {
      std::string where;
      for (std::size_t b = 0; b < got->result.size() && where.empty(); ++b)
        for (std::size_t r = 0; r < got->result[b].size() && where.empty(); ++r)
          if (got->result[b][r] != cpu->result[b][r])
            where = " (first difference: rank " + std::to_string(r) + " buffer " + std::to_string(b) + ")";
      t.fail(name + ": bytes differ from the cpu backend" + where);
    }
  }
}

void algorithms(std::int32_t ranks, bool quick, Tally& t) {
  const std::vector<std::uint64_t> counts =
      quick ? std::vector<std::uint64_t>{1, 37} : std::vector<std::uint64_t>{0, 1, 5, 37, 300};
  std::vector<std::string> names;
  for (Collective c : kAllCollectives) {
    std::vector<std::string> algos = algorithm_names(c);
    if (has_native("mpi", c)) algos.push_back("mpi");
    for (const std::string& algo : algos)
      for (std::uint64_t count : c == Collective::barrier ? std::vector<std::uint64_t>{0} : counts)
        for (int in_place = 0; in_place <= 1; ++in_place) {
          if (in_place ? !supports_in_place(c) : !supports_out_of_place(c)) continue;
          std::vector<std::int32_t> roots = {0};
          if (has_root(c) && ranks > 1) roots.push_back(ranks - 1);
          if (has_root(c) && ranks > 2 && !quick) roots.push_back(ranks / 2);
          for (std::int32_t root : roots) {
            QuickSpec q;
            q.coll = c;
            q.algorithm = algo;
            q.ranks = ranks;
            q.count = count;
            q.root = root;
            q.in_place = in_place != 0;
            auto sc = scenario_from_spec(q);
            const std::string what = std::string(name_of(c)) + " " + algo + " ranks " + std::to_string(ranks) +
                                     " count " + std::to_string(count) + " root " + std::to_string(root) +
                                     (in_place ? " in place" : "");
            if (!sc) {
              t.fail(what + ": " + sc.error().format());
              continue;
            }
            check(*sc, what, t);
          }
        }
  }
  // Every dtype and op through our kernels (and MPI's own where it can reduce them).
  for (DType d : kAllDTypes)
    for (ReduceOp op : kAllReduceOps)
      for (const char* algo : {"ring", "rabenseifner", "mpi"}) {
        const bool mpi_refuses =
            std::string(algo) == "mpi" && (d == DType::float16 || d == DType::bfloat16 || op == ReduceOp::avg);
        if (quick && std::string(algo) == "rabenseifner") continue;
        QuickSpec q;
        q.algorithm = algo;
        q.ranks = ranks;
        q.count = 129;
        q.dtype = d;
        q.op = op;
        auto sc = scenario_from_spec(q);
        const std::string what =
            std::string("allreduce ") + algo + " " + std::string(name_of(d)) + " " + std::string(name_of(op));
        if (!sc) {
          t.fail(what + ": " + sc.error().format());
          continue;
        }
        if (mpi_refuses) {
          // Refused while lowering, with the reason, on every process alike.
          ++t.cases;
          auto s = lower_scenario(*sc, lower_options_for(capabilities_of("mpi")));
          if (s || s.error().id != "scenario.native_unsupported") t.fail(what + ": MPI should refuse it");
          continue;
        }
        check(*sc, what, t);
      }
}

void lessons(const std::string& dir, std::int32_t ranks, Tally& t) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  int ran = 0;
  for (const auto& f : files) {
    auto sc = load_scenario(f);
    if (!sc || sc->ranks != ranks) continue;  // (the deadlock lesson does not load, on purpose)
    ++ran;
    check(*sc, std::filesystem::path(f).filename().string(), t);
  }
  if (ran == 0) t.fail("no lesson of " + std::to_string(ranks) + " ranks in " + dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (auto st = processes::join(); !st) {
    std::fprintf(stderr, "%s\n", st.error().format().c_str());
    return 3;
  }
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Tally t;
  bool quick = false;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--quick") quick = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--algorithms") algorithms(ranks, quick, t);
    if (a == "--lessons" && i + 1 < argc) lessons(argv[++i], ranks, t);
  }
  int failed = t.failed;
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (processes::reporting()) std::printf("%d processes: %d runs, %d failed\n", ranks, t.cases, failed);
  return processes::finish(failed ? 1 : 0);
}
