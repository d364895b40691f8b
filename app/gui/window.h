// The GLFW window with its OpenGL 3.3 context and Dear ImGui. One per process;
// everything it owns is released in the destructor, in reverse order.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "gui/view/font.h"

struct GLFWwindow;
struct ImFont;

namespace collscope::app {

struct WindowOptions {
  int width = 1600, height = 900;
  bool visible = true;  // false: render offscreen (screenshots, benchmarks)
  bool vsync = true;
  std::string ini_path;  // ImGui's layout file; "" = none
};

struct Fonts {
  ImFont* body = nullptr;
  ImFont* caption = nullptr;  // larger, for the step's caption
  bool real_font = false;     // false: ImGui's built-in font (the TTF was not found)
};

class Window {
 public:
  // Error "gui.no_display" (exit 3) when no window can be opened.
  static Result<std::unique_ptr<Window>> open(const WindowOptions& o);
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;

  bool should_close() const;
  void new_frame();  // polls events, starts an ImGui frame (rebuilds fonts if asked)
  void render();     // ImGui::Render and draw; call capture() after it, then present()
  void present();    // swap buffers
  std::vector<std::uint8_t> capture(int& w, int& h) const;  // RGBA, bottom row first
  void finish() const;  // glFinish: wait until the frame is really drawn (benchmarks)

  // Font size from the monitor's content scale, the zoom and presenter mode; applied
  // at the start of the next frame (the atlas cannot change inside a frame).
  void request_fonts(float zoom, bool presenter);
  const Fonts& fonts() const { return fonts_; }
  float ui_scale() const { return ui_scale_; }  // pixels per "point" of the layout
  void size(int& w, int& h) const;

 private:
  Window() = default;
  void rebuild_fonts();
  GLFWwindow* w_ = nullptr;
  std::string ini_path_;
  Fonts fonts_;
  view::FontChoice font_;  // where the TTF came from (gui/view/font.h)
  float content_scale_ = 1.0f, zoom_ = 1.0f, ui_scale_ = 1.0f;
  bool presenter_ = false, fonts_dirty_ = true;
};

}  // namespace collscope::app
