// layer_norm's float32 rows in AVX2 double vectors (norm_simd_impl.h). Compiled with -mavx2 -mfma
// -ffp-contract=off (core/CMakeLists.txt, x86-64 only): no multiply and add may be fused, so the
// rows have the bits of norm.cpp's portable loops. Called only when simd.cpp found AVX2.
#include "kernels/norm_simd.h"

#if defined(__x86_64__) && defined(__AVX2__)
#include <immintrin.h>

#include "kernels/norm_simd_impl.h"

namespace minigrad::detail::simd {
namespace {

/// 8 doubles as two __m256d (elements 0-3, 4-7).
struct D {
  struct Reg {
    __m256d lo, hi;
  };
  static Reg zero() { return {_mm256_setzero_pd(), _mm256_setzero_pd()}; }
  static Reg set1(double v) { return {_mm256_set1_pd(v), _mm256_set1_pd(v)}; }
  static Reg load(const double* p) { return {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; }
  static void store(double* p, Reg v) {
    _mm256_storeu_pd(p, v.lo);
    _mm256_storeu_pd(p + 4, v.hi);
  }
  static Reg load_float(const float* p) {
    const __m256 f = _mm256_loadu_ps(p);
    return {_mm256_cvtps_pd(_mm256_castps256_ps128(f)),
            _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1))};
  }
  static void store_float(float* p, Reg v) {
    _mm256_storeu_ps(p, _mm256_set_m128(_mm256_cvtpd_ps(v.hi), _mm256_cvtpd_ps(v.lo)));
  }
  static Reg add(Reg a, Reg b) { return {_mm256_add_pd(a.lo, b.lo), _mm256_add_pd(a.hi, b.hi)}; }
  static Reg sub(Reg a, Reg b) { return {_mm256_sub_pd(a.lo, b.lo), _mm256_sub_pd(a.hi, b.hi)}; }
  static Reg mul(Reg a, Reg b) { return {_mm256_mul_pd(a.lo, b.lo), _mm256_mul_pd(a.hi, b.hi)}; }
};

}  // namespace

const LayerNormRows* layer_norm_rows_avx2() { return layer_norm_rows<D>(); }

}  // namespace minigrad::detail::simd

#else
namespace minigrad::detail::simd {
const LayerNormRows* layer_norm_rows_avx2() { return nullptr; }
}  // namespace minigrad::detail::simd
#endif
