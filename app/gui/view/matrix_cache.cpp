#include "gui/view/matrix_cache.h"

#include <algorithm>
#include <cstring>

namespace collscope::view {

namespace {

// Forward jumps of at most this many steps go step by step (each touching only what
// its step writes); longer ones build afresh.
constexpr std::int32_t kStepByStep = 32;

bool same_style(const MatrixStyle& a, const MatrixStyle& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

void MatrixCache::reset() {
  state_.reset();
  journal_.clear();
  journal_cells_ = 0;
  marks_ = {};
  marks_valid_ = false;
  grid_ = {};
  pixels_ = {};
  painted_ = false;
}

const MatrixShape& MatrixCache::prepare(const std::shared_ptr<const LessonRun>& run, ColourScope scope,
                                        std::int32_t step) {
  if (run != run_ || scope != scope_ || !cursor_) {
    run_ = run;
    scope_ = scope;
    cursor_ = run_ ? std::make_unique<ContributionCursor>(run_->schedule, scope_) : nullptr;
    buffer_of_call_.assign(run_ ? run_->schedule.calls.size() + 1 : 0, -2);
    shape_ = {};
    reset();
  }
  if (!run_) return shape_;
  const Schedule& s = run_->schedule;
  // The buffer of the step's call, looked up once per call (it reads all its transfers).
  const auto n = static_cast<std::int32_t>(s.steps.size());
  std::size_t key = s.calls.size();  // no steps: the lesson's own choice
  if (n > 0) {
    const std::int32_t call = s.steps[static_cast<std::size_t>(std::clamp(step, 0, n - 1))].call;
    if (call >= 0 && static_cast<std::size_t>(call) < s.calls.size()) key = static_cast<std::size_t>(call);
  }
  if (buffer_of_call_[key] == -2) buffer_of_call_[key] = matrix_buffer(s, std::clamp(step, 0, std::max(0, n - 1)));
  const std::int32_t buf = buffer_of_call_[key];
  if (buf != shape_.buf || shape_.ranks == 0) {
    shape_ = matrix_shape(s, buf);
    reset();
  }
  return shape_;
}

HoldersFn MatrixCache::holders_at(std::int32_t applied) {
  cursor_->seek(applied);
  const ContributionCursor& cur = *cursor_;
  return [&cur](std::int32_t r, std::int32_t b, std::uint64_t i, std::vector<std::uint64_t>& w) {
    cur.bits_of(r, b, i, w);
  };
}

std::vector<std::int32_t> MatrixCache::contributors(std::int32_t rank, std::uint64_t index) {
  if (!cursor_ || !state_ || shape_.buf < 0) return {};
  cursor_->seek(state_->applied);
  return cursor_->ranks_of(rank, shape_.buf, index);
}

void MatrixCache::build(std::int32_t applied) {
  state_ = build_matrix(run_->schedule, shape_, holders_at(applied), applied);
  journal_.clear();
  journal_cells_ = 0;
  ++full_builds_;
}

bool MatrixCache::move_to(std::int32_t shown, std::vector<std::size_t>& changed) {
  const Schedule& s = run_->schedule;
  std::int32_t at = state_->applied;
  if (shown > at && shown - at <= kStepByStep) {
    for (; at < shown; ++at) {
      Overwritten w;
      w.step = at;
      advance_matrix(*state_, s, holders_at(at + 1), at, &changed, &w.cells);
      journal_cells_ += w.cells.size();
      journal_.push_back(std::move(w));
    }
    while (journal_cells_ > kMatrixJournalCells && !journal_.empty()) {
      journal_cells_ -= journal_.front().cells.size();
      journal_.pop_front();
    }
    return true;
  }
  // Back, as far as the journal reaches: each step's overwritten cells put back.
  const auto back = static_cast<std::size_t>(std::max(0, at - shown));
  if (shown < at && journal_.size() >= back && journal_.back().step == at - 1 &&
      journal_[journal_.size() - back].step == shown) {
    for (; at > shown; --at) {
      const auto& cells = journal_.back().cells;
      for (auto it = cells.rbegin(); it != cells.rend(); ++it) {
        state_->cells[it->first] = it->second;
        changed.push_back(it->first);
      }
      journal_cells_ -= cells.size();
      journal_.pop_back();
    }
    state_->applied = shown;
    return true;
  }
  build(shown);
  return false;
}

bool MatrixCache::update(std::int32_t shown, std::int32_t step, std::int32_t ranks_per_row,
                         std::int32_t columns_per_col, std::int32_t texel, bool landed, const MatrixStyle& style) {
  if (!run_ || shape_.buf < 0 || shape_.columns == 0) return false;
  const Schedule& s = run_->schedule;
  shown = std::clamp<std::int32_t>(shown, 0, static_cast<std::int32_t>(s.steps.size()));
  std::vector<std::size_t> changed, dirty;
  bool regrid = grid_.cells.empty() || grid_.ranks_per_row != ranks_per_row || grid_.columns_per_col != columns_per_col;
  if (!state_) {
    build(shown);
    regrid = true;
  } else if (state_->applied != shown && !move_to(shown, changed)) {
    regrid = true;
  }
  if (regrid) {
    grid_ = downsample(*state_, ranks_per_row, columns_per_col);
    marks_valid_ = false;
    painted_ = false;
  } else {
    update_grid(grid_, *state_, changed, &dirty);
  }
  if (!marks_valid_ || marks_.step != (step >= 0 && step < static_cast<std::int32_t>(s.steps.size()) ? step : -1)) {
    marks_ = build_marks(s, shape_, step);
    mark_grid(grid_, marks_, &dirty);
    marks_valid_ = true;
  }
  if (!painted_ || pixels_.texel != std::max(1, texel) || !same_style(style, style_)) {
    style_ = style;
    landed_ = landed;
    pixels_ = paint_matrix(grid_, style_, texel, landed_);
    painted_ = true;
    return true;
  }
  if (landed != landed_) {
    landed_ = landed;
    dirty.insert(dirty.end(), grid_.marked.begin(), grid_.marked.end());
  }
  repaint_cells(pixels_, grid_, style_, landed_, dirty);
  return !dirty.empty();
}

}  // namespace collscope::view
