// softmax and log_softmax: fused, numerically stable kernels (the row max is subtracted before
// exp, so logits of 1e4 give no inf or NaN), with backward formulas written in public ops.
// The row kernels are in kernels/softmax.{h,cpp}: float32 runs the AVX2 / AVX-512 kernels of
// kernels/softmax_simd_impl.h when the CPU has them (Note [Runtime SIMD dispatch]); float64, and
// float32 on other CPUs, the portable code there.
#include <array>
#include <cmath>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/softmax.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/reduce.h"
#include "parallel.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using Grads = std::vector<Tensor>;

namespace {

/// (outer, n, inner) of a contiguous shape around dim d.
std::array<std::int64_t, 3> split_dims(const Shape& shape, std::int64_t d) {
  std::array<std::int64_t, 3> r{1, 1, 1};
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(shape.size()); ++i)
    r[i < d ? 0 : (i == d ? 1 : 2)] *= shape[i];
  return r;
}

/// Blocks of `row` elements per parallel chunk (Note [Intra-op parallelism]): a softmax element
/// costs a few cheap ops, so a chunk holds about kGrainSize / 4 of them.
std::int64_t rows_grain(std::int64_t row) {
  return std::max<std::int64_t>(1, detail::kGrainSize / 4 / std::max<std::int64_t>(row, 1));
}

/// Runs the softmax (or log_softmax) of x along dim into a new contiguous tensor.
template <bool kLog>
Tensor softmax_forward(const Tensor& x_in, std::int64_t dim, const char* op) {
  MG_CHECK(x_in.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Tensor x = x_in.is_floating_point() ? x_in : x_in.to(get_default_dtype());
  std::int64_t d = detail::wrap_dim(dim, x.dim(), op);
  x = x.detach().contiguous();
  Tensor out = detail::make_tensor(x.shape(), x.dtype());
  // Plain variables, not a structured binding: clang 14 cannot capture those in a lambda.
  const auto dims = split_dims(x.shape(), d);
  const std::int64_t outer = dims[0], n = dims[1], inner = dims[2];
  // An empty tensor has no rows, but outer or inner alone may be non-zero: (2, 0, 3) over dim 1
  // must not read row[0] (fuzz finding F7).
  if (out.numel() == 0) return out;
  detail::dispatch_floating(x.dtype(), op, [&]<typename T>() {
    const T* px = x.impl()->data<T>();
    T* po = out.impl()->data<T>();
    const std::int64_t row = n * inner;
    detail::parallel_for(0, outer, rows_grain(row), [&](std::int64_t ob, std::int64_t oe) {
      detail::softmax::forward_rows<T>(px + ob * row, po + ob * row, oe - ob, n, inner, kLog);
    });
  });
  return out;
}

// Note [Fused softmax backward]
// Without create_graph the engine runs backward in no-grad mode; softmax and log_softmax then
// compute their input gradient in one fused pass per row instead of four ops (and four
// allocations) of the composite formula. With create_graph (grad mode on) the composite formula in
// public ops runs, so higher-order gradients still work.

/// Whether the fused backward applies: no graph to build, gradient of the output's dtype.
bool fused_backward_ok(const Tensor& g, const Tensor& y) {
  return !is_grad_enabled() && g.defined() && g.dtype() == y.dtype() && g.shape() == y.shape() &&
         y.is_contiguous();
}

/// softmax: grad_x = y * (g - sum(g * y, dim)); log_softmax: grad_x = g - exp(y) * sum(g, dim).
template <bool kLog>
Tensor softmax_backward_fused(const Tensor& g_in, const Tensor& y, std::int64_t d) {
  Tensor g = g_in.contiguous();
  Tensor gx = detail::make_tensor(y.shape(), y.dtype());
  const auto dims = split_dims(y.shape(), d);
  const std::int64_t outer = dims[0], n = dims[1], inner = dims[2];
  if (gx.numel() == 0) return gx;  // as the forward (fuzz finding F7)
  detail::dispatch_floating(y.dtype(), "softmax_backward", [&]<typename T>() {
    const T* pg = g.impl()->data<T>();
    const T* py = y.impl()->data<T>();
    T* px = gx.impl()->data<T>();
    const std::int64_t row = n * inner;
    detail::parallel_for(0, outer, rows_grain(row), [&](std::int64_t ob, std::int64_t oe) {
      detail::softmax::backward_rows<T>(pg + ob * row, py + ob * row, px + ob * row, oe - ob, n,
                                        inner, kLog);
    });
  });
  return gx;
}

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("softmax");
  Tensor out = softmax_forward<false>(x, dim, "softmax");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "softmax");
  detail::record("SoftmaxBackward0", out, {&x}, {kOutput}, [d](const Tensor& g, FunctionNode& n) {
    // grad_x = y * (g - sum(g * y, dim)), fused without create_graph
    // (Note [Fused softmax backward]).
    Tensor y = n.saved(0);
    if (fused_backward_ok(g, y)) return Grads{softmax_backward_fused<false>(g, y, d)};
    return Grads{y * (g - sum(g * y, {d}, /*keepdim=*/true))};
  });
  return out;
}

Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("log_softmax");
  Tensor out = softmax_forward<true>(x, dim, "log_softmax");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "log_softmax");
  detail::record("LogSoftmaxBackward0", out, {&x}, {kOutput},
                 [d](const Tensor& g, FunctionNode& n) {
                   // grad_x = g - exp(y) * sum(g, dim), fused without create_graph
                   // (Note [Fused softmax backward]).
                   Tensor y = n.saved(0);
                   if (fused_backward_ok(g, y)) return Grads{softmax_backward_fused<true>(g, y, d)};
                   return Grads{g - exp(y) * sum(g, {d}, /*keepdim=*/true)};
                 });
  return out;
}

}  // namespace minigrad
