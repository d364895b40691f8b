// The window's font is looked up at run time: $COLLSCOPE_FONT, fontconfig, then the
// paths distributions package DejaVu Sans in.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "gui/view/font.h"

using namespace collscope;

namespace {

struct FakeEnv {
  std::map<std::string, std::string> vars;
  const char* operator()(const char* name) const {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  }
};

std::string temp_dir() {
  auto d = std::filesystem::temp_directory_path() / ("collscope-font-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d.string();
}

}  // namespace

TEST_CASE("gui font: COLLSCOPE_FONT names the file when it is a readable font file") {
  const std::string dir = temp_dir();
  const std::string file = dir + "/mine.ttf";
  std::ofstream(file) << "not really a font, but a regular non-empty file";
  FakeEnv env;
  env.vars["COLLSCOPE_FONT"] = file;
  auto c = view::find_font(env);
  CHECK(c.path == file);
  CHECK(c.source == "COLLSCOPE_FONT");
  CHECK(c.note.empty());

  // A folder, a missing file and an empty file are passed over with a note; the
  // lookup then goes on as if the variable were unset.
  for (const std::string bad : {dir, dir + "/missing.ttf", dir + "/empty.ttf"}) {
    if (bad.find("empty") != std::string::npos) std::ofstream{bad};
    env.vars["COLLSCOPE_FONT"] = bad;
    auto d = view::find_font(env);
    CAPTURE(bad);
    CHECK(d.path != bad);
    CHECK(d.source != "COLLSCOPE_FONT");
    CHECK(d.note.find(bad) != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("gui font: without COLLSCOPE_FONT a system font is found, or none is claimed") {
  auto c = view::find_font(FakeEnv{});
  CHECK(c.note.empty());
  if (c.source == "none") {
    CHECK(c.path.empty());
    // Then none of the packaged paths holds a font either.
    for (const auto& p : view::packaged_font_paths()) CHECK_FALSE(std::filesystem::is_regular_file(p));
  } else {
    CHECK((c.source == "fontconfig" || c.source == "packaged path"));
    CHECK(std::filesystem::is_regular_file(c.path));
    CHECK(std::filesystem::file_size(c.path) > 0);
  }
  // Debian's fonts-dejavu-core is the first packaged path: the one the README names.
  CHECK(view::packaged_font_paths().front() == "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
}
