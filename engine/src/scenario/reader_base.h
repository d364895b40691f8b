// What every part of the scenario reader shares: where things are, and how a check
// fails (one Error with id, message, hint and location, thrown as a Failure and
// returned by parse_scenario).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "collscope/result.h"
#include "scenario/json.h"
#include "scenario/resolve.h"
#include "scenario/suggest.h"

namespace collscope::scenario {

using json::literal;
using json::quote;

struct Failure {
  Error error;
};

class ReaderBase {
 public:
  explicit ReaderBase(const std::string& file) : file_(file) {}

 protected:
  using Value = json::Value;
  using Member = json::Member;
  const std::string& file_;

  Location at(const Value& v) const { return {file_, v.line, v.col, v.pointer}; }
  Location at(const Member& m) const { return {file_, m.line, m.col, m.value.pointer}; }

  [[noreturn]] void fail(std::string id, std::string message, std::string hint, Location where) const {
    throw Failure{make_error(std::move(id), std::move(message), std::move(hint), std::move(where))};
  }

  [[noreturn]] void wrong_type(const std::string& what, const std::string& expected, const Value& v, Location where,
                               const std::string& example) const {
    fail("scenario.wrong_type", what + " must be " + expected + ", got " + json::describe(v),
         "write it like " + example, std::move(where));
  }

  // Rejects any key of `obj` outside `valid`, suggesting the closest valid one.
  void check_keys(const Value& obj, const std::vector<std::string>& valid, const std::string& place) const {
    for (const auto& m : obj.members) {
      if (std::find(valid.begin(), valid.end(), m.key) != valid.end()) continue;
      std::string msg = "unknown key " + quote(m.key);
      if (auto c = closest(m.key, valid)) msg += " (did you mean \"" + *c + "\"?)";
      fail("scenario.unknown_key", msg, "valid keys " + place + ": " + join(valid),
           Location{file_, m.line, m.col, obj.pointer});
    }
  }

  std::string text_of(const Member& m, const std::string& example) const {
    if (!m.value.is_string()) wrong_type(m.key, "a string", m.value, at(m), example);
    return m.value.text;
  }

  // A number that is a whole number fitting 64 bits (signed or unsigned).
  json::IntegerValue integer(const Value& v, const Location& where, const std::string& what,
                             const std::string& example) const {
    if (!v.is_number()) wrong_type(what, "an integer", v, where, example);
    auto i = json::to_integer(v);
    if (i.status == json::IntegerValue::Status::not_integer) wrong_type(what, "an integer", v, where, example);
    return i;
  }

  // A count of elements: 0 or more, and at most kMaxCountElements.
  std::uint64_t count(const Value& v, const Location& where, const std::string& what,
                      const std::string& example) const {
    const auto i = integer(v, where, what, example);
    if (i.status == json::IntegerValue::Status::too_small || (i.status == json::IntegerValue::Status::ok && i.negative))
      fail("scenario.out_of_range", what + " " + literal(v) + " is negative",
           "a count is a number of elements, 0 or more", where);
    if (i.status == json::IntegerValue::Status::too_large || i.uvalue > scenario::kMaxCountElements)
      throw Failure{scenario::count_too_large_error(literal(v), where)};
    return i.uvalue;
  }
};

}  // namespace collscope::scenario
