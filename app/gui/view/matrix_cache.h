// The matrix of the lesson the window shows, kept from frame to frame: the cells at full
// resolution, the drawn grid and its image are only rebuilt where a step changed them.
// Playing forward recomputes the cells a step writes (a ring's 1024 transfers, not a
// million cells); stepping back restores them from a journal of what each step
// overwrote; only a jump, a new lesson or other colours build everything afresh.
// It keeps a contribution cursor of its own, so the boxes' cells and the matrix never
// move each other's position.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "gui/view/lesson.h"
#include "gui/view/matrix.h"
#include "gui/view/matrix_grid.h"

namespace collscope::view {

class MatrixCache {
 public:
  // The shape shown while step `step` of `run` runs, colours counted by `scope`: another
  // run, scope or buffer starts the matrix over.
  const MatrixShape& prepare(const std::shared_ptr<const LessonRun>& run, ColourScope scope, std::int32_t step);
  // Brings the cells to `shown` steps applied and the marks to step `step` (-1 or the
  // step count: none), for a grid of `ranks_per_row` x `columns_per_col` matrix cells a
  // drawn cell and an image of `texel` texels a drawn cell; `landed`: the step's data has
  // arrived. Returns true when the image changed (to be uploaded again).
  bool update(std::int32_t shown, std::int32_t step, std::int32_t ranks_per_row, std::int32_t columns_per_col,
              std::int32_t texel, bool landed, const MatrixStyle& style);

  const MatrixShape& shape() const { return shape_; }
  const MatrixState* state() const { return state_ ? &*state_ : nullptr; }
  const MatrixMarks& marks() const { return marks_; }
  const MatrixGrid& grid() const { return grid_; }
  const MatrixPixels& pixels() const { return pixels_; }
  // Who element `index` of the shown buffer on `rank` holds data from, at the cells'
  // position (for the hover).
  std::vector<std::int32_t> contributors(std::int32_t rank, std::uint64_t index);
  // How often every cell was built afresh (playing forward, or back, never does it).
  std::int32_t full_builds() const { return full_builds_; }

 private:
  void reset();
  HoldersFn holders_at(std::int32_t applied);
  // Moves the cells to `shown`; appends what changed to `changed`; false: built afresh.
  bool move_to(std::int32_t shown, std::vector<std::size_t>& changed);
  void build(std::int32_t applied);

  std::shared_ptr<const LessonRun> run_;
  ColourScope scope_ = ColourScope::program;
  std::unique_ptr<ContributionCursor> cursor_;
  std::vector<std::int32_t> buffer_of_call_;  // matrix_buffer per call (-2: not yet known)
  MatrixShape shape_;
  std::optional<MatrixState> state_;
  // What each step overwrote, newest last: the journal stepping back replays.
  struct Overwritten {
    std::int32_t step = 0;
    std::vector<std::pair<std::size_t, CellColour>> cells;
  };
  std::deque<Overwritten> journal_;
  std::size_t journal_cells_ = 0;
  MatrixMarks marks_;
  bool marks_valid_ = false;
  MatrixGrid grid_;
  MatrixPixels pixels_;
  MatrixStyle style_;
  bool painted_ = false, landed_ = false;
  std::int32_t full_builds_ = 0;
};

// Cells the journal keeps at most (about 32 MiB); older steps are forgotten.
inline constexpr std::size_t kMatrixJournalCells = 1 << 20;

}  // namespace collscope::view
