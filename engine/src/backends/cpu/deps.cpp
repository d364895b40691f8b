#include "deps.h"

#include <algorithm>
#include <unordered_map>

namespace collscope::cpu {

namespace {

// One access to a (rank, buffer) region, in schedule order.
struct Access {
  std::int32_t step;  // step index in the doubled schedule
  std::uint64_t start, end;
  std::int32_t lane;  // the lane that read or wrote it
  bool write;
};

bool overlaps(const Access& a, std::uint64_t s, std::uint64_t e) { return a.start < e && s < a.end; }

}  // namespace

std::int32_t lane_count(const Schedule& s) {
  for (const auto& st : s.steps)
    for (const auto& t : st.transfers)
      if (t.action == Action::compute) return 2 * s.ranks;
  return s.ranks;
}

std::vector<std::vector<std::vector<Dep>>> compute_deps(const Schedule& s) {
  const auto S = static_cast<std::int32_t>(s.steps.size());
  const std::size_t nbuf = s.buffers.size();
  std::vector<std::vector<Access>> log(static_cast<std::size_t>(s.ranks) * nbuf);
  auto slot = [&](const Loc& l) -> std::vector<Access>& {
    return log[static_cast<std::size_t>(l.rank) * nbuf + static_cast<std::size_t>(l.buf)];
  };
  std::vector<std::vector<std::vector<Dep>>> deps(
      static_cast<std::size_t>(lane_count(s)), std::vector<std::vector<Dep>>(static_cast<std::size_t>(S)));
  // Keep only the latest required step per (waiting lane, awaited lane).
  std::unordered_map<std::int64_t, std::int32_t> need;

  // Walk the schedule twice: the second pass sees the previous iteration's accesses,
  // which is what repeated runs (benchmarks) need.
  for (std::int32_t g = 0; g < 2 * S; ++g) {
    const Step& st = s.steps[static_cast<std::size_t>(g % S)];
    const bool record = g >= S;
    need.clear();
    auto require = [&](std::int32_t waiter, std::int32_t lane, std::int32_t step) {
      if (waiter == lane || !record) return;
      const std::int64_t key = static_cast<std::int64_t>(waiter) << 32 | static_cast<std::uint32_t>(lane);
      auto [it, fresh] = need.emplace(key, step);
      if (!fresh) it->second = std::max(it->second, step);
    };
    for (const auto& t : st.transfers) {
      const std::int32_t d = lane_of(s, t);
      if (is_signal(t)) {  // the source rank's thread must have reached this step
        require(d, t.src.rank, g - 1);
        continue;
      }
      if (t.count == 0) continue;  // a compute span that writes nothing
      // read-after-write on the source: wait for the lane of the latest write
      if (reads_source(t)) {
        const auto& acc = slot(t.src);
        for (auto it = acc.rbegin(); it != acc.rend(); ++it)
          if (it->write && overlaps(*it, t.src.offset, t.src.offset + t.count)) {
            require(d, it->lane, it->step);
            break;
          }
      }
      // write-after-read and write-after-write on the destination: wait for every
      // other lane's access, back to a write that covered this whole region (earlier
      // accesses were already awaited by that write).
      const auto& acc = slot(t.dst);
      const std::uint64_t a = t.dst.offset, b = t.dst.offset + t.count;
      for (auto it = acc.rbegin(); it != acc.rend(); ++it) {
        if (!overlaps(*it, a, b)) continue;
        require(d, it->lane, it->step);
        if (it->write && it->start <= a && it->end >= b) break;
      }
    }
    for (const auto& [key, step] : need) {
      const auto waiter = static_cast<std::int32_t>(key >> 32);
      const auto lane = static_cast<std::int32_t>(key & 0xffffffff);
      deps[static_cast<std::size_t>(waiter)][static_cast<std::size_t>(g - S)].push_back({lane, step - S});
    }
    // Log this step's accesses after computing its dependencies.
    for (const auto& t : st.transfers) {
      if (t.count == 0) continue;
      const std::int32_t d = lane_of(s, t);
      if (reads_source(t)) slot(t.src).push_back({g, t.src.offset, t.src.offset + t.count, d, false});
      slot(t.dst).push_back({g, t.dst.offset, t.dst.offset + t.count, d, true});
    }
  }
  for (auto& per_lane : deps)
    for (auto& v : per_lane)
      std::sort(v.begin(), v.end(), [](const Dep& x, const Dep& y) { return x.rank < y.rank; });
  return deps;
}

}  // namespace collscope::cpu
