// The conflict rule and bounds checks of the Schedule IR (DESIGN §3).
//
// Inside one step every transfer may run at the same time as every other, so no
// transfer may write a slice that another transfer of the step reads or writes.
// We sweep the read and write intervals of a step sorted by start: an interval
// that starts before the furthest end seen so far overlaps it.
#include <algorithm>
#include <string>
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
      for (const Loc* l : {&x.src, &x.dst}) {
        if (l->rank < 0 || l->rank >= s.ranks) return fail("rank " + std::to_string(l->rank) + " does not exist");
        if (x.count == 0 && l->buf == -1) continue;  // a pure signal
        if (l->buf < 0 || l->buf >= nbuf) return fail("buffer id " + std::to_string(l->buf) + " does not exist");
        const std::uint64_t have = s.buffers[static_cast<std::size_t>(l->buf)].count[static_cast<std::size_t>(l->rank)];
        if (l->offset > have || x.count > have - l->offset)
          return fail("needs elements [" + std::to_string(l->offset) + ", " + std::to_string(l->offset + x.count) +
                      ") but rank " + std::to_string(l->rank) + "'s " + s.buffers[static_cast<std::size_t>(l->buf)].name +
                      " holds " + std::to_string(have));
      }
      if (x.action == Action::scale && (x.src.rank != x.dst.rank || x.src.buf != x.dst.buf ||
                                        x.src.offset != x.dst.offset || x.divisor == 0))
        return fail("a scale must be local, in place and divide by a positive number");
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
}  // namespace

Status check_conflicts(const Schedule& s) {
  std::vector<Interval> iv;
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const auto& st = s.steps[k];
    iv.clear();
    for (std::size_t t = 0; t < st.transfers.size(); ++t) {
      const auto& x = st.transfers[t];
      if (x.count == 0) continue;
      const auto id = static_cast<std::uint32_t>(t);
      if (x.action != Action::scale)
        iv.push_back({x.src.rank, x.src.buf, x.src.offset, x.src.offset + x.count, id, false});
      iv.push_back({x.dst.rank, x.dst.buf, x.dst.offset, x.dst.offset + x.count, id, true});
    }
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
          return make_error("verify.conflict", msg,
                            "transfers of one step run at the same time: move one of them to another step");
        }
        if (x.write) {
          if (x.end > write_end) write_end = x.end, write_t = x.transfer;
        } else {
          if (x.end > read_end) read_end = x.end, read_t = x.transfer;
        }
      }
      i = j;
    }
  }
  return ok_status();
}

}  // namespace collscope
