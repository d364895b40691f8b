#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "backends/cpu/plan.h"
#include "collscope/model.h"
#include "ir/deps.h"
#include "model/reuse.h"

namespace collscope {

namespace {

using model_detail::Recency;
using model_detail::Reuse;

// The size of the last-level cache of CPU 0 (Linux sysfs), in bytes; 0 when unknown.
double last_level_cache_bytes() {
  double best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    double v = std::strtod(text.c_str(), nullptr);
    const char unit = text.back();
    if (unit == 'K') v *= 1024;
    if (unit == 'M') v *= 1024 * 1024;
    best = std::max(best, v);
  }
  return best;
}

// Beyond this many transfers the reuse distances are not tracked (all traffic counts as
// from memory): a thousand-rank ring would pay more for the bookkeeping than it saves.
constexpr std::uint64_t kMaxTransfersForReuse = 250000;

// Microseconds to move `bytes` at `from_memory` GB/s for the share `missed` (0..1)
// that comes from memory, at `far` GB/s for the share `shared` found only in the cache
// the cores share (0: as in the core's own), and at `in_cache` GB/s (0: as from memory)
// for the rest.
double move_us(double bytes, double missed, double shared, double from_memory, double far, double in_cache) {
  const double cache_bw = in_cache > 0 ? in_cache : from_memory;
  const double far_bw = far > 0 ? far : cache_bw;
  const double near = std::max(0.0, 1 - missed - shared);
  return bytes * (missed / from_memory + shared / far_bw + near / cache_bw) / 1e3;
}

// Memory traffic of an action, in the copy's currency: a byte of a reduce's or a
// reduce-copy's traffic takes shared_gbps / its own rate of a copy's byte (1 where the
// model has no rate of its own for it).
double memory_weight(const CostModel& m, Action a) {
  const double own = a == Action::reduce        ? m.shared_reduce_gbps
                     : a == Action::reduce_copy ? m.shared_reduce_copy_gbps
                                                : 0.0;
  return own > 0 && m.shared_gbps > 0 ? m.shared_gbps / own : 1.0;
}

// The distinct bytes a transfer touches, as the reuse clocks count them: a copy's and a
// reduce's two buffers (a reduce reads its destination and writes it back), a
// reduce-copy's three.
double touched_bytes(const Transfer& x, double esize) {
  return static_cast<double>(x.count) * esize * (x.action == Action::reduce_copy ? 3.0 : 2.0);
}

// A step's time rank by rank, and what its memory traffic alone takes.
struct StepLanes {
  std::vector<double> us;
  double memory_us = 0;
};

// One step; `memory_bytes` is its traffic from main memory (< 0: all of it; weighed by
// memory_weight), `missed[i]`
// the share of transfer i's bytes that comes from memory (empty: all), and `shared[i]`
// the share found in the shared cache but not in the rank's core (empty: none), and
// `held[i]`, `held_far[i]` the shares of its elements whose destination lines another
// core holds in its own cache and beyond it, and `held_first[i]` within its first-level
// cache (empty: none). `lanes` (when given) gets each rank's own time in the step,
// stretched as the slowest is by what the ranks share (the cores, the memory): the
// step's time without alpha is their largest; and the time its memory traffic takes.
double step_us(const Schedule& s, const Step& st, const CostModel& m, double memory_bytes,
               const std::vector<double>& missed = {}, const std::vector<double>& shared = {},
               const std::vector<double>& held = {}, const std::vector<double>& held_far = {},
               const std::vector<double>& held_first = {}, StepLanes* lanes = nullptr) {
  std::vector<double> per_rank(static_cast<std::size_t>(s.ranks), 0.0);
  double total_bytes = 0;
  const double esize = static_cast<double>(size_of(s.dtype));
  for (std::size_t i = 0; i < st.transfers.size(); ++i) {
    const Transfer& t = st.transfers[i];
    const double bytes = static_cast<double>(t.count) * esize;
    if (t.action == Action::compute) {
      per_rank[static_cast<std::size_t>(t.dst.rank)] += t.duration_us;
      continue;
    }
    const double miss = missed.empty() ? 1.0 : missed[i];
    const double far = shared.empty() ? 0.0 : shared[i];
    const bool copy = t.action == Action::copy;
    // A reduce-copy streams three buffers where a reduce streams two: in the cache it
    // has a rate of its own (from memory, the shared bandwidth bounds both).
    const bool rc = t.action == Action::reduce_copy;
    const double reduce_cache = rc && m.gamma_copy_cache_gbps > 0 ? m.gamma_copy_cache_gbps : m.gamma_cache_gbps;
    const double reduce_far = rc && m.gamma_copy_far_gbps > 0 ? m.gamma_copy_far_gbps : m.gamma_far_gbps;
    const double reduce_memory = rc && m.gamma_copy_gbps > 0 ? m.gamma_copy_gbps : m.gamma_gbps;
    // Elements whose destination lines another core holds are written at the rates of
    // such lines (measured with copies); the rest as the shares say. A reduce or a
    // reduce-copy into lines held beyond that core's own cache pays their trip on top of
    // its own time instead: what the copy into them takes beyond a copy in the shared
    // cache. (Their rate alone, about a reduce-copy's own there, made those lines free for
    // it: a 3-rank flat all-reduce of 2 MiB, whose sums overwrite what the other core
    // copied out in the call before, was predicted at 0.74x its time on every grid.)
    const double h = held.empty() ? 0.0 : held[i], hf = held_far.empty() ? 0.0 : held_far[i];
    const double h1 = held_first.empty() ? 0.0 : held_first[i];
    const double near_held = (h > 0 ? bytes * h / (m.beta_held_gbps * 1e3) : 0.0) +
                             (h1 > 0 ? bytes * h1 / (m.beta_held_first_gbps * 1e3) : 0.0);
    if (copy) {
      per_rank[static_cast<std::size_t>(t.dst.rank)] +=
          near_held + (hf > 0 ? bytes * hf / (m.beta_held_far_gbps * 1e3) : 0.0) +
          (1 - h - hf - h1) * move_us(bytes, miss, far, m.beta_gbps, m.beta_far_gbps, m.beta_cache_gbps);
    } else {
      const double copy_far = m.beta_far_gbps > 0     ? m.beta_far_gbps
                              : m.beta_cache_gbps > 0 ? m.beta_cache_gbps
                                                      : m.beta_gbps;
      const double trip = hf > 0 ? std::max(0.0, 1 / m.beta_held_far_gbps - 1 / copy_far) : 0.0;
      per_rank[static_cast<std::size_t>(t.dst.rank)] +=
          near_held + bytes * hf * trip / 1e3 +
          (1 - h - h1) * move_us(bytes, miss, far, reduce_memory, reduce_far, reduce_cache);
    }
    total_bytes += bytes * (copy ? 2.0 : 3.0) * memory_weight(m, t.action);
  }
  double slowest = per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
  if (m.cores > 0) {
    // The ranks' work shared by the cores as the ranks are pinned (cpu::core_for_lane):
    // the busiest core carries its ranks' share of it. (3 ranks on 2 cores, two on the
    // first: priced as 1.5 ranks a core, reduce-scatters of 256 KiB to 2 MiB took
    // 0.6-0.75x their prediction.)
    const auto C = static_cast<std::size_t>(m.cores);
    const auto ranks = static_cast<std::size_t>(s.ranks);
    std::size_t busiest = 1;
    if (ranks > C) {
      std::vector<std::size_t> on_core(C, 0);
      for (std::size_t r = 0; r < ranks; ++r) busiest = std::max(busiest, ++on_core[cpu::core_for_lane(r, ranks, C)]);
    }
    const double share = ranks > C ? static_cast<double>(busiest) / static_cast<double>(ranks) : 1.0 / m.cores;
    slowest = std::max(slowest, std::accumulate(per_rank.begin(), per_rank.end(), 0.0) * share);
  }
  if (memory_bytes >= 0) total_bytes = memory_bytes;
  const double memory_us = m.shared_gbps > 0 ? total_bytes / (m.shared_gbps * 1e3) : 0.0;
  slowest = std::max(slowest, memory_us);
  if (lanes) {
    const double own = per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
    for (auto& r : per_rank) r = own > 0 ? r * slowest / own : slowest;
    lanes->us = std::move(per_rank);
    lanes->memory_us = memory_us;
  }
  const double extra = m.cores > 0 ? std::max(0, s.ranks - m.cores) : 0;
  return m.alpha_us + m.alpha_per_rank_us * extra + slowest;
}

}  // namespace

CostModel CostModel::cpu_default() {
  // Measured shape of a small shared-memory machine: a step costs about a
  // microsecond of synchronisation, and all ranks share one memory system and its cache.
  CostModel m;
  m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Observable mode's barrier wakes every rank at every step; a rank beyond the cores
  // waits for a core to be free (collscope calibrate measures it: about 1.3 us on a
  // 2-core virtual machine).
  m.alpha_per_rank_us = 1.0;
  static const double cache = last_level_cache_bytes();  // read once, not at every pick
  m.cache_bytes = cache;
  m.repeated_calls = true;  // as `bench` and a training loop run a collective
  return m;
}

double predict_step_us(const Schedule& s, const Step& st, const CostModel& m) { return step_us(s, st, m, -1); }

double predict_us(const Schedule& s, const CostModel& m) {
  const std::vector<double> steps = predict_steps_us(s, m);
  return std::accumulate(steps.begin(), steps.end(), 0.0);
}

namespace {

// Every step's time; `turn[l]` (empty: every lane 0) is the turn in which lane l runs
// its steps: lanes of turn 0 run all their steps, then those of turn 1, and so on, which
// is the order the cache sees (see lane_turns).
// `per_rank` (when given): every step's time for each rank (step_us's `lanes`).
std::vector<double> steps_us(const Schedule& s, const CostModel& m, const std::vector<int>& turn,
                             std::vector<StepLanes>* per_rank = nullptr) {
  std::vector<double> t;
  t.reserve(s.steps.size());
  if (per_rank) per_rank->assign(s.steps.size(), {});
  auto out = [&](std::size_t k) { return per_rank ? &(*per_rank)[k] : nullptr; };
  if (m.cache_bytes <= 0 || s.total_transfers() > kMaxTransfersForReuse) {
    for (std::size_t k = 0; k < s.steps.size(); ++k)
      t.push_back(step_us(s, s.steps[k], m, -1, {}, {}, {}, {}, {}, out(k)));
    return t;
  }
  const double esize = static_cast<double>(size_of(s.dtype));
  // `touched`: every byte read or written; `written`: what its owner wrote (a rank
  // writes only its own memory). A reader on another core fetches what the writer's own
  // cache still holds of it at about the from-memory rate (below).
  Reuse touched(s, m.cache_bytes), written(s, m.cache_bytes);
  // Ranks pinned to one core (cpu::core_for_lane) share its cache: what one of them wrote
  // is near for the others.
  const auto lanes = static_cast<std::size_t>(dataflow::lane_count(s));
  const auto C = static_cast<std::size_t>(m.cores > 0 ? m.cores : s.ranks);
  auto core_of = [&](std::int32_t rank) { return cpu::core_for_lane(static_cast<std::size_t>(rank), lanes, C); };
  // What each core touched itself: bytes of another rank that nobody wrote since this
  // core last read them are still in its own cache (a broadcast's receiver reads the
  // root's buffer again at every call).
  std::vector<Reuse> by_core(C, Reuse(s, m.cache_bytes));
  // And what each core's own caches hold, on that core's own clock: a core that moves
  // nothing keeps what it touched last, whatever the others move.
  std::vector<Recency> own(C, Recency(s));
  std::vector<double> own_now(C, 0.0);
  auto turn_of = [&](const Transfer& x) {
    return turn.empty() ? 0 : turn[static_cast<std::size_t>(dataflow::lane_of(s, x))];
  };
  const int turns = turn.empty() ? 1 : *std::max_element(turn.begin(), turn.end()) + 1;
  auto touch_step = [&](const Step& st, int g) {
    double traffic = 0;
    std::set<std::tuple<std::int32_t, std::int32_t, std::uint64_t, std::uint64_t>> read_once;
    touched.begin_step();
    written.begin_step();
    for (auto& c : by_core) c.begin_step();
    std::vector<double> own_off(C, 0.0);
    for (const auto& x : st.transfers) {
      if (x.count == 0 || x.action == Action::compute || turn_of(x) != g) continue;
      Reuse& mine = by_core[core_of(x.dst.rank)];
      for_each_read(x, [&](const Loc& l) {
        touched.touch(l, x.count);
        mine.touch(l, x.count);
      });
      touched.touch(x.dst, x.count);
      mine.touch(x.dst, x.count);
      written.touch(x.dst, x.count);
      {
        const std::size_t c = core_of(x.dst.rank);
        const double span = touched_bytes(x, esize);
        own_off[c] += span;
        const double end_when = own_now[c] + own_off[c];
        for_each_read(x, [&](const Loc& l) { own[c].touch(l, x.count, end_when, span); });
        own[c].touch(x.dst, x.count, end_when, span);
      }
      // A write takes the lines from every other core's cache.
      for (std::size_t c = 0; c < by_core.size(); ++c)
        if (c != core_of(x.dst.rank)) {
          by_core[c].forget(x.dst, x.count);
          own[c].forget(x.dst, x.count);
        }
      // The clock counts distinct bytes: a slice that another transfer of the step read
      // already, once (a flat broadcast's receivers all read the root's buffer: on the
      // machine of bench/RESULTS.md the 8-rank flat broadcast of 2 MiB, 18 MiB a call,
      // ran at the shared cache's rate, and counted as 32 MiB a call it was priced with a
      // sixth of it from memory, 1.2-1.6x its time).
      traffic += static_cast<double>(x.count) * esize;
      for_each_read(x, [&](const Loc& l) {
        if (read_once.insert({l.rank, l.buf, l.offset, x.count}).second)
          traffic += static_cast<double>(x.count) * esize;
      });
    }
    touched.advance(traffic);
    written.advance(traffic);
    for (auto& c : by_core) c.advance(traffic);
    for (std::size_t c = 0; c < C; ++c) own_now[c] += own_off[c];
  };
  // Calls repeated back to back (a benchmark, a training loop) find in the cache what
  // the call before touched last: the first pass only touches.
  if (m.repeated_calls)
    for (int g = 0; g < turns; ++g)
      for (const auto& st : s.steps) touch_step(st, g);
  // What the transfers of the current step have read so far, by core: ranks on other
  // cores reading the same bytes in one step (a flat broadcast's receivers, all reading
  // the root's buffer) bring them from memory once, and the others find them in the
  // shared cache. Each step moves the clock by 1, beyond this cache's 0.5: earlier steps'
  // reads are gone from it. A core's ranks run one after another, though: what an earlier
  // rank of the same core read in the step is found only while that core's traffic since
  // is within its share of the last level (`since`, on that core's clock). On the machine
  // of bench/RESULTS.md an 8-rank recursive doubling all-reduce of 64 MiB, whose partners
  // share a core in two steps of three, took 2.3x its prediction while every pair's reads
  // counted once. And cores that read the same bytes at the same time drift apart as
  // they stream: a core finds what another brought in only while the traffic between
  // their two reads of a line is within the last level's far end (twice its size, as in
  // Reuse::missed). With the lag anywhere from nothing to a whole transfer, that is the
  // share twice the cache makes of the traffic every core moves during one transfer of
  // its own (1 where that fits). On that machine a 2-rank recursive doubling all-reduce
  // of 16 MiB, each rank reading both inputs (96 MiB in flight: found 2/3), took 1.2x
  // (median of 18 passes) what the reduce-scatter-then-all-gather algorithms took, while
  // counting all of the second core's reads as found priced it 0.93x theirs; counting
  // none, auto picked the binomial broadcast of 16 MiB on 8 ranks, 1.41x slower than
  // the flat one, whose seven receivers read the root's buffer (64 MiB in flight: all
  // found). bench/RESULTS.md, "Two cores reading one buffer at once".
  std::vector<Reuse> read_by(C, Reuse(s, 0.5)), since;
  std::vector<std::size_t> reading;  // the cores that read something in the step, in order
  const double core_share = m.cache_bytes / static_cast<double>(std::max<std::size_t>(1, std::min(C, lanes)));
  // A core's own cache (near_cache_bytes) holds what that core touched lately; the clock
  // counts every core's traffic, and each core makes its share of it.
  const int busy_cores = m.cores > 0 ? std::min(m.cores, s.ranks) : s.ranks;
  const double near_reach = m.near_cache_bytes > 0 ? m.near_cache_bytes * std::max(1, busy_cores) : 0;
  const bool first_level = m.beta_held_first_gbps > 0 && m.first_cache_bytes > 0;
  const std::size_t S = s.steps.size();
  std::vector<double> memory(S, 0.0);
  // Per transfer: the share of its traffic not in the rank's reach, the share in the
  // shared cache only, and the shares of its elements whose destination another core
  // holds (in its own cache, beyond it).
  std::vector<std::vector<double>> slow(S), far(S), held_share(S), held_far_share(S), held_first_share(S);
  for (std::size_t k = 0; k < S; ++k) {
    slow[k].assign(s.steps[k].transfers.size(), 1.0);
    far[k].assign(s.steps[k].transfers.size(), 0.0);
    held_share[k].assign(s.steps[k].transfers.size(), 0.0);
    held_far_share[k].assign(s.steps[k].transfers.size(), 0.0);
    held_first_share[k].assign(s.steps[k].transfers.size(), 0.0);
  }
  for (int g = 0; g < turns; ++g)
    for (std::size_t k = 0; k < S; ++k) {
      const Step& st = s.steps[k];
      // What the step reads and writes, against what it touched before (apart from bytes
      // another transfer of the step reads too, the step's own accesses do not serve each
      // other: they run at the same time).
      for (const std::size_t c : reading) since[c] = Reuse(s, m.cache_bytes);
      since.resize(C, Reuse(s, m.cache_bytes));
      for (auto& r : read_by) {
        r.advance(1.0);
        r.begin_step();
      }
      reading.clear();
      std::vector<double> step_traffic(C, 0.0), on_core(C, 0.0);  // bytes and transfers by core
      for (const auto& x : st.transfers)
        if (x.count > 0 && x.action != Action::compute && turn_of(x) == g) {
          step_traffic[core_of(x.dst.rank)] += touched_bytes(x, esize);
          on_core[core_of(x.dst.rank)] += 1;
        }
      const double step_all = std::accumulate(step_traffic.begin(), step_traffic.end(), 0.0);
      double in_flight = 0;  // what every core moves during one transfer of its own
      for (std::size_t c = 0; c < C; ++c)
        if (on_core[c] > 0) in_flight += step_traffic[c] / on_core[c];
      const double found_together = in_flight > 0 ? std::min(1.0, 2 * m.cache_bytes / in_flight) : 1.0;
      for (std::size_t i = 0; i < st.transfers.size(); ++i) {
        const Transfer& x = st.transfers[i];
        if (x.count == 0 || x.action == Action::compute || turn_of(x) != g) continue;
        const double bytes = static_cast<double>(x.count) * esize;
        // A reduce reads its destination too; a copy or a reduce-copy only writes it.
        double read = 0, reads = 0, remote = 0, shared = 0, held = 0;
        const std::size_t core = core_of(x.dst.rank);
        for_each_read(x, [&](const Loc& l) {
          double miss = std::min(touched.missed(l, x.count, esize), since[core].missed(l, x.count, esize, core_share));
          for (const std::size_t c : reading)
            if (c != core) {
              const double theirs = read_by[c].missed(l, x.count, esize);
              if (theirs < miss) miss -= (miss - theirs) * found_together;
            }
          read += miss;
          reads += bytes;
          if (core_of(l.rank) != core_of(x.dst.rank)) {
            // Still in the writer's core: what it wrote while its own cache still holds
            // it (on its clock, as below) comes from that core at about the memory's rate;
            // what its own cache gave up is in the shared one. On the machine of
            // bench/RESULTS.md a 2-rank ring all-reduce of 2 MiB, whose all-gather copies
            // out the 1 MiB the other rank's reduce-copy wrote among its 3 MiB, took 0.75x
            // what the memory's rate for all of it predicted (another core copied out lines
            // a core had just written at 42-48 GB/s for minutes at a time, and at 17-26 for
            // others, whatever wrote them).
            const std::size_t wc = core_of(l.rank);
            // (No own cache known: all it wrote lately.)
            const double wrote = bytes - written.missed(l, x.count, esize);
            const double theirs = m.near_cache_bytes > 0
                                      ? std::min(wrote, esize * own[wc].held(l, x.count, own_now[wc], step_traffic[wc],
                                                                             m.near_cache_bytes))
                                      : wrote;
            remote += theirs;
            // Without a calibrated rate for writing lines another core holds (below),
            // lines the writer still holds in its own cache make the transfer run no
            // faster than a copy from memory, the read counted for the write's share too:
            // on the machine of bench/RESULTS.md the all-reduce's cost of those lines
            // shows where the cores exchange them, whichever of the two steps pays it.
            if (m.beta_held_gbps <= 0 && near_reach > 0)
              remote += std::min(theirs, bytes - written.missed(l, x.count, esize, near_reach));
            if (near_reach > 0) {
              const double rest = std::max(0.0, bytes - miss - theirs);
              const double kept = bytes - by_core[core_of(x.dst.rank)].missed(l, x.count, esize, near_reach);
              shared += rest - std::min(rest, kept);
            }
          } else if (near_reach > 0) {
            shared += std::max(0.0, touched.missed(l, x.count, esize, near_reach) - miss);
          }
        });
        // Writing lines another core holds (it read or wrote them lately): each line is
        // taken from that core first, at beta_held_gbps where they are within that core's
        // own cache's reach, at beta_held_far_gbps where they are beyond it in the last
        // level. On the machine of bench/RESULTS.md a 2-rank ring all-reduce of 256 KiB
        // pays it in its reduce-scatter step, which overwrites the half the other core
        // copied in the call before: 8.6-9.2 GB/s (19 us a call) with the two cores side
        // by side, 2.3 GB/s (66-70 us) while the host placed them apart, where even lines
        // beyond the core's own cache came at 3 GB/s against 30. Lines still within that
        // core's first-level cache come at beta_held_first_gbps: there 4-16 KiB came at
        // 29-31 GB/s, and a 2-rank flat all-reduce of 4 KiB, which overwrites the 4 KiB
        // the other rank copied in the call before, took 0.45 us a call, not the 0.91
        // the rate of 128 KiB said. Within reach means within that core's own traffic
        // since it touched them, counted as its transfer ran (the tail of a long copy is
        // recent, its head old), and as it goes on moving bytes while this write runs:
        // what it read lately stays only while it has nothing else to do. (On the same
        // machine a core that had read 4 MiB and then moved 8 MiB more gave its lines up
        // at a copy's rate in the last level; a 2-rank ring all-reduce of 2 MiB, whose
        // reduce-scatter overwrites what the other core read while that core runs a
        // reduce-copy of its own, paid nothing for them, and a 2-rank flat all-reduce,
        // whose other core waits idle with the tail of the sum it copied out, paid.)
        // Lines held beyond that core's own cache age as the step runs, by half its traffic
        // on average (every core's, as the last level sees it): on the machine of
        // bench/RESULTS.md a 2-rank all-reduce of 16 MiB in two steps, whose reduce-copy
        // overwrites 8 MiB the other core read a step before while both stream 48 MiB,
        // measured 1.7-2.4 ms on five passes of six while those lines, at their rate, priced
        // it at 2.3-2.5 with the cores apart.
        double held_far = 0, held_first = 0;
        if (m.beta_held_gbps > 0 && near_reach > 0)
          for (std::size_t c = 0; c < by_core.size(); ++c)
            if (c != core_of(x.dst.rank)) {
              const double near = esize * own[c].held(x.dst, x.count, own_now[c], step_traffic[c], m.near_cache_bytes);
              const double first = first_level
                                       ? std::min(near, esize * own[c].held(x.dst, x.count, own_now[c], step_traffic[c],
                                                                            m.first_cache_bytes))
                                       : 0.0;
              held = std::max(held, near - first);
              held_first = std::max(held_first, first);
              if (m.beta_held_far_gbps > 0)
                held_far = std::max(
                    held_far, std::max(0.0, bytes - by_core[c].missed(x.dst, x.count, esize, 0, step_all / 2) - near));
            }
        const double dst = x.action == Action::reduce ? 2 : 1;
        const double dst_miss = touched.missed(x.dst, x.count, esize);
        const double from_memory = read + dst_miss * dst;
        if (near_reach > 0) shared += std::max(0.0, touched.missed(x.dst, x.count, esize, near_reach) - dst_miss) * dst;
        memory[k] += from_memory * memory_weight(m, x.action);
        const double all = reads + bytes * dst;
        slow[k][i] = std::min(1.0, (from_memory + remote) / all);
        far[k][i] = std::min(1.0 - slow[k][i], shared / all);
        held_share[k][i] = std::min(1.0, held / bytes);
        held_far_share[k][i] = std::min(1.0 - held_share[k][i], std::max(0.0, held_far) / bytes);
        held_first_share[k][i] = std::min(1.0 - held_share[k][i] - held_far_share[k][i], held_first / bytes);
        if (std::find(reading.begin(), reading.end(), core) == reading.end()) reading.push_back(core);
        for_each_read(x, [&](const Loc& l) {
          read_by[core].touch(l, x.count);
          since[core].touch(l, x.count);
        });
        since[core].touch(x.dst, x.count);
        since[core].advance(touched_bytes(x, esize));
        since[core].begin_step();
      }
      touch_step(st, g);
    }
  for (std::size_t k = 0; k < S; ++k)
    t.push_back(step_us(s, s.steps[k], m, memory[k], slow[k], far[k], held_share[k], held_far_share[k],
                        held_first_share[k], out(k)));
  return t;
}

// Fast mode's order, as the cache sees it. Where no lane waits for another within a
// call (a pairwise reduce-scatter: every rank reads the others' inputs, which stay put),
// nothing holds a lane back: each core runs one of its lanes through all its steps, then
// the next, so only one lane a core touches memory at a time, not every rank in step
// order. A rank's accumulator then stays in the cache from one of its steps to the next
// (on the machine of bench/RESULTS.md a pairwise reduce-scatter of 16 MiB on 8 ranks
// took a third of what step order predicts). The same holds where lanes do wait for
// each other but never for one their core runs later, even through other cores' lanes
// (a chain broadcast: each rank waits for the one before it): a lane that has what it
// needs runs on until its core takes it away, and the next lane of that core then
// finds the chunks it reads long written (there the 8-rank chain broadcast of 64 MiB
// took the time of eight copies from memory, 1.4-2x what step order predicted, whose
// chunks are read one step after they are written). Turn t holds the t-th lane of each
// core. Empty (step order) where a wait runs back against that order (a ring: each
// core's first lane waits for what its last lane passes on), or every lane has a core.
std::vector<int> lane_turns(const Schedule& s, const CostModel& m,
                            const std::vector<std::vector<std::vector<dataflow::Dep>>>& deps) {
  const std::size_t lanes = deps.size();
  const auto cores = static_cast<std::size_t>(m.cores > 0 ? m.cores : s.ranks);
  if (lanes <= cores) return {};
  // Lane a before lane b: b waits for a within the call, or b comes after a on their core.
  std::vector<std::vector<std::size_t>> after(lanes);
  std::vector<std::size_t> waits_for(lanes, 0);
  auto before = [&](std::size_t a, std::size_t b) {
    after[a].push_back(b);
    ++waits_for[b];
  };
  for (std::size_t l = 0; l < lanes; ++l)
    for (const auto& step : deps[l])
      for (const auto& d : step)
        if (d.step >= 0 && static_cast<std::size_t>(d.rank) != l) before(static_cast<std::size_t>(d.rank), l);
  std::vector<int> turn(lanes), seen(cores, 0);
  std::vector<std::size_t> last(cores, lanes);
  for (std::size_t l = 0; l < lanes; ++l) {
    const std::size_t c = cpu::core_for_lane(l, lanes, cores);
    turn[l] = seen[c]++;
    if (last[c] < lanes) before(last[c], l);
    last[c] = l;
  }
  // That order holds only without a cycle (Kahn's topological sort reaches every lane).
  std::vector<std::size_t> free;
  for (std::size_t l = 0; l < lanes; ++l)
    if (waits_for[l] == 0) free.push_back(l);
  std::size_t ordered = 0;
  while (!free.empty()) {
    const std::size_t a = free.back();
    free.pop_back();
    ++ordered;
    for (const std::size_t b : after[a])
      if (--waits_for[b] == 0) free.push_back(b);
  }
  if (ordered < lanes) return {};
  return turn;
}

}  // namespace

std::vector<double> predict_steps_us(const Schedule& s, const CostModel& m) { return steps_us(s, m, {}); }

namespace {

// `data` (when given, [step][lane]): each lane's own time for its part of each step,
// which then runs inside the chain: a lane's step ends its data time after it may start,
// and the result is the call's whole time, not the waits alone.
double sync_us(const Schedule& s, const CostModel& m, const std::vector<std::vector<std::vector<dataflow::Dep>>>& deps,
               const std::vector<StepLanes>* data = nullptr) {
  const auto S = s.steps.size();
  if (S == 0) return 0;
  const std::size_t lanes = deps.size();
  const int cores = m.cores > 0 ? m.cores : s.ranks;
  // Threads: one per rank, plus a compute thread per rank when there are compute spans.
  const double threads = static_cast<double>(lanes);
  // Lanes share cores as the cpu backend pins them (cpu::core_for_lane: neighbouring
  // lanes on one core, 2 of 3 lanes on the first of 2 cores). A wake-up and a lane's own
  // step cost what its core's lanes make them: a lane that shares its core with another
  // waits for that one's turn, whatever the average over the cores. On the 2-core machine
  // of bench/RESULTS.md 3 ranks took 0.8x their prediction at every small size while
  // 4 ranks (2 on each core) were right, until the lanes on the busier core were priced
  // as such. A lane alone on its core, though, has nobody to hand the core to while it
  // waits (the backend's waits yield when ranks outnumber cores, and a yield with nothing
  // else to run returns at once): it sees what it waits for as a spinning lane does, in a
  // wake-up. There, 3-rank ring all-reduces of 8 B to 4 KiB, whose ring crosses onto the
  // lone rank's core at every turn, took 0.56-0.72x what a scheduler's turn for that hop
  // predicted.
  std::vector<double> wake_of(lanes), own_of(lanes);
  std::vector<std::size_t> core_of_lane(lanes);
  for (std::size_t l = 0; l < lanes; ++l)
    core_of_lane[l] = cpu::core_for_lane(l, lanes, static_cast<std::size_t>(cores));
  {
    const auto C = static_cast<std::size_t>(cores);
    std::vector<int> on_core(C, 0);
    for (std::size_t l = 0; l < lanes; ++l) on_core[core_of_lane[l]]++;
    for (std::size_t l = 0; l < lanes; ++l) {
      const double sharing = on_core[core_of_lane[l]];
      wake_of[l] = threads <= cores || sharing <= 1 ? m.wake_us : m.switch_us * sharing;
      // Every lane walks every step (checks what it waits for, runs its part, says it is
      // done); lanes that share a core take turns at it.
      own_of[l] = m.step_us * std::max(1.0, sharing);
    }
  }

  // Fast mode, ranks outnumbering cores: a rank looks at the progress counter of each
  // rank it waits for, and one pinned to another core wrote that counter since its last
  // look: the look fetches the line from that core (remote_look_us). A core's ranks look
  // one after another, so a step costs each of them every look its core's ranks make in
  // it. (With a core per rank a wait spins, and the line's trip is inside the wake-up
  // the calibration measures.) On the 2-core machine of bench/RESULTS.md an all-to-all
  // on 8 ranks, each rank looking at the 4 on the other core, took 1.9x its prediction
  // at every small size without it; a flat broadcast, where only the root looks at many,
  // was right.
  std::vector<std::vector<double>> looks(S, std::vector<double>(static_cast<std::size_t>(cores), 0.0));
  if (threads > cores)
    for (std::size_t l = 0; l < lanes; ++l)
      for (std::size_t k = 0; k < S; ++k)
        for (const auto& d : deps[l][k])
          if (core_of_lane[static_cast<std::size_t>(d.rank)] != core_of_lane[l]) looks[k][core_of_lane[l]] += 1;

  // A crowd of lanes that wait for the same step costs no more than one of them: when
  // ranks outnumber cores, each core takes its lanes in turn, and the round in which the
  // wait ends runs every lane it released (its wake-up is that round). On the 2-core machine
  // of bench/RESULTS.md a flat broadcast to 7 ranks took one round a call (3.5-7 us
  // against 12-16 us when each core woke the crowd one round per waiter).
  // One call's ready times; `before`: the call before it (its waits count), or none.
  using Times = std::vector<std::vector<double>>;
  auto pass = [&](const Times* before) {
    Times ready(lanes, std::vector<double>(S, 0.0));
    for (std::size_t k = 0; k < S; ++k)
      for (std::size_t l = 0; l < lanes; ++l) {
        double t = k > 0 ? ready[l][k - 1] : before ? (*before)[l][S - 1] : 0.0;
        for (const auto& d : deps[l][k]) {
          const auto q = static_cast<std::size_t>(d.rank);
          if (d.step < 0) {  // the previous call's step S + d.step
            if (!before || static_cast<std::int64_t>(S) + d.step < 0) continue;
            const std::size_t j = S - static_cast<std::size_t>(-d.step);
            t = std::max(t, (*before)[q][j] + wake_of[l]);
            continue;
          }
          const auto j = static_cast<std::size_t>(d.step);
          t = std::max(t, ready[q][j] + wake_of[l]);
        }
        const double mine = data && l < (*data)[k].us.size() ? (*data)[k].us[l] : 0.0;
        ready[l][k] = t + own_of[l] + m.remote_look_us * looks[k][core_of_lane[l]] + mine;
      }
    return ready;
  };
  auto end = [](const Times& r) {
    double t = 0;
    for (const auto& lane : r) t = std::max(t, lane.back());
    return t;
  };
  const Times first = pass(nullptr);
  if (!m.repeated_calls) return end(first);
  // Back to back, a call takes the time from the end of the one before to its own end.
  return end(pass(&first)) - end(first);
}

}  // namespace

double predict_sync_us(const Schedule& s, const CostModel& m) {
  if (s.steps.empty()) return 0;
  return sync_us(s, m, dataflow::compute_deps(s));
}

double predict_auto_us(const Schedule& s, const CostModel& m) {
  // Fast mode has no barrier after a step: neither alpha nor what each rank beyond
  // the cores adds to it (observable mode's costs) belongs in its estimate: the chain of wake-ups takes their place.
  CostModel data = m;
  data.alpha_us = 0;
  data.alpha_per_rank_us = 0;
  if (s.steps.empty()) return 0;
  const auto deps = dataflow::compute_deps(s);
  // Every lane on a core of its own: nothing holds a lane back but what it waits for, so
  // a step's time runs inside the chain of waits, lane by lane. A rank with less to do
  // in a step is not held to the slowest one's time (when the 2-rank chain broadcast's
  // root still copied its whole buffer in the first step, the receiver copied its chunks
  // meanwhile, in the same few microseconds: priced step by step, the root's copy and the
  // chunks after it added up to 1.7x the measured time).
  const int cores = m.cores > 0 ? m.cores : s.ranks;
  // The memory serves every step's traffic in turn, though: the call takes at least the
  // time all of it takes together.
  if (static_cast<std::int32_t>(deps.size()) == s.ranks && s.ranks <= cores) {
    std::vector<StepLanes> per_rank;
    steps_us(s, data, {}, &per_rank);
    double memory = 0;
    for (const auto& st : per_rank) memory += st.memory_us;
    return std::max(memory, sync_us(s, m, deps, &per_rank));
  }
  const std::vector<double> steps = steps_us(s, data, lane_turns(s, m, deps));
  return std::accumulate(steps.begin(), steps.end(), 0.0) + sync_us(s, m, deps);
}

}  // namespace collscope
