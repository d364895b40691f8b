// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void allgather_ring(StepBuilder& b) { (void)b; }
void allgather_recursive_doubling(StepBuilder& b) { (void)b; }
void allgather_bruck(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
