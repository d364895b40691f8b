// What one lane of a rank (its communication thread, or its compute thread) is doing,
// as its watchdog and the flight record see it. The cpu backend keeps it in an atomic
// per lane; the mpi backend in a slot of the node's shared window (mpi/board.h), which
// is why the values are fixed 32-bit numbers.
#pragma once

#include <cstdint>

namespace collscope {

enum class LaneState : std::uint32_t { idle, running, waiting, hung, crashed, finished };

inline const char* name_of(LaneState s) {
  switch (s) {
    case LaneState::idle:
      return "idle";
    case LaneState::running:
      return "running";
    case LaneState::waiting:
      return "waiting";
    case LaneState::hung:
      return "hung";
    case LaneState::crashed:
      return "crashed";
    case LaneState::finished:
      return "finished";
  }
  return "idle";
}

}  // namespace collscope
