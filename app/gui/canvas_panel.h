// The canvas: ranks as boxes (ring, tree or grid), each buffer a row of cells coloured
// by whose data they hold, and the current step's transfers as arrows with tokens.
#pragma once

#include "gui/lesson_state.h"
#include "gui/view/playback.h"

namespace collscope::app {

class CanvasPanel {
 public:
  // Draws into the current ImGui window's remaining space.
  void draw(LessonState& lesson, const view::Playback& pb, Highlight& hl, bool presenter, float scale);
};

}  // namespace collscope::app
