// Lessons on a backend of several processes (the mpi backend) from the window: the run
// happens in a child `collscope run ... --backend mpi` (which starts its processes itself)
// and comes back as a run record file (run_file.h). A child that fails or hangs only
// costs its error: the window's worker waits for it, never the window.
#pragma once

#include <cstdint>
#include <string>

#include "collscope/run.h"
#include "collscope/scenario.h"

namespace collscope::view {

// Observable mode within `snapshot_budget`, the scenario's faults, `timeout_s` for the
// processes' watchdogs. Errors: the child's own (its first "error[...]" line), or
// gui.run_failed when it could not start or did not end (it is killed, with all its
// processes, a while after its own timeout should have ended it).
Result<RunOutcome> run_in_processes(const Scenario& scenario, const std::string& backend, std::uint64_t snapshot_budget,
                                    double timeout_s);

// The collscope binary to start: this one when it is collscope, else one beside it
// ($COLLSCOPE_BINARY first).
std::string collscope_binary();

}  // namespace collscope::view
