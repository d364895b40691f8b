// Flight records as JSON, and what they show (collscope/flight_record.h).
#include "collscope/flight_record.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>

#include "collscope/files.h"
#include "collscope/scenario.h"
#include "scenario/json.h"
#include "trace/atomic_file.h"
#include "trace/ranks_text.h"

namespace collscope {

const char* name_of(FlightState s) {
  switch (s) {
    case FlightState::scheduled:
      return "scheduled";
    case FlightState::started:
      return "started";
    case FlightState::completed:
      return "completed";
  }
  return "scheduled";
}

// --- writing ------------------------------------------------------------------------

std::string flight_record_json(const FlightRecord& r) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["flight_record"] = r.version;
  j["backend"] = r.backend;
  j["mode"] = r.mode;
  j["reason"] = r.reason;
  j["world"] = r.world;
  j["steps"] = r.steps;
  j["timeout_s"] = r.timeout_s;
  j["capacity"] = r.capacity;
  ojson ranks = ojson::array();
  for (const auto& fr : r.ranks) {
    ojson jr;
    jr["rank"] = fr.rank;
    jr["state"] = fr.state;
    jr["step"] = fr.step;
    jr["waiting_for"] = fr.waiting_for;
    jr["dropped"] = fr.dropped;
    ojson ops = ojson::array();
    for (const auto& op : fr.ops) {
      ojson jo;
      jo["seq"] = op.seq;
      jo["call"] = op.call;
      jo["collective"] = op.collective;
      jo["op"] = op.op;
      jo["text"] = op.text;
      jo["pointer"] = op.pointer;
      jo["buffer"] = op.buffer;
      jo["count"] = op.count;
      jo["dtype"] = std::string(name_of(op.dtype));
      jo["root"] = op.root;
      jo["reduce_op"] = op.reduce_op;
      if (!op.members.empty()) jo["members"] = op.members;
      jo["first_step"] = op.first_step;
      jo["last_step"] = op.last_step;
      jo["state"] = name_of(op.state);
      jo["scheduled_us"] = op.scheduled_us;
      jo["started_us"] = op.started_us;
      jo["completed_us"] = op.completed_us;
      ops.push_back(std::move(jo));
    }
    jr["ops"] = std::move(ops);
    ranks.push_back(std::move(jr));
  }
  j["ranks"] = std::move(ranks);
  return j.dump(1) + "\n";
}

Status write_flight_record(const std::string& path, const FlightRecord& r) {
  return write_file_atomically(path, flight_record_json(r), "run.flight_record_io");
}

// --- reading ------------------------------------------------------------------------

namespace {

struct Bad {
  Error error;
};

// Every number of a record is checked against its type and the world, so that a
// hand-edited or damaged record is refused (analyze.bad_record) rather than read as
// something it does not say: rank 4294967296 is not rank 0, a world of 2^31 is not
// allocated, and a rank listed twice is not a second rank.
class RecordReader {
 public:
  explicit RecordReader(const std::string& file) : file_(file) {}

  FlightRecord read(const json::Value& doc) {
    FlightRecord r;
    if (!doc.is_object()) fail(doc, "a flight record is a JSON object, got " + json::describe(doc));
    const json::Value& version = need(doc, "flight_record");
    r.version = static_cast<int>(integer(version, "flight_record", 0, INT32_MAX));
    if (r.version != 1) fail(version, "unsupported flight record version " + json::literal(version));
    r.backend = text(doc, "backend");
    r.mode = text(doc, "mode");
    r.reason = text(doc, "reason");
    r.world = static_cast<std::int32_t>(integer(need(doc, "world"), "world", 1, kMaxRanks));
    if (const auto* m = doc.find("steps"))
      r.steps = static_cast<std::int32_t>(integer(m->value, "steps", 0, INT32_MAX));
    if (const auto* m = doc.find("timeout_s")) r.timeout_s = number(m->value, "timeout_s", 0);
    if (const auto* m = doc.find("capacity"))
      r.capacity = static_cast<std::int32_t>(integer(m->value, "capacity", 0, INT32_MAX));
    steps_ = r.steps;
    const json::Value& ranks = need(doc, "ranks");
    if (!ranks.is_array()) fail(ranks, "ranks must be an array, got " + json::describe(ranks));
    // One entry per rank of the world, each rank once.
    std::vector<const json::Value*> where(static_cast<std::size_t>(r.world), nullptr);
    for (const auto& jr : ranks.items) {
      r.ranks.push_back(read_rank(jr, r.world));
      const json::Value& at = need(jr, "rank");
      auto& first = where[static_cast<std::size_t>(r.ranks.back().rank)];
      if (first) fail(at, "rank " + json::literal(at) + " is listed twice (first at " + first->pointer + ")");
      first = &at;
    }
    for (std::int32_t q = 0; q < r.world; ++q)
      if (!where[static_cast<std::size_t>(q)])
        fail(ranks, "rank " + std::to_string(q) + " of the world of " + std::to_string(r.world) +
                        " has no entry: a record lists every rank once");
    return r;
  }

 private:
  const std::string& file_;
  std::int32_t steps_ = 0;  // of the schedule; 0 = not given

  [[noreturn]] void fail(const json::Value& v, const std::string& msg) const {
    throw Bad{make_error("analyze.bad_record", msg,
                         "give a file written by `collscope run --flight-record` or by an aborted run",
                         Location{file_, v.line, v.col, v.pointer})};
  }
  const json::Value& need(const json::Value& obj, const char* key) const {
    const auto* m = obj.find(key);
    if (!m) fail(obj, std::string("missing \"") + key + "\"");
    return m->value;
  }
  // An integer in [lo, hi], as written (never rounded or wrapped).
  std::int64_t integer(const json::Value& v, const std::string& what, std::int64_t lo, std::int64_t hi) const {
    if (!v.is_number()) fail(v, what + " must be an integer, got " + json::describe(v));
    const auto i = json::to_integer(v);
    const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
    if (i.status == json::IntegerValue::Status::not_integer)
      fail(v, what + " must be an integer, got " + json::literal(v));
    if (i.status != json::IntegerValue::Status::ok || i.value < lo || i.value > hi ||
        (!i.negative && i.uvalue > static_cast<std::uint64_t>(hi)))
      fail(v, what + " " + json::literal(v) + " is out of range " + range);
    return i.value;
  }
  std::uint64_t unsigned_integer(const json::Value& v, const std::string& what) const {
    if (!v.is_number()) fail(v, what + " must be an integer, got " + json::describe(v));
    const auto i = json::to_integer(v);
    if (i.status == json::IntegerValue::Status::not_integer)
      fail(v, what + " must be an integer, got " + json::literal(v));
    if (i.status != json::IntegerValue::Status::ok || i.negative)
      fail(v, what + " " + json::literal(v) + " is out of range 0.." + std::to_string(UINT64_MAX));
    return i.uvalue;
  }
  // A step of the schedule, or -1 for none.
  std::int32_t step(const json::Value& v, const std::string& what) const {
    return static_cast<std::int32_t>(integer(v, what, -1, steps_ > 0 ? steps_ - 1 : INT32_MAX));
  }
  // A rank of the world, or -1 for none when `none` allows it.
  std::int32_t rank_of(const json::Value& v, const std::string& what, std::int32_t world, bool none) const {
    return static_cast<std::int32_t>(integer(v, what, none ? -1 : 0, world - 1));
  }
  double number(const json::Value& v, const std::string& what, double lo) const {
    if (!v.is_number()) fail(v, what + " must be a number, got " + json::describe(v));
    if (!std::isfinite(v.number) || v.number < lo)
      fail(v, what + " " + json::literal(v) + " is out of range (a finite number, " +
                  (lo < 0 ? "-1 or more" : "0 or more") + ")");
    return v.number;
  }
  std::string text(const json::Value& obj, const char* key) const {
    const auto* m = obj.find(key);
    if (!m) return {};
    if (!m->value.is_string()) fail(m->value, std::string(key) + " must be a string, got " + json::describe(m->value));
    return m->value.text;
  }

  FlightRank read_rank(const json::Value& v, std::int32_t world) const {
    if (!v.is_object()) fail(v, "a rank entry must be an object, got " + json::describe(v));
    FlightRank fr;
    fr.rank = rank_of(need(v, "rank"), "rank", world, false);
    fr.state = text(v, "state");
    if (const auto* m = v.find("state")) {
      bool known = false;
      for (const char* s : {"finished", "idle", "running", "waiting", "hung", "crashed", "unknown"})
        known = known || fr.state == s;
      if (!known)
        fail(m->value, "a rank's state must be finished, idle, running, waiting, hung, crashed or unknown, got " +
                           json::quote(fr.state));
    } else {
      fr.state = "idle";
    }
    if (const auto* m = v.find("step")) fr.step = step(m->value, "step");
    if (const auto* m = v.find("waiting_for")) fr.waiting_for = rank_of(m->value, "waiting_for", world, true);
    if (const auto* m = v.find("dropped")) fr.dropped = unsigned_integer(m->value, "dropped");
    const json::Value& ops = need(v, "ops");
    if (!ops.is_array()) fail(ops, "ops must be an array, got " + json::describe(ops));
    for (const auto& jo : ops.items) fr.ops.push_back(read_op(jo, world));
    return fr;
  }

  FlightOp read_op(const json::Value& v, std::int32_t world) const {
    if (!v.is_object()) fail(v, "an op must be an object, got " + json::describe(v));
    FlightOp op;
    op.seq = integer(need(v, "seq"), "seq", 0, INT64_MAX);
    if (const auto* m = v.find("call")) op.call = static_cast<std::int32_t>(integer(m->value, "call", -1, INT32_MAX));
    if (const auto* m = v.find("collective")) {
      if (!m->value.is_boolean()) fail(m->value, "collective must be true or false");
      op.collective = m->value.boolean;
    }
    op.op = text(v, "op");
    if (op.op.empty()) fail(v, "an op needs \"op\"");
    op.text = text(v, "text");
    op.pointer = text(v, "pointer");
    op.buffer = text(v, "buffer");
    if (const auto* m = v.find("count")) op.count = unsigned_integer(m->value, "count");
    if (const auto* m = v.find("dtype")) {
      auto t = parse_dtype(text(v, "dtype"));
      if (!t) fail(m->value, "unknown dtype " + json::quote(m->value.text));
      op.dtype = *t;
    }
    if (const auto* m = v.find("root")) op.root = rank_of(m->value, "root", world, true);
    op.reduce_op = text(v, "reduce_op");
    if (const auto* m = v.find("members")) {
      if (!m->value.is_array()) fail(m->value, "members must be an array of ranks");
      std::vector<bool> in(static_cast<std::size_t>(world), false);
      for (const auto& x : m->value.items) {
        const std::int32_t q = rank_of(x, "a member", world, false);
        if (in[static_cast<std::size_t>(q)]) fail(x, "member " + json::literal(x) + " is listed twice");
        in[static_cast<std::size_t>(q)] = true;
        op.members.push_back(q);
      }
    }
    if (const auto* m = v.find("first_step")) op.first_step = step(m->value, "first_step");
    if (const auto* m = v.find("last_step")) op.last_step = step(m->value, "last_step");
    const std::string state = text(v, "state");
    bool known = false;
    for (const auto s : {FlightState::scheduled, FlightState::started, FlightState::completed})
      if (state == name_of(s)) op.state = s, known = true;
    if (!known) fail(need(v, "state"), "state must be scheduled, started or completed, got " + json::quote(state));
    if (const auto* m = v.find("scheduled_us")) op.scheduled_us = number(m->value, "scheduled_us", -1);
    if (const auto* m = v.find("started_us")) op.started_us = number(m->value, "started_us", -1);
    if (const auto* m = v.find("completed_us")) op.completed_us = number(m->value, "completed_us", -1);
    return op;
  }
};

}  // namespace

Result<FlightRecord> parse_flight_record(const std::string& text, const std::string& file) {
  auto doc = json::parse(text, file);
  if (!doc) {
    Error e = doc.error();
    e.id = "analyze.parse";
    e.hint = "a flight record is the JSON file `collscope run` writes; check that it is whole";
    return e;
  }
  try {
    return RecordReader(file).read(*doc);
  } catch (Bad& b) {
    return std::move(b.error);
  }
}

Result<FlightRecord> load_flight_record(const std::string& path) {
  // The one reader of collscope/files.h: a FIFO, /dev/zero or a folder is refused
  // (analyze.io) without blocking or reading without end.
  static const InputKind kind{
      "analyze.io", "flight record", kMaxFlightRecordBytes, "check the path of the flight record",
      "a flight record of 1024 ranks with 64 ops each takes about 30 MiB; check that this is one"};
  auto text = read_input_file(path, kind);
  if (!text) return text.error();
  return parse_flight_record(*text, path);
}

// --- analysis ---------------------------------------------------------------------------

std::string ranks_text(const std::vector<std::int32_t>& ranks) {
  if (ranks.empty()) return "no rank";
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) out += i + 1 == ranks.size() ? " and " : ", ";
    out += std::to_string(ranks[i]);
  }
  return out;
}

namespace {

// What every member of a collective must agree on (NCCL's desync check compares these).
std::string signature(const FlightOp& op) {
  std::string s = op.op + " count " + std::to_string(op.count) + " " + std::string(name_of(op.dtype));
  if (op.root >= 0) s += " root " + std::to_string(op.root);
  if (!op.reduce_op.empty()) s += " " + op.reduce_op;
  return s;
}

std::string op_name(const FlightOp& op) {
  return "op " + std::to_string(op.seq) + " (" + op.op + (op.call >= 0 ? ", call " + std::to_string(op.call) : "") +
         ")";
}

}  // namespace

namespace {

// One call's ops as every rank that recorded it has them.
using CallEntries = std::vector<std::pair<std::int32_t, const FlightOp*>>;

// The checks of analyze_flight_record, in the order their findings come. It remembers
// which failed ranks a finding already named, so that the last check names only the others.
class Analysis {
 public:
  explicit Analysis(const FlightRecord& r) : r_(r) {
    for (const auto& fr : r.ranks) rank_of_[fr.rank] = &fr;
  }

  std::vector<FlightFinding> run() {
    // Collectives, grouped by their call (the same on every rank).
    std::map<std::int32_t, CallEntries> by_call;
    for (const auto& fr : r_.ranks)
      for (const auto& op : fr.ops)
        if (op.collective && op.call >= 0) by_call[op.call].emplace_back(fr.rank, &op);
    // Per call, the first problem only: a desync, else missing members, else incomplete.
    for (const auto& [call, entries] : by_call)
      if (!desync(entries) && !missing(call, entries)) incomplete(entries);
    unfinished_ops();
    failed_ranks();
    if (!r_.reason.empty() && out_.empty()) out_.push_back({"analyze.aborted", "the run was aborted: " + r_.reason});
    return std::move(out_);
  }

 private:
  const FlightRecord& r_;
  std::map<std::int32_t, const FlightRank*> rank_of_;
  std::vector<std::int32_t> mentioned_;  // failed ranks a finding has named
  std::vector<FlightFinding> out_;

  void mention(std::int32_t rank) {
    if (std::find(mentioned_.begin(), mentioned_.end(), rank) == mentioned_.end()) mentioned_.push_back(rank);
  }
  // "rank 2 crashed at step 3" for a rank whose state says it failed, else "".
  std::string state_note(std::int32_t rank) {
    auto it = rank_of_.find(rank);
    if (it == rank_of_.end()) return "";
    const FlightRank& fr = *it->second;
    if (fr.state == "hung" || fr.state == "crashed") {
      mention(rank);
      return "rank " + std::to_string(rank) + " " + fr.state + " at step " + std::to_string(fr.step);
    }
    return "";
  }
  void add_notes(std::string& msg, const std::vector<std::int32_t>& ranks) {
    for (const std::int32_t m : ranks)
      if (auto note = state_note(m); !note.empty()) msg += "; " + note;
  }

  // 1. Ranks that called different collectives as the same op.
  bool desync(const CallEntries& entries) {
    std::map<std::string, std::vector<std::int32_t>> sigs;
    for (const auto& [rank, op] : entries) sigs[signature(*op)].push_back(rank);
    if (sigs.size() <= 1) return false;
    std::string msg = "ranks disagree on " + op_name(*entries.front().second) + ":";
    bool first_sig = true;
    for (auto& [sig, ranks] : sigs) {
      std::sort(ranks.begin(), ranks.end());
      msg += std::string(first_sig ? " " : "; ") + ranks_text(ranks) + ": " + sig;
      first_sig = false;
    }
    out_.push_back({"analyze.desync", msg});
    return true;
  }

  // 2. Members that never joined it.
  bool missing(std::int32_t call, const CallEntries& entries) {
    const FlightOp& first = *entries.front().second;
    std::vector<std::int32_t> members = first.members;
    if (members.empty())
      for (std::int32_t q = 0; q < r_.world; ++q) members.push_back(q);
    std::vector<std::int32_t> absent;
    std::string why;
    bool anyone_in = false;
    for (const auto& [rank, op] : entries) anyone_in = anyone_in || op->state != FlightState::scheduled;
    for (const std::int32_t m : members) {
      const FlightOp* mine = nullptr;
      for (const auto& [rank, op] : entries)
        if (rank == m) mine = op;
      if (mine) {
        if (mine->state == FlightState::scheduled && anyone_in) {
          absent.push_back(m);
          why = "it reached the op but never started it";
        }
        continue;
      }
      auto it = rank_of_.find(m);
      if (it == rank_of_.end()) continue;  // no record of that rank at all
      bool passed = false;                 // a later call: this one left its ring
      const FlightOp* last = nullptr;
      for (const auto& op : it->second->ops) {
        if (op.call > call) passed = true;
        if (op.call < call) last = &op;
      }
      if (passed) continue;
      absent.push_back(m);
      why = last ? "its last op is " + op_name(*last) + ", " + name_of(last->state) : "it recorded no op";
    }
    if (absent.empty()) return false;
    std::string msg = "not all ranks joined " + op_name(first) + ": missing " + ranks_text(absent);
    if (absent.size() == 1) msg += " (" + why + ")";
    add_notes(msg, absent);
    for (auto m : absent) mention(m);
    out_.push_back({"analyze.missing_rank", msg});
    return true;
  }

  // 3. Joined by every member but not completed.
  void incomplete(const CallEntries& entries) {
    std::vector<std::int32_t> open;
    for (const auto& [rank, op] : entries)
      if (op->state != FlightState::completed) open.push_back(rank);
    if (open.empty()) return;
    std::sort(open.begin(), open.end());
    std::string msg =
        op_name(*entries.front().second) + " started on every member but did not complete on " + ranks_text(open);
    add_notes(msg, open);
    out_.push_back({"analyze.incomplete", msg});
  }

  // Point-to-point, local and compute ops that did not complete.
  void unfinished_ops() {
    for (const auto& fr : r_.ranks)
      for (const auto& op : fr.ops) {
        if (op.collective || op.state == FlightState::completed) continue;
        std::string msg = "rank " + std::to_string(fr.rank) + " did not complete op " + std::to_string(op.seq) + " (" +
                          (op.text.empty() ? op.op : op.text) + ")" +
                          (op.state == FlightState::scheduled ? ": it never started" : "");
        if (auto note = state_note(fr.rank); !note.empty()) msg += "; " + note;
        out_.push_back({"analyze.incomplete", msg});
      }
  }

  // Ranks whose state says they failed, when no finding above named them.
  void failed_ranks() {
    for (const auto& fr : r_.ranks)
      if ((fr.state == "hung" || fr.state == "crashed") &&
          std::find(mentioned_.begin(), mentioned_.end(), fr.rank) == mentioned_.end())
        out_.push_back({"analyze.rank_failed",
                        "rank " + std::to_string(fr.rank) + " " + fr.state + " at step " + std::to_string(fr.step)});
  }
};

}  // namespace

std::vector<FlightFinding> analyze_flight_record(const FlightRecord& r) { return Analysis(r).run(); }

}  // namespace collscope
