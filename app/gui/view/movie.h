// A lesson as a film: which positions of the lesson become frames of an animated GIF
// or a video (`collscope gui --gif`, `--video`, the Export panel), for how long each is
// shown, and the range of steps asked for (`--steps A..B`). Pure data; the window
// renders the frames, view/gif.h and view/video.h encode them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

namespace collscope::view {

// Positions first..last of a lesson (steps applied, as `--step K` counts them), first < last.
struct StepRange {
  std::int32_t first = 0, last = 0;
};

// "A..B" with 0 <= A < B <= steps; "" is the whole lesson (0..steps). Bad text or a
// range outside the lesson is "gui.bad_steps" (exit 2), saying what is valid.
Result<StepRange> parse_step_range(const std::string& text, std::int32_t steps);

// One frame: the position it shows (steps applied, and the animation time of the next
// step, as Playback has them) and how long it stays, in hundredths of a second.
struct MovieFrame {
  std::int32_t applied = 0;
  float t = 0;
  std::int32_t delay_cs = 0;
  bool hold = false;  // the first frame of a step (its caption read), or the last frame
};

// How a step is filmed: it is held while its caption is read, then its tokens travel in
// a few frames and land. A long look is one frame with a long delay, never copies of it.
struct MovieTiming {
  std::int32_t travel_frames = 2;  // frames of tokens on their way
  std::int32_t travel_cs = 20;     // each
  std::int32_t hold_cs = 180;      // the step's first frame: arrows drawn, tokens at their start
  std::int32_t landed_cs = 60;     // tokens landed, the cells changed
  std::int32_t end_cs = 400;       // the last frame
};

// Every frame of `r`: for each step from r.first to r.last - 1 its hold, travel and
// landed frames, then one frame of position r.last.
std::vector<MovieFrame> plan_movie(StepRange r, const MovieTiming& timing = {});

// The frames whose colours choose the GIF's palette: one hold frame per step.
std::vector<std::size_t> palette_samples(const std::vector<MovieFrame>& frames);

// Total length, in hundredths of a second.
std::int64_t movie_length_cs(const std::vector<MovieFrame>& frames);

// "frame 12 of 71": the progress line of an export of `total` frames.
std::string movie_progress(std::size_t done, std::size_t total);

}  // namespace collscope::view
