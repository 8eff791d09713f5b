// The libtorch side when libtorch is not installed: no workloads.
#include "workloads.h"

namespace bench::torch_side {

bool available() { return false; }
const char* version() { return ""; }
void set_num_threads(int) {}
Run attention_step(AttentionSize) { return {}; }
Run add_2x2(bool) { return {}; }
Run matmul_4x4(bool) { return {}; }
Run softmax_fwd_bwd(std::vector<std::int64_t>) { return {}; }
Run bmm_fwd_bwd(std::int64_t, std::int64_t, std::int64_t, std::int64_t) { return {}; }
Run dropout_fwd_bwd(std::vector<std::int64_t>) { return {}; }
Run randn(std::int64_t) { return {}; }
Run tiny_lm_step(const TinyLMSetup&) { return {}; }
std::vector<double> tiny_lm_losses(const TinyLMSetup&, int, std::int64_t*) { return {}; }

}  // namespace bench::torch_side
