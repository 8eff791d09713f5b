// minigrad's side of the tiny_lm workload when the examples are not built (no tiny_lm_lib).
#include "workloads.h"

namespace bench::mg_side {

bool tiny_lm_available() { return false; }
TinyLMSetup tiny_lm_setup(double) { return {}; }
Run tiny_lm_step() { return {}; }
std::vector<double> tiny_lm_losses(int, double) { return {}; }

}  // namespace bench::mg_side
