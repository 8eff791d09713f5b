#pragma once
// Private: embedding's gather over raw buffers (ops/nn.cpp keeps the checks and the backward,
// written with public ops). No Tensor, no autograd. Instantiated for every dtype's C++ type.
#include <cstdint>

namespace minigrad::detail {

/// out[i, :] = weight[idx[i], :] for i in [0, n): rows of dim elements, row k of weight at
/// weight + k * w_row_stride (its elements contiguous); out is contiguous [n, dim]. The indices
/// must be in range (checked by the caller).
template <typename T>
void embedding_kernel(const T* weight, std::int64_t w_row_stride, std::int64_t dim,
                      const std::int64_t* idx, std::int64_t n, T* out);

}  // namespace minigrad::detail
