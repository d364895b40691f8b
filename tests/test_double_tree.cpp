// The double binary tree (algorithms/double_tree.cpp, binary_tree.h): the two trees
// are binary trees over every node in which no node is interior twice; in the lowered
// schedule each half climbs its own tree and leaves the node from its own rank; every
// dtype and op is exact on nodes of every size; and on a DGX cluster the topology
// model prices it between what its steps must cost, ahead of the rings across many
// nodes for small messages (latency in log2(nodes) steps, not in nodes).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "algorithm_case.h"
#include "algorithms/binary_tree.h"
#include "collscope/algorithms.h"
#include "collscope/machine.h"
#include "collscope/run.h"
#include "collscope/scenario.h"

using namespace collscope;
using namespace collscope::testing;

namespace {

std::int32_t floor_log2(std::int64_t m) {
  std::int32_t k = 0;
  while ((std::int64_t{2} << k) <= m) ++k;
  return k;
}

}  // namespace

TEST_CASE("double tree: two binary trees over every node, no node interior in both") {
  for (std::int64_t m = 1; m <= 300; ++m) {
    CAPTURE(m);
    std::vector<int> interior(static_cast<std::size_t>(m), 0);  // trees a node is interior in
    for (int t = 0; t < 2; ++t) {
      std::vector<int> children(static_cast<std::size_t>(m), 0);
      std::int64_t roots = 0;
      for (std::int64_t p = 0; p < m; ++p) {
        const std::int64_t q = algo::inorder_parent(p, m);
        if (q < 0) {
          ++roots;
          continue;
        }
        REQUIRE(q < m);
        ++children[static_cast<std::size_t>(q)];
        // Up to the root without a cycle, in at most floor(log2 m) hops.
        std::int32_t depth = 0;
        for (std::int64_t a = p; algo::inorder_parent(a, m) >= 0; a = algo::inorder_parent(a, m)) ++depth;
        CHECK(depth <= floor_log2(m));
      }
      CHECK(roots == 1);
      for (std::int64_t p = 0; p < m; ++p) {
        CHECK(children[static_cast<std::size_t>(p)] <= 2);
        CHECK((children[static_cast<std::size_t>(p)] > 0) == (p % 2 == 1));  // odd positions are the interior
        if (children[static_cast<std::size_t>(p)] > 0) ++interior[static_cast<std::size_t>(algo::tree_rank(t, p, m))];
      }
    }
    for (std::int64_t r = 0; r < m; ++r) CHECK(interior[static_cast<std::size_t>(r)] <= 1);
  }
}

TEST_CASE("double tree: the rounds add every child once, after its own children, one per parent per round") {
  for (std::int64_t m : {2, 3, 4, 5, 6, 7, 8, 13, 16, 31, 100}) {
    CAPTURE(m);
    const auto up = algo::inorder_up_rounds(m);
    std::map<std::int32_t, std::size_t> sent;  // child -> its round
    for (std::size_t k = 0; k < up.size(); ++k) {
      std::set<std::int32_t> parents;
      for (const auto& e : up[k]) {
        CHECK(parents.insert(e.parent).second);  // one addition per parent and round
        CHECK(sent.emplace(e.child, k).second);  // every child sends once
      }
    }
    CHECK(sent.size() == static_cast<std::size_t>(m - 1));
    for (std::size_t k = 0; k < up.size(); ++k)
      for (const auto& e : up[k])  // the parent sends later than every child it adds
        if (sent.count(e.parent)) CHECK(sent[e.parent] > k);
    const std::int32_t h = floor_log2(m);
    CHECK(static_cast<std::int32_t>(up.size()) >= h);
    CHECK(static_cast<std::int32_t>(up.size()) <= 2 * h);
    const auto down = algo::inorder_down_rounds(m);
    CHECK(static_cast<std::int32_t>(down.size()) == h);
    std::set<std::int32_t> has = {static_cast<std::int32_t>(algo::inorder_root(m))};
    for (const auto& round : down) {
      std::set<std::int32_t> got;
      for (const auto& e : round) {
        CHECK(has.count(e.parent) == 1);  // sends only what it already holds
        got.insert(e.child);
      }
      has.insert(got.begin(), got.end());
    }
    CHECK(has.size() == static_cast<std::size_t>(m));
  }
}

TEST_CASE("double tree: in the schedule each half crosses the nodes on its own tree, from its own rank") {
  struct Case {
    std::int32_t ranks, per_node;
  };
  for (const Case c : {Case{32, 4}, Case{15, 3}, Case{7, 1}, Case{24, 2}, Case{40, 8}}) {
    const std::int32_t G = c.per_node, N = c.ranks / G;
    CAPTURE(c.ranks);
    CAPTURE(G);
    const std::uint64_t count = 1000, split = 500;
    AlgoCase a{Collective::allreduce, "double_tree", c.ranks, count, 0, false, {}, 0, G};
    const Schedule s = lower(a);
    REQUIRE(verify_symbolic(s).ok());
    std::set<std::int32_t> receives[2];  // nodes that add a child's sum, per half
    std::map<std::int32_t, int> additions[2];
    for (const auto& st : s.steps)
      for (const auto& t : st.transfers) {
        if (t.src.rank / G == t.dst.rank / G) continue;
        CHECK(st.phase.find("across nodes") != std::string::npos);
        const int half = t.dst.offset < split ? 0 : 1;
        CHECK((t.dst.offset < split) == (t.dst.offset + t.count <= split));  // one half, never both
        // Half A leaves and enters a node at its first rank, half B at its last.
        const std::int32_t local = half == 0 ? 0 : G - 1;
        CHECK(t.src.rank % G == local);
        CHECK(t.dst.rank % G == local);
        if (st.phase == "tree up across nodes") {
          receives[half].insert(t.dst.rank / G);
          ++additions[half][t.dst.rank / G];
        }
      }
    // Each tree's interior is half of the nodes; no node is interior in both.
    for (int h = 0; h < 2; ++h) {
      CHECK(receives[h].size() == static_cast<std::size_t>(N / 2));
      for (const auto& [node, k] : additions[h]) CHECK(k <= 2);
    }
    for (std::int32_t node : receives[0]) CHECK(receives[1].count(node) == 0);
  }
}

TEST_CASE("double tree: every dtype and op, on nodes of every size, is exact in both modes") {
  std::size_t combo = 0;
  for (auto [n, g] : {std::pair{16, 4}, std::pair{12, 2}, std::pair{10, 5}, std::pair{9, 1}, std::pair{10, 4},
                      std::pair{6, 6}, std::pair{31, 1}}) {
    for (DType t : kAllDTypes)
      for (ReduceOp op : kAllReduceOps) {
        ++combo;
        QuickSpec q;
        q.coll = Collective::allreduce;
        q.algorithm = "double_tree";
        q.ranks = n;
        q.count = combo % 2 ? 29 : 1;
        q.dtype = t;
        q.op = op;
        q.in_place = combo % 3 == 0;
        auto sc = scenario_from_spec(q);
        REQUIRE(sc.ok());
        LowerOptions o;
        o.ranks_per_node = g;
        auto s = lower_scenario(*sc, o);
        REQUIRE(s.ok());
        const auto both = testing::run_both_modes(*sc, *s);
        const auto *x = &both.fast, *y = &both.observable;
        INFO("n=" << n << " g=" << g << " " << name_of(t) << " " << name_of(op) << " count " << q.count);
        CHECK(x->symbolic.ok());
        CHECK_MESSAGE(x->numeric.wrong == 0, x->numeric.message());
        CHECK_MESSAGE(y->numeric.wrong == 0, y->numeric.message());
        CHECK(x->result == y->result);
      }
  }
}

namespace {

Machine dgx(std::int64_t nodes) {
  auto m = machine_for("dgx-h100", nodes, BackendCapabilities{{}, false, true, false}, DType::float32, "");
  REQUIRE(m.ok());
  return *m;
}

Schedule lowered(const std::string& algo, std::int32_t ranks, std::uint64_t count, const Machine& m) {
  QuickSpec q;
  q.coll = Collective::allreduce;
  q.algorithm = algo;
  q.ranks = ranks;
  q.count = count;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  LowerOptions o;
  o.slice_bytes = 0;
  o.machine = &m;
  auto s = lower_scenario(*sc, o);
  REQUIRE_MESSAGE(s.ok(), s.error().format());
  return *s;
}

}  // namespace

TEST_CASE("double tree on dgx-h100: priced per link between its steps' bounds, ahead of the rings on many nodes") {
  const std::uint64_t small = 256;  // 1 KiB per rank
  std::map<std::int64_t, double> tree_us, rings_us;
  for (std::int64_t nodes : {4, 16, 64}) {
    CAPTURE(nodes);
    const Machine m = dgx(nodes);
    const Topology& t = m.topology;
    const auto ranks = static_cast<std::int32_t>(nodes * 8);
    const Schedule s = lowered("double_tree", ranks, small, m);
    REQUIRE(s.ranks_per_node == 8);  // from the topology
    const Prediction p = predict(s, m, true);
    // Every step pays the fixed costs and its slowest message's latency: a card's
    // (and the switches') where it crosses nodes, NVLink's where it stays inside.
    double floor_us = 0, ceiling_us = 0, tiers_us = 0;
    for (const auto& tier : t.tiers) tiers_us += tier.latency_us;
    const double bytes = static_cast<double>(small) * 4;
    for (const auto& st : s.steps) {
      bool crosses = false;
      for (const auto& x : st.transfers) crosses = crosses || x.src.rank / 8 != x.dst.rank / 8;
      floor_us += t.step_us + t.launch_us + (crosses ? t.nic.latency_us : t.intra.latency_us);
      // At most the whole buffer through one card, a reduce's memory traffic thrice.
      ceiling_us += t.step_us + t.launch_us + t.nic.latency_us + tiers_us + bytes / (t.nic.effective_gbps() * 1e3) +
                    3 * bytes / (t.memory_gbps * 1e3);
    }
    CHECK(p.us >= floor_us * 0.999);
    CHECK(p.us <= ceiling_us);
    CHECK(p.step_us.size() == s.steps.size());
    tree_us[nodes] = p.us;
    rings_us[nodes] = predict(lowered("rings", ranks, small, m), m, true).us;
    if (nodes >= 16) {
      CHECK(tree_us[nodes] * 3 < rings_us[nodes]);
      CHECK(tree_us[nodes] < predict(lowered("hierarchical", ranks, small, m), m, true).us);
    }
  }
  // 16 times the nodes: the rings' 2(n-1) steps grow about 16 times, the trees' by
  // log2(64) / log2(4) at most, on top of the chains inside the nodes.
  CHECK(rings_us[64] > 10 * rings_us[4]);
  CHECK(tree_us[64] < 2 * tree_us[4]);
  // Large messages go the other way: the rings spread every byte over all 8 cards of a
  // node, the trees send half the buffer through one card per tree and step.
  const Machine m = dgx(16);
  const std::uint64_t big = std::uint64_t{1} << 24;  // 64 MiB per rank
  CHECK(predict(lowered("rings", 128, big, m), m, true).us < predict(lowered("double_tree", 128, big, m), m, true).us);
}
