// Whom a stalled or broken run is waiting for: the cpu watchdog's verdict as a pure
// function of what every lane was doing when the run stopped (docs/ARCHITECTURE.md,
// "Backends"). The watchdog (watchdog.h) only decides *when* to stop a run; this file
// decides *whom* to name, so every situation can be tested without threads or clocks.
//
// Lane l belongs to rank l % ranks; lanes >= ranks are the compute lanes. The culprit is,
// in this order of precedence:
//   1. a crashed lane, then a hung lane (an injected fault: it is certainly to blame);
//   2. fast mode: the lane most wait-for chains end at (a lane waits for the lane whose
//      data it needs; the chain is followed until a lane that is not waiting);
//   3. a lane that is neither idle, finished nor waiting (it is inside its part of a step).
// The others that wait for it are, in observable mode, the ranks idle at the step's
// barrier, and in fast mode the ranks whose chain ends at the culprit's rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/lane_state.h"

namespace collscope::cpu {

// One lane when the run stopped.
struct LaneSnapshot {
  LaneState state = LaneState::idle;
  std::int32_t step = -1;        // the step it was in
  std::int32_t waiting_on = -1;  // the lane it was waiting for, -1 = none
};

// What the culprit was doing.
enum class Conduct : std::uint8_t {
  nobody,   // no lane to blame: nothing moved, and no one is inside a step
  crashed,  // a crash fault: it stopped for good
  hung,     // a hang fault: it never arrived at its step
  late,     // it was inside its part of a step and did not finish it in time
  absent,   // it did not arrive at its step (the end of a wait-for chain, or a cycle)
};
const char* name_of(Conduct c);

struct Blame {
  Conduct conduct = Conduct::nobody;
  std::int32_t lane = -1;             // the culprit lane, -1 for nobody
  std::int32_t rank = -1;             // its rank
  std::int32_t step = -1;             // the step it was in (0 when it had none yet)
  std::vector<std::int32_t> waiting;  // the other ranks that wait for it, ascending
};

// Where every wait-for chain ends: ends[l] is the first lane reached from l that is not
// waiting on another lane (l itself when it does not wait). A cycle ends where the
// chain has made as many hops as there are lanes.
std::vector<std::int32_t> chain_ends(const std::vector<LaneSnapshot>& lanes);

// The verdict. `fast`: the run was fast mode (dataflow waits), else observable mode
// (a barrier after every step).
Blame find_blame(const std::vector<LaneSnapshot>& lanes, std::int32_t ranks, bool fast);

// The error message: "rank 3 did not arrive at step 1 (...) within 1 s; ranks 0, 1 and 2
// are waiting for it". `where` names the culprit's position (flight::position_text).
std::string blame_message(const Blame& b, const std::string& where, double timeout_s);

}  // namespace collscope::cpu
