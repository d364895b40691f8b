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

// Every rank's records in program order: the ops of a custom algorithm's body right
// after the call they implement (depth 1).
struct Row {
  std::size_t record;
  int depth;
};
std::vector<std::vector<Row>> program_order(const Schedule& s) {
  std::vector<std::vector<std::size_t>> kids(s.ops.size());
  for (std::size_t i = 0; i < s.ops.size(); ++i)
    if (s.ops[i].parent >= 0 && static_cast<std::size_t>(s.ops[i].parent) < s.ops.size())
      kids[static_cast<std::size_t>(s.ops[i].parent)].push_back(i);
  std::vector<std::vector<Row>> out(static_cast<std::size_t>(s.ranks));
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const OpRecord& op = s.ops[i];
    if (op.parent >= 0 || op.rank < 0 || op.rank >= s.ranks) continue;
    auto& rows = out[static_cast<std::size_t>(op.rank)];
    rows.push_back({i, 0});
    for (std::size_t k : kids[i]) rows.push_back({k, 1});
  }
  return out;
}

double origin_of(const std::vector<OpTiming>& times) {
  double o = 0;
  bool any = false;
  for (const auto& t : times)
    if (t.timed) o = any ? std::min(o, t.t0_us) : t.t0_us, any = true;
  return o;
}

}  // namespace

void print_program(const Schedule& s, const RunRecord* record, bool all_ranks, std::size_t ops_shown) {
  if (s.ops.empty()) return;
  const auto times = record ? op_timings(s, *record) : std::vector<OpTiming>{};
  const double origin = origin_of(times);
  constexpr std::int32_t kRanksShown = 8;
  const auto per_rank = program_order(s);
  std::cout << "  program, per rank (every op completed):\n";
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    const auto& ops = per_rank[static_cast<std::size_t>(r)];
    if (!all_ranks && r >= kRanksShown) {
      std::cout << "    ... ranks " << kRanksShown << ".." << s.ranks - 1 << " not shown (use --ops all)\n";
      break;
    }
    std::int32_t last = -1;
    for (const Row& row : ops) last = std::max(last, s.ops[row.record].last_step);
    std::cout << "    rank " << r << ": " << ops.size() << " ops"
              << (last >= 0 ? ", done after step " + std::to_string(last) : "") << "\n";
    for (std::size_t n = 0; n < ops.size(); ++n) {
      if (n == ops_shown) {
        std::cout << "      ... " << ops.size() - ops_shown << " more (use --ops all)\n";
        break;
      }
      const std::size_t i = ops[n].record;
      const OpRecord& op = s.ops[i];
      std::string when;
      if (!times.empty() && times[i].timed) {
        char t[64];
        std::snprintf(t, sizeof t, "%.1f..%.1f us", times[i].t0_us - origin, times[i].t1_us - origin);
        when = t;
      }
      // (Texts can be long: the line is built as a string, not in a fixed buffer.)
      std::string name = std::string(static_cast<std::size_t>(2 * ops[n].depth), ' ') + label(op);
      std::string text = op.text;
      name.resize(std::max<std::size_t>(name.size(), 10), ' ');
      text.resize(std::max<std::size_t>(text.size(), 48), ' ');
      std::string steps = steps_text(op);
      steps.resize(std::max<std::size_t>(steps.size(), 12), ' ');
      std::cout << "      " << name << " " << text << " " << steps << " " << when << "\n";
    }
  }
}

nlohmann::ordered_json program_json(const Schedule& s, const RunRecord* record) {
  const auto times = record ? op_timings(s, *record) : std::vector<OpTiming>{};
  const double origin = origin_of(times);
  auto ranks = nlohmann::ordered_json::array();
  const auto per_rank = program_order(s);
  for (std::int32_t r = 0; r < s.ranks; ++r) {
    auto ops = nlohmann::ordered_json::array();
    std::int64_t call_at = -1;  // position of the last op with a body
    for (const Row& row : per_rank[static_cast<std::size_t>(r)]) {
      const std::size_t i = row.record;
      const OpRecord& op = s.ops[i];
      if (row.depth == 0) call_at = static_cast<std::int64_t>(ops.size());
      nlohmann::ordered_json j;
      j["op"] = op.op;
      j["text"] = op.text;
      j["pointer"] = op.pointer;
      if (op.iteration >= 0) j["iteration"] = op.iteration;
      if (row.depth > 0) j["in"] = call_at;  // an op of the body of the op at this position
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
