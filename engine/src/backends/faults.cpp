// Names of the fault kinds (backend.h), shared by the command line, scenario files and
// every backend, and the one check of a fault against a schedule.
#include "collscope/backend.h"

namespace collscope {

const char* name_of(Fault::Kind k) {
  switch (k) {
    case Fault::Kind::delay:
      return "delay";
    case Fault::Kind::corrupt:
      return "corrupt";
    case Fault::Kind::crash:
      return "crash";
    case Fault::Kind::hang:
      return "hang";
  }
  return "delay";
}

std::optional<Fault::Kind> parse_fault_kind(std::string_view name) {
  for (const auto k : {Fault::Kind::delay, Fault::Kind::corrupt, Fault::Kind::crash, Fault::Kind::hang})
    if (name == name_of(k)) return k;
  return std::nullopt;
}

std::string fault_text(const Fault& f) {
  std::string t = std::to_string(f.rank) + ":" + std::to_string(f.step) + ":" + name_of(f.kind);
  if (f.kind == Fault::Kind::delay) t += ":" + std::to_string(f.ms);
  return t;
}

Status check_fault(const Schedule& s, const Fault& f, const FaultSource& from) {
  const std::string name = from.name.empty() ? "fault " + fault_text(f) : from.name;
  const auto steps = static_cast<std::int32_t>(s.steps.size());
  if (f.rank < 0 || f.rank >= s.ranks)
    return make_error(
        from.id,
        name + " names rank " + std::to_string(f.rank) + ", but the world has " + std::to_string(s.ranks) + " ranks",
        "use a rank in 0.." + std::to_string(s.ranks - 1), from.where);
  if (f.step < 0 || f.step >= steps)
    return make_error(
        from.id,
        name + " names step " + std::to_string(f.step) + ", but the schedule has " + std::to_string(steps) + " steps",
        steps ? "use a step in 0.." + std::to_string(steps - 1) + " (`collscope run --explain` lists them)"
              : "this schedule has no step to inject a fault into",
        from.where);
  return ok_status();
}

}  // namespace collscope
