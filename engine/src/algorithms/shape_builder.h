// What the shapes of the algorithms (shapes.cpp, shapes_rooted.cpp) are written with: a
// builder of their distinct steps, the repeat of the machine they are priced on, and the
// steps several algorithms share. Internal to the algorithms folder.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "binary_tree.h"
#include "collscope/algorithms.h"
#include "common.h"

namespace collscope::shape {

using algo::binomial_rounds;
using algo::PowerOfTwoFold;

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

inline Transfer xfer(std::int64_t src, std::int64_t dst, std::uint64_t count, Action a) {
  Transfer t{Loc{static_cast<std::int32_t>(src), 0, 0}, Loc{static_cast<std::int32_t>(dst), 0, 0}, count, a, 1};
  if (a == Action::reduce_copy) t.aux = t.dst;
  return t;
}

// How many transfers a shape may write in all: about a second of pricing.
inline constexpr std::int64_t kMaxShapeTransfers = std::int64_t{1} << 22;

// Where the machine repeats itself every P ranks (ShapeRepeat): P, and the ranks of a
// node R. Without a repeat, P = R = n: every rank's transfers are written.
struct Repeat {
  std::int64_t P, R;
  // The ranks whose transfers price a step in which every rank r sends to r+k: a repeat,
  // or a node where the pricer counts the switch groups' loads (ShapeRepeat::counted_groups).
  std::int64_t W;
  Repeat(std::int64_t n, ShapeRepeat rep) {
    const bool repeats =
        rep.period > 0 && rep.node_ranks > 0 && rep.period % rep.node_ranks == 0 && n % rep.period == 0;
    P = repeats ? rep.period : n;
    R = repeats ? rep.node_ranks : n;
    W = repeats && rep.counted_groups ? R : P;
  }
  // The transfers that price a step in which every rank r sends to r+k: those that leave
  // ranks [0, W) and those that reach them (on a machine that repeats every P ranks, no
  // resource carries more than one of these ranks' nodes, cards and groups does).
  std::int64_t shift_transfers(std::int64_t n) const { return std::min(n, 2 * W); }
};

inline void shift(std::vector<Transfer>& t, std::int64_t n, std::int64_t W, std::int64_t k, std::uint64_t c,
                  Action act) {
  for (std::int64_t r = 0; r < W; ++r) t.push_back(xfer(r, (r + k) % n, c, act));
  for (std::int64_t d = 0; d < W; ++d)
    if (const std::int64_t from = (d - k + n) % n; from >= W) t.push_back(xfer(from, d, c, act));
}

class ShapeBuilder {
 public:
  // A shape of n ranks on a machine that repeats as `rep` says (Repeat).
  ShapeBuilder(std::int64_t n, ShapeRepeat rep) : n_(n), w_(n, rep) {}
  std::vector<ShapePhase> phases;

  // `repeat` steps like the one `fill` writes.
  template <class Fill>
  void add(std::int64_t repeat, std::string phase, Fill fill) {
    if (repeat <= 0) return;
    phases.push_back(ShapePhase{repeat, std::move(phase), [fill](Step& st) { fill(st.transfers); }});
  }
  // `repeat` steps like one that every node takes alike, for nodes of G ranks (1: a step
  // the same at every rank, as r -> r+k): `fill(t, W)` writes the transfers that leave or
  // reach ranks [0, W), where W, a repeat of the machine or a node where the pricer counts
  // the switch groups' loads (Repeat), holds whole nodes of G; else W = n, every rank's.
  template <class Fill>
  void add_alike(std::int64_t repeat, std::string phase, std::int64_t G, Fill fill) {
    if (repeat <= 0) return;
    const std::int64_t W = w_.W < n_ && G > 0 && w_.W % G == 0 ? w_.W : n_;
    phases.push_back(ShapePhase{repeat, std::move(phase), [fill, W](Step& st) { fill(st.transfers, W); }});
    phases.back().node_periodic = W < w_.P;
  }
  const Repeat& repeats() const { return w_; }

 private:
  std::int64_t n_;
  Repeat w_;
};

// Is `algo` one of the algorithms a shape below is written for?
inline bool shaped(std::string_view algo, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), algo) != names.end();
}

// Every rank r sends `count` to succ(r); with a window W < n, only the transfers that
// leave or reach ranks [0, W) (ShapeBuilder::add_alike).
template <class Succ>
inline void every_rank(std::vector<Transfer>& out, std::int64_t n, std::uint64_t count, Action a, Succ succ,
                       std::int64_t W = -1) {
  const bool all = W < 0 || W >= n;
  out.reserve(out.size() + static_cast<std::size_t>(all ? n : 2 * W));
  for (std::int64_t r = 0; r < n; ++r)
    if (const std::int64_t to = succ(r); all || r < W || to < W) out.push_back(xfer(r, to, count, a));
}

// One step of the rings that cross the nodes as NCCL's channels do (hierarchical.cpp):
// on nodes of G ranks, N of them, channel ch leaves local rank ch-1 of a node for local
// rank ch of the next; every rank sends `piece` on every channel. One node: one ring.
inline void rings_step(std::vector<Transfer>& t, std::int64_t n, std::int64_t G, std::uint64_t piece, Action act,
                       std::int64_t W = -1) {
  const std::int64_t N = n / G;
  const std::int64_t channels = N > 1 ? G : 1;
  const bool all = W < 0 || W >= n;
  t.reserve(t.size() + static_cast<std::size_t>((all ? n : 2 * W) * channels));
  for (std::int64_t ch = 0; ch < channels; ++ch)
    for (std::int64_t r = 0; r < n; ++r) {
      const std::int64_t node = r / G, l = r % G;
      const std::int64_t last = (ch + G - 1) % G;  // the local rank that leaves the node
      const std::int64_t to = channels == 1 ? (r + 1) % n
                              : l == last   ? (node + 1) % N * G + ch
                                            : node * G + (l + 1) % G;
      if (all || r < W || to < W) t.push_back(xfer(r, to, piece, act));
    }
}

// The node size the node-aware algorithms split n ranks by: rpn when it divides them into
// several nodes, else n (one ring over every rank).
inline std::int64_t node_size(std::int64_t n, std::int64_t rpn) { return rpn > 0 && rpn < n && n % rpn == 0 ? rpn : n; }

inline void fold_in(ShapeBuilder& b, const PowerOfTwoFold& f, std::uint64_t count) {
  b.add(f.extra > 0 ? 1 : 0, "fold-in", [f, count](std::vector<Transfer>& t) {
    for (std::int32_t i = 0; i < f.extra; ++i) t.push_back(xfer(2 * i, 2 * i + 1, count, Action::reduce_copy));
  });
}

inline void fold_out(ShapeBuilder& b, const PowerOfTwoFold& f, std::uint64_t count) {
  b.add(f.extra > 0 ? 1 : 0, "fold-out", [f, count](std::vector<Transfer>& t) {
    for (std::int32_t i = 0; i < f.extra; ++i) t.push_back(xfer(2 * i + 1, 2 * i, count, Action::copy));
  });
}

inline void local_copy(ShapeBuilder& b, std::int64_t n, std::uint64_t count) {
  b.add_alike(1, "local copy", 1, [n, count](std::vector<Transfer>& t, std::int64_t W) {
    every_rank(
        t, n, count, Action::copy, [](std::int64_t r) { return r; }, W);
  });
}

// The binomial tree's rounds, up (children to parents, adding) or down (copies).
inline void tree(ShapeBuilder& b, std::int32_t n, std::int32_t root, std::uint64_t count, bool up) {
  auto rounds = binomial_rounds(n, root);
  if (!up) std::reverse(rounds.begin(), rounds.end());
  for (const auto& round : rounds) {
    auto edges = std::make_shared<std::vector<algo::TreeEdge>>(round.edges);
    b.add(1, up ? "tree up" : "tree down", [edges, count, up](std::vector<Transfer>& t) {
      for (const auto& e : *edges)
        t.push_back(up ? xfer(e.child, e.parent, count, Action::reduce_copy)
                       : xfer(e.parent, e.child, count, Action::copy));
    });
  }
}

// Broadcast, reduce, scatter and gather (shapes_rooted.cpp).
std::optional<std::vector<ShapePhase>> rooted_shape(const CollArgs& a, std::string_view algo, ShapeRepeat rep);

}  // namespace collscope::shape
