// The end of matching: messages that never matched, requests never waited for, and,
// when nobody can go on, the wait-for cycle of a deadlock (matcher.h).
#include <algorithm>

#include "program/matcher.h"

namespace collscope::program::matching {

Status Matcher::at_end() const {
  for (const auto& [key, open] : open_sends_)
    if (!open.empty()) {
      const Message& m = msgs_[static_cast<std::size_t>(open.front())];
      const Instance& a = inst(m.src, static_cast<std::size_t>(m.send));
      return make_error("program.unmatched",
                        who(m.src, a) + " is never received: rank " + std::to_string(m.dst) +
                            " finished its program without a matching recv from rank " + std::to_string(m.src),
                        "add a recv (or irecv) from rank " + std::to_string(m.src) + " on rank " +
                            std::to_string(m.dst) + ", or remove this send",
                        where(a));
    }
  for (const auto& [key, open] : open_recvs_)
    if (!open.empty()) {
      const Message& m = msgs_[static_cast<std::size_t>(open.front())];
      const Instance& b = inst(m.dst, static_cast<std::size_t>(m.recv));
      return make_error("program.unmatched",
                        who(m.dst, b) + " never gets a message: rank " + std::to_string(m.src) +
                            " finished its program without a matching send to rank " + std::to_string(m.dst),
                        "add a send (or isend) to rank " + std::to_string(m.dst) + " on rank " + std::to_string(m.src) +
                            ", or remove this recv",
                        where(b));
    }
  for (std::size_t r = 0; r < st_.size(); ++r)
    if (!st_[r].pending.empty()) {
      const Request& q = st_[r].pending.front();
      const Instance& in = inst(static_cast<std::int32_t>(r), static_cast<std::size_t>(q.inst));
      return make_error(
          "program.unwaited", who(static_cast<std::int32_t>(r), in) + " is never waited for",
          "add {\"op\": \"wait\", \"request\": \"" + q.name + "\"} before the buffer is used again or the program ends",
          where(in, "request"));
    }
  return ok_status();
}

// A member of a collective that has not arrived at it yet (-1: all have).
std::int32_t Matcher::absent_member(std::int32_t sync) const {
  const auto& arrived = arrivals_[static_cast<std::size_t>(sync)];
  for (std::int32_t q : x_.syncs[static_cast<std::size_t>(sync)].members) {
    const bool there = std::any_of(arrived.begin(), arrived.end(),
                                   [&](std::int32_t rec) { return s_.ops[static_cast<std::size_t>(rec)].rank == q; });
    if (!there) return q;
  }
  return -1;
}

// Nobody can go on: find whom each blocked rank waits for and follow the chain to
// a cycle (a deadlock) or to a rank that has finished (a message that never comes).
Status Matcher::stuck() const {
  const auto R = static_cast<std::int32_t>(st_.size());
  std::vector<std::int32_t> next(static_cast<std::size_t>(R), -1);
  std::vector<std::string> why(static_cast<std::size_t>(R));
  for (std::int32_t r = 0; r < R; ++r) {
    const RankState& st = st_[static_cast<std::size_t>(r)];
    if (st.pc >= x_.ranks[static_cast<std::size_t>(r)].size()) continue;
    const Instance& in = inst(r, st.pc);
    const std::string head = "rank " + std::to_string(r) + " waits in ";
    switch (in.kind) {
      case Kind::send:
      case Kind::recv:
        next[static_cast<std::size_t>(r)] = in.peer;
        why[static_cast<std::size_t>(r)] = head + (in.kind == Kind::send ? "send to rank " : "recv from rank ") +
                                           std::to_string(in.peer) + " (" + in.where_text + ")";
        break;
      case Kind::wait:
        for (const auto& name : in.requests)
          for (const Request& q : st.pending)
            if (q.name == name && !finished(q)) {
              const Instance& p = inst(r, static_cast<std::size_t>(q.inst));
              if (next[static_cast<std::size_t>(r)] >= 0) continue;
              if (q.sync >= 0) {  // a collective: the first member that has not called it
                const std::int32_t m = absent_member(q.sync);
                if (m < 0) continue;
                next[static_cast<std::size_t>(r)] = m;
                why[static_cast<std::size_t>(r)] = head + "wait (" + in.where_text + ") for request " + name +
                                                   ", its " + p.op->op + " (" + p.where_text + "), for rank " +
                                                   std::to_string(m);
                continue;
              }
              next[static_cast<std::size_t>(r)] = p.peer;
              why[static_cast<std::size_t>(r)] = head + "wait (" + in.where_text + ") for request " + name + ", its " +
                                                 p.op->op + (p.kind == Kind::send ? " to rank " : " from rank ") +
                                                 std::to_string(p.peer) + " (" + p.where_text + ")";
            }
        break;
      case Kind::sync: {
        const std::int32_t q = absent_member(in.sync);
        if (q >= 0) {
          next[static_cast<std::size_t>(r)] = q;
          why[static_cast<std::size_t>(r)] =
              head + in.op->op + " (" + in.where_text + ") for rank " + std::to_string(q);
        }
        break;
      }
      default:
        break;
    }
  }
  for (std::int32_t start = 0; start < R; ++start) {
    if (next[static_cast<std::size_t>(start)] < 0) continue;
    std::vector<std::int32_t> path;
    std::int32_t r = start;
    while (r >= 0 && std::find(path.begin(), path.end(), r) == path.end()) {
      path.push_back(r);
      r = next[static_cast<std::size_t>(r)];
    }
    if (r < 0) continue;
    // A cycle: from where the chain re-enters it.
    const auto at = std::find(path.begin(), path.end(), r);
    std::vector<std::int32_t> cycle(at, path.end());
    std::string msg = "deadlock: ";
    for (std::size_t i = 0; i < cycle.size(); ++i)
      msg += (i ? " while " : "") + why[static_cast<std::size_t>(cycle[i])];
    const Instance& head = inst(cycle.front(), st_[static_cast<std::size_t>(cycle.front())].pc);
    return make_error("program.deadlock", msg,
                      "break the cycle: let one rank send first, or use isend/irecv and wait for both", where(head));
  }
  // No cycle: some rank waits for one that has finished its program.
  for (std::int32_t r = 0; r < R; ++r) {
    const std::int32_t q = next[static_cast<std::size_t>(r)];
    if (q < 0 || next[static_cast<std::size_t>(q)] >= 0) continue;
    const Instance& in = inst(r, st_[static_cast<std::size_t>(r)].pc);
    const bool q_done = st_[static_cast<std::size_t>(q)].pc >= x_.ranks[static_cast<std::size_t>(q)].size();
    return make_error(in.kind == Kind::sync ? "program.deadlock" : "program.unmatched",
                      why[static_cast<std::size_t>(r)] + ", but rank " + std::to_string(q) +
                          (q_done ? " has finished its program" : " never gets there"),
                      in.kind == Kind::sync ? "every member of a collective must call it, in the same order"
                                            : "give the message a matching op on rank " + std::to_string(q),
                      where(in));
  }
  return make_error("program.deadlock", "the program cannot go on, but no rank is waiting for another",
                    "check the order of the ops", Location{t_.scenario.file, 0, 0, "/program"});
}

}  // namespace collscope::program::matching
