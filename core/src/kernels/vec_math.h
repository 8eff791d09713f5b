#pragma once
// Private: float32 vector types and a vectorised exp for the SIMD translation units only
// (softmax_avx2.cpp, softmax_avx512.cpp; Note [Runtime SIMD dispatch] in simd.h).
//
// Include this only from a file compiled with -mavx2 -mfma or -mavx512f: everything here is in an
// anonymous namespace and uses no standard-library inline function, so nothing compiled with
// those flags can be picked by the linker for code that runs on other CPUs (an inline function
// emitted in two files with different -m flags is one symbol, and the linker keeps either).
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cstdint>

namespace minigrad::detail::simd {
namespace {

// Note [Vectorised exp]
// Cephes' expf, as Sleef and PyTorch's Vectorized<float>::exp: x = n ln2 + r with
// n = round(x / ln2) and |r| <= ln2 / 2, r computed in two steps (Cody-Waite: ln2 = C1 + C2 where
// n * C1 is exact), e^r by a degree-7 polynomial (1 + r + r^2 P5(r)), then scaled by 2^n.
// Inputs are clamped to [-104, 89] first: exp(-104) < 2^-150 rounds to 0 and exp(89) > FLT_MAX, so
// -inf gives 0 and +inf gives inf; x is the clamps' second operand, which min/max return when
// either is NaN, so NaN propagates. The scaling by 2^n for n in [-150, 128] is exact until the
// final multiply: 2^n = 2^(n/2) 2^(n - n/2) with both factors normal (AVX2), or one vscalefps
// (AVX-512), so results in the denormal range are rounded once. Max error ~1 ulp
// (tests/core/test_vec_math.cpp sweeps it against std::exp).
constexpr float kExpHi = 89.0f;
constexpr float kExpLo = -104.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kC1 = 0.693359375f;
constexpr float kC2 = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;

/// AVX2 + FMA: 8 floats.
struct Avx2 {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr std::int64_t kWidth = 8;

  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  /// The first k (1..7) lanes.
  static Mask tail_mask(std::int64_t k) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  /// The masked lanes of p, fill elsewhere (lanes outside the mask are not read).
  static Reg load_partial(const float* p, Mask k, Reg fill) {
    return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, k), _mm256_castsi256_ps(k));
  }
  static void store_partial(float* p, Mask k, Reg v) { _mm256_maskstore_ps(p, k, v); }
  /// v on the masked lanes, 0 elsewhere.
  static Reg keep(Reg v, Mask k) { return _mm256_and_ps(v, _mm256_castsi256_ps(k)); }

  static Reg set1(float v) { return _mm256_set1_ps(v); }
  static Reg zero() { return _mm256_setzero_ps(); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm256_mul_ps(a, b); }
  /// a * b + c, one rounding.
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  /// c - a * b, one rounding.
  static Reg fnmadd(Reg a, Reg b, Reg c) { return _mm256_fnmadd_ps(a, b, c); }
  /// a / b and sqrt(a), correctly rounded (as their scalar forms: the same bits).
  static Reg div(Reg a, Reg b) { return _mm256_div_ps(a, b); }
  static Reg sqrt(Reg a) { return _mm256_sqrt_ps(a); }
  /// -a, by flipping the sign bit (as unary minus: -0 for 0, NaN stays NaN).
  static Reg neg(Reg a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
  /// a, hidden from the optimiser: GCC contracts a _mm256_mul_ps feeding a _mm256_add_ps into
  /// one fma (-ffp-contract=fast), which rounds once where the scalar code rounds twice.
  static Reg rounded(Reg a) {
    asm("" : "+x"(a));
    return a;
  }
  /// a > b ? a : b; b when either is NaN (x86 semantics, relied on).
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  /// a < b ? a : b; b when either is NaN.
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg round(Reg x) {
    return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  /// p * 2^n for integral n in [-150, 128] (NaN n only with NaN p).
  static Reg scale(Reg p, Reg n) {
    const __m256i ni = _mm256_cvtps_epi32(n);
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const Reg s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const Reg s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
  static float reduce_add(Reg v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float reduce_max(Reg v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};

#if defined(__AVX512F__)
/// AVX-512F: 16 floats.
struct Avx512 {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr std::int64_t kWidth = 16;
  // The unmasked max/min/roundscale/scalef of GCC 12 pass _mm512_undefined_ps() through, which
  // -Wmaybe-uninitialized reports (a GCC 12 bug); the masked forms with every lane set do not.
  static constexpr Mask kAll = static_cast<Mask>(0xFFFF);

  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Mask tail_mask(std::int64_t k) { return static_cast<Mask>((1u << k) - 1u); }
  static Reg load_partial(const float* p, Mask k, Reg fill) {
    return _mm512_mask_loadu_ps(fill, k, p);
  }
  static void store_partial(float* p, Mask k, Reg v) { _mm512_mask_storeu_ps(p, k, v); }
  static Reg keep(Reg v, Mask k) { return _mm512_maskz_mov_ps(k, v); }

  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg fnmadd(Reg a, Reg b, Reg c) { return _mm512_fnmadd_ps(a, b, c); }
  static Reg div(Reg a, Reg b) { return _mm512_mask_div_ps(a, kAll, a, b); }
  static Reg sqrt(Reg a) { return _mm512_mask_sqrt_ps(a, kAll, a); }
  static Reg rounded(Reg a) {
    asm("" : "+v"(a));
    return a;
  }
  static Reg neg(Reg a) {
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(static_cast<int>(0x80000000u))));
  }
  static Reg max(Reg a, Reg b) { return _mm512_mask_max_ps(a, kAll, a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_mask_min_ps(a, kAll, a, b); }
  static Reg round(Reg x) {
    return _mm512_mask_roundscale_ps(x, kAll, x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  /// p * 2^n, rounded once (vscalefps handles the denormal and overflow ranges).
  static Reg scale(Reg p, Reg n) { return _mm512_mask_scalef_ps(p, kAll, p, n); }
  /// Lanes 0-7 (i = 0) or 8-15 (i = 1). Not _mm512_castps512_ps256 / _mm512_extractf64x4_pd:
  /// same GCC 12 warning as above.
  template <int kI>
  static __m256 half(Reg v) {
    return _mm256_castpd_ps(_mm512_mask_extractf64x4_pd(
        _mm256_setzero_pd(), static_cast<__mmask8>(0xFF), _mm512_castps_pd(v), kI));
  }
  static float reduce_add(Reg v) {
    const __m256 lo = half<0>(v);
    const __m256 hi = half<1>(v);
    return Avx2::reduce_add(_mm256_add_ps(lo, hi));
  }
  static float reduce_max(Reg v) {
    const __m256 lo = half<0>(v);
    const __m256 hi = half<1>(v);
    return Avx2::reduce_max(_mm256_max_ps(lo, hi));
  }
};
#endif

/// exp of each lane (Note [Vectorised exp]).
template <class V>
typename V::Reg vexp(typename V::Reg x) {
  using Reg = typename V::Reg;
  x = V::max(V::set1(kExpLo), V::min(V::set1(kExpHi), x));
  const Reg n = V::round(V::mul(x, V::set1(kLog2e)));
  Reg r = V::fnmadd(n, V::set1(kC1), x);
  r = V::fnmadd(n, V::set1(kC2), r);
  Reg p = V::set1(kP0);
  p = V::fmadd(p, r, V::set1(kP1));
  p = V::fmadd(p, r, V::set1(kP2));
  p = V::fmadd(p, r, V::set1(kP3));
  p = V::fmadd(p, r, V::set1(kP4));
  p = V::fmadd(p, r, V::set1(kP5));
  p = V::fmadd(p, V::mul(r, r), r);
  p = V::add(p, V::set1(1.0f));
  return V::scale(p, n);
}

}  // namespace
}  // namespace minigrad::detail::simd
#endif
