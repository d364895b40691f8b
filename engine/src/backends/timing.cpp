// Timing fast-mode calls in batches (run.h, time_calls): the median batch's time per
// call is what `collscope bench` reports.
#include <algorithm>

#include "collscope/run.h"

namespace collscope {

CallTiming call_timing(const std::vector<double>& batch_us, const std::vector<std::int32_t>& calls) {
  CallTiming t;
  const std::size_t n = std::min(batch_us.size(), calls.size());
  if (n == 0) return t;
  std::vector<double> per_call;
  double total_us = 0;
  std::int64_t total_calls = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::int32_t c = std::max<std::int32_t>(1, calls[k]);
    per_call.push_back(batch_us[k] / c);
    total_us += batch_us[k];
    total_calls += c;
  }
  std::sort(per_call.begin(), per_call.end());
  t.median_us = n % 2 ? per_call[n / 2] : (per_call[n / 2 - 1] + per_call[n / 2]) / 2;
  t.mean_us = total_us / static_cast<double>(total_calls);
  t.slowest_us = per_call.back();
  t.batches = static_cast<std::int32_t>(n);
  return t;
}

Result<CallTiming> time_calls(Session& session, std::int32_t iterations, std::int32_t batches) {
  iterations = std::max<std::int32_t>(1, iterations);
  batches = std::clamp<std::int32_t>(batches, 1, iterations);
  // Batches of `every` calls, the last one taking what is left: 200 in 10 of 20, 23 in 3 of 7, 7, 9.
  const std::int32_t every = iterations / batches;
  std::vector<std::int32_t> calls(static_cast<std::size_t>(batches), every);
  calls.back() = iterations - every * (batches - 1);
  std::vector<double> batch_us;
  // One run, cut into batches at the moments rank 0 completed each of them: the calls
  // stay back to back, as in a training loop, with no start and end between batches.
  if (batches > 1 && session.mark_every(every)) {
    const Status st = session.run_all(iterations);
    session.mark_every(0);
    if (!st) return st.error();
    const std::vector<double> marks = session.last_run_marks_us();
    const double start = session.last_run_start_us(), end = start + session.last_run_us();
    double at = start;
    for (std::size_t k = 0; k < marks.size() && k + 1 < calls.size(); ++k) {
      const double m = std::clamp(marks[k], at, end);
      batch_us.push_back(m - at);
      at = m;
    }
    batch_us.push_back(end - at);
    // Marks missing (an iteration's end not seen): the run's mean stands for every batch.
    if (batch_us.size() != calls.size()) return call_timing({session.last_run_us()}, {iterations});
    return call_timing(batch_us, calls);
  }
  for (std::int32_t c : calls) {
    if (auto st = session.run_all(c); !st) return st.error();
    batch_us.push_back(session.last_run_us());
  }
  return call_timing(batch_us, calls);
}

}  // namespace collscope
