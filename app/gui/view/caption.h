// The words under the canvas: which program call runs, the step's phase and caption,
// its bytes, and predicted against measured time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui/view/lesson.h"

namespace collscope::view {

struct CaptionView {
  std::string title;         // the lesson's title
  std::string call;          // "call 1 of 2: allreduce, ring, 4 ranks, count 8, sum"
  std::string position;      // "step 3 of 6" / "inputs" / "done"
  std::string phase;         // "reduce-scatter"
  std::string caption;       // the step's caption (or the call's at the end)
  std::uint64_t bytes = 0;   // moved between ranks in this step
  double predicted_us = -1;  // -1 = unknown
  // The cost model describes the cpu backend: on another one the prediction says so
  // (" (cpu cost model)"), so that nobody reads it as a GPU's.
  std::string predicted_note;
  double measured_us = -1;
  std::string verdict;  // "verified: postcondition of allreduce (call 0) (32 elements checked)" / the error
  bool verified = false;
};

// What a lesson is, for the Parameters panel: a lesson of one collective is what the
// parameters describe; any other (point-to-point ops, several calls) is named by its
// title, its calls and ops and its ranks, since the parameters cannot say it.
struct LessonSummary {
  bool single_collective = false;  // one collective call on every rank: the parameters show it
  std::string title;
  std::vector<std::string> lines;  // "8 ranks, float32", "3 calls: ...", "point-to-point: send, recv"
};
LessonSummary summarise_lesson(const Scenario& sc, const Schedule& s);

// "step 3 of 6" for the state before step index 2, "done: all 6 steps ran" at the end:
// the window's numbering (1-based, of the step that runs next), used by the caption and
// by `collscope gui --step K --screenshot` when it says what it drew.
std::string step_position(std::int32_t applied, std::int32_t steps);

// For the step that runs next from position `applied` (the last step at the end).
CaptionView build_caption(const LessonRun& run, std::int32_t applied);

}  // namespace collscope::view
