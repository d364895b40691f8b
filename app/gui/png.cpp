#include "gui/png.h"

#include <stb/stb_image_write.h>

#include <string>

#include "collscope/files.h"

namespace collscope::app {

Status write_png(const std::string& path, int w, int h, const std::vector<std::uint8_t>& rgba) {
  if (w <= 0 || h <= 0 || rgba.size() < static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4)
    return make_error("gui.png_io", "no pixels to write to " + path);
  // Encoded in memory, then written like every other output (collscope/files.h): a
  // unique temporary file, fsync, rename; never through a link planted at a fixed name.
  std::string png;
  const std::size_t stride = static_cast<std::size_t>(w) * 4;
  // Start at the last row with a negative stride: OpenGL's rows are bottom-up.
  const int ok = stbi_write_png_to_func(
      [](void* ctx, void* data, int size) {
        static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), static_cast<std::size_t>(size));
      },
      &png, w, h, 4, rgba.data() + stride * static_cast<std::size_t>(h - 1), -static_cast<int>(stride));
  if (!ok) return make_error("gui.png_io", "cannot encode " + path + " as PNG", "try a smaller window size");
  return write_file_atomically(path, png, "gui.png_io");
}

}  // namespace collscope::app
