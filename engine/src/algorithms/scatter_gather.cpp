// PLACEHOLDER: being written.
#include "families.h"

namespace collscope::algo {

void scatter_flat(StepBuilder& b) { (void)b; }
void scatter_binomial(StepBuilder& b) { (void)b; }
void gather_flat(StepBuilder& b) { (void)b; }
void gather_binomial(StepBuilder& b) { (void)b; }

}  // namespace collscope::algo
