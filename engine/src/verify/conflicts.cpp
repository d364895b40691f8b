// The conflict rule and bounds checks of the Schedule IR (docs/ARCHITECTURE.md, "The Schedule").
//
// Inside one step every transfer may run at the same time as every other, so no
// transfer may write a slice that another transfer of the step reads or writes.
// We sweep the read and write intervals of a step sorted by start: an interval
// that starts before the furthest end seen so far overlaps it.
//
// Most steps are fine, and big ones (a ring over 1024 ranks has 2048 intervals in
// each of its 2046 steps) make sorting everything by (rank, buffer, start) the main
// cost. So every step first goes through a quick test that only groups the
// intervals by (rank, buffer) with a counting pass, and sorts the small groups by
// start. Only a step that fails the quick test takes the full sort, which also
// finds the first offending pair in a fixed order and words the message.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "collscope/verify.h"
#include "describe.h"

namespace collscope {

Status check_bounds(const Schedule& s) {
  const auto nbuf = static_cast<std::int32_t>(s.buffers.size());
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const auto& st = s.steps[k];
    for (std::size_t t = 0; t < st.transfers.size(); ++t) {
      const auto& x = st.transfers[t];
      auto fail = [&](const std::string& what) {
        return make_error("verify.out_of_bounds",
                          "step " + std::to_string(k) + " transfer " + std::to_string(t) + " (" +
                              describe_transfer(s, x) + "): " + what,
                          "the algorithm addresses memory outside the buffers it was given");
      };
      for (const Loc* l : {&x.src, &x.dst, &x.aux}) {
        if (l == &x.aux && x.action != Action::reduce_copy) continue;
        if (l->rank < 0 || l->rank >= s.ranks) return fail("rank " + std::to_string(l->rank) + " does not exist");
        if (x.count == 0 && l->buf == -1) continue;  // a pure signal
        if (l->buf < 0 || l->buf >= nbuf) return fail("buffer id " + std::to_string(l->buf) + " does not exist");
        const std::uint64_t have = s.buffers[static_cast<std::size_t>(l->buf)].count[static_cast<std::size_t>(l->rank)];
        if (l->offset > have || x.count > have - l->offset)
          return fail("needs elements [" + std::to_string(l->offset) + ", " + std::to_string(l->offset + x.count) +
                      ") but rank " + std::to_string(l->rank) + "'s " +
                      s.buffers[static_cast<std::size_t>(l->buf)].name + " holds " + std::to_string(have));
      }
      if (x.action == Action::scale &&
          (x.src.rank != x.dst.rank || x.src.buf != x.dst.buf || x.src.offset != x.dst.offset || x.divisor == 0))
        return fail("a scale must be local, in place and divide by a positive number");
      if (x.action == Action::compute && x.src.rank != x.dst.rank) return fail("a compute span runs on one rank");
      if (x.action == Action::reduce_copy && x.aux.rank != x.dst.rank)
        return fail("a reduce-copy adds a piece of the receiving rank's own memory (rank " +
                    std::to_string(x.dst.rank) + "), not of rank " + std::to_string(x.aux.rank));
    }
  }
  return ok_status();
}

namespace {

struct Interval {
  std::int32_t rank, buf;
  std::uint64_t start, end;
  std::uint32_t transfer;
  bool write;
};

// Reads and writes of step k, in transfer order.
void collect_intervals(const Step& st, std::vector<Interval>& iv) {
  iv.clear();
  for (std::size_t t = 0; t < st.transfers.size(); ++t) {
    const auto& x = st.transfers[t];
    if (x.count == 0) continue;
    const auto id = static_cast<std::uint32_t>(t);
    for_each_read(x, [&](const Loc& l) { iv.push_back({l.rank, l.buf, l.offset, l.offset + x.count, id, false}); });
    iv.push_back({x.dst.rank, x.dst.buf, x.dst.offset, x.dst.offset + x.count, id, true});
  }
}

// The program entry that wrote transfer t of step k, as a JSON Pointer (lower_scenario
// turns it into file:line:col): the point-to-point op that owns the transfer, else the
// written step that is step k, else the call the step belongs to.
std::string pointer_of(const Schedule& s, std::size_t k, std::uint32_t t) {
  const auto step = static_cast<std::int32_t>(k);
  for (const OpRecord& op : s.ops)
    for (const auto& [ks, ts] : op.transfers)
      if (ks == step && ts == static_cast<std::int32_t>(t)) return op.pointer;
  for (const OpRecord& op : s.ops)
    if (op.op == "step" && op.first_step == step && op.last_step == step) return op.pointer;
  const auto call = s.steps[k].call;
  if (call >= 0 && static_cast<std::size_t>(call) < s.calls.size())
    return "/program/" + std::to_string(s.calls[static_cast<std::size_t>(call)].program_index);
  return {};
}

// The full check of one step: sorts its intervals by (rank, buffer, start) and
// sweeps them; returns the error for the first overlap found.
Status check_step(const Schedule& s, std::size_t k, std::vector<Interval>& iv) {
  collect_intervals(s.steps[k], iv);
  std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.buf != b.buf) return a.buf < b.buf;
    return a.start < b.start;
  });
  std::size_t i = 0;
  while (i < iv.size()) {
    std::size_t j = i;
    // One (rank, buffer) at a time: remember the furthest-reaching read and write.
    std::uint64_t read_end = 0, write_end = 0;
    std::uint32_t read_t = 0, write_t = 0;
    for (; j < iv.size() && iv[j].rank == iv[i].rank && iv[j].buf == iv[i].buf; ++j) {
      const auto& x = iv[j];
      const Interval* other = nullptr;
      std::uint32_t other_t = 0;
      bool other_write = false;
      if (write_end > x.start) {
        other = &x;
        other_t = write_t;
        other_write = true;
      } else if (x.write && read_end > x.start) {
        other = &x;
        other_t = read_t;
      }
      if (other) {
        const auto& a = st_transfer(s, k, other_t);
        const auto& b = st_transfer(s, k, x.transfer);
        const std::string elem = s.buffers[static_cast<std::size_t>(x.buf)].name + "[" + std::to_string(x.start) + "]";
        std::string msg = "step " + std::to_string(k) + " (" + s.steps[k].phase + "): ";
        if (other_t == x.transfer) {
          msg += "transfer " + std::to_string(x.transfer) + " (" + describe_transfer(s, b) +
                 ") reads and writes overlapping memory at rank " + std::to_string(x.rank) + " " + elem;
        } else {
          msg += "transfer " + std::to_string(x.transfer) + " (" + describe_transfer(s, b) + ") " +
                 (x.write ? "writes" : "reads") + " rank " + std::to_string(x.rank) + " " + elem + " which transfer " +
                 std::to_string(other_t) + " (" + describe_transfer(s, a) + ") " + (other_write ? "writes" : "reads") +
                 " in the same step";
        }
        // The error sits at the op of the later transfer (lower_scenario adds its
        // file:line:col); when the other transfer comes from another op, name that too.
        const std::string here = pointer_of(s, k, x.transfer);
        if (other_t != x.transfer)
          if (const std::string there = pointer_of(s, k, other_t); !there.empty() && there != here)
            msg += "; transfer " + std::to_string(other_t) + " comes from " + there;
        return make_error("verify.conflict", msg,
                          "transfers of one step run at the same time: move one of them to another step",
                          Location{"", 0, 0, here});
      }
      if (x.write) {
        if (x.end > write_end) write_end = x.end, write_t = x.transfer;
      } else {
        if (x.end > read_end) read_end = x.end, read_t = x.transfer;
      }
    }
    i = j;
  }
  return ok_status();
}

// The quick test: does a step break the conflict rule at all? Same sweep as
// check_step, but the intervals are only grouped by (rank, buffer), in linear time,
// and each group (usually one or two intervals) is sorted on its own.
class QuickCheck {
 public:
  explicit QuickCheck(const Schedule& s)
      : ranks_(s.ranks),
        nbuf_(static_cast<std::int32_t>(s.buffers.size())),
        count_(static_cast<std::size_t>(std::max(s.ranks, 0)) * s.buffers.size(), 0) {}

  // True when the step certainly obeys the conflict rule. False when it does not,
  // and also when some interval names a rank or buffer that does not exist (the
  // full check copes with anything).
  bool certainly_clean(const Step& st) {
    spans_.clear();
    bool known = true;
    for (const auto& x : st.transfers) {
      if (x.count == 0) continue;
      for_each_read(x, [&](const Loc& l) { known = known && add(l, x.count, false); });
      known = known && add(x.dst, x.count, true);
    }
    // Counting sort by (rank, buffer): give each group a place, then drop every
    // interval into its group's place.
    std::uint32_t next = 0;
    for (const std::uint32_t key : keys_) next += std::exchange(count_[key], next);
    grouped_.resize(spans_.size());
    for (const Span& x : spans_) grouped_[count_[x.key]++] = x;
    for (const std::uint32_t key : keys_) count_[key] = 0;
    keys_.clear();
    if (!known) return false;

    // Each group on its own: sort by start and sweep.
    for (std::size_t i = 0, j; i < grouped_.size(); i = j) {
      for (j = i + 1; j < grouped_.size() && grouped_[j].key == grouped_[i].key;) ++j;
      if (j - i > 1 && group_overlaps(grouped_.begin() + static_cast<std::ptrdiff_t>(i),
                                      grouped_.begin() + static_cast<std::ptrdiff_t>(j)))
        return false;
    }
    return true;
  }

 private:
  struct Span {
    std::uint64_t start, end;
    std::uint32_t key;  // rank * nbuf + buf
    bool write;
  };
  using It = std::vector<Span>::iterator;

  bool add(const Loc& l, std::uint64_t count, bool write) {
    if (l.rank < 0 || l.rank >= ranks_ || l.buf < 0 || l.buf >= nbuf_) return false;
    const auto key = static_cast<std::uint32_t>(l.rank * nbuf_ + l.buf);
    if (count_[key]++ == 0) keys_.push_back(key);
    spans_.push_back({l.offset, l.offset + count, key, write});
    return true;
  }

  static bool group_overlaps(It first, It last) {
    std::sort(first, last, [](const Span& a, const Span& b) { return a.start < b.start; });
    std::uint64_t read_end = 0, write_end = 0;
    for (It x = first; x != last; ++x) {
      if (write_end > x->start || (x->write && read_end > x->start)) return true;
      std::uint64_t& e = x->write ? write_end : read_end;
      e = std::max(e, x->end);
    }
    return false;
  }

  std::int32_t ranks_, nbuf_;
  std::vector<std::uint32_t> count_;  // per (rank, buffer); all zero between steps
  std::vector<std::uint32_t> keys_;   // the (rank, buffer)s this step touches
  std::vector<Span> spans_, grouped_;
};

}  // namespace

Status check_conflicts(const Schedule& s) {
  QuickCheck quick(s);
  std::vector<Interval> iv;
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    if (quick.certainly_clean(s.steps[k])) continue;
    if (auto st = check_step(s, k, iv); !st) return st;
  }
  return ok_status();
}

}  // namespace collscope
