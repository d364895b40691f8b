// The words under the canvas: which program call runs, the step's phase and caption,
// its bytes, and predicted against measured time.
#pragma once

#include <cstdint>
#include <string>

#include "gui/view/lesson.h"

namespace collscope::view {

struct CaptionView {
  std::string title;       // the lesson's title
  std::string call;        // "call 1 of 2: allreduce, ring, 4 ranks, count 8, sum"
  std::string position;    // "step 3 of 6" / "inputs" / "done"
  std::string phase;       // "reduce-scatter"
  std::string caption;     // the step's caption (or the call's at the end)
  std::uint64_t bytes = 0; // moved between ranks in this step
  double predicted_us = -1;  // -1 = unknown
  // The cost model describes the cpu backend: on another one the prediction says so
  // (" (cpu cost model)"), so that nobody reads it as a GPU's.
  std::string predicted_note;
  double measured_us = -1;
  std::string verdict;     // "verified: postcondition of allreduce (call 0) (32 elements checked)" / the error
  bool verified = false;
};

// For the step that runs next from position `applied` (the last step at the end).
CaptionView build_caption(const LessonRun& run, std::int32_t applied);

}  // namespace collscope::view
