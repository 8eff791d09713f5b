#pragma once
// Private: the float32 softmax / log_softmax kernels written once over V = Vec<A> of vec_math.h
// (xsimd::batch<float, A>), compiled by softmax_avx2.cpp and softmax_avx512.cpp,
// one xsimd architecture each. Included only from those files (see vec_math.h for why everything
// here has internal linkage).
//
// Contiguous rows (inner == 1): forward max / exp-and-sum / normalise, backward dot / update,
// each pass over a row still in L1. Sums are float, in 4 independent vectors (4 * kWidth partial
// sums), flushed into a double every kBlock elements: relative error ~1e-7 for rows of hundreds
// of elements, against the parity suite's 1e-5.
// Other dims (inner > 1): the same passes over the n rows of a tile of up to kTile columns, each
// lane one column, with the column maxima and sums in small stack buffers (column sums flushed
// into doubles every kRowBlock rows).
#include "kernels/vec_math.h"

namespace minigrad::detail::simd {
namespace {

constexpr float kInf = __builtin_inff();

/// Max of n contiguous values; NaN is ignored (it reaches the result through the sum of exps).
template <class V>
float row_max(const float* x, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  const auto ninf = V::set1(-kInf);
  auto m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  std::int64_t j = 0;
  // max(x, m): m when x is NaN.
  for (; j + 4 * W <= n; j += 4 * W) {
    m0 = V::max(V::load(x + j), m0);
    m1 = V::max(V::load(x + j + W), m1);
    m2 = V::max(V::load(x + j + 2 * W), m2);
    m3 = V::max(V::load(x + j + 3 * W), m3);
  }
  for (; j + W <= n; j += W) m0 = V::max(V::load(x + j), m0);
  if (j < n) m0 = V::max(V::load_partial(x + j, V::tail_mask(n - j), ninf), m0);
  return V::reduce_max(V::max(V::max(m0, m1), V::max(m2, m3)));
}

/// Row sums run in 4 float vectors (4 * kWidth partial sums) for kBlock elements at a time, then
/// into a double: float speed, and no drift on long rows (a float partial sum of 10^5 values
/// would lose ~1e-4 of relative precision).
constexpr std::int64_t kBlock = 1024;

template <class V>
void flush(double& total, typename V::Reg& s0, typename V::Reg& s1, typename V::Reg& s2,
           typename V::Reg& s3) {
  total += static_cast<double>(V::reduce_add(V::add(V::add(s0, s1), V::add(s2, s3))));
  s0 = s1 = s2 = s3 = V::zero();
}

/// sum(exp(x[r] - m[r])) over n contiguous values of each of R rows, storing each exp in y[r]
/// when kStore; the totals in double (softmax rounds them to float). m[r] is row r's max (no
/// x[r][j] - m[r] is positive: vexp's kNonPositive). The rows run in lockstep: a softmax's rows
/// in pairs overlap one row's reductions and division with the other's exps (faster on the
/// AVX-512 forward of many short rows; AVX2 unchanged). Each row's sum is the same whatever R:
/// U vectors per step into U partial sums (AVX2: 2, all its 16 registers allow; AVX-512: 4),
/// folded into the double every kBlock elements.
template <class V, bool kStore, int R>
void rows_exp_sum(const float* const (&x)[R], float* const (&y)[R], std::int64_t n,
                  const float (&m)[R], double (&total)[R]) {
  using Reg = typename V::Reg;
  constexpr std::int64_t W = V::kWidth;
  constexpr int U = W == 8 ? 2 : 4;
  Reg vm[R], s[R][4];
  for (int r = 0; r < R; ++r) {
    vm[r] = V::set1(m[r]);
    s[r][0] = s[r][1] = s[r][2] = s[r][3] = V::zero();
    total[r] = 0;
  }
  std::int64_t j = 0;
  for (; j + U * W <= n; j += U * W) {
    for (int r = 0; r < R; ++r) {
      for (int u = 0; u < U; ++u) {
        const Reg e = vexp_fast<V, true>(V::sub(V::load(x[r] + j + u * W), vm[r]));
        if constexpr (kStore) V::store(y[r] + j + u * W, e);
        s[r][u] = V::add(s[r][u], e);
      }
    }
    if ((j + U * W) % kBlock == 0) {
      for (int r = 0; r < R; ++r) flush<V>(total[r], s[r][0], s[r][1], s[r][2], s[r][3]);
    }
  }
  for (; j + W <= n; j += W) {
    for (int r = 0; r < R; ++r) {
      const Reg e = vexp_fast<V, true>(V::sub(V::load(x[r] + j), vm[r]));
      if constexpr (kStore) V::store(y[r] + j, e);
      s[r][0] = V::add(s[r][0], e);
    }
  }
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    for (int r = 0; r < R; ++r) {
      const Reg e = vexp_fast<V, true>(V::sub(V::load_partial(x[r] + j, k, vm[r]), vm[r]));
      if constexpr (kStore) V::store_partial(y[r] + j, k, e);
      s[r][1] = V::add(s[r][1], V::keep(e, k));
    }
  }
  for (int r = 0; r < R; ++r) flush<V>(total[r], s[r][0], s[r][1], s[r][2], s[r][3]);
}

/// One row of rows_exp_sum.
template <class V, bool kStore>
double row_exp_sum(const float* x, float* y, std::int64_t n, float m) {
  const float* const xs[1] = {x};
  float* const ys[1] = {y};
  const float ms[1] = {m};
  double total[1];
  rows_exp_sum<V, kStore, 1>(xs, ys, n, ms, total);
  return total[0];
}

/// y[j] = y[j] * a (kLog false) or y[j] = (x[j] - m) - a (kLog true) over n contiguous values.
template <class V, bool kLog>
void row_finish(const float* x, float* y, std::int64_t n, float m, float a) {
  constexpr std::int64_t W = V::kWidth;
  const auto vm = V::set1(m);
  const auto va = V::set1(a);
  auto f = [&](auto xv, auto yv) {
    if constexpr (kLog) {
      return V::sub(V::sub(xv, vm), va);
    } else {
      return V::mul(yv, va);
    }
  };
  std::int64_t j = 0;
  for (; j + W <= n; j += W) {
    const auto xv = kLog ? V::load(x + j) : V::zero();
    const auto yv = kLog ? V::zero() : V::load(y + j);
    V::store(y + j, f(xv, yv));
  }
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    const auto xv = kLog ? V::load_partial(x + j, k, vm) : V::zero();
    const auto yv = kLog ? V::zero() : V::load_partial(y + j, k, V::zero());
    V::store_partial(y + j, k, f(xv, yv));
  }
}

/// sum(a * b) (or sum(a) when b is null) over n contiguous values.
template <class V>
float row_dot(const float* a, const float* b, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  auto s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
  double total = 0;
  std::int64_t j = 0;
  if (b) {
    for (; j + 4 * W <= n; j += 4 * W) {
      s0 = V::fmadd(V::load(a + j), V::load(b + j), s0);
      s1 = V::fmadd(V::load(a + j + W), V::load(b + j + W), s1);
      s2 = V::fmadd(V::load(a + j + 2 * W), V::load(b + j + 2 * W), s2);
      s3 = V::fmadd(V::load(a + j + 3 * W), V::load(b + j + 3 * W), s3);
      if ((j + 4 * W) % kBlock == 0) flush<V>(total, s0, s1, s2, s3);
    }
    for (; j + W <= n; j += W) s0 = V::fmadd(V::load(a + j), V::load(b + j), s0);
    if (j < n) {
      const auto k = V::tail_mask(n - j);
      s1 = V::fmadd(V::load_partial(a + j, k, V::zero()), V::load_partial(b + j, k, V::zero()), s1);
    }
  } else {
    for (; j + 4 * W <= n; j += 4 * W) {
      s0 = V::add(V::load(a + j), s0);
      s1 = V::add(V::load(a + j + W), s1);
      s2 = V::add(V::load(a + j + 2 * W), s2);
      s3 = V::add(V::load(a + j + 3 * W), s3);
      if ((j + 4 * W) % kBlock == 0) flush<V>(total, s0, s1, s2, s3);
    }
    for (; j + W <= n; j += W) s0 = V::add(V::load(a + j), s0);
    if (j < n) s1 = V::add(V::load_partial(a + j, V::tail_mask(n - j), V::zero()), s1);
  }
  flush<V>(total, s0, s1, s2, s3);
  return total;
}

/// Backward update over n contiguous values: gx = y * (g - s) (softmax) or g - exp(y) * s (log).
template <class V, bool kLog>
void row_backward(const float* g, const float* y, float* gx, std::int64_t n, float s) {
  constexpr std::int64_t W = V::kWidth;
  const auto vs = V::set1(s);
  const auto vns = V::neg(vs);
  auto f = [&](auto gv, auto yv) {
    if constexpr (kLog) {
      return V::fmadd(vexp<V>(yv), vns, gv);  // g - exp(y) * s, one rounding
    } else {
      return V::mul(yv, V::sub(gv, vs));
    }
  };
  std::int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    V::store(gx + j, f(V::load(g + j), V::load(y + j)));
    V::store(gx + j + W, f(V::load(g + j + W), V::load(y + j + W)));
  }
  for (; j + W <= n; j += W) V::store(gx + j, f(V::load(g + j), V::load(y + j)));
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    V::store_partial(gx + j, k,
                     f(V::load_partial(g + j, k, V::zero()), V::load_partial(y + j, k, V::zero())));
  }
}

// ---- other dims: columns of a (n, inner) block, kTile at a time ----

constexpr std::int64_t kTile = 256;

/// Calls f(offset, full, mask) for each vector of a tile of w columns: full vectors, then the
/// masked tail.
template <class V, class F>
void for_tile(std::int64_t w, F&& f) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t t = 0;
  for (; t + W <= w; t += W) f(t, true, V::tail_mask(1));
  if (t < w) f(t, false, V::tail_mask(w - t));
}

template <class V>
typename V::Reg load_cols(const float* p, bool full, typename V::Mask k, typename V::Reg fill) {
  return full ? V::load(p) : V::load_partial(p, k, fill);
}

template <class V>
void store_cols(float* p, bool full, typename V::Mask k, typename V::Reg v) {
  if (full) {
    V::store(p, v);
  } else {
    V::store_partial(p, k, v);
  }
}

/// Column sums run in float for kRowBlock rows, then into per-lane doubles (as kBlock above).
constexpr std::int64_t kRowBlock = 64;

/// d[l] += lane l of s, then s = 0.
template <class V>
void flush_cols(typename V::Reg& s, double* d) {
  alignas(64) float tmp[V::kWidth];
  V::store(tmp, s);
  for (std::int64_t l = 0; l < V::kWidth; ++l) d[l] += static_cast<double>(tmp[l]);
  s = V::zero();
}

/// The lanes' double sums as floats.
template <class V>
typename V::Reg cols_total(const double* d) {
  alignas(64) float tmp[V::kWidth];
  for (std::int64_t l = 0; l < V::kWidth; ++l) tmp[l] = static_cast<float>(d[l]);
  return V::load(tmp);
}

template <class V, bool kLog>
void forward_strided(const float* x, float* y, std::int64_t outer, std::int64_t n,
                     std::int64_t inner) {
  alignas(64) float mbuf[kTile];
  alignas(64) float sbuf[kTile];
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i0 = 0; i0 < inner; i0 += kTile) {
      const std::int64_t w = inner - i0 < kTile ? inner - i0 : kTile;
      const float* xb = x + o * n * inner + i0;
      float* yb = y + o * n * inner + i0;
      for_tile<V>(w, [&](std::int64_t t, bool full, typename V::Mask k) {
        auto m = V::set1(-kInf);
        for (std::int64_t j = 0; j < n; ++j)
          m = V::max(load_cols<V>(xb + j * inner + t, full, k, m), m);
        V::store(mbuf + t, m);
        auto s = V::zero();
        double d[V::kWidth] = {};
        for (std::int64_t j = 0; j < n; ++j) {
          const auto e = vexp<V>(V::sub(load_cols<V>(xb + j * inner + t, full, k, m), m));
          if constexpr (!kLog) store_cols<V>(yb + j * inner + t, full, k, e);
          s = V::add(s, e);
          if ((j + 1) % kRowBlock == 0) flush_cols<V>(s, d);
        }
        flush_cols<V>(s, d);
        V::store(sbuf + t, cols_total<V>(d));
      });
      for (std::int64_t t = 0; t < w; ++t)
        sbuf[t] =
            kLog ? static_cast<float>(__builtin_log(static_cast<double>(sbuf[t]))) : 1.0f / sbuf[t];
      for_tile<V>(w, [&](std::int64_t t, bool full, typename V::Mask k) {
        const auto a = V::load(sbuf + t);
        const auto m = V::load(mbuf + t);
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t off = j * inner + t;
          if constexpr (kLog) {
            store_cols<V>(yb + off, full, k,
                          V::sub(V::sub(load_cols<V>(xb + off, full, k, m), m), a));
          } else {
            store_cols<V>(yb + off, full, k, V::mul(load_cols<V>(yb + off, full, k, a), a));
          }
        }
      });
    }
  }
}

template <class V, bool kLog>
void backward_strided(const float* g, const float* y, float* gx, std::int64_t outer, std::int64_t n,
                      std::int64_t inner) {
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t i0 = 0; i0 < inner; i0 += kTile) {
      const std::int64_t w = inner - i0 < kTile ? inner - i0 : kTile;
      const std::int64_t base = o * n * inner + i0;
      for_tile<V>(w, [&](std::int64_t t, bool full, typename V::Mask k) {
        const auto z = V::zero();
        auto acc = z;
        double d[V::kWidth] = {};
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t off = base + j * inner + t;
          if constexpr (kLog) {
            acc = V::add(load_cols<V>(g + off, full, k, z), acc);
          } else {
            acc =
                V::fmadd(load_cols<V>(g + off, full, k, z), load_cols<V>(y + off, full, k, z), acc);
          }
          if ((j + 1) % kRowBlock == 0) flush_cols<V>(acc, d);
        }
        flush_cols<V>(acc, d);
        const auto s = cols_total<V>(d);
        const auto ns = V::neg(s);
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t off = base + j * inner + t;
          const auto gv = load_cols<V>(g + off, full, k, z);
          const auto yv = load_cols<V>(y + off, full, k, z);
          store_cols<V>(gx + off, full, k,
                        kLog ? V::fmadd(vexp<V>(yv), ns, gv) : V::mul(yv, V::sub(gv, s)));
        }
      });
    }
  }
}

// ---- entry points ----

template <class V>
void exp_kernel(const float* x, float* y, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t j = 0;
  for (; j + W <= n; j += W) V::store(y + j, vexp_fast<V>(V::load(x + j)));
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    V::store_partial(y + j, k, vexp_fast<V>(V::load_partial(x + j, k, V::zero())));
  }
}

/// The max of n contiguous values (NaN ignored), and sum(exp(x - m)) over them in double.
template <class V>
float max_kernel(const float* x, std::int64_t n) {
  return row_max<V>(x, n);
}
template <class V>
double exp_sum_kernel(const float* x, std::int64_t n, float m) {
  return row_exp_sum<V, false>(x, nullptr, n, m);
}

template <class V>
void softmax_forward_kernel(const float* x, float* y, std::int64_t outer, std::int64_t n,
                            std::int64_t inner, bool log) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  if (inner > 1) {
    if (log) {
      forward_strided<V, true>(x, y, outer, n, inner);
    } else {
      forward_strided<V, false>(x, y, outer, n, inner);
    }
    return;
  }
  std::int64_t o = 0;
  // Rows in pairs (rows_exp_sum): the same bits as one at a time.
  for (; o + 2 <= outer; o += 2) {
    const float* const rows[2] = {x + o * n, x + (o + 1) * n};
    float* const outs[2] = {y + o * n, y + (o + 1) * n};
    const float ms[2] = {row_max<V>(rows[0], n), row_max<V>(rows[1], n)};
    double sums[2];
    if (log) {
      rows_exp_sum<V, false, 2>(rows, outs, n, ms, sums);
    } else {
      rows_exp_sum<V, true, 2>(rows, outs, n, ms, sums);
    }
    for (int r = 0; r < 2; ++r) {
      const float s = static_cast<float>(sums[r]);
      if (log) {
        row_finish<V, true>(rows[r], outs[r], n, ms[r],
                            static_cast<float>(__builtin_log(static_cast<double>(s))));
      } else {
        row_finish<V, false>(rows[r], outs[r], n, ms[r], 1.0f / s);
      }
    }
  }
  for (; o < outer; ++o) {
    const float* row = x + o * n;
    float* out = y + o * n;
    const float m = row_max<V>(row, n);
    if (log) {
      // (x - max) - log(sum), as PyTorch (see softmax.cpp).
      const float s = static_cast<float>(row_exp_sum<V, false>(row, out, n, m));
      row_finish<V, true>(row, out, n, m,
                          static_cast<float>(__builtin_log(static_cast<double>(s))));
    } else {
      const float s = static_cast<float>(row_exp_sum<V, true>(row, out, n, m));
      row_finish<V, false>(row, out, n, m, 1.0f / s);
    }
  }
}

template <class V>
void softmax_backward_kernel(const float* g, const float* y, float* gx, std::int64_t outer,
                             std::int64_t n, std::int64_t inner, bool log) {
  if (outer <= 0 || n <= 0 || inner <= 0) return;
  if (inner > 1) {
    if (log) {
      backward_strided<V, true>(g, y, gx, outer, n, inner);
    } else {
      backward_strided<V, false>(g, y, gx, outer, n, inner);
    }
    return;
  }
  for (std::int64_t o = 0; o < outer; ++o) {
    const float* gr = g + o * n;
    const float* yr = y + o * n;
    float* xr = gx + o * n;
    if (log) {
      row_backward<V, true>(gr, yr, xr, n, row_dot<V>(gr, nullptr, n));
    } else {
      row_backward<V, false>(gr, yr, xr, n, row_dot<V>(gr, yr, n));
    }
  }
}

}  // namespace
}  // namespace minigrad::detail::simd
