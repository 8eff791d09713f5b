#pragma once
// nn::MultiheadAttention, as torch.nn.MultiheadAttention (PyTorch 1.13): kdim / vdim (separate
// q/k/v projection weights), add_bias_kv, add_zero_attn, batch_first; and
// F::multi_head_attention_forward, libtorch 1.13's functional form, which the module's forward
// calls. Dropout on the attention weights is the public member `dropout` (0 by default; the
// Transformer layers set it).
//
//   mg::nn::MultiheadAttention mha(8, 2, /*bias=*/true, /*batch_first=*/true);
//   auto [out, weights] = mha(x, x, x);  // x [N, L, 8] -> out [N, L, 8], weights [N, L, L]
//   mg::nn::MultiheadAttention cross(
//       mg::nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3).add_bias_kv(true));
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "minigrad/nn/linear.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/options.h"

namespace minigrad::nn {

/// MultiheadAttention's options, libtorch 1.13's (PyTorch's arguments), plus PyTorch's
/// batch_first and the parameters' dtype:
/// `MultiheadAttentionOptions(embed_dim, num_heads).dropout(0.1).bias(false).add_bias_kv(true)
///  .add_zero_attn(true).kdim(5).vdim(3).batch_first(true).dtype(kFloat64)`.
/// kdim and vdim default to embed_dim (PyTorch's None).
struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(std::int64_t embed_dim, std::int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  /// Total dimension of the model.
  MG_ARG(std::int64_t, embed_dim);
  /// Parallel attention heads (embed_dim must be divisible by it).
  MG_ARG(std::int64_t, num_heads);
  /// Dropout probability on the attention weights in training mode.
  MG_ARG(double, dropout) = 0.0;
  /// in_proj_bias and out_proj.bias.
  MG_ARG(bool, bias) = true;
  /// The parameters bias_k and bias_v (1, 1, embed_dim), appended to the keys and values.
  MG_ARG(bool, add_bias_kv) = false;
  /// Appends a zero key and a zero value (after the projections and bias_k/bias_v).
  MG_ARG(bool, add_zero_attn) = false;
  /// Features of the key (embed_dim unless set).
  MG_ARG(std::int64_t, kdim);
  /// Features of the value (embed_dim unless set).
  MG_ARG(std::int64_t, vdim);
  /// Inputs and output as [N, L, E] instead of [L, N, E] (PyTorch's batch_first).
  MG_ARG(bool, batch_first) = false;
  /// The parameters' dtype: the default dtype when the options are made.
  MG_ARG(Dtype, dtype) = get_default_dtype();
};

namespace functional {

/// F::multi_head_attention_forward's options, libtorch 1.13's: the ten required arguments in
/// its order, the others chained (`.training(false).key_padding_mask(kpm).need_weights(false)
/// .attn_mask(m).use_separate_proj_weight(true).q_proj_weight(wq).k_proj_weight(wk)
/// .v_proj_weight(wv).static_k(k).static_v(v).average_attn_weights(false)`). Undefined tensors
/// stand for PyTorch's None.
struct MultiheadAttentionForwardFuncOptions {
  MultiheadAttentionForwardFuncOptions(std::int64_t embed_dim_to_check, std::int64_t num_heads,
                                       Tensor in_proj_weight, Tensor in_proj_bias, Tensor bias_k,
                                       Tensor bias_v, bool add_zero_attn, double dropout_p,
                                       Tensor out_proj_weight, Tensor out_proj_bias);
  MG_ARG(std::int64_t, embed_dim_to_check);
  MG_ARG(std::int64_t, num_heads);
  MG_ARG(Tensor, in_proj_weight);
  MG_ARG(Tensor, in_proj_bias);
  MG_ARG(Tensor, bias_k);
  MG_ARG(Tensor, bias_v);
  MG_ARG(bool, add_zero_attn);
  MG_ARG(double, dropout_p);
  MG_ARG(Tensor, out_proj_weight);
  MG_ARG(Tensor, out_proj_bias);
  MG_ARG(bool, training) = true;
  MG_ARG(Tensor, key_padding_mask) = {};
  MG_ARG(bool, need_weights) = true;
  MG_ARG(Tensor, attn_mask) = {};
  MG_ARG(bool, use_separate_proj_weight) = false;
  MG_ARG(Tensor, q_proj_weight) = {};
  MG_ARG(Tensor, k_proj_weight) = {};
  MG_ARG(Tensor, v_proj_weight) = {};
  MG_ARG(Tensor, static_k) = {};
  MG_ARG(Tensor, static_v) = {};
  MG_ARG(bool, average_attn_weights) = true;
};

/// Multi-head attention of query over key/value with the given weights, as libtorch 1.13's
/// F::multi_head_attention_forward and PyTorch's F.multi_head_attention_forward (which
/// nn::MultiheadAttention's forward calls): query [L, N, E], key [S, N, kdim], value
/// [S, N, vdim] (kdim = vdim = E unless use_separate_proj_weight), or unbatched [L, E] / [S, E].
/// Returns (output [L, N, E], weights [N, L, S'] averaged over heads or [N, H, L, S'] per head,
/// undefined unless need_weights), S' counting bias_k's and add_zero_attn's extra key; masks as
/// MultiheadAttentionImpl::forward's. Errors name the op "multi_head_attention_forward".
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);

namespace detail {
/// libtorch's positional form (torch::nn::functional::detail::multi_head_attention_forward).
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value, std::int64_t embed_dim_to_check,
    std::int64_t num_heads, const Tensor& in_proj_weight, const Tensor& in_proj_bias,
    const Tensor& bias_k, const Tensor& bias_v, bool add_zero_attn, double dropout_p,
    const Tensor& out_proj_weight, const Tensor& out_proj_bias, bool training = true,
    const Tensor& key_padding_mask = {}, bool need_weights = true, const Tensor& attn_mask = {},
    bool use_separate_proj_weight = false, const Tensor& q_proj_weight = {},
    const Tensor& k_proj_weight = {}, const Tensor& v_proj_weight = {}, const Tensor& static_k = {},
    const Tensor& static_v = {}, bool average_attn_weights = true);
}  // namespace detail

}  // namespace functional

/// PyTorch's NonDynamicallyQuantizableLinear: a Linear (same parameters, initial values and
/// forward) that prints under its own name. MultiheadAttention's out_proj is one.
class NonDynamicallyQuantizableLinearImpl : public Cloneable<NonDynamicallyQuantizableLinearImpl> {
 public:
  NonDynamicallyQuantizableLinearImpl(std::int64_t in_features, std::int64_t out_features,
                                      bool bias = true, Dtype dtype = get_default_dtype());
  /// Makes the Linear's tensors anew and registers them (libtorch's reset(); clone() calls it,
  /// Note [Cloning]). The constructor registers the Linear's first ones, drawn once.
  void reset() override;

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

class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  /// Parameters, registered in PyTorch's order: in_proj_weight [3E, E] (q, k, v rows stacked)
  /// when kdim = vdim = E, else q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight
  /// [E, vdim]; in_proj_bias [3E] (if bias); bias_k, bias_v [1, 1, E] (if add_bias_kv); then
  /// out_proj (a Linear(E, E, bias)). Initial values are PyTorch's, draw for draw: out_proj's
  /// Linear initialisation, then _reset_parameters (xavier_uniform_ on the projection weights,
  /// zero biases, xavier_normal_ on bias_k and bias_v).
  /// Throws if embed_dim, num_heads, kdim or vdim is not positive, embed_dim % num_heads != 0 or
  /// the dtype is not floating-point.
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  MultiheadAttentionImpl(std::int64_t embed_dim, std::int64_t num_heads, bool bias = true,
                         bool batch_first = false, Dtype dtype = get_default_dtype());

  /// Attention of query over key/value, through F::multi_head_attention_forward: returns
  /// (output, weights). query [L, N, E], key [S, N, kdim] and value [S, N, vdim] ([N, L, E] /
  /// [N, S, kdim] with batch_first), or unbatched [L, E] / [S, kdim]; output has query's shape.
  /// With add_bias_kv / add_zero_attn the masks get a zero column for each key added (not
  /// masked) and the weights an extra column each, as PyTorch's.
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
  /// PyTorch's _reset_parameters: xavier_uniform_(in_proj_weight) (or of q/k/v_proj_weight),
  /// zero in_proj_bias and out_proj.bias, xavier_normal_(bias_k), xavier_normal_(bias_v).
  /// out_proj.weight keeps its values, as in PyTorch.
  void reset_parameters();
  /// Registers the parameters anew (empty), makes out_proj (its Linear initialisation is drawn
  /// first, as in PyTorch), then reset_parameters() (libtorch's reset(); clone() calls it,
  /// Note [Cloning]).
  void reset() override;
  /// The same, libtorch's name.
  void _reset_parameters() { reset_parameters(); }
  /// Registers fn to receive the attention weights per head, [N, num_heads, L, S]
  /// ([num_heads, L, S] unbatched), of every call from now on, forward() included, whatever
  /// need_weights and average_attn_weights say: the call's output and returned weights stay what
  /// they are (the weights are computed either way). The handle removes it. nn::AttentionRecorder
  /// is built on it.
  RemovableHandle register_attention_weights_hook(
      std::function<void(const MultiheadAttentionImpl&, const Tensor&)> fn);
  /// How many attention-weights hooks are registered (0 once every recorder is gone).
  std::size_t num_attention_weights_hooks() const noexcept { return weights_hooks_.size(); }

  /// The options it was built with (libtorch's `options`); the members below are what forward
  /// uses.
  MultiheadAttentionOptions options;
  std::int64_t embed_dim;
  std::int64_t num_heads;
  std::int64_t head_dim;
  std::int64_t kdim;
  std::int64_t vdim;
  /// kdim == vdim == embed_dim: one in_proj_weight (PyTorch's _qkv_same_embed_dim).
  bool _qkv_same_embed_dim;
  bool batch_first;
  bool add_zero_attn;
  /// Dropout probability on the attention weights in training mode (PyTorch's dropout argument);
  /// the returned weights are the dropped ones, as PyTorch's.
  double dropout = 0.0;
  Tensor in_proj_weight;  // [3 * embed_dim, embed_dim]; undefined unless _qkv_same_embed_dim
  Tensor q_proj_weight;   // [embed_dim, embed_dim]; undefined when _qkv_same_embed_dim
  Tensor k_proj_weight;   // [embed_dim, kdim]; undefined when _qkv_same_embed_dim
  Tensor v_proj_weight;   // [embed_dim, vdim]; undefined when _qkv_same_embed_dim
  Tensor in_proj_bias;    // [3 * embed_dim]; undefined when bias = false
  Tensor bias_k;          // [1, 1, embed_dim]; undefined unless add_bias_kv
  Tensor bias_v;          // [1, 1, embed_dim]; undefined unless add_bias_kv
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
