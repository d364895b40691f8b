// The matcher's messages: posting, pairing in program order, moving them into the
// round's step; and the races MPI forbids on buffers of pending requests (matcher.h).
#include <algorithm>

#include "program/matcher.h"

namespace collscope::program::matching {

// A buffer must not be touched while a non-blocking op on it is pending (MPI calls
// it undefined behaviour): reading is fine next to a pending op that only reads it
// (an isend, a collective's send buffer), nothing else is.
Status Matcher::check_race(std::int32_t r, const Instance& in, const Region& reg, bool write) const {
  if (reg.buf < 0) return ok_status();
  for (const Request& q : st_[static_cast<std::size_t>(r)].pending)
    for (const auto& [touched, writes] : q.touches) {
      if (!overlaps(touched, reg)) continue;
      if (!write && !writes) continue;
      const Instance& p = inst(r, static_cast<std::size_t>(q.inst));
      return make_error("program.race",
                        who(r, in) + (write ? " writes " : " reads ") + overlap_text(s_, reg) + " while " + who(r, p) +
                            " is still pending",
                        "wait for request \"" + q.name + "\" before touching that buffer", where(in));
    }
  return ok_status();
}

// A request name must not be reused while the request is pending.
Status Matcher::check_reuse(std::int32_t r, const Instance& in) const {
  for (const Request& q : st_[static_cast<std::size_t>(r)].pending)
    if (q.name == in.request)
      return make_error("program.request_reused",
                        who(r, in) + " reuses request name \"" + in.request + "\" while " +
                            who(r, inst(r, static_cast<std::size_t>(q.inst))) + " is still pending",
                        "wait for \"" + in.request + "\" first, or give this request another name",
                        where(in, "request"));
  return ok_status();
}

// A collective reads its send buffer and writes its recv buffer (in place: its one
// buffer) on every member, whole.
std::vector<std::pair<Region, bool>> Matcher::sync_touches(std::int32_t r, const Instance& in) const {
  std::vector<std::pair<Region, bool>> out;
  const ProgramOp& op = *in.op;
  for (const std::string* name : {&op.buffer, &op.send, &op.recv}) {
    if (name->empty()) continue;
    const std::int32_t b = s_.find_buffer(*name);
    if (b < 0) continue;
    out.push_back(
        {Region{b, 0, s_.buffers[static_cast<std::size_t>(b)].count[static_cast<std::size_t>(r)]}, name != &op.send});
  }
  return out;
}

Status Matcher::check_sync_race(std::int32_t r, const Instance& in) const {
  for (const auto& [whole, writes] : sync_touches(r, in))
    if (auto st = check_race(r, in, whole, writes); !st) return st;
  return ok_status();
}

// Posts the send or recv at rank r's instance i; matches it with the oldest open one
// of the other side between the same pair (messages do not overtake each other).
Result<std::int32_t> Matcher::post(std::int32_t r, std::size_t i) {
  const Instance& in = inst(r, i);
  const bool sends = in.kind == Kind::send;
  const std::pair<std::int32_t, std::int32_t> key = sends ? std::pair{r, in.peer} : std::pair{in.peer, r};
  auto& other = sends ? open_recvs_[key] : open_sends_[key];
  auto& mine = sends ? open_sends_[key] : open_recvs_[key];
  const auto idx = static_cast<std::int32_t>(i);
  if (other.empty()) {
    Message m;
    m.src = key.first;
    m.dst = key.second;
    (sends ? m.send : m.recv) = idx;
    msgs_.push_back(m);
    mine.push_back(static_cast<std::int32_t>(msgs_.size()) - 1);
    return static_cast<std::int32_t>(msgs_.size()) - 1;
  }
  const std::int32_t id = other.front();
  other.pop_front();
  Message& m = msgs_[static_cast<std::size_t>(id)];
  (sends ? m.send : m.recv) = idx;
  if (auto st = check_pair(m); !st) return st.error();
  ready_.push_back(id);
  return id;
}

Status Matcher::check_pair(const Message& m) const {
  const Instance& a = inst(m.src, static_cast<std::size_t>(m.send));
  const Instance& b = inst(m.dst, static_cast<std::size_t>(m.recv));
  if (a.region.count != b.region.count)
    return make_error("program.size_mismatch",
                      who(m.src, a) + " sends " + std::to_string(a.region.count) + " elements, but its matching " +
                          who(m.dst, b) + " expects " + std::to_string(b.region.count),
                      "give the send and its recv the same count (messages between two ranks match in order)",
                      where(b, "count"));
  const DType da = a.op->dtype.value_or(t_.scenario.dtype), db = b.op->dtype.value_or(t_.scenario.dtype);
  if (da != db)
    return make_error("program.dtype_mismatch",
                      who(m.src, a) + " sends " + std::string(name_of(da)) + ", but its matching " + who(m.dst, b) +
                          " expects " + std::string(name_of(db)),
                      "declare the same dtype on both ends", where(b, "dtype"));
  return ok_status();
}

void Matcher::move_ready() {
  std::sort(ready_.begin(), ready_.end());
  for (const std::int32_t id : ready_) {
    Message& m = msgs_[static_cast<std::size_t>(id)];
    const Instance& a = inst(m.src, static_cast<std::size_t>(m.send));
    const Instance& b = inst(m.dst, static_cast<std::size_t>(m.recv));
    Transfer t;
    t.src = Loc{m.src, a.region.buf, a.region.offset};
    t.dst = Loc{m.dst, b.region.buf, b.region.offset};
    t.count = b.region.count;
    add_transfer(t, {a.record, b.record});
    m.moved = true;
  }
  ready_.clear();
}

}  // namespace collscope::program::matching
