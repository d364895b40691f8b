// The "expect" of a scenario: what must hold at the end of the program, checked by
// both verifications (docs/ARCHITECTURE.md, "Verification"; scenario.h).
#include <cmath>

#include "scenario/read_program.h"
#include "scenario/suggest.h"

namespace collscope::scenario {

namespace {

const std::vector<std::string> kExpectKeys = {"ranks", "buffer", "offset", "count", "block", "values", "holds"};
const std::vector<std::string> kHoldsKeys = {"rank", "buffer", "offset", "reduce_op", "over"};

}  // namespace

std::vector<ExpectSpec> ProgramReader::read_expect(const Member& m, const Scenario& s) {
  s_ = &s;
  const std::string example =
      "\"expect\": [{\"buffer\": \"y\", \"values\": [6, 6]}, {\"buffer\": \"x\", \"holds\": {\"reduce_op\": "
      "\"sum\", \"buffer\": \"x\"}}]";
  if (!m.value.is_array()) wrong_type("expect", "an array of expectations", m.value, at(m), example);
  std::vector<ExpectSpec> out;
  for (const Value& v : m.value.items) {
    ExpectSpec e;
    e.where = at(v);
    if (!v.is_object()) wrong_type("an expectation", "an object", v, at(v), "{\"buffer\": \"y\", \"values\": [1, 2]}");
    check_keys(v, kExpectKeys, "in an expectation");
    for (const auto& mm : v.members) e.field_where[mm.key] = at(mm);
    const Member* buf = v.find("buffer");
    if (!buf)
      fail("scenario.missing_key", "expectation is missing \"buffer\"",
           "name the buffer it is about: \"buffer\": \"y\"", at(v));
    e.buffer = buffer_name(*buf);
    for (const auto& b : s.buffers)
      if (b.name == e.buffer && b.scratch)
        fail("scenario.bad_call", "buffer " + quote(e.buffer) + " is scratch space, which nothing compares",
             "expect something of a buffer the program keeps", at(*buf));
    Scope scope = {"rank", "size"};
    if (const Member* r = v.find("ranks")) e.ranks = rank_selector(*r, scope);
    if (const Member* o = v.find("offset")) e.offset = expression(*o, scope, "\"offset\": \"4 * rank\"");
    if (const Member* c = v.find("count")) e.count = expression(*c, scope, "\"count\": 4");
    const Member* values = v.find("values");
    const Member* holds = v.find("holds");
    if (values && holds)
      fail("scenario.conflicting_keys", "expectation has both \"values\" and \"holds\"", "keep one of them",
           at(*holds));
    if (!values && !holds)
      fail("scenario.missing_key", "expectation is missing \"values\" or \"holds\"",
           "say what the buffer holds: \"values\": [6, 6] or \"holds\": {\"reduce_op\": \"sum\", \"buffer\": \"x\"}",
           at(v));
    if (const Member* b = v.find("block")) {
      if (!holds)
        fail("scenario.bad_call", "\"block\" belongs to an expectation with \"holds\"",
             "remove \"block\", or say what every block holds", at(*b));
      e.block = expression(*b, scope, "\"block\": 4");
    }
    if (values) {
      if (!values->value.is_array() || values->value.items.empty())
        wrong_type("values", "a non-empty array of numbers", values->value, at(*values), "\"values\": [6, 6, 6, 6]");
      for (const Value& x : values->value.items) {
        if (!x.is_number() || !std::isfinite(x.number))
          wrong_type("a value", "a finite number", x, at(x), "\"values\": [6, 6, 6, 6]");
        e.values.push_back(x.number);
      }
    }
    if (holds) read_holds(*holds, e, scope, s);
    out.push_back(std::move(e));
  }
  return out;
}

// "holds": the expectation is a copy of one rank's slice ("rank") or a reduction over
// ranks ("reduce_op", "over").
void ProgramReader::read_holds(const Member& holds, ExpectSpec& e, Scope& scope, const Scenario& s) const {
  e.holds = true;
  const Value& h = holds.value;
  if (!h.is_object())
    wrong_type("holds", "an object", h, at(holds),
               "{\"rank\": \"b\", \"buffer\": \"x\", \"offset\": 0} or {\"reduce_op\": \"sum\", \"buffer\": \"x\"}");
  check_keys(h, kHoldsKeys, "in \"holds\"");
  for (const auto& mm : h.members) e.field_where["holds/" + mm.key] = at(mm);
  if (!e.block.empty()) scope.push_back("b");
  const Member* rank = h.find("rank");
  const Member* op = h.find("reduce_op");
  if (rank && op)
    fail("scenario.conflicting_keys", "\"holds\" has both \"rank\" and \"reduce_op\"",
         "\"rank\": a copy of that rank's slice; \"reduce_op\": a reduction over ranks; keep one", at(*op));
  if (!rank && !op)
    fail("scenario.missing_key", "\"holds\" is missing \"rank\" or \"reduce_op\"",
         "say whose data it is: \"rank\": \"b\" (a copy of that rank's slice) or \"reduce_op\": \"sum\" (a "
         "reduction over ranks)",
         at(holds));
  const Member* from = h.find("buffer");
  if (!from)
    fail("scenario.missing_key", "\"holds\" is missing \"buffer\"", "name the input: \"buffer\": \"x\"", at(holds));
  e.from_buffer = buffer_name(*from);
  for (const auto& b : s.buffers)
    if (b.name == e.from_buffer && b.scratch)
      fail("scenario.bad_call", "buffer " + quote(e.from_buffer) + " is scratch space, which has no input",
           "name a buffer with an \"init\"", at(*from));
  if (rank) e.from_rank = expression(*rank, scope, "\"rank\": \"(rank + 1) % size\"");
  if (const Member* o = h.find("offset")) e.from_offset = expression(*o, scope, "\"offset\": \"4 * b\"");
  if (op) e.reduce_op = reduce_op(*op);
  if (const Member* over = h.find("over")) {
    if (!op)
      fail("scenario.bad_call", "\"over\" belongs to a reduction", "add \"reduce_op\", or remove \"over\"", at(*over));
    bool group = false;
    if (over->value.is_string())
      for (const auto& g : s.groups) group = group || g.name == over->value.text;
    if (group) {
      e.over_group = over->value.text;
    } else if (over->value.is_string() && over->value.text != "all" && !over->value.text.empty()) {
      long a = 0, b = 0;
      if (!parse_rank_range(over->value.text, a, b)) {
        std::vector<std::string> names;
        for (const auto& g : s.groups) names.push_back(g.name);
        std::string msg = "\"over\" " + quote(over->value.text) + " is neither a group, a rank range nor \"all\"";
        if (auto cl = closest(over->value.text, names)) msg += " (did you mean \"" + *cl + "\"?)";
        fail("scenario.unknown_group", msg, "write \"all\", a list [0, 2], a range \"0..3\" or a group's name",
             at(*over));
      }
      e.over = rank_selector(*over, {"rank", "size"});
    } else {
      e.over = rank_selector(*over, {"rank", "size"});
    }
  }
}

}  // namespace collscope::scenario
