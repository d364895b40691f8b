// Writing frames as PNG files (stb_image_write from libstb).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

namespace collscope::app {

// RGBA pixels as OpenGL reads them (bottom row first); written top row first.
// Written by the one atomic writer (collscope/files.h): a failed write leaves no file,
// and a device, FIFO or folder at the path is refused. Error id "gui.png_io".
Status write_png(const std::string& path, int w, int h, const std::vector<std::uint8_t>& rgba_bottom_up);

}  // namespace collscope::app
