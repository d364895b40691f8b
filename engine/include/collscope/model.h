// The alpha-beta cost model: predicted time of a schedule on a topology.
//
//   time(step) = alpha + max over ranks of (bytes the rank receives / beta
//                                           + bytes it reduces / gamma)
// A step costs its slowest rank; steps run one after another.
#pragma once

#include "collscope/schedule.h"

namespace collscope {

struct CostModel {
  double alpha_us = 1.0;       // latency per step (synchronisation), microseconds
  double beta_gbps = 10.0;     // copy bandwidth per receiving rank, GB/s
  double gamma_gbps = 6.0;     // reduce bandwidth (read two, write one), GB/s
  double shared_gbps = 30.0;   // bandwidth all ranks share (one memory system); 0 = unlimited

  static CostModel cpu_default();
};

double predict_step_us(const Schedule& s, const Step& st, const CostModel& m);
double predict_us(const Schedule& s, const CostModel& m);

}  // namespace collscope
