// Pricing a Schedule on a topology of devices, nodes and switches (topology.h).
//
// Every transfer of a step loads the resources it passes through:
//
//   same device          the device's memory: read and write (a reduce reads twice)
//   two devices, 1 node  the sender's link out, the receiver's link in (NVLink, PCIe)
//   two nodes            the sender's card out, the receiver's card in, and for every
//                        switch tier whose group the message leaves, that group's
//                        uplink on the way up and the other group's on the way down
//
// and a step takes as long as its busiest resource needs for its bytes, plus the
// slowest message's latency, plus the devices' fixed costs (one synchronisation per step,
// and launches: one per device that moves data in the step, as NCCL groups a step's
// sends and receives, or, for a backend whose one host thread launches a kernel per
// transfer, one per transfer, one after another: Placement::serial_launches). The
// launches overlap the data: a step takes the longer of the two. Steps run one after
// another, as the GPU backends run them. This is a flow-level model: it knows where bytes
// contend, not how a link's protocol packs them.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collscope/model.h"

namespace collscope {

namespace {

enum class Res : std::uint8_t { memory, link_out, link_in, card_out, card_in, up, down };

std::uint64_t key(Res r, std::int64_t a, std::int64_t b, std::int64_t c = 0) {
  // a: node or tier group, b: device or card (or -1), c: tier index. Packed into
  // 64 bits with room for 2^24 groups, 2^20 devices and 64 tiers.
  return (static_cast<std::uint64_t>(r) << 58) | (static_cast<std::uint64_t>(c & 0x3f) << 52) |
         (static_cast<std::uint64_t>(a & 0xffffff) << 28) | (static_cast<std::uint64_t>((b + 1) & 0xfffffff));
}

// Where each resource's bytes are kept: every device's memory and links and every card of
// the placement's nodes, and every switch group's uplink per rail, at a place of its own
// in one array, in the order of nodes, so that a step's transfers, which go rank by rank,
// touch neighbouring places. (A table hashed by resource spent half of a 65536-rank price
// missing the cache.)
}  // namespace

class TopologyPricer::Layout {
 public:
  static constexpr std::size_t kNone = ~std::size_t{0};
  Layout(const Topology& t, const Placement& p)
      : nodes_(std::max<std::int64_t>(1, p.nodes)),
        devices_(std::max(1, p.devices_per_node)),
        cards_(std::max(1, t.nic.per_node)) {
    size_ = 3 * static_cast<std::size_t>(nodes_ * devices_) + 2 * static_cast<std::size_t>(nodes_ * cards_);
    for (const SwitchTier& tier : t.tiers) {
      const std::int64_t groups = (nodes_ - 1) / std::max<std::int64_t>(1, tier.nodes) + 1;
      groups_.push_back(groups);
      tier_base_.push_back(size_);
      size_ += 2 * static_cast<std::size_t>(groups * (cards_ + 1));  // up, then down; rails -1 to cards-1
    }
  }
  std::size_t size() const { return size_; }
  // The place of resource `k` (key() below), or kNone for one outside the placement.
  std::size_t slot(std::uint64_t k) const {
    const auto r = static_cast<Res>(k >> 58);
    const auto c = static_cast<std::size_t>((k >> 52) & 0x3f);
    const auto a = static_cast<std::int64_t>((k >> 28) & 0xffffff);
    const auto b = static_cast<std::int64_t>(k & 0xfffffff) - 1;
    const auto nd = static_cast<std::size_t>(nodes_ * devices_);
    switch (r) {
      case Res::memory:
      case Res::link_out:
      case Res::link_in:
        if (a >= nodes_ || b < 0 || b >= devices_) return kNone;
        return static_cast<std::size_t>(r) * nd + static_cast<std::size_t>(a * devices_ + b);
      case Res::card_out:
      case Res::card_in:
        if (a >= nodes_ || b < 0 || b >= cards_) return kNone;
        return 3 * nd + (r == Res::card_in ? static_cast<std::size_t>(nodes_ * cards_) : 0) +
               static_cast<std::size_t>(a * cards_ + b);
      case Res::up:
      case Res::down:
        if (c >= groups_.size() || a >= groups_[c] || b < -1 || b >= cards_) return kNone;
        return tier_base_[c] + (r == Res::down ? static_cast<std::size_t>(groups_[c] * (cards_ + 1)) : 0) +
               static_cast<std::size_t>(a * (cards_ + 1) + b + 1);
    }
    return kNone;
  }

 private:
  std::int64_t nodes_, devices_, cards_;
  std::vector<std::int64_t> groups_;
  std::vector<std::size_t> tier_base_;
  std::size_t size_ = 0;
};

namespace {

// Bytes per resource in one step, at the places of a Layout (any other resource in a
// hash map): the array is kept from step to step and only the places a step used are
// cleared.
class Loads {
 public:
  using Layout = TopologyPricer::Layout;
  void begin(const Layout& layout) {
    layout_ = &layout;
    if (layout.size() > bytes_.size()) {
      bytes_.assign(layout.size(), 0.0);
      keys_.assign(layout.size(), kEmpty);
    } else {
      for (std::size_t i : used_) keys_[i] = kEmpty, bytes_[i] = 0;
    }
    used_.clear();
    other_.clear();
  }
  void add(std::uint64_t k, double b) {
    const std::size_t i = layout_->slot(k);
    if (i == Layout::kNone) {
      other_[k] += b;
      return;
    }
    if (keys_[i] == kEmpty) {
      keys_[i] = k;
      used_.push_back(i);
    }
    bytes_[i] += b;
  }
  template <class F>
  void each(F&& f) const {
    for (std::size_t i : used_) f(keys_[i], bytes_[i]);
    for (const auto& [k, b] : other_) f(k, b);
  }

 private:
  static constexpr std::uint64_t kEmpty = ~0ull;  // key() never makes it: the resource kind is below 8
  const Layout* layout_ = nullptr;
  std::vector<std::uint64_t> keys_;
  std::vector<double> bytes_;
  std::vector<std::size_t> used_;
  std::unordered_map<std::uint64_t, double> other_;
};

}  // namespace

TopologyPricer::TopologyPricer(const Topology& t, const Placement& p)
    : t_(t), p_(p), layout_(std::make_shared<const Layout>(t, p)) {}

int TopologyPricer::card_of(int device) const { return t_.nic.per_node > 0 ? device % t_.nic.per_node : 0; }

double TopologyPricer::bandwidth(std::uint64_t k) const {
  const auto r = static_cast<Res>(k >> 58);
  switch (r) {
    case Res::memory:
      return t_.effective_memory_gbps();
    case Res::link_out:
    case Res::link_in:
      return t_.intra.effective_gbps();
    case Res::card_out:
    case Res::card_in:
      return t_.nic.effective_gbps();
    case Res::up:
    case Res::down: {
      const auto tier = static_cast<std::size_t>((k >> 52) & 0x3f);
      const SwitchTier& s = t_.tiers[tier];
      // What leaves a group: every card of its nodes (one rail's cards on a
      // rail-optimised fabric), divided by the tier's oversubscription.
      const double nodes = static_cast<double>(std::min<std::int64_t>(s.nodes, p_.nodes));
      const double cards = t_.nic.rails ? 1.0 : static_cast<double>(t_.nic.per_node);
      return nodes * cards * t_.nic.effective_gbps() / s.oversubscription;
    }
  }
  return 1;
}

TopologyPricer::StepCost TopologyPricer::step(const Schedule& s, const Step& st) const { return price(s, st, false); }

TopologyPricer::StepCost TopologyPricer::step_node_periodic(const Schedule& s, const Step& st) const {
  return price(s, st, true);
}

namespace {

// Of the `per` nodes of a switch group, how many send outside it when every node m sends
// to node m + d (mod `nodes`; groups of `per` nodes, `per` dividing `nodes`, 0 <= d < nodes).
std::int64_t leaving_group(std::int64_t d, std::int64_t per, std::int64_t nodes) {
  if (per >= nodes) return 0;
  const std::int64_t stay = std::max<std::int64_t>(0, per - d) + std::max<std::int64_t>(0, per - (nodes - d));
  return per - stay;
}

}  // namespace

TopologyPricer::StepCost TopologyPricer::price(const Schedule& s, const Step& st, bool node_periodic) const {
  thread_local Loads load;          // bytes per resource
  std::uint64_t launches = 0;       // the step's transfers that move data
  std::vector<std::int64_t> lanes;  // the ranks that run a transfer in this step (serial launches)
  std::unordered_map<std::int64_t, double> compute;
  load.begin(*layout_);
  double latency = 0;
  Level signal_level = Level::node;  // where the longest signal's latency comes from
  const double esize = static_cast<double>(size_of(s.dtype));
  auto add = [&](std::uint64_t k, double bytes) { load.add(k, bytes); };
  // Messages per rank, sent (even slots) and received (odd), and the slots this step used.
  thread_local std::vector<std::uint32_t> messages;
  thread_local std::vector<std::size_t> counted;
  if (messages.size() < 2 * static_cast<std::size_t>(s.ranks))
    messages.assign(2 * static_cast<std::size_t>(s.ranks), 0);
  std::uint64_t busiest = 0;
  auto count = [&](std::size_t slot) {
    if (slot >= messages.size()) return;
    if (messages[slot]++ == 0) counted.push_back(slot);
    busiest = std::max<std::uint64_t>(busiest, messages[slot]);
  };
  for (const auto& x : st.transfers) {
    if (x.action != Action::compute && x.src.rank != x.dst.rank && x.src.rank >= 0 && x.dst.rank >= 0) {
      count(2 * static_cast<std::size_t>(x.src.rank));
      count(2 * static_cast<std::size_t>(x.dst.rank) + 1);
    }
    const std::int64_t sn = p_.node_of(x.src.rank), dn = p_.node_of(x.dst.rank);
    const int sd = p_.device_of(x.src.rank), dd = p_.device_of(x.dst.rank);
    const std::int64_t dev_id = dn * (1 << 20) + dd;
    if (x.action == Action::compute) {
      compute[dev_id] += x.duration_us;
      continue;
    }
    if (is_signal(x)) {
      const double lat = sn == dn ? (sd == dd ? 0.0 : t_.intra.latency_us) : t_.nic.latency_us;
      if (lat > latency) signal_level = sn == dn ? Level::node : Level::network;
      latency = std::max(latency, lat);
      continue;
    }
    ++launches;
    if (p_.serial_launches) lanes.push_back(x.dst.rank);
    const double bytes = static_cast<double>(x.count) * esize;
    const bool reduces = is_reduction(x.action) || x.action == Action::scale;
    // The receiver's memory: it writes the result and, for a reduction, reads its own operand.
    add(key(Res::memory, dn, dd), bytes * (reduces ? 2.0 : 1.0));
    if (sn == dn && sd == dd) {
      add(key(Res::memory, sn, sd), bytes);  // the local read of the source
      continue;
    }
    add(key(Res::memory, sn, sd), bytes);  // the sender's memory is read
    if (sn == dn) {
      add(key(Res::link_out, sn, sd), bytes);
      add(key(Res::link_in, dn, dd), bytes);
      latency = std::max(latency, t_.intra.latency_us);
      continue;
    }
    // Across nodes. On rails the message leaves through the card of the receiver's
    // rail, reaching it over NVLink first when the sender sits on another rail (PXN).
    const int card = t_.nic.rails ? card_of(dd) : card_of(sd);
    if (t_.nic.rails && card_of(sd) != card) {
      add(key(Res::link_out, sn, sd), bytes);
      add(key(Res::link_in, sn, card), bytes);
    }
    add(key(Res::card_out, sn, card), bytes);
    add(key(Res::card_in, dn, t_.nic.rails ? card : card_of(dd)), bytes);
    double lat = t_.nic.latency_us;
    if (node_periodic) {
      // Node 0's message to node dn stands for every node m's to node m + dn. Groups nest,
      // so a message leaves a group of a tier exactly when its nodes lie in different
      // groups of that tier; every group of the tier sends out as many as the first does,
      // and takes in as many (the same step seen from the other side), on the rail of the
      // receiving device. The messages that reach node 0 from others are counted so.
      if (sn == 0) {
        const std::int64_t rail = t_.nic.rails ? card : -1;
        for (std::size_t k = 0; k < t_.tiers.size(); ++k) {
          const std::int64_t leaving = leaving_group(dn, std::max<std::int64_t>(1, t_.tiers[k].nodes), p_.nodes);
          if (leaving == 0) break;  // every such message turns below this tier
          const double b = static_cast<double>(leaving) * bytes;
          add(key(Res::up, 0, rail, static_cast<std::int64_t>(k)), b);
          add(key(Res::down, 0, rail, static_cast<std::int64_t>(k)), b);
          lat += t_.tiers[k].latency_us;
        }
      }
      latency = std::max(latency, lat);
      continue;
    }
    for (std::size_t k = 0; k < t_.tiers.size(); ++k) {
      const std::int64_t per = std::max<std::int64_t>(1, t_.tiers[k].nodes);
      const std::int64_t gs = sn / per, gd = dn / per;
      if (gs == gd) break;  // both under one group of this tier: the message turns here
      const std::int64_t rail = t_.nic.rails ? card : -1;
      add(key(Res::up, gs, rail, static_cast<std::int64_t>(k)), bytes);
      add(key(Res::down, gd, rail, static_cast<std::int64_t>(k)), bytes);
      lat += t_.tiers[k].latency_us;
    }
    latency = std::max(latency, lat);
  }
  for (std::size_t slot : counted) messages[slot] = 0;
  counted.clear();
  StepCost c;
  c.messages = busiest;
  load.each([&](std::uint64_t k, double bytes) {
    const double us = bytes / (bandwidth(k) * 1e3);
    if (us > c.data_us) {
      c.data_us = us;
      const auto r = static_cast<Res>(k >> 58);
      c.level = r == Res::memory                            ? Level::memory
                : (r == Res::link_out || r == Res::link_in) ? Level::node
                                                            : Level::network;
    }
  });
  // A device starts its part of a step as one kernel, whatever number of transfers it
  // carries (NCCL's channels share one launch), and the step ends with one
  // synchronisation. A backend whose one host thread launches a kernel per transfer
  // queues the step's launches on it, and each rank's part of the step its own
  // synchronisation (waiting for the events it depends on, recording its own): with 8
  // ranks sharing one H200 on the cuda backend an all-to-all's 64 transfers took 64
  // launches' time at every size up to 256 KiB, and dgx-h200's figures (5 us a launch,
  // 2.5 us a rank's step) are fitted on such a grid (bench/RESULTS.md). The host runs ahead of the device, so the step
  // takes the longer of the two. Compute spans run after the launches.
  double busiest_device = launches == 0 ? 0 : t_.launch_us;
  double sync_us = t_.step_us;
  if (p_.serial_launches) {
    std::sort(lanes.begin(), lanes.end());
    const auto ranks_in_step = static_cast<double>(std::unique(lanes.begin(), lanes.end()) - lanes.begin());
    busiest_device = t_.launch_us * static_cast<double>(launches) + t_.step_us * ranks_in_step;
    sync_us = 0;
  }
  for (const auto& [d, us] : compute) busiest_device = std::max(busiest_device, us);
  c.fixed_us = sync_us + latency;
  c.us = c.fixed_us + std::max(c.data_us, busiest_device);
  if (busiest_device > c.data_us) c.level = Level::launch;
  // A step that moves no bytes (a barrier's signals) is its synchronisation and its
  // signals' latency: named after the longer of the two, never the memory.
  if (busiest_device == 0 && c.data_us == 0) c.level = latency > sync_us ? signal_level : Level::launch;
  return c;
}

const char* level_name(Level l) {
  switch (l) {
    case Level::memory:
      return "device memory";
    case Level::node:
      return "inside the node";
    case Level::network:
      return "across nodes";
    case Level::launch:
      return "launches and compute";
  }
  return "?";
}

Prediction price_on_topology(const Schedule& s, const Topology& t, const Placement& p) {
  TopologyPricer pricer(t, p);
  Prediction out;
  double by_level[4] = {0, 0, 0, 0};
  std::vector<LevelTime> native_levels;
  for (const auto& st : s.steps) {
    // A library's own collective has no transfers to price: the library's algorithms are
    // priced instead (native_model.cpp).
    if (st.native && st.call >= 0 && static_cast<std::size_t>(st.call) < s.calls.size())
      if (auto n = price_native(s.calls[static_cast<std::size_t>(st.call)].args, st.library, t, p)) {
        out.us += n->us;
        out.step_us.push_back(n->us);
        if (out.library_algorithm.empty()) out.library_algorithm = n->library_algorithm;
        else if (out.library_algorithm != n->library_algorithm) out.library_algorithm = "several";
        for (const auto& l : n->levels) native_levels.push_back(l);
        continue;
      }
    if (st.native) {
      out.unpriced = unpriced_native(st.library, "on a topology");
      out.us = 0;
      out.step_us.assign(s.steps.size(), 0.0);
      out.levels.clear();
      out.library_algorithm.clear();
      return out;
    }
    const auto c = pricer.step(s, st);
    out.us += c.us;
    out.step_us.push_back(c.us);
    out.busiest_messages = std::max(out.busiest_messages, c.messages);
    by_level[static_cast<int>(c.level)] += c.us;
  }
  for (const auto& l : native_levels)
    for (int k = 0; k < 4; ++k)
      if (l.level == level_name(static_cast<Level>(k))) by_level[k] += l.us;
  for (int l = 0; l < 4; ++l)
    if (by_level[l] > 0) out.levels.push_back({level_name(static_cast<Level>(l)), by_level[l]});
  return out;
}

}  // namespace collscope
