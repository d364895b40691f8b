#include <algorithm>
#include <map>

#include "collscope/program.h"

namespace collscope {

std::vector<OpTiming> op_timings(const Schedule& s, const RunRecord& r) {
  // The first timing of every (step, transfer); repeated runs time them again.
  std::map<std::pair<std::int32_t, std::int32_t>, std::pair<double, double>> when;
  for (const auto& t : r.transfers) when.emplace(std::pair{t.step, t.transfer}, std::pair{t.t0_us, t.t1_us});
  std::vector<OpTiming> out(s.ops.size());
  auto widen = [](OpTiming& o, const std::pair<double, double>& w) {
    if (!o.timed) {
      o = {true, w.first, w.second};
      return;
    }
    o.t0_us = std::min(o.t0_us, w.first);
    o.t1_us = std::max(o.t1_us, w.second);
  };
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const OpRecord& op = s.ops[i];
    if (op.call >= 0 || op.spans_steps) {  // a collective or a written step: its steps' transfers on the rank
      for (std::int32_t k = op.first_step; k >= 0 && k <= op.last_step; ++k) {
        const auto& ts = s.steps[static_cast<std::size_t>(k)].transfers;
        for (std::size_t t = 0; t < ts.size(); ++t) {
          if (ts[t].src.rank != op.rank && ts[t].dst.rank != op.rank) continue;
          if (auto it = when.find({k, static_cast<std::int32_t>(t)}); it != when.end()) widen(out[i], it->second);
        }
      }
      continue;
    }
    for (const auto& [k, t] : op.transfers)
      if (auto it = when.find({k, t}); it != when.end()) widen(out[i], it->second);
  }
  return out;
}

}  // namespace collscope
