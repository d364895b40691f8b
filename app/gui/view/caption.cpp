#include "gui/view/caption.h"

#include <algorithm>

#include "collscope/verify.h"

namespace collscope::view {

CaptionView build_caption(const LessonRun& run, std::int32_t applied) {
  const Schedule& s = run.schedule;
  CaptionView c;
  if (!run.model.empty()) c.predicted_note = " (" + run.model + ")";
  c.title = run.scenario.title.empty() ? run.scenario.file : run.scenario.title;
  const auto n = static_cast<std::int32_t>(s.steps.size());
  c.verified = run.outcome.verified();
  if (!run.outcome.symbolic.ok()) c.verdict = "symbolic check failed: " + run.outcome.symbolic.error().format();
  else if (run.outcome.numeric.wrong > 0) c.verdict = "numeric check failed: " + run.outcome.numeric.message();
  else
    c.verdict =
        "verified: " + verdict_scope(s) + " (" + std::to_string(run.outcome.numeric.checked) + " elements checked)";
  if (n == 0) {
    c.position = step_position(0, 0);
    return c;
  }
  const std::int32_t k = std::clamp(applied, 0, n - 1);
  const Step& st = s.steps[static_cast<std::size_t>(k)];
  const Call& call = s.calls[static_cast<std::size_t>(st.call)];
  // The parts of a split group's call share their steps: "calls 1 and 2 of 2".
  std::string numbers;
  const auto calls = calls_of(st);
  for (std::size_t i = 0; i < calls.size(); ++i)
    numbers += (i == 0 ? "" : i + 1 == calls.size() ? " and " : ", ") + std::to_string(calls[i] + 1);
  c.call = (calls.size() > 1 ? "calls " : "call ") + numbers + " of " + std::to_string(s.calls.size()) + ": ";
  if (call.kind == CallKind::program) {
    // Point-to-point messages, local ops and compute spans: the ops this step serves.
    std::string ops;
    for (const auto& op : s.ops)
      for (const auto& [step, transfer] : op.transfers)
        if (step == k && ops.find(op.op) == std::string::npos) ops += (ops.empty() ? "" : ", ") + op.op;
    c.call += "point-to-point" + (ops.empty() ? std::string() : " (" + ops + ")");
  } else {
    c.call += std::string(name_of(call.args.coll)) + ", " + call.algorithm + (call.auto_picked ? " (auto)" : "") +
              ", " + std::to_string(call.args.ranks) + " ranks, count " + std::to_string(call.args.count);
    if (is_reducing(call.args.coll)) c.call += ", " + std::string(name_of(call.args.op));
    if (has_root(call.args.coll)) c.call += ", root " + std::to_string(call.args.root);
    if (!call.group.empty()) c.call += ", " + parts_text(s, st);
  }
  if (!call.caption.empty()) c.call += " - " + call.caption;
  if (applied >= n) {
    c.position = step_position(applied, n);
    c.phase = "result";
    c.caption = "every rank holds its result; gold cells hold a contribution from every rank";
    c.measured_us = run.outcome.record.time_us;
    c.predicted_us = run.predicted_us;
    return c;
  }
  c.position = step_position(k, n);
  c.phase = st.phase;
  c.caption = st.caption;
  c.bytes = step_bytes(s, st);
  if (static_cast<std::size_t>(k) < run.predicted_step_us.size())
    c.predicted_us = run.predicted_step_us[static_cast<std::size_t>(k)];
  for (const auto& t : run.outcome.record.steps)
    if (t.step == k) c.measured_us = t.t1_us - t.t0_us;
  return c;
}

std::string step_position(std::int32_t applied, std::int32_t steps) {
  if (steps <= 0) return "no steps";
  if (applied >= steps) return "done: all " + std::to_string(steps) + " steps ran";
  return "step " + std::to_string(std::max(0, applied) + 1) + " of " + std::to_string(steps);
}

LessonSummary summarise_lesson(const Scenario& sc, const Schedule& s) {
  LessonSummary out;
  out.title = sc.title.empty() ? sc.file : sc.title;
  out.single_collective = s.calls.size() == 1 && s.calls.front().kind == CallKind::collective &&
                          s.calls.front().group.empty() && !s.calls.front().custom;
  out.lines.push_back(std::to_string(s.ranks) + " ranks, " + std::string(name_of(s.dtype)));
  std::vector<std::string> calls;
  std::vector<std::string> p2p;
  for (const Call& c : s.calls) {
    if (c.kind == CallKind::program) continue;
    std::string t = std::string(name_of(c.args.coll)) + " (" + c.algorithm;
    if (!c.group.empty()) t += ", " + group_text(c);
    calls.push_back(t + ")");
  }
  // Point-to-point, local and compute ops by name, in program order, once each.
  for (const auto& op : s.ops) {
    bool collective = op.call >= 0 && static_cast<std::size_t>(op.call) < s.calls.size() &&
                      s.calls[static_cast<std::size_t>(op.call)].kind == CallKind::collective;
    if (collective) continue;
    if (std::find(p2p.begin(), p2p.end(), op.op) == p2p.end()) p2p.push_back(op.op);
  }
  if (!calls.empty()) {
    std::string line = calls.size() == 1 ? "1 collective: " : std::to_string(calls.size()) + " collectives: ";
    for (std::size_t i = 0; i < calls.size(); ++i) line += (i ? ", " : "") + calls[i];
    out.lines.push_back(line);
  }
  if (!p2p.empty()) {
    std::string line = "point-to-point and local ops: ";
    for (std::size_t i = 0; i < p2p.size(); ++i) line += (i ? ", " : "") + p2p[i];
    out.lines.push_back(line);
  }
  std::size_t steps = s.steps.size();
  out.lines.push_back(std::to_string(steps) + (steps == 1 ? " step" : " steps"));
  return out;
}

}  // namespace collscope::view
