// Scenario -> JSON text (format version 1). parse_scenario(to_json(s)) gives back
// an equal scenario; the tests check that round trip.
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "collscope/collective.h"
#include "collscope/scenario.h"

namespace collscope {
namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) {
  // Whole numbers are written without ".0", like a person would.
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) return static_cast<std::int64_t>(v);
  return v;
}

ojson init_json(const BufferInit& init) {
  switch (init.kind) {
    case InitKind::zeros:
      return "zeros";
    case InitKind::rank:
      return "rank";
    case InitKind::index:
      return "index";
    case InitKind::rank_index:
      return "rank_index";
    case InitKind::random: {
      ojson r = ojson::object();
      r["seed"] = init.seed;
      r["min"] = init.min;
      r["max"] = init.max;
      ojson j = ojson::object();
      j["random"] = std::move(r);
      return j;
    }
    case InitKind::values: {
      ojson rows = ojson::array();
      for (const auto& row : init.values) {
        ojson out = ojson::array();
        for (double v : row) out.push_back(number(v));
        rows.push_back(std::move(out));
      }
      ojson j = ojson::object();
      j["values"] = std::move(rows);
      return j;
    }
  }
  return "zeros";
}

// An expression as written: a number when the whole text is one integer literal
// ("-12"), else its text ("5-3" stays an expression: it is not the number 5).
ojson expr_json(const std::string& text) {
  std::int64_t v = 0;
  const char* first = text.data();
  const char* last = first + text.size();
  auto [end, ec] = std::from_chars(first, last, v);
  if (ec == std::errc() && end == last && !text.empty() && std::to_string(v) == text) return v;
  return text;
}

ojson ranks_json(const RankSelector& sel) {
  if (!sel.list.empty()) return sel.list;
  return sel.text;
}

ojson slice_json(const SliceSpec& sl, bool placed) {
  if (!placed && sl.offset.empty() && sl.count.empty()) return sl.buffer;
  ojson j = ojson::object();
  if (placed) j["rank"] = expr_json(sl.rank);
  j["buffer"] = sl.buffer;
  if (!sl.offset.empty()) j["offset"] = expr_json(sl.offset);
  if (!sl.count.empty()) j["count"] = expr_json(sl.count);
  return j;
}

ojson call_json(const ProgramOp& op);

ojson body_json(const std::vector<ProgramOp>& body) {
  ojson a = ojson::array();
  for (const auto& b : body) a.push_back(call_json(b));
  return a;
}

// Point-to-point, local and structural ops.
ojson program_op_json(const ProgramOp& op) {
  ojson j = ojson::object();
  j["op"] = op.op;
  const bool has_ranks = !op.ranks.list.empty() || !op.ranks.text.empty();
  using K = ProgramOp::Kind;
  if (is_message(op.kind)) {
    if (has_ranks) j["ranks"] = ranks_json(op.ranks);
    j["buffer"] = op.buffer;
    if (!op.offset.empty()) j["offset"] = expr_json(op.offset);
    if (!op.count_expr.empty()) j["count"] = expr_json(op.count_expr);
    j[is_send(op.kind) ? "to" : "from"] = expr_json(op.peer);
    if (op.dtype) j["dtype"] = std::string(name_of(*op.dtype));
    if (!op.request.empty()) j["request"] = op.request;
  } else if (op.kind == K::wait) {
    if (has_ranks) j["ranks"] = ranks_json(op.ranks);
    if (op.requests.size() == 1) j["request"] = op.requests[0];
    else j["requests"] = op.requests;
  } else if (op.kind == K::compute) {
    if (has_ranks) j["ranks"] = ranks_json(op.ranks);
    j["duration_us"] = op.duration_us;
    if (!op.label.empty()) j["label"] = op.label;
    if (!op.reads.empty()) {
      ojson reads = ojson::array();
      for (const auto& sl : op.reads) reads.push_back(slice_json(sl, false));
      j["reads"] = std::move(reads);
    }
    if (!op.dst.buffer.empty()) j["writes"] = slice_json(op.dst, false);
  } else if (op.kind == K::copy || op.kind == K::accumulate) {
    if (has_ranks) j["ranks"] = ranks_json(op.ranks);
    j["src"] = slice_json(op.src, false);
    j["dst"] = slice_json(op.dst, false);
    if (op.kind == K::accumulate) j["reduce_op"] = std::string(name_of(op.reduce_op));
  } else if (op.kind == K::repeat) {
    j["times"] = expr_json(op.times);
    j["var"] = op.var;
    j["body"] = body_json(op.body);
  } else if (op.kind == K::step) {
    if (!op.phase.empty()) j["phase"] = op.phase;
    ojson ts = ojson::array();
    for (const auto& t : op.transfers) {
      ojson e = ojson::object();
      if (!t.ranks.list.empty() || !t.ranks.text.empty()) e["ranks"] = ranks_json(t.ranks);
      e["from"] = slice_json(t.from, true);
      e["to"] = slice_json(t.to, true);
      if (!t.count.empty()) e["count"] = expr_json(t.count);
      e["action"] = t.action == Action::reduce ? "reduce" : t.action == Action::reduce_copy ? "reduce_copy" : "copy";
      if (t.action == Action::reduce_copy) e["with"] = slice_json(t.with, false);
      ts.push_back(std::move(e));
    }
    j["transfers"] = std::move(ts);
  }
  if (!op.caption.empty()) j["caption"] = op.caption;
  return j;
}

ojson call_json(const ProgramOp& op) {
  if (op.kind != ProgramOp::Kind::collective) return program_op_json(op);
  ojson j = ojson::object();
  j["op"] = op.coll ? std::string(name_of(*op.coll)) : op.op;
  if (!op.buffer.empty()) j["buffer"] = op.buffer;
  if (!op.send.empty()) j["send"] = op.send;
  if (!op.recv.empty()) j["recv"] = op.recv;
  const bool no_data = op.coll && !collective_descriptor(*op.coll).moves_data;  // a barrier has no count
  if (op.count && !no_data) j["count"] = *op.count;
  // alltoallv's tables: an expression, or one row per rank.
  auto table = [&](const char* key, const PeerTable& t) {
    if (!t.rows.empty()) j[key] = t.rows;
    else if (!t.expr.empty()) j[key] = expr_json(t.expr);
  };
  table("counts", op.peer_counts);
  table("send_offsets", op.send_offsets);
  table("recv_offsets", op.recv_offsets);
  if (!op.algorithm.empty() && op.algorithm != "auto") j["algorithm"] = op.algorithm;
  if (op.coll && is_reducing(*op.coll)) j["reduce_op"] = std::string(name_of(op.reduce_op));
  if (op.coll && has_root(*op.coll)) j["root"] = op.root;
  if (!op.group.empty()) j["group"] = op.group;
  if (!op.ranks.list.empty() || !op.ranks.text.empty()) j["ranks"] = ranks_json(op.ranks);
  if (!op.request.empty()) j["request"] = op.request;
  if (!op.body.empty() || op.algorithm == "custom") j["body"] = body_json(op.body);
  if (!op.caption.empty()) j["caption"] = op.caption;
  return j;
}

std::string scalar(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

std::string one_line(const ojson& j) {
  if (j.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : j.items()) {
      out += (first ? "" : ", ") + scalar(ojson(k)) + ": " + one_line(v);
      first = false;
    }
    return out + "}";
  }
  if (j.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < j.size(); ++i) out += (i ? ", " : "") + one_line(j[i]);
    return out + "]";
  }
  return scalar(j);
}

// Pretty-printing that keeps small things on one line: a buffer, a short program
// entry or a row of values reads better as one line than as a column of numbers.
void write(std::string& out, const ojson& j, std::size_t column, int depth) {
  if (!j.is_structured() || j.empty()) {
    out += one_line(j);
    return;
  }
  if (depth >= 2) {
    const std::string flat = one_line(j);
    if (column + flat.size() <= 110) {
      out += flat;
      return;
    }
  }
  const std::string pad(column + 2, ' ');
  const bool obj = j.is_object();
  out += obj ? "{\n" : "[\n";
  std::size_t i = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++i) {
    out += pad;
    std::size_t col = pad.size();
    if (obj) {
      const std::string key = scalar(ojson(it.key())) + ": ";
      out += key;
      col += key.size();
    }
    write(out, it.value(), obj ? pad.size() : col, depth + 1);
    out += i + 1 < j.size() ? ",\n" : "\n";
  }
  out += std::string(column, ' ') + (obj ? "}" : "]");
}

}  // namespace

std::string to_json(const Scenario& s) {
  ojson j = ojson::object();
  j["version"] = 1;
  if (!s.title.empty()) j["title"] = s.title;
  if (!s.description.empty()) j["description"] = s.description;
  j["ranks"] = s.ranks;
  j["dtype"] = std::string(name_of(s.dtype));
  ojson buffers = ojson::object();
  for (const auto& b : s.buffers) {
    ojson e = ojson::object();
    const bool uniform = !b.count.empty() &&
                         std::all_of(b.count.begin(), b.count.end(), [&](std::uint64_t c) { return c == b.count[0]; });
    if (uniform) e["count"] = b.count[0];
    else e["counts"] = b.count;
    if (b.scratch) e["scratch"] = true;
    else e["init"] = init_json(b.init);
    buffers[b.name] = std::move(e);
  }
  j["buffers"] = std::move(buffers);
  if (!s.groups.empty()) {
    ojson groups = ojson::object();
    for (const auto& g : s.groups) {
      if (g.split.empty()) {
        groups[g.name] = g.ranks;
      } else {
        ojson e = ojson::object();
        e["split"] = g.split;
        groups[g.name] = std::move(e);
      }
    }
    j["groups"] = std::move(groups);
  }
  ojson program = ojson::array();
  for (const auto& op : s.program) program.push_back(call_json(op));
  j["program"] = std::move(program);
  if (!s.expect.empty()) {
    ojson expect = ojson::array();
    for (const auto& e : s.expect) {
      ojson x = ojson::object();
      if (!e.ranks.list.empty() || !e.ranks.text.empty()) x["ranks"] = ranks_json(e.ranks);
      x["buffer"] = e.buffer;
      if (!e.offset.empty()) x["offset"] = expr_json(e.offset);
      if (!e.count.empty()) x["count"] = expr_json(e.count);
      if (!e.block.empty()) x["block"] = expr_json(e.block);
      if (!e.holds) {
        ojson values = ojson::array();
        for (double v : e.values) values.push_back(number(v));
        x["values"] = std::move(values);
      } else {
        ojson h = ojson::object();
        if (!e.from_rank.empty()) h["rank"] = expr_json(e.from_rank);
        else h["reduce_op"] = std::string(name_of(e.reduce_op));
        h["buffer"] = e.from_buffer;
        if (!e.from_offset.empty()) h["offset"] = expr_json(e.from_offset);
        if (!e.over_group.empty()) h["over"] = e.over_group;
        else if (!e.over.list.empty() || !e.over.text.empty()) h["over"] = ranks_json(e.over);
        x["holds"] = std::move(h);
      }
      expect.push_back(std::move(x));
    }
    j["expect"] = std::move(expect);
  }
  if (!s.faults.empty()) {
    ojson faults = ojson::array();
    for (const auto& f : s.faults) {
      ojson e = ojson::object();
      e["rank"] = f.rank;
      e["step"] = f.step;
      e["kind"] = name_of(f.kind);
      if (f.kind == Fault::Kind::delay) e["ms"] = f.ms;
      faults.push_back(std::move(e));
    }
    j["faults"] = std::move(faults);
  }
  if (!s.quiz.empty()) {
    ojson quiz = ojson::array();
    for (const auto& q : s.quiz) {
      ojson e = ojson::object();
      e["step"] = q.step;
      e["kind"] = std::string(name_of(q.kind));
      if (q.rank >= 0) e["rank"] = q.rank;
      if (!q.buffer.empty()) e["buffer"] = q.buffer;
      if (q.element >= 0) e["element"] = q.element;
      if (!q.text.empty()) e["text"] = q.text;
      quiz.push_back(std::move(e));
    }
    j["quiz"] = std::move(quiz);
  }
  if (s.view != CanvasView::automatic) j["view"] = std::string(name_of(s.view));
  if (!s.compare.empty()) j["compare"] = s.compare;

  std::string out;
  write(out, j, 0, 0);
  return out + "\n";
}

}  // namespace collscope
