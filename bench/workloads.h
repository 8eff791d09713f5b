#pragma once
// The benchmark's workloads, one factory per workload and per framework. A factory builds the
// inputs once (seeded) and returns a function that runs the workload `iters` times; the harness in
// minigrad_bench.cpp times those calls. The libtorch side lives in its own translation unit so that
// minigrad's headers and libtorch's never meet, and is compiled only when libtorch is found.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace bench {

/// Runs a workload `iters` times.
using Run = std::function<void(std::int64_t iters)>;

/// Sizes of the attention training step: x [B, T, d_model], three Linear(d_model, d_k, bias=false)
/// for q, k, v; scores = q k^T / sqrt(d_k); softmax(-1); out = weights v; mse_loss to a target
/// [B, T, d_k]; backward; SGD step (lr 0.01); zero_grad.
struct AttentionSize {
  std::int64_t batch, seq, d_model, d_k;
};

/// The tiny_lm example's default model and training step (examples/tiny_lm, `Config{}` and
/// `TrainOptions{}` as its main.cpp uses them) as plain data, so that libtorch's side builds the
/// same model without minigrad's headers. Filled by mg_side::tiny_lm_setup from the example's own
/// objects.
struct TinyLMSetup {
  std::int64_t vocab_size = 0, block_size = 0, d_model = 0, heads = 0, layers = 0;
  double dropout = 0;
  bool tie_weights = true;
  std::int64_t batch = 0;  // windows per step
  std::array<double, 2> betas{};
  double eps = 0, clip = 0;
  double weight_decay = 0;                   // of the matrices; biases, norms, embeddings: 0
  int schedule_steps = 0;                    // TrainOptions::steps: the schedule's length
  std::function<double(int)> learning_rate;  // tiny_lm::learning_rate(options, step)
  std::uint64_t data_seed = 0;               // the order of the training windows
  std::shared_ptr<const std::vector<std::int64_t>> train;  // the training token stream
  /// minigrad's initial values (tiny_lm::GPT after manual_seed(0)) by PyTorch name, and the
  /// weight decay of the AdamW group the example's Trainer puts each one in.
  struct Parameter {
    std::string name;
    std::vector<std::int64_t> shape;
    std::vector<float> values;
    double weight_decay = 0;
  };
  std::vector<Parameter> parameters;
  std::int64_t num_parameters = 0;  // tiny_lm::GPT::num_parameters()
  std::int64_t tokens_per_step() const { return batch * block_size; }
};

namespace mg_side {
/// minigrad::set_num_threads: minigrad's kernels and OpenBLAS.
void set_num_threads(int n);
/// Whether the bench was built with examples/tiny_lm (its library target tiny_lm_lib).
bool tiny_lm_available();
/// The example's defaults; dropout < 0 keeps the example's, otherwise overrides it.
TinyLMSetup tiny_lm_setup(double dropout = -1);
/// The example's training step (tiny_lm::Trainer on tiny_lm::GPT, defaults, seed 0): random
/// windows, forward, cross_entropy, zero_grad, backward, clip_grad_norm_, AdamW step with the
/// scheduled learning rate. No validation passes (the example runs one every 100 steps).
Run tiny_lm_step();
/// The losses of the first `steps` steps of that Trainer (dropout as given).
std::vector<double> tiny_lm_losses(int steps, double dropout);
Run attention_step(AttentionSize size);
Run add_2x2(bool with_grad);
Run matmul_4x4(bool with_grad);
/// softmax over the last dim of a tensor of that shape, then its gradient for a fixed incoming
/// gradient (autograd::grad, so no .grad() accumulates).
Run softmax_fwd_bwd(std::vector<std::int64_t> shape);
/// bmm (batch, m, k) x (batch, k, n), then both input gradients for a fixed incoming gradient.
Run bmm_fwd_bwd(std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n);
/// dropout(p = 0.1, training) of a tensor of that shape, then its gradient.
Run dropout_fwd_bwd(std::vector<std::int64_t> shape);
/// matmul of two n x n float32 matrices (a new output each time).
Run matmul_square(std::int64_t n);
/// randn of n float32 values (a model's initialisation: the same values on both sides).
Run randn(std::int64_t n);
/// The same product with cblas_sgemm into a preallocated output: the BLAS floor.
Run cblas_sgemm_square(std::int64_t n);
/// A loop of empty statements, each inside an MG_PROFILE_OP scope (with_scope) or not: what the
/// scope every op opens costs while no Profile records (Note [Profiler]).
Run profiler_scope_off(bool with_scope);
/// add 2x2 without grad while a Profile records (profiled) or not.
Run add_2x2_profiled(bool profiled);
/// nn::functional::layer_norm over the last dim of a (64, 128, 256) tensor with weight and bias,
/// then the three input gradients for a fixed incoming gradient.
Run layer_norm_fwd_bwd();
/// cross_entropy of (2048, 1000) logits with class-index targets, then the logits' gradient.
Run cross_entropy_fwd_bwd();
/// A reduction of a (1024, 1024) tensor without grad: sum over dim 1 (across rows), sum over dim
/// 0 (the Linear bias gradient's leading-dims path), or mean of all elements.
Run reduce_1024(const char* which);
}  // namespace mg_side

namespace torch_side {
bool available();
/// libtorch's version, e.g. "1.13.0" (empty without libtorch).
const char* version();
void set_num_threads(int n);
Run attention_step(AttentionSize size);
Run add_2x2(bool with_grad);
Run matmul_4x4(bool with_grad);
Run softmax_fwd_bwd(std::vector<std::int64_t> shape);
Run bmm_fwd_bwd(std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n);
Run dropout_fwd_bwd(std::vector<std::int64_t> shape);
Run randn(std::int64_t n);
/// The same model and training step written with libtorch (torch::nn::Embedding, LayerNorm,
/// MultiheadAttention, Linear, Dropout, torch::optim::AdamW, clip_grad_norm_), starting from
/// setup.parameters copied by name. Throws unless its parameters match setup's (names, shapes,
/// count, weight-decay groups).
Run tiny_lm_step(const TinyLMSetup& setup);
/// Its losses over the first `steps` steps; *num_parameters receives its parameter count.
std::vector<double> tiny_lm_losses(const TinyLMSetup& setup, int steps,
                                   std::int64_t* num_parameters);
}  // namespace torch_side

}  // namespace bench
