#include "gui/view/matrix.h"

#include <algorithm>
#include <numeric>

namespace collscope::view {

bool matrix_wanted(CanvasView choice, CanvasView lesson, std::int32_t ranks) {
  if (choice != CanvasView::automatic) return choice == CanvasView::matrix;
  if (lesson != CanvasView::automatic) return lesson == CanvasView::matrix;
  return ranks >= kMatrixFromRanks;
}

namespace {

bool moves_data(const Transfer& t) { return t.count > 0 && t.action != Action::compute; }

bool user_buffer(const Schedule& s, std::int32_t buf) {
  return buf >= 0 && static_cast<std::size_t>(buf) < s.buffers.size() &&
         !s.buffers[static_cast<std::size_t>(buf)].scratch;
}

// The user buffer that steps [first, end) write the most elements of (-1: none).
std::int32_t most_written(const Schedule& s, std::int32_t first, std::int32_t end) {
  std::vector<std::uint64_t> written(s.buffers.size(), 0);
  for (std::int32_t k = std::max(0, first); k < end && k < static_cast<std::int32_t>(s.steps.size()); ++k)
    for (const Transfer& t : s.steps[static_cast<std::size_t>(k)].transfers)
      if (moves_data(t) && user_buffer(s, t.dst.buf)) written[static_cast<std::size_t>(t.dst.buf)] += t.count;
  const auto best = std::max_element(written.begin(), written.end());
  if (best == written.end() || *best == 0) return -1;
  return static_cast<std::int32_t>(best - written.begin());
}

}  // namespace

std::int32_t matrix_buffer(const Schedule& s, std::int32_t step) {
  const auto n = static_cast<std::int32_t>(s.steps.size());
  if (n > 0 && !s.calls.empty()) {
    // The call of the step that runs next, or the last call once every step has run.
    const std::int32_t call = s.steps[static_cast<std::size_t>(std::clamp(step, 0, n - 1))].call;
    if (call >= 0 && static_cast<std::size_t>(call) < s.calls.size()) {
      const Call& c = s.calls[static_cast<std::size_t>(call)];
      if (const std::int32_t b = most_written(s, c.first_step, c.first_step + c.num_steps); b >= 0) return b;
    }
  }
  if (const std::int32_t b = most_written(s, 0, n); b >= 0) return b;
  for (std::size_t b = 0; b < s.buffers.size(); ++b)
    if (!s.buffers[b].scratch) return static_cast<std::int32_t>(b);
  return -1;
}

MatrixShape matrix_shape(const Schedule& s, std::int32_t buf, std::uint32_t max_columns) {
  MatrixShape m;
  m.ranks = s.ranks;
  m.buf = buf;
  if (buf < 0 || static_cast<std::size_t>(buf) >= s.buffers.size()) return m;
  const BufferDecl& b = s.buffers[static_cast<std::size_t>(buf)];
  m.name = b.name;
  for (const auto c : b.count) m.elements = std::max(m.elements, c);
  if (m.elements == 0) return m;
  // The chunk: the largest run of elements that every transfer into or out of the
  // buffer starts and ends on a multiple of. Such a run always moves whole, so one
  // element of it tells what all of it holds.
  std::uint64_t g = 0;
  for (const Step& st : s.steps)
    for (const Transfer& t : st.transfers) {
      if (!moves_data(t)) continue;
      for (const Loc* l : {&t.src, &t.dst})
        if (l->buf == buf) g = std::gcd(std::gcd(g, l->offset), l->offset + t.count);
    }
  m.chunk = g == 0 ? 1 : std::min(g, m.elements);
  const std::uint64_t chunks = (m.elements + m.chunk - 1) / m.chunk;
  const std::uint64_t per = (chunks + std::max(1u, max_columns) - 1) / std::max(1u, max_columns);
  m.per_column = m.chunk * per;
  m.columns = static_cast<std::int32_t>((m.elements + m.per_column - 1) / m.per_column);
  return m;
}

HolderColours::HolderColours(std::int32_t world) : world_(world) {
  const auto n = static_cast<std::size_t>(std::max(0, world));
  rank_.resize(n);
  for (std::size_t r = 0; r < n; ++r) rank_[r] = rank_colour(static_cast<std::int32_t>(r));
  word_sum_.assign((n + 63) / 64, Rgba{0, 0, 0, 0});
  for (std::size_t r = 0; r < n; ++r) {
    Rgba& w = word_sum_[r / 64];
    w.r += rank_[r].r, w.g += rank_[r].g, w.b += rank_[r].b;
  }
}

CellColour HolderColours::colour(const std::vector<std::uint64_t>& words, bool complete) const {
  std::int32_t n = 0;
  for (const auto w : words) n += __builtin_popcountll(w);
  // What colour_of says of the same set, sorted and unique.
  if (n == 0) return {palette().empty, Coverage::none};
  if (n >= world_ && world_ > 1 && complete) return {palette().complete, Coverage::complete};
  if (n == 1) {
    for (std::size_t w = 0; w < words.size(); ++w)
      if (words[w])
        return {rank_colour(static_cast<std::int32_t>(w * 64) + __builtin_ctzll(words[w])),
                world_ == 1 ? Coverage::complete : Coverage::single};
  }
  Rgba m{0, 0, 0, 1};
  for (std::size_t w = 0; w < words.size(); ++w) {
    const bool full = words[w] == ~0ull && (w + 1) * 64 <= rank_.size();
    if (full) {
      m.r += word_sum_[w].r, m.g += word_sum_[w].g, m.b += word_sum_[w].b;
      continue;
    }
    for (std::uint64_t bits = words[w]; bits; bits &= bits - 1) {
      const std::size_t r = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
      if (r >= rank_.size()) break;
      m.r += rank_[r].r, m.g += rank_[r].g, m.b += rank_[r].b;
    }
  }
  // As mix_colour: the average, pulled towards grey a little.
  const auto k = static_cast<float>(n);
  return {{0.8f * m.r / k + 0.1f, 0.8f * m.g / k + 0.1f, 0.8f * m.b / k + 0.1f, 1}, Coverage::partial};
}

CellColour column_colour(const Schedule& s, const MatrixShape& shape, const HoldersFn& holders,
                         const HolderColours& colours, std::int32_t rank, std::int32_t column) {
  const std::uint64_t have = s.buffers[static_cast<std::size_t>(shape.buf)].count[static_cast<std::size_t>(rank)];
  const std::uint64_t first = static_cast<std::uint64_t>(column) * shape.per_column;
  if (first >= have) return {{0, 0, 0, 0}, Coverage::none};  // past the end of this rank's buffer
  const std::uint64_t count = std::min(shape.per_column, have - first);
  thread_local std::vector<std::uint64_t> words, more;
  holders(rank, shape.buf, first, words);
  if (count <= shape.chunk) return colours.colour(words);
  // Several chunks: the first, middle and last element; complete only if each one is.
  auto full = [&](const std::vector<std::uint64_t>& w) {
    std::int32_t n = 0;
    for (const auto x : w) n += __builtin_popcountll(x);
    return n >= colours.world();
  };
  bool complete = full(words);
  for (const std::uint64_t i : {first + count / 2, first + count - 1}) {
    holders(rank, shape.buf, i, more);
    complete = complete && full(more);
    for (std::size_t w = 0; w < words.size() && w < more.size(); ++w) words[w] |= more[w];
  }
  return colours.colour(words, complete);
}

MatrixState build_matrix(const Schedule& s, const MatrixShape& shape, const HoldersFn& holders, std::int32_t applied) {
  MatrixState m;
  m.shape = shape;
  m.applied = applied;
  if (shape.buf < 0 || shape.columns == 0) return m;
  const HolderColours colours(s.ranks);
  m.cells.resize(static_cast<std::size_t>(shape.ranks) * static_cast<std::size_t>(shape.columns));
  for (std::int32_t r = 0; r < shape.ranks; ++r)
    for (std::int32_t c = 0; c < shape.columns; ++c)
      m.cells[static_cast<std::size_t>(r) * static_cast<std::size_t>(shape.columns) + static_cast<std::size_t>(c)] =
          column_colour(s, shape, holders, colours, r, c);
  return m;
}

void advance_matrix(MatrixState& m, const Schedule& s, const HoldersFn& holders, std::int32_t step,
                    std::vector<std::size_t>* changed, std::vector<std::pair<std::size_t, CellColour>>* overwritten) {
  m.applied = step + 1;
  if (step < 0 || static_cast<std::size_t>(step) >= s.steps.size() || m.cells.empty()) return;
  const MatrixShape& sh = m.shape;
  const HolderColours colours(s.ranks);
  const auto cols = static_cast<std::size_t>(sh.columns);
  std::int64_t last = -1;  // transfers cut into slices write the same column again
  for (const Transfer& t : s.steps[static_cast<std::size_t>(step)].transfers) {
    if (!moves_data(t) || t.dst.buf != sh.buf || t.dst.rank < 0 || t.dst.rank >= sh.ranks) continue;
    const std::uint64_t have = s.buffers[static_cast<std::size_t>(sh.buf)].count[static_cast<std::size_t>(t.dst.rank)];
    if (t.dst.offset >= have) continue;
    const auto a = static_cast<std::int32_t>(t.dst.offset / sh.per_column);
    const auto b = static_cast<std::int32_t>((std::min(have, t.dst.offset + t.count) - 1) / sh.per_column);
    for (std::int32_t c = a; c <= b; ++c) {
      const std::size_t i = static_cast<std::size_t>(t.dst.rank) * cols + static_cast<std::size_t>(c);
      if (static_cast<std::int64_t>(i) == last) continue;
      if (overwritten) overwritten->emplace_back(i, m.cells[i]);
      m.cells[i] = column_colour(s, sh, holders, colours, t.dst.rank, c);
      last = static_cast<std::int64_t>(i);
      if (changed) changed->push_back(i);
    }
  }
}

MarkKind mark_of(const Transfer& t) {
  if (t.action == Action::compute) return MarkKind::none;
  if (t.count == 0) return MarkKind::signal;
  if (is_reduction(t.action)) return MarkKind::reduce;
  if (t.action == Action::scale) return MarkKind::scale;
  return MarkKind::copy;
}

MatrixMarks build_marks(const Schedule& s, const MatrixShape& shape, std::int32_t step) {
  MatrixMarks out;
  if (step < 0 || static_cast<std::size_t>(step) >= s.steps.size()) return out;
  out.step = step;
  out.sends.assign(static_cast<std::size_t>(s.ranks), MarkKind::none);
  out.receives.assign(static_cast<std::size_t>(s.ranks), MarkKind::none);
  for (const Transfer& t : s.steps[static_cast<std::size_t>(step)].transfers) {
    const MarkKind k = mark_of(t);
    if (k == MarkKind::none || t.src.rank < 0 || t.dst.rank < 0 || t.src.rank >= s.ranks || t.dst.rank >= s.ranks)
      continue;
    if (t.src.rank != t.dst.rank) {
      auto& sent = out.sends[static_cast<std::size_t>(t.src.rank)];
      auto& got = out.receives[static_cast<std::size_t>(t.dst.rank)];
      sent = std::max(sent, k);
      got = std::max(got, k);
    }
    if (t.count == 0 || t.dst.buf != shape.buf || shape.columns == 0) continue;
    const std::uint64_t have =
        s.buffers[static_cast<std::size_t>(shape.buf)].count[static_cast<std::size_t>(t.dst.rank)];
    if (t.dst.offset >= have) continue;
    MatrixMark mk;
    mk.rank = t.dst.rank;
    mk.from = t.src.rank;
    mk.kind = k;
    mk.first = static_cast<std::int32_t>(t.dst.offset / shape.per_column);
    mk.last = static_cast<std::int32_t>((std::min(have, t.dst.offset + t.count) - 1) / shape.per_column);
    // Slices of one transfer (long ring transfers are cut for the cache) are one mark.
    if (!out.cells.empty()) {
      MatrixMark& prev = out.cells.back();
      if (prev.rank == mk.rank && prev.from == mk.from && prev.kind == mk.kind && mk.first <= prev.last + 1 &&
          mk.last >= prev.first) {
        prev.first = std::min(prev.first, mk.first);
        prev.last = std::max(prev.last, mk.last);
        continue;
      }
    }
    out.cells.push_back(mk);
  }
  return out;
}

}  // namespace collscope::view
