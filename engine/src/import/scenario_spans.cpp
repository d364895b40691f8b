// Slot buffers and compute spans: every call uses a slot x<s>; the span before a call
// writes its slot, so the call waits for it, and the span after a blocking call writes
// the slot that call used, so it waits for the call to end (scenario_builder.h).
#include <algorithm>
#include <cmath>

#include "import/readers.h"
#include "import/scenario_builder.h"

namespace collscope::job {

std::uint32_t round_digits(double us, int digits) {
  double v = std::round(us);
  if (digits > 0 && v >= 1) {
    const double scale = std::pow(10.0, std::floor(std::log10(v)) + 1 - digits);
    v = std::round(v / scale) * scale;
  }
  return static_cast<std::uint32_t>(std::min<double>(v, kMaxComputeUs));
}

// `n` of the call's elements in the replay's type, scaled down (0 stays 0).
std::uint64_t ScenarioBuilder::elems_of(const JobCall& c, std::uint64_t n) {
  const std::uint32_t b = c.dtype_bytes ? c.dtype_bytes : esize_;
  if (b != esize_ && n) {
    n = (n * b + esize_ - 1) / esize_;
    note(c.dtype + " calls move their bytes as " + std::string(name_of(dtype_)) + " elements (" + std::to_string(b) +
         " bytes each in the job, " + std::to_string(esize_) + " in the replay)");
  }
  if (opt_.scale_down > 1 && n) n = std::max<std::uint64_t>(1, (n + opt_.scale_down - 1) / opt_.scale_down);
  return n;
}

// A slot free on every one of `ranks`: one of `prefer` if possible, else the lowest.
// A call that stays in flight avoids the slots a later compute span must wait on
// (`pending`), which it could then not write.
int ScenarioBuilder::slot_free_on(const std::vector<std::int32_t>& ranks, const std::vector<int>& prefer,
                                  bool avoid_pending) {
  auto usable = [&](int s) {
    for (auto r : ranks) {
      const RankState& st = st_[static_cast<std::size_t>(r)];
      if (st.busy.count(s)) return false;
      if (avoid_pending && std::find(st.pending.begin(), st.pending.end(), s) != st.pending.end()) return false;
    }
    return true;
  };
  for (int s : prefer) {
    if (usable(s)) return s;
  }
  for (int s = 0;; ++s) {
    const bool ok = usable(s);
    if (ok) {
      if (s >= static_cast<int>(xcount_.size()))
        xcount_.resize(static_cast<std::size_t>(s) + 1, 0), ycount_.resize(xcount_.size(), 0);
      return s;
    }
  }
}

double ScenarioBuilder::gap(const RankState& s, const Ev& e) const {
  if (!has_time(e.begin) || !has_time(s.last_end)) return 0;
  return std::max(0.0, e.begin - s.last_end);
}

void ScenarioBuilder::advance_clock(RankState& s, const Ev& e) {
  const double t = has_time(e.end) ? e.end : e.begin;
  if (!has_time(t)) return;
  s.last_end = has_time(s.last_end) ? std::max(s.last_end, t) : t;
}

// The compute span before a call that will use `slot` (-1: the call has no buffer).
void ScenarioBuilder::compute_before_call(std::int32_t r, const Ev& e, int slot) {
  RankState& s = st_[static_cast<std::size_t>(r)];
  const double g = gap(s, e);
  const std::uint32_t us = round_digits(g, digits_);
  if (g >= 60e6) note("gaps longer than 60 s (collscope's longest compute span) are replayed as 60 s");
  if (slot < 0) {  // a barrier: nothing it reads can wait for the span
    if (us >= 1) compute_alone(r, us);
    return;
  }
  if (us >= 1) {
    for (int d : s.pending)
      if (d != slot) add_compute(r, 0, slot_name(d));
    add_compute(r, us, slot_name(slot));
  } else if (s.unconsumed) {
    add_compute(r, 0, slot_name(slot));  // joins the span before: the call waits for it
  } else {
    return;
  }
  s.pending.clear();
  s.unconsumed = false;
}

// A span that no call reads (before a wait or a barrier).
void ScenarioBuilder::compute_alone(std::int32_t r, std::uint32_t us) {
  RankState& s = st_[static_cast<std::size_t>(r)];
  for (std::size_t i = 0; i + 1 < s.pending.size(); ++i) add_compute(r, 0, slot_name(s.pending[i]));
  if (!s.pending.empty()) {
    add_compute(r, us, slot_name(s.pending.back()));
  } else {
    add_compute(r, us, "work");
    work_used_ = true;
  }
  s.pending.clear();
  s.unconsumed = true;
}

void ScenarioBuilder::after_call(std::int32_t r, std::size_t ci, int slot, bool async) {
  RankState& s = st_[static_cast<std::size_t>(r)];
  if (slot >= 0) {
    if (async) {
      s.busy.insert(slot);
      s.slot_of[ci] = slot;
    } else {
      s.pending = {slot};
    }
  }
}

void ScenarioBuilder::use_slot(int slot, const JobCall& c, std::uint64_t n) {
  if (slot < 0) return;
  const auto g = static_cast<std::uint64_t>(c.p2p ? 1 : group_size(c.group));
  std::uint64_t x = n, y = 0;
  if (c.kind == "allgather" || c.kind == "reduce_scatter" || c.kind == "gather" || c.kind == "scatter") x = n * g;
  if (c.kind == "alltoall") x = y = n * g;
  grow_slot(slot, x, y);
}

// An alltoallv: group rank g sends its row of the table and receives its column.
void ScenarioBuilder::use_slot(int slot, const Table& t, std::size_t g) {
  std::uint64_t x = 0, y = 0;
  for (std::size_t p = 0; p < t.size(); ++p) x += t[g][p], y += t[p][g];
  grow_slot(slot, x, std::max<std::uint64_t>(y, 1));
}

void ScenarioBuilder::grow_slot(int slot, std::uint64_t x, std::uint64_t y) {
  auto& xc = xcount_[static_cast<std::size_t>(slot)];
  auto& yc = ycount_[static_cast<std::size_t>(slot)];
  xc = std::max(xc, x);
  yc = std::max(yc, y);
}

}  // namespace collscope::job
