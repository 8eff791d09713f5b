#pragma once
// Private: embedding's gather and its backward scatter over raw buffers (ops/nn.cpp keeps the
// checks and the autograd). No Tensor, no autograd. Instantiated for every
// dtype's C++ type.
#include <cstdint>

namespace minigrad::detail {

/// out[i, :] = weight[idx[i], :] for i in [0, n): rows of dim elements, row k of weight at
/// weight + k * w_row_stride (its elements contiguous); out is contiguous [n, dim]. The indices
/// must be in range (checked by the caller).
template <typename T>
void embedding_kernel(const T* weight, std::int64_t w_row_stride, std::int64_t dim,
                      const std::int64_t* idx, std::int64_t n, T* out);

/// The backward scatter: out[idx[i], :] += rows[i, :] for i in [0, n), in the order of i (as
/// index_add), rows contiguous [n, dim], out contiguous [num, dim] (zeroed by the caller). Float
/// dtypes only.
template <typename T>
void embedding_backward_kernel(const T* rows, const std::int64_t* idx, std::int64_t n,
                               std::int64_t dim, T* out);

}  // namespace minigrad::detail
