// A digest of a Schedule: the processes of a job compare theirs before running, since
// processes that lowered different schedules (different files, flags or versions) would
// wait for each other's messages for ever (collscope/processes.h, agree()).
#pragma once

#include <cstdint>
#include <string>

#include "collscope/schedule.h"

namespace collscope {

// 64-bit FNV-1a over everything that changes what runs: the world, dtype, buffers,
// calls, every step's transfers, compute labels and the program's ops. Equal schedules
// give equal digests on every machine (no pointers, no padding bytes).
std::uint64_t schedule_digest(const Schedule& s);

// Mixes more into a digest (the run's options, the version).
std::uint64_t digest_more(std::uint64_t digest, const std::string& text);

// "4 ranks, allreduce ring count 1024, 6 steps": what a process is about to run, in one line.
std::string schedule_summary(const Schedule& s);

}  // namespace collscope
