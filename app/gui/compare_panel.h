// Compare mode in the window: the lesson's calls run a second time with another
// algorithm (on a worker of its own), the canvas area split into the two runs, one
// step position for both, and a strip of bars saying what each side needed. The model
// is gui/view/compare.h; this draws it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "gui/canvas_panel.h"
#include "gui/lesson_state.h"
#include "gui/view/compare.h"
#include "gui/view/run_worker.h"

namespace collscope::app {

class ComparePanel {
 public:
  // The second algorithm ("" = compare mode off). Takes effect for the lesson on screen
  // (when one is) and the ones adopted later.
  void choose(const std::string& algorithm);
  const std::string& algorithm() const { return algorithm_; }
  // A new lesson is on its way: it compares with `algorithm` ("" = none) once it is there.
  void expect(const std::string& algorithm);
  // Where both sides are priced and split into nodes (the window's --topology).
  void set_place(const view::LessonPlace& place) { place_ = place; }
  // The lesson on screen changed: runs it again with the chosen algorithm (or, when the
  // lesson has no such algorithm, ends compare mode with error() saying why).
  void lesson_changed(std::shared_ptr<const view::LessonRun> left, const std::string& backend);
  // Adopts a finished second run; true when one finished (ok or not).
  bool poll();
  bool busy() const { return worker_.busy(); }
  // Both runs are there and agree with the lesson on screen.
  bool ready() const { return model_.has_value(); }
  const view::CompareModel* model() const { return model_ ? &*model_ : nullptr; }
  const std::optional<Error>& error() const { return error_; }

  // The canvas area: both canvases (left the lesson, right the second algorithm), each
  // with its label, and the bars below. `left` draws the lesson's canvas into the
  // current ImGui region (the window's own canvas panel, so that quiz and highlights work).
  template <class DrawLeft>
  void draw(const view::Playback& shared, float scale, bool presenter, DrawLeft&& left) {
    float bars_h = 0, w = 0, h = 0;
    begin(scale, bars_h, w, h);
    if (begin_side(0, shared, w, h)) left(model_->at(0, shared));
    end_side();
    if (begin_side(1, shared, w, h)) draw_right(shared, scale, presenter);
    end_side();
    draw_bars(shared, scale, bars_h);
  }
  // The combo of the View section: "compare with: none / <algorithms of the collective>".
  // Returns true when the choice changed.
  bool draw_choice(const view::LessonRun* lesson);

 private:
  void begin(float scale, float& bars_h, float& w, float& h) const;
  bool begin_side(int side, const view::Playback& shared, float w, float h);
  void end_side();
  void draw_right(const view::Playback& shared, float scale, bool presenter);
  void draw_bars(const view::Playback& shared, float scale, float h) const;
  void submit();

  std::string algorithm_;
  std::shared_ptr<const view::LessonRun> left_;
  std::string backend_ = "cpu";
  view::LessonPlace place_;
  view::RunWorker worker_;
  LessonState right_;
  std::optional<view::CompareModel> model_;
  std::optional<Error> error_;
  CanvasPanel canvas_;
  Highlight hl_;
};

}  // namespace collscope::app
