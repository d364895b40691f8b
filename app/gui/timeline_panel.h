// The timeline: measured transfers per rank on one clock, step boundaries, hover
// details; a click jumps to the step; hovering underlines the transfer on the canvas.
#pragma once

#include "gui/lesson_state.h"
#include "gui/view/playback.h"

namespace collscope::app {

class TimelinePanel {
 public:
  void draw(const LessonState& lesson, view::Playback& pb, Highlight& hl, float scale);
};

}  // namespace collscope::app
