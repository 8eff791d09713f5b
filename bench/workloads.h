#pragma once
// The benchmark's workloads, one factory per workload and per framework. A factory builds the
// inputs once (seeded) and returns a function that runs the workload `iters` times; the harness in
// minigrad_bench.cpp times those calls. The libtorch side lives in its own translation unit so that
// minigrad's headers and libtorch's never meet, and is compiled only when libtorch is found.
#include <cstdint>
#include <functional>

namespace bench {

/// Runs a workload `iters` times.
using Run = std::function<void(std::int64_t iters)>;

/// Sizes of the attention training step: x [B, T, d_model], three Linear(d_model, d_k, bias=false)
/// for q, k, v; scores = q k^T / sqrt(d_k); softmax(-1); out = weights v; mse_loss to a target
/// [B, T, d_k]; backward; SGD step (lr 0.01); zero_grad.
struct AttentionSize {
  std::int64_t batch, seq, d_model, d_k;
};

namespace mg_side {
Run attention_step(AttentionSize size);
Run add_2x2(bool with_grad);
Run matmul_4x4(bool with_grad);
/// softmax over the last dim of a (64, 128, 128) tensor, then its gradient for a fixed incoming
/// gradient (autograd::grad, so no .grad() accumulates).
Run softmax_fwd_bwd();
/// bmm (32, 128, 64) x (32, 64, 128), then both input gradients for a fixed incoming gradient.
Run bmm_fwd_bwd();
/// matmul of two n x n float32 matrices (a new output each time).
Run matmul_square(std::int64_t n);
/// The same product with cblas_sgemm into a preallocated output: the BLAS floor.
Run cblas_sgemm_square(std::int64_t n);
}  // namespace mg_side

namespace torch_side {
bool available();
/// libtorch's version, e.g. "1.13.0" (empty without libtorch).
const char* version();
void set_num_threads(int n);
Run attention_step(AttentionSize size);
Run add_2x2(bool with_grad);
Run matmul_4x4(bool with_grad);
Run softmax_fwd_bwd();
Run bmm_fwd_bwd();
}  // namespace torch_side

}  // namespace bench
