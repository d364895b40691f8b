#include "ir/deps.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace collscope::dataflow {

namespace {

// What happened last to a piece of one (rank, buffer): the write that produced it and the
// reads of it since. Segments of a buffer are disjoint; a write over a range replaces
// the segments under it by one, so their number stays near the number of chunk
// boundaries the algorithm uses, and each access costs about log(segments) plus the
// segments it covers (a flat list of accesses made long runs quadratic).
struct Reader {
  std::int32_t lane, step;
};
struct Segment {
  std::uint64_t end = 0;
  std::int32_t write_lane = -1, write_step = 0;  // no write yet: -1
  std::vector<Reader> readers;                   // since that write; one entry per lane, its latest step
};
using Segments = std::map<std::uint64_t, Segment>;  // by start

// The segments covering [a, b), cut at a and b, with never-accessed gaps filled in.
// Returns the first of them; the range ends before the first segment starting at >= b.
// One tree lookup, then a walk over the covered segments.
Segments::iterator cover(Segments& m, std::uint64_t a, std::uint64_t b) {
  auto it = m.upper_bound(a);
  if (it != m.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > a) {
      if (prev->first < a) {  // straddles a: cut it
        Segment right = prev->second;
        prev->second.end = a;
        it = m.emplace_hint(it, a, std::move(right));
      } else {
        it = prev;  // starts at a
      }
    }
  }
  std::uint64_t at = a;
  Segments::iterator first = m.end();
  while (at < b) {
    if (it == m.end() || it->first > at) {  // a gap [at, next start)
      const std::uint64_t gap_end = it == m.end() ? b : std::min(b, it->first);
      it = m.emplace_hint(it, at, Segment{gap_end, -1, 0, {}});
    } else if (it->second.end > b) {  // straddles b: cut it
      Segment right = it->second;
      it->second.end = b;
      m.emplace_hint(std::next(it), b, std::move(right));
    }
    if (first == m.end()) first = it;
    at = it->second.end;
    ++it;
  }
  return first == m.end() ? m.lower_bound(a) : first;
}

// Records a write of [a, b) by `lane` at `step`: the segments under it become one, with
// no readers yet.
void overwrite(Segments& m, std::uint64_t a, std::uint64_t b, std::int32_t lane, std::int32_t step) {
  auto first = cover(m, a, b);
  if (first->second.end == b) {  // exactly one segment: reuse it
    first->second.write_lane = lane;
    first->second.write_step = step;
    first->second.readers.clear();
    return;
  }
  auto last = first;
  while (last != m.end() && last->first < b) ++last;
  m.erase(first, last);
  m.emplace(a, Segment{b, lane, step, {}});
}

// Calls need(lane, step) for what a write of [a, b) must wait for (write-after-write and
// write-after-read): the write of what it overwrites and every read of it since
// (earlier accesses were awaited by that write).
template <class Need>
void before_overwrite(Segments& m, std::uint64_t a, std::uint64_t b, Need need) {
  for (auto it = cover(m, a, b); it != m.end() && it->first < b; ++it) {
    if (it->second.write_lane >= 0) need(it->second.write_lane, it->second.write_step);
    for (const auto& r : it->second.readers) need(r.lane, r.step);
  }
}

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
  std::vector<Segments> memory(static_cast<std::size_t>(s.ranks) * nbuf);
  auto slot = [&](const Loc& l) -> Segments& {
    return memory[static_cast<std::size_t>(l.rank) * nbuf + static_cast<std::size_t>(l.buf)];
  };
  std::vector<std::vector<std::vector<Dep>>> deps(
      static_cast<std::size_t>(lane_count(s)), std::vector<std::vector<Dep>>(static_cast<std::size_t>(S)));
  // Keep only the latest required step per (waiting lane, awaited lane).
  std::unordered_map<std::int64_t, std::int32_t> need;

  // What the schedule reads before writing it (its inputs): slot, start, end.
  struct Range {
    std::size_t slot;
    std::uint64_t a, b;
  };
  std::vector<Range> inputs;

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
    if (g == S) {
      // (A region read several times before its first write is listed several times.)
      std::sort(inputs.begin(), inputs.end(),
                [](const Range& x, const Range& y) { return x.slot != y.slot ? x.slot < y.slot : x.a < y.a; });
      std::vector<Range> merged;
      for (const Range& in : inputs)
        if (!merged.empty() && merged.back().slot == in.slot && in.a <= merged.back().b)
          merged.back().b = std::max(merged.back().b, in.b);
        else
          merged.push_back(in);
      inputs = std::move(merged);
      // Between two iterations every rank writes its inputs afresh, as a program that
      // calls the collective in a loop does (and as an algorithm must not rely on them
      // staying put): the owner does so once it has finished the previous iteration,
      // after every read of the old values. So the first step of an iteration waits for
      // those reads, and whoever reads an input waits for its owner to have finished the
      // previous iteration (step S - 1, relative -1). Without this, repeating a
      // collective whose ranks only read each other's inputs would need no
      // synchronisation at all, and a benchmark would time no communication.
      for (const Range& in : inputs) {
        const auto owner = static_cast<std::int32_t>(in.slot / nbuf);
        before_overwrite(memory[in.slot], in.a, in.b, [&](std::int32_t lane, std::int32_t step) { require(owner, lane, step); });
      }
      for (const Range& in : inputs)
        overwrite(memory[in.slot], in.a, in.b, static_cast<std::int32_t>(in.slot / nbuf), S - 1);
    }
    for (const auto& t : st.transfers) {
      const std::int32_t d = lane_of(s, t);
      if (is_signal(t)) {  // the source rank's thread must have reached this step
        require(d, t.src.rank, g - 1);
        continue;
      }
      if (t.count == 0) continue;  // a compute span that writes nothing
      // read-after-write on the source: wait for the writes of what it reads
      for_each_read(t, [&](const Loc& from) {
        auto& m = slot(from);
        const std::uint64_t a = from.offset, b = a + t.count;
        for (auto it = cover(m, a, b); it != m.end() && it->first < b; ++it) {
          if (it->second.write_lane >= 0) require(d, it->second.write_lane, it->second.write_step);
          else if (!record)
            inputs.push_back({static_cast<std::size_t>(from.rank) * nbuf + static_cast<std::size_t>(from.buf), it->first,
                              it->second.end});
        }
      });
      // write-after-write and write-after-read on the destination
      before_overwrite(slot(t.dst), t.dst.offset, t.dst.offset + t.count,
                       [&](std::int32_t lane, std::int32_t step) { require(d, lane, step); });
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
      for_each_read(t, [&](const Loc& from) {
        auto& m = slot(from);
        const std::uint64_t a = from.offset, b = a + t.count;
        for (auto it = cover(m, a, b); it != m.end() && it->first < b; ++it) {
          auto& rs = it->second.readers;
          auto r = std::find_if(rs.begin(), rs.end(), [&](const Reader& x) { return x.lane == d; });
          if (r != rs.end()) r->step = g;
          else rs.push_back({d, g});
        }
      });
      overwrite(slot(t.dst), t.dst.offset, t.dst.offset + t.count, d, g);
    }
  }
  for (auto& per_lane : deps)
    for (auto& v : per_lane)
      std::sort(v.begin(), v.end(), [](const Dep& x, const Dep& y) { return x.rank < y.rank; });
  return deps;
}

}  // namespace collscope::dataflow
