// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void reduce_flat(StepBuilder& b) { (void)b; }
void reduce_binomial(StepBuilder& b) { (void)b; }
void reduce_ring(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
