#include "gui/view/layout.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <utility>

namespace collscope::view {

std::vector<std::int32_t> call_tree(const Schedule& s, std::int32_t call) {
  if (call < 0 || call >= static_cast<std::int32_t>(s.calls.size()) || s.ranks < 4) return {};
  const Call& c = s.calls[static_cast<std::size_t>(call)];
  // Distinct undirected pairs, in the order they first talk.
  std::vector<std::pair<std::int32_t, std::int32_t>> edges;
  std::set<std::pair<std::int32_t, std::int32_t>> seen;
  for (std::int32_t k = c.first_step; k < c.first_step + c.num_steps; ++k)
    for (const auto& t : s.steps[static_cast<std::size_t>(k)].transfers) {
      if (t.src.rank == t.dst.rank) continue;
      auto e = std::minmax(t.src.rank, t.dst.rank);
      if (seen.insert(e).second) edges.emplace_back(e.first, e.second);
    }
  if (static_cast<std::int32_t>(edges.size()) != s.ranks - 1) return {};
  // Breadth-first from the call's root (world rank), which must reach every rank.
  std::int32_t root = c.args.root;
  if (!c.args.world_rank.empty() && root < static_cast<std::int32_t>(c.args.world_rank.size()))
    root = c.args.world_rank[static_cast<std::size_t>(root)];
  std::vector<std::int32_t> parent(static_cast<std::size_t>(s.ranks), -2), depth(static_cast<std::size_t>(s.ranks), 0);
  parent[static_cast<std::size_t>(root)] = -1;
  std::vector<std::int32_t> queue{root};
  std::int32_t max_depth = 0;
  for (std::size_t q = 0; q < queue.size(); ++q) {
    const std::int32_t u = queue[q];
    for (const auto& [a, b] : edges) {
      const std::int32_t v = a == u ? b : b == u ? a : -1;
      if (v < 0 || parent[static_cast<std::size_t>(v)] != -2) continue;
      parent[static_cast<std::size_t>(v)] = u;
      depth[static_cast<std::size_t>(v)] = depth[static_cast<std::size_t>(u)] + 1;
      max_depth = std::max(max_depth, depth[static_cast<std::size_t>(v)]);
      queue.push_back(v);
    }
  }
  if (static_cast<std::int32_t>(queue.size()) != s.ranks) return {};
  if (max_depth < 2 || max_depth >= s.ranks - 1) return {};  // a star or a chain
  return parent;
}

namespace {

struct RowSize {
  float row_px, title_px;
};

Vec2 box_size(Vec2 canvas, std::int32_t across, std::int32_t down, std::int32_t rows_per_box, RowSize rs) {
  // Boxes take most of their slot, but rows stay at their readable height.
  const float w = canvas.x / static_cast<float>(std::max(1, across)) * 0.86f;
  const float h = std::min(canvas.y / static_cast<float>(std::max(1, down)) * 0.78f,
                           rs.row_px * static_cast<float>(std::max(1, rows_per_box)) + rs.title_px);
  return {std::max(w, 8.0f), std::max(h, 8.0f)};
}

}  // namespace

Layout layout_ranks(const Schedule& s, std::int32_t call, Vec2 canvas, std::int32_t rows_per_box, float row_px,
                    float title_px) {
  const RowSize rs{row_px, title_px};
  Layout l;
  const std::int32_t n = s.ranks;
  l.boxes.resize(static_cast<std::size_t>(n));
  for (std::int32_t r = 0; r < n; ++r) l.boxes[static_cast<std::size_t>(r)].rank = r;

  if (auto parent = call_tree(s, call); !parent.empty()) {
    l.kind = LayoutKind::tree;
    // Levels by depth; inside a level, children follow their parents' order.
    std::vector<std::vector<std::int32_t>> levels;
    std::vector<std::int32_t> depth(static_cast<std::size_t>(n), 0);
    std::vector<std::int32_t> order;
    for (std::int32_t r = 0; r < n; ++r)
      if (parent[static_cast<std::size_t>(r)] == -1) order.push_back(r);
    for (std::size_t q = 0; q < order.size(); ++q)
      for (std::int32_t v = 0; v < n; ++v)
        if (parent[static_cast<std::size_t>(v)] == order[q]) {
          depth[static_cast<std::size_t>(v)] = depth[static_cast<std::size_t>(order[q])] + 1;
          order.push_back(v);
        }
    for (auto r : order) {
      const auto d = static_cast<std::size_t>(depth[static_cast<std::size_t>(r)]);
      if (levels.size() <= d) levels.resize(d + 1);
      levels[d].push_back(r);
    }
    std::size_t widest = 1;
    for (const auto& lv : levels) widest = std::max(widest, lv.size());
    l.box =
        box_size(canvas, static_cast<std::int32_t>(widest), static_cast<std::int32_t>(levels.size()), rows_per_box, rs);
    const float dy = canvas.y / static_cast<float>(levels.size());
    for (std::size_t d = 0; d < levels.size(); ++d) {
      const float dx = canvas.x / static_cast<float>(levels[d].size());
      for (std::size_t i = 0; i < levels[d].size(); ++i) {
        auto& b = l.boxes[static_cast<std::size_t>(levels[d][i])];
        b.centre = {dx * (static_cast<float>(i) + 0.5f), dy * (static_cast<float>(d) + 0.5f)};
        b.parent = parent[static_cast<std::size_t>(b.rank)];
      }
    }
    return l;
  }

  // A grid: many ranks, or many buffer rows that a ring's flat boxes would squash
  // below a readable height while a grid's taller boxes fit them.
  auto grid = [&](Layout& g) {
    g.kind = LayoutKind::grid;
    const auto cols = static_cast<std::int32_t>(
        std::ceil(std::sqrt(static_cast<float>(n) * canvas.x / std::max(1.0f, canvas.y) / 2.0f)));
    const std::int32_t c = std::clamp(cols, 1, n);
    const std::int32_t rows = (n + c - 1) / c;
    g.box = box_size(canvas, c, rows, rows_per_box, rs);
    for (std::int32_t r = 0; r < n; ++r)
      g.boxes[static_cast<std::size_t>(r)].centre = {
          canvas.x / static_cast<float>(c) * (static_cast<float>(r % c) + 0.5f),
          canvas.y / static_cast<float>(rows) * (static_cast<float>(r / c) + 0.5f)};
  };
  if (n > kMaxRingRanks) {
    grid(l);
    return l;
  }

  l.kind = LayoutKind::ring;
  if (n == 1) {
    l.box = box_size(canvas, 2, 2, rows_per_box, rs);
    l.boxes[0].centre = {canvas.x / 2, canvas.y / 2};
    return l;
  }
  // Rank 0 at the top, ranks going clockwise like the data on a ring all-reduce.
  // Boxes are sized so that neighbours on the ellipse do not overlap.
  const float pi = std::numbers::pi_v<float>;
  const std::int32_t across = n <= 4 ? 3 : (n <= 8 ? 4 : 6);
  l.box = box_size(canvas, across, n <= 4 ? 3 : (n <= 8 ? 4 : 6), rows_per_box, rs);
  const float rx = canvas.x / 2 - l.box.x / 2 - 8, ry = canvas.y / 2 - l.box.y / 2 - 8;
  for (std::int32_t r = 0; r < n; ++r) {
    const float a = -pi / 2 + 2 * pi * static_cast<float>(r) / static_cast<float>(n);
    l.boxes[static_cast<std::size_t>(r)].centre = {canvas.x / 2 + rx * std::cos(a), canvas.y / 2 + ry * std::sin(a)};
  }
  const float wanted = rs.row_px * static_cast<float>(std::max(1, rows_per_box)) + rs.title_px;
  if (n > 2 && l.box.y < 0.75f * wanted) {
    Layout g = l;
    grid(g);
    if (g.box.y > l.box.y * 1.2f) return g;
  }
  return l;
}

}  // namespace collscope::view
