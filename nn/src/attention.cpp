// nn::MultiheadAttention, following torch.nn.functional.multi_head_attention_forward (1.13).
#include "minigrad/nn/attention.h"

#include <cmath>

#include "minigrad/nn/functional.h"
#include "minigrad/nn/init.h"
#include "minigrad/nn/layers.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"

namespace minigrad::nn {

namespace {

constexpr const char* kOp = "MultiheadAttention";

std::int64_t checked_embed_dim(std::int64_t embed, std::int64_t heads, Dtype dtype) {
  MG_CHECK(embed > 0 && heads > 0, kOp, "embed_dim (", embed, ") and num_heads (", heads,
           ") must be positive");
  MG_CHECK(embed % heads == 0, kOp, "embed_dim ", embed, " must be divisible by num_heads ", heads);
  MG_CHECK(is_floating_point(dtype), kOp, "dtype must be floating-point, got ", dtype_name(dtype));
  return embed;
}

}  // namespace

NonDynamicallyQuantizableLinearImpl::NonDynamicallyQuantizableLinearImpl(std::int64_t in,
                                                                         std::int64_t out,
                                                                         bool with_bias,
                                                                         Dtype dtype)
    : Module("NonDynamicallyQuantizableLinear"),
      in_features(in),
      out_features(out),
      linear_(in, out, with_bias, dtype) {
  weight = register_parameter("weight", linear_.weight);
  if (with_bias) bias = register_parameter("bias", linear_.bias);
}

MultiheadAttentionImpl::MultiheadAttentionImpl(std::int64_t embed, std::int64_t heads,
                                               bool with_bias, bool first, Dtype dtype)
    : Module("MultiheadAttention"),
      embed_dim(checked_embed_dim(embed, heads, dtype)),
      num_heads(heads),
      head_dim(embed / heads),
      batch_first(first),
      // PyTorch builds out_proj (drawing Linear's initial values) before _reset_parameters.
      out_proj(embed, embed, with_bias, dtype) {
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * embed, embed}, dtype));
  if (with_bias) in_proj_bias = register_parameter("in_proj_bias", empty({3 * embed}, dtype));
  register_module("out_proj", out_proj);
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
}

std::pair<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) const {
  // ---- checks
  MG_CHECK(query.defined() && key.defined() && value.defined(), kOp,
           "got an undefined query, key or value");
  MG_CHECK(query.dim() == 2 || query.dim() == 3, kOp,
           "query must be 2-D (unbatched) or 3-D (batched), got shape ", query.shape());
  const bool batched = query.dim() == 3;
  MG_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), kOp, "for a ", query.dim(),
           "-D query, key and value must be ", query.dim(), "-D too, got shapes ", key.shape(),
           " and ", value.shape());
  MG_CHECK(key.shape() == value.shape(), kOp, "key has shape ", key.shape(),
           " and value has shape ", value.shape(), ": they must be equal");
  MG_CHECK(query.size(-1) == embed_dim && key.size(-1) == embed_dim, kOp, "query has shape ",
           query.shape(), " and key has shape ", key.shape(),
           ": their last dim must be embed_dim (", embed_dim, ")");
  const Dtype dtype = in_proj_weight.dtype();
  MG_CHECK(query.dtype() == dtype && key.dtype() == dtype && value.dtype() == dtype, kOp,
           "query, key and value must have the parameters' dtype (", dtype_name(dtype), "), got ",
           dtype_name(query.dtype()), ", ", dtype_name(key.dtype()), " and ",
           dtype_name(value.dtype()));

  // ---- PyTorch's internal layout [L, N, E] / [S, N, E]
  // The projection packs q, k, v into one GEMM for self-attention, as PyTorch does. A batch-first
  // input is projected as it lies, [N, L, E], and the projection viewed as [L, N, 3E]: a Linear
  // acts row by row, so this is the projection of the transposed input, without the copy that
  // folding a transposed input into one GEMM needs (Note [Folded matmul]; PyTorch 1.13 copies).
  const bool kv_same = key.is_same(value);
  const bool self_attention = kv_same && query.is_same(key);
  const bool rows_first = batched && batch_first;  // [N, T, E]
  Tensor q = query, k = key, v = value;
  if (!batched) {
    q = q.unsqueeze(1);
    k = k.unsqueeze(1);
    v = v.unsqueeze(1);
  }
  auto seq_first = [rows_first](const Tensor& t) { return rows_first ? t.transpose(0, 1) : t; };
  const Shape q_shape = seq_first(q).shape(), k_shape = seq_first(k).shape();
  const std::int64_t L = q_shape[0], N = q_shape[1], S = k_shape[0], H = num_heads;
  MG_CHECK(k_shape[1] == N, kOp, "query has shape ", query.shape(), " and key has shape ",
           key.shape(), ": their batch sizes (", N, " and ", k_shape[1], ") must match");

  // ---- masks -> one additive float mask broadcastable to [N, H, L, S] (or none)
  Tensor mask;
  if (attn_mask.defined()) {
    MG_CHECK(attn_mask.dtype() == kBool || attn_mask.is_floating_point(), kOp,
             "attn_mask must be bool or floating-point, got ", dtype_name(attn_mask.dtype()));
    if (attn_mask.dim() == 2) {
      MG_CHECK(attn_mask.shape() == (Shape{L, S}), kOp, "the 2-D attn_mask has shape ",
               attn_mask.shape(), " but must be (L, S) = ", Shape{L, S});
      mask = attn_mask;
    } else {
      MG_CHECK(attn_mask.dim() == 3, kOp, "attn_mask must be 2-D or 3-D, got shape ",
               attn_mask.shape());
      MG_CHECK(attn_mask.shape() == (Shape{N * H, L, S}), kOp, "the 3-D attn_mask has shape ",
               attn_mask.shape(), " but must be (N * num_heads, L, S) = ", Shape{N * H, L, S});
      mask = attn_mask.reshape({N, H, L, S});  // row n * H + h belongs to batch n, head h
    }
  }
  if (key_padding_mask.defined()) {
    MG_CHECK(key_padding_mask.dtype() == kBool || key_padding_mask.is_floating_point(), kOp,
             "key_padding_mask must be bool or floating-point, got ",
             dtype_name(key_padding_mask.dtype()));
    Shape expected = batched ? Shape{N, S} : Shape{S};
    MG_CHECK(key_padding_mask.shape() == expected, kOp, "key_padding_mask has shape ",
             key_padding_mask.shape(), " but must be ", batched ? "(N, S) = " : "(S) = ", expected);
    Tensor kpm = key_padding_mask.reshape({N, 1, 1, S});
    if (!mask.defined()) {
      mask = kpm;
    } else if (mask.dtype() == kBool) {
      mask = logical_or(mask, kpm);  // NOTE: a float key_padding_mask counts where nonzero here
    } else {
      MG_CHECK(kpm.dtype() == kBool, kOp,
               "a float key_padding_mask cannot be combined with a float attn_mask");
      mask = where(kpm, -INFINITY, mask);
    }
  }
  if (mask.defined())
    mask = mask.dtype() == kBool ? masked_fill(zeros(mask.shape(), dtype), mask, -INFINITY)
                                 : mask.to(dtype);

  // ---- in-projection
  const Tensor& w = in_proj_weight;
  const Tensor& b = in_proj_bias;
  auto bias_part = [&b](std::int64_t start, std::int64_t length) {
    return b.defined() ? b.narrow(0, start, length) : Tensor();
  };
  const std::int64_t E = embed_dim;
  Tensor qp, kp, vp;  // [L, N, E], [S, N, E], [S, N, E]
  if (self_attention) {
    auto qkv = functional::linear(q, w, b).chunk(3, -1);
    qp = qkv[0], kp = qkv[1], vp = qkv[2];
  } else if (kv_same) {
    qp = functional::linear(q, w.narrow(0, 0, E), bias_part(0, E));
    auto kv = functional::linear(k, w.narrow(0, E, 2 * E), bias_part(E, 2 * E)).chunk(2, -1);
    kp = kv[0], vp = kv[1];
  } else {
    qp = functional::linear(q, w.narrow(0, 0, E), bias_part(0, E));
    kp = functional::linear(k, w.narrow(0, E, E), bias_part(E, E));
    vp = functional::linear(v, w.narrow(0, 2 * E, E), bias_part(2 * E, E));
  }
  // Viewed as [T, N, E] after the chunks: backward, split's cat then writes the [N, T, 3E]
  // gradient in the projection's own layout (a transposed cat would need a copy).
  qp = seq_first(qp), kp = seq_first(kp), vp = seq_first(vp);

  // ---- scaled dot-product attention per head
  // [T, N, E] -> [T, N, H, head_dim] -> [N, H, T, head_dim], views when the layout allows.
  auto split_heads = [&](const Tensor& t) {
    return t.reshape({t.size(0), N, H, head_dim}).permute({1, 2, 0, 3});
  };
  // NOTE: q is scaled before the product, as PyTorch's q / sqrt(head_dim) (same rounding).
  Tensor qh = split_heads(qp) / std::sqrt(static_cast<double>(head_dim));
  Tensor scores = matmul(qh, split_heads(kp).transpose(-2, -1));  // [N, H, L, S]
  if (mask.defined()) scores = scores + mask;
  Tensor weights = softmax(scores, -1);
  if (dropout > 0.0) weights = functional::dropout(weights, dropout, is_training());
  Tensor heads = matmul(weights, split_heads(vp));  // [N, H, L, head_dim]
  // The heads side by side, [L, N, E], or [N, L, E] straight away for a batch-first output (the
  // same rows in another order: no transposed output for the next layer to copy).
  Tensor out = rows_first ? out_proj(heads.permute({0, 2, 1, 3}).reshape({N, L, E}))
                          : out_proj(heads.permute({2, 0, 1, 3}).reshape({L, N, E}));

  if (!weights_hooks_.empty()) {  // the per-head weights, as need_weights would return them
    const Tensor per_head = batched ? weights : weights.squeeze(0);
    for (auto& hook : weights_hooks_.snapshot()) hook(*this, per_head);
  }
  if (need_weights && average_attn_weights) weights = weights.sum(1) / static_cast<double>(H);
  if (!need_weights) weights = Tensor();
  if (!batched) {
    out = out.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  }
  return {out, weights};
}

RemovableHandle MultiheadAttentionImpl::register_attention_weights_hook(
    std::function<void(const MultiheadAttentionImpl&, const Tensor&)> fn) {
  MG_CHECK(fn != nullptr, "register_attention_weights_hook", "got an empty function");
  return weights_hooks_.add(std::move(fn));
}

AttentionRecorder::AttentionRecorder(const Module& model)
    : records_(std::make_shared<std::vector<AttentionRecord>>()) {
  for (const auto& [name, m] : model.named_modules()) {
    auto* mha = m->as<MultiheadAttention>();
    if (mha == nullptr) continue;
    names_.push_back(name);
    std::weak_ptr<std::vector<AttentionRecord>> records = records_;
    handles_.push_back(mha->register_attention_weights_hook(
        [records, name = name](const MultiheadAttentionImpl&, const Tensor& w) {
          if (auto r = records.lock()) r->push_back({name, w});
        }));
  }
}

void AttentionRecorder::remove() {
  for (RemovableHandle& h : handles_) h.remove();
  handles_.clear();
}

std::vector<Tensor> AttentionRecorder::weights() const {
  std::vector<Tensor> out;
  for (const AttentionRecord& r : *records_) out.push_back(r.weights);
  return out;
}

Tensor AttentionRecorder::weights(const std::string& name) const {
  for (auto it = records_->rbegin(); it != records_->rend(); ++it)
    if (it->name == name) return it->weights;
  std::string watched;
  for (const std::string& n : names_) watched += (watched.empty() ? "\"" : ", \"") + n + "\"";
  MG_ERROR("AttentionRecorder", "no call of a MultiheadAttention named \"", name,
           "\" was recorded (it watches ",
           names_.empty() ? "none: the model has no MultiheadAttention" : watched, "; ",
           records_->size(), " call(s) recorded)");
}

std::vector<AttentionRecord> capture_attention(const Module& model,
                                               const std::function<void()>& fn) {
  AttentionRecorder recorder(model);
  fn();
  return recorder.records();
}

std::shared_ptr<Module> NonDynamicallyQuantizableLinearImpl::clone() const {
  return clone_with([&] {
    return std::make_shared<NonDynamicallyQuantizableLinearImpl>(in_features, out_features,
                                                                 bias.defined());
  });
}

std::shared_ptr<Module> MultiheadAttentionImpl::clone() const {
  return clone_with([&] {
    auto copy = std::make_shared<MultiheadAttentionImpl>(embed_dim, num_heads,
                                                         in_proj_bias.defined(), batch_first);
    copy->dropout = dropout;
    return copy;
  });
}

}  // namespace minigrad::nn
