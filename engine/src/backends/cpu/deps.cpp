#include "deps.h"

#include <algorithm>
#include <unordered_map>

namespace collscope::cpu {

namespace {

// One access to a (rank, buffer) region, in schedule order.
struct Access {
  std::int32_t step;  // step index in the doubled schedule
  std::uint64_t start, end;
  std::int32_t reader;  // the rank that read it; -1 = a write by the owner
};

bool overlaps(const Access& a, std::uint64_t s, std::uint64_t e) { return a.start < e && s < a.end; }

}  // namespace

std::vector<std::vector<std::vector<Dep>>> compute_deps(const Schedule& s) {
  const auto S = static_cast<std::int32_t>(s.steps.size());
  const std::size_t nbuf = s.buffers.size();
  std::vector<std::vector<Access>> log(static_cast<std::size_t>(s.ranks) * nbuf);
  auto slot = [&](const Loc& l) -> std::vector<Access>& {
    return log[static_cast<std::size_t>(l.rank) * nbuf + static_cast<std::size_t>(l.buf)];
  };
  std::vector<std::vector<std::vector<Dep>>> deps(
      static_cast<std::size_t>(s.ranks), std::vector<std::vector<Dep>>(static_cast<std::size_t>(S)));
  // Keep only the latest required step per (waiting rank, awaited rank).
  std::unordered_map<std::int64_t, std::int32_t> need;

  // Walk the schedule twice: the second pass sees the previous iteration's accesses,
  // which is what repeated runs (benchmarks) need.
  for (std::int32_t g = 0; g < 2 * S; ++g) {
    const Step& st = s.steps[static_cast<std::size_t>(g % S)];
    const bool record = g >= S;
    need.clear();
    auto require = [&](std::int32_t waiter, std::int32_t rank, std::int32_t step) {
      if (waiter == rank || !record) return;
      const std::int64_t key = static_cast<std::int64_t>(waiter) << 32 | static_cast<std::uint32_t>(rank);
      auto [it, fresh] = need.emplace(key, step);
      if (!fresh) it->second = std::max(it->second, step);
    };
    for (const auto& t : st.transfers) {
      const std::int32_t d = t.dst.rank;
      if (t.count == 0) {  // a signal: the source must have reached this step
        require(d, t.src.rank, g - 1);
        continue;
      }
      // read-after-write on the source (only matters when another rank reads it)
      if (t.src.rank != d && t.action != Action::scale) {
        const auto& acc = slot(t.src);
        for (auto it = acc.rbegin(); it != acc.rend(); ++it)
          if (it->reader < 0 && overlaps(*it, t.src.offset, t.src.offset + t.count)) {
            require(d, t.src.rank, it->step);
            break;
          }
      }
      // write-after-read on the destination: wait for the latest read by every other
      // rank, back to the owner's previous write that covered this whole region
      // (earlier readers were already awaited by that write).
      const auto& acc = slot(t.dst);
      const std::uint64_t a = t.dst.offset, b = t.dst.offset + t.count;
      for (auto it = acc.rbegin(); it != acc.rend(); ++it) {
        if (!overlaps(*it, a, b)) continue;
        if (it->reader < 0) {
          if (it->start <= a && it->end >= b) break;
          continue;
        }
        if (it->reader != d) require(d, it->reader, it->step);
      }
    }
    for (const auto& [key, step] : need) {
      const auto waiter = static_cast<std::int32_t>(key >> 32);
      const auto rank = static_cast<std::int32_t>(key & 0xffffffff);
      deps[static_cast<std::size_t>(waiter)][static_cast<std::size_t>(g - S)].push_back({rank, step - S});
    }
    // Log this step's accesses after computing its dependencies.
    for (const auto& t : st.transfers) {
      if (t.count == 0) continue;
      if (t.src.rank != t.dst.rank && t.action != Action::scale)
        slot(t.src).push_back({g, t.src.offset, t.src.offset + t.count, t.dst.rank});
      slot(t.dst).push_back({g, t.dst.offset, t.dst.offset + t.count, -1});
    }
  }
  for (auto& per_rank : deps)
    for (auto& v : per_rank)
      std::sort(v.begin(), v.end(), [](const Dep& x, const Dep& y) { return x.rank < y.rank; });
  return deps;
}

}  // namespace collscope::cpu
