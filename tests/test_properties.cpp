// Property tests, the backbone: every collective x algorithm over rank counts,
// counts, roots, in place and out of place must pass the symbolic check; executed
// on the cpu backend over every op and dtype they must give #wrong == 0, and the
// fast (dataflow) and observable (barrier per step) modes must give identical bytes.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/model.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/verify.h"

using namespace collscope;

namespace {

const std::vector<std::int32_t> kRanks = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16, 31, 64};
const std::vector<std::uint64_t> kCounts = {0, 1, 7, 1000};

std::vector<std::int32_t> roots_for(Collective c, std::int32_t n) {
  if (!has_root(c)) return {0};
  std::vector<std::int32_t> r = {0};
  if (n > 1) r.push_back(n - 1);
  if (n > 2) r.push_back(n / 2);
  return r;
}

std::string label(const QuickSpec& q) {
  return std::string(name_of(q.coll)) + "/" + q.algorithm + " ranks=" + std::to_string(q.ranks) +
         " count=" + std::to_string(q.count) + " root=" + std::to_string(q.root) + (q.in_place ? " in-place" : "") +
         " " + std::string(name_of(q.dtype)) + " " + std::string(name_of(q.op));
}

Result<Schedule> lower_spec(const QuickSpec& q, Scenario& keep) {
  auto s = scenario_from_spec(q);
  if (!s) return s.error();
  keep = *s;
  return lower_scenario(keep);
}

InitFn init_of(const Scenario& s) {
  return [&s](std::int32_t b, std::int32_t r, std::uint64_t i) {
    return b < static_cast<std::int32_t>(s.buffers.size()) ? initial_value(s.buffers[static_cast<std::size_t>(b)], r, i)
                                                           : 0.0;
  };
}

// Runs the call in fast and observable mode: both exact, byte for byte the same.
// Returns the number of steps.
std::size_t check_modes_agree(const QuickSpec& q) {
  Scenario keep;
  auto s = lower_spec(q, keep);
  REQUIRE_MESSAGE(s.ok(), label(q));
  RunOptions fast;
  fast.mode = RunMode::fast;
  RunOptions obs;
  obs.mode = RunMode::observable;
  obs.snapshot_budget = 0;
  auto a = execute(*s, init_of(keep), fast);
  auto b = execute(*s, init_of(keep), obs);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE_MESSAGE(a->symbolic.ok(), label(q));
  REQUIRE_MESSAGE(a->numeric.wrong == 0, label(q) << ": " << a->numeric.message());
  REQUIRE_MESSAGE(b->numeric.wrong == 0, label(q) << ": " << b->numeric.message());
  REQUIRE_MESSAGE(a->result == b->result, label(q) << ": fast and observable modes differ");
  return s->steps.size();
}

}  // namespace

TEST_CASE("properties: every algorithm passes the symbolic check over ranks, counts, roots and in-place") {
  std::size_t checked = 0;
  for (const auto& algo : all_algorithms())
    for (std::int32_t n : kRanks)
      for (std::uint64_t count : kCounts)
        for (std::int32_t root : roots_for(algo.coll, n))
          for (bool in_place : {false, true}) {
            if (in_place && !supports_in_place(algo.coll)) continue;
            QuickSpec q;
            q.coll = algo.coll;
            q.algorithm = std::string(algo.name);
            q.ranks = n;
            q.count = count;
            q.root = root;
            q.in_place = in_place;
            q.op = algo.coll == Collective::allreduce && count == 7 ? ReduceOp::avg : ReduceOp::sum;
            Scenario keep;
            auto s = lower_spec(q, keep);
            REQUIRE_MESSAGE(s.ok(), label(q) << ": " << (s.ok() ? "" : s.error().format()));
            auto st = verify_symbolic(*s);
            REQUIRE_MESSAGE(st.ok(), label(q) << ": " << (st.ok() ? "" : st.error().format()));
            for (const auto& step : s->steps) {
              REQUIRE_MESSAGE(!step.phase.empty(), label(q));
              REQUIRE_MESSAGE(!step.caption.empty(), label(q));
            }
            ++checked;
          }
  CHECK(checked > 2000);
}

TEST_CASE("properties: executed results are exact, and fast and observable modes agree byte for byte") {
  // Ops and dtypes rotate over the combinations, so every pair is covered many times
  // without running the whole cross product.
  struct Seen {
    std::set<std::string> dtypes, ops;
    std::set<std::int32_t> roots;
    std::set<bool> in_place;
  };
  std::map<std::string, Seen> seen;  // what every algorithm was run with
  std::size_t combo = 0;
  for (const auto& algo : all_algorithms())
    for (std::int32_t n : kRanks)
      for (std::uint64_t count : kCounts) {
        ++combo;
        QuickSpec q;
        q.coll = algo.coll;
        q.algorithm = std::string(algo.name);
        q.ranks = n;
        q.count = count;
        const auto roots = roots_for(algo.coll, n);
        q.root = roots[combo % roots.size()];
        q.in_place = supports_in_place(algo.coll) && combo % 3 == 0;
        q.dtype = kAllDTypes[combo % 8];
        q.op = kAllReduceOps[(combo / 8) % 5];
        check_modes_agree(q);
        Seen& s = seen[std::string(name_of(algo.coll)) + "/" + q.algorithm];
        s.dtypes.insert(std::string(name_of(q.dtype)));
        s.ops.insert(std::string(name_of(q.op)));
        s.roots.insert(q.root);
        s.in_place.insert(q.in_place);
      }
  // The rotation reaches every algorithm of the registry with most dtypes and ops, more
  // than one root where there is a root, and both buffer modes where both exist.
  REQUIRE(seen.size() == all_algorithms().size());
  for (const auto& algo : all_algorithms()) {
    const std::string key = std::string(name_of(algo.coll)) + "/" + std::string(algo.name);
    const Seen& s = seen[key];
    INFO(key);
    CHECK(s.dtypes.size() >= 6);
    CHECK(s.ops.size() >= 3);
    if (has_root(algo.coll)) CHECK(s.roots.size() >= 3);
    if (supports_in_place(algo.coll)) CHECK(s.in_place.size() == 2);
  }
}

TEST_CASE("properties: a ring all-reduce large enough to go round in slices is exact in both modes") {
  // 2.5 MiB per rank in float32, 5 MiB in float64: several slices, the last one shorter.
  for (const auto& [dtype, op, ranks, in_place] :
       {std::tuple{DType::float32, ReduceOp::sum, 3, false}, std::tuple{DType::float64, ReduceOp::max, 4, true},
        std::tuple{DType::int32, ReduceOp::avg, 5, true}}) {
    QuickSpec q;
    q.coll = Collective::allreduce;
    q.algorithm = "ring";
    q.ranks = ranks;
    q.count = 655361;
    q.dtype = dtype;
    q.op = op;
    q.in_place = in_place;
    const std::size_t steps = check_modes_agree(q);
    CHECK_MESSAGE(steps > static_cast<std::size_t>(4 * (ranks - 1)), label(q) << ": not sliced");
  }
}

TEST_CASE("properties: every op and dtype on a non-power-of-two world, all reducing algorithms") {
  for (const auto& algo : all_algorithms()) {
    if (!is_reducing(algo.coll)) continue;
    for (DType t : kAllDTypes)
      for (ReduceOp op : kAllReduceOps) {
        QuickSpec q;
        q.coll = algo.coll;
        q.algorithm = std::string(algo.name);
        q.ranks = 6;
        q.count = 29;
        q.root = 4;
        q.dtype = t;
        q.op = op;
        Scenario keep;
        auto s = lower_spec(q, keep);
        REQUIRE(s.ok());
        auto out = execute(*s, init_of(keep), RunOptions{});
        REQUIRE(out.ok());
        REQUIRE_MESSAGE(out->verified(), label(q) << ": " << out->numeric.message()
                                                  << (out->symbolic.ok() ? "" : out->symbolic.error().format()));
      }
  }
}

TEST_CASE("properties: floating inputs that are not exact are checked within tolerance") {
  // Random reals: the order of additions differs between the schedule and the
  // reference, so exact equality is not expected; the tolerance must accept it.
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.algorithm = "ring";
  q.ranks = 7;
  q.count = 333;
  q.dtype = DType::float32;
  Scenario keep;
  auto s = lower_spec(q, keep);
  REQUIRE(s.ok());
  auto reals = [](std::int32_t, std::int32_t r, std::uint64_t i) {
    return 0.1 * static_cast<double>((r * 7919 + static_cast<std::int64_t>(i) * 104729) % 1000) / 7.0;
  };
  auto out = execute(*s, reals, RunOptions{});
  REQUIRE(out.ok());
  CHECK_MESSAGE(out->numeric.wrong == 0, out->numeric.message());
}

TEST_CASE("properties: auto picks a valid algorithm and says so") {
  for (Collective c : kAllCollectives)
    for (std::uint64_t count : {std::uint64_t{1}, std::uint64_t{1} << 20}) {
      CollArgs a;
      a.coll = c;
      a.ranks = 8;
      a.count = c == Collective::barrier ? 0 : count;
      const std::string pick = pick_algorithm(a);
      CHECK_MESSAGE(find_algorithm(c, pick) != nullptr, name_of(c) << " picked " << pick);
    }
  // Tiny messages: the pick waits no longer than any other algorithm in the model's
  // chain of wake-ups on this machine (test_model.cpp checks the chain itself).
  // Huge messages: never the bandwidth-wasting ones (recursive doubling moves log2(n)
  // whole buffers per rank; flat serialises every reduction on one rank).
  auto sync_of = [](const CollArgs& a, const std::string& algo) {
    Schedule s;
    s.ranks = a.ranks;
    s.buffers = {BufferDecl{"x", std::vector<std::uint64_t>(static_cast<std::size_t>(a.ranks), a.count), false}};
    CollArgs b = a;
    b.in_place = true;
    REQUIRE(lower_call(s, b, algo).ok());
    return predict_sync_us(s, CostModel::cpu_default());
  };
  CollArgs tiny;
  tiny.coll = Collective::allreduce;
  tiny.ranks = 8;
  tiny.count = 1;
  tiny.in_place = true;
  const std::string small_pick = pick_algorithm(tiny);
  for (const auto& n : algorithm_names(Collective::allreduce))
    CHECK_MESSAGE(sync_of(tiny, small_pick) <= sync_of(tiny, n) * 1.02 + 1e-9, small_pick << " vs " << n);
  CollArgs big = tiny;
  big.count = 1 << 24;
  const std::string big_pick = pick_algorithm(big);
  CHECK(big_pick != "recursive_doubling");
  CHECK(big_pick != "flat");
}
