#include "collscope/machine.h"

#include <algorithm>
#include <numeric>

#include "collscope/algorithms.h"

namespace collscope {

std::string Machine::label() const {
  if (cpu) return "cpu model, " + cpu_model.origin;
  const int per = devices_used > 0 ? devices_used : topology.devices_per_node;
  std::string l = "topology " + topology.name + ", " + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") +
                  " x " + std::to_string(per) + " " + (topology.device_kind == "gpu" ? "GPUs" : "devices");
  if (assumed) l += " (assumed: pass --topology)";
  return l;
}

std::string Machine::short_label() const {
  if (cpu) return cpu_model.calibrated ? "cpu model" : "cpu model, not calibrated";
  return topology.name + (assumed ? ", assumed" : "");
}

Placement Machine::placement(std::int64_t ranks) const {
  Placement p = place(topology, ranks, nodes);
  if (devices_used > 0) p.devices_per_node = std::min(devices_used, p.devices_per_node);
  p.serial_launches = serial_launches;
  return p;
}

void Machine::use_devices_found(int found) {
  if (!cpu && found > 0) devices_used = found;
}

Result<Machine> machine_for(const std::string& topology, std::int64_t nodes, const BackendCapabilities& backend,
                            DType dtype, const std::string& config_dir) {
  Machine m;
  if (nodes < 0)
    return make_error("cli.usage", "--nodes " + std::to_string(nodes) + " is below 1",
                      "give the number of nodes, 1 or more");
  const bool this_machine = topology.empty() ? !backend.devices : topology == "this-machine";
  if (this_machine) {
    if (backend.devices)
      return make_error("topology.unsuitable", "the cpu model of this machine cannot price a GPU backend",
                        "pass a GPU topology with --topology (see `collscope list`), e.g. dgx-h100");
    if (nodes > 1)
      return make_error("cli.usage", "--nodes needs a topology of nodes",
                        "pass --topology, e.g. --topology dgx-h100 --nodes " + std::to_string(nodes));
    m.cpu = true;
    m.cpu_model = cpu_model_for(dtype, config_dir);
    return m;
  }
  auto t = load_topology(topology.empty() ? std::string("dgx-h100") : topology);
  if (!t) return t.error();
  if (backend.devices && t->device_kind != "gpu")
    return make_error("topology.unsuitable", "topology \"" + t->name + "\" has no GPUs to price a GPU backend with",
                      "pass a GPU topology with --topology");
  m.cpu = false;
  m.topology = std::move(*t);
  m.nodes = nodes >= 1 ? nodes : m.topology.nodes;
  // Nodes are joined by their cards: a topology without any prices one node only.
  if (m.nodes > 1 && m.topology.nic.per_node == 0)
    return make_error(
        "topology.missing_key",
        "topology \"" + m.topology.name + "\" has no \"nic\" to join " + std::to_string(m.nodes) + " nodes with",
        "give --nodes 1, or add \"nic\": {\"per_node\": 8, \"bandwidth_gbps\": 50, \"latency_us\": 3} "
        "to the topology file");
  m.assumed = topology.empty();
  m.serial_launches = backend.serial_launches;
  return m;
}

Prediction predict(const Schedule& s, const Machine& m, bool fast) {
  if (!m.cpu) return price_on_topology(s, m.topology, m.placement(s.ranks));
  Prediction p;
  for (const auto& st : s.steps)
    if (st.native) {
      // The cpu model prices the engine's transfers; a library's call has none.
      p.unpriced = unpriced_native(st.library, "by this machine's cpu model");
      p.step_us.assign(s.steps.size(), 0.0);
      return p;
    }
  const CostModel& cm = m.cpu_model.model;
  p.step_us = predict_steps_us(s, cm);  // observable mode's steps, as they find the cache
  double observable = 0;
  for (double us : p.step_us) observable += us;
  p.us = fast ? predict_auto_us(s, cm) : observable;
  p.levels.push_back({"this machine's cores and memory", p.us});
  return p;
}

ShapeRepeat shape_repeat(const Machine& m, std::int64_t ranks) {
  const Placement p = m.placement(ranks);
  if (m.cpu || p.nodes * p.ranks_per_node != ranks) return {};
  ShapeRepeat r{p.ranks_per_node, p.ranks_per_node};
  // The tiers a message climbs (topology_model.cpp stops at the first whose group holds
  // both nodes) nest when each group size divides the next and the node count.
  r.counted_groups = true;
  std::int64_t below = 1;
  for (const SwitchTier& tier : m.topology.tiers) {
    const std::int64_t per = std::max<std::int64_t>(1, tier.nodes);
    if (per >= p.nodes) break;
    if (p.nodes % per != 0 || per % below != 0) r.counted_groups = false;
    r.group_ranks.push_back(per * p.ranks_per_node);
    below = per;
  }
  if (!r.counted_groups) r.group_ranks.clear();
  for (const SwitchTier& tier : m.topology.tiers) {
    const std::int64_t per = std::max<std::int64_t>(1, tier.nodes);
    if (per >= p.nodes) continue;  // one group holds every node: nothing leaves it
    if (p.nodes % per != 0) return {};
    r.period = std::lcm(r.period, per * p.ranks_per_node);
    if (ranks % r.period != 0) return {};
  }
  return r;
}

std::optional<Prediction> predict_shape(const CollArgs& args, std::string_view algorithm, const Machine& m,
                                        std::int64_t ranks_per_node) {
  // A backend that launches a kernel per transfer pays for every transfer a schedule
  // holds; a shape keeps one transfer where the schedule may cut a move in two or three
  // (a run of blocks that wraps), so such a backend is priced from its schedules only.
  if (m.cpu || m.serial_launches) return std::nullopt;
  const Placement p = m.placement(args.ranks);
  auto shape = algorithm_shape(args, algorithm,
                               ranks_per_node > 0 ? ranks_per_node
                               : p.nodes > 1      ? p.ranks_per_node
                                                  : 0,
                               shape_repeat(m, args.ranks));
  if (!shape) return std::nullopt;
  TopologyPricer pricer(m.topology, p);
  Schedule s;  // the pricer reads the dtype only
  s.ranks = args.ranks;
  s.dtype = args.dtype;
  Prediction out;
  double by_level[4] = {0, 0, 0, 0};
  for (const ShapePhase& ph : *shape) {
    Step st;
    ph.fill(st);
    const auto c = ph.node_periodic ? pricer.step_node_periodic(s, st) : pricer.step(s, st);
    out.busiest_messages = std::max(out.busiest_messages, c.messages);
    const double us = c.us * static_cast<double>(ph.repeat);
    out.us += us;
    by_level[static_cast<int>(c.level)] += us;
  }
  for (int l = 0; l < 4; ++l)
    if (by_level[l] > 0) out.levels.push_back({level_name(static_cast<Level>(l)), by_level[l]});
  return out;
}

}  // namespace collscope
