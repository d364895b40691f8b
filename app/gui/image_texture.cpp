#include "gui/image_texture.h"

#include <GLFW/glfw3.h>

#include <cstdint>

namespace collscope::app {

ImageTexture::~ImageTexture() {
  if (tex_ != 0 && glfwGetCurrentContext() != nullptr) glDeleteTextures(1, &tex_);
}

void ImageTexture::upload(int w, int h, const std::vector<ImU32>& pixels) {
  if (w <= 0 || h <= 0 || pixels.size() < static_cast<std::size_t>(w) * static_cast<std::size_t>(h)) return;
  if (tex_ == 0) {
    glGenTextures(1, &tex_);
    glBindTexture(GL_TEXTURE_2D, tex_);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  } else {
    glBindTexture(GL_TEXTURE_2D, tex_);
  }
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  // An ImU32 holds R in its low byte and A in its high byte: RGBA, 8_8_8_8_REV, on any
  // byte order.
  if (w == w_ && h == h_) {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_INT_8_8_8_8_REV, pixels.data());
  } else {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_INT_8_8_8_8_REV, pixels.data());
    w_ = w;
    h_ = h;
  }
}

ImTextureID ImageTexture::id() const { return reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(tex_)); }

}  // namespace collscope::app
