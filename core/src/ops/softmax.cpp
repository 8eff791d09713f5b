// softmax and log_softmax: fused, numerically stable kernels (the row max is subtracted before
// exp, so logits of 1e4 give no inf or NaN), with backward formulas written in public ops.
// float32 runs the AVX2 / AVX-512 kernels of kernels/softmax_simd_impl.h when the CPU has them
// (Note [Runtime SIMD dispatch]); float64, and float32 on other CPUs, the portable code below.
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/simd.h"
#include "kernels/xt.h"
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

/// Max of n contiguous values, ignoring NaN (NaN reaches the result through the sum of exps).
/// Eight independent lanes break the dependency chain so the loop vectorises.
template <typename T>
T row_max(const T* x, std::int64_t n) {
  constexpr int kLanes = 8;
  T m[kLanes];
  for (int l = 0; l < kLanes; ++l) m[l] = -std::numeric_limits<T>::infinity();
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) m[l] = x[j + l] > m[l] ? x[j + l] : m[l];
  for (; j < n; ++j) m[0] = x[j] > m[0] ? x[j] : m[0];
  T r = m[0];
  for (int l = 1; l < kLanes; ++l) r = m[l] > r ? m[l] : r;
  return r;
}

/// Sum of a[i] (or a[i] * b[i] when b is given) over n contiguous values, accumulated in double
/// in independent lanes.
template <typename T>
double row_sum(const T* a, const T* b, std::int64_t n) {
  constexpr int kLanes = 8;
  double s[kLanes] = {};
  std::int64_t j = 0;
  if (b) {
    for (; j + kLanes <= n; j += kLanes)
      for (int l = 0; l < kLanes; ++l)
        s[l] += static_cast<double>(a[j + l]) * static_cast<double>(b[j + l]);
    for (; j < n; ++j) s[0] += static_cast<double>(a[j]) * static_cast<double>(b[j]);
  } else {
    for (; j + kLanes <= n; j += kLanes)
      for (int l = 0; l < kLanes; ++l) s[l] += static_cast<double>(a[j + l]);
    for (; j < n; ++j) s[0] += static_cast<double>(a[j]);
  }
  double r = 0;
  for (int l = 0; l < kLanes; ++l) r += s[l];
  return r;
}

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

/// softmax or log_softmax of `outer` blocks of n x inner contiguous values, over the n axis.
template <typename T, bool kLog>
void softmax_forward_rows(const T* px, T* po, std::int64_t outer, std::int64_t n,
                          std::int64_t inner) {
  if constexpr (std::is_same_v<T, float>) {
    // AVX2 / AVX-512 kernels when the CPU has them (Note [Runtime SIMD dispatch]).
    if (const auto* k = detail::simd::kernels_f32()) {
      k->softmax_forward(px, po, outer, n, inner, kLog);
      return;
    }
  }
  if (std::is_same_v<T, float> && inner == 1 && n > 0) {
    // Contiguous float32 rows (softmax over the last dim, the common case): vectorised passes,
    // exp through xsimd. Not for float64: xsimd's double exp casts the exponent of NaN or -inf
    // (a fully masked row) to int64 with a plain C++ cast, undefined behaviour (fuzz finding F2).
    const auto un = static_cast<std::size_t>(n);
    for (std::int64_t o = 0; o < outer; ++o) {
      const T* row = px + o * n;
      T* orow = po + o * n;
      T m = std::isnan(row[0]) ? row[0] : row_max(row, n);
      auto xo = detail::adapt_1d(orow, un);
      auto xr = detail::adapt_1d(row, un);
      xt::noalias(xo) = xt::exp(xr - m);
      double s = row_sum<T>(orow, nullptr, n);
      if constexpr (kLog) {
        // (x - max) - log(sum), as PyTorch: folding max into one lse = max + log(sum) would
        // round it to T's precision at |max| (1e-3 at 1e4 in float32) and shift every value.
        T log_s = static_cast<T>(std::log(s));
        xt::noalias(xo) = (xr - m) - log_s;
      } else {
        T inv = static_cast<T>(1.0 / s);
        for (std::int64_t j = 0; j < n; ++j) orow[j] *= inv;
      }
    }
    return;
  }
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const T* row = px + o * n * inner + i;
      T* orow = po + o * n * inner + i;
      T m = -std::numeric_limits<T>::infinity();
      for (std::int64_t j = 0; j < n; ++j) m = std::max(m, row[j * inner]);
      if (std::isnan(row[0])) m = row[0];
      double s = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        T e = std::exp(row[j * inner] - m);
        if constexpr (!kLog) orow[j * inner] = e;
        s += e;
      }
      if constexpr (kLog) {
        T log_s = static_cast<T>(std::log(s));
        for (std::int64_t j = 0; j < n; ++j) orow[j * inner] = (row[j * inner] - m) - log_s;
      } else {
        T inv = static_cast<T>(1.0 / s);
        for (std::int64_t j = 0; j < n; ++j) orow[j * inner] *= inv;
      }
    }
  }
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
      softmax_forward_rows<T, kLog>(px + ob * row, po + ob * row, oe - ob, n, inner);
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

/// The fused softmax / log_softmax backward of `outer` blocks of n x inner contiguous values.
template <typename T, bool kLog>
void softmax_backward_rows(const T* pg, const T* py, T* px, std::int64_t outer, std::int64_t n,
                           std::int64_t inner) {
  if constexpr (std::is_same_v<T, float>) {
    if (const auto* k = detail::simd::kernels_f32()) {
      k->softmax_backward(pg, py, px, outer, n, inner, kLog);
      return;
    }
  }
  if (std::is_same_v<T, float> && inner == 1) {  // float32 only: see F2 in the forward
    for (std::int64_t o = 0; o < outer; ++o) {
      const T* gr = pg + o * n;
      const T* yr = py + o * n;
      T* xr = px + o * n;
      if constexpr (kLog) {
        T s = static_cast<T>(row_sum<T>(gr, nullptr, n));
        const auto un = static_cast<std::size_t>(n);
        auto xo = detail::adapt_1d(xr, un);
        xt::noalias(xo) = detail::adapt_1d(gr, un) - xt::exp(detail::adapt_1d(yr, un)) * s;
      } else {
        T s = static_cast<T>(row_sum<T>(gr, yr, n));
        for (std::int64_t j = 0; j < n; ++j) xr[j] = yr[j] * (gr[j] - s);
      }
    }
    return;
  }
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * n * inner + i;
      double acc = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t k = base + j * inner;
        acc += kLog ? static_cast<double>(pg[k])
                    : static_cast<double>(pg[k]) * static_cast<double>(py[k]);
      }
      const T s = static_cast<T>(acc);
      for (std::int64_t j = 0; j < n; ++j) {
        const std::int64_t k = base + j * inner;
        px[k] = kLog ? pg[k] - std::exp(py[k]) * s : py[k] * (pg[k] - s);
      }
    }
  }
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
      softmax_backward_rows<T, kLog>(pg + ob * row, py + ob * row, px + ob * row, oe - ob, n,
                                     inner);
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
