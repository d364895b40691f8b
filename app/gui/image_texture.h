// An RGBA image in an OpenGL texture that ImGui draws with AddImage: one quad for what
// would otherwise be thousands of rectangles (the cells of 64 ranks, a timeline of
// thousands of transfers). Sampling is nearest-neighbour, so texels stay crisp blocks.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <vector>

namespace collscope::app {

class ImageTexture {
 public:
  ImageTexture() = default;
  ~ImageTexture();
  ImageTexture(const ImageTexture&) = delete;
  ImageTexture& operator=(const ImageTexture&) = delete;

  // Uploads a w x h image, row by row; pixels are ImU32 colours (IM_COL32). Needs the
  // window's OpenGL context to be current, as it is while a frame is built.
  void upload(int w, int h, const std::vector<ImU32>& pixels);
  ImTextureID id() const;
  int width() const { return w_; }
  int height() const { return h_; }

 private:
  unsigned tex_ = 0;
  int w_ = 0, h_ = 0;
};

}  // namespace collscope::app
