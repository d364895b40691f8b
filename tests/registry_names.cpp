#include "registry_names.h"

#include "collscope/algorithms.h"
#include "collscope/types.h"

namespace test_registry {

std::size_t algorithm_count() { return collscope::all_algorithms().size(); }

std::vector<std::string> algorithm_names(const std::string& collective) {
  for (collscope::Collective c : collscope::kAllCollectives)
    if (collscope::name_of(c) == collective) return collscope::algorithm_names(c);
  return {};
}

}  // namespace test_registry
