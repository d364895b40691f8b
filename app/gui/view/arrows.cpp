#include "gui/view/arrows.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace collscope::view {

std::vector<Arrow> build_arrows(const Schedule& s, std::int32_t step, const ContributorsFn& before) {
  std::vector<Arrow> out;
  if (step < 0 || step >= static_cast<std::int32_t>(s.steps.size())) return out;
  const Step& st = s.steps[static_cast<std::size_t>(step)];
  std::map<std::tuple<std::int32_t, std::int32_t, Action>, std::size_t> index;
  const std::size_t e = size_of(s.dtype);
  for (std::size_t i = 0; i < st.transfers.size(); ++i) {
    const Transfer& t = st.transfers[i];
    const auto key = std::make_tuple(t.src.rank, t.dst.rank, t.action);
    auto it = index.find(key);
    if (it == index.end()) {
      Arrow a;
      a.src = t.src.rank;
      a.dst = t.dst.rank;
      a.action = t.action;
      a.src_buf = t.src.buf;
      a.dst_buf = t.dst.buf;
      a.src_offset = t.src.offset;
      a.dst_offset = t.dst.offset;
      if (t.action == Action::compute) {
        if (t.label >= 0 && static_cast<std::size_t>(t.label) < s.labels.size())
          a.label = s.labels[static_cast<std::size_t>(t.label)];
        a.duration_us = t.duration_us;
      }
      if (t.count > 0) a.token_ranks = before(t.src.rank, t.src.buf, t.src.offset);
      a.token = colour_of(a.token_ranks, s.ranks).fill;
      it = index.emplace(key, out.size()).first;
      out.push_back(std::move(a));
    }
    Arrow& a = out[it->second];
    a.elements += t.count;
    a.bytes += t.count * e;
    a.transfers.push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

float ease_in_out(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  return t < 0.5f ? 4 * t * t * t : 1 - std::pow(-2 * t + 2, 3.0f) / 2;
}

Vec2 bend_point(Vec2 a, Vec2 b, float bend) {
  const float dx = b.x - a.x, dy = b.y - a.y;
  const float len = std::max(1e-3f, std::sqrt(dx * dx + dy * dy));
  // Perpendicular to the left of a -> b: the opposite direction bends the other way.
  return {(a.x + b.x) / 2 - dy / len * bend, (a.y + b.y) / 2 + dx / len * bend};
}

TokenPos token_at(Vec2 a, Vec2 b, float bend, float t) {
  const float travel = std::clamp(t / kTravelFraction, 0.0f, 1.0f);
  const float u = ease_in_out(travel);
  const Vec2 c = bend_point(a, b, bend);
  const float w0 = (1 - u) * (1 - u), w1 = 2 * (1 - u) * u, w2 = u * u;
  TokenPos p;
  p.at = {w0 * a.x + w1 * c.x + w2 * b.x, w0 * a.y + w1 * c.y + w2 * b.y};
  p.landed = t >= kTravelFraction;
  return p;
}

std::vector<std::uint8_t> ring_coverage(float radius, float width, int size) {
  const auto n = static_cast<std::size_t>(std::max(0, size));
  std::vector<std::uint8_t> out(n * n, 0);
  const float c = static_cast<float>(size) / 2;
  auto clamp01 = [](float v) { return std::min(1.0f, std::max(0.0f, v)); };
  for (std::size_t y = 0; y < n; ++y)
    for (std::size_t x = 0; x < n; ++x) {
      const float d = std::hypot(static_cast<float>(x) + 0.5f - c, static_cast<float>(y) + 0.5f - c);
      float a = clamp01(radius - d + 0.5f);                           // inside the outer edge
      if (width < radius) a *= clamp01(d - (radius - width) + 0.5f);  // outside the inner edge
      out[y * n + x] = static_cast<std::uint8_t>(std::lround(a * 255));
    }
  return out;
}

}  // namespace collscope::view
