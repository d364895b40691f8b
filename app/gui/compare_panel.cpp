#include "gui/compare_panel.h"

#include <imgui.h>

#include <algorithm>

#include "gui/style.h"

namespace collscope::app {

namespace {

// The two sides' colours in the bars and on their labels (turquoise, magenta: neither a rank's nor an arrow's).
constexpr ImU32 kSideColour[2] = {IM_COL32(64, 224, 208, 255), IM_COL32(240, 96, 200, 255)};
constexpr int kBarRows = 4;  // steps, bytes, measured, predicted (view::compare_bars)

}  // namespace

void ComparePanel::choose(const std::string& algorithm) {
  if (algorithm == algorithm_) return;
  algorithm_ = algorithm;
  submit();
}

void ComparePanel::expect(const std::string& algorithm) {
  algorithm_ = algorithm;
  left_.reset();
  model_.reset();
  error_.reset();
}

void ComparePanel::lesson_changed(std::shared_ptr<const view::LessonRun> left, const std::string& backend) {
  left_ = std::move(left);
  backend_ = backend;
  submit();
}

void ComparePanel::submit() {
  model_.reset();
  error_.reset();
  if (algorithm_.empty() || !left_) return;
  auto other = view::compare_lesson(left_->scenario, algorithm_);
  if (!other) {
    // A lesson of another collective (changed in the parameters): compare mode ends, saying why.
    error_ = other.error();
    algorithm_.clear();
    return;
  }
  view::RunRequest r;
  r.scenario = std::move(*other);
  r.backend = backend_;
  r.place = place_;
  worker_.submit(std::move(r));
}

bool ComparePanel::poll() {
  auto r = worker_.take();
  if (!r) return false;
  if (worker_.busy()) return false;  // a newer request replaces this one
  if (!r->run) {
    error_ = r->run.error();
    return true;
  }
  right_.set_run(*r->run);
  model_.emplace(left_, *r->run);
  return true;
}

void ComparePanel::begin(float scale, float& bars_h, float& w, float& h) const {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  bars_h = ImGui::GetTextLineHeightWithSpacing() * (kBarRows + 1.4f) + 8 * scale;
  w = std::max(1.0f, (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2);
  h = std::max(1.0f, avail.y - bars_h - ImGui::GetStyle().ItemSpacing.y);
}

bool ComparePanel::begin_side(int side, const view::Playback& shared, float w, float h) {
  if (side == 1) ImGui::SameLine();
  ImGui::BeginChild(side == 0 ? "##compare-left" : "##compare-right", {w, h}, true,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const view::CompareSide& c = model_->side(side);
  ImGui::PushStyleColor(ImGuiCol_Text, kSideColour[side]);
  ImGui::Text("%s: %s", side == 0 ? "lesson" : "compared with", c.algorithm.c_str());
  ImGui::PopStyleColor();
  ImGui::SameLine();
  const view::Playback p = model_->at(side, shared);
  if (model_->done(side, shared)) {
    ImGui::TextColored({0.55f, 0.9f, 0.55f, 1}, "done: all %d steps", c.steps);
  } else {
    ImGui::TextDisabled("step %d of %d", p.applied + 1, c.steps);
  }
  return true;
}

void ComparePanel::end_side() { ImGui::EndChild(); }

void ComparePanel::draw_right(const view::Playback& shared, float scale, bool presenter) {
  canvas_.draw(right_, model_->at(1, shared), hl_, presenter, scale);
}

void ComparePanel::draw_bars(const view::Playback& shared, float scale, float h) const {
  ImGui::BeginChild("##compare-bars", {0, h}, true, ImGuiWindowFlags_NoScrollbar);
  const auto bars = model_->bars();
  const float line = ImGui::GetTextLineHeightWithSpacing();
  float label_w = 0, text_w = 0;
  for (const auto& b : bars) {
    label_w = std::max(label_w, ImGui::CalcTextSize(b.label.c_str()).x);
    for (const auto& t : b.text) text_w = std::max(text_w, ImGui::CalcTextSize(t.c_str()).x);
  }
  ImGui::TextDisabled("what each side needed (clock: step %d of %d; the shorter side waits at its end)",
                      std::min(shared.applied + 1, shared.steps), shared.steps);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float avail = ImGui::GetContentRegionAvail().x;
  const float gap = 8 * scale;
  // Each row: the label, then the two bars (left above right) in half a line each.
  const float bar_w = std::max(20.0f, (avail - label_w - gap * 3) / 2 - text_w - gap);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const ImVec2 row{o.x, o.y + line * static_cast<float>(i)};
    dl->AddText(row, ImGui::GetColorU32(ImGuiCol_Text), bars[i].label.c_str());
    for (int s = 0; s < 2; ++s) {
      const float x = row.x + label_w + gap + static_cast<float>(s) * (bar_w + text_w + gap * 2);
      const float y0 = row.y + line * 0.15f, y1 = row.y + line * 0.8f;
      dl->AddRectFilled({x, y0}, {x + bar_w, y1}, IM_COL32(70, 70, 80, 120), 2 * scale);
      dl->AddRectFilled({x, y0}, {x + std::max(2.0f, bar_w * bars[i].fraction[static_cast<std::size_t>(s)]), y1},
                        kSideColour[s], 2 * scale);
      dl->AddText({x + bar_w + gap / 2, row.y}, ImGui::GetColorU32(ImGuiCol_Text),
                  bars[i].text[static_cast<std::size_t>(s)].c_str());
    }
  }
  ImGui::Dummy({avail, line * static_cast<float>(bars.size())});
  ImGui::EndChild();
}

bool ComparePanel::draw_choice(const view::LessonRun* lesson) {
  std::optional<Collective> c;
  if (lesson) c = compared_collective(lesson->scenario);
  if (!c) {
    ImGui::TextDisabled("compare with: this lesson has no single collective to compare");
    return false;
  }
  const auto names = compare_algorithms(*c);
  bool changed = false;
  const char* shown = algorithm_.empty() ? "none" : algorithm_.c_str();
  if (ImGui::BeginCombo("compare with", shown)) {
    if (ImGui::Selectable("none", algorithm_.empty())) choose(""), changed = true;
    for (const auto& n : names)
      if (ImGui::Selectable(n.c_str(), n == algorithm_)) choose(n), changed = true;
    ImGui::EndCombo();
  }
  if (error_) ImGui::TextWrapped("%s", error_->format().c_str());
  else if (busy()) ImGui::TextDisabled("running %s ...", algorithm_.c_str());
  return changed;
}

}  // namespace collscope::app
