// A library's own collective on a topology (Step::native: algorithm "nccl"), priced the
// way NCCL's tuner prices its algorithms (docs/TOPOLOGY.md, "NCCL's own collectives").
//
// The engine's algorithms run step after step, and the flow-level model prices them so
// (topology_model.cpp). NCCL's kernels do not: a collective is cut into chunks that
// stream through a ring or a tree, so every link carries its share of the bytes while
// the first chunk is still on its way. The time is then a latency per hop on the
// chunk's path plus the bytes of the busiest link at that link's rate:
//
//   time = launch + hops x hop latency + max(bytes per link / link rate,
//                                            bytes per card / card rate)
//
// and NCCL picks, per call, the fastest of the algorithms the machine has:
//
//   RING       every collective: one ring through all ranks per channel, each channel
//              leaving the node on its own card
//   TREE       all-reduce across nodes: a chain inside the node, two binary trees across
//              nodes on half the buffer each
//   NVLS       all-reduce inside a node whose switch reduces (NVLink SHARP): every GPU
//              sends its buffer into the switch once and gets its share of the sum
//              back, then writes that share once and the switch copies it to all
//   NVLS_TREE  all-reduce across nodes: NVLS inside the node, trees across
//   P2P        all-to-all, scatter, gather: NCCL's sends and receives, all at once
//
// NCCL_ALGO in the environment narrows the choice as it narrows NCCL's own.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/model.h"

namespace collscope {

namespace {

struct Candidate {
  const char* name;
  double link_bytes = 0;  // per device, in one direction, inside the node
  double card_bytes = 0;  // per card, in one direction
  bool switch_reduces = false;
  double intra_hops = 0, inter_hops = 0;
};

// NCCL_ALGO's list, upper case ("RING,TREE"); empty: every algorithm.
std::string wanted_algorithms() {
  const char* env = std::getenv("NCCL_ALGO");
  std::string s = env ? env : "";
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

bool allowed(const std::string& list, const std::string& name) {
  if (list.empty()) return true;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    if (list.substr(at, end - at) == name) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::string unpriced_native(std::string_view library, const std::string& where) {
  const NativeLibrary* lib = find_native(library);
  const std::string title = lib ? std::string(lib->title) : std::string(library);
  return title + "'s own collective cannot be priced " + where + ": its algorithms are " + title +
         "'s, not collscope's";
}

std::optional<Prediction> price_native(const CollArgs& a, std::string_view library, const Topology& t,
                                       const Placement& p) {
  // Only a library whose algorithms the model knows, and a collective the library has
  // (NCCL has no barrier).
  const NativeLibrary* lib = find_native(library);
  if (!lib || !lib->priced_on_topology || !has_native(library, a.coll)) return std::nullopt;
  const double n_ranks = a.ranks;
  const double bytes = static_cast<double>(message_bytes(a.coll, a.ranks, a.count, a.dtype));
  const std::int64_t nodes = std::max<std::int64_t>(1, (a.ranks + p.ranks_per_node - 1) / p.ranks_per_node);
  const double g = static_cast<double>(std::min<std::int64_t>(a.ranks, p.ranks_per_node));  // ranks in a node
  const double cards = std::max(1.0, std::min<double>(g, t.nic.per_node));
  const double n = static_cast<double>(nodes);
  const double tree_depth = std::ceil(std::log2(std::max(2.0, n)));
  const bool multi = nodes > 1;
  const bool switch_reduction = t.intra.switch_reduction > 0 && g > 1;

  std::vector<Candidate> all;
  auto ring = [&](double link, double hops) {
    // A ring crosses every node boundary once per channel; the node's channels share its
    // cards. Of a chunk's hops, one in every g leaves a node: 2(nodes-1) of all-reduce's.
    const double across = multi ? hops * (n - 1) / (n_ranks - 1) : 0;
    all.push_back({"RING", link, multi ? link / cards : 0, false, hops - across, across});
  };
  switch (a.coll) {
    case Collective::allreduce: {
      ring(2 * (n_ranks - 1) / n_ranks * bytes, 2 * (n_ranks - 1));
      // Both trees carry half the buffer: a node sends and receives the whole buffer
      // twice over its cards (up and down, interior in one tree and a leaf in the other).
      if (multi) all.push_back({"TREE", g > 1 ? 2 * bytes : 0, 2 * bytes / cards, false, 2 * (g - 1), 2 * tree_depth});
      if (switch_reduction && !multi) all.push_back({"NVLS", (1 + 1 / g) * bytes, 0, true, 2, 0});
      if (switch_reduction && multi)
        all.push_back({"NVLS_TREE", (1 + 1 / g) * bytes, 2 * bytes / cards, true, 2, 2 * tree_depth});
      break;
    }
    case Collective::allgather:
    case Collective::reduce_scatter:
      ring((n_ranks - 1) / n_ranks * bytes, n_ranks - 1);
      break;
    case Collective::broadcast:
    case Collective::reduce:
      ring(bytes, n_ranks - 1);  // a pipelined chain round the ring
      break;
    default: {
      // Sends and receives, all at once: every rank (the root alone for scatter and
      // gather) sends its blocks; those for the other ranks of its node cross the
      // node's links, the others leave through the node's cards.
      const bool rooted = a.coll == Collective::scatter || a.coll == Collective::gather;
      const double inside = (g - 1) / n_ranks, outside = multi ? (n_ranks - g) / n_ranks : 0;
      const double senders = rooted ? 1 : g;
      all.push_back(
          {"P2P", bytes * inside, senders * bytes * outside / cards, false, multi ? 0.0 : 1.0, multi ? 1.0 : 0.0});
      break;
    }
  }

  const std::string wanted = wanted_algorithms();
  std::vector<Candidate> usable;
  for (const auto& c : all)
    if (allowed(wanted, c.name)) usable.push_back(c);
  if (usable.empty()) usable = all;  // NCCL_ALGO names none of them: NCCL falls back to its own choice

  // Ranks sharing a device (NCCL 2.30's NCCL_MULTI_RANK_GPU_ENABLE) move their "link"
  // bytes in the device's memory, read and written, with the device's other ranks.
  const double per_device = std::ceil(g / std::max(1, p.devices_per_node));
  double inter_latency = t.nic.latency_us;
  for (const auto& tier : t.tiers)
    if (nodes > tier.nodes) inter_latency += tier.latency_us;

  Prediction best;
  best.us = -1;
  for (const auto& c : usable) {
    double link_us = 0;
    Level level = Level::node;
    if (per_device > 1) {
      link_us = 2 * c.link_bytes * per_device / (t.effective_memory_gbps() * 1e3);
      level = Level::memory;
    } else if (c.link_bytes > 0) {
      const double rate = t.intra.effective_gbps() * (c.switch_reduces ? t.intra.switch_reduction : 1);
      link_us = c.link_bytes / (rate * 1e3);
    }
    const double card_us = c.card_bytes > 0 ? c.card_bytes / (t.nic.effective_gbps() * 1e3) : 0;
    const double data_us = std::max(link_us, card_us);
    const double fixed_us = t.launch_us + c.intra_hops * t.intra.latency_us + c.inter_hops * inter_latency;
    const double us = fixed_us + data_us;
    if (best.us >= 0 && us >= best.us) continue;
    best = Prediction{};
    best.us = us;
    best.library_algorithm = c.name;
    if (card_us > link_us) level = Level::network;
    if (fixed_us > data_us) level = Level::launch;
    best.levels.push_back({level_name(level), us});
  }
  return best;
}

}  // namespace collscope
