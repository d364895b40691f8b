#include "gui/controls_panel.h"

#include <GLFW/glfw3.h>
#include <imgui.h>

namespace collscope::app {

void ControlsPanel::draw(view::Playback& pb) {
  if (ImGui::Button("|< restart")) pb.restart();
  ImGui::SameLine();
  if (ImGui::Button("< back")) pb.back();
  ImGui::SameLine();
  if (ImGui::Button(pb.playing ? "pause" : "play", ImVec2(ImGui::GetFontSize() * 4, 0))) pb.toggle();
  ImGui::SameLine();
  if (ImGui::Button("forward >")) pb.forward();
  ImGui::SameLine();
  // Shown 1-based like the caption ("step 3 of 6"); one past the last step is the end.
  int k = pb.applied + 1;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::SliderInt("##step", &k, 1, pb.steps + 1, k > pb.steps ? "end" : "step %d")) pb.jump(k - 1);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  ImGui::SliderFloat("steps/s", &pb.speed, 0.1f, 4.0f, "%.2f", ImGuiSliderFlags_Logarithmic);
}

void ControlsPanel::handle_keys(view::Playback& pb) {
  if (ImGui::GetIO().WantTextInput) return;
  if (ImGui::IsKeyPressed(GLFW_KEY_SPACE, false)) pb.toggle();
  // PageDown and PageUp: what presentation clickers send (view/keys.h).
  if (ImGui::IsKeyPressed(GLFW_KEY_RIGHT) || ImGui::IsKeyPressed(GLFW_KEY_PAGE_DOWN)) pb.forward();
  if (ImGui::IsKeyPressed(GLFW_KEY_LEFT) || ImGui::IsKeyPressed(GLFW_KEY_PAGE_UP)) pb.back();
  if (ImGui::IsKeyPressed(GLFW_KEY_HOME, false)) pb.restart();
}

}  // namespace collscope::app
