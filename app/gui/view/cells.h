// The cells of the canvas for one position of the lesson: every rank's buffers as
// rows of cells, each cell coloured by the ranks whose data it holds. Large buffers
// are aggregated into chunk cells so that a row never has more than `max_cells`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collscope/run.h"
#include "collscope/schedule.h"
#include "gui/view/palette.h"

namespace collscope::view {

struct Cell {
  std::uint64_t first = 0;          // first element of the chunk
  std::uint64_t count = 0;          // elements in the chunk
  double min = 0, max = 0;          // values in the chunk (sampled when it is large)
  std::string text;                 // the value, when the chunk holds one value; "" otherwise
  std::vector<std::int32_t> ranks;  // contributors (union over the chunk's samples)
  CellColour colour;
};

struct BufferRow {
  std::int32_t buf = 0;
  std::string name;
  bool scratch = false;        // an algorithm's own workspace (BufferDecl::scratch)
  std::uint64_t elements = 0;  // of this buffer on this rank
  std::uint64_t per_cell = 1;  // elements per cell
  std::vector<Cell> cells;     // at most max_cells
};

struct RankCells {
  std::int32_t rank = 0;
  std::vector<BufferRow> rows;
};

struct CellsView {
  std::int32_t applied = 0;  // steps applied
  std::vector<RankCells> ranks;
  // Rows a box makes room for at every position of the lesson (the user's buffers and
  // the most scratch rows ever shown at once), so boxes keep their size while scratch
  // rows come and go.
  std::size_t rows_per_box = 1;
  std::uint32_t max_cells = 64;  // cells per row at most (build_cells' argument)
};

// Which buffers have rows after `applied` steps: every user buffer, and a scratch
// buffer (an algorithm's own workspace: "~sum#4", "~ring-partial#2") only while the
// step that runs next or the one that just ran reads or writes it (never at the end,
// which shows the results); indexed by buffer.
std::vector<bool> buffers_shown(const Schedule& s, std::int32_t applied);

// Source ranks of element `index` of `buf` on `rank`, sorted and unique.
using ContributorsFn =
    std::function<std::vector<std::int32_t>(std::int32_t rank, std::int32_t buf, std::uint64_t index)>;

inline constexpr std::uint32_t kMaxCellsPerRow = 64;

// Cells per row and elements per cell for a buffer of `elements`.
std::uint64_t elements_per_cell(std::uint64_t elements, std::uint32_t max_cells = kMaxCellsPerRow);

CellsView build_cells(const Schedule& s, const HostMemory& memory, const ContributorsFn& contributors,
                      std::int32_t applied, std::uint32_t max_cells = kMaxCellsPerRow);

// Moves `v` from `step` steps applied to `step + 1`: rebuilds only the cells that the
// transfers of step `step` write (everything when the scratch rows shown change) (memory and contributors already show
// the step done). Playing forward this touches a handful of cells instead of every one; the result is the same as
// build_cells(..., step + 1).
void advance_cells(CellsView& v, const Schedule& s, const HostMemory& memory, const ContributorsFn& contributors,
                   std::int32_t step);

// The cell of `row` that holds element `index` (-1 when outside).
std::int32_t cell_of(const BufferRow& row, std::uint64_t index);

}  // namespace collscope::view
