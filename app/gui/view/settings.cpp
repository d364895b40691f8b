#include "gui/view/settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "collscope/files.h"
#include "gui/view/panels.h"

namespace collscope::app {

namespace fs = std::filesystem;

std::string config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return (fs::path(x) / "collscope").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".config" / "collscope").string();
  return "";
}

namespace {

// The keys of `text` (a JSON object) over `base`, each clamped to its range; throws on
// anything that is not such an object.
Settings overlay(const std::string& text, const Settings& base) {
  const auto j = nlohmann::json::parse(text);
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  Settings d = base;
  d.zoom = std::clamp(j.value("zoom", d.zoom), 0.5f, 3.0f);
  d.presenter = j.value("presenter", d.presenter);
  d.speed = std::clamp(j.value("speed", d.speed), 0.05f, 20.0f);
  d.backend = j.value("backend", d.backend);
  d.last_file = j.value("last_file", d.last_file);
  d.window_w = std::clamp(j.value("window_w", d.window_w), 320, 16384);
  d.window_h = std::clamp(j.value("window_h", d.window_h), 240, 16384);
  d.show_timeline = j.value("show_timeline", d.show_timeline);
  d.left_fraction = j.value("left_fraction", d.left_fraction);
  if (d.left_fraction != 0)
    d.left_fraction = std::clamp(d.left_fraction, view::kMinLeftFraction, view::kMaxLeftFraction);
  d.timeline_fraction = std::clamp(j.value("timeline_fraction", d.timeline_fraction), view::kMinTimelineFraction,
                                   view::kMaxTimelineFraction);
  return d;
}

// `path` over `base`: a missing file gives `base` silently; an unreadable or corrupt
// one gives `base` and a warning that ends with `what_then`.
Settings read_over(const fs::path& path, const Settings& base, const InputKind& kind, const std::string& what_then) {
  // The one bounded reader: a FIFO or a device here never blocks the window's start.
  auto text = read_input_file(path.string(), kind);
  if (!text) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(path, ec)))
      std::cerr << "warning: ignoring the " << kind.noun << " " << path.string() << " (" << text.error().message
                << "); " << what_then << "\n";
    return base;
  }
  try {
    return overlay(*text, base);
  } catch (const std::exception& e) {
    std::cerr << "warning: ignoring the " << kind.noun << " " << path.string() << " (" << e.what() << "); " << what_then
              << "\n";
  }
  return base;
}

}  // namespace

std::string layout_file() { return asset_path("layout.json"); }

Settings default_settings() {
  static const InputKind kind{"gui.settings_io", "default layout", kMaxSettingsBytes, "", "shorten it"};
  return read_over(layout_file(), Settings{}, kind, "the built-in layout is used");
}

Settings load_settings(const std::string& dir) {
  const Settings base = default_settings();
  if (dir.empty()) return base;
  static const InputKind kind{"gui.settings_io", "settings file", kMaxSettingsBytes, "", "delete it"};
  return read_over(fs::path(dir) / "settings.json", base, kind,
                   "the defaults are used and the file is rewritten on exit");
}

bool save_settings(const std::string& dir, const Settings& s) {
  if (dir.empty()) return false;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path path = fs::path(dir) / "settings.json";
  nlohmann::json j{{"zoom", s.zoom},
                   {"presenter", s.presenter},
                   {"speed", s.speed},
                   {"backend", s.backend},
                   {"last_file", s.last_file},
                   {"window_w", s.window_w},
                   {"window_h", s.window_h},
                   {"show_timeline", s.show_timeline},
                   {"left_fraction", s.left_fraction},
                   {"timeline_fraction", s.timeline_fraction}};
  if (auto st = write_file_atomically(path.string(), j.dump(2) + "\n", "gui.settings_io"); !st) {
    std::cerr << "warning: settings not saved: " << st.error().message << "\n";
    return false;
  }
  return true;
}

}  // namespace collscope::app
