// Point-to-point programs after lowering: what each rank's ops did and when.
//
// A program's Schedule carries one OpRecord per op of every rank (schedule.h): the
// steps it spanned and the transfers it owned. Together with a run record this gives
// per-op timings, for `collscope run --json` and the views.
#pragma once

#include <vector>

#include "collscope/run.h"
#include "collscope/schedule.h"

namespace collscope {

struct OpTiming {
  bool timed = false;           // false: the op moved nothing that was timed (a wait, an empty message)
  double t0_us = 0, t1_us = 0;  // on the run record's clock
};

// One entry per Schedule::ops entry. A point-to-point, local or compute op is timed by
// its own transfers; a collective or a written step by every transfer of its steps that
// touches the rank.
std::vector<OpTiming> op_timings(const Schedule& s, const RunRecord& r);

}  // namespace collscope
