// Per-rank dependencies for running a schedule as a dataflow graph (fast mode).
//
// Every write to a rank's memory is done by that rank's own thread (the receiver
// executes a transfer, reading straight from the sender's memory). So before rank d
// runs its part of step k it only needs to know that
//   - read-after-write: the sender s has finished the last step that wrote what d reads,
//   - write-after-read: every other rank that read what d is about to overwrite has
//     finished that read,
//   - signals (barrier): the signalling rank has reached step k.
// A dependency is "rank q has completed step j", with j relative to the current
// iteration (negative: a step of the previous iteration, for repeated runs).
#pragma once

#include <cstdint>
#include <vector>

#include "collscope/schedule.h"

namespace collscope::cpu {

struct Dep {
  std::int32_t rank;
  std::int32_t step;  // must have completed this step (relative; may be negative)
};

// deps[rank][step]: what rank must wait for before running its part of step.
std::vector<std::vector<std::vector<Dep>>> compute_deps(const Schedule& s);

}  // namespace collscope::cpu
