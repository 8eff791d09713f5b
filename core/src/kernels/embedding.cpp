// embedding's gather and scatter kernels (kernels/embedding.h).
#include "kernels/embedding.h"

#include <algorithm>

namespace minigrad::detail {

template <typename T>
void embedding_kernel(const T* weight, std::int64_t w_row_stride, std::int64_t dim,
                      const std::int64_t* idx, std::int64_t n, T* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T* src = weight + idx[i] * w_row_stride;
    std::copy(src, src + dim, out + i * dim);
  }
}

template void embedding_kernel<float>(const float*, std::int64_t, std::int64_t, const std::int64_t*,
                                      std::int64_t, float*);
template void embedding_kernel<double>(const double*, std::int64_t, std::int64_t,
                                       const std::int64_t*, std::int64_t, double*);
template void embedding_kernel<std::int64_t>(const std::int64_t*, std::int64_t, std::int64_t,
                                             const std::int64_t*, std::int64_t, std::int64_t*);
template void embedding_kernel<bool>(const bool*, std::int64_t, std::int64_t, const std::int64_t*,
                                     std::int64_t, bool*);

template <typename T>
void embedding_backward_kernel(const T* rows, const std::int64_t* idx, std::int64_t n,
                               std::int64_t dim, T* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    T* dst = out + idx[i] * dim;
    const T* src = rows + i * dim;
    for (std::int64_t j = 0; j < dim; ++j) dst[j] += src[j];
  }
}

template void embedding_backward_kernel<float>(const float*, const std::int64_t*, std::int64_t,
                                               std::int64_t, float*);
template void embedding_backward_kernel<double>(const double*, const std::int64_t*, std::int64_t,
                                                std::int64_t, double*);

}  // namespace minigrad::detail
