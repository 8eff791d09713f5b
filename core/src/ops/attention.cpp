// scaled_dot_product_attention: one fused op (Note [Flash attention on the CPU],
// kernels/attention.h) when there is no mask tensor and q, k, v share their batch dims; otherwise
// composed of matmul, softmax and the mask, as PyTorch's math path.
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/function.h"
#include "kernels/attention.h"
#include "kernels/dispatch.h"
#include "minigrad/ops/attention.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using Grads = std::vector<Tensor>;

namespace {

/// The additive bias of is_causal: 0 where key j <= query i, -inf above the diagonal.
Tensor causal_bias(std::int64_t L, std::int64_t S, Dtype dtype) {
  return zeros({L, S}, dtype).masked_fill(~ones({L, S}, kBool).tril(), -INFINITY);
}

/// Whether the fused kernel computes this call: no mask tensor, float32 / float64, nothing
/// empty, and q, k, v with the same batch dims (no broadcasting).
bool fusable(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask) {
  if (attn_mask.defined() || (q.dtype() != kFloat32 && q.dtype() != kFloat64)) return false;
  if (q.dim() != k.dim() || q.dim() != v.dim()) return false;
  if (q.numel() == 0 || k.numel() == 0 || v.numel() == 0) return false;
  for (std::int64_t i = 0; i + 2 < q.dim(); ++i)
    if (q.size(i) != k.size(i) || q.size(i) != v.size(i)) return false;
  return true;
}

/// t (its last dim adjacent, rows at least a row apart) read in place by the kernel, with one
/// offset per slice of its batch dims; any other layout is copied first.
struct InPlace {
  explicit InPlace(const Tensor& x) {
    const std::int64_t n = x.dim();
    const bool usable = (x.size(-1) == 1 || x.stride(-1) == 1) && x.stride(-2) >= x.size(-1);
    t = usable ? x.detach() : x.detach().contiguous();
    ld = t.size(-2) == 1 ? t.size(-1) : t.stride(-2);
    offsets.assign(1, 0);
    for (std::int64_t i = 0; i + 2 < n; ++i) {  // row-major over the batch dims
      std::vector<std::int64_t> next;
      next.reserve(offsets.size() * static_cast<std::size_t>(t.size(i)));
      for (std::int64_t o : offsets)
        for (std::int64_t j = 0; j < t.size(i); ++j) next.push_back(o + j * t.stride(i));
      offsets.swap(next);
    }
  }
  template <typename T>
  detail::attention::Operand<T> operand() const {
    return {t.impl()->data<T>(), offsets.data(), std::max<std::int64_t>(ld, 1)};
  }
  Tensor t;
  std::vector<std::int64_t> offsets;
  std::int64_t ld;
};

detail::attention::Dims dims_of(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                                double scale) {
  const std::int64_t L = q.size(-2), S = k.size(-2), E = q.size(-1), Ev = v.size(-1);
  return {q.numel() / (L * E), L, S, E, Ev, is_causal, scale};
}

/// ScaledDotProductFlashAttentionBackward0: saved q, k, v, the output and the log-sum-exp.
Grads flash_backward(const Tensor& g, FunctionNode& n, bool is_causal, double scale) {
  Tensor q = n.saved(0), k = n.saved(1), v = n.saved(2);
  if (is_grad_enabled()) {
    // create_graph: the gradient in public ops, so it is differentiable again.
    // p = softmax(q k^T * scale (+ causal bias)); dv = p^T g; dp = g v^T;
    // ds = p * (dp - sum(dp * p, -1)); dq = ds k * scale; dk = ds^T q * scale
    Tensor scores = matmul(q, k.transpose(-2, -1)) * scale;
    if (is_causal) scores = scores + causal_bias(q.size(-2), k.size(-2), q.dtype());
    Tensor p = softmax(scores, -1);
    Tensor dp = matmul(g, v.transpose(-2, -1));
    Tensor ds = p * (dp - sum(dp * p, {-1}, /*keepdim=*/true));
    return Grads{n.needs_input_grad(0) ? matmul(ds, k) * scale : Tensor(),
                 n.needs_input_grad(1) ? matmul(ds.transpose(-2, -1), q) * scale : Tensor(),
                 n.needs_input_grad(2) ? matmul(p.transpose(-2, -1), g) : Tensor()};
  }
  // Recomputes the probabilities tile by tile (Note [Flash attention on the CPU]).
  const auto d = dims_of(q, k, v, is_causal, scale);
  const InPlace qi(q), ki(k), vi(v), gi(g);
  Tensor out = n.saved(3).detach(), lse = n.saved(4);
  Tensor dq = detail::make_tensor(q.shape(), q.dtype());
  Tensor dk = detail::make_tensor(k.shape(), k.dtype());
  Tensor dv = detail::make_tensor(v.shape(), v.dtype());
  detail::dispatch_floating(q.dtype(), "scaled_dot_product_attention", [&]<typename T>() {
    detail::attention::backward<T>(qi.operand<T>(), ki.operand<T>(), vi.operand<T>(),
                                   out.impl()->data<T>(), lse.impl()->data<T>(), gi.operand<T>(),
                                   dq.impl()->data<T>(), dk.impl()->data<T>(), dv.impl()->data<T>(),
                                   d);
  });
  return Grads{n.needs_input_grad(0) ? dq : Tensor(), n.needs_input_grad(1) ? dk : Tensor(),
               n.needs_input_grad(2) ? dv : Tensor()};
}

Tensor fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool is_causal,
                       double scale) {
  const auto d = dims_of(q, k, v, is_causal, scale);
  const InPlace qi(q), ki(k), vi(v);
  Shape out_shape = q.shape();
  out_shape.back() = d.Ev;
  Shape lse_shape = q.shape();
  lse_shape.pop_back();
  Tensor out = detail::make_tensor(out_shape, q.dtype());
  Tensor lse = detail::make_tensor(lse_shape, q.dtype());
  detail::dispatch_floating(q.dtype(), "scaled_dot_product_attention", [&]<typename T>() {
    detail::attention::forward<T>(qi.operand<T>(), ki.operand<T>(), vi.operand<T>(),
                                  out.impl()->data<T>(), lse.impl()->data<T>(), d);
  });
  detail::record("ScaledDotProductFlashAttentionBackward0", out, {&q, &k, &v},
                 {&q, &k, &v, kOutput, &lse}, [is_causal, scale](const Tensor& g, FunctionNode& n) {
                   return flash_backward(g, n, is_causal, scale);
                 });
  return out;
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask, bool is_causal,
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
  MG_CHECK(q.dtype() == k.dtype() && k.dtype() == v.dtype(), op,
           "q, k and v must have the same dtype, got ", dtype_name(q.dtype()), ", ",
           dtype_name(k.dtype()), " and ", dtype_name(v.dtype()));
  MG_CHECK(!attn_mask.defined() || attn_mask.dtype() == kBool || attn_mask.dtype() == q.dtype(), op,
           "attn_mask must be bool or have q's dtype (", dtype_name(q.dtype()), "), got ",
           dtype_name(attn_mask.dtype()));
  double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  if (fusable(q, k, v, attn_mask)) return fused_attention(q, k, v, is_causal, s);
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;  // [..., L, S]
  std::int64_t L = q.size(-2), S = k.size(-2);
  // A bool mask (or is_causal: query i may attend to keys j <= i) becomes a bias of 0 and -inf
  // added to the scores, as PyTorch's math path: a NaN score stays NaN where it is masked.
  if (is_causal)
    scores = scores + causal_bias(L, S, q.dtype());
  else if (attn_mask.defined())
    scores = scores + (attn_mask.dtype() == kBool
                           ? zeros(attn_mask.shape(), q.dtype()).masked_fill(~attn_mask, -INFINITY)
                           : attn_mask);
  return matmul(softmax(scores, -1), v);
}

}  // namespace minigrad
