// The matcher's steps and calls: a round's transfers as one step, the collectives and
// written steps that every member reached, and custom algorithms (matcher.h).
#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "collscope/algorithms.h"
#include "program/matcher.h"
#include "scenario/resolve.h"

namespace collscope::program::matching {

void Matcher::add_transfer(const Transfer& t, std::initializer_list<std::int32_t> records) {
  const auto index = static_cast<std::int32_t>(cur_.transfers.size());
  cur_.transfers.push_back(t);
  for (std::int32_t r : records) {
    cur_records_.push_back(r);
    cur_owner_.push_back(index);
  }
}

std::int32_t Matcher::label_id(const std::string& label) {
  auto it = std::find(s_.labels.begin(), s_.labels.end(), label);
  if (it != s_.labels.end()) return static_cast<std::int32_t>(it - s_.labels.begin());
  s_.labels.push_back(label);
  return static_cast<std::int32_t>(s_.labels.size()) - 1;
}

// The call a program step belongs to: the custom algorithm's, or a run of
// point-to-point steps whose accumulates share one operator.
std::int32_t Matcher::program_call(std::optional<ReduceOp> op) {
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

void Matcher::push_step(Step st) {
  if (t_.fixed_call < 0) s_.calls[static_cast<std::size_t>(st.call)].num_steps++;
  s_.steps.push_back(std::move(st));
}

void Matcher::flush() {
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
    std::string text = in && !in->caption.empty() ? in->caption : "rank " + std::to_string(rec.rank) + ": " + rec.text;
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

const Instance* Matcher::instance_of(std::int32_t record) {
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

Status Matcher::emit_sync(std::int32_t y) {
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
Status Matcher::check_size(Location where) {
  for (; counted_steps_ < s_.steps.size(); ++counted_steps_) transfers_ += s_.steps[counted_steps_].transfers.size();
  if (transfers_ <= scenario::kMaxTransfers) return ok_status();
  if (where.file.empty() && where.line == 0) where.file = t_.scenario.file;
  if (where.pointer.empty()) where.pointer = "/program";
  return scenario::too_many_transfers_error(where);
}

Location Matcher::sy_where(const Sync& sy, const std::string& key) const {
  Location l = sy.op->where;
  if (!key.empty())
    if (auto it = sy.op->field_where.find(key); it != sy.op->field_where.end()) l = it->second;
  if (l.file.empty() && l.line == 0) l.file = t_.scenario.file;
  if (l.pointer.empty()) l.pointer = sy.pointer;
  return l;
}

std::int32_t Matcher::program_index(const std::string& pointer) {
  // "/program/3/..." -> 3
  const std::size_t a = pointer.find('/', 1);
  if (a == std::string::npos) return 0;
  return static_cast<std::int32_t>(std::strtol(pointer.c_str() + a + 1, nullptr, 10));
}

// A step the program wrote itself (written_step.cpp evaluates its transfers).
Status Matcher::emit_written_step(const Sync& sy) {
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
Status Matcher::emit_inner(const Sync& sy, const CollArgs& args, std::int32_t index) {
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
    return make_error("scenario.bad_call",
                      op.op + " inside this custom " + outer_name + " combines with " + std::string(name_of(args.op)) +
                          ", but the " + outer_name + " it implements combines with " +
                          std::string(name_of(outer.args.op)) + " (" + sy.where_text + ")",
                      "give it \"reduce_op\": \"" + std::string(name_of(outer.args.op)) + "\"",
                      sy_where(sy, "reduce_op"));
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

// A collective the program implements itself: its body, matched on its own, is the
// call's algorithm; the call keeps the collective's arguments, so it is verified
// against the collective's postcondition and definition like any built-in one.
Status Matcher::emit_custom(std::int32_t y, const CollArgs& args, std::int32_t index) {
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

}  // namespace collscope::program::matching
