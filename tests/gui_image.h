// Pictures the window's tests read back: a PNG or every frame of a GIF as RGBA pixels,
// and the measures the tests judge them by (colours, differing pixels, bands, a colour's
// share). Only with the window built (stb_image comes with it).
#pragma once

#ifdef COLLSCOPE_HAVE_GUI
#include <doctest/doctest.h>
#include <stb/stb_image.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace gui_test {

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> px;  // RGBA, top row first
};

inline Image load_png(const std::filesystem::path& p) {
  Image img;
  int n = 0;
  unsigned char* data = stbi_load(p.string().c_str(), &img.w, &img.h, &n, 4);
  REQUIRE_MESSAGE(data != nullptr, "cannot read " << p.string());
  img.px.assign(data, data + static_cast<std::size_t>(img.w) * static_cast<std::size_t>(img.h) * 4);
  stbi_image_free(data);
  return img;
}

// Distinct colours (coarsely quantised): a blank or one-colour frame has very few.
inline std::size_t colours(const Image& img) {
  std::vector<bool> seen(1 << 12);
  std::size_t n = 0;
  for (std::size_t i = 0; i + 3 < img.px.size(); i += 4) {
    const std::size_t k = (img.px[i] >> 4) << 8 | (img.px[i + 1] >> 4) << 4 | (img.px[i + 2] >> 4);
    if (!seen[k]) seen[k] = true, ++n;
  }
  return n;
}

inline std::size_t differing_pixels(const Image& a, const Image& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 3 < a.px.size() && i + 3 < b.px.size(); i += 4)
    if (a.px[i] != b.px[i] || a.px[i + 1] != b.px[i + 1] || a.px[i + 2] != b.px[i + 2]) ++n;
  return n;
}

// Every frame of a GIF, as the viewer shows it (stb_image composes them).
inline std::vector<Image> load_gif(const std::string& bytes) {
  int* delays = nullptr;
  int w = 0, h = 0, n = 0, comp = 0;
  unsigned char* px = stbi_load_gif_from_memory(reinterpret_cast<const unsigned char*>(bytes.data()),
                                                static_cast<int>(bytes.size()), &delays, &w, &h, &n, &comp, 4);
  REQUIRE(px != nullptr);
  std::vector<Image> out(static_cast<std::size_t>(n));
  const std::size_t frame = static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4;
  for (int k = 0; k < n; ++k) {
    out[static_cast<std::size_t>(k)].w = w, out[static_cast<std::size_t>(k)].h = h;
    out[static_cast<std::size_t>(k)].px.assign(px + frame * static_cast<std::size_t>(k),
                                               px + frame * static_cast<std::size_t>(k + 1));
  }
  stbi_image_free(px);
  std::free(delays);
  return out;
}

// Mean difference per channel between two images over rows [y0, y1) and columns [x0, x1).
inline double band_difference(const Image& a, const Image& b, int x0, int x1, int y0, int y1) {
  REQUIRE(a.w == b.w);
  REQUIRE(a.h == b.h);
  double sum = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x)
      for (int c = 0; c < 3; ++c) {
        const std::size_t i =
            (static_cast<std::size_t>(y) * static_cast<std::size_t>(a.w) + static_cast<std::size_t>(x)) * 4 +
            static_cast<std::size_t>(c);
        sum += std::abs(static_cast<int>(a.px[i]) - static_cast<int>(b.px[i]));
      }
  return sum / (3.0 * (x1 - x0) * (y1 - y0));
}

// Pixels over rows [y0, y1) and columns [x0, x1) that differ clearly (by more than a
// palette's rounding): text that is not the same.
inline std::size_t clearly_different(const Image& a, const Image& b, int x0, int x1, int y0, int y1) {
  std::size_t n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const std::size_t i =
          (static_cast<std::size_t>(y) * static_cast<std::size_t>(a.w) + static_cast<std::size_t>(x)) * 4;
      int d = 0;
      for (int c = 0; c < 3; ++c)
        d = std::max(d, std::abs(static_cast<int>(a.px[i + c]) - static_cast<int>(b.px[i + c])));
      n += d > 80;
    }
  return n;
}

// Pixels within `tol` of colour (r, g, b) in every channel, in columns [x0, x1) and rows
// [y0, y1) (-1: to the edge).
inline std::size_t near_colour(const Image& img, int r, int g, int b, int tol, int x0 = 0, int x1 = -1, int y0 = 0,
                               int y1 = -1) {
  if (x1 < 0) x1 = img.w;
  if (y1 < 0) y1 = img.h;
  std::size_t n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) {
      const unsigned char* p =
          &img.px[(static_cast<std::size_t>(y) * static_cast<std::size_t>(img.w) + static_cast<std::size_t>(x)) * 4];
      n += std::abs(p[0] - r) <= tol && std::abs(p[1] - g) <= tol && std::abs(p[2] - b) <= tol;
    }
  return n;
}

}  // namespace gui_test
#endif
