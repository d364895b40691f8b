// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void alltoall_pairwise(StepBuilder& b) { (void)b; }
void alltoall_bruck(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
