#pragma once
// Private: the float32 GELU forward and backward kernels written once over V = Vec<A> of
// vec_math.h, compiled by softmax_avx2.cpp and softmax_avx512.cpp (Note [Runtime SIMD dispatch]
// in simd.h). Included only from those files (see vec_math.h for why everything here has internal
// linkage).
//
// Note [Vectorised GELU]
// gelu(x) = x Phi(x), Phi the standard normal CDF ("none"), or x sigmoid(2u) with
// u = sqrt(2/pi) (x + 0.044715 x^3) ("tanh": 0.5 (1 + tanh(u)) = sigmoid(2u)). Both are written so
// that no value near 1 is subtracted from another: the negative tail keeps its relative accuracy
// (1 + erf(x / sqrt(2)) and 1 + tanh(u) cancel there).
// - Phi: with w = |x| / sqrt(2), Phi(-|x|) = erfc(w) / 2 = exp(-x^2 / 2) t Q(t) / 2, where
//   t = 1 / (1 + w / 2) and Q is a degree-8 polynomial fitted to erfcx(w) = exp(w^2) erfc(w) over
//   [0, 10.5] (scripts/fit_erfcx.py prints the coefficients and the fit: relative error 4.4e-8,
//   2.3e-7 with float32 coefficients). Phi(x) = 1 - Phi(-|x|) for x >= 0. Against PyTorch 1.13's
//   AVX2 kernel (Abramowitz-Stegun 7.1.26, absolute error 1.5e-7, 3.5% relative in erfc's tail)
//   this is as cheap (one exp, one division) and keeps the tail. x^2 is carried as an exact sum of
//   two floats into the exp (a rounded x^2 alone would cost ~x^2 / 2 ulp out there).
// - The backward, g (Phi(x) + x phi(x)) with phi(x) = exp(-x^2 / 2) / sqrt(2 pi), reuses the exp;
//   the tanh form's derivative is s + 2 x s (1 - s) u' with s = sigmoid(2u),
//   u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
// float64 and non-contiguous tensors keep the scalar std::erf / std::tanh code of
// kernels/unary.cpp. Errors are measured against double-precision references in
// tests/core/test_vec_math.cpp on every level.
#include "kernels/vec_math.h"

namespace minigrad::detail::simd {
namespace {

constexpr float kGeluInvSqrt2 = 0.70710678118654752f;
constexpr float kGeluInvSqrt2Pi = 0.39894228040143268f;
constexpr float kGeluSqrt2OverPi = 0.79788456080286536f;
constexpr float kGeluCubic = 0.044715f;
/// Q's coefficients, Q0 first (scripts/fit_erfcx.py).
constexpr float kErfcxQ[] = {2.820855081e-01f,  2.823912501e-01f,  2.429895848e-01f,
                             2.031293809e-01f,  -2.764487453e-02f, 2.795025408e-01f,
                             -4.884124398e-01f, 2.851389945e-01f,  -5.917997658e-02f};

/// Phi(x) and exp(-x^2 / 2) of each lane (the second feeds the backward's phi).
template <class V>
typename V::Reg normal_cdf(typename V::Reg x, typename V::Reg& gauss) {
  using Reg = typename V::Reg;
  const Reg one = V::set1(1.0f);
  // x^2 = hi + lo exactly (lo by an fma), and exp(-(hi + lo) / 2) = exp(-hi / 2) (1 - lo / 2) to
  // within float32's rounding: the rounding of x^2 alone would cost up to x^2 / 2 ulp in the tail.
  const Reg hi = V::mul(x, x);
  // lo is NaN when x^2 overflows (inf - inf): held to [-1, 1], where min / max return their
  // second operand for a NaN first one. A NaN x still gives a NaN e.
  const Reg lo = V::max(V::min(V::fmadd(x, x, V::neg(hi)), one), V::neg(one));
  const Reg e = vexp<V>(V::mul(hi, V::set1(-0.5f)));
  gauss = V::fmadd(V::mul(e, lo), V::set1(-0.5f), e);
  const Reg w = V::mul(V::abs(x), V::set1(kGeluInvSqrt2));
  const Reg t = V::div(one, V::fmadd(w, V::set1(0.5f), one));
  Reg q = V::set1(kErfcxQ[8]);
  for (int k = 7; k >= 0; --k) q = V::fmadd(q, t, V::set1(kErfcxQ[k]));
  const Reg tail = V::mul(V::mul(V::mul(t, q), gauss), V::set1(0.5f));  // Phi(-|x|)
  return V::where_nonneg(x, V::sub(one, tail), tail);
}

/// sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3).
template <class V>
typename V::Reg tanh_gate(typename V::Reg x) {
  using Reg = typename V::Reg;
  const Reg one = V::set1(1.0f);
  const Reg u = V::mul(V::mul(x, V::fmadd(V::mul(x, x), V::set1(kGeluCubic), one)),
                       V::set1(kGeluSqrt2OverPi));
  // exp(-2u) overflows to inf for u < -44: s = 0, as it should.
  return V::div(one, V::add(one, vexp<V>(V::mul(u, V::set1(-2.0f)))));
}

template <class V, bool kTanh>
typename V::Reg gelu_value(typename V::Reg x) {
  if constexpr (kTanh) {
    return V::mul(x, tanh_gate<V>(x));
  } else {
    typename V::Reg unused;
    return V::mul(x, normal_cdf<V>(x, unused));
  }
}

/// g * gelu'(x).
template <class V, bool kTanh>
typename V::Reg gelu_grad(typename V::Reg g, typename V::Reg x) {
  using Reg = typename V::Reg;
  if constexpr (kTanh) {
    const Reg s = tanh_gate<V>(x);
    // s (1 - s) is 0 for |x| > 11, where 2 x u' could overflow (x^2 past 1.8e19) and make 0 * inf:
    // that term takes x held to [-1e4, 1e4] (a NaN x still makes s NaN).
    const Reg xc = V::max(V::min(x, V::set1(1e4f)), V::set1(-1e4f));
    const Reg du = V::mul(V::fmadd(V::mul(xc, xc), V::set1(3 * kGeluCubic), V::set1(1.0f)),
                          V::set1(kGeluSqrt2OverPi));  // u'
    const Reg s1ms = V::mul(s, V::sub(V::set1(1.0f), s));
    return V::mul(g, V::fmadd(V::mul(V::add(xc, xc), s1ms), du, s));
  } else {
    Reg gauss;
    const Reg cdf = normal_cdf<V>(x, gauss);
    return V::mul(g, V::fmadd(V::mul(x, gauss), V::set1(kGeluInvSqrt2Pi), cdf));
  }
}

template <class V, bool kTanh>
void gelu_loop(const float* x, float* y, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t j = 0;
  for (; j + W <= n; j += W) V::store(y + j, gelu_value<V, kTanh>(V::load(x + j)));
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    V::store_partial(y + j, k, gelu_value<V, kTanh>(V::load_partial(x + j, k, V::zero())));
  }
}

template <class V, bool kTanh>
void gelu_backward_loop(const float* g, const float* x, float* gx, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t j = 0;
  for (; j + W <= n; j += W) V::store(gx + j, gelu_grad<V, kTanh>(V::load(g + j), V::load(x + j)));
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    V::store_partial(gx + j, k,
                     gelu_grad<V, kTanh>(V::load_partial(g + j, k, V::zero()),
                                         V::load_partial(x + j, k, V::zero())));
  }
}

template <class V>
void gelu_kernel(const float* x, float* y, std::int64_t n, bool tanh_form) {
  tanh_form ? gelu_loop<V, true>(x, y, n) : gelu_loop<V, false>(x, y, n);
}

template <class V>
void gelu_backward_kernel(const float* g, const float* x, float* gx, std::int64_t n,
                          bool tanh_form) {
  tanh_form ? gelu_backward_loop<V, true>(g, x, gx, n) : gelu_backward_loop<V, false>(g, x, gx, n);
}

}  // namespace
}  // namespace minigrad::detail::simd
