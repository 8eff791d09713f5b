#pragma once
// Private: layer_norm's forward and fused backward over raw buffers (ops/nn.cpp keeps the checks
// and the create_graph backward, written with public ops). No Tensor, no autograd. Instantiated
// for float and double; both split rows across threads (Note [Layer norm kernels]).
#include <cstdint>

namespace minigrad::detail {

/// For each of `rows` rows of n elements (row r starts at x + r * x_row_stride, its elements
/// x_col_stride apart): mean[r], rstd[r] = 1 / sqrt(var + eps) (biased variance, two passes in
/// double) and out[r * n + j] = (x - mean) * rstd * w[j] + b[j] (w, b may be null; out is
/// contiguous).
template <typename T>
void layer_norm_kernel(const T* x, std::int64_t x_row_stride, std::int64_t x_col_stride, const T* w,
                       const T* b, std::int64_t rows, std::int64_t n, double eps, T* out,
                       double* mean, double* rstd);

/// layer_norm's backward for contiguous g and x of `rows` x n, given the forward's mean and rstd:
/// with x_hat = (x - mean) * rstd and g_hat = g * w (w may be null: ones),
///   grad_x = rstd * (g_hat - mean_j(g_hat) - x_hat * mean_j(g_hat * x_hat))   [rows, n]
///   grad_w = sum_rows(g * x_hat), grad_b = sum_rows(g)                         [n]
/// Any output may be null (not computed). The sums over rows are the same bits on any number of
/// threads.
template <typename T>
void layer_norm_backward_kernel(const T* g, const T* x, const double* mean, const double* rstd,
                                const T* w, std::int64_t rows, std::int64_t n, T* grad_x, T* grad_w,
                                T* grad_b);

}  // namespace minigrad::detail
