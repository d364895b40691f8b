#include "gui/view/movie.h"

#include <charconv>

#include "gui/view/arrows.h"

namespace collscope::view {

namespace {

bool whole(const std::string& s, std::int32_t& out) {
  if (s.empty()) return false;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<StepRange> parse_step_range(const std::string& text, std::int32_t steps) {
  const std::string valid = "0.." + std::to_string(steps);
  if (text.empty()) {
    if (steps <= 0) return make_error("gui.bad_steps", "the lesson has no steps to film", "choose another lesson");
    return StepRange{0, steps};
  }
  const auto dots = text.find("..");
  std::int32_t a = 0, b = 0;
  if (dots == std::string::npos || !whole(text.substr(0, dots), a) || !whole(text.substr(dots + 2), b))
    return make_error("gui.bad_steps", "cannot read --steps \"" + text + "\"",
                      "write A..B, positions as --step counts them (steps applied), e.g. --steps 0..3 within " + valid);
  if (a < 0 || b > steps || a >= b)
    return make_error("gui.bad_steps", "--steps " + text + " is not a range of this lesson's " + valid,
                      "give A..B within " + valid + ", A before B (steps applied, as --step counts them)");
  return StepRange{a, b};
}

std::vector<MovieFrame> plan_movie(StepRange r, const MovieTiming& timing) {
  std::vector<MovieFrame> out;
  for (std::int32_t k = r.first; k < r.last; ++k) {
    out.push_back({k, 0.0f, timing.hold_cs, true});
    // Tokens travel until kTravelFraction of the step, then land.
    for (std::int32_t i = 1; i <= timing.travel_frames; ++i)
      out.push_back({k, kTravelFraction * static_cast<float>(i) / static_cast<float>(timing.travel_frames + 1),
                     timing.travel_cs, false});
    out.push_back({k, (kTravelFraction + 1.0f) / 2, timing.landed_cs, false});
  }
  out.push_back({r.last, 0.0f, timing.end_cs, true});
  return out;
}

std::vector<std::size_t> palette_samples(const std::vector<MovieFrame>& frames) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (frames[i].hold) out.push_back(i);
  return out;
}

std::int64_t movie_length_cs(const std::vector<MovieFrame>& frames) {
  std::int64_t n = 0;
  for (const auto& f : frames) n += f.delay_cs;
  return n;
}

std::string movie_progress(std::size_t done, std::size_t total) {
  return "frame " + std::to_string(done) + " of " + std::to_string(total);
}

}  // namespace collscope::view
