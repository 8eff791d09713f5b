// nn::MultiheadAttention, following torch.nn.functional.multi_head_attention_forward (1.13).
#include "minigrad/nn/attention.h"

#include <algorithm>
#include <cmath>

#include "minigrad/nn/functional.h"
#include "minigrad/nn/init.h"
#include "minigrad/nn/layers.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/shape.h"

namespace minigrad::nn {

namespace {

constexpr const char* kOp = "MultiheadAttention";
constexpr const char* kFuncOp = "multi_head_attention_forward";

const MultiheadAttentionOptions& checked(const MultiheadAttentionOptions& o) {
  MG_CHECK(o.embed_dim() > 0 && o.num_heads() > 0, kOp, "embed_dim (", o.embed_dim(),
           ") and num_heads (", o.num_heads(), ") must be positive");
  MG_CHECK(o.embed_dim() % o.num_heads() == 0, kOp, "embed_dim ", o.embed_dim(),
           " must be divisible by num_heads ", o.num_heads());
  MG_CHECK(o.kdim() > 0 && o.vdim() > 0, kOp, "kdim (", o.kdim(), ") and vdim (", o.vdim(),
           ") must be positive");
  MG_CHECK(o.dropout() >= 0.0 && o.dropout() <= 1.0, kOp,
           "dropout must be a probability in [0, 1], got ", o.dropout());
  MG_CHECK(is_floating_point(o.dtype()), kOp, "dtype must be floating-point, got ",
           dtype_name(o.dtype()));
  return o;
}

/// A zero column appended to a mask's last dim (PyTorch's pad(mask, (0, 1))): the key that
/// bias_k or add_zero_attn adds is neither masked nor shifted.
Tensor pad_column(const Tensor& mask) {
  if (!mask.defined()) return mask;
  Shape column = mask.shape();
  column.back() = 1;
  return cat({mask, zeros(column, mask.dtype())}, -1);
}

/// A projection weight's shape check: weight must be [E, in] for an input whose last dim is in.
void check_proj_weight(const char* op, const char* name, const Tensor& w, std::int64_t E,
                       const char* input, const Tensor& x, const char* dim_name) {
  MG_CHECK(w.defined(), op, "use_separate_proj_weight is true but ", name, " is undefined");
  MG_CHECK(w.dim() == 2 && w.size(0) == E && w.size(1) == x.size(-1), op, input, " has shape ",
           x.shape(), " and ", name, " has shape ", w.shape(), ": ", name, " must be (embed_dim, ",
           dim_name, ") = ", Shape{E, x.size(-1)});
}

/// The attention itself, PyTorch 1.13's F.multi_head_attention_forward. Called by
/// F::multi_head_attention_forward (op "multi_head_attention_forward", sequence first) and by
/// MultiheadAttentionImpl::forward (op "MultiheadAttention", with its batch_first and its
/// attention-weights hooks, which see the per-head weights whatever need_weights says).
std::tuple<Tensor, Tensor> attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const functional::MultiheadAttentionForwardFuncOptions& o, const char* op, bool batch_first,
    const std::function<void(const Tensor&)>& weights_hook) {
  // ---- checks
  MG_CHECK(query.defined() && key.defined() && value.defined(), op,
           "got an undefined query, key or value");
  MG_CHECK(query.dim() == 2 || query.dim() == 3, op,
           "query must be 2-D (unbatched) or 3-D (batched), got shape ", query.shape());
  const bool batched = query.dim() == 3;
  MG_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), op, "for a ", query.dim(),
           "-D query, key and value must be ", query.dim(), "-D too, got shapes ", key.shape(),
           " and ", value.shape());
  const std::int64_t E = o.embed_dim_to_check(), H = o.num_heads();
  MG_CHECK(E > 0 && H > 0, op, "embed_dim (", E, ") and num_heads (", H, ") must be positive");
  MG_CHECK(E % H == 0, op, "embed_dim ", E, " must be divisible by num_heads ", H);
  const std::int64_t head_dim = E / H;
  const bool separate = o.use_separate_proj_weight();
  if (separate) {
    MG_CHECK(key.shape().size() == value.shape().size() &&
                 std::equal(key.shape().begin(), key.shape().end() - 1, value.shape().begin()),
             op, "key has shape ", key.shape(), " and value has shape ", value.shape(),
             ": all but their last dims must be equal");
    MG_CHECK(query.size(-1) == E, op, "query has shape ", query.shape(),
             ": its last dim must be embed_dim (", E, ")");
    check_proj_weight(op, "q_proj_weight", o.q_proj_weight(), E, "query", query, "embed_dim");
    check_proj_weight(op, "k_proj_weight", o.k_proj_weight(), E, "key", key, "kdim");
    check_proj_weight(op, "v_proj_weight", o.v_proj_weight(), E, "value", value, "vdim");
  } else {
    MG_CHECK(key.shape() == value.shape(), op, "key has shape ", key.shape(),
             " and value has shape ", value.shape(), ": they must be equal");
    MG_CHECK(query.size(-1) == E && key.size(-1) == E, op, "query has shape ", query.shape(),
             " and key has shape ", key.shape(), ": their last dim must be embed_dim (", E, ")");
    MG_CHECK(o.in_proj_weight().defined() && o.in_proj_weight().shape() == (Shape{3 * E, E}), op,
             "in_proj_weight must be (3 * embed_dim, embed_dim) = ", Shape{3 * E, E}, ", got ",
             o.in_proj_weight().defined() ? o.in_proj_weight().shape() : Shape{});
  }
  const Tensor& w = separate ? o.q_proj_weight() : o.in_proj_weight();
  const Dtype dtype = w.dtype();
  MG_CHECK(query.dtype() == dtype && key.dtype() == dtype && value.dtype() == dtype, op,
           "query, key and value must have the parameters' dtype (", dtype_name(dtype), "), got ",
           dtype_name(query.dtype()), ", ", dtype_name(key.dtype()), " and ",
           dtype_name(value.dtype()));
  const Tensor& b = o.in_proj_bias();
  MG_CHECK(!b.defined() || b.shape() == Shape{3 * E}, op, "in_proj_bias has shape ", b.shape(),
           " but must be (3 * embed_dim) = ", Shape{3 * E});
  const Tensor &bias_k = o.bias_k(), &bias_v = o.bias_v();
  const Tensor &static_k = o.static_k(), &static_v = o.static_v();
  MG_CHECK(bias_k.defined() == bias_v.defined(), op,
           "bias_k and bias_v must be both given or both undefined");
  if (bias_k.defined()) {
    MG_CHECK(!static_k.defined(), op, "bias cannot be added to static key.");
    MG_CHECK(!static_v.defined(), op, "bias cannot be added to static value.");
    MG_CHECK(bias_k.shape() == (Shape{1, 1, E}) && bias_v.shape() == (Shape{1, 1, E}), op,
             "bias_k has shape ", bias_k.shape(), " and bias_v has shape ", bias_v.shape(),
             ": they must be (1, 1, embed_dim) = ", Shape{1, 1, E});
  }

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
  const std::int64_t L = q_shape[0], N = q_shape[1];
  MG_CHECK(k_shape[1] == N, op, "query has shape ", query.shape(), " and key has shape ",
           key.shape(), ": their batch sizes (", N, " and ", k_shape[1], ") must match");
  auto check_static = [&](const Tensor& t, const char* name) {
    if (!t.defined()) return;
    MG_CHECK(t.dim() == 3 && t.size(0) == N * H && t.size(2) == head_dim, op, name, " has shape ",
             t.shape(), " but must be (N * num_heads, S, head_dim) = (", N * H, ", S, ", head_dim,
             ")");
  };
  check_static(static_k, "static_k");
  check_static(static_v, "static_v");
  // The number of keys the masks cover: the key's, or static_k's when given (as PyTorch).
  const std::int64_t S = static_k.defined() ? static_k.size(1) : k_shape[0];

  // ---- masks (checked against [L, S]), padded for the keys bias_k and add_zero_attn add
  Tensor attn_mask = o.attn_mask(), kpm = o.key_padding_mask();
  if (attn_mask.defined()) {
    MG_CHECK(attn_mask.dtype() == kBool || attn_mask.is_floating_point(), op,
             "attn_mask must be bool or floating-point, got ", dtype_name(attn_mask.dtype()));
    if (attn_mask.dim() == 2) {
      MG_CHECK(attn_mask.shape() == (Shape{L, S}), op, "the 2-D attn_mask has shape ",
               attn_mask.shape(), " but must be (L, S) = ", Shape{L, S});
    } else {
      MG_CHECK(attn_mask.dim() == 3, op, "attn_mask must be 2-D or 3-D, got shape ",
               attn_mask.shape());
      MG_CHECK(attn_mask.shape() == (Shape{N * H, L, S}), op, "the 3-D attn_mask has shape ",
               attn_mask.shape(), " but must be (N * num_heads, L, S) = ", Shape{N * H, L, S});
    }
  }
  if (kpm.defined()) {
    MG_CHECK(kpm.dtype() == kBool || kpm.is_floating_point(), op,
             "key_padding_mask must be bool or floating-point, got ", dtype_name(kpm.dtype()));
    Shape expected = batched ? Shape{N, S} : Shape{S};
    MG_CHECK(kpm.shape() == expected, op, "key_padding_mask has shape ", kpm.shape(),
             " but must be ", batched ? "(N, S) = " : "(S) = ", expected);
    kpm = kpm.reshape({N, S});
  }
  const int extra_keys = (bias_k.defined() ? 1 : 0) + (o.add_zero_attn() ? 1 : 0);
  for (int i = 0; i < extra_keys; ++i) attn_mask = pad_column(attn_mask), kpm = pad_column(kpm);
  const std::int64_t S_total = S + extra_keys;

  // ---- masks -> one additive float mask broadcastable to [N, H, L, S_total] (or none)
  Tensor mask;
  if (attn_mask.defined())  // row n * H + h of a 3-D mask belongs to batch n, head h
    mask = attn_mask.dim() == 2 ? attn_mask : attn_mask.reshape({N, H, L, S_total});
  if (kpm.defined()) {
    Tensor kpm4 = kpm.reshape({N, 1, 1, S_total});
    if (!mask.defined()) {
      mask = kpm4;
    } else if (mask.dtype() == kBool) {
      mask = logical_or(mask, kpm4);  // NOTE: a float key_padding_mask counts where nonzero here
    } else {
      MG_CHECK(kpm4.dtype() == kBool, op,
               "a float key_padding_mask cannot be combined with a float attn_mask");
      mask = where(kpm4, -INFINITY, mask);
    }
  }
  if (mask.defined())
    mask = mask.dtype() == kBool ? masked_fill(zeros(mask.shape(), dtype), mask, -INFINITY)
                                 : mask.to(dtype);

  // ---- in-projection
  auto bias_part = [&b](std::int64_t start, std::int64_t length) {
    return b.defined() ? b.narrow(0, start, length) : Tensor();
  };
  Tensor qp, kp, vp;  // [L, N, E], [S, N, E], [S, N, E]
  if (separate) {
    qp = functional::linear(q, o.q_proj_weight(), bias_part(0, E));
    kp = functional::linear(k, o.k_proj_weight(), bias_part(E, E));
    vp = functional::linear(v, o.v_proj_weight(), bias_part(2 * E, E));
  } else if (self_attention) {
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
  if (bias_k.defined()) {  // one more key and value: bias_k, bias_v for every batch
    kp = cat({kp, bias_k.expand({1, N, E})}, 0);
    vp = cat({vp, bias_v.expand({1, N, E})}, 0);
  }

  // ---- scaled dot-product attention per head
  // [T, N, E] -> [T, N, H, head_dim] -> [N, H, T, head_dim], views when the layout allows.
  auto split_heads = [&](const Tensor& t) {
    return t.reshape({t.size(0), N, H, head_dim}).permute({1, 2, 0, 3});
  };
  // NOTE: q is scaled before the product, as PyTorch's q / sqrt(head_dim) (same rounding).
  Tensor qh = split_heads(qp) / std::sqrt(static_cast<double>(head_dim));
  // static_k / static_v [N * H, S, head_dim] replace the projected keys / values (row n * H + h).
  Tensor kh = static_k.defined() ? static_k.reshape({N, H, S, head_dim}) : split_heads(kp);
  Tensor vh =
      static_v.defined() ? static_v.reshape({N, H, -1, head_dim}) : split_heads(vp);  // [N,H,S,d]
  MG_CHECK(vh.size(2) == kh.size(2), op, "static_v has ", vh.size(2), " values but there are ",
           kh.size(2), " keys");
  if (o.add_zero_attn()) {  // one more key and value, zeros
    kh = cat({kh, zeros({N, H, 1, head_dim}, dtype)}, 2);
    vh = cat({vh, zeros({N, H, 1, head_dim}, dtype)}, 2);
  }
  Tensor scores = matmul(qh, kh.transpose(-2, -1));  // [N, H, L, S_total]
  if (mask.defined()) scores = scores + mask;
  Tensor weights = softmax(scores, -1);
  if (o.dropout_p() > 0.0) weights = functional::dropout(weights, o.dropout_p(), o.training());
  Tensor heads = matmul(weights, vh);  // [N, H, L, head_dim]
  // The heads side by side, [L, N, E], or [N, L, E] straight away for a batch-first output (the
  // same rows in another order: no transposed output for the next layer to copy).
  Tensor out = functional::linear(rows_first ? heads.permute({0, 2, 1, 3}).reshape({N, L, E})
                                             : heads.permute({2, 0, 1, 3}).reshape({L, N, E}),
                                  o.out_proj_weight(), o.out_proj_bias());

  if (weights_hook) weights_hook(batched ? weights : weights.squeeze(0));
  if (o.need_weights() && o.average_attn_weights())
    weights = weights.sum(1) / static_cast<double>(H);
  if (!o.need_weights()) weights = Tensor();
  if (!batched) {
    out = out.squeeze(1);
    if (weights.defined()) weights = weights.squeeze(0);
  }
  return {out, weights};
}

}  // namespace

namespace functional {

MultiheadAttentionForwardFuncOptions::MultiheadAttentionForwardFuncOptions(
    std::int64_t embed_dim_to_check, std::int64_t num_heads, Tensor in_proj_weight,
    Tensor in_proj_bias, Tensor bias_k, Tensor bias_v, bool add_zero_attn, double dropout_p,
    Tensor out_proj_weight, Tensor out_proj_bias)
    : embed_dim_to_check_(embed_dim_to_check),
      num_heads_(num_heads),
      in_proj_weight_(std::move(in_proj_weight)),
      in_proj_bias_(std::move(in_proj_bias)),
      bias_k_(std::move(bias_k)),
      bias_v_(std::move(bias_v)),
      add_zero_attn_(add_zero_attn),
      dropout_p_(dropout_p),
      out_proj_weight_(std::move(out_proj_weight)),
      out_proj_bias_(std::move(out_proj_bias)) {}

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options) {
  return attention_forward(query, key, value, options, kFuncOp, /*batch_first=*/false, {});
}

namespace detail {
std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query, const Tensor& key, const Tensor& value, std::int64_t embed_dim_to_check,
    std::int64_t num_heads, const Tensor& in_proj_weight, const Tensor& in_proj_bias,
    const Tensor& bias_k, const Tensor& bias_v, bool add_zero_attn, double dropout_p,
    const Tensor& out_proj_weight, const Tensor& out_proj_bias, bool training,
    const Tensor& key_padding_mask, bool need_weights, const Tensor& attn_mask,
    bool use_separate_proj_weight, const Tensor& q_proj_weight, const Tensor& k_proj_weight,
    const Tensor& v_proj_weight, const Tensor& static_k, const Tensor& static_v,
    bool average_attn_weights) {
  return functional::multi_head_attention_forward(
      query, key, value,
      MultiheadAttentionForwardFuncOptions(embed_dim_to_check, num_heads, in_proj_weight,
                                           in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p,
                                           out_proj_weight, out_proj_bias)
          .training(training)
          .key_padding_mask(key_padding_mask)
          .need_weights(need_weights)
          .attn_mask(attn_mask)
          .use_separate_proj_weight(use_separate_proj_weight)
          .q_proj_weight(q_proj_weight)
          .k_proj_weight(k_proj_weight)
          .v_proj_weight(v_proj_weight)
          .static_k(static_k)
          .static_v(static_v)
          .average_attn_weights(average_attn_weights));
}
}  // namespace detail

}  // namespace functional

NonDynamicallyQuantizableLinearImpl::NonDynamicallyQuantizableLinearImpl(std::int64_t in,
                                                                         std::int64_t out,
                                                                         bool with_bias,
                                                                         Dtype dtype)
    : Cloneable("NonDynamicallyQuantizableLinear"),
      in_features(in),
      out_features(out),
      linear_(in, out, with_bias, dtype) {
  weight = register_parameter("weight", linear_.weight);
  if (with_bias) bias = register_parameter("bias", linear_.bias);
}

void NonDynamicallyQuantizableLinearImpl::reset() {
  linear_.reset();
  weight = register_parameter("weight", linear_.weight);
  bias = linear_.bias.defined() ? register_parameter("bias", linear_.bias) : Tensor();
}

MultiheadAttentionImpl::MultiheadAttentionImpl(std::int64_t embed, std::int64_t heads,
                                               bool with_bias, bool first, Dtype dtype)
    : MultiheadAttentionImpl(
          MultiheadAttentionOptions(embed, heads).bias(with_bias).batch_first(first).dtype(dtype)) {
}

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Cloneable("MultiheadAttention"),
      options(checked(o)),
      embed_dim(o.embed_dim()),
      num_heads(o.num_heads()),
      head_dim(o.embed_dim() / o.num_heads()),
      kdim(o.kdim()),
      vdim(o.vdim()),
      _qkv_same_embed_dim(o.kdim() == o.embed_dim() && o.vdim() == o.embed_dim()),
      batch_first(o.batch_first()),
      add_zero_attn(o.add_zero_attn()),
      dropout(o.dropout()),
      out_proj(nullptr) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const MultiheadAttentionOptions& o = options;
  const std::int64_t E = embed_dim;
  const Dtype dtype = o.dtype();
  if (_qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}, dtype));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}, dtype));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, kdim}, dtype));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, vdim}, dtype));
  }
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}, dtype));
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, E}, dtype));
    bias_v = register_parameter("bias_v", empty({1, 1, E}, dtype));
  }
  // PyTorch builds out_proj (drawing Linear's initial values) before _reset_parameters.
  out_proj = register_module("out_proj", NonDynamicallyQuantizableLinear(E, E, o.bias(), dtype));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::constant_(in_proj_bias, 0.0);
    init::constant_(out_proj->bias, 0.0);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::pair<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights) const {
  // Errors that name this module's own arguments (kdim, vdim) before the functional's checks.
  if (!_qkv_same_embed_dim && key.defined() && value.defined() && key.dim() >= 1 &&
      value.dim() >= 1) {
    MG_CHECK(key.size(-1) == kdim, kOp, "key has shape ", key.shape(),
             ": its last dim must be kdim (", kdim, ")");
    MG_CHECK(value.size(-1) == vdim, kOp, "value has shape ", value.shape(),
             ": its last dim must be vdim (", vdim, ")");
  }
  std::function<void(const Tensor&)> hook;
  if (!weights_hooks_.empty())
    hook = [this](const Tensor& per_head) {
      for (auto& h : weights_hooks_.snapshot()) h(*this, per_head);
    };
  auto [out, weights] =
      attention_forward(query, key, value,
                        functional::MultiheadAttentionForwardFuncOptions(
                            embed_dim, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
                            add_zero_attn, dropout, out_proj->weight, out_proj->bias)
                            .training(is_training())
                            .key_padding_mask(key_padding_mask)
                            .need_weights(need_weights)
                            .attn_mask(attn_mask)
                            .use_separate_proj_weight(!_qkv_same_embed_dim)
                            .q_proj_weight(q_proj_weight)
                            .k_proj_weight(k_proj_weight)
                            .v_proj_weight(v_proj_weight)
                            .average_attn_weights(average_attn_weights),
                        kOp, batch_first, hook);
  return {std::move(out), std::move(weights)};
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

}  // namespace minigrad::nn
