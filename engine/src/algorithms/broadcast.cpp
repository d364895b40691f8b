// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void broadcast_flat(StepBuilder& b) { (void)b; }
void broadcast_binomial(StepBuilder& b) { (void)b; }
void broadcast_chain(StepBuilder& b) { (void)b; }
void broadcast_scatter_allgather(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
