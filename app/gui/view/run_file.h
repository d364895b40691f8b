// A run's outcome in a file: how a run of several processes (the mpi backend) reaches the
// window. The window starts `collscope run FILE --backend mpi --run-record OUT` (which
// starts its processes itself), and reads OUT back: the same RunOutcome an in-process run
// returns, snapshots included.
#pragma once

#include <string>

#include "collscope/result.h"
#include "collscope/run.h"

namespace collscope::view {

// Written to a temporary file beside `path`, then renamed: never half a file.
Status write_run_file(const std::string& path, const RunOutcome& out);
// Errors: gui.run_file (exit 3) for a file that is missing or damaged.
Result<RunOutcome> read_run_file(const std::string& path);

}  // namespace collscope::view
