// `collscope analyze FILE`: reads a flight record and says what went wrong, like
// PyTorch's flight recorder analyzer: which rank never joined which op, which ops
// differ between ranks, which ops never completed.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "cmd_import.h"
#include "collscope/flight_record.h"
#include "collscope/job.h"

namespace collscope::app {

int cmd_analyze(const std::vector<std::string>& files, bool json) {
  // PyTorch's and NCCL's files (several, a folder, or one in their formats) go to the job analyzer.
  if (files.size() != 1 || is_job_file(files[0])) return cmd_analyze_job(files, json);
  const std::string& file = files[0];
  auto rec = load_flight_record(file);
  if (!rec) return report_error(rec.error());
  const auto findings = analyze_flight_record(*rec);
  std::size_t ops = 0;
  for (const auto& r : rec->ranks) ops += r.ops.size();
  if (json) {
    nlohmann::ordered_json j;
    j["file"] = file;
    j["ok"] = findings.empty();
    j["world"] = rec->world;
    j["ops"] = ops;
    j["reason"] = rec->reason;
    auto arr = nlohmann::ordered_json::array();
    for (const auto& f : findings) arr.push_back({{"id", f.id}, {"message", f.message}});
    j["findings"] = std::move(arr);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "collscope analyze: " << file << "\n";
    std::cout << "  " << rec->world << " ranks, " << ops << " ops recorded, backend " << rec->backend << " ("
              << rec->mode << " mode)\n";
    if (!rec->reason.empty()) std::cout << "  the run was aborted: " << rec->reason << "\n";
    for (const auto& r : rec->ranks)
      if (r.state != "finished" && r.state != "idle")
        std::cout << "  rank " << r.rank << ": " << r.state << " at step " << r.step
                  << (r.waiting_for >= 0 ? ", waiting for rank " + std::to_string(r.waiting_for) : std::string())
                  << "\n";
    if (findings.empty()) std::cout << "  no problem found: every recorded op completed on every rank\n";
    for (const auto& f : findings) std::cout << "  [" << f.id << "] " << f.message << "\n";
  }
  return findings.empty() ? 0 : 1;
}

}  // namespace collscope::app
