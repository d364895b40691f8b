// What a prediction is made for: this machine's cpu cost model (calibrated or the
// defaults), or a topology of devices and nodes. Every report, caption and table that
// shows a predicted time names the Machine it came from (label()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collscope/algorithms.h"
#include "collscope/backend.h"
#include "collscope/calibration.h"
#include "collscope/model.h"
#include "collscope/topology.h"

namespace collscope {

struct Machine {
  bool cpu = true;  // this machine's cpu cost model; else `topology`
  CpuModel cpu_model;
  Topology topology;
  std::int64_t nodes = 1;        // topology: nodes the ranks fill
  int devices_used = 0;          // topology: devices per node in use (0: all of them)
  bool assumed = false;          // the topology was chosen for lack of a better one
  bool serial_launches = false;  // the backend launches a kernel per transfer from one thread

  // "cpu model, calibrated 2026-12-01T21:40Z", "topology dgx-h100, 2 nodes x 8 GPUs".
  std::string label() const;
  // For a caption: "cpu model", "cpu model, not calibrated", "dgx-h100, assumed".
  std::string short_label() const;
  Placement placement(std::int64_t ranks) const;
  // Where the schedule runs on this machine (run, bench, the window) on `found` devices
  // (BackendInfo::devices_found): the ranks share them as the backend places them, rank
  // r on device r mod found, whatever number of devices a node of the topology has. A
  // plan for another machine (predict) keeps the topology's.
  void use_devices_found(int found);
};

// The Machine for a backend, or for --topology NAME|FILE (with --nodes; 0: the
// topology's own count):
//   no topology, a host backend   this machine's cpu model
//   no topology, a device backend dgx-h100, marked as assumed
//   "this-machine"                 this machine's cpu model (refused for a device backend:
//                                  GPU backends never price with the cpu's parameters)
//   a preset or a file             that topology
// `config_dir` is where the calibration is looked for (user_config_dir()).
Result<Machine> machine_for(const std::string& topology, std::int64_t nodes, const BackendCapabilities& backend,
                            DType dtype, const std::string& config_dir);

// The predicted time of a whole schedule: fast mode (the dataflow estimate `auto`
// uses) or observable mode (a barrier after every step).
Prediction predict(const Schedule& s, const Machine& m, bool fast);

// Where the placement of `ranks` repeats itself (ShapeRepeat, algorithms.h): every node
// alike and every switch group whole, so that moving every rank on by the period moves
// every node, card and group onto one like it. Nothing when a node or a group is left
// partly empty, or for the cpu model.
ShapeRepeat shape_repeat(const Machine& m, std::int64_t ranks);

// One collective priced from its algorithm's shape (algorithm_shape, algorithms.h) on a
// topology, at any number of ranks: every distinct step priced once by the same
// flow-level model, times how often it occurs. The result equals predict() of the
// lowered schedule (within the one element by which blocks can differ), without the
// schedule; step_us stays empty. nullopt: the algorithm has no shape, or `m` is the cpu
// model (which prices schedules only).
// `ranks_per_node` > 0 overrides where node-aware algorithms split (LowerOptions::ranks_per_node).
std::optional<Prediction> predict_shape(const CollArgs& args, std::string_view algorithm, const Machine& m,
                                        std::int64_t ranks_per_node = 0);

}  // namespace collscope
