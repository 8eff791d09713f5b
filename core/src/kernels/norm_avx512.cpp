// layer_norm's float32 rows in AVX-512 double vectors (norm_simd_impl.h). Compiled with -mavx512f
// -mavx2 -mfma -ffp-contract=off (core/CMakeLists.txt, x86-64 only): no multiply and add may be
// fused, so the rows have the bits of norm.cpp's portable loops. Called only when simd.cpp found
// AVX-512.
#include "kernels/norm_simd.h"

#if defined(__x86_64__) && defined(__AVX512F__)
#include <immintrin.h>

#include "kernels/norm_simd_impl.h"

namespace minigrad::detail::simd {
namespace {

/// 8 doubles in one __m512d.
struct D {
  using Reg = __m512d;
  static Reg zero() { return _mm512_setzero_pd(); }
  static Reg set1(double v) { return _mm512_set1_pd(v); }
  static Reg load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, Reg v) { _mm512_storeu_pd(p, v); }
  // The zero-masked forms with every lane set: the unmasked ones pass _mm512_undefined_p*()
  // through, which GCC 12 reports as maybe-uninitialized (as in softmax_avx512.cpp).
  static Reg load_float(const float* p) {
    return _mm512_maskz_cvtps_pd(static_cast<__mmask8>(0xFF), _mm256_loadu_ps(p));
  }
  static void store_float(float* p, Reg v) {
    _mm256_storeu_ps(p, _mm512_maskz_cvtpd_ps(static_cast<__mmask8>(0xFF), v));
  }
  static Reg add(Reg a, Reg b) { return _mm512_add_pd(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_pd(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_pd(a, b); }
};

}  // namespace

const LayerNormRows* layer_norm_rows_avx512() { return layer_norm_rows<D>(); }

}  // namespace minigrad::detail::simd

#else
namespace minigrad::detail::simd {
const LayerNormRows* layer_norm_rows_avx512() { return nullptr; }
}  // namespace minigrad::detail::simd
#endif
