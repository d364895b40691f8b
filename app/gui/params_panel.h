// Parameters of a one-call lesson: collective, algorithm (only the ones registered
// for that collective), ranks, count, dtype, op, root, backend (only available ones).
// A change re-plans the lesson without a restart.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collscope/scenario.h"
#include "gui/view/caption.h"

namespace collscope::app {

class ParamsPanel {
 public:
  ParamsPanel();
  // Starts from a loaded lesson of one collective, so that editing continues from it;
  // any other lesson is named (title, calls and ops, ranks) above the parameters.
  void adopt(const Scenario& sc, const Schedule& s, const std::string& backend);
  // Returns a scenario to run when a parameter changed (and is valid); errors are
  // shown in the panel.
  std::optional<Scenario> draw();
  const std::string& backend() const { return backend_; }
  void set_backend(const std::string& b) { backend_ = b; }

 private:
  QuickSpec q_;
  std::string backend_ = "cpu";
  std::vector<std::string> backends_;   // available ones
  std::vector<std::string> processes_;  // of those, the ones that run a process per rank
  std::string error_;
  view::LessonSummary summary_;  // of the loaded lesson
};

}  // namespace collscope::app
