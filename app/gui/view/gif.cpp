#include "gui/view/gif.h"

#if defined(COLLSCOPE_HAVE_CGIF)
#include <cgif.h>
#endif

#include <algorithm>
#include <cstring>

namespace collscope::view {

#if defined(COLLSCOPE_HAVE_CGIF)
struct GifEncoder::Gif {
  CGIF* gif = nullptr;
  std::string bytes;
  std::vector<std::uint8_t> palette;
  std::vector<std::uint8_t> frame;  // the last frame's indices (cgif keeps a pointer to it)
  ~Gif() {
    if (gif) cgif_close(gif);
  }
};

GifEncoder::GifEncoder() = default;
GifEncoder::~GifEncoder() = default;

Status GifEncoder::start(int w, int h, const Quantizer& q) {
  if (w <= 0 || h <= 0 || w > 65535 || h > 65535)
    return make_error("gui.gif", "a GIF frame must be 1 to 65535 pixels wide and high", "choose another --size");
  gif_ = std::make_unique<Gif>();
  gif_->palette = q.palette();
  q_ = &q;
  w_ = w;
  h_ = h;
  CGIF_Config c;
  std::memset(&c, 0, sizeof c);
  c.pGlobalPalette = gif_->palette.data();
  c.numGlobalPaletteEntries = static_cast<std::uint16_t>(gif_->palette.size() / 3);
  c.attrFlags = CGIF_ATTR_IS_ANIMATED;
  c.width = static_cast<std::uint16_t>(w);
  c.height = static_cast<std::uint16_t>(h);
  c.numLoops = 0;  // for ever
  c.pWriteFn = [](void* ctx, const std::uint8_t* data, const size_t n) -> int {
    static_cast<std::string*>(ctx)->append(reinterpret_cast<const char*>(data), n);
    return 0;
  };
  c.pContext = &gif_->bytes;
  gif_->gif = cgif_newgif(&c);
  if (!gif_->gif) return make_error("gui.gif", "libcgif could not start a GIF", "try a smaller --size");
  return ok_status();
}

Status GifEncoder::add(const std::vector<std::uint8_t>& rgba, int delay_cs) {
  if (!gif_ || !gif_->gif) return make_error("gui.gif", "the GIF was not started");
  const std::size_t stride = static_cast<std::size_t>(w_) * 4;
  if (rgba.size() < stride * static_cast<std::size_t>(h_))
    return make_error("gui.gif", "a frame is smaller than the GIF");
  // OpenGL's rows are bottom-up; a GIF's top-down.
  std::vector<std::uint8_t> flipped(stride * static_cast<std::size_t>(h_));
  for (int y = 0; y < h_; ++y)
    std::memcpy(flipped.data() + stride * static_cast<std::size_t>(y),
                rgba.data() + stride * static_cast<std::size_t>(h_ - 1 - y), stride);
  gif_->frame = q_->map(flipped);
  CGIF_FrameConfig f;
  std::memset(&f, 0, sizeof f);
  f.pImageData = gif_->frame.data();
  f.delay = static_cast<std::uint16_t>(std::max(2, delay_cs));
  // Only what changed since the previous frame is encoded: most of a step is the same.
  // Inside that window, unchanged pixels become the palette's spare (transparent) entry,
  // which compresses into long runs.
  f.genFlags = CGIF_FRAME_GEN_USE_DIFF_WINDOW;
  if (q_->spare_index() >= 0 && frames_ > 0) {
    f.genFlags |= CGIF_FRAME_GEN_USE_TRANSPARENCY;
    f.attrFlags = CGIF_FRAME_ATTR_HAS_SET_TRANS;
    f.transIndex = static_cast<std::uint8_t>(q_->spare_index());
  }
  if (cgif_addframe(gif_->gif, &f) != 0) return make_error("gui.gif", "libcgif could not add a frame");
  ++frames_;
  return ok_status();
}

Result<std::string> GifEncoder::finish() {
  if (!gif_ || !gif_->gif) return make_error("gui.gif", "the GIF was not started");
  const int rc = cgif_close(gif_->gif);
  gif_->gif = nullptr;
  if (rc != 0) return make_error("gui.gif", "libcgif could not finish the GIF");
  std::string out = std::move(gif_->bytes);
  gif_.reset();
  return out;
}

#else
struct GifEncoder::Gif {};

GifEncoder::GifEncoder() = default;
GifEncoder::~GifEncoder() = default;

namespace {
Error not_built() {
  return make_error("gui.gif_unavailable", "this collscope was built without libcgif, which writes GIFs",
                    "install it (apt-get install libcgif-dev, or scripts/deps.sh) and build again");
}
}  // namespace

Status GifEncoder::start(int, int, const Quantizer&) { return not_built(); }
Status GifEncoder::add(const std::vector<std::uint8_t>&, int) { return not_built(); }
Result<std::string> GifEncoder::finish() { return not_built(); }

#endif

GifInfo read_gif_info(const std::string& b) {
  GifInfo info;
  auto u8 = [&](std::size_t i) { return static_cast<std::uint8_t>(b[i]); };
  if (b.size() < 13 || (b.compare(0, 6, "GIF89a") != 0 && b.compare(0, 6, "GIF87a") != 0)) return info;
  info.width = u8(6) | u8(7) << 8;
  info.height = u8(8) | u8(9) << 8;
  std::size_t i = 13;
  if (u8(10) & 0x80) i += 3u * (1u << ((u8(10) & 7) + 1));  // the global colour table
  int frames = 0;
  auto skip_blocks = [&](std::size_t& j) {
    while (j < b.size() && u8(j) != 0) j += 1u + u8(j);
    ++j;
  };
  while (i < b.size()) {
    const std::uint8_t tag = u8(i);
    if (tag == 0x3B) {  // trailer
      info.frames = frames;
      return info;
    }
    if (tag == 0x21) {  // an extension: label, then sub-blocks
      i += 2;
      skip_blocks(i);
    } else if (tag == 0x2C) {  // an image: descriptor, optional local table, LZW size, data
      if (i + 10 > b.size()) return info;
      const std::uint8_t flags = u8(i + 9);
      i += 10;
      if (flags & 0x80) i += 3u * (1u << ((flags & 7) + 1));
      ++i;  // LZW minimum code size
      skip_blocks(i);
      ++frames;
    } else {
      return info;  // not a GIF block: damaged
    }
  }
  return info;  // no trailer: cut short
}

}  // namespace collscope::view
