#include "park.h"

#include <algorithm>
#include <cstdio>

#include "../flight.h"

namespace collscope::gpu {

std::optional<Parked> park_fault(const SessionOptions& o, std::int32_t rank, std::int32_t step) {
  for (const Fault& f : o.faults)
    if ((f.kind == Fault::Kind::crash || f.kind == Fault::Kind::hang) && f.rank == rank && f.step == step)
      return Parked{rank, step, f.kind};
  return std::nullopt;
}

double park_patience_s(const Parked& p, const SessionOptions& o) {
  if (p.kind == Fault::Kind::crash) return 0.2;
  return o.timeout_s > 0 ? o.timeout_s : 5.0;
}

Error park_error(const Schedule& s, const Parked& p, std::vector<std::int32_t> waiting, const SessionOptions& o) {
  waiting.erase(std::remove(waiting.begin(), waiting.end(), p.rank), waiting.end());
  std::sort(waiting.begin(), waiting.end());
  waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
  const std::string where = flight::position_text(s, flight::planned_ops(s), p.rank, p.step);
  const std::string tail = flight::waiting_for_it(waiting);
  if (p.kind == Fault::Kind::crash)
    return make_error("backend.rank_failed", "rank " + std::to_string(p.rank) + " crashed at " + where + tail,
                      "the run was aborted; the other ranks were released", {}, ExitCode::backend_failure);
  const std::string secs = flight::seconds_text(park_patience_s(p, o));
  return make_error(
      "backend.timeout", "rank " + std::to_string(p.rank) + " did not arrive at " + where + " within " + secs + tail,
      "the run was aborted; a rank that is only slow needs a longer --timeout", {}, ExitCode::backend_failure);
}

}  // namespace collscope::gpu
