// `collscope validate FILE...`: parse, lower and verify symbolically; run nothing.
#include <iostream>

#include "cli.h"
#include "collscope/verify.h"

namespace collscope::app {

int cmd_validate(const std::vector<std::string>& files) {
  int worst = 0;
  for (const auto& file : files) {
    auto s = load_scenario(file);
    if (!s) {
      worst = std::max(worst, report_error(s.error()));
      continue;
    }
    auto sched = lower_scenario(*s);
    if (!sched) {
      worst = std::max(worst, report_error(sched.error()));
      continue;
    }
    if (auto st = verify_symbolic(*sched); !st) {
      Error e = st.error();
      e.where.file = file;
      report_error(e);
      worst = std::max(worst, 1);
      continue;
    }
    std::cout << "ok  " << file << ": " << s->title << " (" << sched->calls.size() << " calls, " << sched->steps.size()
              << " steps)\n";
  }
  return worst;
}

}  // namespace collscope::app
