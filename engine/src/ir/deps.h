// Per-rank dependencies for running a schedule as a dataflow graph (fast mode).
//
// Every write to a rank's memory is done by that rank's own thread (the receiver
// executes a transfer, reading straight from the sender's memory). So before rank d
// runs its part of step k it only needs to know that
//   - read-after-write: the sender s has finished the last step that wrote what d reads,
//   - write-after-read: every other rank that read what d is about to overwrite has
//     finished that read,
//   - signals (barrier): the signalling rank has reached step k.
// A dependency is "lane q has completed step j", with j relative to the current
// iteration (negative: a step of the previous iteration, for repeated runs).
//
// Program order comes on top of the data: a rank's ops complete in the order MPI
// defines (OpRecord::order). Every transfer an op owns waits until the rank's earlier
// blocking ops, and the non-blocking ones it has waited for, have completed, whichever
// lanes ran them; a non-blocking op holds nothing back until its wait. A schedule
// without op records (collectives only) is a sequence of blocking calls on their members.
//
// Lanes: lane r (0 <= r < ranks) is rank r's thread, which does the rank's transfers.
// When the schedule has compute spans, lane ranks + r is rank r's compute thread: a
// rank computes while its earlier non-blocking messages and collectives move (like a
// GPU's compute stream beside its communication stream).
#pragma once

#include <cstdint>
#include <vector>

#include "collscope/schedule.h"

namespace collscope::dataflow {

struct Dep {
  std::int32_t rank;
  std::int32_t step;  // must have completed this step (relative; may be negative)
};

// Number of lanes: ranks, or 2 * ranks when the schedule has compute spans.
std::int32_t lane_count(const Schedule& s);
// The lane that executes transfer t.
inline std::int32_t lane_of(const Schedule& s, const Transfer& t) {
  return t.action == Action::compute ? s.ranks + t.dst.rank : t.dst.rank;
}

// deps[lane][step]: what the lane must wait for before running its part of step.
std::vector<std::vector<std::vector<Dep>>> compute_deps(const Schedule& s);

}  // namespace collscope::dataflow
