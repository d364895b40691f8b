// Quiz mode's window (Q, `collscope gui --quiz`): the question of the step that runs
// next, the inputs that answer it (cells clicked on the canvas, ranks ticked, a value
// typed), the verdict of the last answer and the lesson's score. The questions and the
// rules are view/quiz.h; this panel only draws them and hands the answer over.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "gui/canvas_panel.h"
#include "gui/lesson_state.h"
#include "gui/view/playback.h"
#include "gui/view/quiz.h"
#include "gui/window.h"

namespace collscope::app {

// The quiz window's background: a colour nothing else in the window uses, so that a
// screenshot shows where the question is.
inline constexpr view::Rgba kQuizColour{0.20f, 0.12f, 0.34f, 0.96f};

class QuizPanel {
 public:
  // Sets what the canvas needs this frame (hide the arrows, the pickable row) from the
  // question at pb.applied; call before the canvas draws.
  void prepare(const view::QuizSession& quiz, const LessonState& lesson, const view::Playback& pb, CanvasQuiz& canvas);
  // Takes the canvas's click, and draws the window centred at `pos`, `width` wide.
  // An answer is scored, and the step then plays.
  void draw(view::QuizSession& quiz, const LessonState& lesson, view::Playback& pb, const CanvasQuiz& canvas,
            ImVec2 pos, float width, const Fonts& fonts);

 private:
  void answer(view::QuizSession& quiz, const view::QuizQuestion& q, view::Playback& pb);
  std::int32_t step_ = -1;  // the question the inputs belong to
  std::set<std::uint64_t> picked_;
  std::uint64_t per_cell_ = 1;
  std::vector<char> ticked_;
  std::string typed_;
  std::string last_;  // the verdict of the last answer
  bool last_right_ = false;
};

}  // namespace collscope::app
