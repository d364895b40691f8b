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

Status time_batches(Session& session, std::int32_t warmup, std::int32_t iterations, std::int32_t batches,
                    std::vector<double>& batch_us, std::vector<std::int32_t>& calls) {
  iterations = std::max<std::int32_t>(1, iterations);
  batches = std::clamp<std::int32_t>(batches, 1, iterations);
  warmup = std::max<std::int32_t>(0, warmup);
  // Batches of `every` calls, the last one taking what is left: 200 in 10 of 20, 23 in 3 of 7, 7, 9.
  const std::int32_t every = iterations / batches;
  std::vector<std::int32_t> mine(static_cast<std::size_t>(batches), every);
  mine.back() = iterations - every * (batches - 1);
  // One run, cut into batches at the moments rank 0 completed each of them: the calls
  // stay back to back, as in a training loop, with no start and end between batches.
  // The warm-up leads the same run, in whole batches, and its batches are left out: a
  // run of its own would end with the ranks asleep, and the first timed batch would pay
  // for waking them (and a run is timed from its last rank's start, which with more
  // ranks than cores comes after the others have done much of a long call).
  if ((batches > 1 || warmup > 0) && session.mark_every(every)) {
    const std::int32_t lead = (warmup + every - 1) / every;  // warm-up batches
    const Status st = session.run_all(lead * every + iterations);
    session.mark_every(0);
    if (!st) return st.error();
    const std::vector<double> marks = session.last_run_marks_us();
    const double run_start = session.last_run_start_us(), end = run_start + session.last_run_us();
    const auto first = static_cast<std::size_t>(lead);
    // Marks missing (an iteration's end not seen): the timed calls' mean stands for every batch.
    if (marks.size() < first + mine.size() - 1) {
      const double start = first > 0 && marks.size() >= first ? marks[first - 1] : run_start;
      batch_us.push_back(std::max(0.0, end - start));
      calls.push_back(first > 0 && marks.size() >= first ? iterations : lead * every + iterations);
      return ok_status();
    }
    double at = first > 0 ? std::clamp(marks[first - 1], run_start, end) : run_start;
    for (std::size_t k = 0; k + 1 < mine.size(); ++k) {
      const double m = std::clamp(marks[first + k], at, end);
      batch_us.push_back(m - at);
      at = m;
    }
    batch_us.push_back(end - at);
    calls.insert(calls.end(), mine.begin(), mine.end());
    return ok_status();
  }
  if (warmup > 0)
    if (auto st = session.run_all(warmup); !st) return st.error();
  for (std::int32_t c : mine) {
    if (auto st = session.run_all(c); !st) return st.error();
    batch_us.push_back(session.last_run_us());
    calls.push_back(c);
  }
  return ok_status();
}

Result<CallTiming> time_calls(Session& session, std::int32_t iterations, std::int32_t batches) {
  std::vector<double> batch_us;
  std::vector<std::int32_t> calls;
  if (auto st = time_batches(session, 0, iterations, batches, batch_us, calls); !st) return st.error();
  return call_timing(batch_us, calls);
}

std::int32_t min_turn_calls(std::uint64_t message_bytes) {
  return message_bytes >= kShortTurnBytes ? kMinShortTurnCalls : kMinTurnCalls;
}

std::vector<std::vector<Turn>> plan_turns(std::size_t measurements, std::int32_t iterations, std::int32_t warmup,
                                          std::int32_t batches, std::int32_t rounds, std::int32_t min_calls) {
  iterations = std::max<std::int32_t>(1, iterations);
  batches = std::clamp<std::int32_t>(batches, 1, iterations);
  rounds = std::clamp<std::int32_t>(std::min(rounds, iterations / std::max<std::int32_t>(1, min_calls)), 1, batches);
  // Shares as even as they go, the first rounds taking one more: no round has more
  // batches than calls, since there are no more batches than calls.
  auto share = [&](std::int32_t total, std::int32_t r) { return total / rounds + (r < total % rounds ? 1 : 0); };
  const std::int32_t warm = warmup > 0 ? (warmup + rounds - 1) / rounds : 0;
  // Rounds in pairs, the second running the first backwards (a drift of the machine's
  // speed falls on every measurement alike), each pair starting one measurement further
  // on (nobody goes first every time).
  std::vector<std::vector<Turn>> plan(static_cast<std::size_t>(rounds));
  for (std::int32_t r = 0; r < rounds; ++r) {
    auto& round = plan[static_cast<std::size_t>(r)];
    const auto from = static_cast<std::size_t>(r / 2);
    for (std::size_t j = 0; j < measurements; ++j)
      round.push_back({(from + j) % measurements, warm, share(iterations, r), share(batches, r)});
    if (r % 2 == 1) std::reverse(round.begin(), round.end());
  }
  return plan;
}

Result<std::vector<CallTiming>> time_in_turns(std::size_t measurements,
                                              const std::function<Result<Session*>(std::size_t)>& take,
                                              const std::function<void(std::size_t)>& done, std::int32_t iterations,
                                              std::int32_t warmup, std::int32_t batches, std::int32_t rounds,
                                              std::int32_t min_calls) {
  std::vector<std::vector<double>> batch_us(measurements);
  std::vector<std::vector<std::int32_t>> calls(measurements);
  const auto plan = plan_turns(measurements, iterations, warmup, batches, rounds, min_calls);
  for (const auto& round : plan)
    for (const Turn& t : round) {
      auto session = take(t.measurement);
      if (!session) return session.error();
      // In one round, a measurement's warm-up runs on its own first, as time_calls's callers run it.
      Status st = ok_status();
      if (plan.size() == 1 && t.warmup > 0) st = (*session)->run_all(t.warmup);
      if (st)
        st = time_batches(**session, plan.size() == 1 ? 0 : t.warmup, t.iterations, t.batches, batch_us[t.measurement],
                          calls[t.measurement]);
      done(t.measurement);
      if (!st) return st.error();
    }
  std::vector<CallTiming> out;
  for (std::size_t k = 0; k < measurements; ++k) out.push_back(call_timing(batch_us[k], calls[k]));
  return out;
}

}  // namespace collscope
