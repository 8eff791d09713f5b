// PyTorch's float32 normal transform (torch-rng-parity §5.2) 8 lanes at a time, as the AVX2
// kernel PyTorch 1.13 ships: Box-Muller over blocks of 16 uniforms with the Cephes log and sincos
// of kernels/cephes_f32.h. random.cpp's scalar emulation of one lane is the reference; every
// operation here is the same float32 operation in the same order, so the bits are the same
// (tests/core/test_random.cpp runs both over every uniform the generator can give).
//
// Compiled with -mavx2 -mfma -ffp-contract=off (core/CMakeLists.txt, x86-64 only): the fused
// multiply-adds are the explicit _mm256_fmadd_ps below (where PyTorch's GCC build fused them), and
// no other multiply and add may be fused. Called only after simd.cpp found AVX2 and FMA.
#include "kernels/simd.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include "kernels/cephes_f32.h"

namespace minigrad::detail::simd {
namespace {

using namespace cephes;

__m256 set1(float v) { return _mm256_set1_ps(v); }
__m256 from_bits(__m256i v) { return _mm256_castsi256_ps(v); }
__m256i bits(__m256 v) { return _mm256_castps_si256(v); }
__m256i set1i(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }

/// log of 8 values in (0, 1] (random.cpp's cephes_log, lane by lane).
__m256 log8(__m256 x) {
  const __m256 invalid = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LE_OS);
  x = _mm256_max_ps(x, set1(kMinNormPos));
  const __m256i biased = _mm256_sub_epi32(_mm256_srli_epi32(bits(x), 23), set1i(127));
  const __m256 m =
      from_bits(_mm256_or_si256(_mm256_and_si256(bits(x), set1i(0x807FFFFFu)), set1i(0x3F000000u)));
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(biased), set1(1.0f));
  const __m256 below = _mm256_cmp_ps(m, set1(kSqrtHalf), _CMP_LT_OS);
  __m256 t = _mm256_sub_ps(m, set1(1.0f));
  e = _mm256_sub_ps(e, _mm256_and_ps(below, set1(1.0f)));
  t = _mm256_add_ps(t, _mm256_and_ps(below, m));
  const __m256 z = _mm256_mul_ps(t, t);
  __m256 y = set1(kLogP[0]);
  for (int k = 1; k <= 8; ++k) y = _mm256_fmadd_ps(y, t, set1(kLogP[k]));
  y = _mm256_mul_ps(y, t);
  y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, set1(kLogQ1)));
  y = _mm256_sub_ps(y, _mm256_mul_ps(z, set1(0.5f)));
  t = _mm256_add_ps(t, y);
  t = _mm256_fmadd_ps(e, set1(kLogQ2), t);
  return _mm256_or_ps(t, invalid);  // NaN where x <= 0 (never, for 1 - u)
}

/// sin and cos of 8 angles in [0, 2 pi) (random.cpp's cephes_sincos, lane by lane).
void sincos8(__m256 t, __m256& sin_out, __m256& cos_out) {
  __m256i sign_sin = _mm256_and_si256(bits(t), set1i(0x80000000u));
  __m256 x = from_bits(_mm256_and_si256(bits(t), set1i(0x7FFFFFFFu)));
  __m256 y = _mm256_mul_ps(x, set1(kFourOverPi));
  __m256i j = _mm256_cvttps_epi32(y);
  j = _mm256_and_si256(_mm256_add_epi32(j, set1i(1)), set1i(~1u));
  y = _mm256_cvtepi32_ps(j);
  sign_sin = _mm256_xor_si256(sign_sin, _mm256_slli_epi32(_mm256_and_si256(j, set1i(4)), 29));
  const __m256 sin_poly_is_sin =
      from_bits(_mm256_cmpeq_epi32(_mm256_and_si256(j, set1i(2)), _mm256_setzero_si256()));
  const __m256i sign_cos =
      _mm256_slli_epi32(_mm256_andnot_si256(_mm256_sub_epi32(j, set1i(2)), set1i(4)), 29);
  x = _mm256_fmadd_ps(y, set1(kMinusDP1), x);
  x = _mm256_fmadd_ps(y, set1(kMinusDP2), x);
  x = _mm256_fmadd_ps(y, set1(kMinusDP3), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 c = _mm256_fmadd_ps(set1(kCosP0), z, set1(kCosP1));
  c = _mm256_fmadd_ps(c, z, set1(kCosP2));
  c = _mm256_mul_ps(c, z);
  c = _mm256_fmsub_ps(c, z, _mm256_mul_ps(z, set1(0.5f)));
  c = _mm256_add_ps(c, set1(1.0f));
  __m256 s = _mm256_fmadd_ps(set1(kSinP0), z, set1(kSinP1));
  s = _mm256_fmadd_ps(s, z, set1(kSinP2));
  s = _mm256_mul_ps(s, z);
  s = _mm256_fmadd_ps(s, x, x);
  const __m256 s_keep = _mm256_and_ps(sin_poly_is_sin, s);
  const __m256 c_keep = _mm256_andnot_ps(sin_poly_is_sin, c);
  const __m256 s_rest = _mm256_sub_ps(s, s_keep);
  const __m256 c_rest = _mm256_sub_ps(c, c_keep);
  sin_out = from_bits(_mm256_xor_si256(bits(_mm256_add_ps(c_keep, s_keep)), sign_sin));
  cos_out = from_bits(_mm256_xor_si256(bits(_mm256_add_ps(c_rest, s_rest)), sign_cos));
}

void normal_blocks_kernel(float* d, std::int64_t blocks, float mean, float stddev) {
  const __m256 vmean = set1(mean), vstd = set1(stddev);
  for (std::int64_t b = 0; b < blocks; ++b, d += 16) {
    const __m256 u1 = _mm256_sub_ps(set1(1.0f), _mm256_loadu_ps(d));  // (0, 1]: never log(0)
    const __m256 u2 = _mm256_loadu_ps(d + 8);
    const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(set1(-2.0f), log8(u1)));
    const __m256 theta = _mm256_mul_ps(set1(kTwoPiF), u2);
    __m256 s, c;
    sincos8(theta, s, c);
    _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), vstd, vmean));
    _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s), vstd, vmean));
  }
}

}  // namespace

NormalBlocks normal_blocks_avx2() { return &normal_blocks_kernel; }

}  // namespace minigrad::detail::simd
#else
namespace minigrad::detail::simd {
NormalBlocks normal_blocks_avx2() { return nullptr; }
}  // namespace minigrad::detail::simd
#endif
