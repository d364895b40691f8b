// The words of the step: program call, phase and caption, bytes, predicted vs measured
// time, the verdict of the checks, and the worker's progress or error.
#pragma once

#include <string>

#include "gui/lesson_state.h"
#include "gui/window.h"

namespace collscope::app {

struct WorkStatus {
  bool busy = false;
  double seconds = 0;
  std::string error;  // the last failed run ("" = none)
};

class CaptionPanel {
 public:
  void draw(const LessonState& lesson, std::int32_t applied, const WorkStatus& work, const Fonts& fonts,
            bool presenter);
};

}  // namespace collscope::app
