// The softmax / log_softmax row kernels (ops/softmax.cpp): the run-time dispatched AVX2 /
// AVX-512 kernels for float32 (Note [Runtime SIMD dispatch]), the portable code otherwise.
#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/simd.h"
#include "kernels/xt.h"
#include "parallel.h"

namespace minigrad::detail::softmax {

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

/// softmax or log_softmax of `outer` blocks of n x inner contiguous values, over the n axis.
template <typename T, bool kLog>
void forward_rows_impl(const T* px, T* po, std::int64_t outer, std::int64_t n, std::int64_t inner) {
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

/// The fused softmax / log_softmax backward of `outer` blocks of n x inner contiguous values.
template <typename T, bool kLog>
void backward_rows_impl(const T* pg, const T* py, T* px, std::int64_t outer, std::int64_t n,
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

/// Blocks of `row` elements per parallel chunk (Note [Intra-op parallelism]): a softmax element
/// costs a few cheap ops, so a chunk holds about kGrainSize / 4 of them.
std::int64_t rows_grain(std::int64_t row) {
  return std::max<std::int64_t>(1, kGrainSize / 4 / std::max<std::int64_t>(row, 1));
}

}  // namespace

template <typename T>
void forward(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner, bool log) {
  const std::int64_t row = n * inner;
  parallel_for(0, outer, rows_grain(row), [&](std::int64_t ob, std::int64_t oe) {
    forward_rows<T>(x + ob * row, y + ob * row, oe - ob, n, inner, log);
  });
}

template <typename T>
void backward(const T* g, const T* y, T* gx, std::int64_t outer, std::int64_t n, std::int64_t inner,
              bool log) {
  const std::int64_t row = n * inner;
  parallel_for(0, outer, rows_grain(row), [&](std::int64_t ob, std::int64_t oe) {
    backward_rows<T>(g + ob * row, y + ob * row, gx + ob * row, oe - ob, n, inner, log);
  });
}

template <typename T>
void forward_rows(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                  bool log) {
  if (log) {
    forward_rows_impl<T, true>(x, y, outer, n, inner);
  } else {
    forward_rows_impl<T, false>(x, y, outer, n, inner);
  }
}

template <typename T>
void backward_rows(const T* g, const T* y, T* gx, std::int64_t outer, std::int64_t n,
                   std::int64_t inner, bool log) {
  if (log) {
    backward_rows_impl<T, true>(g, y, gx, outer, n, inner);
  } else {
    backward_rows_impl<T, false>(g, y, gx, outer, n, inner);
  }
}

template void forward<float>(const float*, float*, std::int64_t, std::int64_t, std::int64_t, bool);
template void forward<double>(const double*, double*, std::int64_t, std::int64_t, std::int64_t,
                              bool);
template void backward<float>(const float*, const float*, float*, std::int64_t, std::int64_t,
                              std::int64_t, bool);
template void backward<double>(const double*, const double*, double*, std::int64_t, std::int64_t,
                               std::int64_t, bool);
template void forward_rows<float>(const float*, float*, std::int64_t, std::int64_t, std::int64_t,
                                  bool);
template void forward_rows<double>(const double*, double*, std::int64_t, std::int64_t, std::int64_t,
                                   bool);
template void backward_rows<float>(const float*, const float*, float*, std::int64_t, std::int64_t,
                                   std::int64_t, bool);
template void backward_rows<double>(const double*, const double*, double*, std::int64_t,
                                    std::int64_t, std::int64_t, bool);

}  // namespace minigrad::detail::softmax
