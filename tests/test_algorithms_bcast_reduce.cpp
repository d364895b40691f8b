// Broadcast, reduce and all-reduce algorithms: every one of them, lowered for many
// rank counts, element counts, roots, in place and out of place, must pass the
// symbolic check (right contributions, each exactly once, inputs untouched, no
// conflicts inside a step), and must keep the textbook number of steps.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "algorithm_case.h"
#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/collective.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/verify.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

using Case = AlgoCase;

// Lowers and verifies every combination for every algorithm of one collective.
void check_all(Collective coll) {
  const std::int32_t rank_counts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 31, 64};
  const std::uint64_t counts[] = {0, 1, 7, 1000};
  const auto algos = algorithm_names(coll);
  REQUIRE(!algos.empty());
  for (const std::string& algo : algos) {
    for (std::int32_t n : rank_counts) {
      std::vector<std::int32_t> roots = {0};
      if (has_root(coll)) roots = {0, n - 1, n / 2};
      std::sort(roots.begin(), roots.end());
      roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
      for (std::uint64_t count : counts)
        for (std::int32_t root : roots)
          for (bool in_place : {true, false}) {
            const Case c{coll, algo, n, count, root, in_place};
            const Schedule s = lower(c);
            const Status v = verify_symbolic(s);
            REQUIRE_MESSAGE(v.ok(), describe(c) << ": " << (v.ok() ? "" : v.error().format()));
            check_captions(s, c);
          }
    }
  }
}

void check_verifies(const Case& c) {
  const Status v = verify_symbolic(lower(c));
  CHECK_MESSAGE(v.ok(), describe(c) << ": " << (v.ok() ? "" : v.error().format()));
}

std::int32_t steps_of(Collective coll, const std::string& algo, std::int32_t n, std::uint64_t count, bool in_place,
                      std::int32_t root = 0) {
  const Schedule s = lower(Case{coll, algo, n, count, root, in_place});
  REQUIRE(s.calls.size() == 1);
  CHECK(s.calls[0].num_steps == static_cast<std::int32_t>(s.steps.size()));
  return static_cast<std::int32_t>(s.steps.size());
}

// The step-count tests below check every algorithm by name; one the registry has but
// they do not know fails here instead of going unchecked.
void check_step_counts_cover(Collective coll, const std::vector<std::string>& known) {
  for (const auto& name : algorithm_names(coll))
    CHECK_MESSAGE(std::find(known.begin(), known.end(), name) != known.end(),
                  name_of(coll) << " " << name << " has no textbook step count in this file");
}

}  // namespace

TEST_CASE("algorithms bcast: every broadcast algorithm passes the symbolic check") { check_all(Collective::broadcast); }

TEST_CASE("algorithms bcast_reduce: every reduce algorithm passes the symbolic check") {
  check_all(Collective::reduce);
}

TEST_CASE("algorithms bcast_allreduce: every all-reduce algorithm passes the symbolic check") {
  check_all(Collective::allreduce);
}

TEST_CASE("algorithms bcast_reduce: large groups, every root of a small group") {
  // 256 ranks (root 0 is covered above), and a non-power of two for all-reduce.
  for (const auto& algo : algorithm_names(Collective::broadcast))
    for (std::int32_t root : {255, 100}) check_verifies({Collective::broadcast, algo, 256, 1000, root, root == 100});
  for (const auto& algo : algorithm_names(Collective::reduce))
    for (std::int32_t root : {255, 100}) check_verifies({Collective::reduce, algo, 256, 1000, root, root != 100});
  for (const auto& algo : algorithm_names(Collective::allreduce))
    for (std::int32_t n : {200, 256}) check_verifies({Collective::allreduce, algo, n, 1000, 0, n == 256});

  // Every root of 6 ranks (not a power of two), 11 elements (uneven blocks).
  for (std::int32_t root = 0; root < 6; ++root)
    for (bool in_place : {true, false}) {
      for (const auto& algo : algorithm_names(Collective::broadcast))
        check_verifies({Collective::broadcast, algo, 6, 11, root, in_place});
      for (const auto& algo : algorithm_names(Collective::reduce))
        check_verifies({Collective::reduce, algo, 6, 11, root, in_place});
    }
}

TEST_CASE("algorithms bcast: textbook step counts") {
  using C = Collective;
  check_step_counts_cover(C::broadcast, {"flat", "binomial", "chain", "scatter_allgather"});
  // flat: one step; the out-of-place local copy of the root rides along.
  CHECK(steps_of(C::broadcast, "flat", 8, 1000, true) == 1);
  CHECK(steps_of(C::broadcast, "flat", 8, 1000, false, 3) == 1);
  // binomial: ceil(log2 n).
  CHECK(steps_of(C::broadcast, "binomial", 8, 1000, true) == 3);
  CHECK(steps_of(C::broadcast, "binomial", 8, 1000, false, 5) == 3);
  CHECK(steps_of(C::broadcast, "binomial", 5, 1000, true, 2) == 3);
  CHECK(steps_of(C::broadcast, "binomial", 64, 1000, true) == 6);
  // chain: chunks + n - 2; 1000 float32 elements make 4 chunks.
  CHECK(steps_of(C::broadcast, "chain", 4, 1000, true) == 6);
  CHECK(steps_of(C::broadcast, "chain", 8, 1000, false, 7) == 10);
  // scatter_allgather: ceil(log2 n) + n - 1.
  CHECK(steps_of(C::broadcast, "scatter_allgather", 8, 1000, true) == 10);
  CHECK(steps_of(C::broadcast, "scatter_allgather", 5, 1000, false, 1) == 7);
  // One rank: nothing to do in place, a local copy out of place.
  for (const auto& algo : algorithm_names(C::broadcast)) {
    CHECK(steps_of(C::broadcast, algo, 1, 1000, true) == 0);
    CHECK(steps_of(C::broadcast, algo, 1, 1000, false) == 1);
    CHECK(steps_of(C::broadcast, algo, 8, 0, false) == 0);
  }
}

TEST_CASE("algorithms bcast: out of place, the chain's root copies each chunk into its output as it sends it") {
  // Copying the whole buffer in the first step would have the root read its input
  // twice, once for itself and once, chunk by chunk, for the next rank; in step with
  // the chunks it reads each chunk once while it is fresh. A backend that does not
  // move buffers through a cache (slice_bytes 0, a GPU) gets one copy, one launch.
  for (const std::uint64_t slice : {kCacheSliceBytes, std::uint64_t{0}})
    for (const std::int32_t n : {2, 3, 8})
      for (const std::int32_t root : {0, n - 1}) {
        CAPTURE(slice);
        CAPTURE(n);
        CAPTURE(root);
        Case c{Collective::broadcast, "chain", n, 1000, root, false};
        c.slice_bytes = slice;
        const Schedule s = lower(c);
        std::uint64_t copied = 0;
        std::size_t steps_with_local_copy = 0;
        for (const Step& st : s.steps) {
          const Transfer* local = nullptr;
          const Transfer* injected = nullptr;
          for (const Transfer& t : st.transfers) {
            if (t.src.rank != root) continue;
            (t.dst.rank == root ? local : injected) = &t;
          }
          if (local == nullptr) continue;
          ++steps_with_local_copy;
          REQUIRE(injected != nullptr);
          CHECK(local->src.offset == injected->src.offset);
          CHECK(local->dst.offset == injected->src.offset);
          if (slice != 0) CHECK(local->count == injected->count);
          copied += local->count;
        }
        CHECK(steps_with_local_copy == (slice != 0 ? 4 : 1));  // 1000 float32 elements make 4 chunks
        CHECK(copied == 1000);
        CHECK(verify_symbolic(s).ok());
      }
}

TEST_CASE("algorithms bcast_reduce: textbook step counts") {
  using C = Collective;
  check_step_counts_cover(C::reduce, {"flat", "binomial", "ring"});
  // Out of place or not, no local copy step: a rank's first add is a reduce-copy of
  // what arrives and its own input.
  // flat: n - 1 adds into the root's result.
  CHECK(steps_of(C::reduce, "flat", 8, 1000, true, 3) == 7);
  CHECK(steps_of(C::reduce, "flat", 8, 1000, false, 3) == 7);
  // binomial: ceil(log2 n).
  CHECK(steps_of(C::reduce, "binomial", 2, 1000, true) == 1);
  CHECK(steps_of(C::reduce, "binomial", 3, 1000, true, 1) == 2);
  CHECK(steps_of(C::reduce, "binomial", 8, 1000, true, 5) == 3);
  CHECK(steps_of(C::reduce, "binomial", 8, 1000, false) == 3);
  // ring: (n - 1) reduce-scatter + 1 gather.
  CHECK(steps_of(C::reduce, "ring", 4, 1000, true, 2) == 4);
  CHECK(steps_of(C::reduce, "ring", 7, 1000, false) == 7);
  for (const auto& algo : algorithm_names(C::reduce)) {
    CHECK(steps_of(C::reduce, algo, 1, 1000, true) == 0);
    CHECK(steps_of(C::reduce, algo, 1, 1000, false) == 1);
  }
}

TEST_CASE("algorithms bcast_allreduce: textbook step counts") {
  using C = Collective;
  check_step_counts_cover(C::allreduce, {"flat", "tree", "ring", "recursive_doubling", "rabenseifner", "hierarchical",
                                         "rings", "double_tree"});
  // On one node (no node boundaries given) the two that know nodes are one ring each,
  // and the double tree is its chain inside the node: n - 1 steps up, n - 1 down.
  CHECK(steps_of(C::allreduce, "hierarchical", 4, 1000, true) == 6);
  CHECK(steps_of(C::allreduce, "rings", 5, 1000, false) == 8);
  CHECK(steps_of(C::allreduce, "double_tree", 5, 1000, false) == 8);
  // Out of place or not, no local copy step (reduce-copies).
  // flat: (n - 1) fan-in + 1 fan-out.
  CHECK(steps_of(C::allreduce, "flat", 4, 1000, true) == 4);
  CHECK(steps_of(C::allreduce, "flat", 4, 1000, false) == 4);
  // tree: 2 ceil(log2 n).
  CHECK(steps_of(C::allreduce, "tree", 8, 1000, true) == 6);
  CHECK(steps_of(C::allreduce, "tree", 5, 1000, true) == 6);
  CHECK(steps_of(C::allreduce, "tree", 8, 1000, false) == 6);
  // ring: 2 (n - 1), in place or not (out of place the first reduce-scatter step reads
  // the inputs and writes the sums into the outputs).
  CHECK(steps_of(C::allreduce, "ring", 4, 1000, true) == 6);
  CHECK(steps_of(C::allreduce, "ring", 4, 1000, false) == 6);
  CHECK(steps_of(C::allreduce, "ring", 13, 1000, true) == 24);
  // recursive doubling: one reduce-copy step per round, + fold-in and fold-out; a last
  // local copy only where the single round (p == 2) read a rank's output.
  CHECK(steps_of(C::allreduce, "recursive_doubling", 8, 1000, true) == 3);
  CHECK(steps_of(C::allreduce, "recursive_doubling", 8, 1000, false) == 3);
  CHECK(steps_of(C::allreduce, "recursive_doubling", 16, 1000, true) == 4);
  CHECK(steps_of(C::allreduce, "recursive_doubling", 6, 1000, true) == 4);
  CHECK(steps_of(C::allreduce, "recursive_doubling", 2, 1000, false) == 1);
  CHECK(steps_of(C::allreduce, "recursive_doubling", 2, 1000, true) == 2);
  CHECK(steps_of(C::allreduce, "recursive_doubling", 3, 1000, false) == 4);
  // rabenseifner: log2 p halving + log2 p doubling, + fold-in and fold-out.
  CHECK(steps_of(C::allreduce, "rabenseifner", 8, 1000, true) == 6);
  CHECK(steps_of(C::allreduce, "rabenseifner", 13, 1000, true) == 8);
  CHECK(steps_of(C::allreduce, "rabenseifner", 16, 1000, false) == 8);
  for (const auto& algo : algorithm_names(C::allreduce)) {
    CHECK(steps_of(C::allreduce, algo, 1, 1000, true) == 0);
    CHECK(steps_of(C::allreduce, algo, 1, 1000, false) == 1);
  }
}

TEST_CASE("algorithms bcast_allreduce: a large buffer goes round the ring in slices of about 1 MiB per rank") {
  using C = Collective;
  // 2.5 MiB of float32 per rank: 3 slices, each a whole ring.
  const std::uint64_t count = 655360;
  CHECK(steps_of(C::allreduce, "ring", 4, count, true) == 3 * 6);
  CHECK(steps_of(C::allreduce, "ring", 4, count, false) == 3 * 6);
  // Up to 2 MiB goes round in one piece (there the slices' extra rounds cost more than
  // the cache saves); one element more makes 3 slices.
  CHECK(steps_of(C::allreduce, "ring", 4, 262144, true) == 6);
  CHECK(steps_of(C::allreduce, "ring", 4, 524288, true) == 6);
  CHECK(steps_of(C::allreduce, "ring", 4, 524289, true) == 3 * 6);
  // With 32 ranks a slice holds at least 64 KiB per block: 2 MiB, so 4 MiB is 2 slices.
  CHECK(steps_of(C::allreduce, "ring", 32, 1u << 20, true) == 2 * 62);

  AlgoCase c{C::allreduce, "ring", 5, count, 0, false, {}, 0};
  const Schedule s = lower(c);
  check_verified(s, c);
  check_captions(s, c);
  // Every slice is a whole ring on its own elements, told as such.
  REQUIRE(s.steps.size() == 3 * 8);
  CHECK(s.steps[0].phase == "reduce-scatter");
  CHECK(s.steps[0].caption.rfind("slice 1 of 3, step 1 of 4", 0) == 0);
  CHECK(s.steps[8].caption.rfind("slice 2 of 3, ", 0) == 0);
  CHECK(s.steps[23].phase == "all-gather");
  CHECK(s.steps[23].caption.rfind("slice 3 of 3, step 4 of 4", 0) == 0);
  std::uint64_t lo = ~0ull, hi = 0;
  for (std::size_t k = 8; k < 16; ++k)
    for (const auto& t : s.steps[k].transfers)
      lo = std::min(lo, t.dst.offset), hi = std::max(hi, t.dst.offset + t.count);
  CHECK(lo == 218454);  // the middle slice: elements [218454, 436907)
  CHECK(hi == 436907);
}

TEST_CASE("algorithms bcast_allreduce: lowered for a GPU backend, the ring goes round once, with the same result") {
  CHECK(lower_options_for(capabilities_of("cpu")).slice_bytes == kCacheSliceBytes);
  CHECK(lower_options_for(capabilities_of("cuda")).slice_bytes == 0);
  CHECK(lower_options_for(capabilities_of("nccl")).slice_bytes == 0);
  for (bool in_place : {false, true}) {
    QuickSpec q;
    q.coll = Collective::allreduce;
    q.algorithm = "ring";
    q.ranks = 5;
    q.count = 655360;        // 2.5 MiB of int32 per rank: 3 slices on the cpu backend
    q.dtype = DType::int32;  // exact: any order of additions gives the same bytes
    q.in_place = in_place;
    CAPTURE(in_place);
    auto sc = scenario_from_spec(q);
    REQUIRE(sc.ok());
    auto sliced = lower_scenario(*sc, lower_options_for(capabilities_of("cpu")));
    auto whole = lower_scenario(*sc, lower_options_for(capabilities_of("cuda")));
    REQUIRE(sliced.ok());
    REQUIRE(whole.ok());
    CHECK(sliced->steps.size() == 3 * 8);
    CHECK(whole->steps.size() == 8);
    CHECK(whole->slice_bytes == 0);
    CHECK(whole->steps[0].caption.rfind("step 1 of 4", 0) == 0);
    const Scenario& scenario = *sc;
    auto init = [&](std::int32_t b, std::int32_t r, std::uint64_t i) {
      return initial_value(scenario.buffers[static_cast<std::size_t>(b)], r, i);
    };
    auto a = execute(*sliced, init, RunOptions{});
    auto b = execute(*whole, init, RunOptions{});
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->verified());
    CHECK(b->verified());
    CHECK(a->result == b->result);
  }
}

TEST_CASE("algorithms bcast_allreduce: a 1024-rank ring over 1Mi elements lowers quickly") {
  Schedule s;
  s.ranks = 1024;
  s.buffers.push_back({"x", std::vector<std::uint64_t>(1024, 1u << 20), false});
  CollArgs a;
  a.coll = Collective::allreduce;
  a.ranks = 1024;
  a.count = 1u << 20;
  a.in_place = true;
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(lower_call(s, a, "ring").ok());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  CHECK(s.steps.size() == 2 * 1023);
  CHECK(s.total_transfers() == 2ull * 1023 * 1024);  // n transfers per step, nothing quadratic
  // Typically ~0.2 s; a loose bound so a loaded machine does not fail it, and a looser
  // one under sanitizers (scripts/sanitizers.sh), which slow allocation-heavy code ~10x.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  CHECK(ms < 30000);
#else
  CHECK(ms < 3000);
#endif
}

TEST_CASE("algorithms: lowering appends one call over its steps, and nccl as one native step") {
  Schedule s;
  s.ranks = 4;
  s.buffers.push_back({"x", std::vector<std::uint64_t>(4, 100), false});
  CollArgs a;
  a.coll = Collective::allreduce;
  a.ranks = 4;
  a.count = 100;
  a.in_place = true;
  a.op = ReduceOp::avg;
  REQUIRE(lower_call(s, a, "ring", "first").ok());
  REQUIRE(lower_call(s, a, "auto", "second", 1).ok());
  REQUIRE(lower_call(s, a, kNativeAlgorithm, "third", 2).ok());
  REQUIRE(s.calls.size() == 3);
  CHECK(s.calls[0].algorithm == "ring");
  CHECK(!s.calls[0].auto_picked);
  CHECK(s.calls[0].caption == "first");
  CHECK(s.calls[0].num_steps == 7);  // 3 + 3 ring steps and the average
  CHECK(s.steps[6].phase == "average");
  CHECK(s.calls[1].auto_picked);
  CHECK(find_algorithm(Collective::allreduce, s.calls[1].algorithm) != nullptr);
  CHECK(s.calls[1].program_index == 1);
  CHECK(s.calls[1].first_step == 7);
  CHECK(s.calls[2].first_step == s.calls[1].first_step + s.calls[1].num_steps);
  CHECK(s.calls[2].num_steps == 1);
  CHECK(s.calls[2].algorithm == kNativeAlgorithm);
  REQUIRE(s.steps.size() == static_cast<std::size_t>(s.calls[2].first_step + 1));
  CHECK(s.steps.back().native);
  CHECK(s.steps.back().call == 2);
  CHECK(uses_native(s));
  for (std::size_t k = 0; k < 3; ++k)
    for (std::int32_t i = 0; i < s.calls[k].num_steps; ++i)
      CHECK(s.steps[static_cast<std::size_t>(s.calls[k].first_step + i)].call == static_cast<std::int32_t>(k));

  // A name the collective does not have: one error that lists every valid one, and
  // nothing appended.
  const std::size_t steps = s.steps.size();
  const Status bad = lower_call(s, a, "no_such_algorithm");
  REQUIRE(!bad.ok());
  CHECK(bad.error().id == "scenario.unknown_algorithm");
  for (const auto& name : algorithm_names(Collective::allreduce))
    CHECK(bad.error().format().find(name) != std::string::npos);
  CHECK(s.calls.size() == 3);
  CHECK(s.steps.size() == steps);
  // Barrier has no native implementation.
  CollArgs bar;
  bar.coll = Collective::barrier;
  bar.ranks = 4;
  CHECK(!lower_call(s, bar, kNativeAlgorithm).ok());
}
