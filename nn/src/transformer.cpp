// The Transformer modules, following torch/nn/modules/transformer.py (PyTorch 1.13) on its
// general (not "fast") path: the fast path computes the same function.
#include "minigrad/nn/transformer.h"

#include <cmath>
#include <utility>

#include "minigrad/nn/init.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"

namespace minigrad::nn {

// ---------------------------------------------------------------- activation

TransformerActivation::TransformerActivation(const char* name)
    : TransformerActivation(std::string(name)) {}

TransformerActivation::TransformerActivation(std::string name) : name_(std::move(name)) {
  if (name_ == "relu") {
    fn_ = [](const Tensor& x) { return relu(x); };
  } else {
    MG_CHECK(name_ == "gelu", "Transformer",
             "activation should be \"relu\" or \"gelu\" (or a function), not \"", name_, "\"");
    fn_ = [](const Tensor& x) { return gelu(x); };
  }
}

namespace {

/// The layers' shared children: a self-attention with the layer's dropout and batch_first.
MultiheadAttention attention(const TransformerEncoderLayerOptions& o) {
  MultiheadAttention mha(o.d_model(), o.nhead(), /*bias=*/true, o.batch_first(), o.dtype());
  mha->dropout = o.dropout();
  return mha;
}

}  // namespace

// ---------------------------------------------------------------- encoder layer

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(TransformerEncoderLayerOptions options_)
    : Cloneable("TransformerEncoderLayer"), options(std::move(options_)) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const auto& o = options;
  // PyTorch's construction order, which is also the order of the initial values' draws.
  self_attn = register_module("self_attn", attention(o));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward(), true, o.dtype()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model(), true, o.dtype()));
  norm1 = register_module("norm1", LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype()));
  norm2 = register_module("norm2", LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype()));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(std::int64_t d_model, std::int64_t nhead,
                                                         std::int64_t dim_feedforward,
                                                         double dropout_p)
    : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)
                                      .dim_feedforward(dim_feedforward)
                                      .dropout(dropout_p)) {}

Tensor TransformerEncoderLayerImpl::self_attention_block(const Tensor& x, const Tensor& mask,
                                                         const Tensor& kpm) const {
  return dropout1(self_attn(x, x, x, kpm, /*need_weights=*/false, mask).first);
}

Tensor TransformerEncoderLayerImpl::feed_forward_block(const Tensor& x) const {
  return dropout2(linear2(dropout(options.activation()(linear1(x)))));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) const {
  Tensor x = src;
  if (options.norm_first()) {
    x = x + self_attention_block(norm1(x), src_mask, src_key_padding_mask);
    return x + feed_forward_block(norm2(x));
  }
  x = norm1(x + self_attention_block(x, src_mask, src_key_padding_mask));
  return norm2(x + feed_forward_block(x));
}

// ---------------------------------------------------------------- decoder layer

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(TransformerDecoderLayerOptions options_)
    : Cloneable("TransformerDecoderLayer"), options(std::move(options_)) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const auto& o = options;
  self_attn = register_module("self_attn", attention(o));
  multihead_attn = register_module("multihead_attn", attention(o));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward(), true, o.dtype()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model(), true, o.dtype()));
  norm1 = register_module("norm1", LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype()));
  norm2 = register_module("norm2", LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype()));
  norm3 = register_module("norm3", LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype()));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(std::int64_t d_model, std::int64_t nhead,
                                                         std::int64_t dim_feedforward,
                                                         double dropout_p)
    : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)
                                      .dim_feedforward(dim_feedforward)
                                      .dropout(dropout_p)) {}

Tensor TransformerDecoderLayerImpl::feed_forward_block(const Tensor& x) const {
  return dropout3(linear2(dropout(options.activation()(linear1(x)))));
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory,
                                            const Tensor& tgt_mask, const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) const {
  auto self_block = [&](const Tensor& x) {
    return dropout1(self_attn(x, x, x, tgt_key_padding_mask, false, tgt_mask).first);
  };
  auto memory_block = [&](const Tensor& x) {
    return dropout2(
        multihead_attn(x, memory, memory, memory_key_padding_mask, false, memory_mask).first);
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + self_block(norm1(x));
    x = x + memory_block(norm2(x));
    return x + feed_forward_block(norm3(x));
  }
  x = norm1(x + self_block(x));
  x = norm2(x + memory_block(x));
  return norm3(x + feed_forward_block(x));
}

// ---------------------------------------------------------------- stacks

namespace {

/// num_layers deep copies of layer (PyTorch's _get_clones), registered as "layers".
template <typename Holder>
ModuleList clones(Module& parent, const Holder& layer, std::int64_t num_layers, const char* op) {
  MG_CHECK(!layer.is_empty(), op, "the layer to copy is an empty holder");
  MG_CHECK(num_layers > 0, op, "num_layers must be positive, got ", num_layers);
  ModuleList list;
  for (std::int64_t i = 0; i < num_layers; ++i) list->push_back(layer->clone());
  return parent.register_module("layers", list);
}

/// A copy's own layers and norm (Note [Cloning]): clones of those it shares with the original.
void clone_stack(Module& stack, ModuleList& layers, AnyModule& norm) {
  layers = stack.register_module(
      "layers", ModuleList(checked_cast<ModuleListImpl>(layers->clone(), "Module.clone")));
  if (norm.is_empty()) return;
  norm = norm.clone();
  stack.register_module("norm", norm.ptr());
}

}  // namespace

void TransformerEncoderImpl::rebuild_as_copy_of(const Module& original) {
  rebuild_with(original, [this] { clone_stack(*this, layers, norm); });
}

void TransformerDecoderImpl::rebuild_as_copy_of(const Module& original) {
  rebuild_with(original, [this] { clone_stack(*this, layers, norm); });
}

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options)
    : TransformerEncoderImpl(options.encoder_layer(), options.num_layers(), options.norm()) {}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderLayer& encoder_layer,
                                               std::int64_t num_layers_, const AnyModule& norm_)
    : CopyCloneable("TransformerEncoder"), num_layers(num_layers_), norm(norm_) {
  layers = clones(*this, encoder_layer, num_layers, "TransformerEncoder");
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask,
                                       const Tensor& src_key_padding_mask) const {
  Tensor x = src;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(static_cast<std::int64_t>(i))
            .forward(x, mask, src_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options)
    : TransformerDecoderImpl(options.decoder_layer(), options.num_layers(), options.norm()) {}

TransformerDecoderImpl::TransformerDecoderImpl(const TransformerDecoderLayer& decoder_layer,
                                               std::int64_t num_layers_, const AnyModule& norm_)
    : CopyCloneable("TransformerDecoder"), num_layers(num_layers_), norm(norm_) {
  layers = clones(*this, decoder_layer, num_layers, "TransformerDecoder");
  if (!norm.is_empty()) register_module("norm", norm.ptr());
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory,
                                       const Tensor& tgt_mask, const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) const {
  Tensor x = tgt;
  for (std::size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerDecoderLayerImpl>(static_cast<std::int64_t>(i))
            .forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                     memory_key_padding_mask);
  return norm.is_empty() ? x : norm.forward(x);
}

// ---------------------------------------------------------------- Transformer

TransformerImpl::TransformerImpl(TransformerOptions options_)
    : Cloneable("Transformer"), options(std::move(options_)) {
  reset();
}

void TransformerImpl::reset() {
  const auto& o = options;
  auto layer_options = TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                           .dim_feedforward(o.dim_feedforward())
                           .dropout(o.dropout())
                           .activation(o.activation())
                           .layer_norm_eps(o.layer_norm_eps())
                           .batch_first(o.batch_first())
                           .norm_first(o.norm_first())
                           .dtype(o.dtype());
  // PyTorch's order: encoder layer, encoder, its norm, decoder layer, decoder, its norm.
  if (o.custom_encoder().is_empty()) {
    TransformerEncoderLayer encoder_layer(layer_options);
    encoder =
        AnyModule(TransformerEncoder(encoder_layer, o.num_encoder_layers(),
                                     LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype())));
  } else {
    encoder = o.custom_encoder().clone();
  }
  register_module("encoder", encoder.ptr());
  if (o.custom_decoder().is_empty()) {
    TransformerDecoderLayer decoder_layer{TransformerDecoderLayerOptions(layer_options)};
    decoder =
        AnyModule(TransformerDecoder(decoder_layer, o.num_decoder_layers(),
                                     LayerNorm(o.d_model(), o.layer_norm_eps(), true, o.dtype())));
  } else {
    decoder = o.custom_decoder().clone();
  }
  register_module("decoder", decoder.ptr());
  for (const Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask,
                                const Tensor& tgt_mask, const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) const {
  const char* op = "Transformer";
  MG_CHECK(src.defined() && tgt.defined(), op, "got an undefined src or tgt");
  if (src.dim() == 3) {
    const std::int64_t batch_dim = options.batch_first() ? 0 : 1;
    MG_CHECK(tgt.dim() == 3 && src.size(batch_dim) == tgt.size(batch_dim), op, "src has shape ",
             src.shape(), " and tgt has shape ", tgt.shape(),
             ": the batch number of src and tgt must be equal (dim ", batch_dim, ")");
  }
  MG_CHECK(src.dim() >= 1 && tgt.dim() >= 1 && src.size(-1) == options.d_model() &&
               tgt.size(-1) == options.d_model(),
           op, "src has shape ", src.shape(), " and tgt has shape ", tgt.shape(),
           ": the feature number of src and tgt must be equal to d_model (", options.d_model(),
           ")");
  Tensor memory = encoder.forward(src, src_mask, src_key_padding_mask);
  return decoder.forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                         memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(std::int64_t sz, Dtype dtype) {
  MG_CHECK(sz >= 0, "generate_square_subsequent_mask", "sz must be non-negative, got ", sz);
  return triu(full({sz, sz}, -INFINITY, dtype), 1);
}

}  // namespace minigrad::nn
