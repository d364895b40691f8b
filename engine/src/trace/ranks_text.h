// "rank 2", "ranks 0, 1 and 3", "no rank": the one wording of a set of ranks (in the
// order given) in flight record findings and in the backends' failure messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace collscope {

std::string ranks_text(const std::vector<std::int32_t>& ranks);

}  // namespace collscope
