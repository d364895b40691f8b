// Output paths of `collscope run`: refused before the run when they are folders,
// devices or FIFOs, one of the run's inputs, or the same file twice.
#pragma once

#include <string>

#include "cli.h"

namespace collscope::app {

// Where an aborted run writes its flight record: --flight-record, else TRACE.flight.json
// next to --trace, else "" ($TMPDIR). A completed run writes it only for --flight-record.
std::string failure_record_path(const RunFlags& f);

Status check_run_outputs(const RunFlags& f);

}  // namespace collscope::app
