// The timeline: measured transfers per rank on one clock, step boundaries, hover
// details; a click jumps to the step; hovering underlines the transfer on the canvas.
#pragma once

#include <vector>

#include "gui/image_texture.h"
#include "gui/lesson_state.h"
#include "gui/view/playback.h"
#include "gui/view/timeline.h"

namespace collscope::app {

class TimelinePanel {
 public:
  void draw(const LessonState& lesson, view::Playback& pb, Highlight& hl, float scale);

 private:
  // The transfers as one image, rebuilt when the timeline, its width or the lit rank change.
  std::uint64_t pixels_of_ = 0;  // the lesson's run_version() (0: none yet)
  std::int32_t pixels_width_ = 0;
  std::int32_t lit_rank_ = -2;
  view::TimelinePixels pixels_;
  ImageTexture image_;
};

}  // namespace collscope::app
