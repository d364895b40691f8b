#include "gui/view/quantize.h"

#include <algorithm>
#include <numeric>

namespace collscope::view {

void Quantizer::sample(const std::vector<std::uint8_t>& rgba) {
  for (std::size_t i = 0; i + 3 < rgba.size(); i += 4) {
    Bin& b = bins_[bin(rgba[i], rgba[i + 1], rgba[i + 2])];
    ++b.n;
    b.r += rgba[i];
    b.g += rgba[i + 1];
    b.b += rgba[i + 2];
  }
}

void Quantizer::build(int max_colours, bool spare) {
  max_colours = std::clamp(max_colours, 2, spare ? 255 : 256);
  std::vector<std::uint32_t> used;
  for (std::uint32_t k = 0; k < bins_.size(); ++k)
    if (bins_[k].n) used.push_back(k);
  std::sort(used.begin(), used.end(), [&](std::uint32_t a, std::uint32_t b) {
    return bins_[a].n != bins_[b].n ? bins_[a].n > bins_[b].n : a < b;
  });
  if (used.size() > static_cast<std::size_t>(max_colours)) used.resize(static_cast<std::size_t>(max_colours));
  palette_.clear();
  for (std::uint32_t k : used) {
    const Bin& b = bins_[k];
    palette_.push_back(static_cast<std::uint8_t>(b.r / b.n));
    palette_.push_back(static_cast<std::uint8_t>(b.g / b.n));
    palette_.push_back(static_cast<std::uint8_t>(b.b / b.n));
  }
  // GIF palettes come in powers of two; pad with black (never chosen for a pixel).
  used_ = palette_.size() / 3;
  std::size_t n = 2;
  while (n < used_ + (spare ? 1 : 0)) n *= 2;
  palette_.resize(n * 3, 0);
  std::fill(cache_.begin(), cache_.end(), -1);
}

std::uint8_t Quantizer::nearest(std::uint8_t r, std::uint8_t g, std::uint8_t b) const {
  const std::uint32_t k = bin(r, g, b);
  if (cache_[k] >= 0) return static_cast<std::uint8_t>(cache_[k]);
  // The bin's centre stands for every colour in it.
  const int cr = static_cast<int>((k >> 10) << 3) + 4, cg = static_cast<int>(((k >> 5) & 31) << 3) + 4,
            cb = static_cast<int>((k & 31) << 3) + 4;
  int best = 0, best_d = 1 << 30;
  for (std::size_t i = 0; i < used_; ++i) {
    const int dr = palette_[3 * i] - cr, dg = palette_[3 * i + 1] - cg, db = palette_[3 * i + 2] - cb;
    const int d = 2 * dr * dr + 4 * dg * dg + 3 * db * db;  // green counts most to the eye
    if (d < best_d) best_d = d, best = static_cast<int>(i);
  }
  cache_[k] = static_cast<std::int16_t>(best);
  return static_cast<std::uint8_t>(best);
}

std::vector<std::uint8_t> Quantizer::map(const std::vector<std::uint8_t>& rgba) const {
  std::vector<std::uint8_t> out(rgba.size() / 4);
  for (std::size_t i = 0, p = 0; i + 3 < rgba.size(); i += 4, ++p) out[p] = nearest(rgba[i], rgba[i + 1], rgba[i + 2]);
  return out;
}

}  // namespace collscope::view
