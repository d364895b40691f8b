// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void barrier_dissemination(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
