// Animated GIFs of a lesson, through Debian's libcgif: frames of the window quantised
// to one palette of 256 colours (view/quantize.h), encoded in memory, written once at
// the end like every other output.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "gui/view/quantize.h"

struct st_gif;

namespace collscope::view {

class GifEncoder {
 public:
  GifEncoder();
  ~GifEncoder();
  GifEncoder(const GifEncoder&) = delete;
  GifEncoder& operator=(const GifEncoder&) = delete;

  // Starts a GIF of w x h frames with the palette `q` built (from sample frames).
  Status start(int w, int h, const Quantizer& q);
  // Adds an RGBA frame as OpenGL reads it (rows bottom-up), shown for `delay_cs`
  // hundredths of a second.
  Status add(const std::vector<std::uint8_t>& rgba, int delay_cs);
  // The whole file; the encoder is done after it.
  Result<std::string> finish();
  std::size_t frames() const { return frames_; }

 private:
  struct Gif;
  std::unique_ptr<Gif> gif_;
  const Quantizer* q_ = nullptr;
  int w_ = 0, h_ = 0;
  std::size_t frames_ = 0;
};

// The number of frames and the screen size of a GIF file's bytes (for tests and
// reports); frames -1 when the bytes are not a GIF.
struct GifInfo {
  int frames = -1;
  int width = 0, height = 0;
};
GifInfo read_gif_info(const std::string& bytes);

}  // namespace collscope::view
