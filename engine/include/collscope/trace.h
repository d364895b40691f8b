// The trace export (docs/ARCHITECTURE.md, "Runs and reports"): a run as a Chrome trace event JSON
// file that opens in Perfetto (ui.perfetto.dev) and chrome://tracing.
//
// Layout of the file:
//   one process per rank         pid = rank, named "rank 3 · GPU 1", sorted by rank
//   one thread per channel       tid 1 "collectives"  one slice per call, with the arg
//                                                     names of PyTorch's profiler
//                                tid 2 "steps"        one slice per step the rank took part in
//                                tid 3 "recv"         the transfers the rank executed (it is the
//                                                     receiver; local copies, reduces, scales too)
//                                tid 4 "send"         the transfers other ranks read from this rank
//   flow arrows                  from each send slice to its recv slice
//   step markers                 a global instant event "step k" at each step's start
//   "distributedInfo"            {rank, world_size, backend}, at the top level like PyTorch's traces
// Slices on one thread never overlap partially: when a channel has overlapping slices
// on a rank (a root that several ranks read from at once), the extra ones go to
// further lanes of that channel, tid = 1 + channel + 4 * lane, named "send (2)", ...
// (channel: 0 collectives, 1 steps, 2 recv, 3 send; lane 0 first).
#pragma once

#include <string>

#include "collscope/result.h"
#include "collscope/run.h"
#include "collscope/schedule.h"

namespace collscope {

// Writes a Chrome trace event JSON file (opens in Perfetto and chrome://tracing).
// Written atomically: a temporary file in the same folder, then rename; on failure no
// file is left behind. Error id "trace.io" (exit code 2 via ExitCode::bad_input) naming the path and the OS reason.
Status write_trace(const std::string& path, const Schedule& s, const RunRecord& r);
// The same document as a JSON string (used by tests and by write_trace).
std::string trace_json(const Schedule& s, const RunRecord& r);

}  // namespace collscope
