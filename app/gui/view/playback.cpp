#include "gui/view/playback.h"

#include <algorithm>

#include "gui/view/arrows.h"

namespace collscope::view {

void Playback::jump(std::int32_t k) {
  applied = std::clamp(k, 0, steps);
  t = 0;
}

void Playback::forward() {
  if (applied < steps) ++applied;
  t = 0;
}

void Playback::back() {
  // Mid-animation "back" returns to the start of the current step first.
  if (t > 0) t = 0;
  else if (applied > 0) --applied;
}

void Playback::toggle() {
  if (!playing && at_end()) restart();
  playing = !playing;
}

void Playback::tick(float dt) {
  if (!playing) return;
  if (at_end()) {
    playing = false;
    return;
  }
  t += dt * speed;
  while (t >= 1 && applied < steps) {
    t -= 1;
    ++applied;
  }
  if (at_end()) {
    t = 0;
    playing = false;
  }
}

std::int32_t Playback::shown() const { return (t >= kTravelFraction && applied < steps) ? applied + 1 : applied; }

}  // namespace collscope::view
