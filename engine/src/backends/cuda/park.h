// Crash and hang faults on the GPU backends (docs/ARCHITECTURE.md, "Backends"). A kernel cannot be stopped
// from the host, so the faulty rank's stream is parked at the step (a kernel that waits
// for the run's abort flag): the ranks that need its data wait as they would for a dead
// peer. The host knows what it injected: a crash is reported once the others have had a
// moment to run into it, a hang only when the timeout has passed. Then the abort flag
// releases the parked stream, every stream drains, and the run fails with exit 3.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "collscope/backend.h"
#include "collscope/result.h"
#include "collscope/schedule.h"

namespace collscope::gpu {

struct Parked {
  std::int32_t rank = -1, step = -1;
  Fault::Kind kind = Fault::Kind::hang;
};

// The crash or hang fault of `rank` at `step`, if one was injected there.
std::optional<Parked> park_fault(const SessionOptions& o, std::int32_t rank, std::int32_t step);

// How long to let a parked run go on before failing it: a moment for a crash (the host
// saw it happen), the timeout for a hang (nobody knows it will never come).
double park_patience_s(const Parked& p, const SessionOptions& o);

// The failure of a run stopped by `p`: "rank 1 crashed at step 3 (seq 0: allreduce x,
// program op 0); ranks 0, 2 and 3 are waiting for it", or "... did not arrive at ...
// within 2 s ...". `waiting`: the other ranks whose streams had not finished.
Error park_error(const Schedule& s, const Parked& p, std::vector<std::int32_t> waiting, const SessionOptions& o);

}  // namespace collscope::gpu
