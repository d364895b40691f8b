// Scenario -> JSON text (format version 1). parse_scenario(to_json(s)) gives back
// an equal scenario; the tests check that round trip.
#include <cmath>
#include <nlohmann/json.hpp>

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
    case InitKind::zeros: return "zeros";
    case InitKind::rank: return "rank";
    case InitKind::index: return "index";
    case InitKind::rank_index: return "rank_index";
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

ojson call_json(const ProgramOp& op) {
  ojson j = ojson::object();
  j["op"] = op.coll ? std::string(name_of(*op.coll)) : op.op;
  if (!op.buffer.empty()) j["buffer"] = op.buffer;
  if (!op.send.empty()) j["send"] = op.send;
  if (!op.recv.empty()) j["recv"] = op.recv;
  const bool barrier = op.coll && *op.coll == Collective::barrier;
  if (op.count && !barrier) j["count"] = *op.count;
  if (!op.algorithm.empty() && op.algorithm != "auto") j["algorithm"] = op.algorithm;
  if (op.coll && is_reducing(*op.coll)) j["reduce_op"] = std::string(name_of(op.reduce_op));
  if (op.coll && has_root(*op.coll)) j["root"] = op.root;
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
    if (uniform)
      e["count"] = b.count[0];
    else
      e["counts"] = b.count;
    e["init"] = init_json(b.init);
    buffers[b.name] = std::move(e);
  }
  j["buffers"] = std::move(buffers);
  ojson program = ojson::array();
  for (const auto& op : s.program) program.push_back(call_json(op));
  j["program"] = std::move(program);

  std::string out;
  write(out, j, 0, 0);
  return out + "\n";
}

}  // namespace collscope
