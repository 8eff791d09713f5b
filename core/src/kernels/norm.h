#pragma once
// Private: layer_norm's forward over raw buffers (ops/nn.cpp keeps the checks and the backward,
// written with public ops). No Tensor, no autograd. Instantiated for float and double.
#include <cstdint>

namespace minigrad::detail {

/// For each of `rows` rows of n elements (row r starts at x + r * x_row_stride, its elements
/// x_col_stride apart): mean[r], rstd[r] = 1 / sqrt(var + eps) (biased variance, Welford in
/// double) and out[r * n + j] = (x - mean) * rstd * w[j] + b[j] (w, b may be null; out is
/// contiguous).
template <typename T>
void layer_norm_kernel(const T* x, std::int64_t x_row_stride, std::int64_t x_col_stride, const T* w,
                       const T* b, std::int64_t rows, std::int64_t n, double eps, T* out,
                       double* mean, double* rstd);

}  // namespace minigrad::detail
