#include "gui/view/panels.h"

#include <algorithm>

namespace collscope::view {

Panels panel_layout(float w, float h, float scale, bool presenter, bool show_timeline, float left_fraction,
                    float timeline_fraction) {
  Panels p;
  if (!presenter) {
    p.left = left_fraction > 0 ? std::clamp(left_fraction, kMinLeftFraction, kMaxLeftFraction) * w
                               : std::min(w * 0.4f, std::max(w * 0.2f, 300.0f * scale));
  }
  // The caption band: a third of the screen in presenter mode, where it is the point.
  p.caption_h = presenter ? h * 0.34f : std::min(h * 0.4f, 175.0f * scale);
  if (!presenter && show_timeline) {
    p.timeline_h = std::clamp(timeline_fraction, kMinTimelineFraction, kMaxTimelineFraction) * h;
    p.timeline_h = std::min(p.timeline_h, std::max(0.0f, h - p.caption_h - 0.2f * h));
  }
  p.canvas_h = h - p.caption_h - p.timeline_h;
  return p;
}

}  // namespace collscope::view
