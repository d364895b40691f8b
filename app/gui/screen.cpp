#include "gui/screen.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "collscope/files.h"
#include "collscope/trace.h"
#include "gui/png.h"
#include "gui/style.h"
#include "gui/view/keys.h"
#include "gui/view/panels.h"

namespace collscope::app {

namespace {

// A handle on the boundary between two panels, in a window of its own so that it sits
// above both. Returns how far it was dragged this frame (x for a vertical handle, y for
// a horizontal one).
float splitter(const char* id, ImVec2 pos, ImVec2 size, bool vertical) {
  ImGui::SetNextWindowPos(pos);
  ImGui::SetNextWindowSize(size);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
  ImGui::PushStyleVar(ImGuiStyleVar_WindowMinSize, {1, 1});
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0);
  ImGui::Begin(id, nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoFocusOnAppearing);
  ImGui::InvisibleButton("##grip", size);
  float moved = 0;
  if (ImGui::IsItemHovered() || ImGui::IsItemActive()) {
    ImGui::SetMouseCursor(vertical ? ImGuiMouseCursor_ResizeEW : ImGuiMouseCursor_ResizeNS);
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddRectFilled(
        a, b, ImGui::GetColorU32(ImGui::IsItemActive() ? ImGuiCol_SeparatorActive : ImGuiCol_SeparatorHovered));
  }
  if (ImGui::IsItemActive()) moved = vertical ? ImGui::GetIO().MouseDelta.x : ImGui::GetIO().MouseDelta.y;
  ImGui::End();
  ImGui::PopStyleVar(3);
  return moved;
}

}  // namespace

Screen::Screen(Window& window, Settings& settings) : window_(window), settings_(settings) {
  pb_.speed = settings_.speed;
  params_.set_backend(settings_.backend);
}

Status Screen::open_file(const std::string& path) {
  auto sc = load_scenario(path);
  if (!sc) {
    work_.error = sc.error().format();
    last_error_ = sc.error();
    return sc.error();
  }
  file_ = path;
  settings_.last_file = path;
  matrix_.choose(CanvasView::automatic);  // another lesson: its own picture
  adopt_params_ = true;
  compare_.expect(sc->compare);  // the lesson's own comparison, if it declares one
  submit(std::move(*sc));
  return ok_status();
}

void Screen::open_scenario(Scenario sc) {
  file_.clear();
  adopt_params_ = false;
  submit(std::move(sc));
}

void Screen::submit(Scenario sc) {
  view::RunRequest r;
  r.scenario = std::move(sc);
  r.backend = params_.backend();
  r.place = place_;
  worker_.submit(std::move(r));
}

void Screen::set_place(const view::LessonPlace& place) {
  place_ = place;
  compare_.set_place(place);
  what_if_.start_on(place.topology, place.nodes);
}

void Screen::sync_steps() {
  pb_.steps = comparing() ? compare_.model()->steps() : lesson_.steps();
  pb_.applied = std::min(pb_.applied, pb_.steps);
}

bool Screen::poll() {
  if (compare_.poll()) {
    sync_steps();
    if (compare_.error()) work_.error = compare_.error()->format();
  }
  work_.busy = worker_.busy();
  work_.seconds = worker_.busy_seconds();
  auto r = worker_.take();
  if (!r) return false;
  if (!r->run) {
    // The previous lesson stays on screen, usable; the error says what went wrong.
    work_.error = r->run.error().format();
    last_error_ = r->run.error();
    return true;
  }
  work_.error.clear();
  last_error_.reset();
  std::shared_ptr<const view::LessonRun> run = *r->run;
  if (adopt_params_) params_.adopt(run->scenario, run->schedule, params_.backend());
  lesson_.set_run(run);
  compare_.lesson_changed(run, params_.backend());
  rebuild_quiz();
  const std::int32_t keep = pb_.applied;
  sync_steps();
  pb_.jump(file_.empty() ? keep : 0);  // a re-plan keeps the place where it can
  pb_.playing = false;
  return true;
}

void Screen::set_quiz(bool on) {
  quiz_on_ = on;
  rebuild_quiz();
}

void Screen::rebuild_quiz() {
  // A new lesson (or quiz mode turned on) starts a new score.
  quiz_.start({});
  if (!quiz_on_ || !lesson_.run()) return;
  auto questions = view::build_quiz(lesson_.shared_run());
  if (!questions) {
    work_.error = questions.error().format();
    return;
  }
  quiz_.start(std::move(*questions));
}

void Screen::handle_keys() {
  if (ImGui::GetIO().WantTextInput) return;
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsKeyPressed(GLFW_KEY_B, false) || ImGui::IsKeyPressed(GLFW_KEY_PERIOD, false)) blank_ = !blank_;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1, false) || (io.KeyShift && ImGui::IsKeyPressed(GLFW_KEY_SLASH, false)))
    show_keys_ = !show_keys_;
  if (ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false)) blank_ = show_keys_ = false;
  if (blank_) return;  // the room looks at the speaker: no key moves the lesson meanwhile
  ControlsPanel::handle_keys(pb_);
  if (ImGui::IsKeyPressed(GLFW_KEY_F11, false)) settings_.presenter = !settings_.presenter;
  if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD))
    settings_.zoom = std::min(3.0f, settings_.zoom * 1.1f);
  if (ImGui::IsKeyPressed(GLFW_KEY_MINUS) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT))
    settings_.zoom = std::max(0.5f, settings_.zoom / 1.1f);
  if (ImGui::IsKeyPressed(GLFW_KEY_T, false)) settings_.show_timeline = !settings_.show_timeline;
  if (ImGui::IsKeyPressed(GLFW_KEY_W, false)) show_what_if_ = !show_what_if_;
  if (ImGui::IsKeyPressed(GLFW_KEY_C, false)) per_call_colours_ = !per_call_colours_;
  if (ImGui::IsKeyPressed(GLFW_KEY_Q, false)) set_quiz(!quiz_on_);
  if (ImGui::IsKeyPressed(GLFW_KEY_M, false)) matrix_.toggle(lesson_);
}

void Screen::left_panel(float w, float h) {
  ImGui::SetNextWindowPos({0, 0});
  ImGui::SetNextWindowSize({w, h});
  ImGui::Begin("Lesson", nullptr, kPanelFlags);
  if (ImGui::CollapsingHeader("Lessons", ImGuiTreeNodeFlags_DefaultOpen))
    if (auto pick = browser_.draw(file_)) (void)open_file(*pick);
  if (ImGui::CollapsingHeader("Parameters", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (!file_.empty()) ImGui::TextDisabled("changing one makes that collective a lesson of its own");
    if (auto sc = params_.draw()) open_scenario(std::move(*sc));
    settings_.backend = params_.backend();
    compare_.draw_choice(lesson_.run());
  }
  if (ImGui::CollapsingHeader("Export")) (void)request_export(export_.draw(export_progress()));
  if (ImGui::CollapsingHeader("View")) {
    ImGui::Checkbox("presenter mode (F11)", &settings_.presenter);
    ImGui::Checkbox("timeline (T)", &settings_.show_timeline);
    ImGui::Checkbox("what if: every algorithm on a topology (W)", &show_what_if_);
    ImGui::Checkbox("colours per call: each call's own inputs (C)", &per_call_colours_);
    if (bool q = quiz_on_; ImGui::Checkbox("quiz: a question before every step (Q)", &q)) set_quiz(q);
    if (bool m = matrix_.shown(lesson_); ImGui::Checkbox("matrix: a row per rank, a column per chunk (M)", &m))
      matrix_.choose(m ? CanvasView::matrix : CanvasView::boxes);
    ImGui::SliderFloat("zoom (+/-)", &settings_.zoom, 0.5f, 3.0f, "%.2f");
    ImGui::TextDisabled("Space play/pause, Left/Right step, Home restart, ? every key");
    if (!window_.fonts().real_font) ImGui::TextDisabled("DejaVuSans.ttf not found: built-in font");
  }
  ImGui::End();
}

void Screen::keys_overlay(float w, float h) {
  ImGui::SetNextWindowPos({w * 0.5f, h * 0.5f}, ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.94f);
  ImGui::Begin("Keys (? or F1 to close)", &show_keys_, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse);
  if (ImGui::BeginTable("keys", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV)) {
    for (const auto& k : view::key_help()) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(k.keys.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(k.action.c_str());
    }
    ImGui::EndTable();
  }
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextDisabled("%s", view::quiz_help().c_str());
  ImGui::PopTextWrapPos();
  ImGui::End();
}

Status Screen::request_export(const ExportRequest& r) {
  if (r.kind == ExportRequest::Kind::none) return ok_status();
  if (exporting()) return ok_status();  // one export at a time; the panel shows its progress
  export_error_.reset();
  export_summary_.clear();
  exported_frames_ = 0;
  auto fail = [&](Error e) -> Status {
    export_.set_message(e.format());
    export_error_ = e;
    return e;
  };
  const view::LessonRun* run = lesson_.run();
  if (!run) return fail(make_error("gui.export", "nothing to export yet", "wait until the lesson has run"));
  if (r.path.empty()) return fail(make_error("gui.export", "no file or folder name given", "type a name first"));
  // A trace or a PNG never replaces the lesson it shows, nor a device or a folder.
  if (r.kind != ExportRequest::Kind::sequence) {
    std::vector<std::string> inputs;
    if (!file_.empty()) inputs.push_back(file_);
    const char* id = r.kind == ExportRequest::Kind::trace   ? "trace.io"
                     : r.kind == ExportRequest::Kind::gif   ? "gui.gif_io"
                     : r.kind == ExportRequest::Kind::video ? "gui.video_io"
                                                            : "gui.png_io";
    if (auto st = check_outputs(inputs, {OutputPath{r.path, "the export", id}}); !st) return fail(st.error());
  }
  switch (r.kind) {
    case ExportRequest::Kind::trace: {
      auto st = write_trace(r.path, run->schedule, run->outcome.record);
      if (!st) return fail(st.error());
      export_.set_message("wrote " + r.path + " (open it in ui.perfetto.dev)");
      break;
    }
    case ExportRequest::Kind::png:
      png_request_ = r.path;
      break;
    case ExportRequest::Kind::sequence: {
      std::error_code ec;
      std::filesystem::create_directories(r.path, ec);
      if (ec || !std::filesystem::is_directory(r.path))
        return fail(make_error("gui.export", "cannot create the folder " + r.path + (ec ? ": " + ec.message() : ""),
                               "choose a folder name you can write to"));
      seq_ = {true, r.path, 0, pb_};
      export_.set_message("writing one PNG per step to " + r.path + " ...");
      break;
    }
    case ExportRequest::Kind::gif:
    case ExportRequest::Kind::video:
      if (auto st = start_film(r); !st) return fail(st.error());
      break;
    case ExportRequest::Kind::none:
      break;
  }
  return ok_status();
}

Status Screen::start_film(const ExportRequest& r) {
  auto range = view::parse_step_range(r.steps, pb_.steps);
  if (!range) return range.error();
  auto film = view::Film::open(r.kind == ExportRequest::Kind::gif ? view::FilmKind::gif : view::FilmKind::video, r.path,
                               view::plan_movie(*range));
  if (!film) return film.error();
  film_ = std::move(*film);
  film_saved_ = pb_;
  export_.set_message("filming steps " + std::to_string(range->first) + ".." + std::to_string(range->last) + " into " +
                      r.path + " ...");
  return ok_status();
}

ExportProgress Screen::export_progress() const {
  if (!film_) return {};
  return {film_->rendered(), film_->total()};
}

void Screen::film_frame() {
  int w = 0, h = 0;
  auto px = window_.capture(w, h);
  Status st = film_->take(px, w, h);
  if (!st) {
    export_error_ = st.error();
    export_.set_message(st.error().format());
  } else if (film_->done()) {
    export_summary_ = film_->summary();
    exported_frames_ = static_cast<std::int32_t>(film_->encoded_frames());
    export_.set_message(export_summary_);
  }
  if (film_->done()) {
    film_.reset();
    pb_ = film_saved_;
  }
}

void Screen::frame(float dt) {
  const std::int32_t before = pb_.applied;  // where the frame began: the quiz holds forward moves
  const bool quiz = quiz_on_ && quiz_.active() && !exporting();
  handle_keys();
  window_.request_fonts(settings_.zoom, settings_.presenter);
  settings_.speed = pb_.speed;
  if (seq_.active) {
    // One frame per step: the step's arrows with their tokens half-way.
    pb_.jump(seq_.k);
    pb_.t = seq_.k < pb_.steps ? 0.35f : 0.0f;
    pb_.playing = false;
  } else if (const view::MovieFrame* f = film_ ? film_->next() : nullptr) {
    pb_.jump(f->applied);
    pb_.t = f->t;
    pb_.playing = false;
  } else {
    pb_.tick(dt);
  }
  if (quiz) quiz_.gate(pb_, before);
  sync_steps();
  lesson_.set_colour_scope(per_call_colours_ ? view::ColourScope::call : view::ColourScope::program);
  const ImVec2 size = ImGui::GetIO().DisplaySize;
  const float s = window_.ui_scale();
  const bool presenter = settings_.presenter;
  const auto panels = view::panel_layout(size.x, size.y, s, presenter, settings_.show_timeline, settings_.left_fraction,
                                         settings_.timeline_fraction);
  const float left = panels.left, caption_h = panels.caption_h, timeline_h = panels.timeline_h;
  const float canvas_h = panels.canvas_h;
  const ImGuiWindowFlags fixed = kPanelFlags;

  if (!presenter) left_panel(left, size.y);

  ImGui::SetNextWindowPos({left, 0});
  ImGui::SetNextWindowSize({size.x - left, canvas_h});
  const bool matrix = matrix_shown() && !comparing();  // two canvases of boxes side by side
  ImGui::Begin(matrix_.title(matrix).c_str(), nullptr,
               fixed | ImGuiWindowFlags_NoScrollbar | (presenter ? ImGuiWindowFlags_NoTitleBar : 0));
  if (quiz) quiz_panel_.prepare(quiz_, lesson_, pb_, canvas_quiz_);
  if (comparing())
    compare_.draw(pb_, s, presenter, [&](const view::Playback& p) { canvas_.draw(lesson_, p, hl_, presenter, s); });
  else if (matrix) matrix_.draw(lesson_, pb_, presenter, s);
  else canvas_.draw(lesson_, pb_, hl_, presenter, s, quiz ? &canvas_quiz_ : nullptr);
  ImGui::End();

  ImGui::SetNextWindowPos({left, canvas_h});
  ImGui::SetNextWindowSize({size.x - left, caption_h});
  ImGui::Begin("Step", nullptr, fixed | ImGuiWindowFlags_NoTitleBar);
  controls_.draw(pb_);
  caption_.draw(lesson_, std::min(pb_.applied, lesson_.steps()), work_, window_.fonts(), presenter);
  ImGui::End();

  if (timeline_h > 0) {
    ImGui::SetNextWindowPos({left, canvas_h + caption_h});
    ImGui::SetNextWindowSize({size.x - left, timeline_h});
    ImGui::Begin("Timeline (measured)", nullptr, fixed | ImGuiWindowFlags_NoScrollbar);
    if (comparing()) timeline_.draw_compare(lesson_, *compare_.model(), pb_, hl_, s);
    else timeline_.draw(lesson_, pb_, hl_, s);
    ImGui::End();
  }

  if (quiz) {
    quiz_.gate(pb_, before);  // the controls and the timeline move the lesson too
    // In the middle of the canvas, which a ring of boxes leaves free.
    const float canvas_w = size.x - left;
    quiz_panel_.draw(quiz_, lesson_, pb_, canvas_quiz_, {left + canvas_w / 2, canvas_h / 2},
                     std::min(canvas_w * 0.36f, 640 * s), window_.fonts());
  }
  what_if_.draw(lesson_, show_what_if_, s);
  if (show_keys_) keys_overlay(size.x, size.y);
  if (blank_) {
    // Black over everything, as a projector's blank: nothing else is drawn on top.
    ImGui::SetNextWindowPos({0, 0});
    ImGui::SetNextWindowSize(size);
    ImGui::PushStyleColor(ImGuiCol_WindowBg, IM_COL32(0, 0, 0, 255));
    ImGui::Begin("##blank", nullptr, kPanelFlags | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoInputs);
    ImGui::End();
    ImGui::PopStyleColor();
  }

  // The two boundaries the user can drag; where they end up is remembered.
  const float grip = std::round(6 * s);
  if (!presenter) {
    if (const float dx = splitter("##split-left", {left - grip / 2, 0}, {grip, size.y}, true); dx != 0)
      settings_.left_fraction = std::clamp((left + dx) / size.x, view::kMinLeftFraction, view::kMaxLeftFraction);
    if (timeline_h > 0)
      if (const float dy =
              splitter("##split-timeline", {left, canvas_h + caption_h - grip / 2}, {size.x - left, grip}, false);
          dy != 0)
        settings_.timeline_fraction =
            std::clamp((timeline_h - dy) / size.y, view::kMinTimelineFraction, view::kMaxTimelineFraction);
  }
}

void Screen::after_render() {
  if (film_) film_frame();
  if (!png_request_.empty()) {
    int w = 0, h = 0;
    auto px = window_.capture(w, h);
    auto st = write_png(png_request_, w, h, px);
    if (st) ++exported_frames_;
    else export_error_ = st.error();
    export_.set_message(st ? "wrote " + png_request_ : st.error().format());
    png_request_.clear();
  }
  if (seq_.active) {
    int w = 0, h = 0;
    auto px = window_.capture(w, h);
    char name[32];
    std::snprintf(name, sizeof name, "step-%03d.png", seq_.k);
    const std::string path = (std::filesystem::path(seq_.folder) / name).string();
    std::vector<std::string> inputs;
    if (!file_.empty()) inputs.push_back(file_);
    Status st = check_outputs(inputs, {OutputPath{path, "the slide", "gui.png_io"}});
    if (st) st = write_png(path, w, h, px);
    if (!st) {
      export_.set_message(st.error().format());
      export_error_ = st.error();
      seq_.active = false;
    } else {
      ++exported_frames_;
      if (++seq_.k > pb_.steps) {
        export_.set_message("wrote " + std::to_string(seq_.k) + " PNGs to " + seq_.folder);
        seq_.active = false;
      }
    }
    if (!seq_.active) pb_ = seq_.saved;
  }
}

}  // namespace collscope::app
