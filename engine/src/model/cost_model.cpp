#include <algorithm>
#include <numeric>
#include <thread>
#include <vector>

#include "collscope/model.h"

namespace collscope {

CostModel CostModel::cpu_default() {
  // Measured shape of a small shared-memory machine: a step costs about a
  // microsecond of synchronisation, and all ranks share one memory system.
  CostModel m;
  m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return m;
}

double predict_step_us(const Schedule& s, const Step& st, const CostModel& m) {
  std::vector<double> per_rank(static_cast<std::size_t>(s.ranks), 0.0);
  double total_bytes = 0;
  const double esize = static_cast<double>(size_of(s.dtype));
  for (const auto& t : st.transfers) {
    const double bytes = static_cast<double>(t.count) * esize;
    double us = 0;
    if (t.action == Action::compute) {
      per_rank[static_cast<std::size_t>(t.dst.rank)] += t.duration_us;
      continue;
    }
    if (t.action == Action::copy)
      us = bytes / (m.beta_gbps * 1e3);
    else
      us = bytes / (m.gamma_gbps * 1e3);
    per_rank[static_cast<std::size_t>(t.dst.rank)] += us;
    total_bytes += bytes * (t.action == Action::copy ? 2.0 : 3.0);
  }
  double slowest = per_rank.empty() ? 0.0 : *std::max_element(per_rank.begin(), per_rank.end());
  if (m.cores > 0)
    slowest = std::max(slowest, std::accumulate(per_rank.begin(), per_rank.end(), 0.0) / m.cores);
  if (m.shared_gbps > 0) slowest = std::max(slowest, total_bytes / (m.shared_gbps * 1e3));
  return m.alpha_us + slowest;
}

double predict_us(const Schedule& s, const CostModel& m) {
  double t = 0;
  for (const auto& st : s.steps) t += predict_step_us(s, st, m);
  return t;
}

}  // namespace collscope
