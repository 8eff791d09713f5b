#pragma once
// Private: the float32 tanh and sigmoid kernels written once over V = Vec<A> of vec_math.h,
// compiled by softmax_avx2.cpp and softmax_avx512.cpp (Note [Runtime SIMD dispatch] in simd.h).
// Included only from those files (see vec_math.h for why everything here has internal linkage).
//
// Note [Vectorised tanh and sigmoid]
// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = exp(-|x|): PyTorch's
// vectorised 1 / (1 + exp(-x)) overflows exp to inf from x = -88.7 on and gives 0 where sigmoid
// is a denormal (down to x = -104). It is 1 above x = 17; 2.7 ulp at most.
// tanh(x) for |x| < 0.625 is Cephes' tanhf polynomial, x + x^3 P(x^2) (no cancellation near 0,
// where 1 - 2 / (exp(2x) + 1) would lose every bit); above it, 1 - 2 / (exp(2|x|) + 1) with x's
// sign, which is +-1 from |x| = 9 on (exp overflows to inf past 44: still 1); 1.3 ulp at most.
// Both measured against double precision over ~19 million floats on every level
// (tests/core/test_vec_math.cpp); PyTorch's Sleef tanh is within 1 ulp. tanh(-0) is -0, and both
// keep NaN.
#include "kernels/vec_math.h"

namespace minigrad::detail::simd {
namespace {

/// Cephes tanhf's P, highest power first.
constexpr float kTanhP[] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                            1.33314422036e-1f, -3.33332819422e-1f};

template <class V>
typename V::Reg tanh_value(typename V::Reg x) {
  using Reg = typename V::Reg;
  const Reg one = V::set1(1.0f);
  const Reg ax = V::abs(x);
  const Reg s = V::mul(x, x);
  Reg p = V::set1(kTanhP[0]);
  for (int k = 1; k < 5; ++k) p = V::fmadd(p, s, V::set1(kTanhP[k]));
  // Below 2^-12, x^3 / 3 is under half an ulp of x: tanh(x) is x itself (-0 and denormals too;
  // the polynomial's fma would turn -0 into +0).
  const Reg small = V::where_le(ax, V::set1(0x1p-12f), x, V::fmadd(V::mul(p, s), x, x));
  const Reg big = V::sub(one, V::div(V::set1(2.0f), V::add(vexp<V>(V::add(ax, ax)), one)));
  // ax >= 0.625 (or NaN): the exp form with x's sign.
  return V::where_le(ax, V::set1(0.625f), small, V::where_nonneg(x, big, V::neg(big)));
}

template <class V>
typename V::Reg sigmoid_value(typename V::Reg x) {
  // e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below (1 / (1 + exp(-x))
  // would make exp(-x) inf from x = -88.7 on, and 0 where sigmoid is a denormal).
  const auto one = V::set1(1.0f);
  const auto e = vexp<V>(V::neg(V::abs(x)));
  const auto r = V::div(one, V::add(one, e));
  return V::where_nonneg(x, r, V::mul(e, r));
}

template <class V, typename V::Reg (*F)(typename V::Reg)>
void unary_loop(const float* x, float* y, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t j = 0;
  for (; j + W <= n; j += W) V::store(y + j, F(V::load(x + j)));
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    V::store_partial(y + j, k, F(V::load_partial(x + j, k, V::zero())));
  }
}

template <class V>
void tanh_kernel(const float* x, float* y, std::int64_t n) {
  unary_loop<V, tanh_value<V>>(x, y, n);
}

template <class V>
void sigmoid_kernel(const float* x, float* y, std::int64_t n) {
  unary_loop<V, sigmoid_value<V>>(x, y, n);
}

/// gx = g * f(g, y) over n contiguous values, f one of the two backward formulas below.
template <class V, typename V::Reg (*F)(typename V::Reg, typename V::Reg)>
void backward_loop(const float* g, const float* y, float* gx, std::int64_t n) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t j = 0;
  for (; j + W <= n; j += W) V::store(gx + j, F(V::load(g + j), V::load(y + j)));
  if (j < n) {
    const auto k = V::tail_mask(n - j);
    V::store_partial(gx + j, k,
                     F(V::load_partial(g + j, k, V::zero()), V::load_partial(y + j, k, V::zero())));
  }
}

// PyTorch's roundings (torch 1.13 on this CPU, every element of 10^6 compared): tanh's backward
// is g * fma(-y, y, 1), one rounding for 1 - y^2; sigmoid's is (g * (1 - y)) * y.
template <class V>
typename V::Reg tanh_backward_value(typename V::Reg g, typename V::Reg y) {
  return V::mul(g, V::fmadd(V::neg(y), y, V::set1(1.0f)));
}

template <class V>
typename V::Reg sigmoid_backward_value(typename V::Reg g, typename V::Reg y) {
  return V::mul(V::mul(g, V::sub(V::set1(1.0f), y)), y);
}

template <class V>
void tanh_backward_kernel(const float* g, const float* y, float* gx, std::int64_t n) {
  backward_loop<V, tanh_backward_value<V>>(g, y, gx, n);
}

template <class V>
void sigmoid_backward_kernel(const float* g, const float* y, float* gx, std::int64_t n) {
  backward_loop<V, sigmoid_backward_value<V>>(g, y, gx, n);
}

}  // namespace
}  // namespace minigrad::detail::simd
