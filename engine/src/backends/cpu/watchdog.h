// The cpu session's watchdog: the launching thread, while the ranks run
// (docs/ARCHITECTURE.md, "Backends"). It decides *when* a run is stopped: at once after
// a crash (once the others have run into the dead rank), or when no lane finished a step
// for the timeout. *Whom* to name is blame.h's pure verdict over the lanes' snapshot.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "backends/cpu/blame.h"
#include "backends/cpu/lanes.h"

namespace collscope::cpu {

// A run the watchdog aborted.
struct Abort {
  bool timed_out = false;            // nothing moved for the timeout (else a rank crashed)
  std::vector<LaneSnapshot> frozen;  // every lane when the run was aborted
  Blame blame;                       // find_blame over `frozen`
};

// Sleeps until `lanes.done` reaches `target` (every lane reported back). When it aborts
// the run (Lanes::abort_run, so that every wait returns) it still waits for every lane
// to report back, and returns what it saw. `ranks`: lanes per kind; `fast`: the command
// was a fast-mode run. timeout_s <= 0: no timeout (a crash still aborts).
std::optional<Abort> watch(Lanes& lanes, std::uint32_t target, double timeout_s, std::int32_t ranks, bool fast);

}  // namespace collscope::cpu
