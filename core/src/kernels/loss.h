#pragma once
// Private: the forward loops of cross_entropy and nll_loss over raw buffers (Note [Fused cross
// entropy] in ops/nn.cpp, which keeps the checks, the reduction and the backward). No Tensor, no
// autograd. The input x is [outer, C, inner] with strides (so, sc, si) in elements: the classes
// of position (o, i) are x[o * so + c * sc + i * si]. Position p = o * inner + i. Each kernel
// writes the loss of every position into loss (when not null) and returns their sum, in double.
// Instantiated for float and double.
#include <cstdint>

namespace minigrad::detail {

/// The layout of a [outer, C, inner] input.
struct ClassStrides {
  std::int64_t outer, C, inner;  // sizes
  std::int64_t so, sc, si;       // strides
};

/// log(sum_j exp(row[j * stride])) over n entries, stable (the row max is subtracted first); all
/// -inf (or an inf entry) gives that infinity, a NaN first entry NaN.
template <typename T>
double row_logsumexp(const T* row, std::int64_t n, std::int64_t stride);

/// cross_entropy with class indices: cls[p] is position p's class (-1: ignored, loss 0), w[p] its
/// weight; the loss is (1 - ls) w[p] (lse - x[cls]) + ls / C sum_c class_w[c] (lse - x[c]) (the
/// smoothing term only when ls > 0; class_w null means all 1).
template <typename T>
double cross_entropy_index_kernel(const T* x, const ClassStrides& l, const std::int64_t* cls,
                                  const double* w, const double* class_w, double ls, T* loss);

/// cross_entropy with a target distribution q laid out as x: sum_c q[c] (lse - x[c]).
template <typename T>
double cross_entropy_prob_kernel(const T* x, const T* q, const ClassStrides& l, T* loss);

/// nll_loss: -w[p] x[cls[p]] (0 where cls[p] is -1).
template <typename T>
double nll_loss_kernel(const T* x, const ClassStrides& l, const std::int64_t* cls, const double* w,
                       T* loss);

}  // namespace minigrad::detail
