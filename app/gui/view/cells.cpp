#include "gui/view/cells.h"

#include <algorithm>

#include "gui/view/lesson.h"

namespace collscope::view {

std::uint64_t elements_per_cell(std::uint64_t elements, std::uint32_t max_cells) {
  if (elements == 0 || max_cells == 0) return 1;
  return (elements + max_cells - 1) / max_cells;
}

namespace {

// Values of a chunk: every element when the chunk is small, else 64 evenly spread
// samples (the hover says "about" then); enough to say "all 42" or "3 .. 17".
constexpr std::uint64_t kExactValues = 4096;

Cell make_cell(const Schedule& s, const HostMemory& memory, const ContributorsFn& contributors, std::int32_t rank,
               std::int32_t buf, std::uint64_t first, std::uint64_t count, std::int32_t world) {
  Cell c;
  c.first = first;
  c.count = count;
  const auto& bytes = memory.empty() ? std::vector<std::uint8_t>{}
                                     : memory[static_cast<std::size_t>(buf)][static_cast<std::size_t>(rank)];
  const std::uint64_t stride = count <= kExactValues ? 1 : count / 64;
  bool have = false;
  for (std::uint64_t i = first; i < first + count; i += stride) {
    const double v = element_value(bytes, s.dtype, i);
    c.min = have ? std::min(c.min, v) : v;
    c.max = have ? std::max(c.max, v) : v;
    have = true;
  }
  if (c.min == c.max) c.text = format_value(c.min);
  // Contributors: the first, middle and last element of the chunk. Algorithms move
  // chunks whole, so this is exact whenever a chunk cell lines up with the algorithm's
  // chunks, and a fair picture otherwise.
  std::vector<std::uint64_t> samples{first};
  if (count > 2) samples.push_back(first + count / 2);
  if (count > 1) samples.push_back(first + count - 1);
  bool complete = true;
  for (auto i : samples) {
    auto r = contributors(rank, buf, i);
    if (static_cast<std::int32_t>(r.size()) < world) complete = false;
    c.ranks.insert(c.ranks.end(), r.begin(), r.end());
  }
  std::sort(c.ranks.begin(), c.ranks.end());
  c.ranks.erase(std::unique(c.ranks.begin(), c.ranks.end()), c.ranks.end());
  c.colour = colour_of(c.ranks, world);
  // A chunk is only complete when every sample is: a half-finished chunk is partial.
  if (c.colour.coverage == Coverage::complete && !complete && world > 1) {
    c.colour.coverage = Coverage::partial;
    c.colour.fill = mix_colour(c.ranks);
  }
  return c;
}

bool touches(const Step& st, std::int32_t buf) {
  for (const Transfer& t : st.transfers)
    if (t.count > 0 && (t.src.buf == buf || t.dst.buf == buf || (t.action == Action::reduce_copy && t.aux.buf == buf)))
      return true;
  return false;
}

}  // namespace

std::vector<bool> buffers_shown(const Schedule& s, std::int32_t applied) {
  std::vector<bool> out(s.buffers.size(), true);
  const auto n = static_cast<std::int32_t>(s.steps.size());
  for (std::size_t b = 0; b < s.buffers.size(); ++b) {
    if (!s.buffers[b].scratch) continue;
    bool used = false;
    if (applied >= n) {  // the end: only the results are left to see
      out[b] = false;
      continue;
    }
    for (std::int32_t k : {applied - 1, applied})
      if (k >= 0 && k < n) used = used || touches(s.steps[static_cast<std::size_t>(k)], static_cast<std::int32_t>(b));
    out[b] = used;
  }
  return out;
}

CellsView build_cells(const Schedule& s, const HostMemory& memory, const ContributorsFn& contributors,
                      std::int32_t applied, std::uint32_t max_cells) {
  CellsView v;
  v.applied = applied;
  v.max_cells = max_cells;
  const auto shown = buffers_shown(s, applied);
  {
    // The most scratch rows any position shows: the scratch buffers each step touches
    // (one pass over the transfers), then those of each pair of neighbouring steps.
    std::size_t user = 0, scratch = 0;
    for (const auto& b : s.buffers) user += !b.scratch;
    const std::size_t nb = s.buffers.size();
    std::vector<char> used(s.steps.size() * nb, 0);
    for (std::size_t k = 0; k < s.steps.size(); ++k)
      for (const Transfer& t : s.steps[k].transfers) {
        if (t.count == 0) continue;
        for (const Loc* l : {&t.src, &t.dst, &t.aux}) {
          if (l == &t.aux && t.action != Action::reduce_copy) continue;
          if (l->buf >= 0 && static_cast<std::size_t>(l->buf) < nb &&
              s.buffers[static_cast<std::size_t>(l->buf)].scratch)
            used[k * nb + static_cast<std::size_t>(l->buf)] = 1;
        }
      }
    for (std::size_t k = 0; k < s.steps.size(); ++k) {
      std::size_t now = 0;
      for (std::size_t b = 0; b < nb; ++b) now += used[k * nb + b] || (k > 0 && used[(k - 1) * nb + b]);
      scratch = std::max(scratch, now);
    }
    v.rows_per_box = std::max<std::size_t>(1, user + scratch);
  }
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    RankCells rc;
    rc.rank = r;
    for (std::size_t b = 0; b < s.buffers.size(); ++b) {
      BufferRow row;
      row.buf = static_cast<std::int32_t>(b);
      row.name = s.buffers[b].name;
      row.scratch = s.buffers[b].scratch;
      row.elements = s.buffers[b].count[static_cast<std::size_t>(r)];
      if (row.scratch && (row.elements == 0 || !shown[b])) continue;
      row.per_cell = elements_per_cell(row.elements, max_cells);
      for (std::uint64_t first = 0; first < row.elements; first += row.per_cell)
        row.cells.push_back(make_cell(s, memory, contributors, r, row.buf, first,
                                      std::min(row.per_cell, row.elements - first), s.ranks));
      rc.rows.push_back(std::move(row));
    }
    v.ranks.push_back(std::move(rc));
  }
  return v;
}

void advance_cells(CellsView& v, const Schedule& s, const HostMemory& memory, const ContributorsFn& contributors,
                   std::int32_t step) {
  if (step < 0 || static_cast<std::size_t>(step) >= s.steps.size()) {
    v.applied = step + 1;
    return;
  }
  if (buffers_shown(s, step) != buffers_shown(s, step + 1)) {  // scratch rows come or go
    v = build_cells(s, memory, contributors, step + 1, v.max_cells);
    return;
  }
  v.applied = step + 1;
  for (const Transfer& t : s.steps[static_cast<std::size_t>(step)].transfers) {
    if (t.count == 0 || t.action == Action::compute) continue;  // signals and spans change no data
    if (t.dst.rank < 0 || static_cast<std::size_t>(t.dst.rank) >= v.ranks.size()) continue;
    for (auto& row : v.ranks[static_cast<std::size_t>(t.dst.rank)].rows) {
      if (row.buf != t.dst.buf || row.cells.empty()) continue;
      const std::int32_t a = cell_of(row, t.dst.offset);
      const std::int32_t b = cell_of(row, std::min(row.elements, t.dst.offset + t.count) - 1);
      for (std::int32_t c = std::max(0, a); c <= b && c >= 0; ++c) {
        auto& cell = row.cells[static_cast<std::size_t>(c)];
        cell = make_cell(s, memory, contributors, t.dst.rank, row.buf, cell.first, cell.count, s.ranks);
      }
    }
  }
}

std::int32_t cell_of(const BufferRow& row, std::uint64_t index) {
  if (index >= row.elements) return -1;
  return static_cast<std::int32_t>(index / row.per_cell);
}

}  // namespace collscope::view
