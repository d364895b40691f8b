#include "gui/png.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stb/stb_image_write.h>

namespace collscope::app {

Status write_png(const std::string& path, int w, int h, const std::vector<std::uint8_t>& rgba) {
  if (w <= 0 || h <= 0 || rgba.size() < static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4)
    return make_error("gui.png_io", "no pixels to write to " + path);
  const std::string tmp = path + ".tmp";
  const std::size_t stride = static_cast<std::size_t>(w) * 4;
  // Start at the last row with a negative stride: OpenGL's rows are bottom-up.
  const int ok = stbi_write_png(tmp.c_str(), w, h, 4, rgba.data() + stride * static_cast<std::size_t>(h - 1),
                                -static_cast<int>(stride));
  std::error_code ec;
  if (!ok) {
    const int err = errno;
    std::filesystem::remove(tmp, ec);
    return make_error("gui.png_io", "cannot write " + path + ": " + std::strerror(err),
                      "check that the folder exists and is writable");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return make_error("gui.png_io", "cannot write " + path + ": " + ec.message());
  }
  return ok_status();
}

}  // namespace collscope::app
