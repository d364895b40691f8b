// The alpha-beta cost model: predicted time of a schedule on a topology.
//
//   work(rank)  = bytes the rank copies / beta + bytes it reduces / gamma
//   time(step)  = alpha + max( slowest rank's work,
//                              all ranks' work / cores      (ranks share the cores),
//                              memory traffic / shared bandwidth )
// Steps run one after another. On one machine the cores and the memory system are
// shared, which is why a tree can keep up with a ring there while it cannot on a
// network of links.
#pragma once

#include "collscope/schedule.h"

namespace collscope {

struct CostModel {
  double alpha_us = 1.0;       // latency per step (synchronisation), microseconds
  double beta_gbps = 10.0;     // copy bandwidth per receiving rank, GB/s
  double gamma_gbps = 6.0;     // reduce bandwidth (read two, write one), GB/s
  double shared_gbps = 30.0;   // bandwidth all ranks share (one memory system); 0 = unlimited
  int cores = 0;               // cores the ranks share; 0 = as many as ranks

  static CostModel cpu_default();
};

double predict_step_us(const Schedule& s, const Step& st, const CostModel& m);
double predict_us(const Schedule& s, const CostModel& m);

}  // namespace collscope
