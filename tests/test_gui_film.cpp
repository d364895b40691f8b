// Films of a lesson without a window: the range of --steps, the frames and their
// delays, a GIF written from synthetic frames and read back block by block, and a video
// through a stand-in ffmpeg (a script on PATH that records what it was given), or the
// clear error when there is none.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gui/view/film.h"
#include "gui/view/movie.h"
#include "gui/view/video.h"
#include "gui_test_helpers.h"

using namespace collscope;
using namespace collscope::view;

namespace {

namespace fs = std::filesystem;

using gui_test::slurp;

fs::path scratch(const std::string& name) { return gui_test::scratch("collscope-film-test-", name); }

// $PATH for the duration of a test.
struct PathAs {
  std::string old;
  explicit PathAs(const std::string& p) : old(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", p.c_str(), 1);
  }
  ~PathAs() { ::setenv("PATH", old.c_str(), 1); }
};

// The blocks of a GIF, parsed here rather than by the code under test: every image
// with its place and size, and the delay of the graphic control block before it.
struct GifFrame {
  int x = 0, y = 0, w = 0, h = 0, delay_cs = 0;
  bool transparent = false;
};
std::vector<GifFrame> gif_frames(const std::string& b, int& width, int& height, bool& trailer) {
  auto u8 = [&](std::size_t i) { return static_cast<int>(static_cast<unsigned char>(b.at(i))); };
  auto u16 = [&](std::size_t i) { return u8(i) | u8(i + 1) << 8; };
  REQUIRE(b.compare(0, 6, "GIF89a") == 0);
  width = u16(6), height = u16(8);
  std::size_t i = 13;
  if (u8(10) & 0x80) i += 3u * (1u << ((u8(10) & 7) + 1));
  std::vector<GifFrame> out;
  GifFrame next;
  auto skip = [&](std::size_t& j) {
    while (u8(j) != 0) j += 1u + static_cast<std::size_t>(u8(j));
    ++j;
  };
  trailer = false;
  while (i < b.size()) {
    const int tag = u8(i);
    if (tag == 0x3B) {
      trailer = true;
      break;
    }
    if (tag == 0x21 && u8(i + 1) == 0xF9) {  // graphic control: delay and transparency
      next.delay_cs = u16(i + 4);
      next.transparent = (u8(i + 3) & 1) != 0;
      i += 2;
      skip(i);
    } else if (tag == 0x21) {
      i += 2;
      skip(i);
    } else {
      REQUIRE(tag == 0x2C);
      next.x = u16(i + 1), next.y = u16(i + 3), next.w = u16(i + 5), next.h = u16(i + 7);
      const int flags = u8(i + 9);
      i += 10;
      if (flags & 0x80) i += 3u * (1u << ((flags & 7) + 1));
      ++i;
      skip(i);
      out.push_back(next);
      next = {};
    }
  }
  return out;
}

// A frame of w x h with a bar at column `k`, as OpenGL reads it.
std::vector<std::uint8_t> bar_frame(int w, int h, int k) {
  std::vector<std::uint8_t> f(static_cast<std::size_t>(w * h * 4), 40);
  for (int y = 0; y < h; ++y)
    for (int x = k * 4; x < k * 4 + 4 && x < w; ++x) {
      auto* p = &f[static_cast<std::size_t>((y * w + x) * 4)];
      p[0] = 250, p[1] = 200, p[2] = 60, p[3] = 255;
    }
  return f;
}

}  // namespace

TEST_CASE("gui film: --steps A..B within the lesson, else one clear error") {
  auto all = parse_step_range("", 6);
  REQUIRE(all.ok());
  CHECK(all->first == 0);
  CHECK(all->last == 6);
  auto some = parse_step_range("2..5", 6);
  REQUIRE(some.ok());
  CHECK(some->first == 2);
  CHECK(some->last == 5);
  for (const char* bad : {"3", "3..", "..3", "a..b", "2..2", "4..1", "0..7", "-1..3", "1...3", "1..3x", " 1..3"}) {
    CAPTURE(bad);
    auto r = parse_step_range(bad, 6);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id == "gui.bad_steps");
    CHECK(r.error().exit == ExitCode::bad_input);
    CHECK(r.error().hint.find("0..6") != std::string::npos);
  }
  CHECK(parse_step_range("", 0).error().id == "gui.bad_steps");
}

TEST_CASE("gui film: every step held while its caption is read, its tokens travel, then the last frame") {
  for (int first = 0; first < 4; ++first)
    for (int last = first + 1; last <= 5; ++last)
      for (int travel : {0, 1, 3}) {
        CAPTURE(first);
        CAPTURE(last);
        MovieTiming t;
        t.travel_frames = travel;
        const auto frames = plan_movie({first, last}, t);
        const int per_step = travel + 2;
        REQUIRE(frames.size() == static_cast<std::size_t>((last - first) * per_step + 1));
        for (int k = first; k < last; ++k) {
          const auto* f = &frames[static_cast<std::size_t>((k - first) * per_step)];
          CHECK(f[0].applied == k);
          CHECK(f[0].t == 0.0f);
          CHECK(f[0].hold);
          CHECK(f[0].delay_cs == t.hold_cs);
          for (int i = 1; i < per_step; ++i) {
            CHECK(f[i].applied == k);
            CHECK(f[i].t > f[i - 1].t);  // forward in time, never past the step
            CHECK(f[i].t < 1.0f);
            CHECK_FALSE(f[i].hold);
          }
        }
        CHECK(frames.back().applied == last);
        CHECK(frames.back().delay_cs == t.end_cs);
        // The palette comes from the hold frames: one per step, and the last.
        CHECK(palette_samples(frames).size() == static_cast<std::size_t>(last - first + 1));
        CHECK(movie_length_cs(frames) == (last - first) * (t.hold_cs + travel * t.travel_cs + t.landed_cs) + t.end_cs);
      }
}

TEST_CASE("gui film: a GIF of synthetic frames, written atomically, with the planned frames and delays") {
#if defined(COLLSCOPE_HAVE_CGIF)
  const auto dir = scratch("gif");
  const auto path = dir / "film.gif";
  auto frames = plan_movie({0, 3});
  auto film = Film::open(FilmKind::gif, path.string(), frames);
  REQUIRE(film.ok());
  Film& f = **film;
  CHECK(f.total() == palette_samples(frames).size() + frames.size());
  const int w = 96, h = 40;
  std::size_t n = 0;
  while (const MovieFrame* m = f.next()) {
    CHECK_FALSE(fs::exists(path));  // nothing at the name until the whole file is there
    REQUIRE(f.take(bar_frame(w, h, m->applied * 4 + static_cast<int>(m->t * 3)), w, h).ok());
    CHECK(f.rendered() == ++n);
  }
  CHECK(f.done());
  CHECK(f.summary().find("wrote " + path.string() + " (" + std::to_string(frames.size()) + " frames") == 0);
  const std::string bytes = slurp(path);
  CHECK(bytes.size() == f.bytes());
  int gw = 0, gh = 0;
  bool trailer = false;
  const auto blocks = gif_frames(bytes, gw, gh, trailer);
  CHECK(trailer);
  CHECK(gw == w);
  CHECK(gh == h);
  REQUIRE(blocks.size() == frames.size());
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    CAPTURE(i);
    CHECK(blocks[i].delay_cs == frames[i].delay_cs);
    CHECK(blocks[i].x + blocks[i].w <= w);
    CHECK(blocks[i].y + blocks[i].h <= h);
  }
  // Only the first frame is whole; a frame like the one before it is a small window.
  CHECK(blocks[0].w == w);
  bool small = false;
  for (std::size_t i = 1; i < blocks.size(); ++i) small = small || blocks[i].w < w / 2;
  CHECK(small);
  // No temporary file is left next to it.
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);

  // A frame of another size ends the film with an error, and nothing is written.
  const auto other = dir / "other.gif";
  auto g = Film::open(FilmKind::gif, other.string(), plan_movie({0, 1}));
  REQUIRE(g.ok());
  REQUIRE((*g)->take(bar_frame(w, h, 0), w, h).ok());
  CHECK((*g)->take(bar_frame(w + 2, h, 0), w + 2, h).error().id == "gui.export");
  CHECK((*g)->done());
  CHECK_FALSE(fs::exists(other));
#else
  CHECK(Film::open(FilmKind::gif, "x.gif", plan_movie({0, 1})).error().id == "gui.gif_unavailable");
#endif
}

TEST_CASE("gui film: without ffmpeg on PATH a video is one clear error, before anything is rendered") {
  const auto empty = scratch("no-ffmpeg");
  PathAs path(empty.string());
  CHECK(find_on_path("ffmpeg").empty());
  auto film = Film::open(FilmKind::video, (empty / "v.mp4").string(), plan_movie({0, 2}));
  REQUIRE_FALSE(film.ok());
  CHECK(film.error().id == "gui.no_ffmpeg");
  CHECK(film.error().exit == ExitCode::bad_input);
  CHECK(film.error().hint.find("--gif") != std::string::npos);
  CHECK(check_video((empty / "v.avi").string()).error().id == "gui.video_format");
}

TEST_CASE("gui film: a video pipes every frame to ffmpeg, repeated for its delay, and is written atomically") {
  // A stand-in ffmpeg: records its arguments and copies its input to its output, so the
  // "video" is the raw frames, which can be counted.
  const auto dir = scratch("fake-ffmpeg");
  const auto bin = dir / "bin";
  fs::create_directories(bin);
  {
    std::ofstream s(bin / "ffmpeg");
    s << "#!/bin/sh\necho \"$@\" > '" << (dir / "args").string() << "'\nexec cat\n";
  }
  fs::permissions(bin / "ffmpeg", fs::perms::owner_all);
  PathAs path(bin.string() + ":/usr/bin:/bin");
  REQUIRE(find_on_path("ffmpeg") == (bin / "ffmpeg").string());
  const auto out = dir / "lesson.mp4";
  const auto frames = plan_movie({1, 3});
  auto film = Film::open(FilmKind::video, out.string(), frames);
  REQUIRE(film.ok());
  CHECK((*film)->total() == frames.size());  // one pass: no palette
  const int w = 34, h = 20;
  std::size_t sent = 0;
  while (const MovieFrame* m = (*film)->next()) {
    REQUIRE((*film)->take(bar_frame(w, h, m->applied), w, h).ok());
    sent += static_cast<std::size_t>(std::max(1L, std::lround(m->delay_cs * kVideoFps / 100.0)));
  }
  REQUIRE((*film)->done());
  CHECK((*film)->encoded_frames() == sent);
  CHECK(fs::file_size(out) == sent * static_cast<std::size_t>(w * h * 4));
  const std::string args = slurp(dir / "args");
  CHECK(args.find("-s 34x20") != std::string::npos);
  CHECK(args.find("-r " + std::to_string(kVideoFps)) != std::string::npos);
  CHECK(args.find("-f mp4 pipe:1") != std::string::npos);
  CHECK(args.find("vflip") != std::string::npos);

  // An ffmpeg that fails: its words in the error, exit 3, nothing written.
  {
    std::ofstream s(bin / "ffmpeg");
    s << "#!/bin/sh\ncat > /dev/null\necho 'Unknown encoder libx264' >&2\nexit 1\n";
  }
  const auto bad = dir / "bad.mp4";
  auto f2 = Film::open(FilmKind::video, bad.string(), plan_movie({0, 1}));
  REQUIRE(f2.ok());
  Status last = ok_status();
  while ((*f2)->next() && last.ok()) last = (*f2)->take(bar_frame(w, h, 0), w, h);
  REQUIRE_FALSE(last.ok());
  CHECK(last.error().id == "gui.video_failed");
  CHECK(last.error().exit == ExitCode::backend_failure);
  CHECK(last.error().message.find("Unknown encoder libx264") != std::string::npos);
  CHECK_FALSE(fs::exists(bad));
}
