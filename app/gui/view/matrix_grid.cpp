#include "gui/view/matrix_grid.h"

#include <algorithm>
#include <cmath>

namespace collscope::view {

namespace {

std::int32_t pow2_at_least(std::int64_t n) {
  std::int32_t p = 1;
  while (p < n && p < (1 << 30)) p *= 2;
  return p;
}

std::int32_t ceil_div(std::int32_t a, std::int32_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

}  // namespace

float MatrixGeometry::row_h() const { return rows > 0 ? (cells.max.y - cells.min.y) / static_cast<float>(rows) : 0; }
float MatrixGeometry::col_w() const { return cols > 0 ? (cells.max.x - cells.min.x) / static_cast<float>(cols) : 0; }

std::int32_t MatrixGeometry::row_at(float y) const {
  if (rows == 0 || y < cells.min.y || y >= cells.max.y) return -1;
  return std::min(rows - 1, static_cast<std::int32_t>((y - cells.min.y) / row_h()));
}

std::int32_t MatrixGeometry::col_at(float x) const {
  if (cols == 0 || x < cells.min.x || x >= cells.max.x) return -1;
  return std::min(cols - 1, static_cast<std::int32_t>((x - cells.min.x) / col_w()));
}

std::int32_t tick_every(std::int32_t items, float pixels, float gap, std::int32_t minimum) {
  if (items <= 0 || pixels <= 0) return std::max(1, minimum);
  const float per_item = pixels / static_cast<float>(items);
  std::int32_t n = std::max(1, minimum);
  while (static_cast<float>(n) * per_item < gap && n < items) n *= 2;
  return n;
}

MatrixGeometry matrix_geometry(const MatrixShape& shape, Vec2 origin, Vec2 size, float legend_h, float font,
                               float scale, const MeasureText& measure) {
  MatrixGeometry g;
  g.font = font;
  g.pad = std::max(2.0f, std::round(4 * scale));
  g.ranks = shape.ranks;
  g.columns = shape.columns;
  g.area = {origin, {origin.x + size.x, origin.y + std::max(1.0f, size.y - legend_h)}};
  auto width = [&](const std::string& t) {
    return measure ? measure(font, t) : font * 0.6f * static_cast<float>(t.size());
  };
  const float header_h = std::round(font * 1.6f), axis_h = std::round(font * 1.3f);
  g.header = {g.area.min, {g.area.max.x, g.area.min.y + header_h}};
  // Rank numbers on the left, then the ticks of what each rank sends and receives.
  const float label_w = std::max(width(std::to_string(std::max(0, shape.ranks - 1))), width("rank")) + 2 * g.pad;
  const float margin_w = std::max(width("out"), width("in")) + g.pad;
  const float x0 = g.area.min.x + label_w;
  const float y0 = g.header.max.y + axis_h, y1 = std::max(y0 + 1, g.area.max.y - g.pad);
  g.sends = {{x0, y0}, {x0 + margin_w - g.pad / 2, y1}};
  g.receives = {{x0 + margin_w, y0}, {x0 + 2 * margin_w - g.pad / 2, y1}};
  const float cx0 = x0 + 2 * margin_w + g.pad, cx1 = std::max(cx0 + 1, g.area.max.x - g.pad);
  g.cells = {{cx0, y0}, {cx1, y1}};
  const float h = y1 - y0, w = cx1 - cx0;
  // No more drawn rows than pixel rows: ranks are aggregated by powers of two, so that
  // a drawn row holds ranks 0-1, 2-3, ... and the labels fall on row boundaries.
  if (shape.ranks > 0) {
    g.ranks_per_row = pow2_at_least(ceil_div(shape.ranks, std::max(1, static_cast<std::int32_t>(h))));
    g.rows = ceil_div(shape.ranks, g.ranks_per_row);
  }
  if (shape.columns > 0) {
    g.columns_per_col = pow2_at_least(ceil_div(shape.columns, std::max(1, static_cast<std::int32_t>(w))));
    g.cols = ceil_div(shape.columns, g.columns_per_col);
  }
  if (g.rows > 0) {
    const std::int32_t every = tick_every(g.rows, h, font * 1.25f, 1) * g.ranks_per_row;
    for (std::int32_t r = 0; r < shape.ranks; r += every)
      g.rank_ticks.push_back({r, y0 + (static_cast<float>(r / g.ranks_per_row) + 0.5f) * g.row_h(), std::to_string(r)});
  }
  if (g.cols > 0) {
    const auto chunks_per_column =
        static_cast<std::int64_t>(shape.per_column / std::max<std::uint64_t>(1, shape.chunk));
    const std::string widest = std::to_string(static_cast<std::int64_t>(shape.columns - 1) * chunks_per_column);
    const std::int32_t every = tick_every(g.cols, w, width(widest) + font, 1) * g.columns_per_col;
    for (std::int32_t c = 0; c < shape.columns; c += every)
      g.column_ticks.push_back({c, cx0 + (static_cast<float>(c / g.columns_per_col) + 0.5f) * g.col_w(),
                                std::to_string(static_cast<std::int64_t>(c) * chunks_per_column)});
  }
  return g;
}

CellColour block_colour(const MatrixState& m, std::int32_t row, std::int32_t col, std::int32_t ranks_per_row,
                        std::int32_t columns_per_col) {
  const std::int32_t r0 = row * ranks_per_row, r1 = std::min(m.shape.ranks, r0 + ranks_per_row);
  const std::int32_t c0 = col * columns_per_col, c1 = std::min(m.shape.columns, c0 + columns_per_col);
  const CellColour* first = nullptr;
  bool uniform = true;
  Rgba sum{0, 0, 0, 0};
  int present = 0;
  for (std::int32_t r = r0; r < r1; ++r)
    for (std::int32_t c = c0; c < c1; ++c) {
      const CellColour& x = m.at(r, c);
      if (x.fill.a == 0) continue;  // past the end of that rank's buffer
      if (!first) first = &x;
      else if (x.coverage != first->coverage || x.fill.r != first->fill.r || x.fill.g != first->fill.g ||
               x.fill.b != first->fill.b)
        uniform = false;
      sum.r += x.fill.r, sum.g += x.fill.g, sum.b += x.fill.b;
      ++present;
    }
  if (!first) return {{0, 0, 0, 0}, Coverage::none};
  if (uniform) return *first;
  const auto n = static_cast<float>(present);
  return {{sum.r / n, sum.g / n, sum.b / n, 1}, Coverage::partial};
}

MatrixGrid downsample(const MatrixState& m, std::int32_t ranks_per_row, std::int32_t columns_per_col) {
  MatrixGrid g;
  g.ranks_per_row = std::max(1, ranks_per_row);
  g.columns_per_col = std::max(1, columns_per_col);
  if (m.cells.empty()) return g;
  g.rows = ceil_div(m.shape.ranks, g.ranks_per_row);
  g.cols = ceil_div(m.shape.columns, g.columns_per_col);
  const std::size_t n = static_cast<std::size_t>(g.rows) * static_cast<std::size_t>(g.cols);
  g.cells.resize(n);
  g.marks.assign(n, MarkKind::none);
  g.sends.assign(static_cast<std::size_t>(g.rows), MarkKind::none);
  g.receives.assign(static_cast<std::size_t>(g.rows), MarkKind::none);
  for (std::int32_t r = 0; r < g.rows; ++r)
    for (std::int32_t c = 0; c < g.cols; ++c)
      g.cells[g.index(r, c)] = block_colour(m, r, c, g.ranks_per_row, g.columns_per_col);
  return g;
}

void update_grid(MatrixGrid& g, const MatrixState& m, const std::vector<std::size_t>& changed,
                 std::vector<std::size_t>* dirty) {
  if (g.cells.empty() || m.shape.columns == 0) return;
  const auto cols = static_cast<std::size_t>(m.shape.columns);
  std::vector<std::size_t> blocks;
  blocks.reserve(changed.size());
  for (const std::size_t i : changed) {
    const auto r = static_cast<std::int32_t>(i / cols), c = static_cast<std::int32_t>(i % cols);
    blocks.push_back(g.index(r / g.ranks_per_row, c / g.columns_per_col));
  }
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  for (const std::size_t b : blocks) {
    const auto r = static_cast<std::int32_t>(b / static_cast<std::size_t>(g.cols));
    const auto c = static_cast<std::int32_t>(b % static_cast<std::size_t>(g.cols));
    g.cells[b] = block_colour(m, r, c, g.ranks_per_row, g.columns_per_col);
    if (dirty) dirty->push_back(b);
  }
}

void mark_grid(MatrixGrid& g, const MatrixMarks& marks, std::vector<std::size_t>* dirty) {
  if (g.cells.empty()) return;
  for (const std::size_t i : g.marked) {
    g.marks[i] = MarkKind::none;
    if (dirty) dirty->push_back(i);
  }
  g.marked.clear();
  for (const MatrixMark& mk : marks.cells) {
    const std::int32_t row = mk.rank / g.ranks_per_row;
    if (row < 0 || row >= g.rows) continue;
    for (std::int32_t c = mk.first / g.columns_per_col; c <= mk.last / g.columns_per_col && c < g.cols; ++c) {
      const std::size_t i = g.index(row, c);
      if (g.marks[i] == MarkKind::none) g.marked.push_back(i);
      g.marks[i] = std::max(g.marks[i], mk.kind);
    }
  }
  if (dirty) dirty->insert(dirty->end(), g.marked.begin(), g.marked.end());
  std::fill(g.sends.begin(), g.sends.end(), MarkKind::none);
  std::fill(g.receives.begin(), g.receives.end(), MarkKind::none);
  for (std::size_t r = 0; r < marks.sends.size() && r < marks.receives.size(); ++r) {
    const std::size_t row = r / static_cast<std::size_t>(g.ranks_per_row);
    if (row >= g.sends.size()) break;
    g.sends[row] = std::max(g.sends[row], marks.sends[r]);
    g.receives[row] = std::max(g.receives[row], marks.receives[r]);
  }
}

std::vector<MarginRun> margin_runs(const std::vector<MarkKind>& rows) {
  std::vector<MarginRun> out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (rows[r] == MarkKind::none) continue;
    const auto row = static_cast<std::int32_t>(r);
    if (!out.empty() && out.back().kind == rows[r] && out.back().last + 1 == row) out.back().last = row;
    else out.push_back({row, row, rows[r]});
  }
  return out;
}

Rgba mark_colour(const MatrixStyle& st, MarkKind k) {
  switch (k) {
    case MarkKind::reduce:
      return st.reduce;
    case MarkKind::copy:
      return st.copy;
    case MarkKind::scale:
      return st.scale;
    case MarkKind::signal:
    case MarkKind::none:
      break;
  }
  return st.signal;
}

std::int32_t matrix_texel(float cell_w, float cell_h, std::int32_t rows, std::int32_t cols) {
  // About 2.5 pixels a texel, so that a frame of one or two texels reads from the back
  // of a room, and never an image over 4096 texels a side.
  auto t = static_cast<std::int32_t>(std::min(cell_w, cell_h) / 2.5f);
  t = std::clamp(t, 1, 16);
  while (t > 1 && (rows * t > 4096 || cols * t > 4096)) --t;
  return t;
}

std::uint32_t packed_rgba(Rgba c) {
  auto byte = [](float v) { return static_cast<std::uint32_t>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); };
  return byte(c.r) | byte(c.g) << 8 | byte(c.b) << 16 | byte(c.a) << 24;
}

namespace {

Rgba lerp(Rgba a, Rgba b, float t) { return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t, 1}; }

void paint_cell(MatrixPixels& px, const MatrixGrid& g, const MatrixStyle& st, bool landed, std::size_t i) {
  const std::int32_t k = px.texel;
  const auto row = static_cast<std::int32_t>(i / static_cast<std::size_t>(g.cols));
  const auto col = static_cast<std::int32_t>(i % static_cast<std::size_t>(g.cols));
  const CellColour& cell = g.cells[i];
  const MarkKind mark = g.marks[i];
  const Rgba base = cell.fill.a == 0 ? st.background : cell.fill;
  auto put = [&](std::int32_t x, std::int32_t y, std::uint32_t v) {
    px.rgba[static_cast<std::size_t>(row * k + y) * static_cast<std::size_t>(px.width) +
            static_cast<std::size_t>(col * k + x)] = v;
  };
  if (k < 4) {
    // Too small for a frame: a marked cell takes the mark's colour, lighter once the
    // data has landed, so that the step's pattern (a ring's diagonal) stands out.
    const Rgba c = mark == MarkKind::none ? base : lerp(base, mark_colour(st, mark), landed ? 0.45f : 0.85f);
    const std::uint32_t v = packed_rgba(c);
    for (std::int32_t y = 0; y < k; ++y)
      for (std::int32_t x = 0; x < k; ++x) put(x, y, v);
    return;
  }
  const std::uint32_t gap = packed_rgba(st.background), fill = packed_rgba(base);
  const std::uint32_t flag = packed_rgba(st.flag);
  const std::uint32_t frame =
      mark == MarkKind::none ? fill
                             : packed_rgba(landed ? lerp(base, mark_colour(st, mark), 0.6f) : mark_colour(st, mark));
  const std::int32_t inner = k - 1;                          // the last texel column and row are the gap
  const std::int32_t bw = k >= 8 ? 2 : 1;                    // the frame's width
  const std::int32_t f = std::max(2, (inner * 4 + 5) / 10);  // the complete corner's size
  const bool complete = cell.coverage == Coverage::complete && cell.fill.a != 0 && k >= 6;
  for (std::int32_t y = 0; y < k; ++y)
    for (std::int32_t x = 0; x < k; ++x) {
      std::uint32_t v = fill;
      if (x >= inner || y >= inner) v = gap;
      else if (complete && x >= inner - f + y) v = flag;  // "every rank is in here": the dark corner, top right
      else if (x < bw || y < bw || x >= inner - bw || y >= inner - bw) v = frame;
      put(x, y, v);
    }
}

}  // namespace

MatrixPixels paint_matrix(const MatrixGrid& g, const MatrixStyle& st, std::int32_t texel, bool landed) {
  MatrixPixels px;
  px.texel = std::max(1, texel);
  px.width = g.cols * px.texel;
  px.height = g.rows * px.texel;
  px.rgba.assign(static_cast<std::size_t>(px.width) * static_cast<std::size_t>(px.height), packed_rgba(st.background));
  for (std::size_t i = 0; i < g.cells.size(); ++i) paint_cell(px, g, st, landed, i);
  return px;
}

void repaint_cells(MatrixPixels& px, const MatrixGrid& g, const MatrixStyle& st, bool landed,
                   const std::vector<std::size_t>& cells) {
  if (px.width != g.cols * px.texel || px.height != g.rows * px.texel) return;
  for (const std::size_t i : cells)
    if (i < g.cells.size()) paint_cell(px, g, st, landed, i);
}

std::string matrix_summary(const MatrixShape& shape, std::int32_t ranks_per_row, std::int32_t columns_per_col) {
  if (shape.buf < 0) return "no buffer to show";
  auto plural = [](std::uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  const std::uint64_t chunks_per_column = shape.per_column / std::max<std::uint64_t>(1, shape.chunk);
  std::string out = shape.name + ": " + plural(static_cast<std::uint64_t>(shape.ranks), "rank", "ranks") +
                    " (rows) x " + plural(static_cast<std::uint64_t>(shape.columns), "column", "columns");
  if (chunks_per_column == 1) out += " (chunks of " + plural(shape.chunk, "element", "elements") + ")";
  else
    out +=
        " of " + std::to_string(chunks_per_column) + " chunks (of " + plural(shape.chunk, "element", "elements") + ")";
  if (ranks_per_row > 1 || columns_per_col > 1) {
    out += "; each cell drawn ";
    if (ranks_per_row > 1) out += plural(static_cast<std::uint64_t>(ranks_per_row), "rank", "ranks");
    if (ranks_per_row > 1 && columns_per_col > 1) out += " x ";
    if (columns_per_col > 1) out += plural(static_cast<std::uint64_t>(columns_per_col), "column", "columns");
  }
  return out;
}

}  // namespace collscope::view
