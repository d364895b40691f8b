#include "gui/view/what_if.h"

#include <algorithm>
#include <cmath>

#include "collscope/algorithms.h"
#include "collscope/collective.h"
#include "collscope/machine.h"
#include "collscope/scenario.h"
#include "collscope/schedule.h"

namespace collscope::view {

Result<WhatIf> build_what_if(const WhatIfQuery& q, const std::string& config_dir, WhatIfProgress* progress) {
  if (!(q.factor > 1.0) || q.min_bytes == 0 || q.max_bytes < q.min_bytes)
    return make_error("gui.what_if", "the sizes must grow: at least 1 byte, a factor above 1",
                      "choose a smaller first size or a larger last one");
  const BackendCapabilities host{{}, true, false, false};
  auto machine = machine_for(q.topology, q.nodes, host, q.dtype, config_dir);
  if (!machine) return machine.error();
  // This machine's cpu model prices lowered schedules only: a run's ranks at most.
  if (q.ranks < 1 || q.ranks > (machine->cpu ? kMaxRanks : kWhatIfMaxRanks))
    return make_error("gui.what_if",
                      std::to_string(q.ranks) + " ranks are beyond what the window prices on " +
                          (machine->cpu ? "this machine's cpu model" : "a topology"),
                      machine->cpu ? "give 1 to " + std::to_string(kMaxRanks) +
                                         " ranks, or choose a topology of devices (up to " +
                                         std::to_string(kWhatIfMaxRanks) + ")"
                                   : "give 1 to " + std::to_string(kWhatIfMaxRanks) + " ranks");
  // Beyond the ranks a schedule is lowered for in the window, on a topology, each
  // algorithm's shape.
  const bool by_shape = !machine->cpu && q.ranks > kWhatIfLoweredRanks;
  WhatIf w;
  w.model = machine->label();
  if (by_shape)
    w.method = "priced from the algorithms' shapes (beyond " + std::to_string(kWhatIfLoweredRanks) + " ranks)";
  // A device topology prices schedules lowered for devices: whole transfers.
  BackendCapabilities lowering = host;
  if (!machine->cpu) lowering.cache_slices = false;

  // Message bytes per count: nccl-tests' size of one element of `count`.
  const double per_count = static_cast<double>(message_bytes(q.coll, q.ranks, 1, q.dtype));
  for (double b = static_cast<double>(q.min_bytes); b <= static_cast<double>(q.max_bytes) * 1.0001; b *= q.factor) {
    const auto count = static_cast<std::uint64_t>(std::floor(b / std::max(1.0, per_count)));
    w.bytes.push_back(static_cast<std::uint64_t>(b));
    w.counts.push_back(count);
  }
  std::vector<std::vector<std::uint64_t>> steps;  // per series, each size's steps_digest
  const auto names = algorithm_names(q.coll);
  if (progress) progress->total = names.size() * w.bytes.size();
  for (const auto& name : names) {
    WhatIfSeries series{name, {}, {}};
    std::vector<std::uint64_t> digests;
    for (std::size_t i = 0; i < w.bytes.size(); ++i) {
      if (progress) {
        if (progress->cancel) return make_error("gui.what_if", "cancelled", "ask again");
        ++progress->done;
      }
      if (w.counts[i] == 0 && q.coll != Collective::barrier) {
        series.us.push_back(0);
        digests.push_back(0);
        continue;
      }
      if (by_shape) {
        CollArgs a;
        a.coll = q.coll;
        a.ranks = q.ranks;
        a.count = w.counts[i];
        a.dtype = q.dtype;
        a.op = q.op;
        const auto p = predict_shape(a, name, *machine);
        series.priced = series.priced && p.has_value();
        series.us.push_back(p ? p->us : 0);
        if (p) series.busiest_messages = std::max(series.busiest_messages, p->busiest_messages);
        digests.push_back(0);  // no steps to compare: shapes name no twins
        continue;
      }
      QuickSpec spec;
      spec.coll = q.coll;
      spec.algorithm = name;
      spec.ranks = q.ranks;
      spec.count = w.counts[i];
      spec.dtype = q.dtype;
      spec.op = q.op;
      spec.unbounded_bytes = !machine->cpu;  // priced on a topology, never run
      auto sc = scenario_from_spec(spec);
      if (!sc) return sc.error();
      // Lowered for the machine it is priced on: its nodes split the node-aware algorithms.
      LowerOptions options = lower_options_for(lowering);
      options.machine = &*machine;
      options.price_only = true;
      options.unbounded_bytes = !machine->cpu;
      auto s = lower_scenario(*sc, options);
      if (!s) return s.error();
      const Prediction p = predict(*s, *machine, q.fast);
      series.us.push_back(p.us);
      series.busiest_messages = std::max(series.busiest_messages, p.busiest_messages);
      digests.push_back(steps_digest(*s));
    }
    if (!series.priced) std::fill(series.us.begin(), series.us.end(), 0.0);
    // Two curves that lie on each other because the algorithms run the same steps
    // (on one node the node-aware rings are the ring): the legend says so.
    for (std::size_t j = 0; j < steps.size() && series.same_as.empty() && !by_shape; ++j)
      if (steps[j] == digests) series.same_as = w.series[j].algorithm;
    steps.push_back(std::move(digests));
    w.series.push_back(std::move(series));
  }
  // The fastest as auto picks: a curve priced too low only where every curve is.
  const bool some_right = std::any_of(w.series.begin(), w.series.end(), [](const WhatIfSeries& s) {
    return s.priced && !priced_too_low(s.busiest_messages);
  });
  auto eligible = [some_right](const WhatIfSeries& s) { return !some_right || !priced_too_low(s.busiest_messages); };
  for (std::size_t i = 0; i < w.bytes.size(); ++i) {
    const WhatIfSeries* best = nullptr;
    for (const auto& s : w.series)
      if (eligible(s) && s.us[i] > 0 && (!best || s.us[i] < best->us[i])) best = &s;
    // Within 2% the one that was fastest at the size before stays (auto's tie rule):
    // two curves that run together do not make a crossover at every size.
    if (best && i > 0)
      for (const auto& s : w.series)
        if (eligible(s) && s.algorithm == w.fastest[i - 1] && s.us[i] > 0 && s.us[i] <= 1.02 * best->us[i]) best = &s;
    w.fastest.push_back(best ? best->algorithm : "");
    if (i > 0 && best && !w.fastest[i - 1].empty() && w.fastest[i - 1] != best->algorithm)
      w.crossovers.push_back({i, w.bytes[i], w.fastest[i - 1], best->algorithm});
  }
  return w;
}

Placing place_on(const WhatIf& w, std::uint64_t bytes) {
  Placing p;
  if (w.bytes.empty() || bytes == 0) return p;
  const double x = std::log(static_cast<double>(bytes));
  for (std::size_t i = 0; i + 1 < w.bytes.size(); ++i) {
    const double a = std::log(static_cast<double>(w.bytes[i])), b = std::log(static_cast<double>(w.bytes[i + 1]));
    if (x < b || i + 2 == w.bytes.size()) {
      p.index = i;
      p.frac = std::clamp((x - a) / (b - a), 0.0, 1.0);
      return p;
    }
  }
  return p;
}

std::string size_label(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (std::fabs(v - std::round(v)) < 1e-9) std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace collscope::view
