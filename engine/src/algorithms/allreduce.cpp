// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void allreduce_flat(StepBuilder& b) { (void)b; }
void allreduce_tree(StepBuilder& b) { (void)b; }
void allreduce_ring(StepBuilder& b) { (void)b; }
void allreduce_recursive_doubling(StepBuilder& b) { (void)b; }
void allreduce_rabenseifner(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
