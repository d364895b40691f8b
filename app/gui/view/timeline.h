// The timeline: one row per rank of the transfers it executed, measured by the run on
// one clock, with the step boundaries. x is a fraction of the run (0..1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/run.h"
#include "collscope/schedule.h"

namespace collscope::view {

struct TimelineSlice {
  std::int32_t rank = 0;  // the row: the executing (receiving) rank
  std::int32_t step = 0;
  std::int32_t transfer = 0;
  std::int32_t peer = 0;  // the rank it read from
  Action action = Action::copy;
  std::uint64_t bytes = 0;
  double t0_us = 0, t1_us = 0;
  float x0 = 0, x1 = 0;
};

struct StepMark {
  std::int32_t step = 0;
  float x = 0;  // where the step began
};

struct TimelineView {
  std::int32_t ranks = 0;
  double t0_us = 0, t1_us = 0;  // the clock range shown
  std::vector<TimelineSlice> slices;
  std::vector<StepMark> marks;
};

// Slices come sorted by rank, then start time.
TimelineView build_timeline(const Schedule& s, const RunRecord& r);

// The timeline as pixels, for drawing thousands of transfers as one image: `width` columns
// and `rows_per_rank` rows per rank. A pixel holds 1 + the Action of the slice painted
// there (the last one, where slices share a pixel), or 0 where nothing ran. A slice is
// at least `min_width` pixels wide (so a short one stays visible) and fills the middle
// rows of its rank, leaving a gap between ranks.
//
// The step marks are columns too (`mark`, one flag per column: a step began there), drawn
// under the slices in the same image: 2046 steps of a 1024-rank ring as lines of their own
// were half the frame of a software renderer.
struct TimelinePixels {
  std::int32_t width = 0, height = 0, rows_per_rank = 0;
  std::vector<std::uint8_t> kind;  // height rows of width pixels
  std::vector<std::uint8_t> mark;  // width columns: 1 where a step mark falls
  std::uint8_t at(std::int32_t x, std::int32_t y) const {
    return kind[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)];
  }
};
TimelinePixels rasterise_timeline(const TimelineView& v, std::int32_t width, std::int32_t rows_per_rank = 8,
                                  std::int32_t min_width = 1);

// The rank labels left of the timeline's rows of `row_h` pixels, with the window's font
// of `font` pixels: every rank, each label as tall as its row (down to
// kMinTimelineLabelPx, and "3" instead of "rank 3" when it is smaller than the font),
// so 16 ranks are all named on an ordinary timeline; only rows lower than that label
// every k-th rank, with no two labels overlapping.
inline constexpr float kMinTimelineLabelPx = 6;
struct RankLabel {
  std::int32_t rank = 0;
  float y = 0;  // top of the label, from the top of the rows
  std::string text;
};
struct RankLabels {
  float size = 0;  // font size of every label
  std::int32_t every = 1;
  std::vector<RankLabel> labels;
};
RankLabels timeline_labels(std::int32_t ranks, float row_h, float font);

// The slice under (rank row, x), with `slop` of tolerance in x; -1 when none.
std::int32_t slice_at(const TimelineView& v, std::int32_t rank, float x, float slop = 0.003f);
// The step running at x (from the step marks); -1 before the first.
std::int32_t step_at(const TimelineView& v, float x);

}  // namespace collscope::view
