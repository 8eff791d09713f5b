#pragma once
// nn::MultiheadAttention, as torch.nn.MultiheadAttention (PyTorch 1.13) with kdim = vdim =
// embed_dim, no bias_k/bias_v and no add_zero_attn. Dropout on the attention weights is the
// public member `dropout` (0 by default; the Transformer layers set it).
//
//   mg::nn::MultiheadAttention mha(8, 2, /*bias=*/true, /*batch_first=*/true);
//   auto [out, weights] = mha(x, x, x);  // x [N, L, 8] -> out [N, L, 8], weights [N, L, L]
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/nn/linear.h"
#include "minigrad/nn/module.h"

namespace minigrad::nn {

/// PyTorch's NonDynamicallyQuantizableLinear: a Linear (same parameters, initial values and
/// forward) that prints under its own name. MultiheadAttention's out_proj is one.
class NonDynamicallyQuantizableLinearImpl : public Module {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  NonDynamicallyQuantizableLinearImpl(std::int64_t in_features, std::int64_t out_features,
                                      bool bias = true, Dtype dtype = get_default_dtype());

  Tensor forward(const Tensor& x) const { return linear_.forward(x); }
  Tensor operator()(const Tensor& x) const {
    return call_with_hooks([this](const Tensor& a) { return forward(a); }, x);
  }
  /// Draws new initial values exactly as LinearImpl::reset_parameters.
  void reset_parameters() { linear_.reset_parameters(); }
  std::string extra_repr() const override { return linear_.extra_repr(); }

  std::int64_t in_features;
  std::int64_t out_features;
  Tensor weight;  // [out_features, in_features]
  Tensor bias;    // [out_features]; undefined when bias = false

 private:
  // The Linear does the work; its weight and bias are registered as this module's own parameters
  // (the same tensors), so the names are "weight" and "bias" and only the printed type differs.
  LinearImpl linear_;
};
MG_MODULE(NonDynamicallyQuantizableLinear);

class MultiheadAttentionImpl : public Module {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// Parameters, registered in PyTorch's order: in_proj_weight [3E, E] (q, k, v rows stacked),
  /// in_proj_bias [3E] (if bias), then out_proj (a Linear(E, E, bias)). Initial values are
  /// PyTorch's, draw for draw: out_proj's Linear initialisation, then
  /// xavier_uniform_(in_proj_weight); both biases are zero.
  /// Throws if embed_dim or num_heads is not positive or embed_dim % num_heads != 0.
  MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, bool bias = true,
                         bool batch_first = false, Dtype dtype = get_default_dtype());

  /// Attention of query over key/value: returns (output, weights).
  /// query [L, N, E], key and value [S, N, E] ([N, L, E] / [N, S, E] with batch_first), or
  /// unbatched [L, E] / [S, E]; output has query's shape.
  /// key_padding_mask [N, S] ([S] unbatched): bool, true = ignore that key; or float, added.
  /// attn_mask [L, S] or [N * num_heads, L, S] ([num_heads, L, S] unbatched): bool, true = may
  /// NOT attend (the opposite of functional::scaled_dot_product_attention); or float, added.
  /// weights (undefined unless need_weights): the softmax, averaged over heads [N, L, S] or per
  /// head [N, num_heads, L, S] (without the N dim when unbatched).
  std::pair<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& key_padding_mask = Tensor(),
                                    bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                    bool average_attn_weights = true) const;
  std::pair<Tensor, Tensor> operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                       const Tensor& key_padding_mask = Tensor(),
                                       bool need_weights = true, const Tensor& attn_mask = Tensor(),
                                       bool average_attn_weights = true) const {
    return call_with_hooks(  // Note [Forward hooks]
        [this](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& kpm, bool need,
               const Tensor& mask,
               bool average) { return forward(q, k, v, kpm, need, mask, average); },
        query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights);
  }
  /// PyTorch's _reset_parameters: xavier_uniform_(in_proj_weight), zero in_proj_bias and
  /// out_proj.bias. out_proj.weight keeps its values, as in PyTorch.
  void reset_parameters();
  /// Registers fn to receive the attention weights per head, [N, num_heads, L, S]
  /// ([num_heads, L, S] unbatched), of every call from now on, forward() included, whatever
  /// need_weights and average_attn_weights say: the call's output and returned weights stay what
  /// they are (the weights are computed either way). The handle removes it. nn::AttentionRecorder
  /// is built on it.
  RemovableHandle register_attention_weights_hook(
      std::function<void(const MultiheadAttentionImpl&, const Tensor&)> fn);
  /// How many attention-weights hooks are registered (0 once every recorder is gone).
  std::size_t num_attention_weights_hooks() const noexcept { return weights_hooks_.size(); }

  std::int64_t embed_dim;
  std::int64_t num_heads;
  std::int64_t head_dim;
  bool batch_first;
  /// Dropout probability on the attention weights in training mode (PyTorch's dropout argument);
  /// the returned weights are the dropped ones, as PyTorch's.
  double dropout = 0.0;
  Tensor in_proj_weight;  // [3 * embed_dim, embed_dim]
  Tensor in_proj_bias;    // [3 * embed_dim]; undefined when bias = false
  NonDynamicallyQuantizableLinear out_proj;

 private:
  HookList<std::function<void(const MultiheadAttentionImpl&, const Tensor&)>> weights_hooks_;
};
MG_MODULE(MultiheadAttention);

/// One call of a MultiheadAttention recorded by nn::AttentionRecorder.
struct AttentionRecord {
  /// The module's name under the recorded model ("blocks.0.attn", "layers.1.self_attn"; "" for
  /// the model itself).
  std::string name;
  /// The attention weights per head, [batch, heads, T, S] ([heads, T, S] unbatched): what the
  /// call would have returned with need_weights = true, average_attn_weights = false. Not
  /// detached: under autograd it keeps the call's graph alive as long as it is kept.
  Tensor weights;
};

/// Records the attention weights of every head of every nn::MultiheadAttention in a model while
/// alive, without changing the model's forward, outputs or gradients: the one call that answers
/// "what do the heads look at" for nn::Transformer, TransformerEncoder(Layer), TransformerDecoder
/// (Layer), a MultiheadAttention itself, or a model of yours that holds any of them.
///   nn::AttentionRecorder rec(model);
///   model(x);                                // or model->forward(x): any call records
///   rec.weights("layers.0.self_attn");       // [batch, heads, T, T]
/// Calls are recorded in the order they run (a decoder's self-attention, then its cross-attention);
/// a module called twice records twice. Destroying the recorder (or remove()) unregisters
/// everything it registered, so the model is left as it was; the records stay in the recorder.
class AttentionRecorder {
 public:
  explicit AttentionRecorder(const Module& model);
  template <IsModuleHolder H>
  explicit AttentionRecorder(const H& model) : AttentionRecorder(*model) {}
  ~AttentionRecorder() { remove(); }
  AttentionRecorder(const AttentionRecorder&) = delete;
  AttentionRecorder& operator=(const AttentionRecorder&) = delete;

  /// Every recorded call, in call order.
  const std::vector<AttentionRecord>& records() const { return *records_; }
  /// The weights of every recorded call, in call order.
  std::vector<Tensor> weights() const;
  /// The weights of the module named name, last call; throws if it recorded none (naming the
  /// modules that it did record).
  Tensor weights(const std::string& name) const;
  /// The names of the MultiheadAttention modules it watches, in the model's order.
  const std::vector<std::string>& modules() const { return names_; }
  /// Forgets the records (recording goes on).
  void clear() { records_->clear(); }
  /// Stops recording and unregisters its hooks; the records stay.
  void remove();

 private:
  std::vector<std::string> names_;
  std::vector<RemovableHandle> handles_;
  std::shared_ptr<std::vector<AttentionRecord>> records_;
};

/// Runs fn (which calls the model) and returns every head's attention weights of every
/// MultiheadAttention call it made, in call order; the model is left as it was:
///   auto maps = nn::capture_attention(model, [&] { model(x); });  // maps[i].name, .weights
std::vector<AttentionRecord> capture_attention(const Module& model,
                                               const std::function<void()>& fn);
template <IsModuleHolder H>
std::vector<AttentionRecord> capture_attention(const H& model, const std::function<void()>& fn) {
  return capture_attention(*model, fn);
}

}  // namespace minigrad::nn
