// The look of the window: a dark theme for screens, and presenter mode's high
// contrast theme that still reads from the back of a lit classroom.
#pragma once

#include <imgui.h>

#include <array>

#include "gui/view/palette.h"

namespace collscope::app {

void apply_style(bool presenter, float scale);
// Flags of the panels that tile the window. They leave their background to the clear
// colour (a full-screen blended quad costs a software renderer as much as everything
// else), and stay below the handles between them when clicked.
inline constexpr ImGuiWindowFlags kPanelFlags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                                ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoBackground |
                                                ImGuiWindowFlags_NoBringToFrontOnFocus;
std::array<float, 3> background_colour(bool presenter);

inline ImU32 to_u32(view::Rgba c, float alpha = 1.0f) {
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, c.a * alpha));
}

// Colours of transfers: copies are cool, reductions warm, so they differ even in grey.
inline constexpr view::Rgba kCopyColour{0.45f, 0.75f, 1.0f, 1.0f};
inline constexpr view::Rgba kReduceColour{1.0f, 0.45f, 0.25f, 1.0f};
inline constexpr view::Rgba kScaleColour{0.75f, 0.75f, 0.75f, 1.0f};
inline constexpr view::Rgba kComputeColour{0.62f, 0.86f, 0.55f, 1.0f};  // a compute span's badge

}  // namespace collscope::app
