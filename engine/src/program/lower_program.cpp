// A program's lowering: per-rank expansion (expand.cpp), then the matcher (match.cpp),
// then the checks every schedule passes.
#include "collscope/verify.h"
#include "program/program.h"

namespace collscope::program {

Result<Schedule> lower_program(const Scenario& s, const LowerOptions& options) {
  Schedule sched;
  sched.slice_bytes = options.slice_bytes;
  sched.ranks_per_node = ranks_per_node_for(options, s.ranks);
  sched.ranks = s.ranks;
  sched.dtype = s.dtype;
  for (const auto& b : s.buffers) sched.buffers.push_back(BufferDecl{b.name, b.count, b.scratch});
  auto x = expand(s, s.program, "/program", sched.ops);
  if (!x) return x.error();
  Target t{s, sched, -1, options.machine};
  if (auto st = match(*x, t); !st) return st.error();
  // An op that completed after the last step (a final wait) ends with it.
  const auto last = static_cast<std::int32_t>(sched.steps.size()) - 1;
  for (auto& op : sched.ops) {
    op.first_step = std::min(op.first_step, last);
    op.last_step = std::min(op.last_step, last);
  }
  // Steps the program wrote itself may break the conflict rule: that is its race.
  if (auto st = check_bounds(sched); !st) return st.error();
  if (auto st = check_conflicts(sched); !st) return st.error();
  if (auto st = resolve_expectations(s, sched); !st) return st.error();
  return sched;
}

}  // namespace collscope::program
