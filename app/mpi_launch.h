// Runs of a multi-process backend (BackendCapabilities::multi_process) from the command
// line: starting the launcher when no launcher started collscope, and what a process of
// a job prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collscope/result.h"

namespace collscope::app {

// When no launcher started this process, starts one on this machine (mpirun -np RANKS,
// with --hostfile FILE when given, and what running as root and more ranks than cores
// need), running this same command line, waits for it and returns the exit code to
// leave with. nullopt: this process is one of a job already; run here.
std::optional<int> self_launch(std::int32_t ranks, const std::string& hostfile);

// A process of a job: only process 0 prints (collscope/processes.h).
void quiet_in_job();

// An input error while preparing a multi-process run: every process of the job says what
// stopped it, so that the others do not wait for it; process 0 prints the error (or,
// when the processes differ, which ones failed how). Returns the exit code.
int input_error_in_job(const Error& e);

}  // namespace collscope::app
