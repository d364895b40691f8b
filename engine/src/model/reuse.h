// The cache trackers of the cpu model (model/cost_model.cpp): when each byte of each
// rank's buffers was last touched, on the clock of every core's traffic (Reuse) and on
// one core's own clock (Recency). Internal to the engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collscope/schedule.h"

namespace collscope::model_detail {

// When each piece of each (rank, buffer) was last touched, on a clock of distinct bytes
// touched (each buffer a transfer reads or writes, once). Pieces are disjoint [start,
// end) ranges; touching a range replaces the pieces under it by one.
class Reuse {
 public:
  Reuse(const Schedule& s, double cache) : buffers_(s.buffers.size()), cache_(cache) {}

  // Bytes of [a, b) (elements of esize bytes) last touched more than the cache ago, or
  // never: what comes from memory. `within` > 0: more than that ago instead (a smaller,
  // nearer cache). `later`: as if the clock stood that much further on.
  double missed(const Loc& at, std::uint64_t n, double esize, double within = 0, double later = 0) const {
    const double reach = within > 0 ? within : cache_;
    const auto found = pieces_.find(slot(at));
    if (found == pieces_.end()) return static_cast<double>(n) * esize;
    const auto& m = found->second;
    const std::uint64_t a = at.offset, b = a + n;
    double hit = 0;
    // Hits fade out instead of ending at the cache's size: a byte reused within half
    // the cache is found, and between there and the far end the chance falls in a
    // straight line. A real cache is not a perfect LRU list (its sets fill unevenly; its
    // replacement keeps some old lines and drops some new ones). The last level's far end
    // is twice its size: on the machine of bench/RESULTS.md an all-to-all touching
    // exactly the 32 MiB of its L3 per call ran at half the in-cache rate, and a
    // reduce-scatter touching 48 MiB still found about 45% of it. A core's own cache
    // ends at its size (it holds the core's code and stack too): 4-rank all-to-alls of
    // 256 KiB a rank, each core's share about the size of its 1 MiB L2, ran at the shared
    // cache's rate. (Both shapes are chosen on the model grid; bench/RESULTS.md.)
    const double sure = reach * 0.5, gone = within > 0 ? reach : reach * 2;
    auto it = m.upper_bound(a);
    if (it != m.begin()) --it;
    for (; it != m.end() && it->first < b; ++it) {
      const std::uint64_t lo = std::max(a, it->first), hi = std::min(b, it->second.end);
      if (lo >= hi) continue;
      const double d = now_ - it->second.when + later;
      if (d <= sure) hit += static_cast<double>(hi - lo);
      else if (d < gone) hit += static_cast<double>(hi - lo) * (gone - d) / (gone - sure);
    }
    return (static_cast<double>(n) - hit) * esize;
  }
  void touch(const Loc& at, std::uint64_t n) {
    auto& m = pieces_[slot(at)];
    const std::uint64_t a = at.offset, b = a + n;
    auto it = m.upper_bound(a);
    if (it != m.begin() && std::prev(it)->second.end > a) --it;
    std::vector<std::pair<std::uint64_t, Piece>> keep;  // the parts outside [a, b) of pieces that cross its ends
    while (it != m.end() && it->first < b) {
      if (it->first < a) keep.push_back({it->first, {a, it->second.when}});
      if (it->second.end > b) keep.push_back({b, {it->second.end, it->second.when}});
      it = m.erase(it);
    }
    for (const auto& [start, piece] : keep) m.emplace(start, piece);
    m.emplace(a, Piece{b, step_start_});
  }
  // [a, b) of `at` as never touched (another core's write took the lines away).
  void forget(const Loc& at, std::uint64_t n) {
    const auto found = pieces_.find(slot(at));
    if (found == pieces_.end()) return;
    touch(at, n);
    found->second.erase(at.offset);
  }
  void begin_step() { step_start_ = now_; }
  void advance(double traffic) { now_ += traffic; }

 private:
  struct Piece {
    std::uint64_t end;
    double when;
  };
  std::size_t slot(const Loc& l) const {
    return static_cast<std::size_t>(l.rank) * buffers_ + static_cast<std::size_t>(l.buf);
  }
  std::size_t buffers_;
  // By (rank, buffer); only the ones touched (one tracker per core holds few of them).
  std::unordered_map<std::size_t, std::map<std::uint64_t, Piece>> pieces_;
  double cache_;
  double now_ = 0, step_start_ = 0;
};

// What a core's own cache holds of each (rank, buffer), on that core's own clock (bytes
// it touched itself): each piece remembers when its last byte was touched and how much
// of the core's traffic went by per element while the transfer that touched it ran, so
// the tail of a long transfer is recent and its head old.
class Recency {
 public:
  explicit Recency(const Schedule& s) : buffers_(s.buffers.size()) {}
  // [at, at + n) touched by a transfer that ended at clock `end_when` after `span` of traffic.
  void touch(const Loc& at, std::uint64_t n, double end_when, double span) {
    if (n == 0) return;
    auto& m = pieces_[slot(at)];
    const std::uint64_t a = at.offset, b = a + n;
    cut(m, a, b);
    m.emplace(a, Piece{b, end_when, span / static_cast<double>(n), b});
  }
  void forget(const Loc& at, std::uint64_t n) {
    const auto found = pieces_.find(slot(at));
    if (found == pieces_.end()) return;
    cut(found->second, at.offset, at.offset + n);
  }
  // Elements of [at, at + n) still within `reach` bytes of this core's traffic, with the
  // clock at `now`, while the core moves `during` more bytes as the writer goes from
  // the first element to the last (hits fade out from half the reach to all of it).
  double held(const Loc& at, std::uint64_t n, double now, double during, double reach) const {
    const auto found = pieces_.find(slot(at));
    if (found == pieces_.end() || n == 0 || reach <= 0) return 0;
    const auto& m = found->second;
    const double sure = reach * 0.5, gone = reach;
    auto H = [&](double d) {  // the integral of the hit chance from age 0 to d
      if (d <= sure) return d;
      if (d >= gone) return sure + (gone - sure) / 2;
      const double x = (gone - d) / (gone - sure);
      return sure + (gone - sure) / 2 * (1 - x * x);
    };
    auto hit = [&](double d) { return d <= sure ? 1.0 : d >= gone ? 0.0 : (gone - d) / (gone - sure); };
    const std::uint64_t a = at.offset, b = a + n;
    double out = 0;
    auto it = m.upper_bound(a);
    if (it != m.begin()) --it;
    for (; it != m.end() && it->first < b; ++it) {
      const std::uint64_t lo = std::max(a, it->first), hi = std::min(b, it->second.end);
      if (lo >= hi) continue;
      const Piece& p = it->second;
      auto age = [&](double e) {
        return now - p.when + p.per_element * (static_cast<double>(p.last) - e) +
               during * (e - static_cast<double>(a)) / static_cast<double>(n);
      };
      const double d0 = std::max(0.0, age(static_cast<double>(lo))), d1 = std::max(0.0, age(static_cast<double>(hi)));
      const double avg = std::abs(d1 - d0) < 1e-9 ? hit(d0) : (H(d1) - H(d0)) / (d1 - d0);
      out += avg * static_cast<double>(hi - lo);
    }
    return out;
  }

 private:
  struct Piece {
    std::uint64_t end;
    double when;         // the clock when element `last` - 1 was touched
    double per_element;  // the core's traffic per element while it was touched
    std::uint64_t last;  // the end of the range first touched together
  };
  static void cut(std::map<std::uint64_t, Piece>& m, std::uint64_t a, std::uint64_t b) {
    auto it = m.upper_bound(a);
    if (it != m.begin() && std::prev(it)->second.end > a) --it;
    std::vector<std::pair<std::uint64_t, Piece>> keep;
    while (it != m.end() && it->first < b) {
      if (it->first < a) {
        Piece left = it->second;
        left.end = a;
        keep.push_back({it->first, left});
      }
      if (it->second.end > b) keep.push_back({b, it->second});
      it = m.erase(it);
    }
    for (const auto& [start, piece] : keep) m.emplace(start, piece);
  }
  std::size_t slot(const Loc& l) const {
    return static_cast<std::size_t>(l.rank) * buffers_ + static_cast<std::size_t>(l.buf);
  }
  std::size_t buffers_;
  std::unordered_map<std::size_t, std::map<std::uint64_t, Piece>> pieces_;
};

}  // namespace collscope::model_detail
