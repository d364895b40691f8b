// The cpu backend on hand-written schedules: every dtype and op, both modes,
// and a broken schedule that the numeric check must catch.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "backends/cpu/plan.h"
#include "collscope/run.h"
#include "hand_schedules.h"
#include "kernels/host_kernels.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

Schedule good_allreduce(std::uint64_t n, DType t, ReduceOp op) {
  auto s = two_rank_allreduce(n);
  s.dtype = t;
  s.calls.back().args.dtype = t;
  s.calls.back().args.op = op;
  add_step(s, {copy(0, 0, 0, 1, 1, 0, n), copy(1, 0, 0, 0, 1, 0, n)});
  add_step(s, {reduce(0, 1, 0, 0, 0, 0, n), reduce(1, 1, 0, 1, 0, 0, n)});
  if (op == ReduceOp::avg)
    add_step(
        s, {Transfer{{0, 0, 0}, {0, 0, 0}, n, Action::scale, 2}, Transfer{{1, 0, 0}, {1, 0, 0}, n, Action::scale, 2}});
  return s;
}

// The same all-reduce with reduce-copies: each rank writes (its own x) + (the other's x)
// into scratch, then copies it back.
Schedule reduce_copy_allreduce(std::uint64_t n, DType t, ReduceOp op) {
  auto s = two_rank_allreduce(n);
  s.dtype = t;
  s.calls.back().args.dtype = t;
  s.calls.back().args.op = op;
  add_step(s, {reduce_copy(1, 0, 0, 0, 0, 0, 0, 1, 0, n), reduce_copy(0, 0, 0, 1, 0, 0, 1, 1, 0, n)});
  add_step(s, {copy(0, 1, 0, 0, 0, 0, n), copy(1, 1, 0, 1, 0, 0, n)});
  if (op == ReduceOp::avg)
    add_step(
        s, {Transfer{{0, 0, 0}, {0, 0, 0}, n, Action::scale, 2}, Transfer{{1, 0, 0}, {1, 0, 0}, n, Action::scale, 2}});
  return s;
}

double small_ints(std::int32_t, std::int32_t rank, std::uint64_t i) {
  return static_cast<double>((rank * 3 + i) % 5 + 1);
}

}  // namespace

TEST_CASE("cpu backend: a hand-made allreduce is right in every dtype and op, in both modes") {
  for (DType t : kAllDTypes)
    for (ReduceOp op : kAllReduceOps) {
      CAPTURE(name_of(t));
      CAPTURE(name_of(op));
      const auto s = good_allreduce(37, t, op);
      RunOptions fast;
      fast.mode = RunMode::fast;
      RunOptions obs;
      obs.mode = RunMode::observable;
      auto a = execute(s, small_ints, fast);
      auto b = execute(s, small_ints, obs);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CHECK(a->symbolic.ok());
      CHECK(a->numeric.wrong == 0);
      CHECK(b->numeric.wrong == 0);
      CHECK(a->numeric.checked == 2 * 37);
      CHECK(a->result == b->result);
      // Observable mode keeps a snapshot of the inputs and one after every step.
      CHECK(b->record.snapshots.size() == s.steps.size() + 1);
      CHECK(b->record.steps.size() == s.steps.size());
      CHECK(a->record.transfers.size() == s.total_transfers());
    }
}

TEST_CASE("cpu backend: a reduce-copy gives the bytes of a copy then a reduce, in every dtype and op") {
  // The kernel on arbitrary bit patterns (NaNs, infinities, odd lengths).
  std::mt19937 rng(7);
  for (DType t : kAllDTypes)
    for (ReduceOp op : kAllReduceOps) {
      CAPTURE(name_of(t));
      CAPTURE(name_of(op));
      const std::size_t n = 1 + rng() % 61, bytes = n * size_of(t);
      std::vector<std::uint8_t> aux(bytes), src(bytes), want(bytes), got(bytes, 0xAB);
      for (auto& b : aux) b = static_cast<std::uint8_t>(rng());
      for (auto& b : src) b = static_cast<std::uint8_t>(rng());
      want = aux;
      kernels::reduce_bytes(t, kernels::op_kind(op), want.data(), src.data(), n);
      kernels::reduce_copy_bytes(t, kernels::op_kind(op), got.data(), aux.data(), src.data(), n);
      CHECK(got == want);
    }
  // And in a schedule, both modes, verified, with the same result as copy-then-reduce.
  for (DType t : kAllDTypes)
    for (ReduceOp op : kAllReduceOps) {
      CAPTURE(name_of(t));
      CAPTURE(name_of(op));
      for (RunMode mode : {RunMode::fast, RunMode::observable}) {
        RunOptions o;
        o.mode = mode;
        auto a = execute(reduce_copy_allreduce(29, t, op), small_ints, o);
        auto b = execute(good_allreduce(29, t, op), small_ints, o);
        REQUIRE(a.ok());
        REQUIRE(b.ok());
        CHECK(a->symbolic.ok());
        CHECK(a->numeric.wrong == 0);
        CHECK(a->numeric.checked == 2 * 29);
        CHECK(a->result[0] == b->result[0]);
      }
    }
}

TEST_CASE("cpu backend: the numeric check catches a missing reduction and names the element") {
  auto s = two_rank_allreduce(5);
  s.dtype = DType::int32;
  s.calls.back().args.dtype = DType::int32;
  add_step(s, {copy(0, 0, 0, 1, 1, 0, 5), copy(1, 0, 0, 0, 1, 0, 5)});
  add_step(s, {reduce(0, 1, 0, 0, 0, 0, 5)});  // rank 1 never adds
  auto out = execute(s, small_ints, RunOptions{});
  REQUIRE(out.ok());
  CHECK_FALSE(out->symbolic.ok());
  CHECK(out->numeric.wrong == 5);
  CHECK(out->numeric.rank == 1);
  CHECK(out->numeric.index == 0);
  CHECK(out->numeric.message().find("rank 1 x[0]") != std::string::npos);
  CHECK_FALSE(out->verified());
}

TEST_CASE("cpu backend: repeated fast runs keep the dataflow right across iterations") {
  // Out of place would be idempotent; an in-place allreduce repeated k times multiplies by 2^k.
  const auto s = good_allreduce(64, DType::int64, ReduceOp::sum);
  auto backend = find_backend("cpu");
  REQUIRE(backend.ok());
  auto session = (*backend)->open(s, SessionOptions{});
  REQUIRE(session.ok());
  for (std::int32_t r = 0; r < 2; ++r) {
    std::vector<std::int64_t> v(64, r + 1);
    REQUIRE((*session)->write_buffer(r, 0, v.data(), v.size() * 8).ok());
  }
  REQUIRE((*session)->run_all(10).ok());
  for (std::int32_t r = 0; r < 2; ++r) {
    std::vector<std::int64_t> v(64);
    REQUIRE((*session)->read_buffer(r, 0, v.data(), v.size() * 8).ok());
    CHECK(v[0] == 3 * 512);  // 1+2 = 3, then doubled 9 more times
    CHECK(v[63] == 3 * 512);
  }
}

TEST_CASE("cpu backend: unknown and unavailable backends are refused with their reasons") {
  auto unknown = find_backend("tpu");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().id == "backend.unknown");
  CHECK(unknown.error().hint.find("cpu") != std::string::npos);
  auto cuda = find_backend("cuda");
  REQUIRE_FALSE(cuda.ok());
  CHECK(cuda.error().id == "backend.unavailable");
  CHECK(cuda.error().exit == ExitCode::backend_failure);
}

TEST_CASE("cpu backend: lanes get a core each, or neighbours share cores evenly") {
  for (std::size_t cores = 1; cores <= 16; ++cores) {
    for (std::size_t lanes = 1; lanes <= 70; ++lanes) {
      std::vector<std::size_t> per_core(cores, 0);
      std::size_t last = 0;
      for (std::size_t r = 0; r < lanes; ++r) {
        const std::size_t c = cpu::core_for_lane(r, lanes, cores);
        REQUIRE(c < cores);
        CHECK(c >= last);  // neighbours share: the core index never goes back
        last = c;
        ++per_core[c];
      }
      const auto [lo, hi] = std::minmax_element(per_core.begin(), per_core.end());
      if (lanes <= cores) {
        CHECK(*hi == 1);  // a core of its own
      } else {
        CHECK(*hi - *lo <= 1);  // as evenly as they divide
        CHECK(*lo >= 1);        // no core left idle
      }
    }
  }
}

TEST_CASE("cpu backend: a buffer's memory is zeroed, large ones aligned to huge pages (calibrate measures on it)") {
  CHECK(cpu::allocate_memory(0) == nullptr);
  for (std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{4096 + 3}, std::uint64_t{5} << 20}) {
    const cpu::Memory m = cpu::allocate_memory(bytes);
    REQUIRE(m != nullptr);
    bool zero = true;
    for (std::uint64_t i = 0; i < bytes; ++i) zero = zero && m.get()[i] == 0;
    CHECK(zero);
    const auto at = reinterpret_cast<std::uintptr_t>(m.get());
    CHECK(at % 64 == 0);
    if (bytes >= (std::uint64_t{4} << 20)) CHECK(at % (std::uint64_t{2} << 20) == 0);
  }
}
