#include "gui/style.h"

namespace collscope::app {

std::array<float, 3> background_colour(bool presenter) {
  // The panels draw no background of their own (see kPanelFlags): this is their colour.
  return presenter ? std::array<float, 3>{0.0f, 0.0f, 0.0f} : std::array<float, 3>{0.06f, 0.06f, 0.07f};
}

void apply_style(bool presenter, float scale) {
  ImGuiStyle style;
  ImGui::StyleColorsDark(&style);
  style.WindowRounding = 4;
  style.FrameRounding = 3;
  style.WindowBorderSize = presenter ? 0 : 1;
  const auto bg = background_colour(presenter);
  style.Colors[ImGuiCol_WindowBg] = ImVec4(bg[0], bg[1], bg[2], 1);
  if (presenter) {
    // Pure black and white, saturated accents: projectors wash out mid-tones.
    auto& c = style.Colors;
    c[ImGuiCol_WindowBg] = ImVec4(0, 0, 0, 1);
    c[ImGuiCol_ChildBg] = ImVec4(0, 0, 0, 1);
    c[ImGuiCol_Text] = ImVec4(1, 1, 1, 1);
    c[ImGuiCol_Button] = ImVec4(0.15f, 0.35f, 0.75f, 1);
    c[ImGuiCol_ButtonHovered] = ImVec4(0.25f, 0.5f, 0.95f, 1);
    c[ImGuiCol_FrameBg] = ImVec4(0.18f, 0.18f, 0.2f, 1);
  }
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

}  // namespace collscope::app
