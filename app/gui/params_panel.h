// Parameters of a one-call lesson: collective, algorithm (only the ones registered
// for that collective), ranks, count, dtype, op, root, backend (only available ones).
// A change re-plans the lesson without a restart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collscope/scenario.h"

namespace collscope::app {

class ParamsPanel {
 public:
  ParamsPanel();
  // Starts from the first call of a loaded lesson, so that editing continues from it.
  void adopt(const Schedule& s, const std::string& backend);
  // Returns a scenario to run when a parameter changed (and is valid); errors are
  // shown in the panel.
  std::optional<Scenario> draw();
  const std::string& backend() const { return backend_; }
  void set_backend(const std::string& b) { backend_ = b; }

 private:
  QuickSpec q_;
  std::string backend_ = "cpu";
  std::vector<std::string> backends_;  // available ones
  std::vector<std::string> processes_;  // of those, the ones that run a process per rank
  std::string error_;
};

}  // namespace collscope::app
