// Compare mode: the lesson's collective calls run a second time with another
// algorithm, shown side by side on one clock. The model holds both runs (each lowered
// and executed exactly as the window runs one lesson, run_lesson), maps the window's
// one position onto both, and says what each side needed: steps, bytes moved between
// ranks, measured and predicted time. No ImGui here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/view/lesson.h"
#include "gui/view/playback.h"

namespace collscope::view {

// What one side needed.
struct CompareSide {
  std::string algorithm;  // the algorithm that ran the lesson's first call (auto resolved)
  std::int32_t steps = 0;
  std::uint64_t bytes = 0;  // moved between ranks over every step (step_bytes)
  double measured_us = 0;   // the steps' own measured time, summed (observable mode)
  double predicted_us = 0;  // the cost model's, whole schedule
  std::string model;        // what predicted it ("cpu model")
};
CompareSide compare_side(const LessonRun& run);

// One bar of the chart: a quantity for the left and the right side.
struct CompareBar {
  std::string label;                // "steps", "bytes moved", "time, measured", "time, predicted (cpu model)"
  std::array<double, 2> value{};    // left, right
  std::array<std::string, 2> text;  // as printed beside the bars ("6", "1.5 KiB", "42 us")
  std::array<float, 2> fraction{};  // bar lengths, the larger one 1
};
std::vector<CompareBar> compare_bars(const CompareSide& left, const CompareSide& right);

// The second run of a lesson: `lesson` with its calls run by `algorithm`
// (compare_scenario: compare.unknown_algorithm and friends, exit 2).
Result<Scenario> compare_lesson(const Scenario& lesson, const std::string& algorithm);

class CompareModel {
 public:
  CompareModel(std::shared_ptr<const LessonRun> left, std::shared_ptr<const LessonRun> right);
  // The shared clock's length: the longer side's steps.
  std::int32_t steps() const;
  const LessonRun& run(int side) const { return *runs_[static_cast<std::size_t>(side)]; }
  const std::shared_ptr<const LessonRun>& shared_run(int side) const { return runs_[static_cast<std::size_t>(side)]; }
  const CompareSide& side(int s) const { return sides_[static_cast<std::size_t>(s)]; }
  // Where side `s` is when the shared clock is at `shared`: the same position, or, once
  // the side has run all its steps, held at its end (animation stopped).
  Playback at(int s, const Playback& shared) const;
  // Side `s` has run all its steps at this position (the shorter side waits, "done").
  bool done(int s, const Playback& shared) const;
  std::vector<CompareBar> bars() const { return compare_bars(sides_[0], sides_[1]); }

 private:
  std::array<std::shared_ptr<const LessonRun>, 2> runs_;
  std::array<CompareSide, 2> sides_;
};

// Both runs, blocking (the window runs the second on its worker instead): the lesson
// as it is, and with `algorithm`.
Result<CompareModel> run_compare(const Scenario& lesson, const std::string& algorithm, const std::string& backend,
                                 const LessonPlace& place = {});

// "1.5 KiB", "64 B", "12.0 MiB".
std::string bytes_text(std::uint64_t bytes);
// "42 us", "1.3 ms", "2.10 s".
std::string time_text(double us);

}  // namespace collscope::view
