// The shapes of the rooted collectives: broadcast, reduce, scatter and gather (see
// shapes.cpp for what a shape is), their steps counted from the root.
#include <map>
#include <tuple>

#include "shape_builder.h"

namespace collscope::shape {

// In a chain from `root` (position i is rank root + i), the first link i >= `from` (joining
// positions i and i+1) that leaves a switch group of g ranks: position i+1 starts a group.
namespace {

std::int64_t first_climb(std::int64_t g, std::int64_t root, std::int64_t from) {
  return from + (g - (root + from + 1) % g) % g;
}

}  // namespace

// Broadcast, reduce, scatter and gather: one root; positions counted from it.
std::optional<std::vector<ShapePhase>> rooted_shape(const CollArgs& a, std::string_view algo, ShapeRepeat rep) {
  const std::int32_t n = a.ranks;
  const std::int32_t root = a.root;
  const std::uint64_t c = a.count;
  const Collective coll = a.coll;
  const bool blocks = coll == Collective::scatter || coll == Collective::gather;
  const bool shaped_here = coll == Collective::broadcast
                               ? shaped(algo, {"flat", "binomial", "chain", "scatter_allgather"})
                           : coll == Collective::reduce ? shaped(algo, {"flat", "binomial", "ring"})
                           : blocks                     ? shaped(algo, {"flat", "binomial", "chain"})
                                                        : false;
  if (!shaped_here) return std::nullopt;
  ShapeBuilder b(n, rep);
  if (c == 0) return b.phases;  // nothing moves: the lowered call has no steps
  if (n == 1) {
    if (!a.in_place) local_copy(b, 1, c);
    return b.phases;
  }
  auto at = [root, n](std::int64_t v) { return algo::absolute_rank(static_cast<std::int32_t>(v), root, n); };
  // The root's own buffer or block into its output, out of place, in the first step.
  const bool own_copy = !a.in_place;
  auto own = [own_copy, root, c](std::vector<Transfer>& t) {
    if (own_copy) t.push_back(xfer(root, root, c, Action::copy));
  };
  if (algo == "binomial" && (coll == Collective::broadcast || coll == Collective::reduce)) {
    const bool bcast = coll == Collective::broadcast;
    tree(b, n, root, c, !bcast);
    if (bcast && !b.phases.empty()) {
      // The root's local copy rides in the first step (broadcast.cpp).
      auto first = b.phases.front().fill;
      b.phases.front().fill = [first, own](Step& st) {
        first(st);
        own(st.transfers);
      };
    }
  } else if (algo == "flat" && coll != Collective::reduce) {
    // One step: the root sends to, or hears from, every other rank at once.
    const bool out = coll != Collective::gather;
    b.add(1, out ? "fan-out" : "fan-in", [=](std::vector<Transfer>& t) {
      own(t);
      for (std::int32_t r = 0; r < n; ++r)
        if (r != root) t.push_back(out ? xfer(root, r, c, Action::copy) : xfer(r, root, c, Action::copy));
    });
  } else if (algo == "flat") {
    // reduce: one rank after another adds into the root's output.
    for (std::int32_t k = 1; k < n; ++k)
      b.add(1, "fan-in", [=](std::vector<Transfer>& t) { t.push_back(xfer(at(k), root, c, Action::reduce_copy)); });
  } else if (algo == "ring" && coll == Collective::reduce) {
    const std::uint64_t block = ceil_div(c, static_cast<std::uint64_t>(n));
    b.add_alike(n - 1, "reduce-scatter", 1, [=](std::vector<Transfer>& t, std::int64_t W) {
      every_rank(
          t, n, block, Action::reduce_copy, [n](std::int64_t r) { return (r + 1) % n; }, W);
    });
    b.add(1, "gather", [=](std::vector<Transfer>& t) {
      for (std::int32_t r = 0; r < n; ++r)
        if (r != root) t.push_back(xfer(r, root, block, Action::copy));
    });
  } else if (algo == "chain" && coll == Collective::broadcast) {
    // In step t link i (positions i -> i+1) carries chunk t - i, while there is one.
    const auto chunks = static_cast<std::int64_t>(algo::chain_chunks(c, a.dtype));
    if (chunks == 0) return b.phases;
    const std::uint64_t len = ceil_div(c, static_cast<std::uint64_t>(chunks));
    const std::int64_t links = n - 1;
    // Links first..last, and the further links `more`.
    auto stretch = [=](std::int64_t first, std::int64_t last, bool with_own, std::vector<std::int64_t> more) {
      return [=](std::vector<Transfer>& t) {
        if (with_own) own(t);
        for (std::int64_t i = first; i <= last; ++i) t.push_back(xfer(at(i), at(i + 1), len, Action::copy));
        for (const std::int64_t i : more) t.push_back(xfer(at(i), at(i + 1), len, Action::copy));
      };
    };
    // Where the switch tiers nest (ShapeRepeat::counted_groups) a stretch of links loads
    // the nodes' memory, links and cards by where in a node it starts and how long it is
    // (two nodes' links or more: as the whole chain does), and no switch group is left by
    // more than one of its links; the tiers it climbs add their groups' loads and
    // latencies. Steps alike in those are priced once: a stretch of two nodes' links or
    // more from its first two nodes' links and the first link that climbs each tier.
    const Repeat w(n, rep);
    const bool counted = w.W < w.P && !rep.group_ranks.empty();
    const std::int64_t whole = 2 * w.R;
    struct Kind {
      std::int64_t first, last;
      std::vector<std::int64_t> more;
      std::int64_t steps;
    };
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, Kind> kinds;
    for (std::int64_t step = 0; step < chunks + links - 1; ++step) {
      const std::int64_t first = std::max<std::int64_t>(0, step - chunks + 1), last = std::min(links - 1, step);
      if (!counted || step == 0) {
        b.add(1, "pipeline", stretch(first, last, step == 0, {}));
        continue;
      }
      const std::int64_t count = last - first + 1;
      std::int64_t climbed = 0;
      std::vector<std::int64_t> more;
      for (const std::int64_t g : rep.group_ranks) {
        const std::int64_t i = first_climb(g, root, first);
        if (i > last) break;  // nested tiers: none above is climbed either
        ++climbed;
        if (count >= whole && i >= first + whole && std::find(more.begin(), more.end(), i) == more.end())
          more.push_back(i);
      }
      const auto key = std::make_tuple(count < whole ? (root + first) % w.R : -1, std::min(count, whole), climbed);
      ++kinds.try_emplace(key, Kind{first, std::min(last, first + whole - 1), std::move(more), 0}).first->second.steps;
    }
    for (const auto& [key, k] : kinds) b.add(k.steps, "pipeline", stretch(k.first, k.last, false, k.more));
  } else if (algo == "scatter_allgather" && coll == Collective::broadcast) {
    // Down the binomial tree a child gets the blocks of its subtree, then a ring passes
    // one block a step to every rank but the root (broadcast.cpp).
    const auto rounds = binomial_rounds(n, root);
    for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) {
      std::vector<Transfer> step;
      if (it == rounds.rbegin()) own(step);
      for (const auto& e : it->edges) {
        const std::int32_t vc = algo::relative_rank(e.child, root, n);
        const auto r = algo::block_range(c, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(vc),
                                         static_cast<std::uint64_t>(std::min<std::int64_t>(vc + it->distance, n)));
        if (r.size > 0) step.push_back(xfer(e.parent, e.child, r.size, Action::copy));
      }
      auto moves = std::make_shared<std::vector<Transfer>>(std::move(step));
      b.add(1, "scatter", [moves](std::vector<Transfer>& t) { t.insert(t.end(), moves->begin(), moves->end()); });
    }
    const std::uint64_t block = ceil_div(c, static_cast<std::uint64_t>(n));
    b.add(n - 1, "all-gather", [=](std::vector<Transfer>& t) {
      for (std::int64_t v = 0; v + 1 < n; ++v) t.push_back(xfer(at(v), at(v + 1), block, Action::copy));
    });
  } else if (algo == "chain") {
    // scatter and gather (scatter_gather.cpp): in step s the links of positions i -> i+1
    // (towards the root for a gather) carry one block each, the first s of them for a
    // scatter, the first n-s for a gather: every step its own. But on a machine that
    // repeats every P ranks (Repeat) a chain of 2P links or more holds a whole repeat with
    // the links into and out of it, which loads every resource as much as the whole chain
    // does: all such steps cost what the whole chain costs, priced once. Where the switch
    // tiers nest (ShapeRepeat::counted_groups) a chain of two nodes' links loads every
    // node's memory, links and cards as the whole chain does, and no switch group is left
    // by more than one link (the one out of its last node): such a step costs what those
    // links and, for each tier the chain climbs, the first link that climbs it cost.
    const bool scatter = coll == Collective::scatter;
    const Repeat w(n, rep);
    const std::int64_t whole = 2 * w.W, apart = std::min<std::int64_t>(n - 1, whole - 1);
    if (apart * (apart + 1) / 2 + whole + n > kMaxShapeTransfers) return std::nullopt;
    // The first link that climbs each tier.
    std::vector<std::int64_t> climbs;
    if (w.W < w.P)
      for (const std::int64_t g : rep.group_ranks) climbs.push_back(first_climb(g, root, 0));
    auto links = [=](std::int64_t count, bool first, std::vector<std::int64_t> more = {}) {
      return [=](std::vector<Transfer>& t) {
        if (first) own(t);
        auto link = [&](std::int64_t i) {
          t.push_back(scatter ? xfer(at(i), at(i + 1), c, Action::copy) : xfer(at(i + 1), at(i), c, Action::copy));
        };
        for (std::int64_t i = 0; i < count; ++i) link(i);
        for (const std::int64_t i : more) link(i);
      };
    };
    // The long steps, by the tiers their chain climbs beyond the first `whole` links.
    std::vector<std::pair<std::vector<std::int64_t>, std::int64_t>> long_steps;
    for (std::int64_t step = 1; step < n; ++step) {
      const std::int64_t count = scatter ? step : n - step;
      if (step == 1 || count < whole) {
        b.add(1, "chain", links(count, step == 1));
        continue;
      }
      std::vector<std::int64_t> more;
      for (const std::int64_t i : climbs)
        if (i >= whole && i < count && std::find(more.begin(), more.end(), i) == more.end()) more.push_back(i);
      auto same = std::find_if(long_steps.begin(), long_steps.end(), [&](const auto& l) { return l.first == more; });
      if (same == long_steps.end()) long_steps.push_back({std::move(more), 1});
      else ++same->second;
    }
    for (auto& [more, steps] : long_steps) b.add(steps, "chain", links(whole, false, more));
  } else if (algo == "binomial") {
    // scatter and gather: at distance d (largest first to scatter, smallest first to
    // gather) position v + d gets or gives the blocks of its subtree (scatter_gather.cpp).
    const bool scatter = coll == Collective::scatter;
    std::vector<std::int64_t> distances;
    for (std::int64_t d = 1; d < n; d *= 2) distances.push_back(d);
    if (scatter) std::reverse(distances.begin(), distances.end());
    for (std::size_t k = 0; k < distances.size(); ++k) {
      const std::int64_t d = distances[k];
      b.add(1, scatter ? "tree down" : "tree up", [=](std::vector<Transfer>& t) {
        if (k == 0) own(t);
        for (std::int64_t v = 0; v + d < n; v += 2 * d) {
          const auto child = static_cast<std::int32_t>(v + d);
          const std::uint64_t count = static_cast<std::uint64_t>(algo::subtree_end(child, n) - child) * c;
          t.push_back(scatter ? xfer(at(v), at(child), count, Action::copy)
                              : xfer(at(child), at(v), count, Action::copy));
        }
      });
    }
  } else {
    return std::nullopt;
  }
  return b.phases;
}

}  // namespace collscope::shape
