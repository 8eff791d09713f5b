// Reductions: sum, mean, max/min (values and indices), amax/amin, argmax/argmin, var/std,
// logsumexp, norm: checks, outputs and backward here; the loops (reduce_rows and the kernels on
// it) in kernels/reduce.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/reduce.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using detail::record;
using Grads = std::vector<Tensor>;

namespace {

/// Which dims a reduction removes: an empty list means all of them.
struct ReduceDims {
  std::vector<bool> reduced;
  Shape dims;          // sorted, wrapped
  Shape keep_shape;    // output shape with keepdim
  Shape out_shape;     // output shape as requested
  std::int64_t count;  // elements reduced into each output
};

ReduceDims plan(const Tensor& x, const Shape& dims, bool keepdim, const char* op) {
  MG_CHECK(x.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  ReduceDims r;
  auto nd = x.dim();
  r.reduced.assign(static_cast<std::size_t>(nd), dims.empty());
  for (auto d : dims) {
    std::int64_t w = detail::wrap_dim(d, nd, op);
    if (nd == 0) continue;
    MG_CHECK(!r.reduced[w], op, "dim ", d, " appears multiple times in the list of dims ", dims);
    r.reduced[w] = true;
  }
  r.count = 1;
  for (std::int64_t d = 0; d < nd; ++d) {
    if (r.reduced[d]) {
      r.dims.push_back(d);
      r.count *= x.shape()[d];
      r.keep_shape.push_back(1);
      if (keepdim) r.out_shape.push_back(1);
    } else {
      r.keep_shape.push_back(x.shape()[d]);
      r.out_shape.push_back(x.shape()[d]);
    }
  }
  return r;
}

/// x's strided layout split by r (kernels/reduce.h).
detail::ReduceLayout layout(const Tensor& x, const ReduceDims& r) {
  return detail::reduce_layout(x.shape(), x.strides(), r.reduced);
}

/// Whether r sums some leading dims (not all) of a contiguous, non-empty x (a Linear bias's
/// gradient: [B, T, C] -> [C]): then sum_leading_rows (kernels/reduce.h) walks it row by row.
bool sums_leading_dims(const Tensor& x, const ReduceDims& r) {
  const auto nd = static_cast<std::size_t>(x.dim());
  const std::size_t k = r.dims.size();
  if (k == 0 || k >= nd || !x.is_contiguous()) return false;
  for (std::size_t d = 0; d < k; ++d)
    if (r.dims[d] != static_cast<std::int64_t>(d)) return false;
  return r.count != 0 && x.numel() != 0;
}

/// g (shaped like the reduction's output) reshaped to keepdim form, ready to broadcast over x.
Tensor to_keepdim(const Tensor& g, const ReduceDims& r) { return g.reshape(r.keep_shape); }

}  // namespace

// ---------------------------------------------------------------- sum, mean

Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("sum");
  ReduceDims r = plan(x, dims, keepdim, "sum");
  Dtype dt = x.is_floating_point() ? x.dtype() : kInt64;
  Tensor out = detail::make_tensor(r.out_shape, dt);
  detail::dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* po = out.impl()->data<T>();
      if (sums_leading_dims(x, r))
        detail::sum_leading_rows<T>(x.impl()->data<T>(), r.count, x.numel() / r.count, po);
      else
        detail::sum_kernel<T, T>(x.impl()->data<T>(), layout(x, r), po);
    } else {
      detail::sum_kernel<T, std::int64_t>(x.impl()->data<T>(), layout(x, r),
                                          out.impl()->data<std::int64_t>());
    }
  });
  Shape in_shape = x.shape();
  record(dims.empty() ? "SumBackward0" : "SumBackward1", out, {&x},
         [r, in_shape](const Tensor& g, FunctionNode&) {
           return Grads{to_keepdim(g, r).expand(in_shape)};
         });
  return out;
}

Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("mean");
  MG_CHECK(x.defined(), "mean",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.is_floating_point(), "mean", "could not infer output dtype: input dtype must be ",
           "floating point, got ", dtype_name(x.dtype()));
  ReduceDims r = plan(x, dims, keepdim, "mean");
  Tensor s;
  {
    NoGradGuard no_grad;
    s = sum(x, dims, keepdim) / static_cast<double>(r.count);
  }
  Shape in_shape = x.shape();
  auto count = static_cast<double>(r.count);
  record(dims.empty() ? "MeanBackward0" : "MeanBackward1", s, {&x},
         [r, in_shape, count](const Tensor& g, FunctionNode&) {
           return Grads{to_keepdim(g, r).expand(in_shape) / count};
         });
  return s;
}

// ---------------------------------------------------------------- max, min, amax, amin, argmax

namespace {

/// Values (and, if wanted, flat indices within the reduced dims) of the max or min.
template <bool kMax>
std::pair<Tensor, Tensor> extreme(const Tensor& x, const ReduceDims& r, bool want_indices,
                                  const char* op) {
  MG_CHECK(r.count > 0, op, "cannot reduce over a zero-size dimension (input shape ", x.shape(),
           "): the operation has no identity");
  Tensor values = detail::make_tensor(r.out_shape, x.dtype());
  Tensor indices = want_indices ? detail::make_tensor(r.out_shape, kInt64) : Tensor();
  detail::dispatch(x.dtype(), [&]<typename T>() {
    detail::extreme_kernel<kMax, T>(x.impl()->data<T>(), layout(x, r), values.impl()->data<T>(),
                                    want_indices ? indices.impl()->data<std::int64_t>() : nullptr);
  });
  return {values, indices};
}

/// The gradient of amax/amin/max(): shared evenly among the elements equal to the result.
Tensor evenly_distribute(const Tensor& g, const Tensor& x, const Tensor& result,
                         const ReduceDims& r, bool nan_to_nan = false, bool none_to_zero = false) {
  Tensor rk = to_keepdim(result, r);
  Tensor hit = x == rk;
  // NOTE: max() and min() send a NaN result's gradient to the NaN elements, as PyTorch's
  // evenly_distribute_backward (amax/amin give NaN everywhere, as PyTorch 1.13).
  if (nan_to_nan) hit = logical_or(hit, logical_and(x != x, rk != rk));
  Tensor mask = hit.to(g.dtype());
  Tensor count = sum(mask, r.dims, /*keepdim=*/true);
  // The inf-norm of a row holding NaN matches no element: its gradient is 0 there, as PyTorch's.
  if (none_to_zero) count = clamp(count, 1.0);
  return to_keepdim(g, r) * mask / count;
}

template <bool kMax>
Tensor amax_impl(const Tensor& x, const Shape& dims, bool keepdim, const char* op, const char* node,
                 bool nan_to_nan = false) {
  ReduceDims r = plan(x, dims, keepdim, op);
  Tensor out = extreme<kMax>(x, r, false, op).first;
  record(node, out, {&x}, {&x, kOutput}, [r, nan_to_nan](const Tensor& g, FunctionNode& n) {
    return Grads{evenly_distribute(g, n.saved(0), n.saved(1), r, nan_to_nan)};
  });
  return out;
}

template <bool kMax>
std::tuple<Tensor, Tensor> max_dim_impl(const Tensor& x, std::int64_t dim, bool keepdim,
                                        const char* op, const char* node) {
  ReduceDims r = plan(x, {dim}, keepdim, op);
  auto [values, indices] = extreme<kMax>(x, r, true, op);
  std::int64_t d = x.dim() == 0 ? 0 : detail::wrap_dim(dim, x.dim(), op);
  Shape in_shape = x.shape();
  Tensor idx_k = indices.reshape(r.keep_shape);
  record(node, values, {&x}, {&idx_k}, [r, in_shape, d](const Tensor& g, FunctionNode& n) {
    // The gradient goes to the selected index of each row.
    if (in_shape.empty()) return Grads{g.reshape(in_shape)};
    return Grads{scatter_add(zeros(in_shape, g.dtype()), d, n.saved(0), to_keepdim(g, r))};
  });
  return {values, indices};
}

}  // namespace

Tensor max(const Tensor& x) {
  MG_PROFILE_OP("max");
  return amax_impl<true>(x, {}, false, "max", "MaxBackward1", true);
}
Tensor min(const Tensor& x) {
  MG_PROFILE_OP("min");
  return amax_impl<false>(x, {}, false, "min", "MinBackward1", true);
}
std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim) {
  MG_PROFILE_OP("max");
  return max_dim_impl<true>(x, dim, keepdim, "max", "MaxBackward0");
}
std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim) {
  MG_PROFILE_OP("min");
  return max_dim_impl<false>(x, dim, keepdim, "min", "MinBackward0");
}
Tensor amax(const Tensor& x, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("amax");
  return amax_impl<true>(x, dims, keepdim, "amax", "AmaxBackward0");
}
Tensor amin(const Tensor& x, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("amin");
  return amax_impl<false>(x, dims, keepdim, "amin", "AminBackward0");
}

Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  MG_PROFILE_OP("argmax");
  MG_CHECK(x.defined(), "argmax",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  if (!dim) {
    Tensor flat = x.reshape({-1});
    return extreme<true>(flat, plan(flat, {0}, false, "argmax"), true, "argmax").second;
  }
  return extreme<true>(x, plan(x, {*dim}, keepdim, "argmax"), true, "argmax").second;
}

Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim, bool keepdim) {
  MG_PROFILE_OP("argmin");
  MG_CHECK(x.defined(), "argmin",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  if (!dim) {
    Tensor flat = x.reshape({-1});
    return extreme<false>(flat, plan(flat, {0}, false, "argmin"), true, "argmin").second;
  }
  return extreme<false>(x, plan(x, {*dim}, keepdim, "argmin"), true, "argmin").second;
}

// ---------------------------------------------------------------- var, std, logsumexp, norm
// Forward values are computed with the ops above under NoGradGuard; each gets its own node.

Tensor var(const Tensor& x, const Shape& dims, double correction, bool keepdim) {
  MG_PROFILE_OP("var");
  MG_CHECK(x.defined(), "var",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.is_floating_point(), "var", "expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  ReduceDims r = plan(x, dims, keepdim, "var");
  double denom = std::max(0.0, static_cast<double>(r.count) - correction);
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor dev = x - mean(x, r.dims, true);
    out = sum(dev * dev, r.dims, keepdim) / denom;
  }
  record("VarBackward0", out, {&x}, {&x}, [r, denom](const Tensor& g, FunctionNode& n) {
    // d var / dx = 2 (x - mean) / (N - correction)
    Tensor self = n.saved(0);
    return Grads{to_keepdim(g, r) * (2.0 / denom) * (self - mean(self, r.dims, true))};
  });
  return out;
}

Tensor std(const Tensor& x, const Shape& dims, double correction, bool keepdim) {
  MG_PROFILE_OP("std");
  MG_CHECK(x.defined(), "std",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.is_floating_point(), "std", "expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  ReduceDims r = plan(x, dims, keepdim, "std");
  double denom = std::max(0.0, static_cast<double>(r.count) - correction);
  Tensor out;
  {
    NoGradGuard no_grad;
    out = sqrt(var(x, dims, correction, keepdim));
  }
  record("StdBackward0", out, {&x}, {&x, kOutput}, [r, denom](const Tensor& g, FunctionNode& n) {
    // d std / dx = (self - mean) / ((N - correction) std); zero where std == 0, as PyTorch
    Tensor self = n.saved(0), s = to_keepdim(n.saved(1), r);
    Tensor grad = to_keepdim(g, r) * (self - mean(self, r.dims, true)) / (s * denom);
    return Grads{where(s == 0, 0.0, grad)};
  });
  return out;
}

Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("logsumexp");
  MG_CHECK(x.defined(), "logsumexp",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Tensor xf = x.is_floating_point() ? x : x.to(get_default_dtype());
  ReduceDims r = plan(xf, dims, keepdim, "logsumexp");
  Tensor out;
  {
    NoGradGuard no_grad;
    if (r.count == 0) {
      out = full(r.out_shape, -INFINITY, xf.dtype());
    } else {
      // Subtract the max first; an infinite max is replaced by 0 so inf - inf never appears.
      Tensor m = amax(xf, r.dims, true);
      m = where(m.abs() == INFINITY, 0.0, m);
      out = (log(sum(exp(xf - m), r.dims, true)) + m).reshape(r.out_shape);
    }
  }
  record("LogsumexpBackward0", out, {&xf}, {&xf, kOutput}, [r](const Tensor& g, FunctionNode& n) {
    return Grads{to_keepdim(g, r) * exp(n.saved(0) - to_keepdim(n.saved(1), r))};
  });
  return out;
}

Tensor norm(const Tensor& x, double p, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("norm");
  MG_CHECK(x.defined(), "norm",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.is_floating_point(), "norm", "expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  MG_CHECK(p > 0, "norm", "p must be positive (got ", p, ")");
  ReduceDims r = plan(x, dims, keepdim, "norm");
  Tensor out;
  {
    NoGradGuard no_grad;
    if (std::isinf(p))
      out = r.count ? amax(abs(x), r.dims, keepdim) : zeros(r.out_shape, x.dtype());
    else if (p == 1)
      out = sum(abs(x), r.dims, keepdim);
    else if (p == 2 && x.numel() > 0 && r.count == x.numel() && x.is_contiguous()) {
      // The whole tensor (clip_grad_norm_ takes one norm per parameter): one pass, no x * x.
      out = detail::make_tensor(r.out_shape, x.dtype());
      detail::dispatch_floating(x.dtype(), "norm", [&]<typename T>() {
        *out.impl()->data<T>() =
            static_cast<T>(std::sqrt(detail::sum_of_squares(x.impl()->data<T>(), x.numel())));
      });
    } else if (p == 2)  // no abs
      out = sqrt(sum(x * x, r.dims, keepdim));
    else
      out = pow(sum(pow(abs(x), p), r.dims, keepdim), 1.0 / p);
  }
  record("NormBackward1", out, {&x}, {&x, kOutput}, [r, p](const Tensor& g, FunctionNode& n) {
    Tensor self = n.saved(0), norm = n.saved(1);
    Tensor gk = to_keepdim(g, r);
    Tensor nk = to_keepdim(norm, r);
    if (p == 1) return Grads{gk * sign(self)};
    if (std::isinf(p))
      return Grads{sign(self) * evenly_distribute(g, abs(self), norm, r, false, true)};
    // d ||x||_p / dx = x |x|^(p-2) / ||x||^(p-1); zero where the norm is 0, as PyTorch
    Tensor grad = p == 2 ? gk * self / nk : gk * self * pow(abs(self), p - 2) / pow(nk, p - 1);
    return Grads{where(nk == 0, 0.0, grad)};
  });
  return out;
}

}  // namespace minigrad

namespace minigrad {

// ---------------------------------------------------------------- var_mean, std_mean

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const Shape& dims, double correction,
                                    bool keepdim) {
  MG_PROFILE_OP("var_mean");
  MG_CHECK(x.defined(), "var_mean",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.is_floating_point(), "var_mean", "expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  plan(x, dims, keepdim, "var_mean");
  Tensor v = var(x, dims, correction, keepdim);
  return {v, mean(x, dims, keepdim)};
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& x, const Shape& dims, double correction,
                                    bool keepdim) {
  MG_PROFILE_OP("std_mean");
  MG_CHECK(x.defined(), "std_mean",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.is_floating_point(), "std_mean", "expected a floating-point tensor, got ",
           dtype_name(x.dtype()));
  plan(x, dims, keepdim, "std_mean");
  Tensor s = std(x, dims, correction, keepdim);
  return {s, mean(x, dims, keepdim)};
}

// ---------------------------------------------------------------- all, any

namespace {

/// all (kAll) or any of x's elements over r, as bool; empty reductions give true / false.
template <bool kAll>
Tensor all_any(const Tensor& x, const ReduceDims& r) {
  Tensor out = detail::make_tensor(r.out_shape, kBool);
  detail::dispatch(x.dtype(), [&]<typename T>() {
    detail::all_any_kernel<kAll, T>(x.impl()->data<T>(), layout(x, r), out.impl()->data<bool>());
  });
  return out;
}

}  // namespace

Tensor all(const Tensor& x) {
  MG_PROFILE_OP("all");
  return all_any<true>(x, plan(x, {}, false, "all"));
}
Tensor all(const Tensor& x, std::int64_t dim, bool keepdim) {
  MG_PROFILE_OP("all");
  return all_any<true>(x, plan(x, {dim}, keepdim, "all"));
}
Tensor any(const Tensor& x) {
  MG_PROFILE_OP("any");
  return all_any<false>(x, plan(x, {}, false, "any"));
}
Tensor any(const Tensor& x, std::int64_t dim, bool keepdim) {
  MG_PROFILE_OP("any");
  return all_any<false>(x, plan(x, {dim}, keepdim, "any"));
}

// ---------------------------------------------------------------- cumsum

Tensor cumsum(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("cumsum");
  MG_CHECK(x.defined(), "cumsum",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "cumsum");
  Dtype dt = x.is_floating_point() ? x.dtype() : kInt64;
  Tensor xc = x.detach().contiguous();
  Tensor out = detail::make_tensor(x.shape(), dt);
  std::int64_t n = x.dim() == 0 ? 1 : x.shape()[d], inner = 1;
  for (std::int64_t k = d + 1; k < x.dim(); ++k) inner *= x.shape()[k];
  std::int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  detail::dispatch(x.dtype(), [&]<typename T>() {
    const T* px = xc.impl()->data<T>();
    if constexpr (std::is_floating_point_v<T>)
      detail::cumsum_kernel<T, T>(px, outer, n, inner, out.impl()->data<T>());
    else
      detail::cumsum_kernel<T, std::int64_t>(px, outer, n, inner, out.impl()->data<std::int64_t>());
  });
  record("CumsumBackward0", out, {&x}, [d](const Tensor& g, FunctionNode&) {
    // grad_x[k] = sum_{j >= k} grad[j]: a reversed cumsum.
    if (g.dim() == 0) return Grads{g};
    return Grads{flip(cumsum(flip(g, {d}), d), {d})};
  });
  return out;
}

}  // namespace minigrad
