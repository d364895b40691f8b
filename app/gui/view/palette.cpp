#include "gui/view/palette.h"

#include <cmath>

namespace collscope::view {

namespace {

Rgba from_hsv(float h, float s, float v) {
  h = h - std::floor(h);
  const float i = std::floor(h * 6.0f);
  const float f = h * 6.0f - i;
  const float p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  switch (static_cast<int>(i) % 6) {
    case 0:
      return {v, t, p, 1};
    case 1:
      return {q, v, p, 1};
    case 2:
      return {p, v, t, 1};
    case 3:
      return {p, q, v, 1};
    case 4:
      return {t, p, v, 1};
    default:
      return {v, p, q, 1};
  }
}

}  // namespace

Rgba rank_colour(std::int32_t rank) {
  constexpr float kGolden = 0.618033988749895f;
  // Start at a blue-ish hue and avoid pure yellow (reserved for complete cells) by
  // varying value on every other lap around the wheel.
  const float h = 0.58f + kGolden * static_cast<float>(rank);
  const int lap = static_cast<int>(static_cast<float>(rank) * kGolden);
  const float v = (lap % 2 == 0) ? 0.92f : 0.72f;
  const float s = (rank % 3 == 2) ? 0.55f : 0.72f;
  return from_hsv(h, s, v);
}

CellColour colour_of(const std::vector<std::int32_t>& ranks, std::int32_t world) {
  CellColour c;
  if (ranks.empty()) {
    c.fill = kEmptyCell;
    c.coverage = Coverage::none;
    return c;
  }
  if (static_cast<std::int32_t>(ranks.size()) >= world && world > 1) {
    c.fill = kCompleteCell;
    c.coverage = Coverage::complete;
    return c;
  }
  if (ranks.size() == 1) {
    c.fill = rank_colour(ranks[0]);
    c.coverage = world == 1 ? Coverage::complete : Coverage::single;
    return c;
  }
  c.fill = mix_colour(ranks);
  c.coverage = Coverage::partial;
  return c;
}

Rgba mix_colour(const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return kEmptyCell;
  // The average of the contributors, pulled towards grey a little so that a mix
  // never looks like one rank's pure colour.
  Rgba m{0, 0, 0, 1};
  for (auto r : ranks) {
    const Rgba k = rank_colour(r);
    m.r += k.r;
    m.g += k.g;
    m.b += k.b;
  }
  const float n = static_cast<float>(ranks.size());
  m.r = 0.8f * m.r / n + 0.1f;
  m.g = 0.8f * m.g / n + 0.1f;
  m.b = 0.8f * m.b / n + 0.1f;
  return m;
}

Rgba text_on(Rgba b) {
  const float luma = 0.299f * b.r + 0.587f * b.g + 0.114f * b.b;
  return luma > 0.55f ? Rgba{0.05f, 0.05f, 0.07f, 1} : Rgba{1, 1, 1, 1};
}

}  // namespace collscope::view
