#include "gui/quiz_panel.h"

#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_stdlib.h>

#include "gui/style.h"

namespace collscope::app {

void QuizPanel::prepare(const view::QuizSession& quiz, const LessonState&, const view::Playback& pb,
                        CanvasQuiz& canvas) {
  canvas = {};
  const view::QuizQuestion* q = quiz.question_at(pb.applied);
  if (!q || quiz.answered(q->step)) return;
  if (q->step != step_) {
    // A new question: fresh inputs.
    step_ = q->step;
    picked_.clear();
    ticked_.clear();
    typed_.clear();
  }
  canvas.hide_arrows = true;
  if (q->kind == QuizKind::changes) {
    canvas.rank = q->rank;
    canvas.buf = q->buf;
    for (std::uint64_t e : picked_)
      if (e % per_cell_ == 0) canvas.picked.push_back(e);
  }
}

void QuizPanel::answer(view::QuizSession& quiz, const view::QuizQuestion& q, view::Playback& pb) {
  view::QuizAnswer a;
  a.elements.assign(picked_.begin(), picked_.end());
  a.per_cell = per_cell_;
  for (std::size_t r = 0; r < ticked_.size(); ++r)
    if (ticked_[r]) a.ranks.push_back(static_cast<std::int32_t>(r));
  a.typed = typed_;
  const auto v = quiz.answer(q.step, a);
  last_ = v.message;
  last_right_ = v.correct;
  if (!v.counted) return;  // not a number: asked again
  // The answer is shown; the step plays, and stops before the next question.
  pb.jump(q.step);
  pb.playing = true;
}

void QuizPanel::draw(view::QuizSession& quiz, const LessonState& lesson, view::Playback& pb, const CanvasQuiz& canvas,
                     ImVec2 pos, float width, const Fonts& fonts) {
  if (!quiz.active()) return;
  const view::QuizQuestion* q = quiz.question_at(pb.applied);
  const bool open = q && !quiz.answered(q->step);
  if (open && canvas.clicked_first >= 0) {
    // A click picks a cell (every element of a chunk cell), or unpicks it.
    per_cell_ = std::max<std::uint64_t>(1, canvas.per_cell);
    const auto first = static_cast<std::uint64_t>(canvas.clicked_first);
    const bool on = picked_.count(first) == 0;
    for (std::uint64_t e = first; e < first + canvas.clicked_count; ++e)
      if (on) picked_.insert(e);
      else picked_.erase(e);
  }
  ImGui::SetNextWindowPos(pos, ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({width, 0});
  ImGui::PushStyleColor(ImGuiCol_WindowBg, to_u32(kQuizColour));
  ImGui::Begin("Quiz (Q to leave)", nullptr,
               ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings);
  if (!last_.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, last_right_ ? ImVec4(0.45f, 0.95f, 0.45f, 1) : ImVec4(1, 0.55f, 0.45f, 1));
    ImGui::TextWrapped("%s", last_.c_str());
    ImGui::PopStyleColor();
  }
  if (open) {
    ImGui::PushFont(fonts.caption);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(q->text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    bool submit = false;
    const std::int32_t ranks = lesson.run() ? lesson.run()->schedule.ranks : 0;
    switch (q->kind) {
      case QuizKind::changes: {
        std::string picked;
        for (auto e : picked_) picked += (picked.empty() ? "" : ", ") + std::to_string(e);
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("click cells of rank %d's row %s on the canvas (again to unpick); picked: %s", q->rank,
                           q->buffer.c_str(), picked.empty() ? "none" : picked.c_str());
        ImGui::PopStyleColor();
        break;
      }
      case QuizKind::sender:
      case QuizKind::complete:
        ticked_.resize(static_cast<std::size_t>(ranks), 0);
        for (std::int32_t r = 0; r < ranks; ++r) {
          if (r % 16 != 0) ImGui::SameLine();
          bool on = ticked_[static_cast<std::size_t>(r)] != 0;
          ImGui::PushID(r);
          if (ImGui::Checkbox(std::to_string(r).c_str(), &on)) ticked_[static_cast<std::size_t>(r)] = on;
          ImGui::PopID();
        }
        break;
      case QuizKind::value:
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
        if (ImGui::InputText("##value", &typed_, ImGuiInputTextFlags_EnterReturnsTrue)) submit = true;
        break;
    }
    if (ImGui::Button("Answer")) submit = true;
    if (submit) answer(quiz, *q, pb);
  } else if (pb.at_end()) {
    ImGui::TextUnformatted("The lesson is over.");
  }
  ImGui::TextDisabled("%s", quiz.score_text().c_str());
  ImGui::End();
  ImGui::PopStyleColor();
}

}  // namespace collscope::app
