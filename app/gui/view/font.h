// Where the window's text font comes from, looked up when the window opens rather
// than fixed when collscope is built, so that a binary built on one machine finds the
// font on another (a different distribution keeps DejaVu Sans elsewhere).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace collscope::view {

struct FontChoice {
  std::string path;    // a readable TrueType file; empty: use ImGui's built-in font
  std::string source;  // "COLLSCOPE_FONT", "fontconfig", "packaged path" or "none"
  std::string note;    // why an earlier candidate was passed over ("" when none was)
};

// The places where distributions package DejaVu Sans (Debian's fonts-dejavu-core first).
const std::vector<std::string>& packaged_font_paths();

// In order: $COLLSCOPE_FONT (a path; ignored with a note when it is not a readable
// regular file), fontconfig's match for "DejaVu Sans" when collscope was built with
// fontconfig, then the packaged paths. `getenv` is a parameter so tests can choose.
FontChoice find_font(const std::function<const char*(const char*)>& getenv_fn);

}  // namespace collscope::view
