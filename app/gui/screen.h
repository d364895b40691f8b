// One frame of the window: lays out the panels (lesson browser, parameters and
// export on the left; canvas, caption with controls and timeline on the right),
// handles the global keys and hands runs to the worker. Owns the panels and the
// plain state they share; each panel owns its own state.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gui/browser_panel.h"
#include "gui/canvas_panel.h"
#include "gui/caption_panel.h"
#include "gui/compare_panel.h"
#include "gui/controls_panel.h"
#include "gui/export_panel.h"
#include "gui/lesson_state.h"
#include "gui/matrix_panel.h"
#include "gui/params_panel.h"
#include "gui/quiz_panel.h"
#include "gui/timeline_panel.h"
#include "gui/view/film.h"
#include "gui/view/playback.h"
#include "gui/view/quiz.h"
#include "gui/view/run_worker.h"
#include "gui/view/settings.h"
#include "gui/what_if_panel.h"
#include "gui/window.h"

namespace collscope::app {

class Screen {
 public:
  Screen(Window& window, Settings& settings);

  // Reads a scenario file and hands it to the worker. Bad input is returned (and shown).
  Status open_file(const std::string& path);
  void open_scenario(Scenario sc);
  // Where lessons are priced and split into nodes from now on (gui's --topology, --nodes
  // and --ranks-per-node); the "what if" window starts on that topology.
  void set_place(const view::LessonPlace& place);
  // Adopts a finished run, if any; returns true when a run finished (ok or not).
  bool poll();
  bool busy() const { return worker_.busy(); }
  const std::string& run_error() const { return work_.error; }
  std::optional<Error> last_run_error() const { return last_error_; }

  // What the Export panel's buttons do: write the trace now, or capture the next frame,
  // or one frame per step into a folder over the next frames. A failure that is known at
  // once is returned; later ones land in export_error().
  Status request_export(const ExportRequest& r);
  bool exporting() const { return seq_.active || !png_request_.empty() || film_; }
  // A GIF or video being filmed: frames rendered of all there are (total 0: none).
  ExportProgress export_progress() const;
  // What the last finished export said ("wrote lesson.gif (71 frames, 1.4 MB, 38.2 s)").
  const std::string& export_summary() const { return export_summary_; }
  const std::optional<Error>& export_error() const { return export_error_; }
  std::int32_t exported_frames() const { return exported_frames_; }

  void frame(float dt);  // between Window::new_frame and Window::render
  void after_render();   // captures the frame for exports that asked for it
  view::Playback& playback() { return pb_; }
  // The "what if" window (W): shown or not, and waiting for its pricing (headless).
  void show_what_if(bool on) { show_what_if_ = on; }
  void settle_what_if() { what_if_.settle(); }
  void show_keys(bool on) { show_keys_ = on; }
  // Quiz mode (Q): a question before every step, the step played once it is answered.
  void set_quiz(bool on);
  bool quiz_on() const { return quiz_on_; }
  const view::QuizSession& quiz() const { return quiz_; }
  void blank(bool on) { blank_ = on; }
  // The canvas as boxes or as the matrix (M): automatic lets the lesson and its ranks choose.
  void set_canvas_view(CanvasView v) { matrix_.choose(v); }
  bool matrix_shown() const { return !quiz_on_ && matrix_.shown(lesson_); }
  LessonState& lesson() { return lesson_; }
  // Compare mode: the lesson's calls run a second time by `algorithm` ("" = off), side by
  // side. An algorithm the lesson cannot use is returned (and shown) once the lesson is there.
  void set_compare(const std::string& algorithm) { compare_.choose(algorithm); }
  const ComparePanel& compare() const { return compare_; }
  bool compare_busy() const { return compare_.busy(); }

 private:
  void handle_keys();
  void left_panel(float w, float h);
  void keys_overlay(float w, float h);
  void rebuild_quiz();
  void submit(Scenario sc);  // to the worker, with the backend and place of the moment
  bool comparing() const { return compare_.ready() && !quiz_on_; }
  void sync_steps();  // the clock's length: the lesson's, or the longer side's when comparing

  Window& window_;
  Settings& settings_;
  view::RunWorker worker_;
  LessonState lesson_;
  view::Playback pb_;
  Highlight hl_;
  WorkStatus work_;
  std::optional<Error> last_error_;
  std::string file_;  // the lesson file, "" for a lesson built from parameters
  bool adopt_params_ = false;

  BrowserPanel browser_;
  ParamsPanel params_;
  ExportPanel export_;
  CanvasPanel canvas_;
  MatrixPanel matrix_;  // the canvas for many ranks; quiz mode keeps the boxes, whose cells it asks about
  CaptionPanel caption_;
  ControlsPanel controls_;
  TimelinePanel timeline_;
  WhatIfPanel what_if_;
  bool show_what_if_ = false;
  view::LessonPlace place_;
  bool per_call_colours_ = false;  // C: colours count each call's own inputs
  bool blank_ = false;             // B or .: a black screen, as a slide remote's blank key asks
  bool show_keys_ = false;         // ? or F1: the list of keys
  bool quiz_on_ = false;           // Q: quiz mode
  view::QuizSession quiz_;         // the lesson's questions and score (empty when off)
  QuizPanel quiz_panel_;
  CanvasQuiz canvas_quiz_;
  ComparePanel compare_;

  Status start_film(const ExportRequest& r);
  void film_frame();  // after_render: hands the frame to the film

  std::string png_request_;
  std::string export_summary_;
  std::unique_ptr<view::Film> film_;  // a GIF or video being filmed, one frame per rendered frame
  view::Playback film_saved_;         // where the lesson was before filming
  std::optional<Error> export_error_;
  std::int32_t exported_frames_ = 0;  // PNGs written by the last export
  struct Sequence {
    bool active = false;
    std::string folder;
    std::int32_t k = 0;
    view::Playback saved;
  } seq_;
};

}  // namespace collscope::app
