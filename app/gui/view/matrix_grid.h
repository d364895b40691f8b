// The matrix as it is drawn, in pixels, without ImGui: where the header, the axes, the
// two margin columns and the cells go (MatrixGeometry), the drawn grid (MatrixGrid:
// when there are more ranks or columns than pixels, a drawn cell aggregates a block of
// 2, 4, 8 ... ranks by as many columns) and the image of it (MatrixPixels: every drawn
// cell a block of texels, with its mark, gap and complete corner painted in). The
// panel uploads the image as one texture when it changes and draws it as one quad, so
// a frame at 1024 ranks draws about as much as one at 32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui/view/canvas.h"
#include "gui/view/matrix.h"

namespace collscope::view {

struct AxisTick {
  std::int32_t index = 0;  // the rank, or the column
  float pos = 0;           // pixel centre of its row (y) or column (x)
  std::string text;        // the rank, or the first chunk of the column
};

struct MatrixGeometry {
  Rect area;             // the canvas without its legend
  Rect header;           // the line above the matrix: what it shows, and the toggle
  Rect cells;            // the matrix itself
  Rect sends, receives;  // margin columns between the rank labels and the cells
  float font = 13, pad = 4;
  std::int32_t ranks = 0, columns = 0;
  std::int32_t ranks_per_row = 1, columns_per_col = 1;  // powers of two: no more drawn cells than pixels
  std::int32_t rows = 0, cols = 0;                      // drawn
  std::vector<AxisTick> rank_ticks, column_ticks;

  float row_h() const;
  float col_w() const;
  // The drawn row or column under a pixel (-1 outside the cells).
  std::int32_t row_at(float y) const;
  std::int32_t col_at(float x) const;
};

// `legend_h` pixels at the bottom of `size` are the legend's.
MatrixGeometry matrix_geometry(const MatrixShape& shape, Vec2 origin, Vec2 size, float legend_h, float font,
                               float scale, const MeasureText& measure);

// Labels along an axis of `items`, `pixels` long: every N items, N the smallest power of
// two (at least `minimum`) that keeps them `gap` pixels apart.
std::int32_t tick_every(std::int32_t items, float pixels, float gap, std::int32_t minimum = 1);

// What is drawn: rows x cols cells, each the block of ranks_per_row ranks by
// columns_per_col columns of the matrix.
struct MatrixGrid {
  std::int32_t rows = 0, cols = 0;
  std::int32_t ranks_per_row = 1, columns_per_col = 1;
  std::vector<CellColour> cells;          // row by row
  std::vector<MarkKind> marks;            // the step's marks, row by row
  std::vector<std::size_t> marked;        // cells with a mark
  std::vector<MarkKind> sends, receives;  // per drawn row: the strongest of its ranks'
  std::size_t index(std::int32_t row, std::int32_t col) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col);
  }
};

// A block's colour: its cells' colour when they all have the same one (so a uniform
// region keeps its colour exactly), else the mean of their colours, partial.
CellColour block_colour(const MatrixState& m, std::int32_t row, std::int32_t col, std::int32_t ranks_per_row,
                        std::int32_t columns_per_col);
MatrixGrid downsample(const MatrixState& m, std::int32_t ranks_per_row, std::int32_t columns_per_col);
// Recomputes the drawn cells holding the matrix cells `changed` (indices into
// MatrixState::cells); appends each drawn cell it recomputed to `dirty`, once.
void update_grid(MatrixGrid& g, const MatrixState& m, const std::vector<std::size_t>& changed,
                 std::vector<std::size_t>* dirty);
// Replaces the marks on the grid by `marks`' (a drawn cell shows its strongest mark);
// appends to `dirty` every drawn cell whose mark may have changed.
void mark_grid(MatrixGrid& g, const MatrixMarks& marks, std::vector<std::size_t>* dirty);

// Runs of drawn rows with the same margin mark (none is no run): the ticks of the
// margin columns, one rectangle each.
struct MarginRun {
  std::int32_t first = 0, last = 0;  // drawn rows
  MarkKind kind = MarkKind::copy;
};
std::vector<MarginRun> margin_runs(const std::vector<MarkKind>& rows);

// Colours of what is not data.
struct MatrixStyle {
  Rgba copy{0.45f, 0.75f, 1.0f, 1.0f};
  Rgba reduce{1.0f, 0.45f, 0.25f, 1.0f};
  Rgba scale{0.75f, 0.75f, 0.75f, 1.0f};
  Rgba signal{0.6f, 0.6f, 0.65f, 1.0f};
  Rgba background{0.12f, 0.12f, 0.14f, 1.0f};  // the gaps, and where a rank's buffer has ended
  Rgba flag{0.08f, 0.08f, 0.08f, 1.0f};        // the complete cell's dark corner
};
Rgba mark_colour(const MatrixStyle& st, MarkKind k);

// One drawn cell is texel x texel pixels of the image. From 4 texels a cell has a gap
// to its neighbours and its mark is a frame around its colour; below, a marked cell
// takes the mark's colour (over its own once the step's data has landed).
struct MatrixPixels {
  std::int32_t width = 0, height = 0, texel = 1;
  std::vector<std::uint32_t> rgba;  // row by row, R in the low byte (ImGui's IM_COL32)
};
// Texels per drawn cell for cells of that many pixels: 1 to 16.
std::int32_t matrix_texel(float cell_w, float cell_h, std::int32_t rows, std::int32_t cols);
std::uint32_t packed_rgba(Rgba c);
MatrixPixels paint_matrix(const MatrixGrid& g, const MatrixStyle& st, std::int32_t texel, bool landed);
// Paints again the drawn cells `cells` (indices into the grid).
void repaint_cells(MatrixPixels& px, const MatrixGrid& g, const MatrixStyle& st, bool landed,
                   const std::vector<std::size_t>& cells);

// The header's words: "x: 256 ranks (rows) x 256 chunks of 1 element (columns)", and
// ", 2 ranks a row, 4 chunks a column" when the drawn cells aggregate.
std::string matrix_summary(const MatrixShape& shape, std::int32_t ranks_per_row, std::int32_t columns_per_col);

}  // namespace collscope::view
