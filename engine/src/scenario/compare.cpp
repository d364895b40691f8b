// "compare": "tree": the lesson's collective calls run by a second algorithm, for the
// window's side-by-side view (scenario.h, compare_scenario).
#include <algorithm>

#include "collscope/algorithms.h"
#include "collscope/scenario.h"
#include "scenario/json.h"
#include "scenario/suggest.h"

namespace collscope {

namespace {

// Calls f on every collective call the comparison changes: top-level ones and those in
// repeat bodies (a custom call's body is its own algorithm and stays as it is).
template <class Ops, class F>
void for_each_call(Ops& ops, F&& f) {
  for (auto& op : ops) {
    if (op.kind == ProgramOpKind::collective && op.coll && op.algorithm != "custom") f(op);
    if (op.kind == ProgramOpKind::repeat) for_each_call(op.body, f);
  }
}

}  // namespace

std::vector<std::string> compare_algorithms(Collective c) { return algorithm_names(c); }

std::optional<Collective> compared_collective(const Scenario& s) {
  std::optional<Collective> c;
  bool mixed = false;
  for_each_call(s.program, [&](const ProgramOp& op) {
    if (c && *c != *op.coll) mixed = true;
    c = op.coll;
  });
  if (mixed) return std::nullopt;
  return c;
}

Result<Scenario> compare_scenario(const Scenario& s, const std::string& algorithm, const Location& where) {
  std::vector<Collective> seen;
  for_each_call(s.program, [&](const ProgramOp& op) {
    if (std::find(seen.begin(), seen.end(), *op.coll) == seen.end()) seen.push_back(*op.coll);
  });
  if (seen.empty())
    return make_error("compare.no_call", "this lesson has no collective call to compare",
                      "compare works on lessons whose program calls a collective (allreduce, broadcast, ...); "
                      "remove the comparison or open such a lesson",
                      where);
  if (seen.size() > 1)
    return make_error("compare.mixed",
                      "this lesson calls " + std::string(name_of(seen[0])) + " and " + std::string(name_of(seen[1])) +
                          ": one second algorithm cannot run both",
                      "compare on a lesson whose collective calls are all of one collective", where);
  const Collective c = seen[0];
  const auto valid = compare_algorithms(c);
  if (std::find(valid.begin(), valid.end(), algorithm) == valid.end()) {
    std::string msg =
        "cannot compare with " + json::quote(algorithm) + ": it is not an algorithm for " + std::string(name_of(c));
    if (auto m = scenario::closest(algorithm, valid)) msg += " (did you mean \"" + *m + "\"?)";
    return make_error("compare.unknown_algorithm", msg,
                      "give one of the algorithms for " + std::string(name_of(c)) + ": " + scenario::join(valid),
                      where);
  }
  Scenario out = s;
  out.compare.clear();
  for_each_call(out.program, [&](ProgramOp& op) { op.algorithm = algorithm; });
  return out;
}

}  // namespace collscope
