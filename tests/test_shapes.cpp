// Algorithm shapes (algorithms/shapes.cpp): pricing an algorithm from its distinct
// steps gives the same time as pricing its lowered schedule, and works where no
// schedule could be built (65536 ranks).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/machine.h"
#include "collscope/scenario.h"
#include "collscope/topology.h"

using namespace collscope;

namespace {

const BackendCapabilities kDevices{{}, false, true, false};

Machine machine(const std::string& topology, std::int64_t nodes) {
  auto m = machine_for(topology, nodes, kDevices, DType::float32, "");
  REQUIRE(m.ok());
  return *m;
}

CollArgs args_of(Collective c, std::int32_t n, std::uint64_t count, bool in_place, std::int32_t root) {
  CollArgs a;
  a.coll = c;
  a.ranks = n;
  a.count = count;
  a.in_place = in_place;
  a.root = root;
  return a;
}

// The lowered schedule's prediction, as `run` and `predict` compute it.
Prediction lowered(const CollArgs& a, const std::string& algo, const Machine& m) {
  QuickSpec q;
  q.coll = a.coll;
  q.algorithm = algo;
  q.ranks = a.ranks;
  q.count = a.count;
  q.in_place = a.in_place;
  q.root = a.root;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  LowerOptions o;
  o.slice_bytes = 0;  // devices: whole transfers
  o.machine = &m;
  auto s = lower_scenario(*sc, o);
  REQUIRE_MESSAGE(s.ok(), s.error().format());
  return predict(*s, m, true);
}

double lowered_us(const CollArgs& a, const std::string& algo, const Machine& m) { return lowered(a, algo, m).us; }

// The most messages one rank sends or receives in a step of the lowered schedule.
std::uint64_t lowered_busiest(const CollArgs& a, const std::string& algo, const Machine& m) {
  return lowered(a, algo, m).busiest_messages;
}

// A shape's price against its lowered schedule's: equal to 2% (the blocks of a schedule
// differ by at most one element, a shape takes the largest everywhere), or, with fewer
// elements than blocks (the schedule leaves the empty ones out, the shape prices every
// rank's), an upper bound, at most `within` times the schedule's (0: no cap).
void check_against_schedule(double shaped, double want, std::uint64_t count, std::int32_t n, double within) {
  if (count >= 8 * static_cast<std::uint64_t>(n)) {
    CHECK(shaped == doctest::Approx(want).epsilon(0.02));
    return;
  }
  CHECK(shaped >= 0.98 * want);
  if (within > 0) CHECK(shaped <= within * want);
}

}  // namespace

TEST_CASE("shapes: every shaped algorithm prices like its lowered schedule, over ranks, sizes, nodes and topologies") {
  struct Where {
    std::string topology;
    std::int32_t per_node;  // ranks per node wanted (nodes = ceil(n / per_node)); 0: one node
  };
  const std::vector<Where> wheres = {{"dgx-h100", 8}, {"dgx-h100", 4}, {"pcie-8gpu", 8}, {"gb200-nvl72", 0}};
  int compared = 0;
  for (const Collective c : {Collective::allreduce, Collective::allgather, Collective::reduce_scatter,
                             Collective::broadcast, Collective::reduce, Collective::scatter, Collective::gather}) {
    for (const auto& algo : algorithm_names(c)) {
      for (const std::int32_t n : {1, 2, 3, 5, 8, 12, 16, 24, 32, 64}) {
        for (const std::uint64_t count : {std::uint64_t{1}, std::uint64_t{1000}, std::uint64_t{1} << 16}) {
          for (const bool in_place : {false, true}) {
            for (const auto& w : wheres) {
              // The last rank, and one in the middle: positions wrap round the world.
              for (const std::int32_t root :
                   has_root(c) ? std::vector<std::int32_t>{n - 1, n / 2} : std::vector<std::int32_t>{0}) {
                const CollArgs a = args_of(c, n, count, in_place, root);
                const std::int64_t nodes = w.per_node > 0 ? (n + w.per_node - 1) / w.per_node : 1;
                const Machine m = machine(w.topology, nodes);
                const auto shaped = predict_shape(a, algo, m);
                if (!shaped) continue;
                CAPTURE(name_of(c));
                CAPTURE(algo);
                CAPTURE(n);
                CAPTURE(count);
                CAPTURE(in_place);
                CAPTURE(w.topology);
                CAPTURE(nodes);
                CAPTURE(root);
                // Empty blocks cost the presets' latencies alone: at most half again.
                check_against_schedule(shaped->us, lowered_us(a, algo, m), count, n, 1.5);
                ++compared;
              }
            }
          }
        }
      }
    }
  }
  CHECK(compared > 2000);
}

TEST_CASE("shapes: across switch tiers (64 nodes, two leaf groups) every shape still prices like its schedule") {
  const Machine m = machine("dgx-h100", 64);  // 512 ranks: leaves of 32 nodes, so two of them under a spine
  int compared = 0;
  for (const Collective c : {Collective::allreduce, Collective::allgather, Collective::reduce_scatter,
                             Collective::broadcast, Collective::reduce, Collective::scatter, Collective::gather})
    for (const auto& algo : algorithm_names(c)) {
      const CollArgs a = args_of(c, 512, 4096, false, has_root(c) ? 300 : 0);
      const auto shaped = predict_shape(a, algo, m);
      if (!shaped) continue;
      CAPTURE(name_of(c));
      CAPTURE(algo);
      CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(0.02));
      ++compared;
    }
  CHECK(compared >= 25);
}

TEST_CASE("shapes: the algorithms a cluster runs have one, others say they have none") {
  for (const char* algo :
       {"flat", "tree", "ring", "recursive_doubling", "rabenseifner", "hierarchical", "rings", "double_tree"})
    CHECK_MESSAGE(algorithm_shape(args_of(Collective::allreduce, 16, 100, false, 0), algo, 8).has_value(), algo);
  for (const char* algo : {"ring", "rings", "hierarchical"}) {
    CHECK_MESSAGE(algorithm_shape(args_of(Collective::allgather, 16, 100, false, 0), algo, 8).has_value(), algo);
    CHECK_MESSAGE(algorithm_shape(args_of(Collective::reduce_scatter, 16, 100, false, 0), algo, 8).has_value(), algo);
  }
  CHECK(algorithm_shape(args_of(Collective::allgather, 16, 100, false, 0), "bruck", 8).has_value());
  CHECK(algorithm_shape(args_of(Collective::reduce_scatter, 16, 100, false, 0), "recursive_halving", 8).has_value());
  for (const char* algo : {"flat", "binomial", "chain", "scatter_allgather"})
    CHECK_MESSAGE(algorithm_shape(args_of(Collective::broadcast, 16, 100, false, 3), algo, 8).has_value(), algo);
  for (const char* algo : {"flat", "binomial", "ring"})
    CHECK_MESSAGE(algorithm_shape(args_of(Collective::reduce, 16, 100, false, 3), algo, 8).has_value(), algo);
  for (const Collective c : {Collective::scatter, Collective::gather}) {
    for (const char* algo : {"flat", "binomial"})
      CHECK_MESSAGE(algorithm_shape(args_of(c, 16, 100, false, 3), algo, 8).has_value(), algo);
    // A chain's step s moves s blocks at once, each step its own: n^2 / 2 transfers, too
    // many to write beyond a few thousand ranks where nothing says the machine repeats.
    CHECK(algorithm_shape(args_of(c, 16, 100, false, 3), "chain", 8).has_value());
    CHECK_FALSE(algorithm_shape(args_of(c, 4096, 100, false, 3), "chain", 8).has_value());
  }
  // Pairwise's n - 1 steps each send every rank's block a different distance: each step
  // its own, every rank's transfers written where nothing says the machine repeats itself,
  // so no shape where that would take millions of them.
  CHECK(algorithm_shape(args_of(Collective::reduce_scatter, 16, 100, false, 0), "pairwise", 8).has_value());
  CHECK_FALSE(algorithm_shape(args_of(Collective::reduce_scatter, 4096, 100, false, 0), "pairwise", 8).has_value());
  // All-to-all's pairwise and linear send every rank's block r+k on alike: shapes as
  // pairwise's; Bruck's runs of blocks, one transfer per rank and partner.
  CHECK(algorithm_shape(args_of(Collective::alltoall, 16, 100, false, 0), "linear", 8).has_value());
  CHECK(algorithm_shape(args_of(Collective::alltoall, 16, 100, false, 0), "pairwise", 8).has_value());
  CHECK(algorithm_shape(args_of(Collective::alltoall, 16, 100, false, 0), "bruck", 8).has_value());
  CHECK(algorithm_shape(args_of(Collective::alltoall, 65536, 100, false, 0), "bruck", 8).has_value());
  CHECK_FALSE(algorithm_shape(args_of(Collective::allreduce, 16, 100, false, 0), "no_such", 8).has_value());
  // Nothing moves at count 0: no steps, for every shaped algorithm; a name without a
  // shape (a library's own collective) has none at count 0 either.
  for (const Collective c :
       {Collective::allreduce, Collective::broadcast, Collective::reduce, Collective::allgather,
        Collective::reduce_scatter, Collective::scatter, Collective::gather, Collective::alltoall}) {
    for (const auto& algo : algorithm_names(c)) {
      const auto zero = algorithm_shape(args_of(c, 2048, 0, false, 0), algo, 8);
      if (zero) CHECK_MESSAGE(zero->empty(), algo);
    }
    CHECK_FALSE(algorithm_shape(args_of(c, 2048, 0, false, 0), "mpi", 8).has_value());
    CHECK_FALSE(algorithm_shape(args_of(c, 1, 100, false, 0), "nccl", 8).has_value());
  }
  // A backend that launches a kernel per transfer pays for the schedule's every transfer,
  // which a shape does not count: its calls are priced from their schedules.
  BackendCapabilities serial = kDevices;
  serial.serial_launches = true;
  auto one_thread = machine_for("dgx-h100", 2, serial, DType::float32, "");
  REQUIRE(one_thread.ok());
  CHECK_FALSE(predict_shape(args_of(Collective::allreduce, 16, 100, false, 0), "ring", *one_thread).has_value());
  // The cpu model prices schedules only.
  auto cpu = machine_for("this-machine", 0, BackendCapabilities{}, DType::float32, "/nonexistent-collscope-config");
  REQUIRE(cpu.ok());
  CHECK_FALSE(predict_shape(args_of(Collective::allreduce, 16, 100, false, 0), "ring", *cpu).has_value());
}

TEST_CASE(
    "shapes: all-to-all's pairwise, linear and bruck price like their schedules, over ranks, sizes and topologies") {
  const std::vector<std::pair<std::string, std::int32_t>> wheres = {
      {"dgx-h100", 8}, {"dgx-h100", 4}, {"pcie-8gpu", 8}, {"gb200-nvl72", 0}};
  int compared = 0;
  for (const char* algo : {"pairwise", "linear", "bruck"})
    for (const std::int32_t n : {1, 2, 3, 5, 8, 12, 16, 24, 32, 64})
      for (const std::uint64_t count : {std::uint64_t{1}, std::uint64_t{1000}})
        for (const auto& [topology, per_node] : wheres) {
          const std::int64_t nodes = per_node > 0 ? (n + per_node - 1) / per_node : 1;
          const Machine m = machine(topology, nodes);
          const CollArgs a = args_of(Collective::alltoall, n, count, false, 0);
          const auto shaped = predict_shape(a, algo, m);
          CAPTURE(algo);
          CAPTURE(n);
          CAPTURE(count);
          CAPTURE(topology);
          CAPTURE(nodes);
          REQUIRE(shaped.has_value());
          CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(1e-9));
          ++compared;
        }
  CHECK(compared == 3 * 10 * 2 * 4);
}

TEST_CASE("shapes: a barrier's signals price like its schedule, and at 65536 ranks") {
  int compared = 0;
  for (const auto& algo : algorithm_names(Collective::barrier))
    for (const std::int32_t n : {1, 2, 3, 5, 8, 12, 16, 24, 32, 64, 1000})
      for (const auto& [topology, per_node] :
           std::vector<std::pair<std::string, std::int32_t>>{{"dgx-h100", 8}, {"pcie-8gpu", 4}, {"gb200-nvl72", 0}}) {
        const std::int64_t nodes = per_node > 0 ? (n + per_node - 1) / per_node : 1;
        const Machine m = machine(topology, nodes);
        const CollArgs a = args_of(Collective::barrier, n, 0, false, 0);
        const auto shaped = predict_shape(a, algo, m);
        CAPTURE(algo);
        CAPTURE(n);
        CAPTURE(topology);
        REQUIRE(shaped.has_value());
        CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(1e-9));
        ++compared;
      }
  CHECK(compared == 3 * 11 * 3);
  // Messages a rank handles in a step, as the model counts them for its note: the central
  // barrier's rank 0 hears from every other rank, the dissemination's ranks from one.
  const Machine thousand = machine("dgx-h100", 125);
  CHECK(predict_shape(args_of(Collective::barrier, 1000, 0, false, 0), "central", thousand)->busiest_messages == 999);
  CHECK(predict_shape(args_of(Collective::barrier, 1000, 0, false, 0), "dissemination", thousand)->busiest_messages ==
        1);
  CHECK(lowered_busiest(args_of(Collective::barrier, 1000, 0, false, 0), "central", thousand) == 999);
  CHECK(lowered_busiest(args_of(Collective::scatter, 64, 8, false, 5), "flat", machine("dgx-h100", 8)) == 63);
  CHECK(lowered_busiest(args_of(Collective::allreduce, 64, 4096, false, 0), "ring", machine("dgx-h100", 8)) == 1);
  // 65536 ranks: the dissemination's 16 rounds against the tree's 2 x 16.
  const Machine big = machine("dgx-h100", 8192);
  const auto dissemination = predict_shape(args_of(Collective::barrier, 65536, 0, false, 0), "dissemination", big);
  const auto tree = predict_shape(args_of(Collective::barrier, 65536, 0, false, 0), "tree", big);
  REQUIRE(dissemination.has_value());
  REQUIRE(tree.has_value());
  CHECK(tree->us > dissemination->us);
}

TEST_CASE("shapes: pairwise reduce-scatter, priced from one repeat of the machine, prices like its schedule") {
  // Up to 1024 ranks, nodes and leaf groups whole (the machine repeats every leaf group) or
  // not (a partial node: every rank's transfers), every distance, the band of steps that
  // leave every group and those that do not, in rails and on shared cards.
  struct Case {
    std::string topology;
    std::int32_t n;
    std::int64_t nodes;
  };
  for (const Case& w : std::vector<Case>{{"pcie-8gpu", 1024, 128},
                                         {"pcie-8gpu", 512, 64},
                                         {"dgx-h100", 512, 64},
                                         {"dgx-h100", 1024, 128},
                                         {"dgx-h100", 200, 32},
                                         {"dgx-h100", 96, 24},
                                         {"gb200-nvl72", 576, 8}}) {
    const Machine m = machine(w.topology, w.nodes);
    for (const std::uint64_t count : {std::uint64_t{1}, std::uint64_t{256}}) {
      const CollArgs a = args_of(Collective::reduce_scatter, w.n, count, false, 0);
      const auto shaped = predict_shape(a, "pairwise", m);
      CAPTURE(w.topology);
      CAPTURE(w.n);
      CAPTURE(count);
      REQUIRE(shaped.has_value());
      CHECK(shaped->us == doctest::Approx(lowered_us(a, "pairwise", m)).epsilon(1e-9));
    }
    // The chains of scatter and gather, from three roots: each step its own up to two
    // repeats of the machine, every longer one priced as the whole chain.
    for (const Collective c : {Collective::scatter, Collective::gather})
      for (const std::int32_t root : {0, w.n / 2 + 5, w.n - 1})
        for (const bool in_place : {false, true}) {
          const CollArgs a = args_of(c, w.n, 64, in_place, root);
          const auto shaped = predict_shape(a, "chain", m);
          CAPTURE(name_of(c));
          CAPTURE(root);
          CAPTURE(in_place);
          REQUIRE(shaped.has_value());
          CHECK(shaped->us == doctest::Approx(lowered_us(a, "chain", m)).epsilon(1e-9));
        }
    if (w.n > 576) continue;  // an all-to-all's schedule of n^2 transfers: the smaller ones
    for (const char* algo : {"pairwise", "linear", "bruck"}) {
      const CollArgs a = args_of(Collective::alltoall, w.n, 16, false, 0);
      const auto shaped = predict_shape(a, algo, m);
      CAPTURE(w.topology);
      CAPTURE(w.n);
      CAPTURE(algo);
      REQUIRE(shaped.has_value());
      CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(1e-9));
    }
  }
  // Where memory or NVLink is what bounds a step (not so in the presets): a block that
  // lands on another rail first crosses NVLink to the card of its rail (PXN), so the steps
  // that leave every group differ by where in the next node they land; and a rank's
  // memory carries what it receives as well as what it sends.
  for (const char* bound : {R"("memory_gbps": 1}, "intra": {"kind": "nvlink", "bandwidth_gbps": 1000)",
                            R"("memory_gbps": 100000}, "intra": {"kind": "nvlink", "bandwidth_gbps": 1)"}) {
    auto t = parse_topology(std::string(R"({"version": 1, "name": "bound",
      "devices": {"kind": "gpu", "per_node": 4, )") +
                                bound + R"(, "latency_us": 1},
      "nic": {"per_node": 4, "bandwidth_gbps": 1000, "latency_us": 5, "rails": true},
      "tiers": [{"name": "leaf", "nodes": 2, "latency_us": 1}, {"name": "spine", "nodes": 64, "latency_us": 2}]})",
                            "bound.json");
    REQUIRE_MESSAGE(t.ok(), t.error().format());
    Machine m;
    m.cpu = false;
    m.topology = *t;
    m.nodes = 16;  // 64 ranks: the machine repeats every leaf of 8
    CAPTURE(std::string(bound));
    for (const auto& [c, algo] :
         std::vector<std::pair<Collective, std::string>>{{Collective::reduce_scatter, "pairwise"},
                                                         {Collective::alltoall, "pairwise"},
                                                         {Collective::alltoall, "linear"},
                                                         {Collective::alltoall, "bruck"},
                                                         {Collective::scatter, "chain"},
                                                         {Collective::gather, "chain"}}) {
      const CollArgs a = args_of(c, 64, 1 << 12, false, has_root(c) ? 37 : 0);
      const auto shaped = predict_shape(a, algo, m);
      CAPTURE(algo);
      REQUIRE(shaped.has_value());
      CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(1e-9));
    }
  }
  // 65536 ranks: on PCIe nodes, whose leaf groups of 128 ranks repeat, in far less than the
  // four billion transfers of its schedule; on DGX nodes under spine groups of 8192 ranks
  // a repeat is too large to write out, but the tiers nest: one node's transfers, and the
  // groups' loads counted.
  const auto pcie =
      predict_shape(args_of(Collective::reduce_scatter, 65536, 1024, false, 0), "pairwise", machine("pcie-8gpu", 8192));
  REQUIRE(pcie.has_value());
  const auto ring =
      predict_shape(args_of(Collective::reduce_scatter, 65536, 1024, false, 0), "ring", machine("pcie-8gpu", 8192));
  REQUIRE(ring.has_value());
  CHECK(pcie->us > ring->us);  // as many steps, most of them crossing the spine
  const Machine dgx = machine("dgx-h100", 8192);
  REQUIRE(shape_repeat(dgx, 65536).counted_groups);
  const auto dgx_pairwise = predict_shape(args_of(Collective::reduce_scatter, 65536, 1024, false, 0), "pairwise", dgx);
  const auto dgx_ring = predict_shape(args_of(Collective::reduce_scatter, 65536, 1024, false, 0), "ring", dgx);
  REQUIRE(dgx_pairwise.has_value());
  REQUIRE(dgx_ring.has_value());
  // A fat tree that is not oversubscribed carries whatever the cards send: a step of the
  // pairwise exchange, whose every block leaves its node and most their groups, costs what
  // a step of the ring does.
  CHECK(dgx_pairwise->us == doctest::Approx(dgx_ring->us).epsilon(1e-9));
  for (const char* algo : {"pairwise", "linear"}) {
    const auto all = predict_shape(args_of(Collective::alltoall, 65536, 16, false, 0), algo, dgx);
    CAPTURE(algo);
    REQUIRE(all.has_value());
    CHECK(all->us > 0);
  }
  // A scatter's chain: 65535 steps one after another, against the binomial tree's 16.
  const auto chain =
      predict_shape(args_of(Collective::scatter, 65536, 1024, false, 1000), "chain", machine("pcie-8gpu", 8192));
  const auto tree =
      predict_shape(args_of(Collective::scatter, 65536, 1024, false, 1000), "binomial", machine("pcie-8gpu", 8192));
  REQUIRE(chain.has_value());
  REQUIRE(tree.has_value());
  CHECK(chain->us > 10 * tree->us);
  // And a gather's, on DGX nodes: each long step priced from two nodes' links and the
  // first link that climbs each tier.
  const auto dgx_chain = predict_shape(args_of(Collective::gather, 65536, 1024, false, 1000), "chain", dgx);
  const auto dgx_tree = predict_shape(args_of(Collective::gather, 65536, 1024, false, 1000), "binomial", dgx);
  REQUIRE(dgx_chain.has_value());
  REQUIRE(dgx_tree.has_value());
  CHECK(dgx_chain->us > 10 * dgx_tree->us);
}

TEST_CASE("shapes: 65536 ranks on 8192 DGX nodes: rings use every card, and latency grows with the ring") {
  const std::int32_t n = 65536;
  const Machine m = machine("dgx-h100", n / 8);
  const std::uint64_t big = std::uint64_t{1} << 28;  // 1 GiB of float32 per rank
  const auto ring = predict_shape(args_of(Collective::allreduce, n, big, false, 0), "ring", m);
  const auto rings = predict_shape(args_of(Collective::allreduce, n, big, false, 0), "rings", m);
  const auto hier = predict_shape(args_of(Collective::allreduce, n, big, false, 0), "hierarchical", m);
  REQUIRE(ring.has_value());
  REQUIRE(rings.has_value());
  REQUIRE(hier.has_value());
  // At this scale a ring of 1 GiB is bound by its 2(n-1) steps' launches, not by bytes:
  // two levels (a ring per node, one across) take far fewer steps.
  REQUIRE(ring->levels.size() == 1);
  CHECK(ring->levels[0].level == "launches and compute");
  CHECK(hier->us * 5 < ring->us);
  // On 8 nodes a single ring crosses each node boundary on one card; the channels on all eight.
  const Machine eight = machine("dgx-h100", 8);
  const auto ring64 =
      predict_shape(args_of(Collective::allreduce, 64, std::uint64_t{1} << 24, false, 0), "ring", eight);
  const auto rings64 =
      predict_shape(args_of(Collective::allreduce, 64, std::uint64_t{1} << 24, false, 0), "rings", eight);
  REQUIRE(ring64.has_value());
  REQUIRE(rings64.has_value());
  CHECK(rings64->us * 2 < ring64->us);
  // A tiny message is latency-bound: twice the ranks, about twice the ring's time.
  const auto small = predict_shape(args_of(Collective::allreduce, n, 1, false, 0), "ring", m);
  const Machine half_m = machine("dgx-h100", n / 16);
  const auto half = predict_shape(args_of(Collective::allreduce, n / 2, 1, false, 0), "ring", half_m);
  REQUIRE(small.has_value());
  REQUIRE(half.has_value());
  CHECK(small->us / half->us == doctest::Approx(2.0).epsilon(0.05));
  // Recursive doubling takes log2(n) steps: far fewer than the ring's 2(n-1).
  const auto rd = predict_shape(args_of(Collective::allreduce, n, 1, false, 0), "recursive_doubling", m);
  REQUIRE(rd.has_value());
  CHECK(rd->us * 100 < small->us);
  // Every level the time is spent on adds up to the whole.
  double sum = 0;
  for (const auto& l : rings->levels) sum += l.us;
  CHECK(sum == doctest::Approx(rings->us));
}

TEST_CASE("shapes: under nested tiers, one node's transfers and the groups' loads counted price like the schedule") {
  // Three tiers of 2, 4 and 8 nodes under 16 nodes of 2 ranks, oversubscribed more at
  // every tier and each with its own latency: a shift's blocks leave some groups of each
  // tier, a chain climbs each tier at its own link, and the counted price must be the
  // schedule's for every root and at the sizes where latency or bandwidth bounds.
  for (const bool rails : {false, true}) {
    auto t = parse_topology(std::string(R"({"version": 1, "name": "nested",
      "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 3000},
      "intra": {"kind": "nvlink", "bandwidth_gbps": 450, "latency_us": 1},
      "nic": {"per_node": 2, "bandwidth_gbps": 50, "latency_us": 3, "rails": )") +
                                (rails ? "true" : "false") + R"(},
      "tiers": [{"name": "leaf", "nodes": 2, "oversubscription": 2, "latency_us": 1},
                {"name": "spine", "nodes": 4, "oversubscription": 4, "latency_us": 5},
                {"name": "core", "nodes": 8, "oversubscription": 8, "latency_us": 20}]})",
                            "nested.json");
    REQUIRE_MESSAGE(t.ok(), t.error().format());
    Machine m;
    m.cpu = false;
    m.topology = *t;
    m.nodes = 16;
    const std::int32_t n = 32;
    const ShapeRepeat rep = shape_repeat(m, n);
    REQUIRE(rep.counted_groups);
    CHECK(rep.group_ranks == std::vector<std::int64_t>{4, 8, 16});
    CAPTURE(rails);
    for (const std::uint64_t count : {std::uint64_t{1}, std::uint64_t{1} << 16}) {
      CAPTURE(count);
      for (const auto& [c, algo] :
           std::vector<std::pair<Collective, std::string>>{{Collective::reduce_scatter, "pairwise"},
                                                           {Collective::alltoall, "pairwise"},
                                                           {Collective::alltoall, "linear"}}) {
        const CollArgs a = args_of(c, n, count, false, 0);
        const auto shaped = predict_shape(a, algo, m);
        CAPTURE(algo);
        REQUIRE(shaped.has_value());
        CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(1e-9));
      }
      for (const Collective c : {Collective::scatter, Collective::gather})
        for (std::int32_t root = 0; root < n; ++root) {
          const CollArgs a = args_of(c, n, count, false, root);
          const auto shaped = predict_shape(a, "chain", m);
          CAPTURE(name_of(c));
          CAPTURE(root);
          REQUIRE(shaped.has_value());
          CHECK(shaped->us == doctest::Approx(lowered_us(a, "chain", m)).epsilon(1e-9));
        }
      // The broadcast's pipelined chain: 3, 4 and 64 chunks, so stretches shorter and
      // longer than two nodes' links, from every root.
      for (const std::uint64_t elements : {std::uint64_t{3}, std::uint64_t{4}, std::uint64_t{1} << 20})
        for (std::int32_t root = 0; root < n; ++root) {
          const CollArgs a = args_of(Collective::broadcast, n, elements, false, root);
          const auto shaped = predict_shape(a, "chain", m);
          CAPTURE(elements);
          CAPTURE(root);
          REQUIRE(shaped.has_value());
          CHECK(shaped->us == doctest::Approx(lowered_us(a, "chain", m)).epsilon(1e-9));
        }
      // Every other step that every node takes alike (rings, the node-aware algorithms,
      // Bruck, dissemination) is priced from node 0's transfers too: every algorithm of
      // every collective, in place and out.
      for (const Collective c : {Collective::allreduce, Collective::allgather, Collective::reduce_scatter,
                                 Collective::broadcast, Collective::reduce, Collective::alltoall, Collective::barrier})
        for (const auto& algo : algorithm_names(c))
          for (const bool in_place : {false, true}) {
            if (in_place && !supports_in_place(c)) continue;
            const CollArgs a = args_of(c, n, c == Collective::barrier ? 0 : count * n, in_place, has_root(c) ? 5 : 0);
            const auto shaped = predict_shape(a, algo, m);
            if (!shaped) continue;
            CAPTURE(name_of(c));
            CAPTURE(algo);
            CAPTURE(in_place);
            CHECK(shaped->us == doctest::Approx(lowered_us(a, algo, m)).epsilon(1e-9));
          }
    }
  }
}

TEST_CASE("auto on a topology passes over a price the model knows to be too low, unless every candidate's is") {
  // At 128 ranks on 16 DGX nodes the flat fan-outs, the central barrier and the linear
  // all-to-all put 127 messages through one rank in a step, priced as one latency: the
  // fastest prices, and too low. The tuner takes the fastest of the others.
  const Machine m = machine("dgx-h100", 16);
  struct Case {
    Collective coll;
    const char* too_low;
  };
  for (const Case& k :
       {Case{Collective::broadcast, "flat"}, Case{Collective::scatter, "flat"}, Case{Collective::gather, "flat"},
        Case{Collective::barrier, "central"}, Case{Collective::alltoall, "linear"}}) {
    const CollArgs a = args_of(k.coll, 128, k.coll == Collective::barrier ? 0 : 1, false, 0);
    CAPTURE(name_of(k.coll));
    const std::string pick = pick_algorithm(a, m);
    const Prediction low = lowered(a, k.too_low, m), picked = lowered(a, pick, m);
    CHECK(priced_too_low(low.busiest_messages));
    CHECK(low.us < picked.us);
    CHECK(pick != k.too_low);
    CHECK_FALSE(priced_too_low(picked.busiest_messages));
    // ... and it is the fastest of those priced right.
    for (const auto& name : algorithm_names(k.coll)) {
      const Prediction p = lowered(a, name, m);
      CAPTURE(name);
      if (!priced_too_low(p.busiest_messages)) CHECK(p.us >= picked.us / 1.02);
    }
  }
  // On one node no rank handles more than 7 messages a step: the fastest price is picked,
  // flat or not.
  const Machine one = machine("dgx-h100", 1);
  const CollArgs small = args_of(Collective::broadcast, 8, 1, false, 0);
  const std::string pick = pick_algorithm(small, one);
  for (const auto& name : algorithm_names(Collective::broadcast)) {
    CAPTURE(name);
    CHECK(lowered_us(small, name, one) >= lowered_us(small, pick, one) / 1.02);
  }
}

TEST_CASE("shapes: property: on random topologies and placements every shape prices like its schedule") {
  // Devices, cards (on rails or shared), links bound by memory, NVLink or the network,
  // switch tiers that do or do not divide the nodes, nodes filled or one left partly
  // empty, ranks sharing devices: whatever the machine, a shape (with or without a repeat
  // of the machine) must price what the lowered schedule prices.
  std::mt19937 rng(20261207);
  auto pick = [&rng](std::initializer_list<int> v) {
    return *(v.begin() + std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng));
  };
  int compared = 0, repeating = 0, counted = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const int devices = pick({1, 2, 3, 4, 8});
    const int cards = std::uniform_int_distribution<int>(1, devices)(rng);
    std::string tiers;
    int group = 1;
    for (int k = pick({0, 1, 2, 3}); k > 0; --k) {
      group *= pick({2, 3, 4});
      tiers += std::string(tiers.empty() ? "" : ", ") + R"({"name": "t)" + std::to_string(k) + R"(", "nodes": )" +
               std::to_string(group) + R"(, "oversubscription": )" + std::to_string(pick({1, 2, 4})) +
               R"(, "latency_us": )" + std::to_string(pick({0, 1, 3})) + "}";
    }
    const std::string text = R"({"version": 1, "name": "random",
      "devices": {"kind": "gpu", "per_node": )" +
                             std::to_string(devices) + R"(, "memory_gbps": )" + std::to_string(pick({1, 100, 3000})) +
                             R"(, "launch_us": )" + std::to_string(pick({0, 0, 4})) + R"(, "step_us": )" +
                             std::to_string(pick({0, 1})) + R"(},
      "intra": {"kind": "nvlink", "bandwidth_gbps": )" +
                             std::to_string(pick({1, 50, 450})) +
                             R"(, "latency_us": 1},
      "nic": {"per_node": )" +
                             std::to_string(cards) + R"(, "bandwidth_gbps": )" + std::to_string(pick({5, 50, 500})) +
                             R"(, "latency_us": 3, "rails": )" + (pick({0, 1}) ? "true" : "false") + R"(},
      "tiers": [)" + tiers + "]}";
    auto t = parse_topology(text, "random.json");
    REQUIRE_MESSAGE(t.ok(), t.error().format());
    Machine m;
    m.cpu = false;
    m.topology = *t;
    m.nodes = std::uniform_int_distribution<int>(1, 16)(rng);
    const int per_node = std::uniform_int_distribution<int>(1, 2 * devices)(rng);
    const std::int32_t n = std::max<std::int32_t>(
        1, static_cast<std::int32_t>(m.nodes * per_node - (m.nodes > 1 && per_node > 1 ? pick({0, 0, 1}) : 0)));
    const ShapeRepeat rep = shape_repeat(m, n);
    if (rep.period > 0 && rep.period < n) ++repeating;
    // One node's transfers and the groups' loads counted (ShapePhase::node_periodic).
    if (rep.counted_groups && rep.period > rep.node_ranks) ++counted;
    for (int call = 0; call < 4; ++call) {
      const Collective c = static_cast<Collective>(
          pick({static_cast<int>(Collective::allreduce), static_cast<int>(Collective::allgather),
                static_cast<int>(Collective::reduce_scatter), static_cast<int>(Collective::broadcast),
                static_cast<int>(Collective::reduce), static_cast<int>(Collective::scatter),
                static_cast<int>(Collective::gather), static_cast<int>(Collective::alltoall)}));
      const auto names = algorithm_names(c);
      const std::string algo = names[std::uniform_int_distribution<std::size_t>(0, names.size() - 1)(rng)];
      const std::uint64_t count = static_cast<std::uint64_t>(pick({1, 7, 1000, 4096}));
      const bool in_place = supports_in_place(c) && pick({0, 1});
      const std::int32_t root = has_root(c) ? std::uniform_int_distribution<std::int32_t>(0, n - 1)(rng) : 0;
      const CollArgs a = args_of(c, n, count, in_place, root);
      const auto shaped = predict_shape(a, algo, m);
      if (!shaped) continue;
      CAPTURE(text);
      CAPTURE(m.nodes);
      CAPTURE(n);
      CAPTURE(name_of(c));
      CAPTURE(algo);
      CAPTURE(count);
      CAPTURE(in_place);
      CAPTURE(root);
      // The schedule may leave out whole steps of empty blocks, which on a machine without
      // launch costs may be most of the time: no cap on how far above.
      check_against_schedule(shaped->us, lowered_us(a, algo, m), count, n, 0);
      ++compared;
    }
  }
  CHECK(compared > 1000);
  CHECK(repeating > 100);
  CHECK(counted > 30);
}
