// The window's palette (app/gui/view/palette.h): the shipped assets/palette.json, a
// palette of one's own, and the errors of a bad palette file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gui/view/palette.h"

using namespace collscope;
using namespace collscope::view;
namespace fs = std::filesystem;

namespace {

bool near(Rgba a, Rgba b, float tol) {
  return std::fabs(a.r - b.r) <= tol && std::fabs(a.g - b.g) <= tol && std::fabs(a.b - b.b) <= tol;
}

// A palette file in a folder of its own, removed at the end.
struct PaletteFile {
  fs::path dir = fs::temp_directory_path() / ("collscope-palette-" + std::to_string(::getpid()));
  fs::path path = dir / "palette.json";
  explicit PaletteFile(const std::string& text) {
    fs::create_directories(dir);
    std::ofstream(path) << text;
  }
  ~PaletteFile() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// Puts the built-in palette back whatever a test did.
struct BuiltIn {
  ~BuiltIn() { use_palette(Palette{}); }
};

}  // namespace

TEST_CASE("palette: the shipped file gives the built-in look, and ranks beyond it still get colours") {
  BuiltIn restore;
  auto p = read_palette(std::string(COLLSCOPE_SOURCE_DIR) + "/assets/palette.json");
  REQUIRE_MESSAGE(p, (p ? "" : p.error().format()));
  REQUIRE(p->ranks.size() >= 8);
  for (std::size_t r = 0; r < p->ranks.size(); ++r)
    CHECK_MESSAGE(near(p->ranks[r], walk_colour(static_cast<std::int32_t>(r)), 0.6f / 255), "rank ", r);
  CHECK(near(p->empty, kEmptyCell, 0.6f / 255));
  CHECK(near(p->complete, kCompleteCell, 0.6f / 255));
  const auto listed = static_cast<std::int32_t>(p->ranks.size());
  use_palette(*p);
  CHECK(near(rank_colour(listed), walk_colour(listed), 0));
  CHECK(near(rank_colour(listed + 100), walk_colour(listed + 100), 0));
}

TEST_CASE("palette: a palette of one's own colours ranks, partial and complete cells") {
  BuiltIn restore;
  PaletteFile f(R"({"ranks": ["#000000", "#FF0000", "#00ff00"], "empty": "#102030", "complete": "#ffffff"})");
  auto p = read_palette(f.path.string());
  REQUIRE_MESSAGE(p, (p ? "" : p.error().format()));
  use_palette(*p);
  CHECK(near(rank_colour(1), Rgba{1, 0, 0, 1}, 0));
  CHECK(near(rank_colour(2), Rgba{0, 1, 0, 1}, 0));
  CHECK(near(rank_colour(3), walk_colour(3), 0));  // beyond the list: the walk
  CHECK(near(colour_of({1}, 4).fill, Rgba{1, 0, 0, 1}, 0));
  CHECK(near(colour_of({0, 1, 2, 3}, 4).fill, Rgba{1, 1, 1, 1}, 0));
  CHECK(near(colour_of({}, 4).fill, Rgba{0x10 / 255.0f, 0x20 / 255.0f, 0x30 / 255.0f, 1}, 0));
  const Rgba mix = colour_of({1, 2}, 4).fill;  // a mix of red and green
  CHECK(mix.r > mix.b);
  CHECK(mix.g > mix.b);
}

TEST_CASE("palette: a bad file is one clear error with its place") {
  struct Case {
    const char* text;
    const char* says;
    const char* pointer;
    int line;
  };
  const Case cases[] = {
      {"{\"ranks\": [\"#12345\"]}", "is not \"#rrggbb\"", "/ranks/0", 1},
      {"{\n  \"ranks\": [\"#123456\", 7]}", "number 7", "/ranks/1", 2},
      {"{\"rank\": []}", "unknown key \"rank\"", "/rank", 1},
      {"{\"ranks\": \"#123456\"}", "not an array", "/ranks", 1},
      {"[1, 2]", "not an object", "", 1},
      {"{\"empty\": \"red\"}", "\"red\" is not", "/empty", 1},
  };
  for (const Case& c : cases) {
    PaletteFile f(c.text);
    auto p = read_palette(f.path.string());
    REQUIRE_FALSE(p);
    CHECK(p.error().id == "gui.palette");
    CHECK(p.error().exit == ExitCode::bad_input);
    CHECK_MESSAGE(p.error().message.find(c.says) != std::string::npos, p.error().format());
    CHECK(p.error().where.file == f.path.string());
    CHECK(p.error().where.pointer == c.pointer);
    CHECK(p.error().where.line == c.line);
    CHECK_FALSE(p.error().hint.empty());
  }
  PaletteFile broken("{\"ranks\": [");
  auto p = read_palette(broken.path.string());
  REQUIRE_FALSE(p);
  CHECK(p.error().id == "gui.palette");
  CHECK(p.error().where.line == 1);
}

TEST_CASE("palette: COLLSCOPE_PALETTE names the file, a missing one is an error") {
  BuiltIn restore;
  PaletteFile f(R"({"ranks": ["#ff0000"]})");
  ::setenv("COLLSCOPE_PALETTE", f.path.string().c_str(), 1);
  CHECK(palette_file() == f.path.string());
  REQUIRE(load_palette());
  CHECK(near(rank_colour(0), Rgba{1, 0, 0, 1}, 0));
  ::setenv("COLLSCOPE_PALETTE", (f.dir / "none.json").string().c_str(), 1);
  auto st = load_palette();
  ::unsetenv("COLLSCOPE_PALETTE");
  REQUIRE_FALSE(st);
  CHECK(st.error().id == "gui.palette");
}
