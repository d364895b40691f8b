// The window itself, rendered headless under xvfb-run: screenshots of several lessons
// at step 0 and a middle step, read back and checked; presenter mode; error exits.
// Skipped, saying so, when the window is not built or xvfb-run is missing.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gui_image.h"
#include "gui_test_helpers.h"

#ifdef COLLSCOPE_HAVE_GUI
#include "gui/view/palette.h"
#endif

namespace {

namespace fs = std::filesystem;

using test_shell::Output;

using gui_test::gui;
using gui_test::have_xvfb;
using gui_test::lesson;
using gui_test::shell;

fs::path scratch(const std::string& name) { return gui_test::scratch("collscope-gui-test-", name); }

#ifdef COLLSCOPE_HAVE_GUI
using gui_test::colours;
using gui_test::differing_pixels;
using gui_test::Image;
using gui_test::load_png;

// Pixels of the complete cells' gold (within 2 of it in every channel).
std::size_t gold_pixels(const Image& img) {
  const collscope::view::Rgba gold = collscope::view::kCompleteCell;
  return gui_test::near_colour(img, static_cast<int>(gold.r * 255 + 0.5f), static_cast<int>(gold.g * 255 + 0.5f),
                               static_cast<int>(gold.b * 255 + 0.5f), 2);
}
#endif

}  // namespace

#ifdef COLLSCOPE_HAVE_GUI

TEST_CASE("gui window: screenshots of lessons at step 0 and a middle step") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed (apt-get install xvfb xauth)");
    return;
  }
  const auto dir = scratch("lessons");
  for (const char* name : {"00-allreduce-ring.json", "01-broadcast.json", "03-scatter.json", "07-alltoall.json"}) {
    CAPTURE(name);
    const auto a = dir / (std::string(name) + "-0.png"), b = dir / (std::string(name) + "-mid.png");
    // The middle step, from the lesson's own report.
    auto run = shell(std::string(COLLSCOPE_BINARY) + " run " + lesson(name) + " --json 2>/dev/null");
    REQUIRE(run.code == 0);
    const int steps = nlohmann::json::parse(run.out)["steps"].get<int>();
    REQUIRE(steps >= 1);
    const int mid = std::max(1, steps / 2);
    auto o0 = gui(lesson(name) + " --step 0 --size 1024x640 --screenshot " + a.string(), dir);
    REQUIRE_MESSAGE(o0.code == 0, o0.out);
    auto o1 = gui(lesson(name) + " --step " + std::to_string(mid) + " --size 1024x640 --screenshot " + b.string(), dir);
    REQUIRE_MESSAGE(o1.code == 0, o1.out);
    const Image i0 = load_png(a), i1 = load_png(b);
    CHECK(i0.w == 1024);
    CHECK(i0.h == 640);
    CHECK(colours(i0) > 30);                // not blank: cells, text, arrows in many colours
    CHECK(differing_pixels(i0, i1) > 500);  // the two steps look different
  }
  CHECK_FALSE(fs::exists(fs::path(COLLSCOPE_SOURCE_DIR) / "imgui.ini"));  // never in the working directory
}

TEST_CASE("gui window: the Export panel's slides and trace, end to end") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("export");
  const std::string name = "02-reduce.json";
  auto run = shell(std::string(COLLSCOPE_BINARY) + " run " + lesson(name) + " --json 2>/dev/null");
  REQUIRE(run.code == 0);
  const auto report = nlohmann::json::parse(run.out);
  const int steps = report["steps"].get<int>();
  const auto slides = dir / "slides";
  auto o = gui(lesson(name) + " --size 800x500 --slides " + slides.string(), dir);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  CHECK(o.out.find("wrote " + std::to_string(steps + 1) + " PNGs") != std::string::npos);
  // One PNG per position, 0..steps, nothing else in the folder.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(slides)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() == static_cast<std::size_t>(steps + 1));
  std::vector<Image> images;
  for (int k = 0; k <= steps; ++k) {
    char expect[32];
    std::snprintf(expect, sizeof expect, "step-%03d.png", k);
    CHECK(names[static_cast<std::size_t>(k)] == expect);
    images.push_back(load_png(slides / expect));
    CHECK(images.back().w == 800);
    CHECK(images.back().h == 500);
    CHECK(colours(images.back()) > 30);
  }
  for (int k = 1; k <= steps; ++k) {
    CAPTURE(k);
    CHECK(differing_pixels(images[static_cast<std::size_t>(k - 1)], images[static_cast<std::size_t>(k)]) > 500);
  }

  const auto trace = dir / "trace.json";
  auto t = gui(lesson(name) + " --export-trace " + trace.string(), dir);
  REQUIRE_MESSAGE(t.code == 0, t.out);
  std::FILE* f = std::fopen(trace.string().c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["distributedInfo"]["world_size"] == report["ranks"]);
  CHECK(j["traceEvents"].size() > 0);

  // A folder that cannot be made: exit 2 with the export error, no PNG anywhere.
  const auto blocker = dir / "a-file";
  std::FILE* b = std::fopen(blocker.string().c_str(), "w");
  REQUIRE(b != nullptr);
  std::fclose(b);
  auto bad = gui(lesson(name) + " --slides " + (blocker / "sub").string(), dir);
  CHECK(bad.code == 2);
  CHECK(bad.out.find("error[gui.export]") != std::string::npos);
  CHECK_FALSE(fs::exists(blocker / "sub"));
  auto both = gui(lesson(name) + " --slides " + slides.string() + " --export-trace " + trace.string(), dir);
  CHECK(both.code == 2);
}

TEST_CASE("gui window: the what-if window plots every algorithm and marks the crossovers") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("what-if");
  const auto plain = dir / "plain.png", open = dir / "what-if.png";
  auto o0 = gui(lesson("00-allreduce-ring.json") + " --step 1 --size 1200x800 --screenshot " + plain.string(), dir);
  REQUIRE_MESSAGE(o0.code == 0, o0.out);
  auto o1 =
      gui(lesson("00-allreduce-ring.json") + " --step 1 --size 1200x800 --what-if --screenshot " + open.string(), dir);
  REQUIRE_MESSAGE(o1.code == 0, o1.out);
  const Image a = load_png(plain), b = load_png(open);
  CHECK(differing_pixels(a, b) > 20000);  // a window of plot over the canvas
  // The fifth algorithm's colour (rank 4's, which a 4-rank lesson never shows) is its
  // legend square and its curve: many pixels with the window open, none without.
  const collscope::view::Rgba c = collscope::view::rank_colour(4);
  auto count = [&](const Image& img) {
    const int r = static_cast<int>(c.r * 255 + 0.5f), g = static_cast<int>(c.g * 255 + 0.5f),
              bl = static_cast<int>(c.b * 255 + 0.5f);
    std::size_t n = 0;
    for (std::size_t i = 0; i + 3 < img.px.size(); i += 4)
      if (std::abs(img.px[i] - r) < 3 && std::abs(img.px[i + 1] - g) < 3 && std::abs(img.px[i + 2] - bl) < 3) ++n;
    return n;
  };
  CHECK(count(a) < 10);
  CHECK(count(b) > 200);
}

TEST_CASE("gui window: presenter mode renders larger text than the normal mode") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("presenter");
  const auto n = dir / "normal.png", p = dir / "presenter.png";
  REQUIRE(gui(lesson("00-allreduce-ring.json") + " --step 1 --screenshot " + n.string(), dir).code == 0);
  auto o = gui(lesson("00-allreduce-ring.json") + " --step 1 --presenter --screenshot " + p.string(), dir);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const Image a = load_png(n), b = load_png(p);
  CHECK(colours(b) > 30);
  CHECK(differing_pixels(a, b) > 10000);
  // Presenter mode is black behind everything: far more pure black pixels.
  auto black = [](const Image& img) {
    std::size_t k = 0;
    for (std::size_t i = 0; i + 3 < img.px.size(); i += 4)
      k += img.px[i] == 0 && img.px[i + 1] == 0 && img.px[i + 2] == 0;
    return k;
  };
  CHECK(black(b) > black(a));
}

TEST_CASE("gui window: --step says the window's step, and two calls end gold with colours counted across calls") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("numbering");
  const auto a = dir / "ring.png", b = dir / "halves.png";
  auto o = gui(lesson("00-allreduce-ring.json") + " --step 2 --size 1024x640 --screenshot " + a.string(), dir);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  // The caption of the window says "step 3 of 6" for two steps applied; so does the line.
  CHECK_MESSAGE(o.out.find("2 steps applied: step 3 of 6)") != std::string::npos, o.out);
  // A reduce-scatter then an all-gather (lesson 11): at the end every cell holds every
  // rank's input, and the window shows them gold although the last call only copied.
  auto e = gui(lesson("11-allreduce-in-two-halves.json") + " --step 6 --size 1024x640 --screenshot " + b.string(), dir);
  REQUIRE_MESSAGE(e.code == 0, e.out);
  CHECK_MESSAGE(e.out.find("6 steps applied: done: all 6 steps ran") != std::string::npos, e.out);
  const Image img = load_png(b);
  CHECK(gold_pixels(img) > 2000);  // 4 ranks x 8 gold cells
}

TEST_CASE("gui window: 256 ranks open as the matrix, its gold spreads from the diagonal in the all-gather") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("matrix");
  const std::string name = "31-matrix-ring-256.json";
  std::vector<std::size_t> gold;
  for (const int step : {100, 300, 510}) {
    const auto png = dir / ("step-" + std::to_string(step) + ".png");
    auto o =
        gui(lesson(name) + " --step " + std::to_string(step) + " --size 1024x640 --screenshot " + png.string(), dir);
    REQUIRE_MESSAGE(o.code == 0, o.out);
    const Image img = load_png(png);
    CHECK(colours(img) > 30);
    gold.push_back(gold_pixels(img));
  }
  // In the reduce-scatter nothing is complete yet; half-way through the all-gather a wide
  // gold band; at the end the whole matrix (about 600 x 300 pixels at this size, less the
  // gaps between cells) is gold.
  CHECK(gold[0] < 200);  // the legend's chip
  CHECK(gold[1] > 15000);
  CHECK(gold[2] > 100000);
  CHECK(gold[2] > gold[1] * 3 / 2);
  // The same position as boxes looks different, and M's flags exclude each other.
  const auto boxes = dir / "boxes.png";
  auto b = gui(lesson(name) + " --step 510 --size 1024x640 --boxes --screenshot " + boxes.string(), dir);
  REQUIRE_MESSAGE(b.code == 0, b.out);
  CHECK(gold_pixels(load_png(boxes)) < gold[2] / 2);
  // A four-rank lesson as the matrix, when asked: 4 rows of 4 chunks, nothing gold at the start.
  const auto small = dir / "small.png";
  auto m = gui(lesson("00-allreduce-ring.json") + " --matrix --size 1024x640 --screenshot " + small.string(), dir);
  REQUIRE_MESSAGE(m.code == 0, m.out);
  CHECK(gold_pixels(load_png(small)) < 200);
  CHECK(differing_pixels(load_png(small), load_png(boxes)) > 10000);
  auto both = gui(lesson(name) + " --matrix --boxes --screenshot " + (dir / "never.png").string(), dir);
  CHECK(both.code == 2);
  CHECK(both.out.find("error[cli.usage]") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "never.png"));
}

TEST_CASE("gui window: bad input exits 2 in the error style, no output file") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("bad");
  const auto out = dir / "never.png";
  auto o = gui("/no/such/lesson.json --screenshot " + out.string(), dir);
  CHECK(o.code == 2);
  CHECK(o.out.find("error[scenario.io]") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  auto s = gui(lesson("00-allreduce-ring.json") + " --step 999 --screenshot " + out.string(), dir);
  CHECK(s.code == 2);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("gui window: without a display it says so and exits 3") {
  const auto dir = scratch("nodisplay");
  auto o = shell("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(COLLSCOPE_BINARY) + " gui " +
                 lesson("00-allreduce-ring.json") + " --screenshot " + (dir / "x.png").string());
  CHECK(o.code == 3);
  CHECK(o.out.find("error[gui.no_display]") != std::string::npos);
}

TEST_CASE("gui window: --topology, --nodes and --ranks-per-node place the lesson as run's flags do") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("place");
  const auto file = dir / "hier.json";
  std::ofstream(file) << R"({"version": 1, "ranks": 8, "buffers": {"x": {"count": 16, "init": "rank_index"}},
    "program": [{"op": "allreduce", "buffer": "x", "algorithm": "hierarchical"}]})";
  // The trace the window exports carries every step's caption, which names the nodes.
  auto captions = [&](const std::string& flags) {
    const auto trace = dir / "trace.json";
    auto o = gui(file.string() + " " + flags + " --export-trace " + trace.string(), dir);
    REQUIRE_MESSAGE(o.code == 0, flags << ": " << o.out);
    return gui_test::slurp(trace);
  };
  // One node: the ring itself.
  const std::string one_node = captions("");
  CHECK(one_node.find("in each of") == std::string::npos);
  CHECK(one_node.find("every rank sends a block of partial sums to its right neighbour") != std::string::npos);
  CHECK(captions("--ranks-per-node 4").find("in each of 2 nodes of 4 ranks") != std::string::npos);
  CHECK(captions("--topology dgx-h100 --nodes 4").find("in each of 4 nodes of 2 ranks") != std::string::npos);
  // The "what if" window opens on that topology.
  const auto shot = dir / "what-if.png";
  auto o = gui(file.string() + " --topology dgx-h100 --nodes 2 --what-if --screenshot " + shot.string(), dir);
  CHECK_MESSAGE(o.code == 0, o.out);
  CHECK(fs::exists(shot));
  // Mistakes are refused before a window opens.
  for (const char* bad : {"--topology dgx-h10", "--nodes 2", "--ranks-per-node 0", "--topology dgx-h100 --nodes 0"}) {
    CAPTURE(bad);
    auto e = gui(file.string() + " " + bad + " --screenshot " + (dir / "no.png").string(), dir);
    CHECK(e.code == 2);
    CHECK(e.out.find("error[") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "no.png"));
  }
}

#else

TEST_CASE("gui window: not built, `collscope gui` says so and exits 2") {
  auto o = shell(std::string(COLLSCOPE_BINARY) + " gui");
  CHECK(o.code == 2);
  CHECK(o.out.find("error[cli.gui_unavailable]") != std::string::npos);
}

#endif

TEST_CASE("gui window: with no display and no arguments the help is printed") {
  auto o = shell("env -u DISPLAY -u WAYLAND_DISPLAY " + std::string(COLLSCOPE_BINARY));
  CHECK(o.code == 0);
  CHECK(o.out.find("run") != std::string::npos);
  CHECK(o.out.find("gui") != std::string::npos);
}
