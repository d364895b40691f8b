// The lesson the window shows, and the views derived from it, cached by position so
// that a frame only rebuilds what changed. Plain state; the panels read it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/view/arrows.h"
#include "gui/view/cells.h"
#include "gui/view/lesson.h"
#include "gui/view/timeline.h"

namespace collscope::app {

// What the pointer is over, shared between the canvas and the timeline so that each
// can underline what the other points at (written in one frame, read in the next).
struct Highlight {
  std::int32_t rank = -1;
  std::int32_t step = -1;
  std::int32_t transfer = -1;
};

class LessonState {
 public:
  void set_run(std::shared_ptr<const view::LessonRun> run);
  const view::LessonRun* run() const { return run_.get(); }
  const std::shared_ptr<const view::LessonRun>& shared_run() const { return run_; }
  std::int32_t steps() const { return run_ ? static_cast<std::int32_t>(run_->schedule.steps.size()) : 0; }

  // Cells after `applied` steps; nullptr (and error()) when the bytes cannot be restored.
  const view::CellsView* cells(std::int32_t applied);
  // Arrows of step `step`, tokens coloured as the data is when the step begins.
  const std::vector<view::Arrow>& arrows(std::int32_t step);
  const view::TimelineView& timeline() const { return timeline_; }
  // Change whenever what cells() or timeline() returns changes: for caches of drawings.
  std::uint64_t cells_version() const { return cells_version_; }
  std::uint64_t run_version() const { return run_version_; }
  const std::string& error() const { return error_; }
  // What the colours count: the program's inputs across calls (default) or each call's own.
  void set_colour_scope(view::ColourScope scope);
  view::ColourScope colour_scope() const { return scope_; }

 private:
  view::ColourScope scope_ = view::ColourScope::program;
  std::shared_ptr<const view::LessonRun> run_;
  std::unique_ptr<view::MemoryTimeline> memory_;
  std::unique_ptr<view::ContributionCursor> cursor_;
  std::optional<view::CellsView> cells_;
  std::int32_t arrows_step_ = -1;
  std::vector<view::Arrow> arrows_;
  view::TimelineView timeline_;
  std::string error_;
  std::uint64_t cells_version_ = 0, run_version_ = 0;
};

}  // namespace collscope::app
