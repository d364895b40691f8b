// Step controls: restart, back, play/pause, forward, jump to a step, speed; and the
// keyboard shortcuts that do the same (Space, Left, Right, Home).
#pragma once

#include "gui/view/playback.h"

namespace collscope::app {

class ControlsPanel {
 public:
  void draw(view::Playback& pb);
  // Space, Right/Left, Home; ignored while a text field has the keyboard.
  static void handle_keys(view::Playback& pb);
};

}  // namespace collscope::app
