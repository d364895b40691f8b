// Topology files, their presets, and the flow-level model that prices a Schedule on
// them: what a bound resource is, and that more contention never makes a step faster.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "collscope/backend.h"
#include "collscope/calibration.h"
#include "collscope/collective.h"
#include "collscope/machine.h"
#include "collscope/model.h"
#include "collscope/scenario.h"
#include "collscope/topology.h"

using namespace collscope;

namespace {

Topology parse_ok(const std::string& text) {
  auto t = parse_topology(text, "t.json");
  if (!t) FAIL(t.error().format());
  return *t;
}

Error parse_err(const std::string& text) {
  auto t = parse_topology(text, "t.json");
  REQUIRE_FALSE(t.ok());
  return t.error();
}

// Two GPUs per node, 2 cards per node, on rails under one leaf of 2 nodes, then a spine.
const char* kSmall = R"({
  "version": 1, "name": "small",
  "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 1000},
  "intra": {"kind": "nvlink", "bandwidth_gbps": 100, "latency_us": 1},
  "nic": {"per_node": 2, "bandwidth_gbps": 10, "latency_us": 5, "rails": true},
  "tiers": [{"name": "leaf", "nodes": 2, "latency_us": 1}, {"name": "spine", "nodes": 64, "oversubscription": 4, "latency_us": 2}]
})";

Schedule lowered(Collective c, const std::string& algo, std::int32_t ranks, std::uint64_t count) {
  QuickSpec q;
  q.coll = c;
  q.algorithm = algo;
  q.ranks = ranks;
  q.count = count;
  auto sc = scenario_from_spec(q);
  REQUIRE(sc.ok());
  LowerOptions o;
  o.slice_bytes = 0;
  auto s = lower_scenario(*sc, o);
  REQUIRE(s.ok());
  return *s;
}

// A schedule of one step with the given transfers of `count` float32 elements.
Schedule one_step(std::int32_t ranks, const std::vector<std::pair<int, int>>& pairs, std::uint64_t count) {
  Schedule s;
  s.ranks = ranks;
  s.dtype = DType::float32;
  s.buffers.push_back(BufferDecl{"x", std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), 4 * count), false});
  s.calls.push_back(Call{});
  Step st;
  int slot = 0;
  for (auto [a, b] : pairs) {
    Transfer t;
    t.src = {a, 0, 0};
    t.dst = {b, 0, static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(1 + (slot++ % 3))};
    t.count = count;
    st.transfers.push_back(t);
  }
  s.steps.push_back(st);
  return s;
}

}  // namespace

TEST_CASE("topology: every preset reads, cites its sources and is a GPU topology") {
  const auto presets = topology_presets();
  for (const char* name : {"dgx-h100", "dgx-h200", "pcie-8gpu", "gb200-nvl72"})
    CHECK(std::find(presets.begin(), presets.end(), name) != presets.end());
  for (const auto& name : presets) {
    CAPTURE(name);
    auto t = load_topology(name);
    REQUIRE(t.ok());
    CHECK(t->name == name);
    CHECK_FALSE(t->title.empty());
    CHECK(t->sources.size() >= 2);
    CHECK(t->device_kind == "gpu");
    CHECK(t->intra.bandwidth_gbps > 0);
    CHECK(t->nic.per_node > 0);
    CHECK_FALSE(t->tiers.empty());
  }
  auto h100 = load_topology("dgx-h100");
  REQUIRE(h100.ok());
  CHECK(h100->devices_per_node == 8);
  CHECK(h100->intra.bandwidth_gbps == 450);  // NVLink 4: 900 GB/s both ways
  CHECK(h100->nic.bandwidth_gbps == 50);     // 400 Gb/s
}

TEST_CASE("topology: presets price what NCCL's bulk transfers reach, below line rate, alike for alike hardware") {
  auto h100 = load_topology("dgx-h100");
  auto h200 = load_topology("dgx-h200");
  auto gb200 = load_topology("gb200-nvl72");
  REQUIRE(h100.ok());
  REQUIRE(h200.ok());
  REQUIRE(gb200.ok());
  // Protocol headers and flow control: NVLink 4 and an NDR card carry less than their line rate.
  CHECK(h100->intra.efficiency < 1);
  CHECK(h100->nic.efficiency < 1);
  CHECK(h100->intra.effective_gbps() < h100->intra.bandwidth_gbps);
  CHECK(h100->nic.effective_gbps() == doctest::Approx(h100->nic.bandwidth_gbps * h100->nic.efficiency));
  // The same NVLink 4 and ConnectX-7 cards on H100 and H200; the same card on GB200.
  CHECK(h200->intra.effective_gbps() == doctest::Approx(h100->intra.effective_gbps()));
  CHECK(h200->nic.effective_gbps() == doctest::Approx(h100->nic.effective_gbps()));
  CHECK(gb200->nic.effective_gbps() == doctest::Approx(h100->nic.effective_gbps()));
}

TEST_CASE("topology: a device's memory priced at what a copy reaches, the datasheet's when not stated") {
  auto plain = parse_topology(kSmall, "t.json");
  REQUIRE(plain.ok());
  CHECK(plain->memory_efficiency == 1);
  CHECK(plain->effective_memory_gbps() == 1000);
  std::string text = kSmall;
  const std::string from = "\"memory_gbps\": 1000}";
  text.replace(text.find(from), from.size(), "\"memory_gbps\": 1000, \"memory_efficiency\": 0.5}");
  auto half = parse_topology(text, "t.json");
  REQUIRE(half.ok());
  CHECK(half->effective_memory_gbps() == doctest::Approx(500));
  // Eight ranks sharing one device: the ring is bound by that device's memory, so half the
  // memory's reach is close to twice the time (the fixed costs stay).
  const Schedule s = lowered(Collective::allreduce, "ring", 8, 1 << 24);
  Placement one = place(*plain, 8, 1);
  one.devices_per_node = 1;
  const Prediction a = price_on_topology(s, *plain, one), b = price_on_topology(s, *half, one);
  REQUIRE_FALSE(b.levels.empty());
  CHECK(b.levels[0].level == "device memory");
  CHECK(b.us > 1.9 * a.us);
  CHECK(b.us <= 2 * a.us);
  // The preset measured on one H200 states it; it stays below 1.
  auto h200 = load_topology("dgx-h200");
  REQUIRE(h200.ok());
  CHECK(h200->memory_efficiency < 1);
  CHECK(h200->memory_efficiency > 0.5);

  auto e = parse_err(
      R"({"version": 1, "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1, "memory_efficiency": 1.5}})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/devices/memory_efficiency");
  e = parse_err(
      R"({"version": 1, "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1, "memory_efficiency": 0}})");
  CHECK(e.id == "topology.out_of_range");
}

TEST_CASE("topology: mistakes are reported with their place, id and what to do") {
  auto e = parse_err(R"({"version": 1, "devices": {"kind": "gpu", "per_node": 8, "memory_gbps": 1, "luanch_us": 2}})");
  CHECK(e.id == "topology.unknown_key");
  CHECK(e.message.find("did you mean \"launch_us\"") != std::string::npos);
  CHECK(e.where.file == "t.json");
  CHECK(e.where.line == 1);
  CHECK(e.where.col > 1);
  CHECK(e.where.pointer == "/devices/luanch_us");

  e = parse_err("{\"version\": 1,\n \"devices\": {\"kind\": \"gpu\", \"per_node\": \"8\", \"memory_gbps\": 1}}");
  CHECK(e.id == "topology.wrong_type");
  CHECK(e.where.line == 2);
  CHECK(e.where.pointer == "/devices/per_node");

  e = parse_err(R"({"version": 1, "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 1},
                    "intra": {"bandwidth_gbps": -5}})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/intra/bandwidth_gbps");

  e = parse_err(R"({"version": 1, "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 1}})");
  CHECK(e.id == "topology.missing_key");  // two devices and no link between them
  CHECK(e.message.find("intra") != std::string::npos);

  e = parse_err(R"({"version": 1, "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 1},
                    "intra": {"bandwidth_gbps": 5, "switch_reduction": 1.5}})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/intra/switch_reduction");

  e = parse_err(R"({"version": 2})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/version");

  e = parse_err(R"({"version": 1, "devices": {"kind": "tpu", "per_node": 1, "memory_gbps": 1}})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/devices/kind");

  e = parse_err(R"({"version": 1, "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1},
                    "nic": {"per_node": 1, "bandwidth_gbps": 1},
                    "tiers": [{"name": "leaf", "nodes": 8}, {"name": "spine", "nodes": 4}]})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/tiers/1/nodes");

  e = parse_err(R"({"version": 1, "nodes": 4, "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1}})");
  CHECK(e.message.find("needs \"nic\"") != std::string::npos);
  CHECK(e.id == "topology.missing_key");
  CHECK(e.where.pointer == "/nodes");

  e = parse_err(R"({"version": 2, "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1}})");
  CHECK(e.message == "unsupported version 2");
  CHECK(parse_err(R"({"version": 0, "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1}})").message ==
        "unsupported version 0");
  CHECK(e.where.pointer == "/version");

  e = parse_err("{\"version\": 1,, }");
  CHECK(e.id == "topology.parse");
  CHECK(e.where.line == 1);

  e = parse_err(R"({"version": 1, "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 1},
                    "intra": {"kind": "nvlnk", "bandwidth_gbps": 5}})");
  CHECK(e.id == "topology.out_of_range");
  CHECK(e.where.pointer == "/intra/kind");
  CHECK(e.message.find("did you mean \"nvlink\"") != std::string::npos);

  e = parse_err("{\"version\": 1,\n \"intra\": {\"bandwidth_gbps\": 5, \"bandwidth_gbps\": 6}}");
  CHECK(e.id == "topology.duplicate_key");
  CHECK(e.where.line == 2);
  CHECK(e.where.pointer == "/intra/bandwidth_gbps");

  e = parse_err("  ");
  CHECK(e.id == "topology.parse");
  CHECK(e.hint.find("scenario") == std::string::npos);

  auto u = load_topology("dgx-h10");
  REQUIRE_FALSE(u.ok());
  CHECK(u.error().id == "topology.unknown");
  CHECK(u.error().message.find("did you mean \"dgx-h100\"") != std::string::npos);
  CHECK(u.error().hint.find("this-machine") != std::string::npos);
}

TEST_CASE("topology model: a step is as long as its busiest resource, plus latency and fixed costs") {
  const Topology t = parse_ok(kSmall);
  const Placement p = place(t, 8, 4);  // 4 nodes x 2 GPUs
  CHECK(p.ranks_per_node == 2);
  CHECK(p.node_of(5) == 2);
  CHECK(p.device_of(5) == 1);
  TopologyPricer pricer(t, p);
  const std::uint64_t n = 1 << 20;  // 4 MiB of float32
  const double mb = 4.0 * n / 1e3;  // bytes / 1e3: microseconds at 1 GB/s

  // Inside a node: the NVLink of 100 GB/s bounds it, plus its 1 us latency.
  auto intra = pricer.step(one_step(8, {{0, 1}}, n), one_step(8, {{0, 1}}, n).steps[0]);
  CHECK(intra.level == Level::node);
  CHECK(intra.us == doctest::Approx(mb / 100 + 1));

  // Signals alone (a barrier's) move no bytes: the latency of the longest names the
  // level, never the memory.
  auto signal = pricer.step(one_step(8, {{0, 2}}, 0), one_step(8, {{0, 2}}, 0).steps[0]);
  CHECK(signal.level == Level::network);
  auto near = pricer.step(one_step(8, {{0, 1}}, 0), one_step(8, {{0, 1}}, 0).steps[0]);
  // Inside the node: the longer of the link's latency and the step's synchronisation.
  CHECK(near.level == (t.intra.latency_us > t.step_us ? Level::node : Level::launch));

  // Across nodes under one leaf: the card (10 GB/s) bounds it; latency 5 + the leaf's 0.
  Schedule across = one_step(8, {{0, 2}}, n);
  auto a = pricer.step(across, across.steps[0]);
  CHECK(a.level == Level::network);
  CHECK(a.us == doctest::Approx(mb / 10 + 5));

  // Over the spine: the leaf group's uplink for rail 0 carries 2 nodes x 10 GB/s, so one
  // message is still card-bound, but it pays the leaf tier's latency.
  Schedule spine = one_step(8, {{0, 4}}, n);
  auto sp = pricer.step(spine, spine.steps[0]);
  CHECK(sp.us == doctest::Approx(mb / 10 + 5 + 1));

  // Two senders on one card: twice as long. On two cards: as long as one.
  Schedule same_card = one_step(8, {{0, 2}, {0, 3}}, n);  // device 0 to devices 0 and 1 of node 1: rails 0 and 1
  Schedule shared = one_step(8, {{0, 2}, {2, 4}}, n);
  auto sc = pricer.step(same_card, same_card.steps[0]);
  // Rank 0 -> rank 3 leaves through rail 1 (PXN): over NVLink to device 1 first.
  CHECK(sc.us == doctest::Approx(mb / 10 + 5));
  Schedule two_on_one = one_step(8, {{0, 2}, {1, 4}}, n);  // both to device 0 of other nodes: rail 0 twice on node 0
  auto two = pricer.step(two_on_one, two_on_one.steps[0]);
  CHECK(two.us == doctest::Approx(2 * mb / 10 + 5 + 1));
  (void)shared;
}

TEST_CASE("topology model: one host thread launching a kernel per transfer pays a launch per transfer") {
  // One device, launches of 4 us and a step's synchronisation of 2 us: small transfers
  // are bound by what starts them, never by the device's memory.
  const Topology t = parse_ok(R"({
    "version": 1, "name": "one",
    "devices": {"kind": "gpu", "per_node": 1, "memory_gbps": 1000, "launch_us": 4, "step_us": 2},
    "intra": {"kind": "nvlink", "bandwidth_gbps": 100, "latency_us": 1},
    "nic": {"per_node": 1, "bandwidth_gbps": 10, "latency_us": 5},
    "tiers": [{"name": "leaf", "nodes": 64, "latency_us": 1}]
  })");
  Placement grouped = place(t, 4, 1);
  REQUIRE(grouped.devices_per_node == 1);
  Placement serial = grouped;
  serial.serial_launches = true;
  // Four ranks on one device, each receiving from the next: 4 transfers of 4 ranks, then
  // 6 transfers of which 3 land on rank 0 and 3 on rank 1.
  const Schedule ring = one_step(4, {{1, 0}, {2, 1}, {3, 2}, {0, 3}}, 16);
  const Schedule fan = one_step(4, {{1, 0}, {2, 0}, {3, 0}, {2, 1}, {3, 1}, {0, 1}}, 16);
  // Grouped (NCCL): one launch and one synchronisation a step, whatever it holds.
  CHECK(TopologyPricer(t, grouped).step(ring, ring.steps[0]).us == doctest::Approx(4 + 2));
  CHECK(TopologyPricer(t, grouped).step(fan, fan.steps[0]).us == doctest::Approx(4 + 2));
  // Serial: a launch per transfer and a synchronisation per rank that runs a transfer.
  const auto r = TopologyPricer(t, serial).step(ring, ring.steps[0]);
  CHECK(r.us == doctest::Approx(4 * 4 + 2 * 4));
  CHECK(r.level == Level::launch);
  CHECK(TopologyPricer(t, serial).step(fan, fan.steps[0]).us == doctest::Approx(6 * 4 + 2 * 2));
  // Large transfers: the host's launches overlap the data, and the device's memory bounds
  // the step (4 transfers of 64 MiB each read and written: 4 x 2 x 64 MiB at 1000 GB/s).
  const std::uint64_t n = 16u << 20;
  const Schedule big = one_step(4, {{1, 0}, {2, 1}, {3, 2}, {0, 3}}, n);
  const auto b = TopologyPricer(t, serial).step(big, big.steps[0]);
  CHECK(b.level == Level::memory);
  CHECK(b.us == doctest::Approx(4 * 2 * 4.0 * static_cast<double>(n) / 1e6));

  // The cuda backend says it launches that way; a machine priced for it does too.
  CHECK(capabilities_of("cuda").serial_launches);
  CHECK_FALSE(capabilities_of("nccl").serial_launches);
  CHECK_FALSE(capabilities_of("cpu").serial_launches);
  auto m = machine_for("dgx-h200", 1, capabilities_of("cuda"), DType::float32, "");
  REQUIRE(m.ok());
  CHECK(m->placement(8).serial_launches);
  auto nccl = machine_for("dgx-h200", 1, capabilities_of("nccl"), DType::float32, "");
  REQUIRE(nccl.ok());
  CHECK_FALSE(nccl->placement(8).serial_launches);
  // A ring all-reduce of 8 ranks, 4 KiB: 14 steps of 8 transfers, launch-bound.
  const Schedule small = lowered(Collective::allreduce, "ring", 8, 1024);
  REQUIRE(small.steps.size() == 14);
  const double serial_us = predict(small, *m, true).us, grouped_us = predict(small, *nccl, true).us;
  CHECK(serial_us > 6 * grouped_us);
}

TEST_CASE("machine: a run here shares the devices found, a plan keeps the topology's") {
  auto m = machine_for("dgx-h200", 1, capabilities_of("cuda"), DType::float32, "");
  REQUIRE(m.ok());
  CHECK(m->label() == "topology dgx-h200, 1 node x 8 GPUs");
  CHECK(m->placement(8).device_of(5) == 5);
  Machine here = *m;
  here.use_devices_found(1);  // one GPU on this machine: every rank on it
  CHECK(here.label() == "topology dgx-h200, 1 node x 1 GPUs");
  CHECK(here.placement(8).device_of(5) == 0);
  here.use_devices_found(0);  // none found (a dry run, no device): as it was
  CHECK(here.placement(8).device_of(5) == 0);
  // Eight ranks on one device move their bytes through its memory; on eight devices over
  // NVLink, inside the node.
  const Schedule s = lowered(Collective::allreduce, "ring", 8, 64u << 20);
  const Prediction one = predict(s, here, true), eight = predict(s, *m, true);
  REQUIRE(one.levels.size() == 1);
  CHECK(one.levels[0].level == "device memory");
  REQUIRE(eight.levels.size() == 1);
  CHECK(eight.levels[0].level == "inside the node");
  CHECK(one.us != doctest::Approx(eight.us).epsilon(0.01));
  // The cpu model has no devices to share.
  auto cpu = machine_for("", 0, capabilities_of("cpu"), DType::float32, "/nonexistent-collscope-config");
  REQUIRE(cpu.ok());
  cpu->use_devices_found(2);
  CHECK(cpu->devices_used == 0);
  // Without a GPU the device backends find none.
  CHECK(devices_found("cpu") == 0);
}

TEST_CASE("topology model: oversubscription slows what crosses the tier, and only that") {
  Topology t = parse_ok(kSmall);
  const Placement p = place(t, 64, 32);
  // Both nodes of leaf group 0 (nodes 0, 1) send from device 0 to nodes 16 and 17:
  // 2 messages through the group's rail-0 uplink. Non-blocking, it carries 2 nodes x
  // 10 GB/s and each card is the bound; 4 times oversubscribed, it carries 5 GB/s.
  std::vector<std::pair<int, int>> pairs = {{0, 32}, {2, 34}};
  Schedule s = one_step(64, pairs, 1 << 20);
  const double mb = 4.0 * (1 << 20) / 1e3;
  TopologyPricer full(t, p);
  CHECK(full.step(s, s.steps[0]).us == doctest::Approx(mb / 10 + 5 + 1));
  t.tiers[0].oversubscription = 4;
  TopologyPricer over(t, p);
  auto c = over.step(s, s.steps[0]);
  CHECK(c.level == Level::network);
  CHECK(c.us == doctest::Approx(2 * mb / 5 + 5 + 1));
  // A message that stays under one leaf does not feel the leaf's uplinks.
  Schedule near = one_step(64, {{0, 2}}, 1 << 20);
  CHECK(over.step(near, near.steps[0]).us == doctest::Approx(mb / 10 + 5));
}

TEST_CASE("topology model: ring all-reduce inside an NVSwitch node reaches the link's bandwidth") {
  auto t = load_topology("dgx-h100");
  REQUIRE(t.ok());
  for (std::int32_t ranks : {2, 4, 8}) {
    CAPTURE(ranks);
    const std::uint64_t count = 64u << 20;  // 256 MiB per rank: latencies vanish
    const Schedule s = lowered(Collective::allreduce, "ring", ranks, count);
    const Prediction p = price_on_topology(s, *t, place(*t, ranks, 1));
    const double algbw = 4.0 * count / (p.us * 1e3);
    const double busbw = algbw * bus_factor(Collective::allreduce, ranks);
    // Within the per-step latency and synchronisation (2 us of about 75 at 8 ranks).
    CHECK(busbw == doctest::Approx(t->intra.effective_gbps()).epsilon(0.035));
    CHECK(busbw < t->intra.effective_gbps());
    REQUIRE(p.levels.size() == 1);
    CHECK(p.levels[0].level == "inside the node");
  }
}

TEST_CASE("topology model: NCCL-like rings across nodes reach the slower of NVLink and a node's cards") {
  // One ring per local rank, each crossing the nodes on its own card: the cards of a node
  // together carry per_node x the card's bandwidth, and no ring outruns a GPU's NVLink.
  for (std::int64_t nodes : {2, 4}) {
    CAPTURE(nodes);
    auto m = machine_for("dgx-h100", nodes, BackendCapabilities{{}, false, true, false}, DType::float32, "");
    REQUIRE(m.ok());
    const Topology& t = m->topology;
    CollArgs a;
    a.coll = Collective::allreduce;
    a.ranks = static_cast<std::int32_t>(8 * nodes);
    a.count = 256u << 20;  // 1 GiB per rank: latencies and launches vanish
    a.dtype = DType::float32;
    auto p = predict_shape(a, "rings", *m);
    REQUIRE(p.has_value());
    const double busbw = 4.0 * a.count / (p->us * 1e3) * bus_factor(Collective::allreduce, a.ranks);
    const double bound = std::min(t.intra.effective_gbps(), t.nic.per_node * t.nic.effective_gbps());
    CHECK(busbw <= bound);
    CHECK(busbw > 0.9 * bound);
  }
}

namespace {

// NCCL_ALGO for the scope of one check, as a user sets it for NCCL itself.
struct NcclAlgo {
  explicit NcclAlgo(const char* v) { ::setenv("NCCL_ALGO", v, 1); }
  ~NcclAlgo() { ::unsetenv("NCCL_ALGO"); }
};

CollArgs allreduce_of(std::int32_t ranks, std::uint64_t count) {
  CollArgs a;
  a.coll = Collective::allreduce;
  a.ranks = ranks;
  a.count = count;
  a.dtype = DType::float32;
  return a;
}

double busbw_of(const CollArgs& a, double us) {
  return static_cast<double>(message_bytes(a.coll, a.ranks, a.count, a.dtype)) / (us * 1e3) *
         bus_factor(a.coll, a.ranks);
}

}  // namespace

TEST_CASE("NCCL's own collectives: streamed through the algorithm NCCL would pick, per link") {
  ::unsetenv("NCCL_ALGO");
  auto h100 = load_topology("dgx-h100");
  REQUIRE(h100.ok());
  const Topology& t = *h100;
  const CollArgs a = allreduce_of(8, 256u << 20);  // 1 GiB per rank: latencies vanish
  const Placement one = place(t, 8, 1);

  // One node whose switch reduces: NVLS. Every GPU sends its buffer into the switch once
  // and takes 1/8 of the sum back, then writes its 1/8 once and receives all of it: 9/8
  // of the buffer each way, at the switch's share of the link.
  auto nvls = price_native(a, "nccl", t, one);
  REQUIRE(nvls.has_value());
  CHECK(nvls->library_algorithm == "NVLS");
  const double switch_rate = t.intra.effective_gbps() * t.intra.switch_reduction;
  CHECK(busbw_of(a, nvls->us) == doctest::Approx(switch_rate * 2 * 7 / 9.0).epsilon(0.01));
  REQUIRE(nvls->levels.size() == 1);
  CHECK(nvls->levels[0].level == "inside the node");

  // NCCL_ALGO narrows the choice: the ring reaches the link's rate, and is slower here.
  {
    NcclAlgo only("ring");
    auto ring = price_native(a, "nccl", t, one);
    REQUIRE(ring.has_value());
    CHECK(ring->library_algorithm == "RING");
    CHECK(busbw_of(a, ring->us) == doctest::Approx(t.intra.effective_gbps()).epsilon(0.01));
    CHECK(ring->us > nvls->us);
  }
  {
    NcclAlgo none("COLLNET_DIRECT");  // nothing this machine has: NCCL's own choice
    CHECK(price_native(a, "nccl", t, one)->library_algorithm == "NVLS");
  }

  // A switch that does not reduce (PCIe) leaves the ring.
  auto pcie = load_topology("pcie-8gpu");
  REQUIRE(pcie.ok());
  CHECK(price_native(a, "nccl", *pcie, place(*pcie, 8, 1))->library_algorithm == "RING");

  // 248 nodes of 8: the ring's 3966 hops cost far more than its bytes; NCCL's trees
  // across nodes stream at what a node's cards carry (each card twice its share, up and
  // down the trees).
  auto h200 = load_topology("dgx-h200");
  REQUIRE(h200.ok());
  const CollArgs big = allreduce_of(1984, 128u << 20);
  const Placement cluster = place(*h200, 1984, 248);
  auto pick = price_native(big, "nccl", *h200, cluster);
  REQUIRE(pick.has_value());
  CHECK((pick->library_algorithm == "NVLS_TREE" || pick->library_algorithm == "TREE"));
  const double cards = h200->nic.per_node * h200->nic.effective_gbps();
  const double bound = cards / 2 * bus_factor(Collective::allreduce, 1984);
  CHECK(busbw_of(big, pick->us) <= bound);
  CHECK(busbw_of(big, pick->us) > 0.95 * bound);
  {
    NcclAlgo only("RING");
    auto ring = price_native(big, "nccl", *h200, cluster);
    CHECK(ring->library_algorithm == "RING");
    CHECK(ring->us > 2 * pick->us);
  }
  // Two nodes: the ring still wins (its bytes cross the cards once, the trees' twice).
  CHECK(price_native(allreduce_of(16, 256u << 20), "nccl", t, place(t, 16, 2))->library_algorithm == "RING");

  // What the engine does not know: another library, or NCCL's missing barrier.
  CHECK_FALSE(price_native(a, "mpi", t, one).has_value());
  CollArgs barrier = a;
  barrier.coll = Collective::barrier;
  CHECK_FALSE(price_native(barrier, "nccl", t, one).has_value());
}

TEST_CASE("NCCL's own collectives: a schedule of the library's call is priced by that model, not as an empty step") {
  ::unsetenv("NCCL_ALGO");
  auto t = load_topology("dgx-h100");
  REQUIRE(t.ok());
  const Schedule s = lowered(Collective::allreduce, "nccl", 8, 64u << 20);
  REQUIRE(s.steps.size() == 1);
  REQUIRE(s.steps[0].native);
  const Prediction p = price_on_topology(s, *t, place(*t, 8, 1));
  const auto direct = price_native(allreduce_of(8, 64u << 20), "nccl", *t, place(*t, 8, 1));
  REQUIRE(direct.has_value());
  CHECK(p.us == doctest::Approx(direct->us));
  CHECK(p.us > 256.0 * (1 << 20) / (t->intra.bandwidth_gbps * 1e3));  // at least the bytes at line rate
  CHECK(p.library_algorithm == "NVLS");
  REQUIRE(p.levels.size() == 1);
  CHECK(p.levels[0].level == "inside the node");
  // Ranks sharing one GPU move their bytes in its memory.
  Placement one_gpu = place(*t, 8, 1);
  one_gpu.devices_per_node = 1;
  const Prediction shared = price_on_topology(s, *t, one_gpu);
  REQUIRE(shared.levels.size() == 1);
  CHECK(shared.levels[0].level == "device memory");
}

TEST_CASE("topology model: more nodes, more contention, never less time") {
  auto t = load_topology("dgx-h100");
  REQUIRE(t.ok());
  for (const char* algo : {"ring", "tree", "recursive_doubling", "rabenseifner"}) {
    CAPTURE(algo);
    double last = 0;
    for (std::int64_t nodes : {1, 2, 4}) {
      const Schedule s = lowered(Collective::allreduce, algo, static_cast<std::int32_t>(8 * nodes), 1 << 22);
      const double us = price_on_topology(s, *t, place(*t, 8 * nodes, nodes)).us;
      CHECK(us >= last);
      last = us;
    }
  }
  // Ranks that share one GPU (the cuda backend on a one-GPU machine) are bound by its memory.
  const Schedule s = lowered(Collective::allreduce, "ring", 8, 1 << 24);
  Placement one_gpu = place(*t, 8, 1);
  one_gpu.devices_per_node = 1;
  const Prediction p = price_on_topology(s, *t, one_gpu);
  REQUIRE_FALSE(p.levels.empty());
  CHECK(p.levels[0].level == "device memory");
}

TEST_CASE("machine: what predicts a run, and its name") {
  BackendCapabilities host{{}, true, false, false}, device{{}, false, true, false};
  auto cpu = machine_for("", 0, host, DType::float32, "/nonexistent-collscope-config");
  REQUIRE(cpu.ok());
  CHECK(cpu->cpu);
  CHECK(cpu->label() == "cpu model, defaults (not calibrated: run `collscope calibrate`)");
  CHECK(cpu->short_label() == "cpu model, not calibrated");
  auto gpu = machine_for("", 0, device, DType::float32, "/nonexistent-collscope-config");
  REQUIRE(gpu.ok());
  CHECK_FALSE(gpu->cpu);
  CHECK(gpu->assumed);
  CHECK(gpu->label().find("dgx-h100") != std::string::npos);
  auto refused = machine_for("this-machine", 0, device, DType::float32, "");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().id == "topology.unsuitable");
  auto nodes = machine_for("dgx-h200", 4, host, DType::float32, "");
  REQUIRE(nodes.ok());
  CHECK(nodes->label() == "topology dgx-h200, 4 nodes x 8 GPUs");
  CHECK(nodes->placement(32).node_of(31) == 3);
  auto bad_nodes = machine_for("this-machine", 2, host, DType::float32, "");
  CHECK_FALSE(bad_nodes.ok());
  // A topology without cards prices one node; asked for more, it says what is missing.
  const auto file =
      std::filesystem::temp_directory_path() / ("collscope-no-nic-" + std::to_string(::getpid()) + ".json");
  std::ofstream(file)
      << R"({"version": 1, "name": "one-box", "devices": {"kind": "gpu", "per_node": 2, "memory_gbps": 100},
    "intra": {"kind": "nvlink", "bandwidth_gbps": 50}})";
  CHECK(machine_for(file.string(), 1, device, DType::float32, "").ok());
  auto no_nic = machine_for(file.string(), 2, device, DType::float32, "");
  REQUIRE_FALSE(no_nic.ok());
  CHECK(no_nic.error().id == "topology.missing_key");
  CHECK(no_nic.error().message == "topology \"one-box\" has no \"nic\" to join 2 nodes with");
  std::filesystem::remove(file);
}

TEST_CASE("calibration: written, read back, and used by the cpu model") {
  Calibration c;
  c.date = "2026-12-01T12:00Z";
  c.machine = "2 cores";
  c.cores = 2;
  c.cache_bytes = 32 << 20;
  c.copy_gbps = 5;
  c.copy_in_cache_gbps = 40;
  for (std::size_t i = 0; i < kCalibratedDTypes; ++i) c.reduce_gbps[i] = 3 + static_cast<double>(i);
  c.shared_gbps = 8;
  c.wake_us = 0.2;
  c.switch_us = 1.5;
  c.barrier_us = 2.5;
  c.barrier_per_rank_us = 0.25;
  auto back = parse_calibration(to_json(c), "c.json");
  REQUIRE(back.ok());
  CHECK(to_json(*back) == to_json(c));
  const CostModel m = back->model(DType::float32);
  CHECK(m.cores == 2);
  CHECK(m.beta_gbps == 5);
  CHECK(m.gamma_gbps == 3 + static_cast<double>(DType::float32));
  CHECK(m.alpha_us == 2.5);
  CHECK(m.alpha_per_rank_us == 0.25);
  CHECK(m.wake_us == 0.2);

  auto e = parse_calibration("{\"version\": 1, \"cores\": 2}", "c.json");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().id == "calibration.parse");
  CHECK(e.error().message.find("copy_gbps") != std::string::npos);
  e = parse_calibration("{\"version\": 1, \"cores\": 2, \"copy_gbps\": -1}", "c.json");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().where.pointer == "/copy_gbps");
  e = parse_calibration("[", "c.json");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().id == "calibration.parse");
}
