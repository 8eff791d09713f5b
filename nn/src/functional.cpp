// nn::functional and nn::utils.
#include "minigrad/nn/functional.h"

#include <algorithm>
#include <cmath>

#include "loss_common.h"
#include "minigrad/nn/utils.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/random.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"

namespace minigrad::nn::functional {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  MG_PROFILE_OP("linear");
  MG_CHECK(x.defined() && weight.defined(), "linear",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(weight.dim() == 2, "linear", "weight must be 2-D [out, in], got shape ", weight.shape());
  MG_CHECK(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear", "input of shape ", x.shape(),
           " and weight of shape ", weight.shape(), ": input.shape[-1] (",
           x.dim() >= 1 ? x.size(-1) : 0, ") must equal weight.shape[1] (", weight.size(1), ")");
  // weight.t() is a view: BLAS reads it with a transpose flag (Note [GEMM without copies]).
  if (!bias.defined()) return matmul(x, weight.t());
  MG_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), "linear", "bias of shape ",
           bias.shape(), " does not match out_features = ", weight.size(0));
  // The bias rides in the GEMM (Note [Fused addmm]), as PyTorch's linear: a 2-D input is addmm
  // (AddmmBackward0); one with more dims is viewed as its rows [-1, in] and back (ViewBackward0),
  // as PyTorch does for a contiguous 3-D input. A strided one (nn::MultiheadAttention's
  // batch-first input, transposed) is copied first (CloneBackward0): PyTorch's matmul copies it
  // too, then adds the bias in a second pass. Others (1-D, no elements, mixed dtypes: matmul
  // reports them) are a matmul and an add.
  const bool one_dtype = x.dtype() == weight.dtype() && bias.dtype() == weight.dtype();
  if (one_dtype && x.dim() == 2) return addmm(bias, x, weight.t());
  if (one_dtype && x.dim() > 2 && x.numel() > 0) {
    Shape out_shape = x.shape();
    out_shape.back() = weight.size(0);
    return addmm(bias, x.contiguous().view({-1, x.size(-1)}), weight.t()).view(out_shape);
  }
  return matmul(x, weight.t()) + bias;
}

Tensor relu(const Tensor& x) { return minigrad::relu(x); }
Tensor gelu(const Tensor& x, const std::string& approximate) {
  return minigrad::gelu(x, approximate);
}
Tensor silu(const Tensor& x) { return minigrad::silu(x); }
Tensor mish(const Tensor& x) { return minigrad::mish(x); }
Tensor softmax(const Tensor& x, std::int64_t dim) { return minigrad::softmax(x, dim); }
Tensor log_softmax(const Tensor& x, std::int64_t dim) { return minigrad::log_softmax(x, dim); }

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  MG_PROFILE_OP("mse_loss");
  MG_CHECK(input.defined() && target.defined(), "mse_loss",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(input.shape() == target.shape(), "mse_loss", "input has shape ", input.shape(),
           " but target has shape ", target.shape(), "; they must match");
  const Reduction::Reduction red = detail::parse_reduction(reduction, "mse_loss");
  Tensor d = input - target;
  return detail::reduce(d * d, red);
}

// Note [SDPA dropout]
// PyTorch 2's math path drops attention weights with at::dropout(softmax(...), dropout_p,
// /*train=*/true). torch 1.13's CPU dropout (no MKL, as Debian's python3-torch) is
// input * (noise.bernoulli_(1 - p) / (1 - p)), and bernoulli_(double) on CPU keeps element i when
// the i-th uniform double of the generator, in row-major order, is < 1 - p: the same draws as
// torch.rand(shape, dtype=torch.float64), which minigrad's rand(shape, kFloat64) reproduces bit
// for bit (tests/data/torch_rng_golden.h). So the weights here are dropped with PyTorch's mask
// for the same seed, which F::dropout (Note [Dropout stream]) does not give. p == 1 multiplies by
// zero and p == 0 draws nothing, as torch's _dropout.
namespace {
Tensor attention_dropout(const Tensor& weights, double p) {
  if (p == 0 || weights.numel() == 0) return weights;
  if (p == 1) return weights * zeros({}, weights.dtype());
  Tensor noise;
  {
    NoGradGuard no_grad;
    noise = (rand(weights.shape(), kFloat64) < Scalar(1.0 - p)).to(weights.dtype()) / (1.0 - p);
  }
  return weights * noise;
}
}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  MG_PROFILE_OP("scaled_dot_product_attention");
  const char* op = "scaled_dot_product_attention";
  MG_CHECK(q.defined() && k.defined() && v.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, op,
           "q, k and v need at least 2 dims, got shapes ", q.shape(), ", ", k.shape(), ", ",
           v.shape());
  MG_CHECK(q.size(-1) == k.size(-1), op, "q has shape ", q.shape(), " and k has shape ", k.shape(),
           ": their last dims (embedding sizes) must match");
  MG_CHECK(k.size(-2) == v.size(-2), op, "k has shape ", k.shape(), " and v has shape ", v.shape(),
           ": they must have the same number of keys (dim -2)");
  MG_CHECK(!(is_causal && attn_mask.defined()), op, "pass either attn_mask or is_causal, not both");
  MG_CHECK(dropout_p >= 0 && dropout_p <= 1, op, "dropout_p must be in [0, 1], got ", dropout_p,
           " (PyTorch's order is (q, k, v, attn_mask, dropout_p, is_causal, scale))");
  MG_CHECK(q.dtype() == k.dtype() && k.dtype() == v.dtype(), op,
           "q, k and v must have the same dtype, got ", dtype_name(q.dtype()), ", ",
           dtype_name(k.dtype()), " and ", dtype_name(v.dtype()));
  MG_CHECK(!attn_mask.defined() || attn_mask.dtype() == kBool || attn_mask.dtype() == q.dtype(), op,
           "attn_mask must be bool or have q's dtype (", dtype_name(q.dtype()), "), got ",
           dtype_name(attn_mask.dtype()));
  double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;  // [..., L, S]
  std::int64_t L = q.size(-2), S = k.size(-2);
  // A bool mask (or is_causal: query i may attend to keys j <= i) becomes a bias of 0 and -inf
  // added to the scores, as PyTorch's math path: a NaN score stays NaN where it is masked.
  auto bias_of = [&](const Tensor& keep) {
    return zeros(keep.shape(), q.dtype()).masked_fill(~keep, -INFINITY);
  };
  if (is_causal)
    scores = scores + bias_of(ones({L, S}, kBool).tril());
  else if (attn_mask.defined())
    scores = scores + (attn_mask.dtype() == kBool ? bias_of(attn_mask) : attn_mask);
  return matmul(attention_dropout(minigrad::softmax(scores, -1), dropout_p), v);
}

}  // namespace minigrad::nn::functional

namespace minigrad::nn::utils {

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  MG_CHECK(norm_type > 0, "clip_grad_norm_", "norm_type must be positive, got ", norm_type);
  std::vector<Tensor> grads;
  for (const auto& p : params)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return scalar_tensor(0.0);
  NoGradGuard no_grad;
  std::vector<Tensor> norms;
  for (const auto& g : grads) norms.push_back(norm(g, norm_type).reshape({1}));
  Tensor total = norm(cat(norms, 0), norm_type);
  const double total_norm = total.item<double>();
  MG_CHECK(!error_if_nonfinite || std::isfinite(total_norm), "clip_grad_norm_",
           "the total norm of order ", norm_type, " for gradients from parameters is non-finite (",
           total_norm,
           "), so it cannot be clipped. To disable this error and scale the gradients "
           "by the non-finite norm anyway, set error_if_nonfinite = false");
  // std::min keeps a nan coefficient (a nan norm makes the gradients nan, as PyTorch's clamp).
  const double coef = std::min(max_norm / (total_norm + 1e-6), 1.0);
  // In place, as PyTorch's p.grad.detach().mul_(clip_coef_clamped): whoever holds the gradient
  // sees it scaled, and no new tensor is made per parameter.
  if (!(coef >= 1.0))
    for (Tensor& g : grads) g.mul_(coef);
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value) {
  NoGradGuard no_grad;
  for (const auto& p : params)
    if (p.defined() && p.grad().defined()) p.grad().clamp_(-clip_value, clip_value);  // in place
}

}  // namespace minigrad::nn::utils
