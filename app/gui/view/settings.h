// What the window remembers between sessions, in the user's config directory
// ($XDG_CONFIG_HOME/collscope, else ~/.config/collscope), never the working directory.
#pragma once

#include <cstdint>
#include <string>

namespace collscope::app {

struct Settings {
  float zoom = 1.0f;
  bool presenter = false;
  float speed = 0.5f;  // steps per second
  std::string backend = "cpu";
  std::string last_file;
  int window_w = 1600, window_h = 900;
  bool show_timeline = true;
  float left_fraction = 0;         // the left panel's share of the width; 0: automatic
  float timeline_fraction = 0.2f;  // the timeline's share of the height
};

// "" when neither $XDG_CONFIG_HOME nor $HOME is set (then nothing is persisted).
std::string config_dir();

// Larger settings files are not read (a real one takes a few hundred bytes).
inline constexpr std::uint64_t kMaxSettingsBytes = 64 << 10;

// The window's default layout and pace: assets/layout.json (asset_path(), with the
// keys of settings.json) over the built-in Settings. A missing file gives the built-in
// values; a corrupt one those and a warning.
std::string layout_file();
Settings default_settings();

// The user's settings.json over default_settings(). Missing file: the defaults. Corrupt file, or one that is no regular
// file (a FIFO, a device) or over kMaxSettingsBytes: defaults and a warning on stderr, never a failure and never a
// wait.
Settings load_settings(const std::string& dir);
// Written by the one atomic writer (collscope/files.h); false with a warning on failure.
bool save_settings(const std::string& dir, const Settings& s);

}  // namespace collscope::app
