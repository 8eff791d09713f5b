#pragma once
// The Transformer modules of torch.nn (PyTorch 1.13): TransformerEncoderLayer,
// TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer, with libtorch's
// options structs (setters that chain, getters of the same name) and holders:
//
//   mg::nn::TransformerEncoderLayer layer(
//       mg::nn::TransformerEncoderLayerOptions(16, 4).dim_feedforward(32).batch_first(true));
//   mg::nn::TransformerEncoder encoder(
//       mg::nn::TransformerEncoderOptions(layer, 2).norm(mg::nn::LayerNorm(16)));
//   mg::Tensor y = encoder(x, mask);  // x [N, S, 16] -> y [N, S, 16]
//
// Parameter names are PyTorch's ("layers.0.self_attn.in_proj_weight", "layers.0.linear1.weight",
// "layers.0.norm1.weight", "norm.weight", "encoder.layers.1.linear2.bias", ...), so a PyTorch
// state_dict loads with load_state_dict. Masks are MultiheadAttention's: an attn_mask (src_mask,
// tgt_mask, memory_mask) is [L, S] or [N * nhead, L, S], bool (true = may NOT attend) or float
// (added to the scores); a key padding mask is [N, S], bool (true = padding) or float.
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "minigrad/nn/attention.h"
#include "minigrad/nn/containers.h"
#include "minigrad/nn/layers.h"
#include "minigrad/nn/linear.h"

// An option with a chaining setter and a getter of the same name, as libtorch's TORCH_ARG.
#define MG_TRANSFORMER_ARG(T, name)         \
 public:                                    \
  auto& name(const T& new_##name) {         \
    name##_ = new_##name;                   \
    return *this;                           \
  }                                         \
  const T& name() const { return name##_; } \
                                            \
 private:                                   \
  T name##_

namespace minigrad::nn {

/// The feed-forward activation of a Transformer layer: "relu" (the default), "gelu", or any
/// function of one tensor (PyTorch's `activation=` argument; libtorch's torch::kReLU / kGELU are
/// "relu" / "gelu" here). Throws for another name.
class TransformerActivation {
 public:
  TransformerActivation(const char* name);  // NOLINT: implicit, "relu" / "gelu"
  TransformerActivation(std::string name);  // NOLINT: implicit
  /// Any function of one tensor: a lambda, a function pointer, a std::function.
  template <typename F>
  requires(!std::is_convertible_v<F, std::string> &&
           std::is_invocable_r_v<Tensor, F, const Tensor&>) TransformerActivation(F fn)  // NOLINT
      : name_("function"), fn_(std::move(fn)) {
    MG_CHECK(fn_ != nullptr, "Transformer", "the activation function is empty");
  }
  /// Applies the activation.
  Tensor operator()(const Tensor& x) const { return fn_(x); }
  /// "relu", "gelu", or "function".
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::function<Tensor(const Tensor&)> fn_;
};

/// TransformerEncoderLayer's options, PyTorch's arguments and defaults (plus the parameters'
/// dtype).
struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(std::int64_t d_model, std::int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  MG_TRANSFORMER_ARG(std::int64_t, d_model);
  MG_TRANSFORMER_ARG(std::int64_t, nhead);
  MG_TRANSFORMER_ARG(std::int64_t, dim_feedforward) = 2048;
  MG_TRANSFORMER_ARG(double, dropout) = 0.1;
  MG_TRANSFORMER_ARG(TransformerActivation, activation) = "relu";
  MG_TRANSFORMER_ARG(double, layer_norm_eps) = 1e-5;
  MG_TRANSFORMER_ARG(bool, batch_first) = false;
  MG_TRANSFORMER_ARG(bool, norm_first) = false;
  /// The parameters' dtype: the default dtype (get_default_dtype()) when the options are made,
  /// as PyTorch's factory_kwargs without a dtype.
  MG_TRANSFORMER_ARG(Dtype, dtype) = get_default_dtype();
};

/// TransformerDecoderLayer's options: the same as the encoder layer's.
struct TransformerDecoderLayerOptions : TransformerEncoderLayerOptions {
  using TransformerEncoderLayerOptions::TransformerEncoderLayerOptions;
  TransformerDecoderLayerOptions(const TransformerEncoderLayerOptions& o)  // NOLINT: implicit
      : TransformerEncoderLayerOptions(o) {}
};

/// Self-attention then a feed-forward block, each with a residual connection and a LayerNorm
/// (after the residual, or before the block with norm_first), as torch.nn.TransformerEncoderLayer.
/// Children in PyTorch's order: self_attn, linear1, dropout, linear2, norm1, norm2, dropout1,
/// dropout2. In eval mode no dropout is applied.
class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  explicit TransformerEncoderLayerImpl(TransformerEncoderLayerOptions options);
  /// Makes the children from options, in PyTorch's order (libtorch's reset(); clone() calls it,
  /// Note [Cloning]).
  void reset() override;
  /// PyTorch's positional form: TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout).
  TransformerEncoderLayerImpl(std::int64_t d_model, std::int64_t nhead,
                              std::int64_t dim_feedforward = 2048, double dropout = 0.1);

  /// src [S, N, E] ([N, S, E] with batch_first, or unbatched [S, E]) -> the same shape.
  Tensor forward(const Tensor& src, const Tensor& src_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor()) const;
  MG_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};

 private:
  Tensor self_attention_block(const Tensor& x, const Tensor& mask, const Tensor& kpm) const;
  Tensor feed_forward_block(const Tensor& x) const;
};
MG_MODULE(TransformerEncoderLayer);

/// Self-attention, attention over the encoder's output (memory), then a feed-forward block, each
/// with a residual connection and a LayerNorm, as torch.nn.TransformerDecoderLayer. Children in
/// PyTorch's order: self_attn, multihead_attn, linear1, dropout, linear2, norm1, norm2, norm3,
/// dropout1, dropout2, dropout3.
class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  explicit TransformerDecoderLayerImpl(TransformerDecoderLayerOptions options);
  /// Makes the children from options, in PyTorch's order (libtorch's reset(); clone() calls it,
  /// Note [Cloning]).
  void reset() override;
  /// PyTorch's positional form: TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout).
  TransformerDecoderLayerImpl(std::int64_t d_model, std::int64_t nhead,
                              std::int64_t dim_feedforward = 2048, double dropout = 0.1);

  /// tgt [T, N, E] and memory [S, N, E] ([N, T, E] / [N, S, E] with batch_first, or unbatched)
  /// -> tgt's shape. tgt_mask is [T, T] (or [N * nhead, T, T]), memory_mask [T, S].
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor()) const;
  MG_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                              {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())})

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  MultiheadAttention multihead_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  LayerNorm norm3{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
  Dropout dropout3{nullptr};

 private:
  Tensor feed_forward_block(const Tensor& x) const;
};
MG_MODULE(TransformerDecoderLayer);

/// TransformerEncoder's options: the layer to copy, how many copies, and an optional final norm.
struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, std::int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  /// Makes the layer from its options (libtorch's second constructor).
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer_options,
                            std::int64_t num_layers)
      : encoder_layer_(TransformerEncoderLayer(layer_options)), num_layers_(num_layers) {}
  MG_TRANSFORMER_ARG(TransformerEncoderLayer, encoder_layer);
  MG_TRANSFORMER_ARG(std::int64_t, num_layers);
  /// Applied to the last layer's output when set: any module whose forward takes one tensor
  /// (`.norm(nn::LayerNorm(16))`, `.norm(AnyModule(nn::RMSNorm(16)))`), as libtorch's.
  MG_TRANSFORMER_ARG(AnyModule, norm);
};

/// num_layers deep copies of a TransformerEncoderLayer (children "layers.0", "layers.1", ...)
/// run in turn, then the optional final "norm", as torch.nn.TransformerEncoder. The copies start
/// with the layer's parameter values (PyTorch's deepcopy); the layer itself is not a child.
class TransformerEncoderImpl : public CopyCloneable<TransformerEncoderImpl> {
 public:
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  /// PyTorch's form: TransformerEncoder(encoder_layer, num_layers, norm=None).
  TransformerEncoderImpl(const TransformerEncoderLayer& encoder_layer, std::int64_t num_layers,
                         const AnyModule& norm = {});

  /// src through every layer with the same masks, then norm.
  Tensor forward(const Tensor& src, const Tensor& mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor()) const;
  MG_FORWARD_HAS_DEFAULT_ARGS({1, AnyValue(Tensor())}, {2, AnyValue(Tensor())})

  std::int64_t num_layers;
  ModuleList layers;
  AnyModule norm;  // empty without a final norm (libtorch's member)

 protected:
  /// Gives a copy clones of the original's layers and norm (Note [Cloning]): they were given to
  /// the constructor, not made from options, so reset() cannot remake them.
  void rebuild_as_copy_of(const Module& original) override;
};
MG_MODULE(TransformerEncoder);

/// TransformerDecoder's options: the layer to copy, how many copies, and an optional final norm.
struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, std::int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  /// Makes the layer from its options (libtorch's second constructor).
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer_options,
                            std::int64_t num_layers)
      : decoder_layer_(TransformerDecoderLayer(layer_options)), num_layers_(num_layers) {}
  MG_TRANSFORMER_ARG(TransformerDecoderLayer, decoder_layer);
  MG_TRANSFORMER_ARG(std::int64_t, num_layers);
  /// Applied to the last layer's output when set: any module whose forward takes one tensor,
  /// as libtorch's.
  MG_TRANSFORMER_ARG(AnyModule, norm);
};

/// num_layers deep copies of a TransformerDecoderLayer, then the optional final norm, as
/// torch.nn.TransformerDecoder.
class TransformerDecoderImpl : public CopyCloneable<TransformerDecoderImpl> {
 public:
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  /// PyTorch's form: TransformerDecoder(decoder_layer, num_layers, norm=None).
  TransformerDecoderImpl(const TransformerDecoderLayer& decoder_layer, std::int64_t num_layers,
                         const AnyModule& norm = {});

  /// tgt through every layer (each attending over memory) with the same masks, then norm.
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = Tensor(),
                 const Tensor& memory_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor()) const;
  MG_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                              {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())})

  std::int64_t num_layers;
  ModuleList layers;
  AnyModule norm;  // empty without a final norm (libtorch's member)

 protected:
  /// Gives a copy clones of the original's layers and norm (Note [Cloning]): they were given to
  /// the constructor, not made from options, so reset() cannot remake them.
  void rebuild_as_copy_of(const Module& original) override;
};
MG_MODULE(TransformerDecoder);

/// Transformer's options, PyTorch's arguments and defaults (plus the parameters' dtype).
struct TransformerOptions {
  TransformerOptions() = default;
  TransformerOptions(std::int64_t d_model, std::int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(std::int64_t d_model, std::int64_t nhead, std::int64_t num_encoder_layers,
                     std::int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  MG_TRANSFORMER_ARG(std::int64_t, d_model) = 512;
  MG_TRANSFORMER_ARG(std::int64_t, nhead) = 8;
  MG_TRANSFORMER_ARG(std::int64_t, num_encoder_layers) = 6;
  MG_TRANSFORMER_ARG(std::int64_t, num_decoder_layers) = 6;
  MG_TRANSFORMER_ARG(std::int64_t, dim_feedforward) = 2048;
  MG_TRANSFORMER_ARG(double, dropout) = 0.1;
  MG_TRANSFORMER_ARG(TransformerActivation, activation) = "relu";
  MG_TRANSFORMER_ARG(double, layer_norm_eps) = 1e-5;
  MG_TRANSFORMER_ARG(bool, batch_first) = false;
  MG_TRANSFORMER_ARG(bool, norm_first) = false;
  /// The parameters' dtype: the default dtype (get_default_dtype()) when the options are made,
  /// as PyTorch's factory_kwargs without a dtype.
  MG_TRANSFORMER_ARG(Dtype, dtype) = get_default_dtype();
  /// Used as the encoder when set (a clone of it, as libtorch): its forward takes (src, mask,
  /// src_key_padding_mask) and returns the memory.
  MG_TRANSFORMER_ARG(AnyModule, custom_encoder);
  /// Used as the decoder when set (a clone of it, as libtorch): its forward takes (tgt, memory,
  /// tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask).
  MG_TRANSFORMER_ARG(AnyModule, custom_decoder);
};

/// An encoder (num_encoder_layers layers and a final LayerNorm of layer_norm_eps) and a decoder
/// (the same), or the options' custom_encoder / custom_decoder, as torch.nn.Transformer; every
/// parameter with more than one dim starts xavier_uniform_, as in PyTorch (the custom modules'
/// too). Children: encoder, decoder; as libtorch's, the members are AnyModules
/// (`model->encoder.forward(src)`, `model->encoder.get<nn::TransformerEncoder>()->layers`).
class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  explicit TransformerImpl(TransformerOptions options = {});
  /// Makes the encoder and decoder from options (clones of the custom ones) and initialises
  /// their parameters (libtorch's reset(); clone() calls it, Note [Cloning]).
  void reset() override;

  /// src [S, N, E] and tgt [T, N, E] ([N, S, E] / [N, T, E] with batch_first, or unbatched)
  /// -> [T, N, E]. src_mask [S, S], tgt_mask [T, T], memory_mask [T, S]; the key padding masks
  /// are [N, S], [N, T] and [N, S]. Throws unless src and tgt have d_model features and the same
  /// batch size.
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = Tensor(),
                 const Tensor& tgt_mask = Tensor(), const Tensor& memory_mask = Tensor(),
                 const Tensor& src_key_padding_mask = Tensor(),
                 const Tensor& tgt_key_padding_mask = Tensor(),
                 const Tensor& memory_key_padding_mask = Tensor()) const;
  MG_FORWARD_HAS_DEFAULT_ARGS({2, AnyValue(Tensor())}, {3, AnyValue(Tensor())},
                              {4, AnyValue(Tensor())}, {5, AnyValue(Tensor())},
                              {6, AnyValue(Tensor())}, {7, AnyValue(Tensor())})

  /// The causal mask [sz, sz]: -inf above the diagonal, 0 elsewhere (a float mask: position i may
  /// attend to positions <= i), of the default dtype unless given. Throws for a negative sz.
  static Tensor generate_square_subsequent_mask(std::int64_t sz, Dtype dtype = get_default_dtype());

  TransformerOptions options;
  AnyModule encoder;
  AnyModule decoder;
};
MG_MODULE(Transformer);

}  // namespace minigrad::nn

#undef MG_TRANSFORMER_ARG
