#pragma once
// A decoder-only transformer (GPT-style) in minigrad, and its training loop.
//
//   tokens -> token embedding + position embedding -> dropout
//          -> N x [ x + attn(ln1(x)) ; x + mlp(ln2(x)) ]     (pre-LayerNorm blocks, causal)
//          -> final LayerNorm -> linear head (tied to the token embedding by default) -> logits
//
// Each line has its PyTorch twin: nn::Embedding = nn.Embedding, nn::MultiheadAttention(batch_first)
// = nn.MultiheadAttention(batch_first=True) with a bool causal mask, nn::GELU = nn.GELU, etc.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <minigrad/data.h>
#include <minigrad/minigrad.h>

namespace tiny_lm {

namespace mg = minigrad;
namespace nn = minigrad::nn;

struct Config {
  std::int64_t vocab_size = 0;
  std::int64_t block_size = 24;  // the longest context
  std::int64_t d_model = 64;
  std::int64_t heads = 4;
  std::int64_t layers = 2;
  double dropout = 0.1;
  bool tie_weights = true;  // the head reuses the token embedding's weight
};

/// One pre-LayerNorm block: causal multi-head self-attention and a GELU MLP, with residuals.
struct Block : nn::Module {
  nn::LayerNorm ln1, ln2;
  nn::MultiheadAttention attn;
  nn::Linear fc, proj;
  nn::Dropout drop;
  explicit Block(const Config& c);
  /// x [B, T, d]; causal_mask [T, T] (true = may not attend). The attention asks for no
  /// weights, as a training forward does; nn::AttentionRecorder gets them from outside.
  mg::Tensor forward(const mg::Tensor& x, const mg::Tensor& causal_mask) const;
};

struct GPT : nn::Module {
  Config config;
  nn::Embedding token_embedding, position_embedding;
  nn::Dropout drop;
  nn::ModuleList blocks;  // Blocks, named blocks.0, blocks.1, ... as in PyTorch
  nn::LayerNorm ln_f;
  nn::Linear head{nullptr};  // only without weight tying
  explicit GPT(const Config& c);
  /// idx [B, T] int64 -> logits [B, T, vocab]. attention, when given, receives each layer's
  /// per-head weights [B, heads, T, T] (recorded by nn::AttentionRecorder; the same as
  /// nn::capture_attention(model, [&] { model.forward(idx); }) gives, in layer order).
  mg::Tensor forward(const mg::Tensor& idx, std::vector<mg::Tensor>* attention = nullptr) const;
  std::int64_t num_parameters() const;
};

/// Batches of random windows of a token stream: x [B, T] and the next tokens y [B, T].
struct Batch {
  mg::Tensor x, y;
};

/// The windows of a token stream as a dataset (nanoGPT's get_batch, its `torch.stack` half):
/// example s is x = stream[s, s + block), y = stream[s + 1, s + block + 1).
struct Windows {
  const std::vector<std::int64_t>* stream;
  std::int64_t block;
  /// The windows starting at starts, stacked: x, y [starts.size(), block].
  Batch get_batch(const std::vector<std::size_t>& starts) const;
  /// The number of windows: stream.size() - block.
  std::optional<std::size_t> size() const {
    return stream->size() - static_cast<std::size_t>(block);
  }
};

/// nanoGPT's get_batch sampler (its `torch.randint` half): every batch is batch_size window
/// starts drawn uniformly, with replacement, from rng; an epoch never ends.
class RandomWindowSampler : public mg::data::samplers::Sampler {
 public:
  RandomWindowSampler(std::mt19937_64& rng, std::size_t windows) : rng_(rng), windows_(windows) {}
  void reset(std::optional<std::size_t> new_size = std::nullopt) override {
    if (new_size) windows_ = *new_size;
  }
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;

 private:
  std::mt19937_64& rng_;
  std::size_t windows_;
};

/// One batch of random windows: Windows{&stream, block}'s batch at RandomWindowSampler's starts.
Batch random_batch(const std::vector<std::int64_t>& stream, std::int64_t batch, std::int64_t block,
                   std::mt19937_64& rng);

/// Mean cross-entropy over fixed windows of `stream` (eval mode, no grad).
double evaluate(GPT& model, const std::vector<std::int64_t>& stream, std::int64_t windows);

struct TrainOptions {
  int steps = 1000;
  std::int64_t batch = 32;
  double lr = 3e-3;
  double min_lr = 3e-4;
  int warmup = 50;
  double weight_decay = 0.1;
  double clip = 1.0;
  int eval_every = 100;
  std::int64_t eval_windows = 64;
  std::uint64_t data_seed = 1;  // the order of the training windows
};

/// Linear warm-up to lr over `warmup` steps, then cosine decay to min_lr at `steps`.
double learning_rate(const TrainOptions& o, int step);

struct Progress {
  int step = 0;
  double loss = 0, lr = 0, tokens_per_second = 0, seconds = 0;
  double val_loss = -1;  // set on evaluation steps
};

/// The training state that a checkpoint must hold to resume exactly.
struct Trainer {
  GPT& model;
  mg::optim::AdamW optimizer;
  TrainOptions options;
  std::mt19937_64 rng;
  int step = 0;  // updates done
  Trainer(GPT& m, const TrainOptions& o);
  /// Runs until options.steps (or `until`, if smaller: the schedule still spans options.steps);
  /// calls on_step after every update.
  void run(const std::vector<std::int64_t>& train, const std::vector<std::int64_t>& validation,
           const std::function<void(const Progress&)>& on_step, int until = -1);
};

/// Saves everything a run needs to continue exactly: the model (`path`, safetensors with PyTorch's
/// key names; the step, the config, the data order's RNG and the default generator's state in its
/// metadata) and the optimizer (`path` + ".optim"). Both files are written atomically.
void save_checkpoint(const Trainer& trainer, const std::string& path);
/// Restores a checkpoint into a trainer built with the same config; throws minigrad::Error (naming
/// the file) when the file is corrupt or made for another model.
void load_checkpoint(Trainer& trainer, const std::string& path);

/// Continues `prompt` by `n` tokens, sampling with temperature and top-k (0: all) from rng.
std::vector<std::int64_t> generate(GPT& model, std::vector<std::int64_t> prompt, int n,
                                   double temperature, int top_k, std::mt19937_64& rng);

}  // namespace tiny_lm
