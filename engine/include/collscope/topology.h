// Where ranks run, as the cost model sees it: nodes, the devices in each node, the
// links between devices inside a node, the network cards that leave the node and the
// switch tiers above them. A topology is read from a JSON file (the format is in
// docs/TOPOLOGY.md), from a preset shipped in assets/topologies/, or is this machine
// as `collscope calibrate` measured it (kind "cpu").
//
// Bandwidths are GB/s (10^9 bytes per second) in one direction, per device (or per
// card); latencies are microseconds. A step of a Schedule is priced by the busiest
// resource its transfers share (model.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

namespace collscope {

// One kind of link: how fast one device (or card) sends in one direction, and what a
// message costs before its first byte arrives.
struct LinkSpec {
  std::string kind;           // "nvswitch", "nvlink", "pcie", "shared_memory", "infiniband", ...
  double bandwidth_gbps = 0;  // per device, one direction, as the vendor states it
  double latency_us = 0;
  // The share of bandwidth_gbps that bulk transfers reach (protocol headers, flow
  // control): the model uses bandwidth_gbps * efficiency. 1 when not stated.
  double efficiency = 1;
  double effective_gbps() const { return bandwidth_gbps * efficiency; }
  // The switch reduces and multicasts (NVLink SHARP, what NCCL's NVLS algorithms use):
  // the share of effective_gbps() its reductions reach. 0: it cannot.
  double switch_reduction = 0;
};

struct NicSpec {
  int per_node = 0;           // 0: a single node, nothing leaves it
  double bandwidth_gbps = 0;  // per card, one direction
  double latency_us = 0;      // one hop through the first switch tier included
  double efficiency = 1;      // as LinkSpec::efficiency
  double effective_gbps() const { return bandwidth_gbps * efficiency; }
  // Rail-optimised: card i of every node is on rail i (its own leaf switches), and
  // device d sends through card d mod per_node. Traffic between two rails crosses the
  // spine; NCCL moves it over NVLink to a device on the right rail first (PXN), which
  // the model follows: a transfer leaves through the card of the destination's rail.
  bool rails = false;
};

// A level of switches above the nodes, from the leaves up: `nodes` nodes share one
// switch group of this tier; what leaves the group is `oversubscription` times
// slower than what enters it from below (1 = a non-blocking fat tree).
struct SwitchTier {
  std::string name;        // "leaf", "spine", "core"
  std::int64_t nodes = 0;  // nodes under one switch group of this tier
  double oversubscription = 1;
  double latency_us = 0;  // added for every message that crosses this tier
};

struct Topology {
  std::string name;                  // "dgx-h100", or the file's stem
  std::string title;                 // one line
  std::string file;                  // where it was read from; empty for built-ins
  std::vector<std::string> sources;  // where its figures come from

  std::string device_kind = "gpu";  // "gpu" or "cpu"
  int devices_per_node = 1;
  double memory_gbps = 0;  // a device's own memory: local copies and the reduce's reads and writes
  // The share of memory_gbps that a device-to-device copy reaches (as LinkSpec::efficiency);
  // 1 when not stated.
  double memory_efficiency = 1;
  double effective_memory_gbps() const { return memory_gbps * memory_efficiency; }
  double launch_us = 0;  // fixed cost of a device's part of a step (one kernel launch)
  double step_us = 0;    // fixed cost of every step (synchronisation between devices)
  LinkSpec intra;        // between two devices of one node
  NicSpec nic;           // between nodes
  std::vector<SwitchTier> tiers;
  std::int64_t nodes = 1;  // the default number of nodes (--nodes overrides it)
  // kind "cpu": the cost model's parameters come from the calibration (model.h).
};

// Parses a topology file's text; errors (topology.parse, topology.unknown_key,
// topology.wrong_type, topology.out_of_range) carry file:line:col and a JSON Pointer.
Result<Topology> parse_topology(const std::string& text, const std::string& file);

// A preset by name (assets/topologies/NAME.json) or a path to a file; topology.unknown
// lists the presets when the name is neither.
Result<Topology> load_topology(const std::string& name_or_path);

// The folder of the presets: asset_path("topologies") (collscope/files.h).
std::string topology_dir();
// Preset names, sorted.
std::vector<std::string> topology_presets();

// Where rank r of `ranks` runs when the ranks fill `nodes` nodes in order:
// ranks_per_node = ceil(ranks / nodes), and several ranks share a device when a node
// holds more ranks than devices.
struct Placement {
  std::int64_t nodes = 1;
  std::int64_t ranks_per_node = 1;
  int devices_per_node = 1;
  // The backend's launches of a step follow one another on one host thread
  // (BackendCapabilities::serial_launches): a launch per transfer, not per device.
  bool serial_launches = false;
  std::int64_t node_of(std::int64_t rank) const { return rank / ranks_per_node; }
  int device_of(std::int64_t rank) const { return static_cast<int>((rank % ranks_per_node) % devices_per_node); }
};
Placement place(const Topology& t, std::int64_t ranks, std::int64_t nodes);

}  // namespace collscope
