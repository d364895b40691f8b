// `collscope gui`: the window on a lesson; or, headless, one frame to a PNG
// (--screenshot), every step to PNGs (--slides), the lesson as an animated GIF (--gif)
// or a video (--video), the trace (--export-trace) or a frame-time measurement
// (--bench-frames).
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "cli.h"
#include "collscope/backend.h"
#include "collscope/files.h"
#include "collscope/machine.h"
#include "gui/png.h"
#include "gui/screen.h"
#include "gui/view/caption.h"
#include "gui/view/compare.h"
#include "gui/view/movie.h"
#include "gui/view/palette.h"
#include "gui/view/settings.h"
#include "gui/view/video.h"
#include "gui/window.h"

namespace collscope::app {

bool gui_built() { return true; }

namespace {

Result<std::pair<int, int>> parse_size(const std::string& text) {
  int w = 0, h = 0;
  char x = 0;
  if (std::sscanf(text.c_str(), "%d%c%d", &w, &x, &h) != 3 || (x != 'x' && x != 'X') || w < 320 || h < 240 ||
      w > 8192 || h > 8192)
    return make_error("cli.usage", "cannot read --size \"" + text + "\"",
                      "write WxH, e.g. --size 1600x900 (320x240 .. 8192x8192)");
  return std::pair{w, h};
}

// Waits for the worker (headless runs have nothing else to do).
Status wait_for_run(Screen& screen) {
  while (!screen.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (auto e = screen.last_run_error()) return *e;
  // Compare mode: the second run too.
  while (screen.compare_busy()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    screen.poll();
  }
  screen.poll();
  if (const auto& e = screen.compare().error()) return *e;
  return ok_status();
}

// --compare ALGO names an algorithm of the lesson's collective: checked before a window
// opens, so that a wrong name is one error and exit 2.
Status check_compare(const GuiFlags& f, const std::string& file) {
  if (f.compare.empty()) return ok_status();
  auto sc = load_scenario(file);
  if (!sc) return sc.error();
  if (auto other = view::compare_lesson(*sc, f.compare); !other) return other.error();
  return ok_status();
}

// --matrix or --boxes: the picture asked for; neither lets the lesson and its ranks choose.
CanvasView canvas_view_of(const GuiFlags& f) {
  return f.matrix ? CanvasView::matrix : f.boxes ? CanvasView::boxes : CanvasView::automatic;
}

std::string default_lesson() { return (std::filesystem::path(scenario_dir()) / "00-allreduce-ring.json").string(); }

// A window that is never shown, on the lesson of the command line, its run finished.
struct Headless {
  std::unique_ptr<Window> win;
  Settings settings;  // the defaults, not the user's: screenshots are reproducible
  std::unique_ptr<Screen> screen;
};

view::LessonPlace place_of(const GuiFlags& f) { return {f.topology, f.nodes, f.ranks_per_node}; }

Result<std::unique_ptr<Headless>> open_headless(const GuiFlags& f, std::pair<int, int> size) {
  WindowOptions wo;
  wo.width = size.first;
  wo.height = size.second;
  wo.visible = false;
  wo.vsync = false;
  auto win = Window::open(wo);  // no ini file: a screenshot never depends on the user's layout
  if (!win) return win.error();
  auto h = std::make_unique<Headless>();
  h->win = std::move(*win);
  h->settings.presenter = f.presenter;
  h->settings.show_timeline = true;
  h->screen = std::make_unique<Screen>(*h->win, h->settings);
  h->screen->set_place(place_of(f));
  h->screen->set_quiz(f.quiz);
  if (f.bench_frames > 0) {
    // 64 ranks, 64 cells per buffer row, animating: the heaviest classroom picture.
    QuickSpec q;
    q.coll = Collective::allreduce;
    q.algorithm = "ring";
    q.ranks = 64;
    q.count = 64 * 64;
    auto sc = f.file.empty() ? scenario_from_spec(q) : load_scenario(f.file);
    if (!sc) return sc.error();
    h->screen->open_scenario(std::move(*sc));
  } else if (auto st = h->screen->open_file(f.file.empty() ? default_lesson() : f.file); !st) {
    return st.error();
  }
  h->screen->set_canvas_view(canvas_view_of(f));
  if (!f.compare.empty()) h->screen->set_compare(f.compare);
  if (auto st = wait_for_run(*h->screen); !st) return st.error();
  return h;
}

// One frame drawn and shown.
void draw_frame(Headless& h, float dt) {
  h.win->new_frame();
  h.screen->frame(dt);
  h.win->render();
  h.screen->after_render();
  h.win->present();
}

int bench_frames(Headless& h, const GuiFlags& f, std::pair<int, int> size) {
  Window& win = *h.win;
  auto& pb = h.screen->playback();
  pb.speed = 4;
  pb.toggle();
  std::vector<double> ms;
  // Where a frame goes: building it (view models, ImGui), submitting it (ImGui's draw
  // lists to OpenGL: a software driver transforms the vertices here) and rasterising it.
  double build_ms = 0, submit_ms = 0, raster_ms = 0, present_ms = 0, vertices = 0, draw_calls = 0;
  auto since = [](auto t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  for (int i = 0; i < f.bench_frames + 10; ++i) {
    const bool counted = i >= 10;  // the first frames build fonts and caches
    const auto t0 = std::chrono::steady_clock::now();
    win.new_frame();
    h.screen->frame(1.0f / 60);
    if (counted) build_ms += since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    win.render();
    if (counted) {
      submit_ms += since(t1);
      const ImDrawData* dd = ImGui::GetDrawData();
      vertices += dd->TotalVtxCount;
      for (int l = 0; l < dd->CmdListsCount; ++l) draw_calls += dd->CmdLists[l]->CmdBuffer.Size;
    }
    const auto t2 = std::chrono::steady_clock::now();
    win.finish();  // count the (software) rasterisation, not just the submission
    if (counted) raster_ms += since(t2);
    const auto t3 = std::chrono::steady_clock::now();
    win.present();
    if (counted) present_ms += since(t3);
    if (pb.at_end()) pb.toggle();
    if (counted) ms.push_back(since(t0));
  }
  std::sort(ms.begin(), ms.end());
  double sum = 0;
  for (double v : ms) sum += v;
  const auto* r = h.screen->lesson().run();
  std::printf("collscope gui --bench-frames %d: %d ranks, %zu frames at %dx%d, animating, %s\n", f.bench_frames,
              r ? r->schedule.ranks : 0, ms.size(), size.first, size.second,
              h.screen->matrix_shown() ? "matrix" : "boxes");
  std::printf("frame time ms: mean %.2f  median %.2f  p95 %.2f  max %.2f\n", sum / static_cast<double>(ms.size()),
              ms[ms.size() / 2], ms[ms.size() * 95 / 100], ms.back());
  const double n = static_cast<double>(ms.size());
  std::printf(
      "of which building the frame (views + ImGui): mean %.2f, submitting it to OpenGL: mean %.2f, "
      "rasterising it: mean %.2f, presenting it: mean %.2f; %.0f vertices and %.0f draw calls per frame\n",
      build_ms / n, submit_ms / n, raster_ms / n, present_ms / n, vertices / n, draw_calls / n);
  std::printf("renderer: %s\n", reinterpret_cast<const char*>(glGetString(GL_RENDERER)));
  return 0;
}

// What the Export panel's buttons do, without the clicks: slides, the trace, a GIF or a
// video, with progress on the terminal.
int export_headless(Headless& h, const GuiFlags& f) {
  Screen& screen = *h.screen;
  ExportRequest r;
  const char* what = "slides";
  if (!f.slides.empty()) r = {ExportRequest::Kind::sequence, f.slides, ""};
  else if (!f.gif.empty()) r = {ExportRequest::Kind::gif, f.gif, f.steps}, what = "gif";
  else if (!f.video.empty()) r = {ExportRequest::Kind::video, f.video, f.steps}, what = "video";
  else r = {ExportRequest::Kind::trace, f.export_trace, ""};
  if (auto st = screen.request_export(r); !st) return report_error(st.error());
  const bool tty = ::isatty(2) != 0;
  std::int32_t frames = 0;
  std::size_t shown = 0;
  while (screen.exporting()) {
    draw_frame(h, 0);
    ++frames;
    if (r.kind == ExportRequest::Kind::sequence && frames % 20 == 0)
      std::cerr << "\rslides: " << screen.exported_frames() << " of " << screen.playback().steps + 1 << std::flush;
    if (const auto p = screen.export_progress();
        p.total > 0 && (tty ? p.done % 5 == 0 : p.done >= shown + p.total / 4)) {
      std::cerr << (tty ? "\r" : "") << what << ": " << view::movie_progress(p.done, p.total) << (tty ? "" : "\n")
                << std::flush;
      shown = p.done;
    }
  }
  if (tty && frames >= 5) std::cerr << "\n";
  if (screen.export_error()) return report_error(*screen.export_error());
  if (r.kind == ExportRequest::Kind::sequence)
    std::cout << "wrote " << screen.exported_frames() << " PNGs (steps 0.." << screen.playback().steps << ") to "
              << f.slides << "\n";
  else if (r.kind == ExportRequest::Kind::trace)
    std::cout << "wrote " << f.export_trace << " (open it in ui.perfetto.dev)\n";
  else std::cout << screen.export_summary() << "\n";
  return 0;
}

int screenshot(Headless& h, const GuiFlags& f) {
  Screen& screen = *h.screen;
  Window& win = *h.win;
  auto& pb = screen.playback();
  if (f.step < 0 || f.step > pb.steps)
    return report_error(make_error("cli.usage", "--step " + std::to_string(f.step) + " is outside the lesson",
                                   "use a step in 0.." + std::to_string(pb.steps)));
  pb.jump(f.step);
  pb.t = f.step < pb.steps ? 0.35f : 0.0f;  // tokens half-way along their arrows
  if (f.what_if) {
    // One frame starts the pricing; wait for it, then draw the picture.
    screen.show_what_if(true);
    win.new_frame();
    screen.frame(0);
    win.render();
    screen.settle_what_if();
  }
  // A few frames: ImGui sizes windows and builds fonts over the first ones.
  for (int i = 0; i < 3; ++i) {
    win.new_frame();
    screen.frame(0);
    win.render();
    if (i < 2) win.present();
  }
  int w = 0, hh = 0;
  auto px = win.capture(w, hh);
  if (auto st = write_png(f.screenshot, w, hh, px); !st) return report_error(st.error());
  // The window's words for where it is: --step K is K steps applied, so the frame shows
  // step K + 1 running ("--step 2" draws "step 3 of 6"), as the caption says.
  std::cout << "wrote " << f.screenshot << " (" << w << "x" << hh << ", " << f.step
            << " steps applied: " << view::step_position(f.step, pb.steps) << ")\n";
  return 0;
}

int headless(const GuiFlags& f, std::pair<int, int> size) {
  // Outputs are checked before anything runs: never the lesson itself, never a device.
  std::vector<OutputPath> outs;
  if (!f.screenshot.empty()) outs.push_back({f.screenshot, "--screenshot", "gui.png_io"});
  if (!f.export_trace.empty()) outs.push_back({f.export_trace, "--export-trace", "trace.io"});
  if (!f.gif.empty()) outs.push_back({f.gif, "--gif", "gui.gif_io"});
  if (!f.video.empty()) outs.push_back({f.video, "--video", "gui.video_io"});
  if (auto st = check_outputs({f.file.empty() ? default_lesson() : f.file}, outs); !st) return report_error(st.error());
  // Nor is a lesson run, or a window opened, for a video nobody can encode.
  if (!f.video.empty())
    if (auto st = view::check_video(f.video); !st) return report_error(st.error());
  auto h = open_headless(f, size);
  if (!h) return report_error(h.error());
  if (f.bench_frames > 0) return bench_frames(**h, f, size);
  if (!f.slides.empty() || !f.export_trace.empty() || !f.gif.empty() || !f.video.empty())
    return export_headless(**h, f);
  return screenshot(**h, f);
}

}  // namespace

int cmd_gui(const GuiFlags& f) {
  // Every frame the OpenGL driver (a software one above all) allocates and frees
  // vertex and command buffers of a few hundred KiB. Above glibc's default threshold
  // each would be a fresh mmap, paid for in page faults every frame; keep them in the
  // heap instead.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  auto size = parse_size(!f.size.empty() ? f.size : !f.gif.empty() ? "1280x720" : "1600x900");
  if (!size) return report_error(size.error());
  if (auto st = view::load_palette(); !st) return report_error(st.error());  // assets/palette.json
  const int modes = !f.screenshot.empty() + (f.bench_frames > 0) + !f.slides.empty() + !f.export_trace.empty() +
                    !f.gif.empty() + !f.video.empty();
  if (modes > 1)
    return report_error(make_error(
        "cli.usage", "--screenshot, --bench-frames, --slides, --gif, --video and --export-trace exclude each other",
        "give one of them"));
  if (f.matrix && f.boxes)
    return report_error(make_error("cli.usage", "--matrix and --boxes exclude each other", "give one of them"));
  if (!f.steps.empty() && f.gif.empty() && f.video.empty())
    return report_error(make_error("cli.usage", "--steps only applies to --gif and --video",
                                   "add --gif OUT.gif or --video OUT.mp4, or use --step K with --screenshot"));
  if (auto st = check_compare(f, f.file.empty() ? default_lesson() : f.file); !st) return report_error(st.error());
  // A topology that cannot be read, or nodes without one, are refused before a window opens.
  if (auto m = machine_for(f.topology, f.nodes, BackendCapabilities{}, DType::float32, user_config_dir()); !m)
    return report_error(m.error());
  if (modes == 1) return headless(f, *size);

  const std::string dir = config_dir();
  Settings settings = load_settings(dir);
  if (f.presenter) settings.presenter = true;
  WindowOptions wo;
  wo.width = settings.window_w;
  wo.height = settings.window_h;
  if (!dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec) wo.ini_path = (std::filesystem::path(dir) / "imgui.ini").string();
  }
  auto win = Window::open(wo);
  if (!win) return report_error(win.error());
  Screen screen(**win, settings);
  screen.set_place(place_of(f));
  screen.set_quiz(f.quiz);
  std::string file = f.file;
  if (file.empty()) file = default_lesson();
  if (auto st = screen.open_file(file); !st) {
    if (!f.file.empty()) return report_error(st.error());  // a file named on the command line must exist
  }
  screen.set_canvas_view(canvas_view_of(f));
  if (!f.compare.empty()) screen.set_compare(f.compare);
  auto last = std::chrono::steady_clock::now();
  while (!(*win)->should_close()) {
    screen.poll();
    (*win)->new_frame();
    const auto now = std::chrono::steady_clock::now();
    const float dt = std::chrono::duration<float>(now - last).count();
    last = now;
    screen.frame(dt);
    (*win)->render();
    screen.after_render();
    (*win)->present();
  }
  (*win)->size(settings.window_w, settings.window_h);
  save_settings(dir, settings);
  return 0;
}

}  // namespace collscope::app
