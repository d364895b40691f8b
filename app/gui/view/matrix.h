// The matrix view of a lesson, for many ranks: one row per rank, one column per chunk of
// one buffer, each cell coloured by the ranks whose data it holds (the colours of the
// canvas's cells, from the same contribution sets), and the current step's transfers as
// marks on the cells they write, with a tick per rank in two margin columns for what it
// sends and what it receives. A ring all-reduce reads as a diagonal band: in the
// reduce-scatter half the partial sums grow along it, in the all-gather half the
// finished (gold) chunks spread from it until the whole matrix is gold.
//
// This file holds the matrix at full resolution (MatrixState, one cell per rank and
// column) and a step's marks; matrix_grid.h turns them into what is drawn.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "collscope/scenario.h"
#include "collscope/schedule.h"
#include "gui/view/cells.h"
#include "gui/view/palette.h"

namespace collscope::view {

// From this many ranks the canvas shows the matrix unless told otherwise.
inline constexpr std::int32_t kMatrixFromRanks = 32;
// Columns at full resolution at most: longer buffers put several chunks in a column.
inline constexpr std::uint32_t kMaxMatrixColumns = 1024;

// Whether the canvas shows the matrix: the user's choice (M, the View checkbox,
// `--matrix` / `--boxes`) if any, else the lesson's "view", else from kMatrixFromRanks.
bool matrix_wanted(CanvasView choice, CanvasView lesson, std::int32_t ranks);

// What the matrix shows: which buffer, cut into which columns.
struct MatrixShape {
  std::int32_t buf = -1;  // the buffer shown (-1: none, a lesson without user buffers)
  std::string name;
  std::int32_t ranks = 0;
  std::uint64_t elements = 0;    // the longest row: the buffer's largest count over the ranks
  std::uint64_t chunk = 1;       // the schedule's chunk: every transfer into or out of the buffer
                                 // starts and ends on a multiple of it
  std::uint64_t per_column = 1;  // elements per column: whole chunks, so that columns <= the maximum
  std::int32_t columns = 0;
};

// The buffer the matrix shows while step `step` runs (or after the last one): the user
// buffer that the step's call writes most, else the one the whole lesson writes most,
// else its first user buffer; -1 when it has none.
std::int32_t matrix_buffer(const Schedule& s, std::int32_t step);
MatrixShape matrix_shape(const Schedule& s, std::int32_t buf, std::uint32_t max_columns = kMaxMatrixColumns);

// Every cell of the matrix after `applied` steps: ranks x columns, row by row. A cell
// past the end of a rank's (shorter) buffer has fill.a == 0 and coverage none.
struct MatrixState {
  MatrixShape shape;
  std::int32_t applied = -1;
  std::vector<CellColour> cells;
  const CellColour& at(std::int32_t rank, std::int32_t column) const {
    return cells[static_cast<std::size_t>(rank) * static_cast<std::size_t>(shape.columns) +
                 static_cast<std::size_t>(column)];
  }
};

// Which ranks' data element `index` of `buf` on `rank` holds, as bits (rank r is bit
// r % 64 of word r / 64): ContributionCursor::bits_of.
using HoldersFn =
    std::function<void(std::int32_t rank, std::int32_t buf, std::uint64_t index, std::vector<std::uint64_t>& words)>;

// colour_of for a set given as bits, with the same colours: a mix adds up the colours
// of 64 ranks at a time where a word is full (each full word's sum is kept), so a
// million chunks of 1024 ranks colour in a fraction of a second.
class HolderColours {
 public:
  explicit HolderColours(std::int32_t world);
  std::int32_t world() const { return world_; }
  // `complete`: every sample of the cell holds every rank (a cell of several chunks).
  CellColour colour(const std::vector<std::uint64_t>& words, bool complete = true) const;

 private:
  std::int32_t world_;
  std::vector<Rgba> rank_;      // rank_colour of each rank
  std::vector<Rgba> word_sum_;  // the sum of the colours of each word's 64 ranks
};

// The colour of one column of one rank, as the canvas colours a chunk cell: colour_of
// its holders (its first element; the first, middle and last when a column holds several
// chunks, complete only when all three are).
CellColour column_colour(const Schedule& s, const MatrixShape& shape, const HoldersFn& holders,
                         const HolderColours& colours, std::int32_t rank, std::int32_t column);

MatrixState build_matrix(const Schedule& s, const MatrixShape& shape, const HoldersFn& holders, std::int32_t applied);
// Moves `m` from `step` steps applied to `step + 1` (`holders` already show the step
// done): only the cells the step's transfers write are recomputed, their indices
// appended to `changed` and their colours before the step to `overwritten`. The result
// is build_matrix(..., step + 1).
void advance_matrix(MatrixState& m, const Schedule& s, const HoldersFn& holders, std::int32_t step,
                    std::vector<std::size_t>* changed = nullptr,
                    std::vector<std::pair<std::size_t, CellColour>>* overwritten = nullptr);

// What a transfer does to the cell it writes, strongest last: a drawn cell that holds
// several marks shows the strongest.
enum class MarkKind : std::uint8_t { none, signal, scale, copy, reduce };
MarkKind mark_of(const Transfer& t);

// A transfer of the step into the shown buffer: rank `rank`'s columns [first, last].
struct MatrixMark {
  std::int32_t rank = 0, first = 0, last = 0;
  std::int32_t from = 0;  // the sending rank
  MarkKind kind = MarkKind::copy;
};

struct MatrixMarks {
  std::int32_t step = -1;  // -1: no step runs (the end of the lesson)
  std::vector<MatrixMark> cells;
  // Per rank, what it sends to another rank and what it receives from one in the step,
  // in any buffer (a barrier's signals too); local work is neither.
  std::vector<MarkKind> sends, receives;
};

MatrixMarks build_marks(const Schedule& s, const MatrixShape& shape, std::int32_t step);

}  // namespace collscope::view
