// The program of a scenario: collective calls, point-to-point and local ops, repeats,
// written steps, and the named groups collectives run on. This file checks each
// entry's shape (keys, types, names, expressions); program/lower.cpp then matches
// the point-to-point ops and reports what only running the program can find
// (deadlocks, unmatched messages, races).
#include "scenario/read_program.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "scenario/expr.h"

namespace collscope::scenario {

namespace {

const std::vector<std::string> kCallKeys = {"op",        "buffer", "send",         "recv",        "count", "algorithm",
                                            "reduce_op", "root",   "caption",      "group",       "body",  "ranks",
                                            "request",   "counts", "send_offsets", "recv_offsets"};
// The keys of a collective whose counts differ per pair of ranks (alltoallv), instead of "count".
const std::vector<std::string> kPeerKeys = {"counts", "send_offsets", "recv_offsets"};
const std::vector<std::string> kSendKeys = {"op", "ranks", "buffer", "offset", "count", "to", "dtype", "caption"};
const std::vector<std::string> kRecvKeys = {"op", "ranks", "buffer", "offset", "count", "from", "dtype", "caption"};
const std::vector<std::string> kWaitKeys = {"op", "ranks", "request", "requests", "caption"};
const std::vector<std::string> kComputeKeys = {"op", "ranks", "duration_us", "label", "reads", "writes", "caption"};
const std::vector<std::string> kCopyKeys = {"op", "ranks", "src", "dst", "caption"};
const std::vector<std::string> kAccumulateKeys = {"op", "ranks", "src", "dst", "reduce_op", "caption"};
const std::vector<std::string> kRepeatKeys = {"op", "times", "var", "body", "caption"};
const std::vector<std::string> kStepKeys = {"op", "phase", "caption", "transfers"};
const std::vector<std::string> kTransferKeys = {"ranks", "from", "to", "with", "count", "action"};
const std::vector<std::string> kSliceKeys = {"buffer", "offset", "count"};
const std::vector<std::string> kPlacedSliceKeys = {"rank", "buffer", "offset", "count"};
const std::vector<std::string> kGroupKeys = {"ranks", "split"};

// Longest compute span: a minute, so that a typo cannot stall a run for hours.
constexpr std::uint64_t kMaxComputeUs = 60'000'000;

std::vector<std::string> with_requests(std::vector<std::string> keys) {
  keys.push_back("request");
  return keys;
}

// [A-Za-z_][A-Za-z0-9_]*, by hand: std::regex recurses once per character and
// overflows the stack on the long strings a hostile file can hold.
bool is_name(const std::string& s) {
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (s.empty() || !alpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alpha(c) || (c >= '0' && c <= '9'); });
}

}  // namespace

const std::vector<std::string>& program_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, kind] : kProgramOps) out.emplace_back(name);
    return out;
  }();
  return names;
}

// --- groups --------------------------------------------------------------------------

std::vector<GroupSpec> ProgramReader::read_groups(const Member& m) const {
  if (!m.value.is_object())
    wrong_type("groups", "an object of named groups", m.value, at(m),
               "\"groups\": {\"left\": [0, 1], \"tp\": {\"split\": \"rank / 4\"}}");
  std::vector<GroupSpec> out;
  for (const auto& g : m.value.members) {
    GroupSpec spec;
    spec.name = g.key;
    spec.where = at(g);
    if (!is_name(g.key))
      fail("scenario.bad_name", "group name " + quote(g.key) + " is not allowed",
           "name groups with letters, digits and '_', starting with a letter", at(g));
    const Value* list = &g.value;
    if (g.value.is_object()) {
      check_keys(g.value, kGroupKeys, "in a group");
      const Member* ranks = g.value.find("ranks");
      const Member* split = g.value.find("split");
      if (ranks && split)
        fail("scenario.conflicting_keys", "group " + quote(g.key) + " has both \"ranks\" and \"split\"",
             "a group is either a list of ranks or a split of every rank", at(*split));
      if (!ranks && !split)
        fail("scenario.missing_key", "group " + quote(g.key) + " has neither \"ranks\" nor \"split\"",
             "write [0, 1, 2] for a list, or {\"split\": \"rank / 4\"} for groups of 4 neighbours", at(g));
      if (split) {
        spec.split = expression(*split, {"rank", "size"}, "\"split\": \"rank / 4\"");
        out.push_back(std::move(spec));
        continue;
      }
      list = &ranks->value;
    }
    if (!list->is_array())
      wrong_type("group " + quote(g.key), "an array of ranks or an object", *list, at(*list), "[0, 1, 2, 3]");
    if (list->items.empty())
      fail("scenario.out_of_range", "group " + quote(g.key) + " is empty", "list at least one rank", at(*list));
    std::set<std::int32_t> seen;
    for (const auto& item : list->items) {
      const auto i = integer(item, at(item), "a group's rank", "[0, 1, 2]");
      if (i.status != json::IntegerValue::Status::ok || i.negative || i.uvalue >= static_cast<std::uint64_t>(ranks_))
        fail(
            "scenario.out_of_range",
            "rank " + literal(item) + " in group " + quote(g.key) + " is out of range 0.." + std::to_string(ranks_ - 1),
            "list ranks between 0 and " + std::to_string(ranks_ - 1), at(item));
      const auto r = static_cast<std::int32_t>(i.uvalue);
      if (!seen.insert(r).second)
        fail("scenario.out_of_range", "rank " + std::to_string(r) + " appears twice in group " + quote(g.key),
             "list each rank once", at(item));
      spec.ranks.push_back(r);
    }
    out.push_back(std::move(spec));
  }
  return out;
}

// --- the program ---------------------------------------------------------------------

std::vector<ProgramOp> ProgramReader::read_program(const Member& m, const Scenario& s) {
  s_ = &s;
  if (!m.value.is_array())
    wrong_type("program", "an array of ops", m.value, at(m),
               "\"program\": [{\"op\": \"allreduce\", \"buffer\": \"x\"}]");
  std::vector<ProgramOp> out;
  Scope scope = {"rank", "size"};
  for (const auto& item : m.value.items) out.push_back(read_op(item, scope, false));
  return out;
}

ProgramOp ProgramReader::read_op(const Value& v, Scope& scope, bool in_custom) const {
  ProgramOp op;
  op.where = at(v);
  if (!v.is_object()) wrong_type("program entry", "an object", v, at(v), "{\"op\": \"allreduce\", \"buffer\": \"x\"}");
  const Member* op_m = v.find("op");
  if (!op_m) {
    std::vector<std::string> all = names_of(kAllCollectives);
    for (const auto& n : program_op_names()) all.push_back(n);
    fail("scenario.missing_key", "program entry is missing \"op\"", "add \"op\" with one of: " + join(all), at(v));
  }
  if (!op_m->value.is_string()) wrong_type("op", "a string", op_m->value, at(*op_m), "\"op\": \"allreduce\"");
  op.op = op_m->value.text;
  for (const auto& mm : v.members) op.field_where[mm.key] = at(mm);
  if (const Member* c = v.find("caption")) {
    if (!c->value.is_string()) wrong_type("caption", "a string", c->value, at(*c), "\"caption\": \"...\"");
    op.caption = c->value.text;
  }
  // The one place an op's name becomes its kind.
  if (auto coll = parse_collective(op.op)) {
    op.kind = ProgramOp::Kind::collective;
    op.coll = coll;
  } else {
    const auto* it = std::find_if(std::begin(kProgramOps), std::end(kProgramOps),
                                  [&](const auto& entry) { return entry.first == op.op; });
    if (it == std::end(kProgramOps)) throw Failure{unknown_op_error(op.op, at(*op_m))};
    op.kind = it->second;
  }
  switch (op.kind) {
    case ProgramOp::Kind::collective:
      read_collective(v, op, scope, in_custom);
      break;
    case ProgramOp::Kind::send:
    case ProgramOp::Kind::recv:
    case ProgramOp::Kind::isend:
    case ProgramOp::Kind::irecv:
      read_p2p(v, op, scope);
      break;
    case ProgramOp::Kind::wait:
      read_wait(v, op);
      break;
    case ProgramOp::Kind::compute:
      read_compute(v, op, scope);
      break;
    case ProgramOp::Kind::copy:
    case ProgramOp::Kind::accumulate:
      read_local(v, op, scope);
      break;
    case ProgramOp::Kind::repeat:
      read_repeat(v, op, scope, in_custom);
      break;
    case ProgramOp::Kind::step:
      read_step(v, op, scope);
      break;
  }
  // Labels and captions may show loop variables ("F{mb}"). A collective's or a written
  // step's caption is one text for all its ranks: it cannot use rank. (A repeat's
  // caption is for the reader of the file.)
  if (op.kind != ProgramOp::Kind::repeat) {
    Scope text_scope = scope;
    if (is_sync(op.kind)) text_scope.erase(std::remove(text_scope.begin(), text_scope.end(), "rank"), text_scope.end());
    for (const char* key : {"caption", "label", "phase"})
      if (const Member* m = v.find(key); m && m->value.is_string()) check_text(*m, text_scope);
  }
  return op;
}

void ProgramReader::read_collective(const Value& v, ProgramOp& op, Scope& scope, bool in_custom) const {
  const Collective c = *op.coll;
  const std::string cname(name_of(c));
  const bool per_peer = collective_descriptor(c).per_peer;
  // Keys that exist for calls but not for this collective are refused too, so that
  // nothing the user wrote is silently ignored.
  std::vector<std::string> valid;
  for (const auto& k : kCallKeys) {
    if (k == "root" && !has_root(c)) continue;
    if (k == "reduce_op" && !is_reducing(c)) continue;
    if (k == "count" && (!collective_descriptor(c).moves_data || per_peer)) continue;
    const bool peer_key = std::find(kPeerKeys.begin(), kPeerKeys.end(), k) != kPeerKeys.end();
    if (peer_key && !per_peer) continue;
    valid.push_back(k);
  }
  for (const auto& m : v.members) {
    if (std::find(valid.begin(), valid.end(), m.key) != valid.end()) continue;
    if (std::find(kCallKeys.begin(), kCallKeys.end(), m.key) != kCallKeys.end()) {
      const bool peer_key = std::find(kPeerKeys.begin(), kPeerKeys.end(), m.key) != kPeerKeys.end();
      std::string why = m.key == "root"        ? "only broadcast, reduce, scatter and gather have a root"
                        : m.key == "reduce_op" ? "only reduce, allreduce and reduce_scatter combine values"
                        : peer_key             ? "only alltoallv has counts per pair of ranks (use \"count\" here)"
                        : per_peer             ? cname +
                                         " has a count per pair of ranks: give \"counts\", e.g. "
                                         "\"counts\": \"(rank + peer) % 3\" or a table with one row per rank"
                                   : "a barrier moves no data";
      fail("scenario.unknown_key", "key " + quote(m.key) + " does not apply to " + cname, "remove it: " + why,
           Location{file_, m.line, m.col, v.pointer});
    }
  }
  check_keys(v, valid, "for " + cname);

  auto text = [&](const char* key, const std::string& example) -> std::string {
    const Member* m = v.find(key);
    if (!m) return {};
    if (!m->value.is_string()) wrong_type(key, "a string", m->value, at(*m), example);
    return m->value.text;
  };
  op.buffer = text("buffer", "\"buffer\": \"x\"");
  op.send = text("send", "\"send\": \"x\"");
  op.recv = text("recv", "\"recv\": \"y\"");
  if (const Member* m = v.find("count")) op.count = count(m->value, at(*m), "count", "\"count\": 8");
  if (per_peer) {
    const Member* counts = v.find("counts");
    if (!counts)
      fail("scenario.missing_key", cname + " is missing \"counts\"",
           "say how many elements each rank sends to each peer: an expression in rank and peer, e.g. \"counts\": "
           "\"(rank + peer) % 3\", or a table with one row per rank, e.g. [[0, 2], [1, 3]]",
           at(v));
    op.peer_counts = peer_table(*counts, scope);
    if (const Member* m = v.find("send_offsets")) op.send_offsets = peer_table(*m, scope);
    if (const Member* m = v.find("recv_offsets")) op.recv_offsets = peer_table(*m, scope);
  }
  if (v.find("algorithm")) op.algorithm = text("algorithm", "\"algorithm\": \"ring\"");
  if (const Member* m = v.find("reduce_op")) op.reduce_op = reduce_op(*m);
  if (const Member* m = v.find("root")) {
    const auto i = integer(m->value, at(*m), "root", "\"root\": 0");
    if (i.status != json::IntegerValue::Status::ok || i.negative || i.uvalue >= static_cast<std::uint64_t>(ranks_))
      throw Failure{root_range_error(literal(m->value), ranks_, at(*m))};
    op.root = static_cast<std::int32_t>(i.uvalue);
  }
  if (const Member* m = v.find("group")) {
    op.group = text("group", "\"group\": \"tp\"");
    std::vector<std::string> names;
    for (const auto& g : s_->groups) names.push_back(g.name);
    if (std::find(names.begin(), names.end(), op.group) == names.end()) {
      std::string msg = "unknown group " + quote(op.group);
      if (auto cl = closest(op.group, names)) msg += " (did you mean \"" + *cl + "\"?)";
      fail("scenario.unknown_group", msg,
           names.empty() ? "declare it under \"groups\", e.g. " + quote(op.group) + ": [0, 1]"
                         : "declared groups: " + join_quoted(names),
           at(*m));
    }
  }
  // Like `if rank == 1: dist.all_reduce(...)`: the ranks that make this call. Every
  // member must still make the same calls in the same order (program.desync otherwise).
  if (const Member* m = v.find("ranks")) op.ranks = rank_selector(*m, scope);
  // Like `work = dist.all_reduce(x, async_op=True)`: the call returns at once and a
  // wait on the request completes it.
  if (const Member* m = v.find("request")) op.request = request_name(m->value, at(*m));
  const Member* body = v.find("body");
  if (op.algorithm == "custom" && !body)
    fail("scenario.missing_key", cname + " with \"algorithm\": \"custom\" needs a \"body\"",
         "give the ops or steps that implement it: \"body\": [{\"op\": \"step\", ...}]",
         op.field_where.at("algorithm"));
  if (body) {
    if (op.algorithm != "custom")
      fail("scenario.bad_call", cname + " has a \"body\" but its algorithm is " + quote(op.algorithm),
           "write \"algorithm\": \"custom\" to run the body as this " + cname + "'s algorithm", at(*body));
    if (in_custom)
      fail("scenario.bad_call", "a custom algorithm cannot contain another one",
           "write the inner collective with a built-in algorithm", at(*body));
    if (!body->value.is_array())
      wrong_type("body", "an array of ops", body->value, at(*body), "\"body\": [{\"op\": \"step\", ...}]");
    for (const auto& item : body->value.items) op.body.push_back(read_op(item, scope, true));
  }
}

void ProgramReader::read_p2p(const Value& v, ProgramOp& op, const Scope& scope) const {
  const bool sends = is_send(op.kind);
  const bool nonblocking = is_nonblocking_message(op.kind);
  auto keys = sends ? kSendKeys : kRecvKeys;
  if (nonblocking) keys = with_requests(keys);
  check_keys(v, keys, "for " + op.op);
  const char* peer_key = sends ? "to" : "from";
  const Member* peer = v.find(peer_key);
  if (!peer)
    fail("scenario.missing_key", op.op + " is missing \"" + peer_key + "\"",
         std::string("add \"") + peer_key + "\": the peer rank, e.g. 1 or \"(rank + 1) % size\"", at(v));
  op.peer = expression(*peer, scope, std::string("\"") + peer_key + "\": \"(rank + 1) % size\"");
  const Member* buf = v.find("buffer");
  if (!buf) fail("scenario.missing_key", op.op + " is missing \"buffer\"", "add \"buffer\": \"x\"", at(v));
  op.buffer = buffer_name(*buf);
  if (const Member* m = v.find("offset")) op.offset = expression(*m, scope, "\"offset\": \"rank * 4\"");
  if (const Member* m = v.find("count")) op.count_expr = expression(*m, scope, "\"count\": 4");
  if (const Member* m = v.find("ranks")) op.ranks = rank_selector(*m, scope);
  if (const Member* m = v.find("dtype")) {
    if (!m->value.is_string()) wrong_type("dtype", "a string", m->value, at(*m), "\"dtype\": \"float32\"");
    op.dtype = parse_dtype(m->value.text);
    if (!op.dtype) {
      const auto valid = names_of(kAllDTypes);
      std::string msg = "unknown dtype " + quote(m->value.text);
      if (auto c = suggest(m->value.text, valid, kDTypeAliases)) msg += " (did you mean \"" + *c + "\"?)";
      fail("scenario.unknown_dtype", msg, "valid dtypes: " + join(valid), at(*m));
    }
  }
  if (nonblocking) {
    const Member* r = v.find("request");
    if (!r)
      fail("scenario.missing_key", op.op + " is missing \"request\"",
           "name the request, e.g. \"request\": \"req0\", and wait for it later with {\"op\": \"wait\", \"request\": "
           "\"req0\"}",
           at(v));
    op.request = request_name(r->value, at(*r));
  }
}

void ProgramReader::read_wait(const Value& v, ProgramOp& op) const {
  check_keys(v, kWaitKeys, "for wait");
  const Member* one = v.find("request");
  const Member* many = v.find("requests");
  if (one && many)
    fail("scenario.conflicting_keys", "wait has both \"request\" and \"requests\"", "keep one of them", at(*many));
  if (!one && !many)
    fail("scenario.missing_key", "wait is missing \"request\"",
         "name what to wait for: \"request\": \"req0\" or \"requests\": [\"a\", \"b\"]", at(v));
  if (one) op.requests.push_back(request_name(one->value, at(*one)));
  if (many) {
    if (!many->value.is_array() || many->value.items.empty())
      wrong_type("requests", "a non-empty array of request names", many->value, at(*many), "[\"a\", \"b\"]");
    for (const auto& item : many->value.items) {
      std::string name = request_name(item, at(item));
      if (std::find(op.requests.begin(), op.requests.end(), name) != op.requests.end())
        fail("scenario.duplicate_request", "wait names request \"" + name + "\" twice",
             "name each request once in a wait", at(item));
      op.requests.push_back(std::move(name));
    }
  }
  if (const Member* m = v.find("ranks")) op.ranks = rank_selector(*m, {"rank", "size"});
}

void ProgramReader::read_compute(const Value& v, ProgramOp& op, const Scope& scope) const {
  check_keys(v, kComputeKeys, "for compute");
  const Member* d = v.find("duration_us");
  if (!d)
    fail("scenario.missing_key", "compute is missing \"duration_us\"",
         "give how long the rank computes, in microseconds: \"duration_us\": 2000", at(v));
  const auto i = integer(d->value, at(*d), "duration_us", "\"duration_us\": 2000");
  if (i.status != json::IntegerValue::Status::ok || i.negative || i.uvalue > kMaxComputeUs)
    fail("scenario.out_of_range",
         "duration_us " + literal(d->value) + " is out of range 0.." + std::to_string(kMaxComputeUs),
         "a compute span lasts from 0 to 60 seconds", at(*d));
  op.duration_us = static_cast<std::uint32_t>(i.uvalue);
  if (const Member* m = v.find("label")) {
    if (!m->value.is_string()) wrong_type("label", "a string", m->value, at(*m), "\"label\": \"backward layer 3\"");
    op.label = m->value.text;
  }
  if (const Member* m = v.find("writes")) op.dst = slice(*m, scope, false);
  // "reads": one slice or a list of them, like "writes" (what the work consumes).
  if (const Member* m = v.find("reads")) {
    if (m->value.is_array()) {
      if (m->value.items.empty())
        wrong_type("reads", "a non-empty list of slices", m->value, at(*m),
                   "\"reads\": [\"w\", {\"buffer\": \"x\", \"count\": 4}]");
      for (const auto& item : m->value.items) {
        const Member one{"reads", item.line, item.col, item};
        op.reads.push_back(slice(one, scope, false));
      }
    } else {
      op.reads.push_back(slice(*m, scope, false));
    }
  }
  if (const Member* m = v.find("ranks")) op.ranks = rank_selector(*m, scope);
}

void ProgramReader::read_local(const Value& v, ProgramOp& op, const Scope& scope) const {
  const bool copy = op.kind == ProgramOp::Kind::copy;
  check_keys(v, copy ? kCopyKeys : kAccumulateKeys, "for " + op.op);
  for (const char* key : {"src", "dst"})
    if (!v.find(key))
      fail("scenario.missing_key", op.op + " is missing \"" + key + "\"",
           copy ? "write {\"op\": \"copy\", \"src\": \"x\", \"dst\": \"y\"}"
                : "write {\"op\": \"accumulate\", \"src\": \"recv_buff\", \"dst\": \"accum\"}",
           at(v));
  op.src = slice(*v.find("src"), scope, false);
  op.dst = slice(*v.find("dst"), scope, false);
  if (const Member* m = v.find("reduce_op")) op.reduce_op = reduce_op(*m);
  if (op.reduce_op == ReduceOp::avg)
    fail("scenario.unknown_reduce_op", "accumulate cannot average", "accumulate with sum, then scale where you need it",
         op.field_where.at("reduce_op"));
  if (const Member* m = v.find("ranks")) op.ranks = rank_selector(*m, scope);
}

void ProgramReader::read_repeat(const Value& v, ProgramOp& op, Scope& scope, bool in_custom) const {
  check_keys(v, kRepeatKeys, "for repeat");
  const Member* times = v.find("times");
  if (!times)
    fail("scenario.missing_key", "repeat is missing \"times\"", "add \"times\": \"size - 1\" (or a number)", at(v));
  op.times = expression(*times, scope, "\"times\": \"size - 1\"");
  op.var = "i";
  if (const Member* m = v.find("var")) {
    if (!m->value.is_string() || !is_name(m->value.text) || m->value.text == "rank" || m->value.text == "size")
      fail("scenario.bad_name", "repeat variable " + json::describe(m->value) + " is not allowed",
           "name it with letters, digits and '_' (not rank or size), e.g. \"var\": \"i\"", at(*m));
    op.var = m->value.text;
  }
  const Member* body = v.find("body");
  if (!body) fail("scenario.missing_key", "repeat is missing \"body\"", "add \"body\": [ ...ops... ]", at(v));
  if (!body->value.is_array())
    wrong_type("body", "an array of ops", body->value, at(*body), "\"body\": [{\"op\": \"send\", ...}]");
  scope.push_back(op.var);
  for (const auto& item : body->value.items) op.body.push_back(read_op(item, scope, in_custom));
  scope.pop_back();
}

void ProgramReader::read_step(const Value& v, ProgramOp& op, const Scope& scope) const {
  check_keys(v, kStepKeys, "for step");
  if (const Member* m = v.find("phase")) {
    if (!m->value.is_string()) wrong_type("phase", "a string", m->value, at(*m), "\"phase\": \"exchange\"");
    op.phase = m->value.text;
  }
  const Member* list = v.find("transfers");
  if (!list)
    fail("scenario.missing_key", "step is missing \"transfers\"",
         "list what moves: \"transfers\": [{\"from\": {\"rank\": 0, \"buffer\": \"x\"}, \"to\": {\"rank\": 1, "
         "\"buffer\": \"x\"}}]",
         at(v));
  if (!list->value.is_array())
    wrong_type("transfers", "an array", list->value, at(*list), "\"transfers\": [{\"from\": ..., \"to\": ...}]");
  for (const auto& t : list->value.items) {
    TransferSpec spec;
    spec.where = at(t);
    if (!t.is_object()) wrong_type("transfer", "an object", t, at(t), "{\"from\": ..., \"to\": ...}");
    check_keys(t, kTransferKeys, "in a transfer");
    for (const auto& mm : t.members) spec.field_where[mm.key] = at(mm);
    for (const char* key : {"from", "to"})
      if (!t.find(key))
        fail("scenario.missing_key", std::string("transfer is missing \"") + key + "\"",
             std::string("add \"") + key + "\": {\"rank\": \"rank\", \"buffer\": \"x\", \"offset\": 0}", at(t));
    spec.from = slice(*t.find("from"), scope, true);
    spec.to = slice(*t.find("to"), scope, true);
    if (const Member* m = t.find("count")) spec.count = expression(*m, scope, "\"count\": 4");
    if (const Member* m = t.find("ranks")) spec.ranks = rank_selector(*m, scope);
    if (const Member* m = t.find("action")) {
      const std::string a = m->value.is_string() ? m->value.text : "";
      if (a != "copy" && a != "reduce" && a != "reduce_copy")
        fail("scenario.bad_call",
             "action must be \"copy\", \"reduce\" or \"reduce_copy\", got " + json::describe(m->value),
             "copy: the destination becomes the source; reduce: the destination combines with it; reduce_copy: the "
             "destination becomes \"with\" (the receiving rank's own slice) combined with the source",
             at(*m));
      spec.action = a == "copy" ? Action::copy : a == "reduce" ? Action::reduce : Action::reduce_copy;
    }
    const Member* with = t.find("with");
    if (spec.action == Action::reduce_copy && !with)
      fail("scenario.missing_key", "a reduce_copy transfer is missing \"with\"",
           "name the receiving rank's own slice it adds to the source: \"with\": {\"buffer\": \"x\", \"offset\": 0}",
           at(t));
    if (with && spec.action != Action::reduce_copy)
      fail("scenario.bad_call", "\"with\" belongs to \"action\": \"reduce_copy\"",
           "add \"action\": \"reduce_copy\", or drop \"with\"", at(*with));
    if (with) spec.with = slice(*with, scope, false);
    op.transfers.push_back(std::move(spec));
  }
}

// --- pieces ---------------------------------------------------------------------------

PeerTable ProgramReader::peer_table(const Member& m, const Scope& scope) const {
  PeerTable t;
  const std::string example = "\"" + m.key + "\": \"(rank + peer) % 3\" or [[0, 2], [1, 3]] (row: rank, column: peer)";
  if (m.value.is_array()) {
    if (m.value.items.empty())
      wrong_type(m.key, "an expression or a table with one row per rank", m.value, at(m), example);
    for (const Value& row : m.value.items) {
      if (!row.is_array())
        wrong_type("a row of " + quote(m.key), "an array with one number per peer", row, at(row), example);
      std::vector<std::uint64_t> numbers;
      for (const Value& x : row.items) numbers.push_back(count(x, at(x), m.key + " entry", example));
      t.rows.push_back(std::move(numbers));
    }
    return t;
  }
  Scope with_peer = scope;
  with_peer.push_back("peer");
  t.expr = expression(m, with_peer, example);
  return t;
}

std::string ProgramReader::expression(const Member& m, const Scope& scope, const std::string& example) const {
  std::string text;
  if (m.value.is_number()) {
    const auto i = integer(m.value, at(m), m.key, example);
    if (i.status != json::IntegerValue::Status::ok || (!i.negative && i.uvalue > static_cast<std::uint64_t>(INT64_MAX)))
      fail("scenario.out_of_range", m.key + " " + literal(m.value) + " does not fit in 64 bits", "use a smaller number",
           at(m));
    return std::to_string(i.value);
  }
  if (!m.value.is_string()) wrong_type(m.key, "an integer or an expression", m.value, at(m), example);
  text = m.value.text;
  auto e = Expression::parse(text);
  if (!e) {
    Error err = e.error();
    err.where = at(m);
    throw Failure{std::move(err)};
  }
  for (const auto& name : e->names())
    if (std::find(scope.begin(), scope.end(), name) == scope.end()) {
      std::string msg = "expression " + quote(text) + " uses unknown name " + quote(name);
      if (auto c = closest(name, scope)) msg += " (did you mean \"" + *c + "\"?)";
      fail("scenario.bad_expression", msg, "names in scope here: " + join(scope), at(m));
    }
  return text;
}

void ProgramReader::check_text(const Member& m, const Scope& scope) const {
  if (m.value.text.find_first_of("{}") == std::string::npos) return;
  auto t = TextTemplate::parse(m.value.text);
  if (!t) {
    Error err = t.error();
    err.where = at(m);
    throw Failure{std::move(err)};
  }
  for (const auto& name : t->names())
    if (std::find(scope.begin(), scope.end(), name) == scope.end()) {
      std::string msg = m.key + " " + quote(m.value.text) + " uses unknown name " + quote(name);
      if (auto c = closest(name, scope)) msg += " (did you mean \"" + *c + "\"?)";
      fail("scenario.bad_expression", msg,
           "names in scope here: " + join(scope) +
               (name == "rank" ? " (a collective's caption is the same on every rank)" : ""),
           at(m));
    }
}

RankSelector ProgramReader::rank_selector(const Member& m, const Scope& scope) const {
  RankSelector sel;
  const std::string example = "\"ranks\": [0, 2], \"all\", \"1..3\" or \"rank % 2 == 0\"";
  if (m.value.is_array()) {
    std::set<std::int32_t> seen;
    for (const auto& item : m.value.items) {
      const auto i = integer(item, at(item), "a rank", example);
      if (i.status != json::IntegerValue::Status::ok || i.negative || i.uvalue >= static_cast<std::uint64_t>(ranks_))
        fail("scenario.out_of_range", "rank " + literal(item) + " is out of range 0.." + std::to_string(ranks_ - 1),
             "list ranks between 0 and " + std::to_string(ranks_ - 1), at(item));
      if (!seen.insert(static_cast<std::int32_t>(i.uvalue)).second)
        fail("scenario.out_of_range", "rank " + literal(item) + " is listed twice", "list each rank once", at(item));
      sel.list.push_back(static_cast<std::int32_t>(i.uvalue));
    }
    if (sel.list.empty()) fail("scenario.out_of_range", "\"ranks\" is empty", "list at least one rank", at(m));
    return sel;
  }
  if (!m.value.is_string()) wrong_type("ranks", "an array, \"all\", a range or an expression", m.value, at(m), example);
  sel.text = m.value.text;
  if (sel.text == "all") return sel;
  long a = 0, b = 0;
  if (parse_rank_range(sel.text, a, b)) {
    if (a > b || b >= ranks_)
      fail("scenario.out_of_range", "rank range " + quote(sel.text) + " is not inside 0.." + std::to_string(ranks_ - 1),
           "write FIRST..LAST with FIRST <= LAST < " + std::to_string(ranks_), at(m));
    return sel;
  }
  Member copy = m;
  expression(copy, scope, example);  // checks syntax and names
  return sel;
}

SliceSpec ProgramReader::slice(const Member& m, const Scope& scope, bool with_rank) const {
  SliceSpec sl;
  const std::string example = with_rank ? "{\"rank\": \"rank\", \"buffer\": \"x\", \"offset\": 0, \"count\": 4}"
                                        : "\"x\" or {\"buffer\": \"x\", \"offset\": 0, \"count\": 4}";
  if (m.value.is_string() && !with_rank) {
    sl.buffer = buffer_name(m);
    return sl;
  }
  if (!m.value.is_object())
    wrong_type(m.key, with_rank ? "an object" : "a buffer name or an object", m.value, at(m), example);
  check_keys(m.value, with_rank ? kPlacedSliceKeys : kSliceKeys, "in " + quote(m.key));
  const Member* b = m.value.find("buffer");
  if (!b) fail("scenario.missing_key", quote(m.key) + " is missing \"buffer\"", "write it like " + example, at(m));
  sl.buffer = buffer_name(*b);
  if (with_rank) {
    const Member* r = m.value.find("rank");
    if (!r) fail("scenario.missing_key", quote(m.key) + " is missing \"rank\"", "write it like " + example, at(m));
    sl.rank = expression(*r, scope, "\"rank\": \"(rank + 1) % size\"");
  }
  if (const Member* o = m.value.find("offset")) sl.offset = expression(*o, scope, "\"offset\": \"rank * 4\"");
  if (const Member* c = m.value.find("count")) sl.count = expression(*c, scope, "\"count\": 4");
  return sl;
}

ReduceOp ProgramReader::reduce_op(const Member& m) const {
  if (!m.value.is_string()) wrong_type("reduce_op", "a string", m.value, at(m), "\"reduce_op\": \"sum\"");
  auto o = parse_reduce_op(m.value.text);
  if (!o) {
    const auto ops = names_of(kAllReduceOps);
    std::string msg = "unknown reduce_op " + quote(m.value.text);
    if (auto s = suggest(m.value.text, ops, kOpAliases)) msg += " (did you mean \"" + *s + "\"?)";
    fail("scenario.unknown_reduce_op", msg, "valid reduce ops: " + join(ops), at(m));
  }
  return *o;
}

std::string ProgramReader::buffer_name(const Member& m) const {
  if (!m.value.is_string()) wrong_type(m.key, "a buffer name", m.value, at(m), "\"x\"");
  const std::string& name = m.value.text;
  std::vector<std::string> names;
  for (const auto& b : s_->buffers) {
    if (b.name == name) return name;
    names.push_back(b.name);
  }
  std::string msg = "unknown buffer " + quote(name);
  if (auto c = closest(name, names)) msg += " (did you mean \"" + *c + "\"?)";
  fail("scenario.unknown_buffer", msg,
       names.empty() ? "declare it under \"buffers\", e.g. " + quote(name) + ": {\"count\": 8}"
                     : "declared buffers: " + join_quoted(names),
       at(m));
}

std::string ProgramReader::request_name(const Value& v, const Location& where) const {
  if (!v.is_string() || !is_name(v.text))
    fail("scenario.bad_name", "request name " + json::describe(v) + " is not allowed",
         "name requests with letters, digits and '_', e.g. \"req0\"", where);
  return v.text;
}

}  // namespace collscope::scenario
