// The algorithms that know the node boundary, over node sizes: every rank count and
// node size (even and uneven), counts, both layouts and groups pass the symbolic
// check with the step counts of their two levels; executed, they are exact in fast
// and observable mode; and NCCL-style rings put every card of a node to work.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "algorithm_case.h"
#include "collscope/algorithms.h"
#include "collscope/machine.h"
#include "collscope/run.h"
#include "collscope/scenario.h"
#include "collscope/verify.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

std::vector<const AlgorithmInfo*> node_aware() {
  std::vector<const AlgorithmInfo*> out;
  for (const auto& a : all_algorithms())
    if (a.node_aware) out.push_back(&a);
  return out;
}

// floor(log2 n) for n >= 1.
std::int32_t log2_floor(std::int32_t n) {
  std::int32_t k = 0;
  while ((std::int64_t{2} << k) <= n) ++k;
  return k;
}

// The steps of each, for n ranks on nodes of g (even nodes; else one ring, or for the
// double tree one tree over every rank), as the range [first, second].
std::pair<std::int32_t, std::int32_t> expected(const AlgoCase& c) {
  const std::int32_t n = c.ranks;
  if (c.count == 0) return {0, 0};
  if (n == 1) return {c.in_place ? 0 : 1, c.in_place ? 0 : 1};
  std::int32_t g = c.ranks_per_node > 0 ? std::min(c.ranks_per_node, n) : n;
  const bool uneven = n % g != 0;
  if (uneven) g = n;  // uneven nodes: one ring
  const std::int32_t N = n / g;
  const std::string& a = c.algo;
  auto exactly = [](std::int32_t k) { return std::pair{k, k}; };
  switch (c.coll) {
    case Collective::allreduce:
      if (a == "hierarchical") return exactly(2 * (g - 1) + 2 * (N - 1));
      if (a == "rings") return exactly(2 * (n - 1));
      if (a == "double_tree") {
        // A chain of g each way inside; across M nodes the trees of height H go down
        // in H steps and up in H (left children) to 2H (and right ones), exactly 2H - 1
        // when M is a power of two.
        const std::int32_t G = uneven ? 1 : g, M = n / G, H = log2_floor(M);
        const std::int32_t inside = 2 * (G - 1);
        if ((M & (M - 1)) == 0) return exactly(inside + (M > 1 ? 3 * H - 1 : 0));
        return {inside + 2 * H, inside + 3 * H};
      }
      break;
    case Collective::reduce_scatter:
      if (a == "rings") return exactly(n - 1);
      return exactly((g - 1) + (N - 1));
    case Collective::allgather:
      if (a == "rings") return exactly(n - 1);  // each rank's own block is kept in the first step
      return exactly((N - 1) + (g - 1) + (c.in_place ? 0 : 1));
    default:
      break;
  }
  return {-1, -1};
}

}  // namespace

TEST_CASE("hierarchical: every node-aware algorithm over rank counts and node sizes passes the symbolic check") {
  const auto algos = node_aware();
  REQUIRE(algos.size() >= 5);
  for (const AlgorithmInfo* a : algos)
    for (std::int32_t n = 1; n <= 12; ++n)
      for (std::int32_t g = 1; g <= n; ++g)
        for (std::uint64_t count : {0ull, 1ull, 7ull, 100ull})
          for (bool in_place : {false, true}) {
            AlgoCase c{a->coll, std::string(a->name), n, count, 0, in_place, {}, 0, g};
            const Schedule s = lower(c);
            check_verified(s, c);
            check_captions(s, c);
            const auto [lo, hi] = expected(c);
            const auto steps = static_cast<std::int32_t>(s.steps.size());
            CHECK_MESSAGE((lo <= steps && steps <= hi),
                          describe(c) << ": " << steps << " steps, expected " << lo << " to " << hi);
          }
}

TEST_CASE("hierarchical: on a group scattered over the nodes they still verify") {
  // 12 world ranks on nodes of 3; the group takes 2 ranks of each of the 4 nodes, out
  // of order, and one group of a node's single rank.
  const std::vector<std::vector<std::int32_t>> groups = {
      {0, 1, 3, 4, 6, 7, 9, 10}, {10, 9, 1, 0, 7, 6, 4, 3}, {0, 3, 6, 9}};
  for (const AlgorithmInfo* a : node_aware())
    for (const auto& group : groups)
      for (bool in_place : {false, true}) {
        AlgoCase c{a->coll, std::string(a->name), static_cast<std::int32_t>(group.size()), 5, 0, in_place, group, 12,
                   3};
        check_verified(lower(c), c);
      }
}

TEST_CASE("hierarchical: executed on the cpu backend they are exact, in fast and observable mode alike") {
  for (const AlgorithmInfo* a : node_aware())
    for (auto [n, g] : {std::pair{8, 4}, std::pair{6, 2}, std::pair{9, 3}, std::pair{7, 3}, std::pair{4, 1}})
      for (bool in_place : {false, true})
        for (DType t : {DType::int32, DType::float32, DType::bfloat16}) {
          QuickSpec q;
          q.coll = a->coll;
          q.algorithm = std::string(a->name);
          q.ranks = n;
          q.count = 37;
          q.dtype = t;
          q.in_place = in_place;
          auto sc = scenario_from_spec(q);
          REQUIRE(sc.ok());
          LowerOptions o;
          o.ranks_per_node = g;
          auto s = lower_scenario(*sc, o);
          REQUIRE(s.ok());
          CHECK(s->ranks_per_node == g);
          const auto both = testing::run_both_modes(*sc, *s);
          const auto *x = &both.fast, *y = &both.observable;
          const std::string what = std::string(name_of(a->coll)) + " " + std::string(a->name) +
                                   " n=" + std::to_string(n) + " g=" + std::to_string(g) + " " +
                                   std::string(name_of(t));
          CHECK_MESSAGE(x->symbolic.ok(), what);
          CHECK_MESSAGE(x->numeric.wrong == 0, what << ": " << x->numeric.message());
          CHECK_MESSAGE(y->numeric.wrong == 0, what << ": " << y->numeric.message());
          CHECK_MESSAGE(x->result == y->result, what << ": fast and observable modes differ");
        }
}

TEST_CASE("hierarchical: rings leave every node on a card of their own, one ring leaves on one") {
  // 4 nodes of 4 ranks. In any step of `rings`, node 0's transfers to other nodes come
  // from 4 different local ranks (4 cards); the plain ring crosses on one.
  auto crossing_sources = [](const std::string& algo, Collective coll = Collective::allreduce) {
    AlgoCase c{coll, algo, 16, 1600, 0, false, {}, 0, 4};
    const Schedule s = lower(c);
    std::set<std::int32_t> worst;
    for (const auto& st : s.steps) {
      std::set<std::int32_t> from;
      for (const auto& t : st.transfers)
        if (t.src.rank / 4 == 0 && t.dst.rank / 4 != 0) from.insert(t.src.rank);
      if (from.size() > worst.size()) worst = from;
    }
    return worst.size();
  };
  CHECK(crossing_sources("rings") == 4);
  CHECK(crossing_sources("ring") == 1);
  for (const Collective coll : {Collective::allgather, Collective::reduce_scatter}) {
    CAPTURE(name_of(coll));
    CHECK(crossing_sources("rings", coll) == 4);
    CHECK(crossing_sources("ring", coll) == 1);
  }
}

TEST_CASE("hierarchical: on a topology of nodes auto considers them, priced per link") {
  auto m = machine_for("dgx-h100", 4, BackendCapabilities{{}, false, true, false}, DType::float32, "");
  REQUIRE(m.ok());
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.ranks = 32;
  q.count = 16u << 20;  // 64 MiB per rank
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  LowerOptions o;
  o.slice_bytes = 0;
  o.machine = &*m;
  auto s = lower_scenario(*sc, o);
  REQUIRE(s.ok());
  CHECK(s->ranks_per_node == 8);  // from the topology: 4 nodes of 8
  // Large messages across nodes: one of the algorithms that spread over the cards wins.
  const std::string pick = s->calls.at(0).algorithm;
  CHECK((pick == "rings" || pick == "hierarchical"));
  // Their predicted time beats the single ring's by several times: 8 cards against 1.
  auto price = [&](const std::string& algo) {
    QuickSpec r = q;
    r.algorithm = algo;
    auto rs = scenario_from_spec(r);
    REQUIRE(rs.ok());
    auto sched = lower_scenario(*rs, o);
    REQUIRE(sched.ok());
    return predict(*sched, *m, true).us;
  };
  CHECK(price(pick) * 3 < price("ring"));
  // On this machine (one node) they are left out of auto's race.
  auto cpu = machine_for("", 0, BackendCapabilities{{}, true, false, false}, DType::float32, "");
  REQUIRE(cpu.ok());
  LowerOptions here;
  here.machine = &*cpu;
  for (std::uint64_t count : {1ull, 1ull << 10, 1ull << 20}) {
    QuickSpec h = q;
    h.ranks = 8;
    h.count = count;
    auto hs = scenario_from_spec(h);
    REQUIRE(hs.ok());
    auto sched = lower_scenario(*hs, here);
    REQUIRE(sched.ok());
    const std::string p = sched->calls.at(0).algorithm;
    CHECK(p != "rings");
    CHECK(p != "hierarchical");
  }
}

TEST_CASE("hierarchical: on one node a node-aware ring runs the plain ring's steps (steps_digest)") {
  for (std::int32_t n = 2; n <= 9; ++n)
    for (std::uint64_t count : {1ull, 7ull, 1000ull})
      for (bool in_place : {false, true}) {
        AlgoCase ring{Collective::allreduce, "ring", n, count, 0, in_place};
        const Schedule plain = lower(ring);
        for (const char* name : {"hierarchical", "rings"}) {
          AlgoCase c = ring;
          c.algo = name;
          CHECK_MESSAGE(steps_digest(lower(c)) == steps_digest(plain), describe(c));
          // Across even nodes they are rings of another shape (uneven nodes: one ring).
          if (n >= 4 && n % 2 == 0 && count == 1000) {
            c.ranks_per_node = 2;
            CHECK_MESSAGE(steps_digest(lower(c)) != steps_digest(plain), describe(c));
          }
        }
      }
  // Different algorithms, different steps.
  AlgoCase rd{Collective::allreduce, "recursive_doubling", 4, 1000};
  AlgoCase ring{Collective::allreduce, "ring", 4, 1000};
  CHECK(steps_digest(lower(rd)) != steps_digest(lower(ring)));
}

TEST_CASE("steps_digest: names, captions and the order within a step do not count, what moves does") {
  const Schedule s = lower(AlgoCase{Collective::allreduce, "ring", 4, 1000});
  const std::uint64_t d = steps_digest(s);
  REQUIRE(s.steps.size() >= 2);
  REQUIRE(s.steps[0].transfers.size() >= 2);

  Schedule renamed = s;
  renamed.buffers[0].name = "x";
  renamed.calls[0].algorithm = "another";
  for (auto& st : renamed.steps) st.phase = "p", st.caption = "c";
  CHECK(steps_digest(renamed) == d);

  Schedule reordered = s;
  std::reverse(reordered.steps[0].transfers.begin(), reordered.steps[0].transfers.end());
  CHECK(steps_digest(reordered) == d);

  Schedule shorter = s;
  shorter.steps[1].transfers[0].count -= 1;
  CHECK(steps_digest(shorter) != d);

  Schedule elsewhere = s;
  elsewhere.steps[0].transfers[0].dst.offset += 1;
  CHECK(steps_digest(elsewhere) != d);

  Schedule copied = s;
  copied.steps[0].transfers[0].action = Action::copy;
  CHECK(steps_digest(copied) != d);

  Schedule swapped = s;  // the same transfers in another order of steps
  std::swap(swapped.steps[0].transfers, swapped.steps[1].transfers);
  CHECK(steps_digest(swapped) != d);

  Schedule wider = s;
  wider.buffers[1].count[0] += 1;
  CHECK(steps_digest(wider) != d);
}
