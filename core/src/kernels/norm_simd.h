#pragma once
// Private: layer_norm's float32 rows in AVX2 / AVX-512 double vectors (Note [Layer norm kernels]
// in norm.cpp), compiled by norm_avx2.cpp and norm_avx512.cpp with -ffp-contract=off.
#include <cstdint>

namespace minigrad::detail::simd {

/// The row loops of norm.cpp for contiguous float32 rows, with the same operations in the same
/// order (the same bits): forward_rows<float, true> and backward_rows<float, w != null, pw !=
/// null>.
struct LayerNormRows {
  void (*forward)(const float* x, std::int64_t x_row_stride, const float* w, const float* b,
                  std::int64_t r0, std::int64_t r1, std::int64_t n, double eps, float* out,
                  double* mean_out, double* rstd_out);
  void (*backward)(const float* g, const float* x, const double* mean, const double* rstd,
                   const float* w, std::int64_t r0, std::int64_t r1, std::int64_t n, float* grad_x,
                   double* pw, double* pb);
};

/// Null when the file was compiled without its instruction set (not x86-64). Call one only when
/// kernels_f32() is at that level or above (the CPU has it).
const LayerNormRows* layer_norm_rows_avx2();
const LayerNormRows* layer_norm_rows_avx512();

}  // namespace minigrad::detail::simd
