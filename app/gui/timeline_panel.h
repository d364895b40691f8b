// The timeline: measured transfers per rank on one clock, step boundaries, hover
// details; a click jumps to the step; hovering underlines the transfer on the canvas.
// In compare mode: both runs, one above the other, on one time axis, so the faster
// algorithm's band is the shorter one.
#pragma once

#include <vector>

#include "gui/image_texture.h"
#include "gui/lesson_state.h"
#include "gui/view/compare.h"
#include "gui/view/playback.h"
#include "gui/view/timeline.h"

namespace collscope::app {

class TimelinePanel {
 public:
  void draw(const LessonState& lesson, view::Playback& pb, Highlight& hl, float scale);
  // Compare mode: the lesson's run (side 0 of `cmp`) above, the second algorithm's below.
  void draw_compare(const LessonState& lesson, const view::CompareModel& cmp, view::Playback& pb, Highlight& hl,
                    float scale);

 private:
  // One run's rows as one image, rebuilt when its timeline, its width or the lit rank change.
  struct Band {
    std::uint64_t pixels_of = 0;  // the run's version (0: none yet)
    std::int32_t width = 0;
    std::int32_t lit_rank = -2;
    view::TimelinePixels pixels;
    ImageTexture image;
  };
  // Draws `tl` into the rectangle at `o` of `w` x `h` pixels of rows (labels left of it,
  // `label_w` wide): the current step shaded, the step marks, the transfers, the
  // highlighted one outlined.
  void band(Band& b, const view::TimelineView& tl, std::uint64_t version, std::int32_t current, const Highlight& hl,
            float scale, ImVec2 o, float label_w, float w, float h);

  Band main_, other_;
  // The second run's timeline, built when its run changes.
  const view::LessonRun* other_run_ = nullptr;
  std::uint64_t other_version_ = 0;
  view::TimelineView other_tl_;
};

}  // namespace collscope::app
