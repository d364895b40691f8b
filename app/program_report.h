// The part of `collscope run`'s report about programs: every rank's ops, in program
// order, with the steps they spanned and how long they took.
#pragma once

#include <nlohmann/json.hpp>

#include "collscope/run.h"
#include "collscope/schedule.h"

namespace collscope::app {

// Prints per-rank progress: every rank when `all_ranks` (else the first few and a
// summary), at most `ops` ops of each (then how many more), in program order.
void print_program(const Schedule& s, const RunRecord* record, bool all_ranks, std::size_t ops);
// Per rank: its ops with steps and, when `record` is given, per-op timings.
nlohmann::ordered_json program_json(const Schedule& s, const RunRecord* record);

}  // namespace collscope::app
