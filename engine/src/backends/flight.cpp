#include "backends/flight.h"

#include <algorithm>
#include <cstdio>

namespace collscope::flight {

namespace {

std::string buffer_name(const Schedule& s, std::int32_t buf) {
  return buf >= 0 && static_cast<std::size_t>(buf) < s.buffers.size() ? s.buffers[static_cast<std::size_t>(buf)].name
                                                                      : std::string();
}

bool is_member(const Call& c, std::int32_t rank) {
  return c.args.world_rank.empty() ||
         std::find(c.args.world_rank.begin(), c.args.world_rank.end(), rank) != c.args.world_rank.end();
}

}  // namespace

std::vector<std::vector<PlannedOp>> planned_ops(const Schedule& s) {
  std::vector<std::vector<PlannedOp>> out(static_cast<std::size_t>(s.ranks));
  if (s.ops.empty()) {
    for (std::size_t c = 0; c < s.calls.size(); ++c) {
      const Call& call = s.calls[c];
      if (call.num_steps <= 0) continue;  // nothing to wait for: a count-0 call
      for (std::int32_t r = 0; r < s.ranks; ++r) {
        if (!is_member(call, r)) continue;
        PlannedOp p;
        p.seq = static_cast<std::int64_t>(c);
        p.call = static_cast<std::int32_t>(c);
        p.first_step = call.first_step;
        p.last_step = call.first_step + call.num_steps - 1;
        out[static_cast<std::size_t>(r)].push_back(p);
      }
    }
    return out;
  }
  std::vector<std::int64_t> seq(static_cast<std::size_t>(s.ranks), 0);
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const OpRecord& rec = s.ops[i];
    if (rec.rank < 0 || rec.rank >= s.ranks) continue;
    const std::int64_t n = seq[static_cast<std::size_t>(rec.rank)]++;
    // An op that spans no step (a wait whose messages had already moved) has nothing to record.
    if (rec.first_step < 0 || rec.last_step < rec.first_step) continue;
    if (static_cast<std::size_t>(rec.last_step) >= s.steps.size()) continue;
    PlannedOp p;
    p.seq = n;
    p.record = static_cast<std::int32_t>(i);
    p.call = rec.call >= 0 ? rec.call : s.steps[static_cast<std::size_t>(rec.first_step)].call;
    p.first_step = rec.first_step;
    p.last_step = rec.last_step;
    p.compute = rec.op == "compute";
    out[static_cast<std::size_t>(rec.rank)].push_back(p);
  }
  return out;
}

FlightOp describe(const Schedule& s, std::int32_t rank, const PlannedOp& p) {
  FlightOp f;
  f.seq = p.seq;
  f.call = p.call;
  f.dtype = s.dtype;
  f.first_step = p.first_step;
  f.last_step = p.last_step;
  const OpRecord* rec = p.record >= 0 ? &s.ops[static_cast<std::size_t>(p.record)] : nullptr;
  const Call* call = p.call >= 0 && static_cast<std::size_t>(p.call) < s.calls.size()
                         ? &s.calls[static_cast<std::size_t>(p.call)]
                         : nullptr;
  const bool collective = call && call->kind == CallKind::collective && (!rec || rec->call >= 0);
  if (collective) {
    const CollArgs& a = call->args;
    f.collective = true;
    f.op = std::string(name_of(a.coll));
    f.count = a.count;
    f.root = has_root(a.coll) ? (a.world_rank.empty() ? a.root : a.world_rank[static_cast<std::size_t>(a.root)]) : -1;
    if (is_reducing(a.coll)) f.reduce_op = std::string(name_of(a.op));
    if (a.in_buf >= 0)
      f.buffer = a.in_place || a.in_buf == a.out_buf ? buffer_name(s, a.in_buf)
                                                     : buffer_name(s, a.in_buf) + " -> " + buffer_name(s, a.out_buf);
    f.members = a.world_rank;
    f.text = rec ? rec->text : f.op + (f.buffer.empty() ? "" : " " + f.buffer) + " (" + call->algorithm + ")";
    f.pointer = rec ? rec->pointer : "/program/" + std::to_string(call->program_index);
    return f;
  }
  if (rec) {
    f.op = rec->op;
    f.text = rec->text;
    f.pointer = rec->pointer;
    if (!rec->transfers.empty()) {
      const auto [k, t] = rec->transfers.front();
      const Transfer& x = s.steps[static_cast<std::size_t>(k)].transfers[static_cast<std::size_t>(t)];
      f.count = x.count;
      f.buffer = buffer_name(s, x.dst.rank == rank ? x.dst.buf : x.src.buf);
    }
  }
  return f;
}

std::string waiting_for_it(const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return "";
  return "; " + ranks_text(ranks) + (ranks.size() == 1 ? " is" : " are") + " waiting for it";
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", s);
  return buf;
}

std::string position_text(const Schedule& s, const std::vector<std::vector<PlannedOp>>& ops, std::int32_t rank,
                          std::int32_t step) {
  std::string out = "step " + std::to_string(step);
  if (rank < 0 || static_cast<std::size_t>(rank) >= ops.size()) return out;
  const PlannedOp* best = nullptr;
  for (const auto& p : ops[static_cast<std::size_t>(rank)]) {
    if (p.first_step > step || p.last_step < step) continue;
    // Prefer the collective (or the op that is not a compute span) that holds the step.
    if (!best || (best->compute && !p.compute)) best = &p;
  }
  if (!best) {
    if (step >= 0 && static_cast<std::size_t>(step) < s.steps.size())
      out += " (call " + std::to_string(s.steps[static_cast<std::size_t>(step)].call) + ")";
    return out;
  }
  const FlightOp f = describe(s, rank, *best);
  out += " (seq " + std::to_string(f.seq) + ": " + f.text;
  if (!f.pointer.empty()) out += ", program " + program_op_label(f.pointer);
  return out + ")";
}

Recorder::Recorder(const Schedule& s, std::int32_t lanes, std::int32_t capacity)
    : s_(s), planned_(planned_ops(s)), capacity_(std::max(1, capacity)) {
  lanes_.resize(static_cast<std::size_t>(lanes));
  for (std::int32_t l = 0; l < lanes; ++l) {
    Lane& lane = lanes_[static_cast<std::size_t>(l)];
    const std::int32_t rank = l % s.ranks;
    const bool compute = l >= s.ranks;
    const auto& mine = planned_[static_cast<std::size_t>(rank)];
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (mine[i].compute == compute) lane.ops.push_back(static_cast<std::int32_t>(i));
    std::stable_sort(lane.ops.begin(), lane.ops.end(), [&](std::int32_t a, std::int32_t b) {
      return mine[static_cast<std::size_t>(a)].first_step < mine[static_cast<std::size_t>(b)].first_step;
    });
    lane.ring.resize(static_cast<std::size_t>(capacity_));
  }
}

void Recorder::reach(std::int32_t lane_id, std::int32_t step, double t_us) {
  Lane& l = lanes_[static_cast<std::size_t>(lane_id)];
  if (l.ops.empty()) return;
  const std::int32_t rank = lane_id % s_.ranks;
  const auto& mine = planned_[static_cast<std::size_t>(rank)];
  if (step <= l.last_step) {  // the schedule runs again (benchmark iterations, a replay)
    ++l.iteration;
    l.next = 0;
    l.open.clear();
  }
  l.last_step = step;
  auto op_at = [&](std::size_t i) -> const PlannedOp& { return mine[static_cast<std::size_t>(l.ops[i])]; };
  while (l.next < l.ops.size() && op_at(l.next).first_step < step) ++l.next;  // started mid-schedule
  while (l.next < l.ops.size() && op_at(l.next).first_step == step) {
    const auto slot = static_cast<std::int32_t>(l.written % static_cast<std::uint64_t>(capacity_));
    // The slot's previous op leaves the ring, finished or not.
    l.open.erase(std::remove(l.open.begin(), l.open.end(), slot), l.open.end());
    Slot& sl = l.ring[static_cast<std::size_t>(slot)];
    sl.op = l.ops[l.next];
    sl.seq = op_at(l.next).seq + l.iteration * static_cast<std::int64_t>(mine.size());
    sl.state = FlightState::scheduled;
    sl.t[0] = t_us;
    sl.t[1] = sl.t[2] = -1;
    l.open.push_back(slot);
    ++l.written;
    ++l.next;
  }
}

void Recorder::begin(std::int32_t lane_id, std::int32_t, double t_us) {
  Lane& l = lanes_[static_cast<std::size_t>(lane_id)];
  for (const std::int32_t slot : l.open) {
    Slot& sl = l.ring[static_cast<std::size_t>(slot)];
    if (sl.state == FlightState::scheduled) {
      sl.state = FlightState::started;
      sl.t[1] = t_us;
    }
  }
}

void Recorder::end(std::int32_t lane_id, std::int32_t step, double t_us) {
  Lane& l = lanes_[static_cast<std::size_t>(lane_id)];
  if (l.open.empty()) return;
  const auto& mine = planned_[static_cast<std::size_t>(lane_id % s_.ranks)];
  auto it = l.open.begin();
  while (it != l.open.end()) {
    Slot& sl = l.ring[static_cast<std::size_t>(*it)];
    if (mine[static_cast<std::size_t>(sl.op)].last_step <= step) {
      sl.state = FlightState::completed;
      sl.t[2] = t_us;
      it = l.open.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<FlightRank> Recorder::ranks() const {
  std::vector<FlightRank> out(static_cast<std::size_t>(s_.ranks));
  for (std::int32_t r = 0; r < s_.ranks; ++r) out[static_cast<std::size_t>(r)].rank = r;
  for (std::size_t lane_id = 0; lane_id < lanes_.size(); ++lane_id) {
    const Lane& l = lanes_[lane_id];
    const auto rank = static_cast<std::int32_t>(lane_id % static_cast<std::size_t>(s_.ranks));
    FlightRank& fr = out[static_cast<std::size_t>(rank)];
    const auto cap = static_cast<std::uint64_t>(capacity_);
    const std::uint64_t kept = std::min(l.written, cap);
    fr.dropped += l.written - kept;
    for (std::uint64_t i = l.written - kept; i < l.written; ++i) {
      const Slot& sl = l.ring[static_cast<std::size_t>(i % cap)];
      FlightOp f = describe(s_, rank, planned_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(sl.op)]);
      f.seq = sl.seq;
      f.state = sl.state;
      f.scheduled_us = sl.t[0];
      f.started_us = sl.t[1];
      f.completed_us = sl.t[2];
      fr.ops.push_back(std::move(f));
    }
  }
  for (auto& fr : out)
    std::stable_sort(fr.ops.begin(), fr.ops.end(), [](const FlightOp& a, const FlightOp& b) { return a.seq < b.seq; });
  return out;
}

}  // namespace collscope::flight
