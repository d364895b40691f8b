// Frames of the window as 256 colours, for GIF: a palette chosen by popularity from a
// few sample frames (the window draws flat colours, so a few hundred cover it), and a
// mapping of every pixel to its nearest palette entry, cached per 15-bit colour.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace collscope::view {

class Quantizer {
 public:
  // Counts the colours of an RGBA frame (w * h * 4 bytes).
  void sample(const std::vector<std::uint8_t>& rgba);
  // Chooses at most `max_colours` (2..256) entries from what was sampled: the most
  // frequent 15-bit colours, each the mean of the pixels that fell in it. With `spare`,
  // the palette keeps one entry that no pixel maps to (spare_index()): a GIF's
  // transparent colour, which marks the pixels a frame leaves as they were.
  void build(int max_colours = 256, bool spare = false);
  // An entry no pixel maps to, -1 when every entry is a colour.
  int spare_index() const { return used_ < palette_.size() / 3 ? static_cast<int>(used_) : -1; }
  // RGB triples, size() / 3 entries.
  const std::vector<std::uint8_t>& palette() const { return palette_; }
  // The palette index of every pixel of an RGBA frame.
  std::vector<std::uint8_t> map(const std::vector<std::uint8_t>& rgba) const;
  std::uint8_t nearest(std::uint8_t r, std::uint8_t g, std::uint8_t b) const;

 private:
  static std::uint32_t bin(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    return (static_cast<std::uint32_t>(r) >> 3) << 10 | (static_cast<std::uint32_t>(g) >> 3) << 5 | (b >> 3);
  }
  struct Bin {
    std::uint64_t n = 0, r = 0, g = 0, b = 0;
  };
  std::vector<Bin> bins_ = std::vector<Bin>(1 << 15);
  std::vector<std::uint8_t> palette_;
  std::size_t used_ = 0;  // entries that are colours; the rest pad the palette to a power of two
  mutable std::vector<std::int16_t> cache_ = std::vector<std::int16_t>(1 << 15, -1);
};

}  // namespace collscope::view
