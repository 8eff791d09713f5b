// libtorch's side of the tiny_lm workload: the example's GPT (examples/tiny_lm/gpt.cpp) and its
// training step written as a libtorch user would, with the same parameter names and shapes, so that
// minigrad's initial values load into it by name.
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include "workloads.h"

namespace bench::torch_side {

namespace {

namespace F = torch::nn::functional;

/// One pre-LayerNorm block: causal multi-head self-attention and a GELU MLP, with residuals.
struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const TinyLMSetup& s)
      : ln1(register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.d_model})))),
        attn(register_module("attn", torch::nn::MultiheadAttention(s.d_model, s.heads))),
        ln2(register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.d_model})))),
        fc(register_module("fc", torch::nn::Linear(s.d_model, 4 * s.d_model))),
        proj(register_module("proj", torch::nn::Linear(4 * s.d_model, s.d_model))),
        drop(register_module("drop", torch::nn::Dropout(s.dropout))) {}

  /// x [B, T, d]; causal [T, T] additive (-inf above the diagonal).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& causal) {
    // libtorch's MultiheadAttention has no batch_first: [T, B, d] in and out.
    torch::Tensor h = ln1(x).transpose(0, 1);
    torch::Tensor a = std::get<0>(attn->forward(h, h, h, /*key_padding_mask=*/{},
                                                /*need_weights=*/false, causal))
                          .transpose(0, 1);
    torch::Tensor y = x + drop(a);
    return y + drop(proj(torch::gelu(fc(ln2(y)))));
  }

  torch::nn::LayerNorm ln1;
  torch::nn::MultiheadAttention attn;
  torch::nn::LayerNorm ln2;
  torch::nn::Linear fc, proj;
  torch::nn::Dropout drop;
};
TORCH_MODULE(Block);

struct GPTImpl : torch::nn::Module {
  explicit GPTImpl(const TinyLMSetup& s)
      : token_embedding(
            register_module("token_embedding", torch::nn::Embedding(s.vocab_size, s.d_model))),
        position_embedding(
            register_module("position_embedding", torch::nn::Embedding(s.block_size, s.d_model))),
        drop(register_module("drop", torch::nn::Dropout(s.dropout))) {
    for (std::int64_t i = 0; i < s.layers; ++i) blocks->push_back(Block(s));
    register_module("blocks", blocks);
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({s.d_model})));
    if (!s.tie_weights)
      head = register_module(
          "head", torch::nn::Linear(torch::nn::LinearOptions(s.d_model, s.vocab_size).bias(false)));
  }

  /// idx [B, T] int64 -> logits [B, T, vocab].
  torch::Tensor forward(const torch::Tensor& idx) {
    const std::int64_t T = idx.size(1);
    torch::Tensor positions = torch::arange(T, torch::kLong);
    torch::Tensor x = drop(token_embedding(idx) + position_embedding(positions));
    // libtorch's C++ MultiheadAttention adds attn_mask (a bool mask would add 1, not -inf).
    torch::Tensor causal = torch::full({T, T}, -INFINITY).triu(1);
    for (const auto& block : *blocks) x = block->as<BlockImpl>()->forward(x, causal);
    x = ln_f(x);
    return head ? head(x) : F::linear(x, token_embedding->weight);
  }

  torch::nn::Embedding token_embedding, position_embedding;
  torch::nn::Dropout drop;
  torch::nn::ModuleList blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(GPT);

/// Copies setup's initial values into the model by name; throws on any mismatch.
void load_initial_values(GPT& model, const TinyLMSetup& s) {
  torch::NoGradGuard no_grad;
  auto named = model->named_parameters();
  if (named.size() != s.parameters.size())
    throw std::runtime_error("tiny_lm: libtorch's model has " + std::to_string(named.size()) +
                             " parameter tensors, minigrad's " +
                             std::to_string(s.parameters.size()));
  std::int64_t count = 0;
  for (const TinyLMSetup::Parameter& p : s.parameters) {
    torch::Tensor* t = named.find(p.name);
    if (!t || t->sizes() != torch::IntArrayRef(p.shape))
      throw std::runtime_error("tiny_lm: no libtorch parameter " + p.name + " of minigrad's shape");
    t->copy_(torch::from_blob(const_cast<float*>(p.values.data()), t->sizes(), torch::kFloat));
    count += t->numel();
  }
  if (count != s.num_parameters)
    throw std::runtime_error("tiny_lm: " + std::to_string(count) + " parameters in libtorch, " +
                             std::to_string(s.num_parameters) + " in minigrad");
}

/// AdamW groups as nanoGPT (and the example): matrices decay, biases, LayerNorm weights and
/// embeddings do not. Throws if a parameter lands in another group than in minigrad's Trainer.
std::vector<torch::optim::OptimizerParamGroup> param_groups(GPT& model, const TinyLMSetup& s) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& item : model->named_parameters()) {
    bool is_matrix = item.value().dim() == 2 && item.key().find("embedding") == std::string::npos;
    (is_matrix ? decay : no_decay).push_back(item.value());
    for (const TinyLMSetup::Parameter& p : s.parameters)
      if (p.name == item.key() && p.weight_decay != (is_matrix ? s.weight_decay : 0.0))
        throw std::runtime_error("tiny_lm: " + p.name + " decays differently in minigrad");
  }
  auto options = [&](double weight_decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(s.learning_rate(0))
            .betas({s.betas[0], s.betas[1]})
            .eps(s.eps)
            .weight_decay(weight_decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(s.weight_decay));
  groups.emplace_back(no_decay, options(0.0));
  return groups;
}

/// The model, its optimizer and the data order: the example's Trainer, in libtorch.
struct TinyLM {
  explicit TinyLM(const TinyLMSetup& s)
      : setup(s), model(s), optimizer(param_groups(model, s)), rng(s.data_seed) {
    load_initial_values(model, s);
    model->train();
  }

  /// Random windows of the training stream, drawn as tiny_lm::random_batch draws them.
  std::pair<torch::Tensor, torch::Tensor> random_batch() {
    const std::vector<std::int64_t>& stream = *setup.train;
    const std::int64_t B = setup.batch, T = setup.block_size;
    std::uniform_int_distribution<std::size_t> start(
        0, stream.size() - static_cast<std::size_t>(T) - 1);
    std::vector<std::int64_t> x, y;
    x.reserve(static_cast<std::size_t>(B * T));
    y.reserve(static_cast<std::size_t>(B * T));
    for (std::int64_t b = 0; b < B; ++b) {
      std::size_t s = start(rng);
      x.insert(x.end(), stream.begin() + static_cast<std::ptrdiff_t>(s),
               stream.begin() + static_cast<std::ptrdiff_t>(s) + T);
      y.insert(y.end(), stream.begin() + static_cast<std::ptrdiff_t>(s) + 1,
               stream.begin() + static_cast<std::ptrdiff_t>(s) + T + 1);
    }
    return {torch::from_blob(x.data(), {B, T}, torch::kLong).clone(),
            torch::from_blob(y.data(), {B, T}, torch::kLong).clone()};
  }

  /// One training step; returns its loss. The schedule restarts one step before its end, as on
  /// minigrad's side.
  double step() {
    if (step_ >= setup.schedule_steps - 1) step_ = 0;
    double lr = setup.learning_rate(step_);
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    auto [x, y] = random_batch();
    torch::Tensor logits = model->forward(x);
    torch::Tensor loss = F::cross_entropy(logits.view({-1, setup.vocab_size}), y.view({-1}));
    optimizer.zero_grad();
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), setup.clip);
    optimizer.step();
    ++step_;
    return loss.item<double>();
  }

  TinyLMSetup setup;
  GPT model;
  torch::optim::AdamW optimizer;
  std::mt19937_64 rng;
  int step_ = 0;
};

}  // namespace

Run tiny_lm_step(const TinyLMSetup& setup) {
  auto lm = std::make_shared<TinyLM>(setup);
  return [lm](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) lm->step();
  };
}

std::vector<double> tiny_lm_losses(const TinyLMSetup& setup, int steps,
                                   std::int64_t* num_parameters) {
  TinyLM lm(setup);
  if (num_parameters) {
    *num_parameters = 0;
    for (const torch::Tensor& p : lm.model->parameters()) *num_parameters += p.numel();
  }
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) losses.push_back(lm.step());
  return losses;
}

}  // namespace bench::torch_side
