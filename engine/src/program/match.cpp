// The matcher: per-rank programs -> steps, with MPI's matching rules (program.h).
//
//   round k:  every rank runs ahead until it must wait
//               isend/irecv     post the message, go on
//               send/recv       post the message, wait until it has moved
//               wait            wait until the named requests' messages have moved
//               compute, copy,  take this step (one per rank and step), go on next round
//               accumulate
//               collective      arrive, wait until every member has arrived and it ran
//             messages matched so far move in step k (both ends posted)
//             then collectives whose members have all arrived run, in their own steps
//   nothing moved and nobody can go on: a deadlock (or a message that never matches)
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "collscope/algorithms.h"
#include "collscope/verify.h"
#include "program/program.h"
#include "scenario/expr.h"
#include "scenario/resolve.h"

namespace collscope::program {

namespace {

struct Message {
  std::int32_t src = 0, dst = 0;
  std::int32_t send = -1, recv = -1;  // instance index on src / dst
  bool moved = false;
};

// A pending non-blocking op: an isend/irecv's message, or a collective called with a
// request. `touches` are the slices it reads (false) or writes (true) until its wait.
struct Request {
  std::string name;
  std::int32_t inst = -1;  // the op's instance
  std::int32_t msg = -1;   // isend/irecv
  std::int32_t sync = -1;  // a collective
  std::vector<std::pair<Region, bool>> touches;
};

struct RankState {
  std::size_t pc = 0;
  std::int32_t posted = -1;                      // message of the blocking send/recv at pc, once posted
  bool arrived = false;                          // at the sync at pc
  bool reached = false;                          // the op at pc has been reached (its record started)
  std::vector<Request> pending;                  // requests not waited for yet
  std::map<std::string, std::string> completed;  // request name -> the wait that completed it
};

class Matcher {
 public:
  Matcher(const Expansion& x, Target& t) : x_(x), t_(t), s_(t.schedule) {
    st_.resize(x.ranks.size());
    arrived_.assign(x.syncs.size(), 0);
    done_.assign(x.syncs.size(), 0);
    arrivals_.resize(x.syncs.size());
  }

  Status run() {
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
      // Syncs every member has reached, in index order (a set, not a scan of every
      // sync: a program may hold millions of them).
      const std::set<std::int32_t> complete = std::move(complete_);
      complete_.clear();
      for (const std::int32_t y : complete) {
        if (auto st = emit_sync(y); !st) return st;
        if (auto st = check_size(sy_where(x_.syncs[static_cast<std::size_t>(y)])); !st) return st;
        progress = true;
      }
      bool finished = true;
      for (std::int32_t r = 0; r < R; ++r)
        finished = finished && st_[static_cast<std::size_t>(r)].pc == x_.ranks[static_cast<std::size_t>(r)].size();
      if (finished) return at_end();
      if (!progress) return stuck();
    }
  }

 private:
  const Expansion& x_;
  Target& t_;
  Schedule& s_;
  std::vector<RankState> st_;
  std::vector<Message> msgs_;
  std::map<std::pair<std::int32_t, std::int32_t>, std::deque<std::int32_t>> open_sends_, open_recvs_;
  std::vector<std::int32_t> ready_;  // matched messages that have not moved
  std::vector<std::int32_t> arrived_;
  std::set<std::int32_t> complete_;                  // syncs every member reached, not emitted yet
  std::vector<const Instance*> instance_of_record_;  // record -> its instance, see instance_of
  std::size_t counted_steps_ = 0;                    // steps whose transfers are in transfers_
  std::uint64_t transfers_ = 0;
  std::vector<char> done_;
  std::vector<std::vector<std::int32_t>> arrivals_;  // per sync: the members' records
  std::vector<char> busy_;
  std::optional<ReduceOp> step_op_;
  Step cur_;
  std::vector<std::int32_t> cur_records_;  // per transfer of cur_: the records that own it
  std::vector<std::int32_t> cur_owner_;    // per entry of cur_records_: its transfer
  std::int32_t program_call_ = -1;

  const Instance& inst(std::int32_t r, std::size_t i) const { return x_.ranks[static_cast<std::size_t>(r)][i]; }
  OpRecord& record(const Instance& in) { return s_.ops[static_cast<std::size_t>(in.record)]; }
  std::int32_t step_now() const { return static_cast<std::int32_t>(s_.steps.size()); }

  Location where(const Instance& in, const std::string& key = "") const {
    const ProgramOp& op = *in.op;
    Location l = op.where;
    if (!key.empty())
      if (auto it = op.field_where.find(key); it != op.field_where.end()) l = it->second;
    if (l.file.empty() && l.line == 0) l.file = t_.scenario.file;
    if (l.pointer.empty()) l.pointer = in.pointer;
    return l;
  }
  std::string who(std::int32_t r, const Instance& in) const {
    return "rank " + std::to_string(r) + "'s " + record_text(in) + " (" + in.where_text + ")";
  }
  std::string record_text(const Instance& in) const {
    return t_.schedule.ops[static_cast<std::size_t>(in.record)].text;
  }

  // --- one rank ---------------------------------------------------------------------

  // Runs rank r ahead as far as it can this round. True when anything happened.
  Result<bool> advance(std::int32_t r) {
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
      switch (in.kind) {
        case Kind::send:
        case Kind::recv: {
          if (in.blocking) {
            if (st.posted < 0) {
              if (auto s = check_race(r, in, in.region, in.kind == Kind::recv); !s) return s.error();
              auto m = post(r, st.pc);
              if (!m) return m.error();
              st.posted = *m;
              did = true;
            }
            if (!msgs_[static_cast<std::size_t>(st.posted)].moved) return did;
            st.posted = -1;
            break;  // complete
          }
          if (auto s = check_race(r, in, in.region, in.kind == Kind::recv); !s) return s.error();
          if (auto s = check_reuse(r, in); !s) return s.error();
          auto m = post(r, st.pc);
          if (!m) return m.error();
          st.pending.push_back(
              {in.request, static_cast<std::int32_t>(st.pc), *m, -1, {{in.region, in.kind == Kind::recv}}});
          st.completed.erase(in.request);
          did = true;
          break;
        }
        case Kind::wait: {
          for (const auto& name : in.requests) {
            const bool known =
                std::any_of(st.pending.begin(), st.pending.end(), [&](const Request& q) { return q.name == name; });
            if (known) continue;
            if (auto it = st.completed.find(name); it != st.completed.end())
              return make_error(
                  "program.request_done",
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
          if (!all_moved) return did;
          for (const auto& name : in.requests) {
            auto it =
                std::find_if(st.pending.begin(), st.pending.end(), [&](const Request& q) { return q.name == name; });
            st.completed[name] = "the wait of " + in.where_text;
            rec.completes.push_back(inst(r, static_cast<std::size_t>(it->inst)).record);
            st.pending.erase(it);
          }
          break;
        }
        case Kind::compute:
        case Kind::copy:
        case Kind::accumulate: {
          // One local op per rank and step; accumulates of one step share an operator.
          if (busy_[static_cast<std::size_t>(r)]) return did;
          if (in.kind == Kind::accumulate && step_op_ && *step_op_ != in.op->reduce_op) return did;
          if (in.kind != Kind::compute)
            if (auto s = check_race(r, in, in.src, false); !s) return s.error();
          for (const Region& read : in.reads)
            if (auto s = check_race(r, in, read, false); !s) return s.error();
          if (auto s = check_race(r, in, in.region, true); !s) return s.error();
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
          } else {
            t.action = in.kind == Kind::copy ? Action::copy : Action::reduce;
            t.src = Loc{r, in.src.buf, in.src.offset};
            t.dst = Loc{r, in.region.buf, in.region.offset};
            t.count = in.region.count;
            if (in.kind == Kind::accumulate) step_op_ = in.op->reduce_op;
          }
          add_transfer(t, {in.record});
          busy_[static_cast<std::size_t>(r)] = 1;
          rec.last_step = step_now();
          st.pc++;
          st.reached = false;
          return true;
        }
        case Kind::sync: {
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
            // Called with a request: the rank goes on; its wait completes the call.
            st.pending.push_back({in.request, static_cast<std::int32_t>(st.pc), -1, in.sync, sync_touches(r, in)});
            st.completed.erase(in.request);
            st.arrived = false;
            break;
          }
          if (!done_[static_cast<std::size_t>(in.sync)]) return did;
          st.arrived = false;
          break;
        }
      }
      // The op at pc completed.
      if (rec.last_step < 0) rec.last_step = std::max(rec.first_step, step_now() - 1);
      st.pc++;
      st.reached = false;
      did = true;
    }
    return did;
  }

  // Has a pending request's work been done: its message moved, its collective run?
  bool finished(const Request& q) const {
    if (q.sync >= 0) return done_[static_cast<std::size_t>(q.sync)] != 0;
    return msgs_[static_cast<std::size_t>(q.msg)].moved;
  }

  // A buffer must not be touched while a non-blocking op on it is pending (MPI calls
  // it undefined behaviour): reading is fine next to a pending op that only reads it
  // (an isend, a collective's send buffer), nothing else is.
  Status check_race(std::int32_t r, const Instance& in, const Region& reg, bool write) const {
    if (reg.buf < 0) return ok_status();
    for (const Request& q : st_[static_cast<std::size_t>(r)].pending)
      for (const auto& [touched, writes] : q.touches) {
        if (!overlaps(touched, reg)) continue;
        if (!write && !writes) continue;
        const Instance& p = inst(r, static_cast<std::size_t>(q.inst));
        return make_error("program.race",
                          who(r, in) + (write ? " writes " : " reads ") + overlap_text(s_, reg) + " while " +
                              who(r, p) + " is still pending",
                          "wait for request \"" + q.name + "\" before touching that buffer", where(in));
      }
    return ok_status();
  }

  // A request name must not be reused while the request is pending.
  Status check_reuse(std::int32_t r, const Instance& in) const {
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
  std::vector<std::pair<Region, bool>> sync_touches(std::int32_t r, const Instance& in) const {
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

  Status check_sync_race(std::int32_t r, const Instance& in) const {
    for (const auto& [whole, writes] : sync_touches(r, in))
      if (auto st = check_race(r, in, whole, writes); !st) return st;
    return ok_status();
  }

  // --- messages ---------------------------------------------------------------------

  // Posts the send or recv at rank r's instance i; matches it with the oldest open one
  // of the other side between the same pair (messages do not overtake each other).
  Result<std::int32_t> post(std::int32_t r, std::size_t i) {
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

  Status check_pair(const Message& m) const {
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

  void move_ready() {
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

  void add_transfer(const Transfer& t, std::initializer_list<std::int32_t> records) {
    const auto index = static_cast<std::int32_t>(cur_.transfers.size());
    cur_.transfers.push_back(t);
    for (std::int32_t r : records) {
      cur_records_.push_back(r);
      cur_owner_.push_back(index);
    }
  }

  std::int32_t label_id(const std::string& label) {
    auto it = std::find(s_.labels.begin(), s_.labels.end(), label);
    if (it != s_.labels.end()) return static_cast<std::int32_t>(it - s_.labels.begin());
    s_.labels.push_back(label);
    return static_cast<std::int32_t>(s_.labels.size()) - 1;
  }

  // --- steps and calls ------------------------------------------------------------------

  // The call a program step belongs to: the custom algorithm's, or a run of
  // point-to-point steps whose accumulates share one operator.
  std::int32_t program_call(std::optional<ReduceOp> op) {
    if (t_.fixed_call >= 0) return t_.fixed_call;
    const Call* last = program_call_ >= 0 ? &s_.calls[static_cast<std::size_t>(program_call_)] : nullptr;
    const bool continues =
        last && last->first_step + last->num_steps == step_now() && (!op || !last_has_reduce_ || last->args.op == *op);
    if (!continues) {
      Call c;
      c.kind = CallKind::program;
      c.algorithm = "point-to-point";
      c.args.ranks = s_.ranks;
      c.args.dtype = s_.dtype;
      c.args.in_buf = c.args.out_buf = -1;
      c.first_step = step_now();
      s_.calls.push_back(c);
      program_call_ = static_cast<std::int32_t>(s_.calls.size()) - 1;
      last_has_reduce_ = false;
    }
    Call& c = s_.calls[static_cast<std::size_t>(program_call_)];
    if (op) {
      c.args.op = *op;
      last_has_reduce_ = true;
    }
    return program_call_;
  }
  bool last_has_reduce_ = false;

  void push_step(Step st) {
    if (t_.fixed_call < 0) s_.calls[static_cast<std::size_t>(st.call)].num_steps++;
    s_.steps.push_back(std::move(st));
  }

  void flush() {
    const std::int32_t k = step_now();
    cur_.call = program_call(step_op_);
    // The phase says what the step does: messages, local copies, compute spans.
    bool messages = false, local = false, compute = false;
    for (const Transfer& t : cur_.transfers) {
      if (t.action == Action::compute) compute = true;
      else if (t.src.rank == t.dst.rank) local = true;
      else messages = true;
    }
    std::string phase = messages ? "point-to-point" : "";
    if (local) phase += std::string(phase.empty() ? "" : " + ") + "local";
    if (compute) phase += std::string(phase.empty() ? "" : " + ") + "compute";
    cur_.phase = t_.fixed_call >= 0 ? "custom" + (phase.empty() ? std::string() : ": " + phase) : phase;
    // The caption: the ops' own captions where they have one, else what moved.
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < cur_records_.size(); ++i) {
      OpRecord& rec = s_.ops[static_cast<std::size_t>(cur_records_[i])];
      rec.transfers.emplace_back(k, cur_owner_[i]);
      rec.last_step = std::max(rec.last_step, k);
    }
    // In program order (records are numbered rank by rank, each rank's in its order);
    // a set for the texts, not scans: one step may hold a transfer from every op.
    std::vector<std::int32_t> seen = cur_records_;
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    std::unordered_set<std::string> said;
    for (std::int32_t r : seen) {
      const OpRecord& rec = s_.ops[static_cast<std::size_t>(r)];
      const Instance* in = instance_of(r);
      if (in && in->kind == Kind::recv) continue;  // the send already says it
      std::string text =
          in && !in->caption.empty() ? in->caption : "rank " + std::to_string(rec.rank) + ": " + rec.text;
      if (said.insert(text).second) parts.push_back(std::move(text));
    }
    std::string caption;
    for (std::size_t i = 0; i < parts.size() && i < 4; ++i) caption += (i ? "; " : "") + parts[i];
    if (parts.size() > 4) caption += "; and " + std::to_string(parts.size() - 4) + " more";
    cur_.caption = caption;
    push_step(std::move(cur_));
    cur_ = Step{};
    cur_records_.clear();
    cur_owner_.clear();
  }

  const Instance* instance_of(std::int32_t record) {
    if (instance_of_record_.empty()) {
      // Built once: the instance of every record this expansion made.
      instance_of_record_.assign(s_.ops.size(), nullptr);
      for (const auto& list : x_.ranks)
        for (const Instance& in : list)
          if (in.record >= 0 && static_cast<std::size_t>(in.record) < instance_of_record_.size())
            instance_of_record_[static_cast<std::size_t>(in.record)] = &in;
    }
    if (record >= 0 && static_cast<std::size_t>(record) < instance_of_record_.size())
      return instance_of_record_[static_cast<std::size_t>(record)];
    return nullptr;
  }

  Status emit_sync(std::int32_t y) {
    const Sync& sy = x_.syncs[static_cast<std::size_t>(y)];
    const ProgramOp& op = *sy.op;
    const std::int32_t first = step_now();
    std::int32_t call = -1;
    if (op.kind == ProgramOp::Kind::step) {
      auto st = emit_written_step(sy);
      if (!st) return st;
    } else {
      scenario::CallResolver resolver(t_.scenario);
      const auto index = program_index(sy.pointer);
      auto args = resolver.resolve(op, index, sy.members, sy.env);
      if (!args) return args.error();
      if (t_.fixed_call >= 0) {
        // A collective inside a custom algorithm: part of the algorithm.
        if (auto st = emit_inner(sy, *args, index); !st) return st;
        call = t_.fixed_call;
      } else if (op.algorithm == "custom") {
        auto st = emit_custom(y, *args, index);
        if (!st) return st;
      } else {
        auto st = lower_call(s_, *args, op.algorithm, sy.caption, index, t_.tuner, sy.group);
        if (!st) {
          Error e = st.error();
          if (e.where.line == 0) e.where = sy_where(sy, e.id == "scenario.unknown_algorithm" ? "algorithm" : "");
          return e;
        }
      }
      if (call < 0) {
        call = static_cast<std::int32_t>(s_.calls.size()) - 1;
        s_.calls.back().group = sy.group;
        s_.calls.back().part = sy.part;
      }
    }
    done_[static_cast<std::size_t>(y)] = 1;
    const std::int32_t last = step_now() - 1;
    for (std::int32_t rec : arrivals_[static_cast<std::size_t>(y)]) {
      OpRecord& r = s_.ops[static_cast<std::size_t>(rec)];
      r.first_step = first;
      r.last_step = std::max(first, last);
      if (last < first) r.last_step = -1, r.first_step = -1;
      r.call = call;
    }
    return ok_status();
  }

  // The schedule's size against kMaxTransfers, counting only the steps added since
  // the last check. `where`: the op that added them (else the program).
  Status check_size(Location where) {
    for (; counted_steps_ < s_.steps.size(); ++counted_steps_) transfers_ += s_.steps[counted_steps_].transfers.size();
    if (transfers_ <= scenario::kMaxTransfers) return ok_status();
    if (where.file.empty() && where.line == 0) where.file = t_.scenario.file;
    if (where.pointer.empty()) where.pointer = "/program";
    return scenario::too_many_transfers_error(where);
  }

  Location sy_where(const Sync& sy, const std::string& key = "") const {
    Location l = sy.op->where;
    if (!key.empty())
      if (auto it = sy.op->field_where.find(key); it != sy.op->field_where.end()) l = it->second;
    if (l.file.empty() && l.line == 0) l.file = t_.scenario.file;
    if (l.pointer.empty()) l.pointer = sy.pointer;
    return l;
  }

  static std::int32_t program_index(const std::string& pointer) {
    // "/program/3/..." -> 3
    const std::size_t a = pointer.find('/', 1);
    if (a == std::string::npos) return 0;
    return static_cast<std::int32_t>(std::strtol(pointer.c_str() + a + 1, nullptr, 10));
  }

  // A step the program wrote itself (written_step.cpp evaluates its transfers).
  Status emit_written_step(const Sync& sy) {
    const ProgramOp& op = *sy.op;
    Step st;
    st.phase = sy.phase.empty() ? "step" : sy.phase;
    st.caption = sy.caption;
    const std::uint64_t room = scenario::kMaxTransfers > transfers_ ? scenario::kMaxTransfers - transfers_ : 0;
    auto transfers = written_transfers(t_.scenario, s_, op, sy.env, sy.pointer, room, t_.frame);
    if (!transfers) return transfers.error();
    st.transfers = std::move(*transfers);
    st.call = program_call(st.transfers.empty() ? std::nullopt : std::optional<ReduceOp>(sy.op->reduce_op));
    if (t_.fixed_call >= 0) st.call = t_.fixed_call;
    push_step(std::move(st));
    return ok_status();
  }

  // A collective called inside a custom algorithm's body (a hierarchical all-reduce: a
  // reduce-scatter on each node, an all-reduce across nodes, an all-gather on each node)
  // lowers with its algorithm, but its steps are steps of the custom call: the outer
  // collective's postcondition and definition judge them all together.
  Status emit_inner(const Sync& sy, const CollArgs& args, std::int32_t index) {
    const ProgramOp& op = *sy.op;
    const Call& outer = s_.calls[static_cast<std::size_t>(t_.fixed_call)];
    const std::string outer_name(name_of(outer.args.coll));
    if (op.algorithm == kNativeAlgorithm)
      return make_error(
          "scenario.bad_call",
          op.op + " inside a custom algorithm cannot run the library's own collective (" + sy.where_text + ")",
          "give it one of collscope's algorithms", sy_where(sy, "algorithm"));
    // Its steps reduce with the custom call's operator, as every step of a call does.
    if (is_reducing(args.coll) && args.op != outer.args.op)
      return make_error(
          "scenario.bad_call",
          op.op + " inside this custom " + outer_name + " combines with " + std::string(name_of(args.op)) +
              ", but the " + outer_name + " it implements combines with " + std::string(name_of(outer.args.op)) + " (" +
              sy.where_text + ")",
          "give it \"reduce_op\": \"" + std::string(name_of(outer.args.op)) + "\"", sy_where(sy, "reduce_op"));
    const std::size_t first_buf = s_.buffers.size();
    const std::int32_t first = step_now();
    auto st = lower_call(s_, args, op.algorithm, sy.caption, index, t_.tuner, sy.group);
    if (!st) {
      Error e = st.error();
      if (e.where.line == 0) e.where = sy_where(sy, e.id == "scenario.unknown_algorithm" ? "algorithm" : "");
      return e;
    }
    s_.calls.pop_back();
    const std::string who = op.op + (op.group.empty() ? std::string() : " on " + op.group) + ": ";
    for (auto k = static_cast<std::size_t>(first); k < s_.steps.size(); ++k) {
      s_.steps[k].call = t_.fixed_call;
      s_.steps[k].caption = who + s_.steps[k].caption;
    }
    // Its scratch space is named after the custom call ("~sum#3.1"), not after a call
    // that does not exist.
    ++inner_calls_;
    for (std::size_t b = first_buf; b < s_.buffers.size(); ++b) {
      std::string& name = s_.buffers[b].name;
      name = name.substr(0, name.rfind('#') + 1) + std::to_string(t_.fixed_call) + "." + std::to_string(inner_calls_);
    }
    return ok_status();
  }
  std::int32_t inner_calls_ = 0;

  // A collective the program implements itself: its body, matched on its own, is the
  // call's algorithm; the call keeps the collective's arguments, so it is verified
  // against the collective's postcondition and definition like any built-in one.
  Status emit_custom(std::int32_t y, const CollArgs& args, std::int32_t index) {
    const Sync& sy = x_.syncs[static_cast<std::size_t>(y)];
    Call c;
    c.args = args;
    c.algorithm = "custom";
    c.custom = true;
    c.caption = sy.caption;
    c.program_index = index;
    c.group = sy.group;
    c.part = sy.part;
    c.first_step = step_now();
    s_.calls.push_back(c);
    const auto id = static_cast<std::int32_t>(s_.calls.size()) - 1;
    // The body runs on the call's members only, once per part of a split group, with
    // their group ranks as `rank` and the group's size as `size`.
    Frame frame{sy.members, sy.op->group, sy.comm};
    const std::size_t first_record = s_.ops.size();
    auto body = expand(t_.scenario, sy.op->body, sy.pointer + "/body", s_.ops, frame);
    if (!body) return body.error();
    // The body's ops sit inside the call in each member's program order.
    std::unordered_map<std::int32_t, std::int32_t> call_record;  // world rank -> its record of the call
    for (const std::int32_t rec : arrivals_[static_cast<std::size_t>(y)])
      call_record[s_.ops[static_cast<std::size_t>(rec)].rank] = rec;
    for (std::size_t i = first_record; i < s_.ops.size(); ++i)
      if (auto it = call_record.find(s_.ops[i].rank); it != call_record.end()) s_.ops[i].parent = it->second;
    Target inner{t_.scenario, s_, id, t_.tuner, std::move(frame)};
    if (auto st = match(*body, inner); !st) return st;
    s_.calls[static_cast<std::size_t>(id)].num_steps = step_now() - c.first_step;
    program_call_ = -1;
    return ok_status();
  }

  // --- the end ----------------------------------------------------------------------------

  Status at_end() const {
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
                          "add a send (or isend) to rank " + std::to_string(m.dst) + " on rank " +
                              std::to_string(m.src) + ", or remove this recv",
                          where(b));
      }
    for (std::size_t r = 0; r < st_.size(); ++r)
      if (!st_[r].pending.empty()) {
        const Request& q = st_[r].pending.front();
        const Instance& in = inst(static_cast<std::int32_t>(r), static_cast<std::size_t>(q.inst));
        return make_error("program.unwaited", who(static_cast<std::int32_t>(r), in) + " is never waited for",
                          "add {\"op\": \"wait\", \"request\": \"" + q.name +
                              "\"} before the buffer is used again or the program ends",
                          where(in, "request"));
      }
    return ok_status();
  }

  // A member of a collective that has not arrived at it yet (-1: all have).
  std::int32_t absent_member(std::int32_t sync) const {
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
  Status stuck() const {
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
                why[static_cast<std::size_t>(r)] = head + "wait (" + in.where_text + ") for request " + name +
                                                   ", its " + p.op->op +
                                                   (p.kind == Kind::send ? " to rank " : " from rank ") +
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
};

}  // namespace

Status match(const Expansion& x, Target& t) {
  Matcher m(x, t);
  return m.run();
}

}  // namespace collscope::program
