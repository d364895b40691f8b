// Device-only checks (DESIGN §6): every collective and algorithm on the cuda backend
// (several ranks per GPU included) and on the nccl backend, bit-identical to the cpu
// backend on exact inputs; programs with compute spans; faults; our kernels at odd
// offsets for every dtype and op. Without a GPU every test says so and the binary
// exits with 77, which ctest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/run.h"
#include "collscope/scenario.h"

using namespace collscope;

namespace {

int gpus() {
  for (auto& b : make_backends())
    if (b->info().name == "cuda") {
      if (!b->info().available) return 0;
      const std::string d = b->info().description;  // "... (N GPU(s))"
      const auto open = d.rfind(" (");
      return open == std::string::npos ? 1 : std::stoi(d.substr(open + 2));
    }
  return 0;
}

struct Ran {
  RunOutcome out;
  bool ok = false;
};

Ran run(const QuickSpec& q, const std::string& backend, RunMode mode = RunMode::fast,
        std::vector<Fault> faults = {}) {
  Ran r;
  auto s = scenario_from_spec(q);
  REQUIRE(s.ok());
  auto sched = lower_scenario(*s);
  REQUIRE(sched.ok());
  const Scenario sc = *s;
  RunOptions o;
  o.backend = backend;
  o.mode = mode;
  o.faults = std::move(faults);
  auto out = execute(*sched, [&](std::int32_t b, std::int32_t rank, std::uint64_t i) {
    return initial_value(sc.buffers[static_cast<std::size_t>(b)], rank, i);
  }, o);
  REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().format()));
  r.out = std::move(*out);
  r.ok = true;
  return r;
}

}  // namespace

TEST_CASE("gpu: every collective and algorithm on the cuda backend matches the cpu backend byte for byte") {
  const int g = gpus();
  if (g == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (Collective c : kAllCollectives)
    for (const auto& algo : algorithm_names(c))
      for (std::int32_t ranks : {2, 3, 4, 8}) {
        QuickSpec q;
        q.coll = c;
        q.algorithm = algo;
        q.ranks = ranks;  // more ranks than GPUs: several share one
        q.count = 1000 + 3;  // not a multiple of the vector width
        q.dtype = ranks % 2 ? DType::bfloat16 : DType::float32;
        q.root = ranks - 1;
        CAPTURE(name_of(c));
        CAPTURE(algo);
        CAPTURE(ranks);
        auto cpu = run(q, "cpu");
        auto gpu = run(q, "cuda");
        CHECK(gpu.out.verified());
        CHECK(gpu.out.result == cpu.out.result);
        auto obs = run(q, "cuda", RunMode::observable);
        CHECK(obs.out.result == cpu.out.result);
        CHECK_FALSE(gpu.out.record.transfers.empty());
      }
}

TEST_CASE("gpu: every dtype and op, odd counts, on the cuda backend") {
  if (gpus() == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (DType t : kAllDTypes)
    for (ReduceOp op : kAllReduceOps) {
      QuickSpec q;
      q.coll = Collective::allreduce;
      q.algorithm = "ring";
      q.ranks = 5;
      q.count = 4099;
      q.dtype = t;
      q.op = op;
      CAPTURE(name_of(t));
      CAPTURE(name_of(op));
      auto cpu = run(q, "cpu");
      auto gpu = run(q, "cuda");
      CHECK(gpu.out.verified());
      CHECK(gpu.out.result == cpu.out.result);
    }
}

TEST_CASE("gpu: the nccl backend runs every algorithm with one rank per GPU") {
  const int g = gpus();
  if (g == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (Collective c : kAllCollectives)
    for (const auto& algo : algorithm_names(c)) {
      QuickSpec q;
      q.coll = c;
      q.algorithm = algo;
      q.ranks = g;
      q.count = 1 << 16;
      CAPTURE(name_of(c));
      CAPTURE(algo);
      auto cpu = run(q, "cpu");
      auto nccl = run(q, "nccl");
      CHECK(nccl.out.verified());
      CHECK(nccl.out.result == cpu.out.result);
    }
  // More ranks than GPUs: refused cleanly.
  QuickSpec q;
  q.ranks = g + 1;
  auto s = scenario_from_spec(q);
  REQUIRE(s.ok());
  auto sched = lower_scenario(*s);
  REQUIRE(sched.ok());
  RunOptions o;
  o.backend = "nccl";
  auto out = execute(*sched, [](std::int32_t, std::int32_t, std::uint64_t) { return 1.0; }, o);
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().id == "backend.nccl_ranks");
  CHECK(out.error().exit == ExitCode::backend_failure);
}

TEST_CASE("gpu: NCCL's own collectives and ours run on the same buffers and agree") {
  const int g = gpus();
  if (g == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (Collective c : kAllCollectives) {
    if (!has_native(c)) continue;
    QuickSpec q;
    q.coll = c;
    q.ranks = g;
    q.count = 1 << 18;
    q.dtype = DType::int32;  // exact in every order
    q.algorithm = "nccl";
    CAPTURE(name_of(c));
    auto native = run(q, "nccl");
    q.algorithm = "ring";
    if (!find_algorithm(c, "ring")) q.algorithm = algorithm_names(c).front();
    auto ours = run(q, "nccl");
    CHECK(native.out.verified());
    CHECK(ours.out.verified());
    CHECK(native.out.result == ours.out.result);
    CHECK(native.out.record.backend_detail.rfind("NCCL 2.", 0) == 0);
  }
}

TEST_CASE("gpu: lessons with point-to-point programs and compute spans run on the cuda backend") {
  if (gpus() == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (const char* name : {"16-ring-allreduce-by-hand.json", "17-ring-allreduce-chunked.json",
                           "18-ddp-gradient-averaging.json", "19-pipeline-parallel.json", "21-hybrid-parallel.json",
                           "22-custom-algorithm.json"}) {
    CAPTURE(name);
    auto s = load_scenario(std::string(COLLSCOPE_SOURCE_DIR) + "/scenarios/" + name);
    REQUIRE(s.ok());
    auto sched = lower_scenario(*s);
    REQUIRE(sched.ok());
    const Scenario sc = *s;
    auto init = [&](std::int32_t b, std::int32_t r, std::uint64_t i) {
      return initial_value(sc.buffers[static_cast<std::size_t>(b)], r, i);
    };
    RunOptions o;
    o.backend = "cuda";
    auto gpu = execute(*sched, init, o);
    REQUIRE(gpu.ok());
    CHECK(gpu->verified());
    o.backend = "cpu";
    auto cpu = execute(*sched, init, o);
    REQUIRE(cpu.ok());
    CHECK(gpu->result == cpu->result);
  }
}

TEST_CASE("gpu: faults on the cuda backend: a delay still verifies, a corruption is caught") {
  if (gpus() == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  QuickSpec q;
  q.algorithm = "ring";
  q.ranks = 4;
  q.count = 4096;
  q.dtype = DType::int32;
  Fault delay;
  delay.rank = 1;
  delay.step = 2;
  delay.kind = Fault::Kind::delay;
  delay.ms = 20;
  auto d = run(q, "cuda", RunMode::fast, {delay});
  CHECK(d.out.verified());
  CHECK(d.out.record.time_us >= 20000.0);
  Fault corrupt;
  corrupt.rank = 1;
  corrupt.step = 1;
  corrupt.kind = Fault::Kind::corrupt;
  auto c = run(q, "cuda", RunMode::fast, {corrupt});
  CHECK_FALSE(c.out.verified());
  CHECK(c.out.numeric.wrong > 0);
}

TEST_CASE("gpu: crash and hang faults on the GPU backends fail the run with exit 3, never hang") {
  const int g = gpus();
  if (g == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (const char* backend : {"cuda", "nccl"})
    for (RunMode mode : {RunMode::fast, RunMode::observable})
      for (Fault::Kind kind : {Fault::Kind::crash, Fault::Kind::hang}) {
        QuickSpec q;
        q.algorithm = "ring";
        q.ranks = std::string(backend) == "nccl" ? g : 4;
        if (q.ranks < 2) continue;  // nccl with one GPU: nobody to wait for the faulty rank
        q.count = 1 << 16;
        q.dtype = DType::int32;
        CAPTURE(backend);
        CAPTURE(static_cast<int>(mode));
        CAPTURE(name_of(kind));
        auto s = scenario_from_spec(q);
        REQUIRE(s.ok());
        auto sched = lower_scenario(*s);
        REQUIRE(sched.ok());
        RunOptions o;
        o.backend = backend;
        o.mode = mode;
        o.timeout_s = 1.0;
        Fault f;
        f.rank = 1;
        f.step = 1;
        f.kind = kind;
        o.faults = {f};
        const auto t0 = std::chrono::steady_clock::now();
        auto out = execute(*sched, [](std::int32_t, std::int32_t, std::uint64_t) { return 1.0; }, o);
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        REQUIRE_FALSE(out.ok());
        CHECK(out.error().exit == ExitCode::backend_failure);
        CHECK(out.error().message.find("rank 1") != std::string::npos);
        CHECK(out.error().message.find("at step 1") != std::string::npos);
        if (mode == RunMode::fast) CHECK(out.error().message.find("waiting for it") != std::string::npos);
        if (kind == Fault::Kind::crash) {
          CHECK(out.error().id == "backend.rank_failed");
          CHECK(out.error().message.find("crashed") != std::string::npos);
        } else {
          CHECK(out.error().id == "backend.timeout");
          CHECK(took >= 1.0);
        }
        CHECK(took < 20.0);  // the whole run, with its set-up, ended instead of hanging
      }
}

int main(int argc, char** argv) {
  doctest::Context ctx(argc, argv);
  const int result = ctx.run();
  if (ctx.shouldExit()) return result;
  if (result == 0 && gpus() == 0) {
    std::printf("GPU tests skipped: no GPU on this machine (%s)\n", "see `collscope list`");
    return 77;
  }
  return result;
}
