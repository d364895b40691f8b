#include "gui/lesson_state.h"

namespace collscope::app {

void LessonState::set_run(std::shared_ptr<const view::LessonRun> run) {
  run_ = std::move(run);
  cells_.reset();
  ++cells_version_;
  ++run_version_;
  arrows_step_ = -1;
  arrows_.clear();
  error_.clear();
  memory_ = std::make_unique<view::MemoryTimeline>(run_);
  cursor_ = std::make_unique<view::ContributionCursor>(run_->schedule, scope_);
  timeline_ = view::build_timeline(run_->schedule, run_->outcome.record);
}

void LessonState::set_colour_scope(view::ColourScope scope) {
  if (scope == scope_) return;
  scope_ = scope;
  if (!run_) return;
  cursor_ = std::make_unique<view::ContributionCursor>(run_->schedule, scope_);
  cells_.reset();
  ++cells_version_;
  arrows_step_ = -1;
  arrows_.clear();
}

const view::CellsView* LessonState::cells(std::int32_t applied) {
  if (!run_) return nullptr;
  if (cells_ && cells_->applied == applied) return &*cells_;
  auto mem = memory_->at(applied);
  if (!mem) {
    error_ = mem.error().format();
    return cells_ ? &*cells_ : nullptr;
  }
  cursor_->seek(applied);
  const auto& cur = *cursor_;
  const auto contributors = [&cur](std::int32_t r, std::int32_t b, std::uint64_t i) { return cur.ranks_of(r, b, i); };
  if (cells_ && cells_->applied + 1 == applied)  // playing forward: only what the step wrote
    view::advance_cells(*cells_, run_->schedule, *mem, contributors, applied - 1);
  else cells_ = view::build_cells(run_->schedule, *mem, contributors, applied);
  ++cells_version_;
  return &*cells_;
}

const std::vector<view::Arrow>& LessonState::arrows(std::int32_t step) {
  if (!run_ || step == arrows_step_) return arrows_;
  cursor_->seek(step);
  const auto& cur = *cursor_;
  arrows_ = view::build_arrows(
      run_->schedule, step, [&cur](std::int32_t r, std::int32_t b, std::uint64_t i) { return cur.ranks_of(r, b, i); });
  arrows_step_ = step;
  return arrows_;
}

}  // namespace collscope::app
