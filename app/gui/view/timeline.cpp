#include "gui/view/timeline.h"

#include <algorithm>
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
  for (const auto& st : r.steps) v.marks.push_back({st.step, x_of(st.t0_us)});
  std::sort(v.marks.begin(), v.marks.end(), [](const StepMark& a, const StepMark& b) { return a.x < b.x; });
  return v;
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

}  // namespace collscope::view
