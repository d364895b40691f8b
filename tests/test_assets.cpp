// What collscope ships in assets/: found by asset_path(), the window's default layout
// (assets/layout.json) under the user's settings.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "collscope/files.h"
#include "gui/view/settings.h"

using namespace collscope;
namespace fs = std::filesystem;

namespace {

// COLLSCOPE_ASSETS pointing at a folder of our own for the life of the object.
struct OwnAssets {
  fs::path dir = fs::temp_directory_path() / ("collscope-assets-" + std::to_string(::getpid()));
  OwnAssets() {
    fs::create_directories(dir / "config");
    ::setenv("COLLSCOPE_ASSETS", dir.string().c_str(), 1);
  }
  ~OwnAssets() {
    ::unsetenv("COLLSCOPE_ASSETS");
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir / name) << text; }
};

}  // namespace

TEST_CASE("assets: the shipped files are found, and COLLSCOPE_ASSETS moves them") {
  CHECK(fs::exists(asset_path("topologies")));
  CHECK(fs::exists(asset_path("palette.json")));
  CHECK(fs::exists(asset_path("layout.json")));
  OwnAssets own;
  CHECK(fs::path(asset_path("layout.json")) == own.dir / "layout.json");
}

TEST_CASE("assets: the shipped default layout is the built-in one") {
  const app::Settings built_in;
  const app::Settings shipped = app::default_settings();
  CHECK(shipped.window_w == built_in.window_w);
  CHECK(shipped.window_h == built_in.window_h);
  CHECK(shipped.zoom == doctest::Approx(built_in.zoom));
  CHECK(shipped.speed == doctest::Approx(built_in.speed));
  CHECK(shipped.show_timeline == built_in.show_timeline);
  CHECK(shipped.left_fraction == doctest::Approx(built_in.left_fraction));
  CHECK(shipped.timeline_fraction == doctest::Approx(built_in.timeline_fraction));
}

TEST_CASE("assets: a default layout of one's own, under the user's settings") {
  OwnAssets own;
  own.write("layout.json", R"({"timeline_fraction": 0.35, "show_timeline": false, "window_w": 1280, "zoom": 9})");
  const app::Settings d = app::default_settings();
  CHECK(d.timeline_fraction == doctest::Approx(0.35f));
  CHECK_FALSE(d.show_timeline);
  CHECK(d.window_w == 1280);
  CHECK(d.zoom == doctest::Approx(3.0f));         // clamped
  CHECK(d.window_h == app::Settings{}.window_h);  // not given: built in
  // No settings of the user's: the layout's defaults.
  CHECK(app::load_settings((own.dir / "config").string()).timeline_fraction == doctest::Approx(0.35f));
  // The user's settings win where they say something.
  std::ofstream(own.dir / "config" / "settings.json") << R"({"timeline_fraction": 0.1})";
  const app::Settings u = app::load_settings((own.dir / "config").string());
  CHECK(u.timeline_fraction == doctest::Approx(0.1f));
  CHECK_FALSE(u.show_timeline);
  // A corrupt default layout: the built-in values, never a failure.
  own.write("layout.json", "{\"zoom\": ");
  CHECK(app::default_settings().timeline_fraction == doctest::Approx(app::Settings{}.timeline_fraction));
}
