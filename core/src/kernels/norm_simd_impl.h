#pragma once
// Private: layer_norm's float32 rows over D, 8 doubles at a time (norm_avx2.cpp: two __m256d;
// norm_avx512.cpp: one __m512d), included only from those files (internal linkage, as
// vec_math.h). Element j of a group of 8 is lane j mod 8: the lanes of norm.cpp's sums (kLanes =
// 8), so every sum and every element gets the operations of norm.cpp's loops in the same order
// and, with no multiply-add fused (-ffp-contract=off), the same bits (Note [Layer norm kernels]).
//
// D: Reg; zero(); set1(double); load(const double*), store(double*, Reg); load_float(const
// float*) (8 floats, widened exactly); store_float(float*, Reg) (rounded to nearest, as
// static_cast<float>); add, sub, mul.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/norm_simd.h"

namespace minigrad::detail::simd {
namespace {

/// s's 8 lanes, then the tail's values added into lane 0 by the caller.
template <class D>
void lanes_of(typename D::Reg s, double (&l)[8]) {
  D::store(l, s);
}

/// 0 + l[0] + ... + l[7], in order (norm.cpp's add_lanes).
double add_lanes8(const double (&l)[8]) {
  double r = 0;
  for (double v : l) r += v;
  return r;
}

/// dst[0, n) = src[0, n) as doubles (exact), 8 at a time.
template <class D>
void widen(const float* src, double* dst, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) D::store(dst + j, D::load_float(src + j));
  for (; j < n; ++j) dst[j] = static_cast<double>(src[j]);
}

template <class D>
void forward_rows_simd(const float* x, std::int64_t x_row_stride, const float* w, const float* b,
                       std::int64_t r0, std::int64_t r1, std::int64_t n, double eps, float* out,
                       double* mean_out, double* rstd_out) {
  using Reg = typename D::Reg;
  const std::int64_t n8 = n / 8 * 8;
  // The row, w and b as doubles, widened once: a widening is two µops on these CPUs, and the
  // three passes widened each x three times.
  std::vector<double> buf(static_cast<std::size_t>(3 * n));
  double* const xd = buf.data();
  double* const wd = w ? xd + n : nullptr;
  double* const bd = b ? xd + 2 * n : nullptr;
  if (w) widen<D>(w, wd, n);
  if (b) widen<D>(b, bd, n);
  for (std::int64_t r = r0; r < r1; ++r) {
    const float* row = x + r * x_row_stride;
    float* orow = out + r * n;
    Reg s = D::zero();
    for (std::int64_t j = 0; j < n8; j += 8) {
      const Reg v = D::load_float(row + j);
      D::store(xd + j, v);
      s = D::add(s, v);
    }
    double l[8];
    lanes_of<D>(s, l);
    for (std::int64_t j = n8; j < n; ++j) {
      xd[j] = static_cast<double>(row[j]);
      l[0] += xd[j];
    }
    const double mean = n > 0 ? add_lanes8(l) / static_cast<double>(n) : 0.0;
    const Reg vm = D::set1(mean);
    Reg q = D::zero();
    for (std::int64_t j = 0; j < n8; j += 8) {
      const Reg d = D::sub(D::load(xd + j), vm);
      q = D::add(q, D::mul(d, d));
    }
    lanes_of<D>(q, l);
    for (std::int64_t j = n8; j < n; ++j) {
      const double d = xd[j] - mean;
      l[0] += d * d;
    }
    const double var = n > 0 ? add_lanes8(l) / static_cast<double>(n) : 0.0;
    const double rstd = 1.0 / std::sqrt(var + eps);
    mean_out[r] = mean;
    rstd_out[r] = rstd;
    // ((x - mean) * rstd) * w + b, each factor when present.
    const Reg vr = D::set1(rstd);
    for (std::int64_t j = 0; j < n8; j += 8) {
      Reg y = D::mul(D::sub(D::load(xd + j), vm), vr);
      if (wd) y = D::mul(y, D::load(wd + j));
      if (bd) y = D::add(y, D::load(bd + j));
      D::store_float(orow + j, y);
    }
    for (std::int64_t j = n8; j < n; ++j) {
      double y = (xd[j] - mean) * rstd;
      if (wd) y = y * wd[j];
      if (bd) y = y + bd[j];
      orow[j] = static_cast<float>(y);
    }
  }
}

template <class D, bool kWeight, bool kSums>
void backward_rows_simd(const float* g, const float* x, const double* mean, const double* rstd,
                        const float* w, std::int64_t r0, std::int64_t r1, std::int64_t n,
                        float* grad_x, double* pw, double* pb) {
  using Reg = typename D::Reg;
  const std::int64_t n8 = n / 8 * 8;
  const double inv_n = 1.0 / static_cast<double>(n);
  // w once, and each row's g_hat and x as doubles for the second loop (as forward_rows_simd).
  std::vector<double> buf(static_cast<std::size_t>(3 * n));
  double* const wd = buf.data();
  double* const ghd = wd + n;
  double* const xd = wd + 2 * n;
  if (kWeight) widen<D>(w, wd, n);
  for (std::int64_t r = r0; r < r1; ++r) {
    const float* gr = g + r * n;
    const float* xr = x + r * n;
    const double m = mean[r], rs = rstd[r];
    const Reg vm = D::set1(m), vrs = D::set1(rs);
    // g * x_hat and g into the column sums (norm.cpp: pw[j] += gj * xh; pb[j] += gj).
    auto add_sums = [&](std::int64_t j, Reg gj, Reg xh) {
      D::store(pw + j, D::add(D::load(pw + j), D::mul(gj, xh)));
      D::store(pb + j, D::add(D::load(pb + j), gj));
    };
    if (!grad_x) {
      if constexpr (kSums) {
        for (std::int64_t j = 0; j < n8; j += 8) {
          add_sums(j, D::load_float(gr + j), D::mul(D::sub(D::load_float(xr + j), vm), vrs));
        }
        for (std::int64_t j = n8; j < n; ++j) {
          const double gj = static_cast<double>(gr[j]);
          pw[j] += gj * ((static_cast<double>(xr[j]) - m) * rs);
          pb[j] += gj;
        }
      }
      continue;
    }
    // The row sums of g_hat and g_hat * x_hat, lane j mod 8 (norm.cpp's sum_lanes of its buffer).
    Reg sa = D::zero(), sc = D::zero();
    for (std::int64_t j = 0; j < n8; j += 8) {
      const Reg gj = D::load_float(gr + j);
      const Reg xv = D::load_float(xr + j);
      const Reg xh = D::mul(D::sub(xv, vm), vrs);
      const Reg gh = kWeight ? D::mul(gj, D::load(wd + j)) : gj;
      D::store(ghd + j, gh);
      D::store(xd + j, xv);
      sa = D::add(sa, gh);
      sc = D::add(sc, D::mul(gh, xh));
      if constexpr (kSums) add_sums(j, gj, xh);
    }
    double la[8], lc[8];
    lanes_of<D>(sa, la);
    lanes_of<D>(sc, lc);
    for (std::int64_t j = n8; j < n; ++j) {
      const double gj = static_cast<double>(gr[j]);
      xd[j] = static_cast<double>(xr[j]);
      const double xh = (xd[j] - m) * rs;
      ghd[j] = kWeight ? gj * wd[j] : gj;
      la[0] += ghd[j];
      lc[0] += ghd[j] * xh;
      if constexpr (kSums) {
        pw[j] += gj * xh;
        pb[j] += gj;
      }
    }
    const double a_mean = add_lanes8(la) * inv_n, c_mean = add_lanes8(lc) * inv_n;
    const double k1 = -rs * rs * c_mean, k0 = rs * (m * rs * c_mean - a_mean);
    const Reg vk1 = D::set1(k1), vk0 = D::set1(k0);
    float* gx = grad_x + r * n;
    for (std::int64_t j = 0; j < n8; j += 8) {
      D::store_float(
          gx + j, D::add(D::add(D::mul(vrs, D::load(ghd + j)), D::mul(D::load(xd + j), vk1)), vk0));
    }
    for (std::int64_t j = n8; j < n; ++j) gx[j] = static_cast<float>(rs * ghd[j] + xd[j] * k1 + k0);
  }
}

template <class D>
void backward_rows_entry(const float* g, const float* x, const double* mean, const double* rstd,
                         const float* w, std::int64_t r0, std::int64_t r1, std::int64_t n,
                         float* grad_x, double* pw, double* pb) {
  if (w && pw) {
    backward_rows_simd<D, true, true>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
  } else if (w) {
    backward_rows_simd<D, true, false>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
  } else if (pw) {
    backward_rows_simd<D, false, true>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
  } else {
    backward_rows_simd<D, false, false>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
  }
}

template <class D>
const LayerNormRows* layer_norm_rows() {
  static const LayerNormRows rows{&forward_rows_simd<D>, &backward_rows_entry<D>};
  return &rows;
}

}  // namespace
}  // namespace minigrad::detail::simd
