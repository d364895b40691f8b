// Where the lesson is: `applied` steps have run, and the animation of the next step
// is at time t in [0, 1). Plain state plus the few rules that move it, so that the
// controls, the keys and the timeline all move it the same way.
#pragma once

#include <cstdint>

namespace collscope::view {

struct Playback {
  std::int32_t applied = 0;  // steps applied: 0 = the inputs, steps = the end
  std::int32_t steps = 0;
  float t = 0;  // animation of step `applied`, 0..1
  bool playing = false;
  float speed = 0.5f;  // steps per second

  void restart() { applied = 0, t = 0, playing = false; }
  void jump(std::int32_t k);  // to the state before step k (0..steps), animation reset
  void forward();             // finish the current step (or the next one)
  void back();                // the state before the previous step
  void toggle();              // play / pause; at the end, play restarts
  // Advances the animation by dt seconds while playing; stops at the end.
  void tick(float dt);
  bool at_end() const { return applied >= steps; }
  // The position whose buffers the canvas shows now: after the token has landed, the
  // receiving cells already show the step's result.
  std::int32_t shown() const;
};

}  // namespace collscope::view
