// Device-only checks (docs/ARCHITECTURE.md, "Backends"): every collective and algorithm on the cuda backend
// (several ranks per GPU included) and on the nccl backend, bit-identical to the cpu
// backend on exact inputs; programs with compute spans; faults; our kernels (copy,
// reduce, reduce-copy) against the host's element-wise operation at aligned and odd
// offsets for every dtype and op. Without a GPU every test says so and the binary
// exits with 77, which ctest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../engine/src/backends/cuda/kernels.h"
#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/elementwise.h"
#include "collscope/run.h"
#include "collscope/scenario.h"

using namespace collscope;

namespace {

// The repository's scenarios/: where it was built, or COLLSCOPE_SOURCE_DIR when the
// binaries run from another checkout (tests/gpu/run.sh --prebuilt).
std::string source_dir() {
  const char* env = std::getenv("COLLSCOPE_SOURCE_DIR");
  return env && *env ? env : COLLSCOPE_SOURCE_DIR;
}

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

Ran run(const QuickSpec& q, const std::string& backend, RunMode mode = RunMode::fast, std::vector<Fault> faults = {}) {
  Ran r;
  auto s = scenario_from_spec(q);
  REQUIRE(s.ok());
  auto sched = lower_scenario(*s, lower_options_for(capabilities_of(backend)));
  REQUIRE(sched.ok());
  const Scenario sc = *s;
  RunOptions o;
  o.backend = backend;
  o.mode = mode;
  o.faults = std::move(faults);
  auto out = execute(
      *sched,
      [&](std::int32_t b, std::int32_t rank, std::uint64_t i) {
        return initial_value(sc.buffers[static_cast<std::size_t>(b)], rank, i);
      },
      o);
  REQUIRE_MESSAGE(out.ok(), (out.ok() ? "" : out.error().format()));
  r.out = std::move(*out);
  r.ok = true;
  return r;
}

// Device memory for the kernel checks, freed on every path.
struct DeviceBytes {
  void* p = nullptr;
  explicit DeviceBytes(std::size_t bytes) { REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess); }
  ~DeviceBytes() { cudaFree(p); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  std::uint8_t* at(std::uint64_t byte) const { return static_cast<std::uint8_t*>(p) + byte; }
};

// Small values of every sign (wrapping for uint8), different for each buffer.
template <class T>
std::vector<T> pattern(std::size_t n, int seed) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<int>((i * 37 + static_cast<std::size_t>(seed) * 11) % 23);
    v[i] = from_double<T>(static_cast<double>(k - 11) / 4.0);
  }
  return v;
}

template <class T>
void upload(const DeviceBytes& d, const std::vector<T>& h) {
  REQUIRE(cudaMemcpy(d.p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
}

template <class T>
std::vector<T> download(const DeviceBytes& d, std::size_t n) {
  std::vector<T> h(n);
  REQUIRE(cudaMemcpy(h.data(), d.p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
  return h;
}

template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Copy, reduce and reduce-copy on device buffers of type T, element offsets chosen so
// that the three pointers are all 16-byte aligned, equally misaligned (a head, then
// vectors), or misaligned against each other (element by element throughout), with
// counts that leave tails of every length; compared byte for byte with the host's
// combine<T>, and nothing outside [offset, offset + n) of the destination may change.
template <class T>
void check_kernels(DType t) {
  constexpr std::uint64_t per = 16 / sizeof(T);  // elements in a 16-byte vector (2 to 16)
  constexpr std::uint64_t kMaxCount = 4099, kMaxOffset = 2 * per + 3;
  constexpr std::size_t kLen = kMaxCount + kMaxOffset;
  DeviceBytes d_dst(kLen * sizeof(T)), d_aux(kLen * sizeof(T)), d_src(kLen * sizeof(T));
  const auto dst0 = pattern<T>(kLen, 1), aux = pattern<T>(kLen, 2), src = pattern<T>(kLen, 3);
  upload(d_aux, aux);
  upload(d_src, src);
  struct Offsets {
    std::uint64_t dst, aux, src;
  };
  const std::vector<Offsets> offsets = {{0, 0, 0}, {per, 2 * per, 0}, {1, 1, 1}, {3, per + 3, 2 * per + 3},  // vectors
                                        {0, 1, 0}, {0, 0, 1},         {1, 0, 0}, {2, 3, 5}};  // mixed alignment
  const std::array<OpKind, 4> ops = {OpKind::sum, OpKind::prod, OpKind::min, OpKind::max};
  const std::uint64_t counts[] = {1, per - 1, per, per + 1, 3 * per + 5, 1000, kMaxCount};
  auto ptr = [](const DeviceBytes& d, std::uint64_t element) { return d.at(element * sizeof(T)); };
  for (const Offsets& o : offsets)
    for (std::uint64_t n : counts) {
      CAPTURE(o.dst);
      CAPTURE(o.aux);
      CAPTURE(o.src);
      CAPTURE(n);
      for (OpKind op : ops) {
        CAPTURE(static_cast<int>(op));
        // dst = aux op src
        upload(d_dst, dst0);
        REQUIRE(gpu::launch_reduce_copy(t, op, ptr(d_dst, o.dst), ptr(d_aux, o.aux), ptr(d_src, o.src), n, nullptr) ==
                cudaSuccess);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        auto want = dst0;
        for (std::uint64_t i = 0; i < n; ++i) want[o.dst + i] = combine<T>(op, aux[o.aux + i], src[o.src + i]);
        CHECK_MESSAGE(same_bytes(download<T>(d_dst, kLen), want), "reduce-copy");
        // dst = dst op src
        upload(d_dst, dst0);
        REQUIRE(gpu::launch_reduce(t, op, ptr(d_dst, o.dst), ptr(d_src, o.src), n, nullptr) == cudaSuccess);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        want = dst0;
        for (std::uint64_t i = 0; i < n; ++i) want[o.dst + i] = combine<T>(op, dst0[o.dst + i], src[o.src + i]);
        CHECK_MESSAGE(same_bytes(download<T>(d_dst, kLen), want), "reduce");
      }
      // dst = src
      upload(d_dst, dst0);
      REQUIRE(gpu::launch_copy(ptr(d_dst, o.dst), ptr(d_src, o.src), n * sizeof(T), nullptr) == cudaSuccess);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      auto want = dst0;
      for (std::uint64_t i = 0; i < n; ++i) want[o.dst + i] = src[o.src + i];
      CHECK_MESSAGE(same_bytes(download<T>(d_dst, kLen), want), "copy");
    }
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
        q.ranks = ranks;     // more ranks than GPUs: several share one
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

TEST_CASE("gpu: our kernels (copy, reduce, reduce-copy) match the host for every dtype and op, aligned or not") {
  if (gpus() == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  REQUIRE(cudaSetDevice(0) == cudaSuccess);
  for (DType t : kAllDTypes) {
    CAPTURE(name_of(t));
    switch (t) {
      case DType::int8:
        check_kernels<std::int8_t>(t);
        break;
      case DType::uint8:
        check_kernels<std::uint8_t>(t);
        break;
      case DType::int32:
        check_kernels<std::int32_t>(t);
        break;
      case DType::int64:
        check_kernels<std::int64_t>(t);
        break;
      case DType::float16:
        check_kernels<f16>(t);
        break;
      case DType::bfloat16:
        check_kernels<bf16>(t);
        break;
      case DType::float32:
        check_kernels<float>(t);
        break;
      case DType::float64:
        check_kernels<double>(t);
        break;
    }
  }
}

TEST_CASE("gpu: the ring all-reduce out of place (reduce-copy) and in place (reduce) on both GPU backends") {
  const int g = gpus();
  if (g == 0) {
    MESSAGE("skipped: no GPU");
    return;
  }
  for (DType t : kAllDTypes)
    for (ReduceOp op : kAllReduceOps)
      for (bool in_place : {false, true}) {
        QuickSpec q;
        q.coll = Collective::allreduce;
        q.algorithm = "ring";
        q.ranks = 5;     // several ranks per GPU on machines with fewer
        q.count = 4099;  // blocks at odd offsets, tails of every length
        q.dtype = t;
        q.op = op;
        q.in_place = in_place;
        CAPTURE(name_of(t));
        CAPTURE(name_of(op));
        CAPTURE(in_place);
        auto s = scenario_from_spec(q);
        REQUIRE(s.ok());
        auto sched = lower_scenario(*s);
        REQUIRE(sched.ok());
        const bool has_reduce_copy = std::any_of(sched->steps.begin(), sched->steps.end(), [](const Step& st) {
          return std::any_of(st.transfers.begin(), st.transfers.end(),
                             [](const Transfer& x) { return x.action == Action::reduce_copy; });
        });
        CHECK(has_reduce_copy == !in_place);
        auto cpu = run(q, "cpu");
        auto cuda = run(q, "cuda");
        CHECK(cuda.out.verified());
        CHECK(cuda.out.result == cpu.out.result);
        auto obs = run(q, "cuda", RunMode::observable);
        CHECK(obs.out.result == cpu.out.result);
        // One rank per GPU through NCCL (a communicator per run: a subset of the cases).
        if (g >= 2 && (op == ReduceOp::sum || t == DType::bfloat16)) {
          q.ranks = g;
          auto cpu_g = run(q, "cpu");
          auto nccl = run(q, "nccl");
          CHECK(nccl.out.verified());
          CHECK(nccl.out.result == cpu_g.out.result);
        }
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
  auto out = execute(
      *sched, [](std::int32_t, std::int32_t, std::uint64_t) { return 1.0; }, o);
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
  for (const char* name :
       {"16-ring-allreduce-by-hand.json", "17-ring-allreduce-chunked.json", "18-ddp-gradient-averaging.json",
        "19-pipeline-parallel.json", "21-hybrid-parallel.json", "22-custom-algorithm.json"}) {
    CAPTURE(name);
    auto s = load_scenario(source_dir() + "/scenarios/" + name);
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
        auto out = execute(
            *sched, [](std::int32_t, std::int32_t, std::uint64_t) { return 1.0; }, o);
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
