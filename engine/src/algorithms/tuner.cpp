// `auto`: the algorithm the cost model predicts to be fastest for one call, the way
// NCCL's tuner picks one (model.h says how a schedule is priced).
#include <algorithm>

#include "collscope/collective.h"
#include "collscope/machine.h"
#include "collscope/model.h"
#include "families.h"

namespace collscope {

namespace {

// Walking the dependencies of millions of transfers (a ring over a thousand ranks)
// would cost more than running them: beyond this, every candidate is priced by the
// step model (an alpha per step) instead, so all compare alike.
constexpr std::uint64_t kMaxTransfersForSync = 250000;

// The candidate `a` lowered on a throw-away schedule of its own, with user buffers
// large enough for the call (one buffer for both in place).
Schedule lower_candidate(const AlgorithmInfo& a, const CollArgs& args, std::uint64_t slice_bytes,
                         std::int32_t ranks_per_node) {
  Schedule tmp;
  tmp.slice_bytes = slice_bytes;
  tmp.ranks_per_node = ranks_per_node;
  tmp.ranks = args.ranks;
  tmp.dtype = args.dtype;
  CollArgs local = args;
  local.world_rank.clear();
  BufferDecl in{"in", {}, false}, out{"out", {}, false};
  for (std::int32_t r = 0; r < args.ranks; ++r) {
    auto sh = shape_of(args, r);
    in.count.push_back(std::max<std::uint64_t>(sh.in_count, sh.out_count));
    out.count.push_back(std::max<std::uint64_t>(sh.in_count, sh.out_count));
  }
  tmp.buffers = {in, out};
  local.in_buf = 0;
  local.out_buf = args.in_place ? 0 : 1;
  StepBuilder b(tmp, local, 0);
  a.emit(b);
  b.finish();
  return tmp;
}

}  // namespace

namespace {

// What a candidate is priced at, and whether the model knows that price to be too low
// (priced_too_low, model.h).
struct Priced {
  double us = 0;
  bool too_low = false;
};

// Keeps the candidate with the smallest price, leaving out those priced too low unless
// every one is. Estimates within 2% of the best count as a tie, which the candidate with
// the fewest transfers wins (less bookkeeping per run), then the registry's order.
template <class Price>
std::string pick_cheapest(const CollArgs& args, std::uint64_t slice_bytes, std::int32_t ranks_per_node, Price&& price) {
  // Do the call's ranks span more than one node? Where they do not, the algorithms that
  // know the node boundary are ordinary rings and stay out of the race.
  bool nodes = false;
  if (ranks_per_node > 0)
    for (std::int32_t r = 1; r < args.ranks && !nodes; ++r) {
      auto world = [&](std::int32_t g) {
        return args.world_rank.empty() ? g : args.world_rank[static_cast<std::size_t>(g)];
      };
      nodes = world(r) / ranks_per_node != world(0) / ranks_per_node;
    }
  struct Candidate {
    std::string name;
    Priced p;
    std::uint64_t transfers;
  };
  std::vector<Candidate> all;
  std::vector<Schedule> schedules;
  for (const auto& a : all_algorithms()) {
    if (a.coll != args.coll || (a.node_aware && !nodes)) continue;
    schedules.push_back(lower_candidate(a, args, slice_bytes, ranks_per_node));
    all.push_back({std::string(a.name), {}, schedules.back().total_transfers()});
  }
  if (all.empty()) return "";
  std::uint64_t most = 0;
  for (const auto& c : all) most = std::max(most, c.transfers);
  for (std::size_t i = 0; i < all.size(); ++i) all[i].p = price(schedules[i], most);
  const bool some_right = std::any_of(all.begin(), all.end(), [](const Candidate& c) { return !c.p.too_low; });
  auto eligible = [some_right](const Candidate& c) { return !some_right || !c.p.too_low; };
  double fastest = 0;
  bool first = true;
  for (const auto& c : all)
    if (eligible(c) && (first || c.p.us < fastest)) fastest = c.p.us, first = false;
  const Candidate* best = nullptr;
  for (const auto& c : all)
    if (eligible(c) && c.p.us <= fastest * 1.02 && (!best || c.transfers < best->transfers)) best = &c;
  return best->name;
}

}  // namespace

std::string pick_algorithm(const CollArgs& args) { return pick_algorithm(args, CostModel::cpu_default()); }

std::string pick_algorithm(const CollArgs& args, const Machine& machine, std::int32_t ranks_per_node,
                           std::uint64_t slice_bytes) {
  if (machine.cpu) return pick_algorithm(args, machine.cpu_model.model);
  // A topology of devices: candidates lowered as the schedule they join is (a GPU
  // backend's whole transfers; the cpu backend's slices), priced step by step.
  return pick_cheapest(args, slice_bytes, ranks_per_node, [&](const Schedule& s, std::uint64_t) {
    const Prediction p = price_on_topology(s, machine.topology, machine.placement(s.ranks));
    return Priced{p.us, priced_too_low(p.busiest_messages)};
  });
}

std::string pick_algorithm(const CollArgs& args, const CostModel& model) {
  // Predict every candidate: the data time of its steps plus the chain of wake-ups of
  // fast mode (or the step model for the largest, see kMaxTransfersForSync).
  return pick_cheapest(args, kCacheSliceBytes, 0, [&](const Schedule& s, std::uint64_t most) {
    return Priced{most <= kMaxTransfersForSync ? predict_auto_us(s, model) : predict_us(s, model), false};
  });
}

}  // namespace collscope
