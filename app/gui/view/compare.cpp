#include "gui/view/compare.h"

#include <algorithm>
#include <cstdio>

namespace collscope::view {

CompareSide compare_side(const LessonRun& run) {
  CompareSide c;
  const Schedule& s = run.schedule;
  for (const Call& call : s.calls)
    if (!call.algorithm.empty()) {
      c.algorithm = call.algorithm;
      break;
    }
  c.steps = static_cast<std::int32_t>(s.steps.size());
  for (const Step& st : s.steps) c.bytes += step_bytes(s, st);
  for (const StepTiming& t : run.outcome.record.steps) c.measured_us += std::max(0.0, t.t1_us - t.t0_us);
  c.predicted_us = run.predicted_us;
  c.model = run.model;
  return c;
}

std::string bytes_text(std::uint64_t bytes) {
  char buf[48];
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else if (bytes < (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  else if (bytes < (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
  return buf;
}

std::string time_text(double us) {
  char buf[48];
  if (us < 0) return "-";  // not priced
  if (us < 1000) std::snprintf(buf, sizeof buf, "%.0f us", us);
  else if (us < 1e6) std::snprintf(buf, sizeof buf, "%.1f ms", us / 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f s", us / 1e6);
  return buf;
}

std::vector<CompareBar> compare_bars(const CompareSide& left, const CompareSide& right) {
  std::vector<CompareBar> bars;
  auto add = [&bars](std::string label, double a, double b, std::string ta, std::string tb) {
    CompareBar bar;
    bar.label = std::move(label);
    bar.value = {a, b};
    bar.text = {std::move(ta), std::move(tb)};
    const double top = std::max(a, b);
    for (int i = 0; i < 2; ++i)
      bar.fraction[i] = top > 0 && bar.value[i] > 0 ? static_cast<float>(bar.value[i] / top) : 0.0f;
    bars.push_back(std::move(bar));
  };
  add("steps", left.steps, right.steps, std::to_string(left.steps), std::to_string(right.steps));
  add("bytes moved", static_cast<double>(left.bytes), static_cast<double>(right.bytes), bytes_text(left.bytes),
      bytes_text(right.bytes));
  add("time, measured", left.measured_us, right.measured_us, time_text(left.measured_us), time_text(right.measured_us));
  add("time, predicted (" + left.model + ")", left.predicted_us, right.predicted_us, time_text(left.predicted_us),
      time_text(right.predicted_us));
  return bars;
}

Result<Scenario> compare_lesson(const Scenario& lesson, const std::string& algorithm) {
  return compare_scenario(lesson, algorithm);
}

CompareModel::CompareModel(std::shared_ptr<const LessonRun> left, std::shared_ptr<const LessonRun> right)
    : runs_{std::move(left), std::move(right)} {
  for (int s = 0; s < 2; ++s) sides_[static_cast<std::size_t>(s)] = compare_side(*runs_[static_cast<std::size_t>(s)]);
}

std::int32_t CompareModel::steps() const { return std::max(sides_[0].steps, sides_[1].steps); }

bool CompareModel::done(int s, const Playback& shared) const {
  return shared.applied >= sides_[static_cast<std::size_t>(s)].steps;
}

Playback CompareModel::at(int s, const Playback& shared) const {
  Playback p = shared;
  p.steps = sides_[static_cast<std::size_t>(s)].steps;
  if (shared.applied >= p.steps) {
    p.applied = p.steps;
    p.t = 0;
    p.playing = false;
  }
  return p;
}

Result<CompareModel> run_compare(const Scenario& lesson, const std::string& algorithm, const std::string& backend,
                                 const LessonPlace& place) {
  auto other = compare_lesson(lesson, algorithm);
  if (!other) return other.error();
  auto left = run_lesson(lesson, backend, kDefaultSnapshotBudget, kDefaultTimeoutSeconds, place);
  if (!left) return left.error();
  auto right = run_lesson(*other, backend, kDefaultSnapshotBudget, kDefaultTimeoutSeconds, place);
  if (!right) return right.error();
  return CompareModel(std::move(*left), std::move(*right));
}

}  // namespace collscope::view
