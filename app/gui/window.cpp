#include "gui/window.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "collscope/files.h"
#include "gui/style.h"
#include "gui/view/font.h"

namespace collscope::app {

Result<std::unique_ptr<Window>> Window::open(const WindowOptions& o) {
  glfwSetErrorCallback([](int, const char*) {});  // failures are reported below, once
  if (!glfwInit())
    return make_error("gui.no_display", "cannot open a window: no display could be opened",
                      "run it on a desktop, or headless under `xvfb-run -a collscope gui ... --screenshot out.png`", {},
                      ExitCode::backend_failure);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_VISIBLE, o.visible ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  GLFWwindow* w = glfwCreateWindow(o.width, o.height, "collscope", nullptr, nullptr);
  if (!w) {
    glfwTerminate();
    return make_error("gui.no_display", "cannot open an OpenGL 3.3 window on this display",
                      "check the graphics driver (Mesa's libgl1-mesa-dri provides software OpenGL)", {},
                      ExitCode::backend_failure);
  }
  glfwMakeContextCurrent(w);
  glfwSwapInterval(o.vsync ? 1 : 0);
  std::unique_ptr<Window> win(new Window());
  win->w_ = w;
  win->ini_path_ = o.ini_path;
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(w, &sx, &sy);
  win->content_scale_ = std::clamp(std::max(sx, sy), 1.0f, 4.0f);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  // The layout file lives in the user's config directory (or nowhere): never the
  // working directory, where ImGui would put it by default. It is read and written
  // here rather than by ImGui, through the bounded reader and the atomic writer
  // (collscope/files.h): a FIFO there never blocks the start, and a crash never
  // leaves half a file.
  io.IniFilename = nullptr;
  if (!win->ini_path_.empty()) {
    static const InputKind kind{"gui.settings_io", "layout file", 1 << 20, "", "delete it"};
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(win->ini_path_, ec))) {
      if (auto text = read_input_file(win->ini_path_, kind))
        ImGui::LoadIniSettingsFromMemory(text->data(), text->size());
      else
        std::cerr << "warning: ignoring the window layout in " << win->ini_path_ << " (" << text.error().message
                  << ")\n";
    }
  }
  ImGui_ImplGlfw_InitForOpenGL(w, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  return win;
}

Window::~Window() {
  if (!ini_path_.empty()) {
    std::size_t n = 0;
    const char* text = ImGui::SaveIniSettingsToMemory(&n);
    if (auto st = write_file_atomically(ini_path_, std::string_view(text, n), "gui.settings_io"); !st)
      std::cerr << "warning: window layout not saved: " << st.error().message << "\n";
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(w_);
  glfwTerminate();
}

bool Window::should_close() const { return glfwWindowShouldClose(w_); }

void Window::request_fonts(float zoom, bool presenter) {
  if (zoom != zoom_ || presenter != presenter_) fonts_dirty_ = true;
  zoom_ = zoom;
  presenter_ = presenter;
}

void Window::rebuild_fonts() {
  ImGuiIO& io = ImGui::GetIO();
  ui_scale_ = content_scale_ * zoom_ * (presenter_ ? 2.0f : 1.0f);
  const float px = std::round(17.0f * ui_scale_);
  io.Fonts->Clear();
  fonts_ = {};
  if (font_.source.empty()) {  // looked up once per window
    font_ = view::find_font([](const char* name) { return std::getenv(name); });
    if (!font_.note.empty()) std::cerr << "warning: " << font_.note << "; using " << font_.source << " font\n";
  }
  if (!font_.path.empty()) {
    fonts_.body = io.Fonts->AddFontFromFileTTF(font_.path.c_str(), px);
    fonts_.caption = io.Fonts->AddFontFromFileTTF(font_.path.c_str(), std::round(px * 1.35f));
    fonts_.real_font = fonts_.body && fonts_.caption;
  }
  if (!fonts_.real_font) {
    // The built-in bitmap font only scales as a whole; it keeps the window usable.
    io.Fonts->Clear();
    ImFontConfig cfg;
    cfg.SizePixels = std::max(13.0f, px);
    fonts_.body = io.Fonts->AddFontDefault(&cfg);
    fonts_.caption = fonts_.body;
  }
  io.Fonts->Build();
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  ImGui_ImplOpenGL3_CreateFontsTexture();
  apply_style(presenter_, ui_scale_);
  fonts_dirty_ = false;
}

void Window::new_frame() {
  glfwPollEvents();
  if (fonts_dirty_) rebuild_fonts();
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  ImGui::NewFrame();
}

void Window::render() {
  ImGui::Render();
  int fw = 0, fh = 0;
  glfwGetFramebufferSize(w_, &fw, &fh);
  glViewport(0, 0, fw, fh);
  const auto bg = background_colour(presenter_);
  glClearColor(bg[0], bg[1], bg[2], 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void Window::present() { glfwSwapBuffers(w_); }

void Window::finish() const { glFinish(); }

std::vector<std::uint8_t> Window::capture(int& w, int& h) const {
  glfwGetFramebufferSize(w_, &w, &h);
  std::vector<std::uint8_t> px(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  return px;
}

void Window::size(int& w, int& h) const { glfwGetWindowSize(w_, &w, &h); }

}  // namespace collscope::app
