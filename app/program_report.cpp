#include "program_report.h"

#include <cstdio>
#include <iostream>

#include "cli.h"
#include "collscope/program.h"

namespace collscope::app {

namespace {

std::string steps_text(const OpRecord& op) {
  if (op.first_step < 0 || op.last_step < 0) return "-";
  if (op.first_step == op.last_step) return "step " + std::to_string(op.first_step);
  return "steps " + std::to_string(op.first_step) + "-" + std::to_string(op.last_step);
}

std::string label(const OpRecord& op) {
  std::string t = "op ";
  bool first = true;
  std::size_t i = 0;
  while (i < op.pointer.size()) {
    const std::size_t j = op.pointer.find('/', i + 1);
    const std::string part = op.pointer.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
    if (!part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      t += (first ? "" : ".") + part;
      first = false;
    }
    if (j == std::string::npos) break;
    i = j;
  }
  if (op.iteration >= 0) t += " #" + std::to_string(op.iteration);
  return t;
}

double origin_of(const std::vector<OpTiming>& times) {
  double o = 0;
  bool any = false;
  for (const auto& t : times)
    if (t.timed) o = any ? std::min(o, t.t0_us) : t.t0_us, any = true;
  return o;
}

}  // namespace

void print_program(const Schedule& s, const RunRecord* record, bool all) {
  if (s.ops.empty()) return;
  const auto times = record ? op_timings(s, *record) : std::vector<OpTiming>{};
  const double origin = origin_of(times);
  constexpr std::int32_t kRanksShown = 8;
  constexpr std::size_t kOpsShown = 16;
  std::vector<std::vector<std::size_t>> per_rank(static_cast<std::size_t>(s.ranks));
  for (std::size_t i = 0; i < s.ops.size(); ++i) per_rank[static_cast<std::size_t>(s.ops[i].rank)].push_back(i);
  std::cout << "  program, per rank (every op completed):\n";
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    const auto& ops = per_rank[static_cast<std::size_t>(r)];
    if (!all && r >= kRanksShown) {
      std::cout << "    ... ranks " << kRanksShown << ".." << s.ranks - 1 << " not shown (use --explain)\n";
      break;
    }
    std::int32_t last = -1;
    for (std::size_t i : ops) last = std::max(last, s.ops[i].last_step);
    std::cout << "    rank " << r << ": " << ops.size() << " ops" << (last >= 0 ? ", done after step " + std::to_string(last) : "")
              << "\n";
    for (std::size_t n = 0; n < ops.size(); ++n) {
      if (!all && n == kOpsShown) {
        std::cout << "      ... " << ops.size() - kOpsShown << " more\n";
        break;
      }
      const OpRecord& op = s.ops[ops[n]];
      char line[512];
      std::string when;
      if (!times.empty() && times[ops[n]].timed) {
        char t[64];
        std::snprintf(t, sizeof t, "%.1f..%.1f us", times[ops[n]].t0_us - origin, times[ops[n]].t1_us - origin);
        when = t;
      }
      std::snprintf(line, sizeof line, "      %-10s %-48s %-12s %s\n", label(op).c_str(), op.text.c_str(),
                    steps_text(op).c_str(), when.c_str());
      std::cout << line;
    }
  }
}

nlohmann::ordered_json program_json(const Schedule& s, const RunRecord* record) {
  const auto times = record ? op_timings(s, *record) : std::vector<OpTiming>{};
  const double origin = origin_of(times);
  auto ranks = nlohmann::ordered_json::array();
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    auto ops = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < s.ops.size(); ++i) {
      const OpRecord& op = s.ops[i];
      if (op.rank != r) continue;
      nlohmann::ordered_json j;
      j["op"] = op.op;
      j["text"] = op.text;
      j["pointer"] = op.pointer;
      if (op.iteration >= 0) j["iteration"] = op.iteration;
      j["first_step"] = op.first_step;
      j["last_step"] = op.last_step;
      if (!times.empty() && times[i].timed) {
        j["start_us"] = times[i].t0_us - origin;
        j["time_us"] = times[i].t1_us - times[i].t0_us;
      }
      ops.push_back(std::move(j));
    }
    ranks.push_back({{"rank", r}, {"ops", std::move(ops)}});
  }
  return ranks;
}

}  // namespace collscope::app
