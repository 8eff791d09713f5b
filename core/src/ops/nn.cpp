// The fused ops nn is built on (minigrad/ops/nn.h): embedding, layer_norm, rms_norm,
// cross_entropy, nll_loss, and the backward ops of the first two (minigrad/ops/backward.h:
// embedding_dense_backward, native_layer_norm_backward). Each reads top to bottom: checks, output,
// the kernel call (kernels/embedding.cpp, kernels/norm.cpp, kernels/loss.cpp), then its backward:
// one call of its backward op, or for the losses public ops. The forward ops are custom Functions
// (minigrad/custom_function.h), named as PyTorch names their nodes. Semantics follow PyTorch 1.13
// (aten/src/ATen/native/LossNLL.cpp, Loss.cpp, Embedding.cpp, layer_norm.cpp).

#include "minigrad/ops/nn.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/function.h"
#include "kernels/embedding.h"
#include "kernels/loss.h"
#include "kernels/norm.h"
#include "minigrad/custom_function.h"
#include "minigrad/dispatch.h"
#include "minigrad/ops/backward.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "parallel.h"

namespace minigrad {

using autograd::AutogradContext;
using autograd::IValue;
using Grads = std::vector<Tensor>;

// ---------------------------------------------------------------- embedding

namespace {

/// Rows of weight gathered at flat's (checked) indices, shaped `shape`.
struct EmbeddingFn : autograd::Function<EmbeddingFn> {
  static constexpr const char* node_name = "EmbeddingBackward0";
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& weight, const Tensor& flat,
                        const Shape& shape, std::int64_t padding_idx) {
    Tensor w = weight.contiguous();
    Tensor out = empty(shape, weight.dtype());
    dispatch(weight.dtype(), [&]<typename T>() {
      detail::embedding_kernel<T>(w.data_ptr<T>(), weight.size(1), weight.size(1),
                                  flat.data_ptr<std::int64_t>(), flat.numel(), out.data_ptr<T>());
    });
    ctx->save_for_backward({flat});
    ctx->saved_data["num"] = weight.size(0);
    ctx->saved_data["padding_idx"] = padding_idx;
    return out;
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> grads) {
    return {
        embedding_backward(grads[0], ctx->get_saved_variables()[0], ctx->saved_data["num"].toInt(),
                           ctx->saved_data["padding_idx"].toInt(), false, false),
        Tensor(), Tensor(), Tensor()};
  }
};

/// padding_idx in [0, num) (negative counts from the end); throws naming op otherwise.
std::int64_t wrap_padding_idx(std::int64_t padding_idx, std::int64_t num, const char* op) {
  MG_CHECK(padding_idx >= -num && padding_idx < num, op, "padding_idx ", padding_idx,
           " is out of range for ", num, " embeddings (expected a value in [", -num, ", ", num,
           "))");
  return padding_idx < 0 ? padding_idx + num : padding_idx;
}

}  // namespace

namespace detail {

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx,
                 const char* op) {
  MG_CHECK(input.defined() && weight.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(input.dtype() == kInt64, op, "expected int64 indices, got ", dtype_name(input.dtype()));
  MG_CHECK(weight.dim() == 2, op, "weight must be 2-D [num_embeddings, embedding_dim], got shape ",
           weight.shape());
  const std::int64_t num = weight.size(0), dim = weight.size(1);
  Tensor flat = input.reshape({input.numel()}).contiguous();
  const std::int64_t* idx = flat.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < flat.numel(); ++i)
    MG_CHECK(idx[i] >= 0 && idx[i] < num, op, "index ", idx[i], " is out of range for ", num,
             " embeddings");
  Shape shape = input.shape();
  shape.push_back(dim);
  std::int64_t pad = padding_idx ? wrap_padding_idx(*padding_idx, num, op) : -1;
  return EmbeddingFn::apply(weight, flat, shape, pad);
}

}  // namespace detail

Tensor embedding(const Tensor& input, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx) {
  MG_PROFILE_OP("embedding");
  return detail::embedding(input, weight, padding_idx, "embedding");
}

// Note [Embedding's backward]
// embedding_dense_backward (PyTorch's) scatters the rows of grad_output into a zero-filled
// [num_weights, dim] gradient (kernels/embedding.h), the same additions in the same order as
// index_add; rows looked up at padding_idx (-1: none) add nothing, and with scale_grad_by_freq
// each row is divided by its index's count first. It is linear in grad_output: its derivative
// (EmbeddingDenseBackwardBackward0) gathers the incoming gradient's rows at the indices again,
// with the same zeros and scales (PyTorch 1.13's leaves the scales out). A tied table (GPT-2's)
// gets this gradient and the head's, summed by the engine in place (Note [The engine]).

Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                std::int64_t num_weights, std::int64_t padding_idx,
                                bool scale_grad_by_freq) {
  MG_PROFILE_OP("embedding_dense_backward");
  const char* op = "embedding_dense_backward";
  MG_CHECK(grad_output.defined() && indices.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(grad_output.is_floating_point(), op, "expected a floating-point grad_output, got ",
           dtype_name(grad_output.dtype()));
  MG_CHECK(indices.dtype() == kInt64, op, "expected int64 indices, got ",
           dtype_name(indices.dtype()));
  MG_CHECK(grad_output.dim() >= 1, op, "grad_output must have at least 1 dim, got shape ",
           grad_output.shape());
  const std::int64_t dim = grad_output.size(-1), n = indices.numel();
  MG_CHECK(grad_output.numel() == n * dim, op, "grad_output of shape ", grad_output.shape(),
           " does not hold one row of ", dim, " per index (", n, " indices)");
  MG_CHECK(num_weights >= 0, op, "num_weights must be non-negative, got ", num_weights);
  MG_CHECK(padding_idx >= -1 && padding_idx < num_weights, op, "padding_idx ", padding_idx,
           " is out of range for ", num_weights,
           " embeddings (expected -1 for none or a value in "
           "[0, ",
           num_weights, "))");
  Tensor idx = indices.reshape({n}).contiguous();
  const std::int64_t* pi = idx.data_ptr<std::int64_t>();
  std::vector<std::int64_t> counts(scale_grad_by_freq ? static_cast<std::size_t>(num_weights) : 0);
  for (std::int64_t i = 0; i < n; ++i) {
    MG_CHECK(pi[i] >= 0 && pi[i] < num_weights, op, "index ", pi[i], " is out of range for ",
             num_weights, " embeddings");
    if (scale_grad_by_freq) ++counts[static_cast<std::size_t>(pi[i])];
  }
  Tensor rows = grad_output.reshape({n, dim});
  if (padding_idx >= 0) rows = masked_fill(rows, idx.eq(padding_idx).unsqueeze(1), 0.0);
  // [n, 1]: 1 / the count of each row's index
  Tensor scale;
  if (scale_grad_by_freq) {
    std::vector<double> inv(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      inv[static_cast<std::size_t>(i)] =
          1.0 / static_cast<double>(counts[static_cast<std::size_t>(pi[i])]);
    scale = tensor(inv, {n, 1}, grad_output.dtype());
    rows = rows * scale;
  }
  const Tensor src = rows.contiguous();
  Tensor out = zeros({num_weights, dim}, grad_output.dtype());
  dispatch_floating(grad_output.dtype(), op, [&]<typename T>() {
    detail::embedding_backward_kernel<T>(src.data_ptr<T>(), pi, n, dim, out.data_ptr<T>());
  });
  // gg [num_weights, dim] -> its rows at the indices, zeroed and scaled as above, shaped as
  // grad_output
  detail::record(
      "EmbeddingDenseBackwardBackward0", out, {&grad_output},
      {&idx, scale.defined() ? &scale : nullptr},
      [padding_idx, shape = grad_output.shape()](const Tensor& gg, detail::FunctionNode& node) {
        Tensor i = node.saved(0);
        Tensor r = index_select(gg, 0, i);
        if (padding_idx >= 0) r = masked_fill(r, i.eq(padding_idx).unsqueeze(1), 0.0);
        if (node.has_saved(1)) r = r * node.saved(1);
        return Grads{r.reshape(shape)};
      });
  return out;
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights,
                          std::int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
  MG_PROFILE_OP("embedding_backward");
  MG_CHECK(!sparse, "embedding_backward",
           "sparse gradients are not supported (minigrad has no sparse tensors); pass "
           "sparse=false for the dense gradient");
  return embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
}

// ---------------------------------------------------------------- layer_norm, rms_norm

namespace {

/// layer_norm over the last k dims of x (arguments checked), with optional weight and bias.
struct LayerNormFn : autograd::Function<LayerNormFn> {
  static constexpr const char* node_name = "NativeLayerNormBackward0";
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, std::int64_t k, double eps) {
    // Each row of n elements (the normalised dims) gets a mean and rstd = 1 / sqrt(var + eps).
    Shape stat_shape = x.shape();
    std::int64_t rows = 1, n = 1;
    for (std::int64_t i = 0; i < x.dim(); ++i) {
      if (i < x.dim() - k) {
        rows *= x.size(i);
      } else {
        n *= x.size(i);
        stat_shape[static_cast<std::size_t>(i)] = 1;
      }
    }
    Tensor xc = x.contiguous();
    Tensor w = weight.defined() ? weight.contiguous() : Tensor();
    Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    Tensor out = empty(x.shape(), x.dtype());
    // NOTE: the statistics are kept in float64 whatever the input dtype: backward rebuilds x_hat
    // from them, and a float32 mean of 1e4-scale rows would lose the digits that matter.
    Tensor mean_t = empty(stat_shape, kFloat64);
    Tensor rstd_t = empty(stat_shape, kFloat64);
    dispatch_floating(x.dtype(), "layer_norm", [&]<typename T>() {
      detail::layer_norm_kernel<T>(xc.data_ptr<T>(), n, 1, w.defined() ? w.data_ptr<T>() : nullptr,
                                   b.defined() ? b.data_ptr<T>() : nullptr, rows, n, eps,
                                   out.data_ptr<T>(), mean_t.data_ptr<double>(),
                                   rstd_t.data_ptr<double>());
    });
    // x_hat (from x and the statistics) feeds grad_x and grad_weight; weight only grad_x.
    bool x_hat_needed = ctx->needs_input_grad(0) || ctx->needs_input_grad(1);
    ctx->save_for_backward({x_hat_needed ? x : Tensor(),
                            ctx->needs_input_grad(0) ? weight : Tensor(),
                            x_hat_needed ? mean_t : Tensor(), x_hat_needed ? rstd_t : Tensor()});
    ctx->saved_data["normalized_shape"] = Shape(x.shape().end() - k, x.shape().end());
    return out;
  }

  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> grads) {
    const Tensor& g = grads[0];
    auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &gamma = saved[1], &mean64 = saved[2], &rstd64 = saved[3];
    if (!input.defined()) return {Tensor(), Tensor(), g, Tensor(), Tensor()};  // only bias
    auto [grad_x, grad_w, grad_b] = native_layer_norm_backward(
        g, input, ctx->saved_data["normalized_shape"].toIntVector(), mean64, rstd64, gamma,
        Tensor(), {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)});
    return {grad_x, grad_w, grad_b, Tensor(), Tensor()};
  }
};

// Note [Layer norm's double backward]
// native_layer_norm_backward is an op (PyTorch's): one kernel pass for its three outputs (Note
// [Layer norm kernels]), recorded with its own derivative, NativeLayerNormBackwardBackward0, so
// layer_norm's backward is the kernel with or without create_graph. As PyTorch's
// layer_norm_double_backward, that derivative treats mean and rstd as the statistics of input
// (r = rstd, x_hat = (input - mean) r, g_hat = grad_out * weight, per-row means m(.)): for the
// incoming gradients a (of grad_input), a_w (grad_weight) and a_b (grad_bias),
//   d grad_out = weight * P(a) + a_w * x_hat + a_b
//   d weight   = grad_out * P(a)                  (summed over the rows by the engine)
//   d input    = P(grad_out * a_w) + r^2 (x_hat (3 m(g_hat x_hat) m(a x_hat) - m(a g_hat)
//                + m(a) m(g_hat)) - (g_hat - m(g_hat)) m(a x_hat) - (a - m(a)) m(g_hat x_hat))
// where P(v) = r (v - m(v) - x_hat m(v x_hat)) is grad_input for v without weight: this op again,
// so it runs the kernel too. In d input, mean and r carry the values given but their derivatives
// as functions of input (value + (live - live.detach()), live computed from input), so a further
// derivative (gradgradcheck of this op) sees how they move with input.

/// The fused kernel of native_layer_norm_backward (arguments checked; mean and rstd float64) and
/// its derivative (Note [Layer norm's double backward]).
struct NativeLayerNormBackwardFn : autograd::Function<NativeLayerNormBackwardFn> {
  static constexpr const char* node_name = "NativeLayerNormBackwardBackward0";
  static std::vector<Tensor> forward(AutogradContext* ctx, const Tensor& grad_out,
                                     const Tensor& input, const Tensor& mean, const Tensor& rstd,
                                     const Tensor& weight, const Shape& normalized_shape,
                                     std::array<bool, 3> mask) {
    std::int64_t n = 1;
    for (std::int64_t s : normalized_shape) n *= s;
    const std::int64_t rows = n > 0 ? input.numel() / n : 0;
    Tensor gc = grad_out.to(input.dtype()).contiguous();
    Tensor xc = input.contiguous();
    Tensor w = weight.defined() ? weight.contiguous() : Tensor();
    Tensor mc = mean.to(kFloat64).contiguous(), rc = rstd.to(kFloat64).contiguous();
    Tensor grad_x = mask[0] ? empty(input.shape(), input.dtype()) : Tensor();
    Tensor grad_w = mask[1] ? empty(normalized_shape, input.dtype()) : Tensor();
    Tensor grad_b = mask[2] ? empty(normalized_shape, input.dtype()) : Tensor();
    dispatch_floating(input.dtype(), "native_layer_norm_backward", [&]<typename T>() {
      auto ptr = [](Tensor& t) { return t.defined() ? t.data_ptr<T>() : nullptr; };
      detail::layer_norm_backward_kernel<T>(gc.data_ptr<T>(), xc.data_ptr<T>(),
                                            mc.data_ptr<double>(), rc.data_ptr<double>(), ptr(w),
                                            rows, n, ptr(grad_x), ptr(grad_w), ptr(grad_b));
    });
    ctx->save_for_backward({grad_out, input, mean, rstd, weight});
    ctx->saved_data["normalized_shape"] = normalized_shape;
    ctx->set_materialize_grads(false);
    return {grad_x, grad_w, grad_b};
  }

  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &g = saved[0], &x = saved[1], &w = saved[4];
    const Tensor &a = grads[0], &a_w = grads[1], &a_b = grads[2];
    const Shape ns = ctx->saved_data["normalized_shape"].toIntVector();
    Shape dims;
    for (auto i = x.dim() - static_cast<std::int64_t>(ns.size()); i < x.dim(); ++i)
      dims.push_back(i);
    auto m = [&dims](const Tensor& t) { return minigrad::mean(t, dims, /*keepdim=*/true); };
    // grad_input without weight for v, with this op's kernel and derivative.
    auto P = [&](const Tensor& v) {
      return std::get<0>(native_layer_norm_backward(v, x, ns, saved[2], saved[3], Tensor(),
                                                    Tensor(), {true, false, false}));
    };
    // The statistics as given, differentiable as functions of x.
    Tensor mu_live = m(x), var_live = m((x - mu_live) * (x - mu_live));
    Tensor rstd = saved[3].to(x.dtype());
    Tensor r_live = rsqrt(var_live + (rstd.pow(-2) - var_live).detach());
    Tensor r = rstd + (r_live - r_live.detach());
    Tensor x_hat = (x - (saved[2].to(x.dtype()) + (mu_live - mu_live.detach()))) * r;
    Tensor g_hat = w.defined() ? g * w : g;
    Tensor pa = a.defined() ? P(a) : Tensor();
    auto plus = [](Tensor sum, const Tensor& t) { return sum.defined() ? sum + t : t; };
    Tensor d_g, d_x, d_w;
    if (ctx->needs_input_grad(0)) {
      if (a.defined()) d_g = w.defined() ? pa * w : pa;
      if (a_w.defined()) d_g = plus(d_g, a_w * x_hat);
      if (a_b.defined()) d_g = plus(d_g, a_b.expand(x.shape()));
    }
    if (ctx->needs_input_grad(1)) {
      if (a_w.defined()) d_x = P(g * a_w);
      if (a.defined()) {
        Tensor m_gx = m(g_hat * x_hat), m_ax = m(a * x_hat), m_g = m(g_hat), m_a = m(a);
        d_x = plus(d_x, r * r *
                            (x_hat * (3 * m_gx * m_ax - m(a * g_hat) + m_a * m_g) -
                             (g_hat - m_g) * m_ax - (a - m_a) * m_gx));
      }
    }
    if (ctx->needs_input_grad(4) && a.defined()) d_w = g * pa;
    return {d_g, d_x, Tensor(), Tensor(), d_w, Tensor(), Tensor()};
  }
};

/// Throws unless x's last dims equal normalized_shape (layer_norm, rms_norm).
void check_normalized_shape(const Tensor& x, const Shape& normalized_shape, const char* op) {
  const auto k = static_cast<std::int64_t>(normalized_shape.size());
  MG_CHECK(k >= 1, op, "normalized_shape must have at least 1 dim, got ", normalized_shape);
  bool trailing_match = x.dim() >= k;
  for (std::int64_t i = 0; trailing_match && i < k; ++i)
    trailing_match = x.size(x.dim() - k + i) == normalized_shape[static_cast<std::size_t>(i)];
  MG_CHECK(trailing_match, op, "normalized_shape is ", normalized_shape,
           " but the input has shape ", x.shape(), ": its last ", k, " dims must equal it");
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  MG_PROFILE_OP("layer_norm");
  const char* op = "layer_norm";
  MG_CHECK(x.defined(), op, "got an undefined input");
  MG_CHECK(x.is_floating_point(), op, "expected a floating-point input, got ",
           dtype_name(x.dtype()));
  check_normalized_shape(x, normalized_shape, op);
  const auto k = static_cast<std::int64_t>(normalized_shape.size());
  using Param = std::pair<const Tensor*, const char*>;
  for (const auto& [t, name] : {Param{&weight, "weight"}, Param{&bias, "bias"}}) {
    if (!t->defined()) continue;
    MG_CHECK(t->shape() == normalized_shape, op, name, " has shape ", t->shape(),
             " but normalized_shape is ", normalized_shape);
    MG_CHECK(t->dtype() == x.dtype(), op, name, " is ", dtype_name(t->dtype()),
             " but the input is ", dtype_name(x.dtype()));
  }
  return LayerNormFn::apply(x, weight, bias, k, eps);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, const Shape& normalized_shape, const Tensor& mean,
    const Tensor& rstd, const Tensor& weight, const Tensor& /*bias*/,
    std::array<bool, 3> output_mask) {
  MG_PROFILE_OP("native_layer_norm_backward");
  const char* op = "native_layer_norm_backward";
  MG_CHECK(grad_out.defined() && input.defined() && mean.defined() && rstd.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  for (const Tensor* t : {&grad_out, &input, &mean, &rstd})
    MG_CHECK(t->is_floating_point(), op, "expected floating-point tensors, got ",
             dtype_name(t->dtype()));
  check_normalized_shape(input, normalized_shape, op);
  MG_CHECK(grad_out.shape() == input.shape(), op, "grad_out has shape ", grad_out.shape(),
           " but the input has shape ", input.shape());
  Shape stat_shape = input.shape();
  for (std::size_t i = stat_shape.size() - normalized_shape.size(); i < stat_shape.size(); ++i)
    stat_shape[i] = 1;
  MG_CHECK(mean.shape() == stat_shape && rstd.shape() == stat_shape, op,
           "mean and rstd must have shape ", stat_shape, " (one value per row), got ", mean.shape(),
           " and ", rstd.shape());
  if (weight.defined()) {
    MG_CHECK(weight.shape() == normalized_shape, op, "weight has shape ", weight.shape(),
             " but normalized_shape is ", normalized_shape);
    MG_CHECK(weight.dtype() == input.dtype(), op, "weight is ", dtype_name(weight.dtype()),
             " but the input is ", dtype_name(input.dtype()));
  }
  // mean and rstd are not differentiable arguments (as PyTorch's): no edge to their history.
  std::vector<Tensor> r = NativeLayerNormBackwardFn::apply(
      grad_out, input, mean.detach(), rstd.detach(), weight, normalized_shape, output_mask);
  return {r[0], r[1], r[2]};
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  MG_PROFILE_OP("rms_norm");
  const char* op = "rms_norm";
  MG_CHECK(x.defined(), op, "got an undefined input");
  MG_CHECK(x.is_floating_point(), op, "expected a floating-point input, got ",
           dtype_name(x.dtype()));
  check_normalized_shape(x, normalized_shape, op);
  if (weight.defined()) {
    MG_CHECK(weight.shape() == normalized_shape, op, "weight has shape ", weight.shape(),
             " but normalized_shape is ", normalized_shape);
  }
  // NOTE: eps defaults to torch.finfo(x.dtype).eps, as PyTorch 2.4's rms_norm.
  double e =
      eps ? *eps
          : (x.dtype() == kFloat64 ? std::numeric_limits<double>::epsilon()
                                   : static_cast<double>(std::numeric_limits<float>::epsilon()));
  Shape dims;
  for (auto i = x.dim() - static_cast<std::int64_t>(normalized_shape.size()); i < x.dim(); ++i)
    dims.push_back(i);
  Tensor y = x * rsqrt(mean(x * x, dims, /*keepdim=*/true) + e);
  return weight.defined() ? y * weight : y;
}

// ---------------------------------------------------------------- cross_entropy, nll_loss

namespace {

enum class Reduction { kNone, kMean, kSum };

Reduction parse_reduction(const std::string& r, const char* op) {
  if (r == "mean") return Reduction::kMean;
  if (r == "sum") return Reduction::kSum;
  MG_CHECK(r == "none", op, "reduction must be \"mean\", \"sum\" or \"none\", got \"", r, "\"");
  return Reduction::kNone;
}

/// Where the classes are in a [N, C, d1, ...] or [C] input, and the loss's per-position shape.
struct ClassLayout {
  std::int64_t dim = 0;    // the class dim: 1, or 0 for a 1-D input
  std::int64_t C = 0;      // number of classes
  std::int64_t outer = 1;  // N
  std::int64_t inner = 1;  // d1 * d2 * ...
  Shape loss_shape;        // the input's shape without the class dim
};

ClassLayout class_layout(const Tensor& x, const char* op) {
  MG_CHECK(x.is_floating_point(), op, "input must be floating point, got ", dtype_name(x.dtype()));
  MG_CHECK(x.dim() >= 1, op, "input must have at least 1 dim (the classes), got shape ", x.shape());
  ClassLayout l;
  l.dim = x.dim() == 1 ? 0 : 1;
  l.C = x.shape()[l.dim];
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (i < l.dim) l.outer *= x.shape()[i];
    if (i > l.dim) l.inner *= x.shape()[i];
    if (i != l.dim) l.loss_shape.push_back(x.shape()[i]);
  }
  return l;
}

/// The kernels' view of a contiguous input with layout l (kernels/loss.h).
detail::ClassStrides class_strides(const ClassLayout& l) {
  return {l.outer, l.C, l.inner, l.C * l.inner, l.inner, 1};
}

/// A [C] weight, checked and made contiguous (undefined when absent).
Tensor check_class_weight(const Tensor& weight, const ClassLayout& l, Dtype dtype, const char* op) {
  if (!weight.defined()) return Tensor();
  MG_CHECK(weight.dim() == 1 && weight.size(0) == l.C, op,
           "weight must be a 1-D tensor with one entry per class (", l.C, "), got shape ",
           weight.shape());
  MG_CHECK(weight.dtype() == dtype, op, "weight must have the input's dtype (", dtype_name(dtype),
           "), got ", dtype_name(weight.dtype()));
  return weight.detach().contiguous();
}

/// Class-index targets, validated: per position, the target class (-1 where ignored) and its
/// weight (0 where ignored), and the mean's denominator (sum of those weights).
struct IndexTarget {
  std::vector<std::int64_t> cls;
  std::vector<double> w;
  double weight_sum = 0;
};

IndexTarget check_index_target(const Tensor& target, const ClassLayout& l, const Tensor& weight,
                               std::int64_t ignore_index, const char* op) {
  MG_CHECK(target.dtype() == kInt64, op, "class-index target must be int64, got ",
           dtype_name(target.dtype()));
  IndexTarget it;
  std::vector<std::int64_t> t = target.to_vector<std::int64_t>();
  std::vector<double> wc = weight.defined() ? weight.to_vector<double>() : std::vector<double>();
  it.cls.resize(t.size());
  it.w.resize(t.size());
  for (std::size_t p = 0; p < t.size(); ++p) {
    if (t[p] == ignore_index) {
      it.cls[p] = -1;
      it.w[p] = 0;
      continue;
    }
    MG_CHECK(t[p] >= 0 && t[p] < l.C, op, "target ", t[p], " is out of bounds for ", l.C,
             " classes");
    it.cls[p] = t[p];
    it.w[p] = weight.defined() ? wc[static_cast<std::size_t>(t[p])] : 1.0;
    it.weight_sum += it.w[p];
  }
  return it;
}

/// The target distribution q for class indices, with public ops:
/// q[n, c, ...] = valid * weight[c] * (a * [c == target] + b), valid = target != ignore_index.
/// Shape [N, C, d1, ...] (or [C] for a 1-D input).
Tensor index_target_distribution(const Tensor& target, const Tensor& weight, const ClassLayout& l,
                                 std::int64_t ndim, std::int64_t ignore_index, double a, double b,
                                 Dtype dtype) {
  Shape class_shape(static_cast<std::size_t>(ndim - l.dim), 1);  // [C, 1, ..., 1]
  class_shape[0] = l.C;
  Tensor classes = arange(l.C).reshape(class_shape);
  Tensor t = target.unsqueeze(l.dim);  // [N, 1, d1, ...]
  Tensor valid = (t != ignore_index).to(dtype);
  Tensor q = (classes == t).to(dtype) * valid * a;
  if (b != 0) q = q + valid * b;
  if (weight.defined()) q = q * weight.reshape(class_shape);
  return q;
}

/// Gradient of the reduced or per-position loss g, broadcast against [N, C, d1, ...].
Tensor broadcast_grad(const Tensor& g, Reduction red, std::int64_t class_dim) {
  return red == Reduction::kNone ? g.unsqueeze(class_dim) : g;
}

// ---------------------------------------------------------------- cross_entropy, class indices

// Note [Fused cross entropy]
// The loss at a position is -sum_c q_c * log_softmax(x)_c for a target distribution q (scaled by
// the reduction). The kernel computes each row's logsumexp once and the loss from it, so no
// [N, C] log_softmax is materialised. The gradient is g * (softmax(x) * sum_c q_c - q): for class
// indices q is built in backward from the target with public ops, and softmax(x) is the public
// op, so create_graph differentiates it again. Outside create_graph, rows of classes without
// class weights or label smoothing (a language model's loss) skip q: one pass over softmax(x)
// gives the same bits (CrossEntropyIndexFn::plain_backward). The forward's logsumexp of a
// contiguous float32 row is the SIMD kernels' max and exp-sum (kernels/loss.cpp); the rows'
// logsumexps and plain_backward's rows split across threads, which leaves the bits alone (a
// row is never split, and the losses are summed in order on the calling thread).

/// What the fused cross entropy (and nll_loss, with ls = 0) needs besides its tensors (checked by
/// its caller).
struct CrossEntropyArgs {
  std::int64_t ignore_index;
  Reduction red;
  double ls;
  ClassLayout l;
  IndexTarget it;
};

/// cross_entropy with class-index targets (Note [Fused cross entropy]).
struct CrossEntropyIndexFn : autograd::Function<CrossEntropyIndexFn> {
  static constexpr const char* node_name = "CrossEntropyBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& target,
                        const Tensor& weight, const CrossEntropyArgs& args) {
    Tensor xc = x.contiguous();
    const IndexTarget& it = args.it;
    const ClassLayout& l = args.l;
    const double ls = args.ls;
    const Reduction red = args.red;
    std::vector<double> wc = weight.defined() ? weight.to_vector<double>() : std::vector<double>();
    Tensor out = empty(red == Reduction::kNone ? l.loss_shape : Shape{}, x.dtype());
    dispatch_floating(x.dtype(), "cross_entropy", [&]<typename T>() {
      T* po = out.data_ptr<T>();
      double total = detail::cross_entropy_index_kernel<T>(
          xc.data_ptr<T>(), class_strides(l), it.cls.data(), it.w.data(),
          weight.defined() ? wc.data() : nullptr, ls, red == Reduction::kNone ? po : nullptr);
      // NOTE: "mean" divides both the nll and the smoothing term by the summed target weights, as
      // PyTorch 1.13; no valid target gives 0 / 0 = NaN.
      if (red == Reduction::kSum) po[0] = static_cast<T>(total);
      if (red == Reduction::kMean) po[0] = static_cast<T>(total / it.weight_sum);
    });
    // NOTE: with no valid target the mean's gradient is 0 (every q entry is masked), as PyTorch.
    double scale = red == Reduction::kMean && it.weight_sum != 0 ? 1 / it.weight_sum : 1.0;
    double a = (1 - ls) * scale, b = l.C > 0 ? ls / static_cast<double>(l.C) * scale : 0.0;
    ctx->save_for_backward({x, target, weight});
    ctx->saved_data["args"] = IValue::of(Backward{args.ignore_index, red, l, x.dim(), a, b});
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &tgt = saved[1], &w = saved[2];
    const auto& p = ctx->saved_data["args"].to<Backward>();
    if (!is_grad_enabled() && !w.defined() && p.b == 0 && p.l.inner == 1)
      return {plain_backward(input, tgt, grads[0], p), Tensor(), Tensor(), Tensor()};
    // g [] or [N, d...] . (softmax(input) * sum_c q - q) [N, C, d...] -> [N, C, d...]
    Tensor q =
        index_target_distribution(tgt, w, p.l, p.ndim, p.ignore_index, p.a, p.b, input.dtype());
    Tensor probs = minigrad::softmax(input, p.l.dim) * sum(q, {p.l.dim}, true);
    return {broadcast_grad(grads[0], p.red, p.l.dim) * (probs - q), Tensor(), Tensor(), Tensor()};
  }
  struct Backward {
    std::int64_t ignore_index;
    Reduction red;
    ClassLayout l;
    std::int64_t ndim;
    double a, b;
  };
  /// The gradient above for rows of classes ([N, C] or [C]) without class weights or label
  /// smoothing, outside create_graph: q is a at each valid row's target and 0 elsewhere, so
  /// row j of the result is (softmax_j * A - [j == target] A) * g with A = T(a) (0 on an ignored
  /// row), the same operations in the same dtype as the composed form, in one pass over the
  /// softmax instead of six over [N, C] tensors (GPT-2 small: 256 x 50257).
  static Tensor plain_backward(const Tensor& input, const Tensor& tgt, const Tensor& g_in,
                               const Backward& p) {
    Tensor gx = minigrad::softmax(input, p.l.dim).contiguous();
    const Tensor t = tgt.contiguous(), g = g_in.contiguous();
    const std::int64_t rows = p.l.outer, C = p.l.C;
    const std::int64_t* pt = t.data_ptr<std::int64_t>();
    dispatch_floating(gx.dtype(), "cross_entropy", [&]<typename T>() {
      T* px = gx.data_ptr<T>();
      const T* pg = g.data_ptr<T>();
      const T a = static_cast<T>(p.a);
      detail::parallel_for(
          0, rows, std::max<std::int64_t>(1, detail::kGrainSize / std::max<std::int64_t>(C, 1)),
          [&](std::int64_t r0, std::int64_t r1) {
            for (std::int64_t r = r0; r < r1; ++r) {
              const bool valid = pt[r] != p.ignore_index;
              const T A = valid ? a : T(0);
              const T G = p.red == Reduction::kNone ? pg[r] : pg[0];
              T* row = px + r * C;
              const T st = valid ? row[pt[r]] : T(0);
              // x - 0 is x: q_j = 0
              for (std::int64_t j = 0; j < C; ++j) row[j] = (row[j] * A) * G;
              if (valid) row[pt[r]] = (st * A - A) * G;
            }
          });
    });
    return gx;
  }
};

Tensor cross_entropy_index(const Tensor& x, const Tensor& target, const Tensor& weight_in,
                           std::int64_t ignore_index, Reduction red, double ls,
                           const ClassLayout& l) {
  const char* op = "cross_entropy";
  MG_CHECK(target.shape() == l.loss_shape, op, "input has shape ", x.shape(),
           ": target must have shape ", l.loss_shape, " (class indices) or ", x.shape(),
           " (class probabilities), got ", target.shape());
  Tensor weight = check_class_weight(weight_in, l, x.dtype(), op);
  IndexTarget it = check_index_target(target, l, weight, ignore_index, op);
  return CrossEntropyIndexFn::apply(x, target, weight,
                                    CrossEntropyArgs{ignore_index, red, ls, l, std::move(it)});
}

// ---------------------------------------------------------------- cross_entropy, probabilities

/// cross_entropy with a target distribution q (already smoothed and weighted), promoted to x's
/// dtype (Note [Fused cross entropy]).
struct CrossEntropyProbFn : autograd::Function<CrossEntropyProbFn> {
  static constexpr const char* node_name = "CrossEntropyBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& q, Reduction red,
                        const ClassLayout& l) {
    Tensor xc = x.contiguous(), qc = q.contiguous();
    const Dtype dt = x.dtype();
    Tensor out = empty(red == Reduction::kNone ? l.loss_shape : Shape{}, dt);
    dispatch_floating(dt, "cross_entropy", [&]<typename T>() {
      T* po = out.data_ptr<T>();
      double total =
          detail::cross_entropy_prob_kernel<T>(xc.data_ptr<T>(), qc.data_ptr<T>(), class_strides(l),
                                               red == Reduction::kNone ? po : nullptr);
      if (red == Reduction::kSum) po[0] = static_cast<T>(total);
      // NOTE: "mean" divides by the number of positions, numel / C; an empty input gives NaN.
      if (red == Reduction::kMean)
        po[0] = static_cast<T>(x.numel() == 0 ? std::numeric_limits<double>::quiet_NaN()
                                              : total / static_cast<double>(l.outer * l.inner));
    });
    double scale = red == Reduction::kMean && l.outer * l.inner > 0
                       ? 1.0 / static_cast<double>(l.outer * l.inner)
                       : 1.0;
    ctx->save_for_backward({x, ctx->needs_input_grad(0) ? q : Tensor()});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["none"] = red == Reduction::kNone;
    ctx->saved_data["dim"] = l.dim;
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &probs = saved[1];
    std::int64_t d = ctx->saved_data["dim"].toInt();
    Reduction red = ctx->saved_data["none"].toBool() ? Reduction::kNone : Reduction::kSum;
    Tensor gs = broadcast_grad(grads[0], red, d) * ctx->saved_data["scale"].toDouble();
    Grads r(4);
    // g [] or [N, d...] . (softmax(input) * sum_c probs - probs) [N, C, d...] -> [N, C, d...]
    if (ctx->needs_input_grad(0))
      r[0] = gs * (minigrad::softmax(input, d) * sum(probs, {d}, true) - probs);
    // d loss / d probs = -log_softmax(input)
    if (ctx->needs_input_grad(1)) r[1] = gs * -minigrad::log_softmax(input, d);
    return r;
  }
};

Tensor cross_entropy_prob(const Tensor& x_in, const Tensor& target, const Tensor& weight,
                          std::int64_t ignore_index, Reduction red, double ls,
                          const ClassLayout& l) {
  const char* op = "cross_entropy";
  MG_CHECK(target.is_floating_point(), op,
           "a target with the input's shape holds class probabilities and must be floating point, "
           "got ",
           dtype_name(target.dtype()));
  MG_CHECK(ignore_index < 0, op, "ignore_index (", ignore_index,
           ") is not supported for class-probability targets");
  Dtype dt = promote_types(x_in.dtype(), target.dtype());
  if (weight.defined()) {
    MG_CHECK(weight.dim() == 1 && weight.size(0) == l.C, op,
             "weight must be a 1-D tensor with one entry per class (", l.C, "), got shape ",
             weight.shape());
    MG_CHECK(weight.is_floating_point(), op, "weight must be floating point, got ",
             dtype_name(weight.dtype()));
    dt = promote_types(dt, weight.dtype());
  }
  Tensor x = x_in.to(dt);
  Tensor q = target.to(dt);
  if (ls > 0) q = q * (1 - ls) + ls / static_cast<double>(l.C);
  if (weight.defined()) {
    Shape class_shape(static_cast<std::size_t>(x.dim()), 1);
    class_shape[static_cast<std::size_t>(l.dim)] = l.C;
    q = q * weight.detach().to(dt).reshape(class_shape);
  }
  return CrossEntropyProbFn::apply(x, q, red, l);
}

struct NllLossFn : autograd::Function<NllLossFn> {
  static constexpr const char* node_name = "NllLossBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& input, const Tensor& target,
                        const Tensor& weight, const CrossEntropyArgs& args) {
    Tensor xc = input.contiguous();
    const IndexTarget& it = args.it;
    const ClassLayout& l = args.l;
    const Reduction red = args.red;
    Tensor out = empty(red == Reduction::kNone ? l.loss_shape : Shape{}, input.dtype());
    dispatch_floating(input.dtype(), "nll_loss", [&]<typename T>() {
      T* po = out.data_ptr<T>();
      double total =
          detail::nll_loss_kernel<T>(xc.data_ptr<T>(), class_strides(l), it.cls.data(), it.w.data(),
                                     red == Reduction::kNone ? po : nullptr);
      if (red == Reduction::kSum) po[0] = static_cast<T>(total);
      if (red == Reduction::kMean) po[0] = static_cast<T>(total / it.weight_sum);
    });
    double scale = red == Reduction::kMean && it.weight_sum != 0 ? 1 / it.weight_sum : 1.0;
    ctx->save_for_backward({target, weight});
    ctx->saved_data["args"] =
        IValue::of(Backward{args.ignore_index, red, l, input.dim(), input.dtype(), scale});
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const auto& p = ctx->saved_data["args"].to<Backward>();
    // g [] or [N, d...] . -q [N, C, d...] -> [N, C, d...]; q is one-hot * weight
    Tensor q = index_target_distribution(saved[0], saved[1], p.l, p.ndim, p.ignore_index, p.scale,
                                         0.0, p.dtype);
    return {broadcast_grad(grads[0], p.red, p.l.dim) * -q, Tensor(), Tensor(), Tensor()};
  }
  struct Backward {
    std::int64_t ignore_index;
    Reduction red;
    ClassLayout l;
    std::int64_t ndim;
    Dtype dtype;
    double scale;
  };
};

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     std::int64_t ignore_index, const std::string& reduction,
                     double label_smoothing) {
  MG_PROFILE_OP("cross_entropy");
  const char* op = "cross_entropy";
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Reduction red = parse_reduction(reduction, op);
  // NOTE: PyTorch 1.13 silently ignores a negative label_smoothing; minigrad rejects it.
  MG_CHECK(label_smoothing >= 0 && label_smoothing <= 1, op,
           "label_smoothing must be between 0.0 and 1.0, got ", label_smoothing);
  ClassLayout l = class_layout(input, op);
  // As PyTorch: a target with the input's shape holds probabilities, anything else class indices.
  if (target.shape() == input.shape())
    return cross_entropy_prob(input, target, weight, ignore_index, red, label_smoothing, l);
  return cross_entropy_index(input, target, weight, ignore_index, red, label_smoothing, l);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight_in,
                std::int64_t ignore_index, const std::string& reduction) {
  MG_PROFILE_OP("nll_loss");
  const char* op = "nll_loss";
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Reduction red = parse_reduction(reduction, op);
  ClassLayout l = class_layout(input, op);
  MG_CHECK(target.shape() == l.loss_shape, op, "input has shape ", input.shape(),
           ": target must have shape ", l.loss_shape, ", got ", target.shape());
  Tensor weight = check_class_weight(weight_in, l, input.dtype(), op);
  IndexTarget it = check_index_target(target, l, weight, ignore_index, op);
  return NllLossFn::apply(input, target, weight,
                          CrossEntropyArgs{ignore_index, red, 0.0, l, std::move(it)});
}

}  // namespace minigrad
