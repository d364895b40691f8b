#include "gui/view/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace collscope::view {

TimelineView build_timeline(const Schedule& s, const RunRecord& r) {
  TimelineView v;
  v.ranks = s.ranks;
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  for (const auto& t : r.transfers) lo = std::min(lo, t.t0_us), hi = std::max(hi, t.t1_us);
  for (const auto& st : r.steps) lo = std::min(lo, st.t0_us), hi = std::max(hi, st.t1_us);
  if (lo > hi) return v;  // nothing measured
  if (hi <= lo) hi = lo + 1;
  v.t0_us = lo;
  v.t1_us = hi;
  const double span = hi - lo;
  auto x_of = [&](double t) { return static_cast<float>((t - lo) / span); };
  const std::size_t e = size_of(s.dtype);
  for (const auto& t : r.transfers) {
    if (t.step < 0 || t.step >= static_cast<std::int32_t>(s.steps.size())) continue;
    const auto& st = s.steps[static_cast<std::size_t>(t.step)];
    if (t.transfer < 0 || t.transfer >= static_cast<std::int32_t>(st.transfers.size())) continue;
    const Transfer& tr = st.transfers[static_cast<std::size_t>(t.transfer)];
    TimelineSlice sl;
    sl.rank = t.rank;
    sl.step = t.step;
    sl.transfer = t.transfer;
    sl.peer = tr.src.rank;
    sl.action = tr.action;
    sl.bytes = tr.count * e;
    sl.t0_us = t.t0_us;
    sl.t1_us = t.t1_us;
    sl.x0 = x_of(t.t0_us);
    sl.x1 = x_of(t.t1_us);
    v.slices.push_back(sl);
  }
  std::stable_sort(v.slices.begin(), v.slices.end(), [](const TimelineSlice& a, const TimelineSlice& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.t0_us < b.t0_us;
  });
  for (const auto& st : r.steps) v.marks.push_back({st.step, x_of(st.t0_us)});
  std::sort(v.marks.begin(), v.marks.end(), [](const StepMark& a, const StepMark& b) { return a.x < b.x; });
  return v;
}

TimelinePixels rasterise_timeline(const TimelineView& v, std::int32_t width, std::int32_t rows_per_rank,
                                  std::int32_t min_width) {
  TimelinePixels px;
  if (width <= 0 || rows_per_rank <= 0 || v.ranks <= 0) return px;
  px.width = width;
  px.rows_per_rank = rows_per_rank;
  px.height = v.ranks * rows_per_rank;
  px.kind.assign(static_cast<std::size_t>(px.width) * static_cast<std::size_t>(px.height), 0);
  px.mark.assign(static_cast<std::size_t>(px.width), 0);
  for (const auto& m : v.marks)
    px.mark[static_cast<std::size_t>(
        std::clamp(static_cast<std::int32_t>(std::floor(m.x * static_cast<float>(width))), 0, width - 1))] = 1;
  // The middle rows of each rank (0.15 .. 0.85 of its height, at least one row).
  const std::int32_t top = rows_per_rank >= 4 ? (rows_per_rank * 15 + 99) / 100 : 0;
  const std::int32_t bottom = rows_per_rank >= 4 ? rows_per_rank - top : rows_per_rank;
  const float w = static_cast<float>(width);
  for (const auto& sl : v.slices) {
    if (sl.rank < 0 || sl.rank >= v.ranks) continue;
    const auto a = std::clamp(static_cast<std::int32_t>(std::floor(sl.x0 * w)), 0, width - 1);
    const auto b =
        std::min(width, std::max(static_cast<std::int32_t>(std::ceil(sl.x1 * w)), a + std::max(1, min_width)));
    const auto kind = static_cast<std::uint8_t>(1 + static_cast<int>(sl.action));
    for (std::int32_t y = sl.rank * rows_per_rank + top; y < sl.rank * rows_per_rank + bottom; ++y)
      std::fill_n(px.kind.begin() + static_cast<std::ptrdiff_t>(y) * width + a, b - a, kind);
  }
  return px;
}

std::int32_t slice_at(const TimelineView& v, std::int32_t rank, float x, float slop) {
  std::int32_t best = -1;
  float best_d = slop;
  for (std::size_t i = 0; i < v.slices.size(); ++i) {
    const auto& sl = v.slices[i];
    if (sl.rank != rank) continue;
    const float d = x < sl.x0 ? sl.x0 - x : (x > sl.x1 ? x - sl.x1 : 0.0f);
    if (d <= best_d) {
      best_d = d;
      best = static_cast<std::int32_t>(i);
      if (d == 0) break;
    }
  }
  return best;
}

std::int32_t step_at(const TimelineView& v, float x) {
  std::int32_t step = -1;
  for (const auto& m : v.marks)
    if (m.x <= x) step = m.step;
  return step;
}

RankLabels timeline_labels(std::int32_t ranks, float row_h, float font) {
  RankLabels out;
  if (ranks <= 0 || row_h <= 0) return out;
  out.size = std::min(font, row_h);
  if (out.size < kMinTimelineLabelPx) {
    out.size = std::min(font, kMinTimelineLabelPx);
    out.every = static_cast<std::int32_t>(std::ceil(out.size / row_h));
  }
  const bool full = out.size >= font * 0.8f;
  const float height = row_h * static_cast<float>(ranks);
  float free = 0;  // where the previous label ends
  for (std::int32_t r = 0; r < ranks; r += out.every) {
    // Centred on its group of `every` rows; the last one kept inside, or left out.
    float y = row_h * static_cast<float>(r) + (row_h * static_cast<float>(out.every) - out.size) / 2;
    y = std::min(std::max(y, free), height - out.size);
    if (y < free - 0.01f || y < 0) break;
    out.labels.push_back({r, y, full ? "rank " + std::to_string(r) : std::to_string(r)});
    free = y + out.size;
  }
  return out;
}

}  // namespace collscope::view
