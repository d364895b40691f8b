// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void reduce_scatter_ring(StepBuilder& b) { (void)b; }
void reduce_scatter_recursive_halving(StepBuilder& b) { (void)b; }
void reduce_scatter_pairwise(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
