#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

#include "collscope/model.h"

#include "backends/cpu/deps.h"

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

double predict_sync_us(const Schedule& s, const CostModel& m) {
  const auto S = s.steps.size();
  if (S == 0) return 0;
  const auto deps = cpu::compute_deps(s);
  const std::size_t lanes = deps.size();
  const int cores = m.cores > 0 ? m.cores : s.ranks;
  // Threads: one per rank, plus a compute thread per rank when there are compute spans.
  const double threads = static_cast<double>(lanes);
  const double wake = threads <= cores ? m.wake_us : m.switch_us * threads / cores;

  // How many lanes wait for each (lane, step): a crowd is woken a core at a time.
  std::vector<std::vector<int>> waiters(lanes, std::vector<int>(S, 0));
  for (const auto& per_lane : deps)
    for (const auto& per_step : per_lane)
      for (const auto& d : per_step)
        if (d.step >= 0) ++waiters[static_cast<std::size_t>(d.rank)][static_cast<std::size_t>(d.step)];

  std::vector<std::vector<double>> ready(lanes, std::vector<double>(S, 0.0));
  for (std::size_t k = 0; k < S; ++k)
    for (std::size_t l = 0; l < lanes; ++l) {
      double t = k > 0 ? ready[l][k - 1] : 0.0;
      for (const auto& d : deps[l][k]) {
        if (d.step < 0) continue;  // the previous iteration: not part of one call
        const auto q = static_cast<std::size_t>(d.rank), j = static_cast<std::size_t>(d.step);
        t = std::max(t, ready[q][j] + wake * std::ceil(static_cast<double>(waiters[q][j]) / cores));
      }
      ready[l][k] = t;
    }
  double t = 0;
  for (const auto& r : ready) t = std::max(t, r.back());
  return t;
}

double predict_auto_us(const Schedule& s, const CostModel& m) {
  CostModel data = m;
  data.alpha_us = 0;
  return predict_us(s, data) + predict_sync_us(s, m);
}

}  // namespace collscope
