#pragma once
// Private: the float32 fused Adam update (Note [Fused Adam] in optim.h) written once over a vector
// type V of vec_math.h, compiled by softmax_avx2.cpp (V = Avx2) and softmax_avx512.cpp
// (V = Avx512). Internal linkage only, as vec_math.h explains.
#include "kernels/optim.h"
#include "kernels/vec_math.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace minigrad::detail::simd {
namespace {

/// a * b + c rounded once, with the instruction itself: with V::fmadd (xsimd::fma) the AVX-512
/// kernel's moments differed from the portable kernel's (std::fma) after the move to xsimd.
template <class V>
typename V::Reg fused_multiply_add(typename V::Reg a, typename V::Reg b, typename V::Reg c) {
  using R = typename V::Reg::register_type;
  const R ra = a, rb = b, rc = c;
#if defined(__AVX512F__)
  if constexpr (sizeof(R) == 64) {  // __m512
    return typename V::Reg(_mm512_fmadd_ps(ra, rb, rc));
  } else {
    return typename V::Reg(_mm256_fmadd_ps(ra, rb, rc));
  }
#else
  return typename V::Reg(_mm256_fmadd_ps(ra, rb, rc));
#endif
}

template <class V, bool kL2, bool kDecoupled, bool kAmsgrad, bool kMaximize>
void adam_kernel_impl(float* p, const float* g, float* m, float* v, float* max_v, std::int64_t n,
                      const AdamCoeffs<float>& c) {
  using Reg = typename V::Reg;
  constexpr std::int64_t W = V::kWidth;
  const Reg wd = V::set1(c.weight_decay), decay = V::set1(c.decay);
  const Reg b1 = V::set1(c.beta1), omb1 = V::set1(c.one_minus_beta1);
  const Reg b2 = V::set1(c.beta2), omb2 = V::set1(c.one_minus_beta2);
  const Reg bc2 = V::set1(c.bias_correction2_sqrt), eps = V::set1(c.eps);
  const Reg nss = V::set1(c.neg_step_size);
  // One vector of elements; the tail runs the same operations on a partial vector, so every
  // element gets the same bits wherever it lies.
  auto update = [&](Reg pi, Reg gi, Reg mi, Reg vi, Reg mvi, Reg& po, Reg& mo, Reg& vo, Reg& mvo) {
    // -g by flipping the sign bit, as the scalar -g (V::neg may compute 0 - g: a NaN keeps its
    // sign)
    if constexpr (kMaximize) gi = xsimd::bitwise_xor(gi, V::set1(-0.0f));
    if constexpr (kL2) gi = fused_multiply_add<V>(wd, pi, gi);
    if constexpr (kDecoupled) pi = V::rounded(V::mul(pi, decay));  // not fused into the add below
    mo = fused_multiply_add<V>(omb1, gi, V::mul(mi, b1));
    vo = fused_multiply_add<V>(V::mul(omb2, gi), gi, V::mul(vi, b2));
    Reg vv = vo;
    if constexpr (kAmsgrad) {
      vv = V::max(mvi, vo);  // vo when either is NaN: see the portable kernel's NOTE
      mvo = vv;
    }
    const Reg denom = V::add(V::div(V::sqrt(vv), bc2), eps);
    po = V::add(pi, V::div(V::mul(nss, mo), denom));
  };
  std::int64_t i = 0;
  for (; i + W <= n; i += W) {
    Reg po, mo, vo, mvo = V::zero();
    const Reg mvi = kAmsgrad ? V::load(max_v + i) : V::zero();
    update(V::load(p + i), V::load(g + i), V::load(m + i), V::load(v + i), mvi, po, mo, vo, mvo);
    V::store(p + i, po);
    V::store(m + i, mo);
    V::store(v + i, vo);
    if constexpr (kAmsgrad) V::store(max_v + i, mvo);
  }
  if (i < n) {
    const auto k = V::tail_mask(n - i);
    const Reg z = V::zero();
    Reg po, mo, vo, mvo = z;
    const Reg mvi = kAmsgrad ? V::load_partial(max_v + i, k, z) : z;
    update(V::load_partial(p + i, k, z), V::load_partial(g + i, k, z), V::load_partial(m + i, k, z),
           V::load_partial(v + i, k, z), mvi, po, mo, vo, mvo);
    V::store_partial(p + i, k, po);
    V::store_partial(m + i, k, mo);
    V::store_partial(v + i, k, vo);
    if constexpr (kAmsgrad) V::store_partial(max_v + i, k, mvo);
  }
}

/// Picks the instantiation for the options (the flags are per step, the loop per element).
template <class V>
void adam_kernel(float* p, const float* g, float* m, float* v, float* max_v, std::int64_t n,
                 const AdamCoeffs<float>& c) {
  auto run = [&]<bool kL2, bool kDecoupled>() {
    if (c.amsgrad) {
      if (c.maximize)
        return adam_kernel_impl<V, kL2, kDecoupled, true, true>(p, g, m, v, max_v, n, c);
      return adam_kernel_impl<V, kL2, kDecoupled, true, false>(p, g, m, v, max_v, n, c);
    }
    if (c.maximize)
      return adam_kernel_impl<V, kL2, kDecoupled, false, true>(p, g, m, v, max_v, n, c);
    return adam_kernel_impl<V, kL2, kDecoupled, false, false>(p, g, m, v, max_v, n, c);
  };
  if (c.decoupled) {
    if (c.l2) return run.template operator()<true, true>();
    return run.template operator()<false, true>();
  }
  if (c.l2) return run.template operator()<true, false>();
  return run.template operator()<false, false>();
}

}  // namespace
}  // namespace minigrad::detail::simd
#endif
