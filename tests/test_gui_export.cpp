// Films and quizzes of the window itself, rendered headless under xvfb-run: an animated
// GIF of a whole lesson (size, frames, delays, the captions in its frames), a range of
// steps, bad ranges, a video through ffmpeg or the clear error without it, and a quiz
// question on a screenshot. Skipped, saying so, when the window is not built or
// xvfb-run is missing.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gui_image.h"
#include "gui_test_helpers.h"

#ifdef COLLSCOPE_HAVE_GUI
#include "gui/view/movie.h"
#include "gui/view/panels.h"
#include "gui/view/settings.h"
#endif

namespace {

namespace fs = std::filesystem;
using test_shell::Output;

using gui_test::gui;
using gui_test::have_xvfb;
using gui_test::lesson;
using gui_test::shell;
using gui_test::slurp;

fs::path scratch(const std::string& name) { return gui_test::scratch("collscope-export-test-", name); }

#ifdef COLLSCOPE_HAVE_GUI
using gui_test::band_difference;
using gui_test::clearly_different;
using gui_test::Image;
using gui_test::load_gif;
using gui_test::load_png;
using gui_test::near_colour;

// The blocks of a GIF file, read here: its screen size, and every image's delay.
struct GifBlocks {
  int width = 0, height = 0;
  std::vector<int> delays_cs;
  bool trailer = false;
};
GifBlocks gif_blocks(const std::string& b) {
  GifBlocks g;
  auto u8 = [&](std::size_t i) { return static_cast<int>(static_cast<unsigned char>(b.at(i))); };
  auto u16 = [&](std::size_t i) { return u8(i) | u8(i + 1) << 8; };
  REQUIRE(b.compare(0, 6, "GIF89a") == 0);
  g.width = u16(6), g.height = u16(8);
  std::size_t i = 13;
  if (u8(10) & 0x80) i += 3u * (1u << ((u8(10) & 7) + 1));
  auto skip = [&](std::size_t& j) {
    while (u8(j) != 0) j += 1u + static_cast<std::size_t>(u8(j));
    ++j;
  };
  int delay = 0;
  while (i < b.size()) {
    const int tag = u8(i);
    if (tag == 0x3B) {
      g.trailer = true;
      break;
    }
    if (tag == 0x21) {
      if (u8(i + 1) == 0xF9) delay = u16(i + 4);
      i += 2;
      skip(i);
    } else {
      REQUIRE(tag == 0x2C);
      const int flags = u8(i + 9);
      i += 10;
      if (flags & 0x80) i += 3u * (1u << ((flags & 7) + 1));
      ++i;
      skip(i);
      g.delays_cs.push_back(delay);
    }
  }
  return g;
}

// An 8-rank ring all-reduce: the lesson a GIF must fit in 2 MB for.
fs::path ring8(const fs::path& dir) {
  const auto p = dir / "ring8.json";
  std::ofstream(p) << R"({"version": 1, "title": "All-reduce on a ring of 8",
    "description": "Eight ranks add their vectors with the ring algorithm, then share the sums.",
    "ranks": 8, "buffers": {"x": {"count": 16, "init": "rank_index"}},
    "program": [{"op": "allreduce", "buffer": "x", "algorithm": "ring", "caption": "every rank ends with the sum"}]})";
  return p;
}
#endif

}  // namespace

#ifdef COLLSCOPE_HAVE_GUI

TEST_CASE("gui export: an 8-rank ring all-reduce as a GIF under 2 MB, one image per planned frame, captions in them") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed (apt-get install xvfb xauth)");
    return;
  }
  const auto dir = scratch("gif");
  const auto file = ring8(dir);
  const auto out = dir / "ring8.gif";
  auto o = gui(file.string() + " --gif " + out.string(), dir);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const int steps = 14;  // 2 (8 - 1) for a ring all-reduce
  const auto plan = collscope::view::plan_movie({0, steps});
  CHECK(o.out.find("wrote " + out.string() + " (" + std::to_string(plan.size()) + " frames") != std::string::npos);
  CHECK(o.out.find("gif: frame") != std::string::npos);  // progress on the terminal
  const std::string bytes = slurp(out);
  CHECK(bytes.size() < 2'000'000);
  const GifBlocks g = gif_blocks(bytes);
  CHECK(g.trailer);
  CHECK(g.width == 1280);  // the GIF's default size
  CHECK(g.height == 720);
  REQUIRE(g.delays_cs.size() == plan.size());
  for (std::size_t i = 0; i < plan.size(); ++i) CHECK(g.delays_cs[i] == plan[i].delay_cs);

  // The caption band of the frame that holds step k is the one the window shows at step
  // k (up to the palette), and unlike the one of another step.
  const auto frames = load_gif(bytes);
  REQUIRE(frames.size() == plan.size());
  const collscope::app::Settings defaults;
  const auto panels =
      collscope::view::panel_layout(1280, 720, 1, false, true, defaults.left_fraction, defaults.timeline_fraction);
  const int x0 = static_cast<int>(panels.left) + 4, x_end = 1276;
  // The controls' row, then the position, phase, title, caption and call lines (the
  // measured time below them differs from run to run, and is left out).
  const int y0 = static_cast<int>(panels.canvas_h) + 30;
  const int y_end = std::min(static_cast<int>(panels.canvas_h + panels.caption_h) - 2, y0 + 95);
  REQUIRE(y_end - y0 > 40);
  std::vector<std::size_t> hold;
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (plan[i].hold) hold.push_back(i);
  REQUIRE(hold.size() == static_cast<std::size_t>(steps + 1));
  // Two steps of different phases (reduce-scatter, all-gather): their captions differ
  // in every word. The runs differ in their measured times, a few digits.
  std::vector<Image> shots;
  for (int k : {3, 10}) {
    const auto png = dir / ("step-" + std::to_string(k) + ".png");
    auto s = gui(file.string() + " --step " + std::to_string(k) + " --size 1280x720 --screenshot " + png.string(), dir);
    REQUIRE_MESSAGE(s.code == 0, s.out);
    shots.push_back(load_png(png));
  }
  const Image& at3 = frames[hold[3]];
  const Image& at10 = frames[hold[10]];
  const std::size_t same3 = clearly_different(at3, shots[0], x0, x_end, y0, y_end);
  const std::size_t same10 = clearly_different(at10, shots[1], x0, x_end, y0, y_end);
  const std::size_t other = clearly_different(at3, shots[1], x0, x_end, y0, y_end);
  MESSAGE("caption band: " << same3 << " and " << same10 << " pixels differ from the window's own, " << other
                           << " from the other step's");
  CHECK(band_difference(at3, shots[0], x0, x_end, y0, y_end) < 2.0);
  CHECK(other > 2000);
  CHECK(same3 * 8 < other);
  CHECK(same10 * 8 < other);
  // Text in the band: bright pixels, in numbers.
  std::size_t bright = 0;
  for (int y = y0; y < y_end; ++y)
    for (int x = x0; x < x_end; ++x)
      bright += at3.px[(static_cast<std::size_t>(y) * 1280 + static_cast<std::size_t>(x)) * 4] > 200;
  CHECK(bright > 2000);
}

TEST_CASE("gui export: --steps A..B films that range, a bad range is one clear error and writes nothing") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("range");
  const auto whole = dir / "whole.gif", part = dir / "part.gif";
  const std::string name = lesson("00-allreduce-ring.json");  // 6 steps
  REQUIRE(gui(name + " --size 800x500 --gif " + whole.string(), dir).code == 0);
  auto o = gui(name + " --size 800x500 --steps 2..4 --gif " + part.string(), dir);
  REQUIRE_MESSAGE(o.code == 0, o.out);
  const auto plan = collscope::view::plan_movie({2, 4});
  const GifBlocks g = gif_blocks(slurp(part));
  CHECK(g.width == 800);
  CHECK(g.delays_cs.size() == plan.size());
  // Its first frame is the whole film's hold frame of step 2, its last that of step 4.
  const auto all = load_gif(slurp(whole)), some = load_gif(slurp(part));
  const auto full = collscope::view::plan_movie({0, 6});
  auto hold_of = [&](int k) {
    for (std::size_t i = 0; i < full.size(); ++i)
      if (full[i].hold && full[i].applied == k) return i;
    return full.size();
  };
  CHECK(band_difference(some.front(), all[hold_of(2)], 0, 800, 0, 500) < 1.5);
  CHECK(band_difference(some.front(), all[hold_of(0)], 0, 800, 0, 500) > 2.0);
  CHECK(band_difference(some.back(), all[hold_of(4)], 0, 800, 0, 500) < 1.5);

  for (const char* bad : {"4..2", "0..7", "two..three", "3"}) {
    CAPTURE(bad);
    const auto out = dir / "bad.gif";
    auto b = gui(name + " --steps " + std::string(bad) + " --gif " + out.string(), dir);
    CHECK(b.code == 2);
    CHECK(b.out.find("error[gui.bad_steps]") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
  }
  auto alone = gui(name + " --steps 1..2 --screenshot " + (dir / "x.png").string(), dir);
  CHECK(alone.code == 2);
  CHECK(alone.out.find("--steps only applies to --gif and --video") != std::string::npos);
  auto both = gui(name + " --gif " + part.string() + " --video " + (dir / "v.mp4").string(), dir);
  CHECK(both.code == 2);
}

TEST_CASE("gui export: a video says clearly when ffmpeg is absent, and pipes the frames to it when present") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("video");
  const std::string name = lesson("00-allreduce-ring.json");
  // ffmpeg absent: a PATH with nothing on it.
  const auto empty = dir / "empty";
  fs::create_directories(empty);
  const auto none = dir / "none.mp4";
  auto o = gui(name + " --video " + none.string(), dir, "PATH=" + empty.string());
  CHECK(o.code == 2);
  CHECK(o.out.find("error[gui.no_ffmpeg]") != std::string::npos);
  CHECK(o.out.find("--gif") != std::string::npos);
  CHECK_FALSE(fs::exists(none));
  auto fmt = gui(name + " --video " + (dir / "v.avi").string(), dir);
  CHECK(fmt.code == 2);
  CHECK(fmt.out.find("error[gui.video_format]") != std::string::npos);

  // A stand-in ffmpeg that passes its input through: the file is every frame, raw.
  const auto bin = dir / "bin";
  fs::create_directories(bin);
  std::ofstream(bin / "ffmpeg") << "#!/bin/sh\nexec cat\n";
  fs::permissions(bin / "ffmpeg", fs::perms::owner_all);
  const auto raw = dir / "raw.mp4";
  auto r = gui(name + " --size 640x400 --steps 0..2 --video " + raw.string(), dir,
               "PATH=" + bin.string() + ":" + std::string(std::getenv("PATH")));
  REQUIRE_MESSAGE(r.code == 0, r.out);
  std::size_t sent = 0;
  for (const auto& f : collscope::view::plan_movie({0, 2}))
    sent += static_cast<std::size_t>(std::max(1L, std::lround(f.delay_cs * 10 / 100.0)));
  CHECK(fs::file_size(raw) == sent * 640 * 400 * 4);

  // The real ffmpeg, where it is installed.
  if (std::system("command -v ffmpeg >/dev/null 2>&1") != 0) {
    MESSAGE("skipped the real video: ffmpeg is not installed (apt-get install ffmpeg)");
    return;
  }
  const auto mp4 = dir / "lesson.mp4";
  auto v = gui(name + " --size 640x400 --steps 0..2 --video " + mp4.string(), dir);
  REQUIRE_MESSAGE(v.code == 0, v.out);
  const std::string bytes = slurp(mp4);
  REQUIRE(bytes.size() > 1000);
  CHECK(bytes.compare(4, 4, "ftyp") == 0);  // an MP4 file starts with its file-type box
}

TEST_CASE("gui export: a GIF interrupted while it is filmed leaves nothing at its name") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("interrupt");
  const auto file = dir / "ring16.json";
  std::ofstream(file) << R"({"version": 1, "title": "A long ring", "description": "Sixteen ranks, thirty steps.",
    "ranks": 16, "buffers": {"x": {"count": 32, "init": "rank_index"}},
    "program": [{"op": "allreduce", "buffer": "x", "algorithm": "ring", "caption": "the sum everywhere"}]})";
  const auto out = dir / "long.gif";
  // SIGTERM a second into the film (of some 150 frames): exit 143, no GIF, no temporary file. (Not SIGINT:
  // a shell starts background jobs with it ignored, and collscope keeps an ignored signal ignored.)
  auto o = shell("XDG_CONFIG_HOME=" + dir.string() + " xvfb-run -a sh -c '" + std::string(COLLSCOPE_BINARY) + " gui " +
                 file.string() + " --size 1600x900 --gif " + out.string() +
                 " & pid=$!; sleep 1; kill -TERM $pid; wait $pid; echo exit=$?'");
  CHECK_MESSAGE(o.out.find("exit=143") != std::string::npos, o.out);
  CHECK_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("gui export: a quiz question on a screenshot, over a canvas without the step's arrows") {
  if (!have_xvfb()) {
    MESSAGE("skipped: xvfb-run is not installed");
    return;
  }
  const auto dir = scratch("quiz");
  const std::string name = lesson("30-quiz-allreduce-ring.json");
  const auto plain = dir / "plain.png", quiz = dir / "quiz.png";
  auto a = gui(name + " --step 1 --size 1280x720 --screenshot " + plain.string(), dir);
  REQUIRE_MESSAGE(a.code == 0, a.out);
  auto b = gui(name + " --quiz --step 1 --size 1280x720 --screenshot " + quiz.string(), dir);
  REQUIRE_MESSAGE(b.code == 0, b.out);
  const Image p = load_png(plain), q = load_png(quiz);
  // The quiz window's own colour (quiz_panel.h: 0.20, 0.12, 0.34 over the dark canvas).
  CHECK(near_colour(p, 51, 31, 87, 8) < 50);
  CHECK(near_colour(q, 51, 31, 87, 8) > 20000);
  // Reductions' orange arrows (style.h: 1.0, 0.45, 0.25) show the answer: gone while it is asked.
  const std::size_t arrows_plain = near_colour(p, 255, 115, 64, 20), arrows_quiz = near_colour(q, 255, 115, 64, 20);
  CHECK(arrows_plain > 500);
  CHECK(arrows_quiz * 4 < arrows_plain);
}

#endif
