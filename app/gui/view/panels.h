// Where the window's panels go: the lesson panel on the left, then canvas, caption band
// and timeline stacked on the right. The user moves the two boundaries by dragging
// them; the fractions persist in the settings.
#pragma once

namespace collscope::view {

struct Panels {
  float left = 0;                                     // width of the left panel (0 in presenter mode)
  float canvas_h = 0, caption_h = 0, timeline_h = 0;  // they add up to the window height
};

// A window of w x h pixels at UI scale `scale`. left_fraction: the left panel's share of
// the width, 0 for the automatic width; timeline_fraction: the timeline's share of the
// height. Fractions out of range are clamped, and the canvas always keeps a fifth of the
// height.
Panels panel_layout(float w, float h, float scale, bool presenter, bool show_timeline, float left_fraction,
                    float timeline_fraction);

inline constexpr float kMinLeftFraction = 0.1f, kMaxLeftFraction = 0.6f;
inline constexpr float kMinTimelineFraction = 0.05f, kMaxTimelineFraction = 0.6f;

}  // namespace collscope::view
