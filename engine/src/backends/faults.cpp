// Names of the fault kinds (backend.h), shared by the command line, scenario files and
// every backend.
#include "collscope/backend.h"

namespace collscope {

const char* name_of(Fault::Kind k) {
  switch (k) {
    case Fault::Kind::delay: return "delay";
    case Fault::Kind::corrupt: return "corrupt";
    case Fault::Kind::crash: return "crash";
    case Fault::Kind::hang: return "hang";
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

}  // namespace collscope
