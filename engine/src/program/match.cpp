// The matcher's rounds, and one rank's walk through its ops (matcher.h).
#include <algorithm>

#include "program/matcher.h"

namespace collscope::program {

namespace matching {

Matcher::Matcher(const Expansion& x, Target& t) : x_(x), t_(t), s_(t.schedule) {
  st_.resize(x.ranks.size());
  arrived_.assign(x.syncs.size(), 0);
  done_.assign(x.syncs.size(), 0);
  arrivals_.resize(x.syncs.size());
}

Status Matcher::run() {
  const auto R = static_cast<std::int32_t>(x_.ranks.size());
  for (;;) {
    bool progress = false;
    busy_.assign(static_cast<std::size_t>(R), 0);
    step_op_.reset();
    cur_ = Step{};
    cur_records_.clear();
    for (std::int32_t r = 0; r < R; ++r) {
      auto p = advance(r);
      if (!p) return p.error();
      progress = progress || *p;
    }
    if (!ready_.empty()) {
      move_ready();
      progress = true;
    }
    if (!cur_.transfers.empty()) flush();
    if (auto st = check_size(Location{}); !st) return st;
    auto emitted = emit_complete();
    if (!emitted) return emitted.error();
    progress = progress || *emitted;
    bool finished = true;
    for (std::int32_t r = 0; r < R; ++r)
      finished = finished && st_[static_cast<std::size_t>(r)].pc == x_.ranks[static_cast<std::size_t>(r)].size();
    if (finished) return at_end();
    if (!progress) return stuck();
  }
}

Location Matcher::where(const Instance& in, const std::string& key) const {
  const ProgramOp& op = *in.op;
  Location l = op.where;
  if (!key.empty())
    if (auto it = op.field_where.find(key); it != op.field_where.end()) l = it->second;
  if (l.file.empty() && l.line == 0) l.file = t_.scenario.file;
  if (l.pointer.empty()) l.pointer = in.pointer;
  return l;
}

std::string Matcher::who(std::int32_t r, const Instance& in) const {
  return "rank " + std::to_string(r) + "'s " + record_text(in) + " (" + in.where_text + ")";
}

std::string Matcher::record_text(const Instance& in) const {
  return t_.schedule.ops[static_cast<std::size_t>(in.record)].text;
}

// Has a pending request's work been done: its message moved, its collective run?
bool Matcher::finished(const Request& q) const {
  if (q.sync >= 0) return done_[static_cast<std::size_t>(q.sync)] != 0;
  return msgs_[static_cast<std::size_t>(q.msg)].moved;
}

// --- one rank ---------------------------------------------------------------------

// Runs rank r ahead as far as it can this round. True when anything happened.
Result<bool> Matcher::advance(std::int32_t r) {
  RankState& st = st_[static_cast<std::size_t>(r)];
  const auto& list = x_.ranks[static_cast<std::size_t>(r)];
  bool did = false;
  while (st.pc < list.size()) {
    const Instance& in = list[st.pc];
    OpRecord& rec = record(in);
    if (!st.reached) {
      st.reached = true;
      rec.first_step = step_now();
    }
    Result<Progress> p = Progress::blocked;
    switch (in.kind) {
      case Kind::send:
      case Kind::recv:
        p = message_op(r, in, did);
        break;
      case Kind::wait:
        p = wait_op(r, in, rec);
        break;
      case Kind::compute:
      case Kind::copy:
      case Kind::accumulate:
        p = local_op(r, in, rec);
        break;
      case Kind::sync:
        p = sync_op(r, in, did);
        break;
    }
    if (!p) return p.error();
    if (*p == Progress::blocked) return did;
    if (*p == Progress::took_step) return true;
    // The op at pc completed.
    if (rec.last_step < 0) rec.last_step = std::max(rec.first_step, step_now() - 1);
    st.pc++;
    st.reached = false;
    did = true;
  }
  return did;
}

// send/recv: post the message, then wait until it has moved; isend/irecv: post it and go on.
Result<Progress> Matcher::message_op(std::int32_t r, const Instance& in, bool& did) {
  RankState& st = st_[static_cast<std::size_t>(r)];
  if (in.blocking) {
    if (st.posted < 0) {
      if (auto s = check_race(r, in, in.region, in.kind == Kind::recv); !s) return s.error();
      auto m = post(r, st.pc);
      if (!m) return m.error();
      st.posted = *m;
      did = true;
    }
    if (!msgs_[static_cast<std::size_t>(st.posted)].moved) return Progress::blocked;
    st.posted = -1;
    return Progress::completed;
  }
  if (auto s = check_race(r, in, in.region, in.kind == Kind::recv); !s) return s.error();
  if (auto s = check_reuse(r, in); !s) return s.error();
  auto m = post(r, st.pc);
  if (!m) return m.error();
  st.pending.push_back({in.request, static_cast<std::int32_t>(st.pc), *m, -1, {{in.region, in.kind == Kind::recv}}});
  st.completed.erase(in.request);
  did = true;
  return Progress::completed;
}

// wait: completes when every named request's work is done.
Result<Progress> Matcher::wait_op(std::int32_t r, const Instance& in, OpRecord& rec) {
  RankState& st = st_[static_cast<std::size_t>(r)];
  for (const auto& name : in.requests) {
    const bool known =
        std::any_of(st.pending.begin(), st.pending.end(), [&](const Request& q) { return q.name == name; });
    if (known) continue;
    if (auto it = st.completed.find(name); it != st.completed.end())
      return make_error("program.request_done",
                        who(r, in) + " waits for request \"" + name + "\", which " + it->second + " already completed",
                        "wait for a request once; post a new isend/irecv to wait again", where(in, "request"));
    return make_error(
        "program.unknown_request",
        who(r, in) + " waits for request \"" + name + "\", which rank " + std::to_string(r) + " never posted",
        "name the \"request\" of an earlier isend or irecv of this rank", where(in, "request"));
  }
  const bool all_moved = std::all_of(in.requests.begin(), in.requests.end(), [&](const std::string& name) {
    for (const Request& q : st.pending)
      if (q.name == name) return finished(q);
    return true;
  });
  if (!all_moved) return Progress::blocked;
  for (const auto& name : in.requests) {
    auto it = std::find_if(st.pending.begin(), st.pending.end(), [&](const Request& q) { return q.name == name; });
    if (it == st.pending.end()) continue;  // named twice in this wait (the reader refuses that)
    st.completed[name] = "the wait of " + in.where_text;
    rec.completes.push_back(inst(r, static_cast<std::size_t>(it->inst)).record);
    st.pending.erase(it);
  }
  return Progress::completed;
}

// compute, copy, accumulate: one local op per rank and step; accumulates of one step
// share an operator.
Result<Progress> Matcher::local_op(std::int32_t r, const Instance& in, OpRecord& rec) {
  RankState& st = st_[static_cast<std::size_t>(r)];
  if (busy_[static_cast<std::size_t>(r)]) return Progress::blocked;
  if (in.kind == Kind::accumulate && step_op_ && *step_op_ != in.op->reduce_op) return Progress::blocked;
  if (in.kind != Kind::compute)
    if (auto s = check_race(r, in, in.src, false); !s) return s.error();
  for (const Region& read : in.reads)
    if (auto s = check_race(r, in, read, false); !s) return s.error();
  if (auto s = check_race(r, in, in.region, true); !s) return s.error();
  add_transfer(local_transfer(r, in), {in.record});
  busy_[static_cast<std::size_t>(r)] = 1;
  rec.last_step = step_now();
  st.pc++;
  st.reached = false;
  return Progress::took_step;
}

// The transfer of a local op of rank r: a compute span, a copy or an accumulate.
Transfer Matcher::local_transfer(std::int32_t r, const Instance& in) {
  Transfer t;
  if (in.kind == Kind::compute) {
    t.action = Action::compute;
    t.src = t.dst = Loc{r, in.region.buf, in.region.offset};
    t.count = in.region.buf >= 0 ? in.region.count : 0;
    t.duration_us = in.op->duration_us;
    t.label = label_id(in.label.empty() ? "compute" : in.label);
    if (!in.reads.empty()) {
      std::vector<Slice> reads;
      for (const Region& read : in.reads)
        if (read.count) reads.push_back({Loc{r, read.buf, read.offset}, read.count});
      if (!reads.empty()) {
        t.reads = static_cast<std::int32_t>(s_.reads.size());
        s_.reads.push_back(std::move(reads));
      }
    }
    return t;
  }
  t.action = in.kind == Kind::copy ? Action::copy : Action::reduce;
  t.src = Loc{r, in.src.buf, in.src.offset};
  t.dst = Loc{r, in.region.buf, in.region.offset};
  t.count = in.region.count;
  if (in.kind == Kind::accumulate) step_op_ = in.op->reduce_op;
  return t;
}

// A collective or written step: arrive, then wait until every member has arrived and
// it ran; called with a request, the rank goes on at once and its wait completes it.
Result<Progress> Matcher::sync_op(std::int32_t r, const Instance& in, bool& did) {
  RankState& st = st_[static_cast<std::size_t>(r)];
  if (!st.arrived) {
    if (auto s = check_sync_race(r, in); !s) return s.error();
    if (!in.request.empty())
      if (auto s = check_reuse(r, in); !s) return s.error();
    st.arrived = true;
    if (++arrived_[static_cast<std::size_t>(in.sync)] ==
        static_cast<std::int32_t>(x_.syncs[static_cast<std::size_t>(in.sync)].members.size()))
      complete_.insert(in.sync);
    arrivals_[static_cast<std::size_t>(in.sync)].push_back(in.record);
    did = true;
  }
  if (!in.request.empty()) {
    st.pending.push_back({in.request, static_cast<std::int32_t>(st.pc), -1, in.sync, sync_touches(r, in)});
    st.completed.erase(in.request);
    st.arrived = false;
    return Progress::completed;
  }
  if (!done_[static_cast<std::size_t>(in.sync)]) return Progress::blocked;
  st.arrived = false;
  return Progress::completed;
}

}  // namespace matching

Status match(const Expansion& x, Target& t) {
  matching::Matcher m(x, t);
  return m.run();
}

}  // namespace collscope::program
