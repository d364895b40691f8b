#include "ir/deps.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

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

// Calls f(loc, count) for every slice the transfer reads besides its destination:
// for_each_read's, and the slices a compute span names.
template <class F>
void for_each_slice_read(const Schedule& s, const Transfer& t, F&& f) {
  if (t.count) for_each_read(t, [&](const Loc& from) { f(from, t.count); });
  if (t.action == Action::compute && t.reads >= 0 && static_cast<std::size_t>(t.reads) < s.reads.size())
    for (const Slice& sl : s.reads[static_cast<std::size_t>(t.reads)])
      if (sl.count) f(sl.at, sl.count);
}

// ---------------------------------------------------------------------------
// Program order
//
// Which (lane, step) completions each transfer must wait for because of the program
// order of the ranks it belongs to. Three passes:
//   1. what every op's completion is: the latest step of each lane that runs one of
//      its transfers (for a collective, every transfer of its steps that touches the
//      rank: its own messages and its peers' reads of its memory);
//   2. walking each rank's ops in program order, the fence every op starts behind:
//      the completion of the last blocking op, joined with the completions of the
//      non-blocking ops waited for since (one fence stands for everything before it:
//      whoever completed it had waited for the fence before);
//   3. while the dependencies are computed step by step, every transfer's lane waits
//      for the fences of the ops it belongs to on its source and destination ranks.
class ProgramOrder {
 public:
  explicit ProgramOrder(const Schedule& s) : s_(s) {
    collect_ops();
    if (ops_.empty()) return;
    completions();
    fences();
  }

  // Calls need(lane, awaited lane, step) for transfer `ti` of step k (steps in order).
  template <class Need>
  void transfer(std::int32_t k, std::size_t ti, const Transfer& t, Need need) {
    if (ops_.empty()) return;
    const std::int32_t lane = lane_of(s_, t);
    if (k != step_) enter_step(k);
    // (Transfers come in order; the claims of a step are sorted by transfer.)
    const auto& claims = explicit_[static_cast<std::size_t>(k)];
    while (claim_ < claims.size() && static_cast<std::size_t>(claims[claim_].first) < ti) ++claim_;
    for (; claim_ < claims.size() && static_cast<std::size_t>(claims[claim_].first) == ti; ++claim_)
      apply(lane, claims[claim_].second, need);
    for (const std::int32_t r : {t.src.rank, t.dst.rank}) {
      if (r < 0 || r >= s_.ranks) continue;
      const std::int32_t op = span_at(r);
      if (op >= 0) apply(lane, fence_of_[static_cast<std::size_t>(op)], need);
      if (t.src.rank == t.dst.rank) break;
    }
  }

 private:
  struct Op {
    std::int32_t rank = 0;
    OpOrder order = OpOrder::blocking;
    bool spans = false;
    std::int32_t first = -1, last = -1;
    const std::vector<std::pair<std::int32_t, std::int32_t>>* transfers = nullptr;
    const std::vector<std::int32_t>* completes = nullptr;
    std::int32_t parent = -1;
  };
  using Fence = std::vector<Dep>;  // by lane, one entry per lane: its latest step

  const Schedule& s_;
  std::vector<Op> ops_;
  std::vector<std::vector<std::int32_t>> kids_;                               // per op, in program order
  std::vector<std::vector<std::int32_t>> roots_;                              // per rank, in program order
  std::vector<Fence> done_;                                                   // per op: its completion
  std::vector<Fence> fences_{Fence{}};                                        // fence 0: nothing to wait for
  std::vector<std::int32_t> fence_of_;                                        // per op: the fence it starts behind
  std::vector<std::vector<std::pair<std::int32_t, std::int32_t>>> explicit_;  // per step: (transfer, fence)
  std::vector<std::vector<std::int32_t>> spans_;  // per rank: its spanning ops without a body, by first step
  std::vector<std::size_t> at_;                   // per rank: the first of them not yet over
  std::int32_t step_ = -1;
  std::size_t claim_ = 0;                      // the next claim of explicit_[step_]
  std::unordered_set<std::uint64_t> applied_;  // (lane, fence) pairs already waited for

  void collect_ops() {
    const auto R = static_cast<std::size_t>(s_.ranks);
    if (!s_.ops.empty()) {
      for (const OpRecord& r : s_.ops) {
        Op o;
        o.rank = r.rank;
        o.order = r.order;
        o.spans = r.spans_steps;
        o.first = r.first_step;
        o.last = r.last_step;
        o.transfers = &r.transfers;
        o.completes = &r.completes;
        o.parent = r.parent;
        ops_.push_back(o);
      }
    } else {
      // Collectives only: every call is a blocking op of each of its members.
      for (const Call& c : s_.calls) {
        if (c.num_steps <= 0) continue;
        for (std::int32_t g = 0; g < c.args.ranks; ++g) {
          Op o;
          o.rank = c.args.world_rank.empty() ? g : c.args.world_rank[static_cast<std::size_t>(g)];
          o.spans = true;
          o.first = c.first_step;
          o.last = c.first_step + c.num_steps - 1;
          ops_.push_back(o);
        }
      }
    }
    kids_.assign(ops_.size(), {});
    roots_.assign(R, {});
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const Op& o = ops_[i];
      if (o.rank < 0 || o.rank >= s_.ranks) continue;
      if (o.parent >= 0 && static_cast<std::size_t>(o.parent) < ops_.size())
        kids_[static_cast<std::size_t>(o.parent)].push_back(static_cast<std::int32_t>(i));
      else roots_[static_cast<std::size_t>(o.rank)].push_back(static_cast<std::int32_t>(i));
    }
    spans_.assign(R, {});
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const Op& o = ops_[i];
      if (o.spans && kids_[i].empty() && o.first >= 0 && o.last >= o.first && o.rank >= 0 && o.rank < s_.ranks &&
          static_cast<std::size_t>(o.last) < s_.steps.size())
        spans_[static_cast<std::size_t>(o.rank)].push_back(static_cast<std::int32_t>(i));
    }
    for (auto& list : spans_)
      std::stable_sort(list.begin(), list.end(), [&](std::int32_t a, std::int32_t b) {
        return ops_[static_cast<std::size_t>(a)].first < ops_[static_cast<std::size_t>(b)].first;
      });
    at_.assign(R, 0);
  }

  static void join(Fence& f, std::int32_t lane, std::int32_t step) {
    auto it = std::lower_bound(f.begin(), f.end(), lane, [](const Dep& d, std::int32_t l) { return d.rank < l; });
    if (it != f.end() && it->rank == lane) it->step = std::max(it->step, step);
    else f.insert(it, Dep{lane, step});
  }

  // The spanning op of rank r at the current step, or -1.
  std::int32_t span_at(std::int32_t r) {
    auto& list = spans_[static_cast<std::size_t>(r)];
    std::size_t& i = at_[static_cast<std::size_t>(r)];
    while (i < list.size() && ops_[static_cast<std::size_t>(list[i])].last < step_) ++i;
    if (i < list.size() && ops_[static_cast<std::size_t>(list[i])].first <= step_) return list[i];
    return -1;
  }

  void enter_step(std::int32_t k) {
    step_ = k;
    claim_ = 0;
  }

  // Pass 1.
  void completions() {
    done_.assign(ops_.size(), {});
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      if (ops_[i].spans || !ops_[i].transfers) continue;
      for (const auto& [k, t] : *ops_[i].transfers) {
        if (k < 0 || static_cast<std::size_t>(k) >= s_.steps.size()) continue;
        const auto& ts = s_.steps[static_cast<std::size_t>(k)].transfers;
        if (t < 0 || static_cast<std::size_t>(t) >= ts.size()) continue;
        join(done_[i], lane_of(s_, ts[static_cast<std::size_t>(t)]), k);
      }
    }
    for (std::size_t k = 0; k < s_.steps.size(); ++k) {
      enter_step(static_cast<std::int32_t>(k));
      for (const Transfer& t : s_.steps[k].transfers)
        for (const std::int32_t r : {t.src.rank, t.dst.rank}) {
          if (r < 0 || r >= s_.ranks) continue;
          const std::int32_t op = span_at(r);
          if (op >= 0) join(done_[static_cast<std::size_t>(op)], lane_of(s_, t), static_cast<std::int32_t>(k));
          if (t.src.rank == t.dst.rank) break;
        }
    }
    at_.assign(at_.size(), 0);
    step_ = -1;
  }

  std::int32_t fence_id(const Fence& f, std::int32_t current) {
    if (f.empty()) return 0;
    const Fence& c = fences_[static_cast<std::size_t>(current)];
    if (std::equal(c.begin(), c.end(), f.begin(), f.end(),
                   [](const Dep& x, const Dep& y) { return x.rank == y.rank && x.step == y.step; }))
      return current;
    fences_.push_back(f);
    return static_cast<std::int32_t>(fences_.size()) - 1;
  }

  // Pass 2: the ops of `list` in program order, starting behind fence f.
  Fence walk(const std::vector<std::int32_t>& list, Fence f) {
    std::int32_t id = fence_id(f, 0);
    for (const std::int32_t i : list) {
      const auto ui = static_cast<std::size_t>(i);
      const Op& o = ops_[ui];
      fence_of_[ui] = id;
      if (!kids_[ui].empty()) {
        // A custom algorithm: its body's ops in order; the call completes with them.
        done_[ui] = walk(kids_[ui], f);
        if (o.order == OpOrder::blocking) f = done_[ui];
      } else if (o.order == OpOrder::blocking) {
        if (!done_[ui].empty()) f = done_[ui];
      } else if (o.order == OpOrder::wait && o.completes) {
        for (const std::int32_t j : *o.completes)
          if (j >= 0 && static_cast<std::size_t>(j) < done_.size())
            for (const Dep& d : done_[static_cast<std::size_t>(j)]) join(f, d.rank, d.step);
      }
      id = fence_id(f, id);
    }
    return f;
  }

  // Pass 2 for every rank, and the claims of pass 3.
  void fences() {
    fence_of_.assign(ops_.size(), 0);
    for (const auto& list : roots_) walk(list, {});
    explicit_.assign(s_.steps.size(), {});
    for (std::size_t i = 0; i < ops_.size(); ++i) {
      const Op& o = ops_[i];
      if (o.spans || !o.transfers || fence_of_[i] == 0) continue;
      for (const auto& [k, t] : *o.transfers)
        if (k >= 0 && static_cast<std::size_t>(k) < explicit_.size())
          explicit_[static_cast<std::size_t>(k)].push_back({t, fence_of_[i]});
    }
    for (auto& claims : explicit_) std::sort(claims.begin(), claims.end());
  }

  template <class Need>
  void apply(std::int32_t lane, std::int32_t fence, Need need) {
    if (fence == 0) return;
    // A lane runs its steps in order: once it waited behind a fence, later steps are too.
    if (!applied_.insert(static_cast<std::uint64_t>(lane) << 32 | static_cast<std::uint32_t>(fence)).second) return;
    for (const Dep& d : fences_[static_cast<std::size_t>(fence)]) need(lane, d.rank, d.step);
  }
};

}  // namespace

std::int32_t lane_count(const Schedule& s) {
  for (const auto& st : s.steps)
    for (const auto& t : st.transfers)
      if (t.action == Action::compute) return 2 * s.ranks;
  return s.ranks;
}

namespace {

// A region of one (rank, buffer) slot that the schedule reads before writing it.
struct InputRange {
  std::size_t slot;  // rank * buffers + buffer
  std::uint64_t a, b;
};

// Sorts the regions and merges those that overlap (a region read several times
// before its first write is listed several times).
void merge_ranges(std::vector<InputRange>& inputs) {
  std::sort(inputs.begin(), inputs.end(),
            [](const InputRange& x, const InputRange& y) { return x.slot != y.slot ? x.slot < y.slot : x.a < y.a; });
  std::vector<InputRange> merged;
  for (const InputRange& in : inputs)
    if (!merged.empty() && merged.back().slot == in.slot && in.a <= merged.back().b)
      merged.back().b = std::max(merged.back().b, in.b);
    else merged.push_back(in);
  inputs = std::move(merged);
}

// Records step `g`'s reads (the latest read per lane) and writes in `memory`.
void log_accesses(const Schedule& s, const Step& st, std::int32_t g, std::vector<Segments>& memory) {
  const std::size_t nbuf = s.buffers.size();
  auto slot = [&](const Loc& l) -> Segments& {
    return memory[static_cast<std::size_t>(l.rank) * nbuf + static_cast<std::size_t>(l.buf)];
  };
  for (const auto& t : st.transfers) {
    if (is_signal(t)) continue;
    const std::int32_t d = lane_of(s, t);
    for_each_slice_read(s, t, [&](const Loc& from, std::uint64_t count) {
      auto& m = slot(from);
      const std::uint64_t a = from.offset, b = a + count;
      for (auto it = cover(m, a, b); it != m.end() && it->first < b; ++it) {
        auto& rs = it->second.readers;
        auto r = std::find_if(rs.begin(), rs.end(), [&](const Reader& x) { return x.lane == d; });
        if (r != rs.end()) r->step = g;
        else rs.push_back({d, g});
      }
    });
    if (t.count) overwrite(slot(t.dst), t.dst.offset, t.dst.offset + t.count, d, g);
  }
}

}  // namespace

std::vector<std::vector<std::vector<Dep>>> compute_deps(const Schedule& s) {
  const auto S = static_cast<std::int32_t>(s.steps.size());
  const std::size_t nbuf = s.buffers.size();
  std::vector<Segments> memory(static_cast<std::size_t>(s.ranks) * nbuf);
  auto slot = [&](const Loc& l) -> Segments& {
    return memory[static_cast<std::size_t>(l.rank) * nbuf + static_cast<std::size_t>(l.buf)];
  };
  std::vector<std::vector<std::vector<Dep>>> deps(static_cast<std::size_t>(lane_count(s)),
                                                  std::vector<std::vector<Dep>>(static_cast<std::size_t>(S)));
  // Keep only the latest required step per (waiting lane, awaited lane).
  std::unordered_map<std::int64_t, std::int32_t> need;

  // What the schedule reads before writing it (its inputs).
  std::vector<InputRange> inputs;

  ProgramOrder order(s);

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
      merge_ranges(inputs);
      // Between two iterations every rank writes its inputs afresh, as a program that
      // calls the collective in a loop does (and as an algorithm must not rely on them
      // staying put): the owner does so once it has finished the previous iteration,
      // after every read of the old values. So the first step of an iteration waits for
      // those reads, and whoever reads an input waits for its owner to have finished the
      // previous iteration (step S - 1, relative -1). Without this, repeating a
      // collective whose ranks only read each other's inputs would need no
      // synchronisation at all, and a benchmark would time no communication.
      for (const InputRange& in : inputs) {
        const auto owner = static_cast<std::int32_t>(in.slot / nbuf);
        before_overwrite(memory[in.slot], in.a, in.b,
                         [&](std::int32_t lane, std::int32_t step) { require(owner, lane, step); });
      }
      for (const InputRange& in : inputs)
        overwrite(memory[in.slot], in.a, in.b, static_cast<std::int32_t>(in.slot / nbuf), S - 1);
    }
    for (std::size_t ti = 0; ti < st.transfers.size(); ++ti) {
      const Transfer& t = st.transfers[ti];
      const std::int32_t d = lane_of(s, t);
      // Program order within the iteration (steps are absolute here: S + k).
      if (record)
        order.transfer(g - S, ti, t, [&](std::int32_t waiter, std::int32_t lane, std::int32_t step) {
          require(waiter, lane, step + S);
        });
      if (is_signal(t)) {  // the source rank's thread must have reached this step
        require(d, t.src.rank, g - 1);
        continue;
      }
      // read-after-write on the source: wait for the writes of what it reads
      for_each_slice_read(s, t, [&](const Loc& from, std::uint64_t count) {
        auto& m = slot(from);
        const std::uint64_t a = from.offset, b = a + count;
        for (auto it = cover(m, a, b); it != m.end() && it->first < b; ++it) {
          if (it->second.write_lane >= 0) require(d, it->second.write_lane, it->second.write_step);
          else if (!record)
            inputs.push_back({static_cast<std::size_t>(from.rank) * nbuf + static_cast<std::size_t>(from.buf),
                              it->first, it->second.end});
        }
      });
      if (t.count == 0) continue;  // a compute span that writes nothing
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
    log_accesses(s, st, g, memory);
  }
  for (auto& per_lane : deps)
    for (auto& v : per_lane) std::sort(v.begin(), v.end(), [](const Dep& x, const Dep& y) { return x.rank < y.rank; });
  return deps;
}

}  // namespace collscope::dataflow
