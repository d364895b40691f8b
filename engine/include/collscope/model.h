// The alpha-beta cost model: predicted time of a schedule on a topology.
//
//   work(rank)  = bytes the rank copies / beta + bytes it reduces / gamma
//   time(step)  = alpha + alpha_per_rank * max(0, ranks - cores)
//                       + max( slowest rank's work,
//                              the busiest core's share of all ranks' work (ranks share the
//                              cores as they are pinned: 2 of 3 ranks on the first of 2),
//                              memory traffic / shared bandwidth )
// This is observable mode's step: a barrier after every step (alpha, with a core per
// rank), where every rank beyond the cores waits to be woken on a busy core. The
// window shows it per step beside the measured step, and bench/observable.sh compares
// the two (bench/RESULTS.md).
// Steps run one after another. On one machine the cores and the memory system are
// shared, which is why a tree can keep up with a ring there while it cannot on a
// network of links.
//
// Memory traffic counts only what misses the last-level cache, by reuse distance
// (counted from the start of the step that touched a byte; in fast mode, where no rank
// waits for another within a call, in the order the cores run their ranks: one rank a
// core at a time through all its steps): a byte last touched less than half cache_bytes
// of other bytes ago is served by the cache, one touched more than twice cache_bytes ago
// is not, and the share served falls linearly between the two (a real cache is no
// perfect LRU list). A ring on a 16 MiB buffer streams every step through main memory;
// the same ring in slices of 1 MiB per rank touches each byte in memory about once. A
// rank's own work is priced the same way: the bytes of a transfer found in the cache
// move at the in-cache bandwidths (beta_cache, gamma_cache), the rest at beta and
// gamma, and so do bytes another rank wrote recently (they sit in that rank's core:
// fetching them from another core costs about what memory costs; while they are still
// in the writer's own cache, near_cache_bytes, the whole transfer runs at the memory's
// rate). Where a core has a
// cache of its own inside the shared one (near_cache_bytes, an L2 inside the L3), the
// in-cache rates are for what the core touched within its own cache's reach, and the
// rest of what is in the cache (older bytes, bytes other ranks read or wrote long
// enough ago) moves at the shared cache's rates (beta_far, gamma_far): on the machine
// of bench/RESULTS.md a copy runs at about 130 GB/s inside a core's 1 MiB L2, 55-60 GB/s
// from the 32 MiB L3 and 22 GB/s from memory. The core's own cache's hits fade out from
// half its reach to all of it; another rank's bytes that the core read lately, and that
// nobody wrote since, are still in it (a broadcast's receiver, call after call).
//
// `auto` runs in the cpu backend's fast mode, where there are no steps to wait for,
// only the transfers each rank's part of a step depends on (docs/ARCHITECTURE.md, "The Schedule"). Its estimate
// replaces the per-step alpha by the longest chain of wake-ups through those
// dependencies:
//
//   ready(rank, k) = max( ready(rank, k-1),  ready(q, j) + wake  for every (q, j) it waits for )
//                    + step + look * (looks at ranks on other cores its core's ranks make in step k)
//   auto's time    = the step model without alpha  +  max over ranks of ready(rank, last step)
//
// With repeated_calls, a call also waits for what the call before it still holds (its
// last steps on other ranks): the estimate is a call's time in a back-to-back run, from
// the end of the call before to its own end.
// `step` is what a rank spends on a step of its own (looking at what it waits for,
// starting its transfers, saying it is done), times the lanes on its core when they share
// cores (pinned as the cpu backend pins them, so 2 of 3 ranks share the first of 2 cores):
// a one-step broadcast of 8 B costs that, not nothing. `look` (remote_look_us) is paid
// only when ranks outnumber cores: a core's ranks look one after another at the progress
// of the ranks they wait for, and each look at a rank on another core fetches the line
// that core wrote (with a core per rank the line's trip is part of the wake-up).
// A wake-up costs little while ranks spin on cores of their own and a scheduler round
// trip once ranks outnumber cores; a rank that many others wait for wakes them a core
// at a time. That is why one rank adding everything up (flat) beats a tree for tiny
// messages on an oversubscribed machine: the others wait once instead of log(R) times.
// (Where a candidate has more than a quarter of a million transfers, walking its
// dependencies costs more than running it, and `auto` prices every candidate by the
// step model instead.)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collscope/schedule.h"
#include "collscope/topology.h"

namespace collscope {

struct CostModel {
  double alpha_us = 1.0;         // latency per step (synchronisation), microseconds
  double alpha_per_rank_us = 0;  // what each rank beyond the cores adds to it (cpu_default: 1 us)
  double beta_gbps = 10.0;       // copy bandwidth per receiving rank, GB/s
  double gamma_gbps = 6.0;       // reduce bandwidth (read two, write one), GB/s
  double gamma_copy_gbps = 0;    // a reduce-copy's (dst = aux op src) from memory; 0 = as a reduce
  double shared_gbps = 30.0;     // bandwidth all ranks share (one memory system); 0 = unlimited
  // The memory traffic of reduces and reduce-copies moves at rates of its own (the
  // memory serves their mix of reads and writes differently from a copy's); 0 = as
  // shared_gbps.
  double shared_reduce_gbps = 0;
  double shared_reduce_copy_gbps = 0;
  int cores = 0;            // cores the ranks share; 0 = as many as ranks
  double wake_us = 0.15;    // fast mode: waking a rank that spins on a core of its own
  double switch_us = 1.25;  // fast mode: per rank per core, waking one that had to yield
  double step_us = 0;       // fast mode: a rank's own cost of each step (no waiting), per rank per core
  // fast mode, ranks outnumbering cores: a rank's look at the progress of a rank pinned to
  // another core, which fetches what that core wrote (per look; a core's ranks look one
  // after another)
  double remote_look_us = 0.06;
  double cache_bytes = 0;            // last-level cache the ranks share; 0 = none (all traffic from memory)
  double beta_cache_gbps = 0;        // copy bandwidth for bytes found in that cache; 0 = as from memory
  double gamma_cache_gbps = 0;       // reduce bandwidth for bytes found in that cache; 0 = as from memory
  double gamma_copy_cache_gbps = 0;  // the same for a reduce-copy (dst = aux op src); 0 = as a reduce
  // A core's own cache (an L2) inside the shared one: the bandwidths above are for bytes
  // the core touched lately, and bytes found only in the shared cache move at these
  // (0 = near_cache_bytes unknown: every byte in the cache at the rates above).
  double near_cache_bytes = 0;     // per core
  double beta_far_gbps = 0;        // copy, bytes found only in the shared cache; 0 = as beta_cache
  double gamma_far_gbps = 0;       // reduce, the same; 0 = as gamma_cache
  double gamma_copy_far_gbps = 0;  // reduce-copy, the same; 0 = as gamma_far
  // A transfer writing lines another core read or wrote and still holds in its own cache
  // (each is taken from that core first); 0 = not priced so: a transfer reading lines
  // another core wrote and holds runs at the rank's own rate from memory instead.
  double beta_held_gbps = 0;
  double beta_held_far_gbps = 0;  // the same for lines it holds beyond its own cache; 0 = not priced so
  // The same for lines it holds in its first-level data cache (first_cache_bytes per
  // core), which come faster; 0 = priced as beta_held_gbps.
  double first_cache_bytes = 0;
  double beta_held_first_gbps = 0;
  bool repeated_calls = false;  // the call runs back to back: the cache holds what the last one touched

  static CostModel cpu_default();
};

// One step on its own: all its traffic from memory (it has no history to find in the cache).
double predict_step_us(const Schedule& s, const Step& st, const CostModel& m);
double predict_us(const Schedule& s, const CostModel& m);
// Every step's time as predict_us prices it (what each step finds in the cache
// included): observable mode's prediction step by step; they add up to predict_us.
std::vector<double> predict_steps_us(const Schedule& s, const CostModel& m);
// The chain of wake-ups above (data time excluded), and auto's estimate.
double predict_sync_us(const Schedule& s, const CostModel& m);
double predict_auto_us(const Schedule& s, const CostModel& m);

// ---------------------------------------------------------------------------
// On a topology of devices and nodes (topology.h): a flow-level model, for the GPU
// backends and for clusters (topology_model.cpp).

// What bounds a step: a device's own memory, the links inside a node, the network
// between nodes, or the devices' fixed costs (launches) and compute spans.
enum class Level : std::uint8_t { memory, node, network, launch };
const char* level_name(Level l);  // "device memory", "inside the node", "across nodes", ...

struct LevelTime {
  std::string level;
  double us = 0;
};

struct Prediction {
  double us = 0;
  std::vector<double> step_us;    // per step of the schedule
  std::vector<LevelTime> levels;  // the time of the steps each level bounds
  // A library's own collective: which of the library's algorithms the price is for
  // ("RING", "TREE", "NVLS", ...: price_native); empty otherwise.
  std::string library_algorithm;
  // Why no time can be given, us then being 0: a library's own collective that the model
  // has no model of ("MPI's own collective: ..."). Empty when priced.
  std::string unpriced;
  // On a topology: the most messages one rank sends, or receives, in one step. The model
  // has no cost per message (docs/TOPOLOGY.md), so beyond kManyMessages the price is too low.
  std::uint64_t busiest_messages = 0;
};
// Messages one rank handles in a step beyond which a price is said to be too low.
constexpr std::uint64_t kManyMessages = 64;
// A price the model knows to be too low: `auto` (the tuner, predict, the what-if panel's
// fastest) takes such an algorithm only where every candidate's price is too low.
inline bool priced_too_low(std::uint64_t busiest_messages) { return busiest_messages > kManyMessages; }

class TopologyPricer {
 public:
  TopologyPricer(const Topology& t, const Placement& p);
  struct StepCost {
    double us = 0;        // the step's time
    double data_us = 0;   // its busiest resource
    double fixed_us = 0;  // latency and synchronisation
    Level level = Level::memory;
    std::uint64_t messages = 0;  // the most one rank sends, or receives, to or from other ranks
  };
  StepCost step(const Schedule& s, const Step& st) const;
  // A step that every node takes alike (ShapePhase::node_periodic), on whole nodes under
  // switch tiers that nest (ShapeRepeat::counted_groups): `st` holds the transfers that
  // leave or reach node 0, which load node 0's memory, links and cards as every node's are
  // loaded; node 0's transfers to node d stand for every node m's to node m+d, and the
  // loads on the switch groups, every group of a tier alike, are counted from them.
  StepCost step_node_periodic(const Schedule& s, const Step& st) const;
  // Where a step's loads are kept, resource by resource (topology_model.cpp).
  class Layout;

 private:
  StepCost price(const Schedule& s, const Step& st, bool node_periodic) const;
  int card_of(int device) const;
  double bandwidth(std::uint64_t resource) const;
  const Topology& t_;
  Placement p_;
  std::shared_ptr<const Layout> layout_;  // built once for the topology and placement
};

Prediction price_on_topology(const Schedule& s, const Topology& t, const Placement& p);

// A library's own collective (Step::native; `library` "nccl") on a topology, priced as
// the library runs it: chunks streaming through its fastest algorithm for the call, a
// latency per hop plus the busiest link's bytes (native_model.cpp). NCCL_ALGO in the
// environment narrows the algorithms as it narrows NCCL's. nullopt: a library or a
// collective this model does not know.
std::optional<Prediction> price_native(const CollArgs& a, std::string_view library, const Topology& t,
                                       const Placement& p);
// The reason a library's own collective goes unpriced `where` ("on a topology", "by the
// cpu model"): Prediction::unpriced.
std::string unpriced_native(std::string_view library, const std::string& where);

}  // namespace collscope
