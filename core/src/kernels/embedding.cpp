// embedding's gather and scatter kernels (kernels/embedding.h).
#include "kernels/embedding.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

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

template <typename T>
void embedding_backward_add_kernel(const T* rows, const std::int64_t* idx, std::int64_t n,
                                   std::int64_t dim, T* out) {
  // Each index gets a slot in order of first use; embedding_backward_kernel sums the rows into
  // the zeroed slots (the bits it gives a zeroed table's rows), then out's rows add them (the
  // engine's out + that table).
  std::unordered_map<std::int64_t, std::int64_t> slot_of;
  slot_of.reserve(static_cast<std::size_t>(n));
  std::vector<std::int64_t> slot(static_cast<std::size_t>(n)), index_of_slot;
  for (std::int64_t i = 0; i < n; ++i) {
    auto [it, added] = slot_of.try_emplace(idx[i], static_cast<std::int64_t>(index_of_slot.size()));
    if (added) index_of_slot.push_back(idx[i]);
    slot[static_cast<std::size_t>(i)] = it->second;
  }
  std::vector<T> sums(index_of_slot.size() * static_cast<std::size_t>(dim), T(0));
  embedding_backward_kernel<T>(rows, slot.data(), n, dim, sums.data());
  for (std::size_t u = 0; u < index_of_slot.size(); ++u) {
    T* dst = out + index_of_slot[u] * dim;
    const T* src = sums.data() + static_cast<std::int64_t>(u) * dim;
    for (std::int64_t j = 0; j < dim; ++j) dst[j] += src[j];
  }
}

template void embedding_backward_kernel<float>(const float*, const std::int64_t*, std::int64_t,
                                               std::int64_t, float*);
template void embedding_backward_kernel<double>(const double*, const std::int64_t*, std::int64_t,
                                                std::int64_t, double*);

template void embedding_backward_add_kernel<float>(const float*, const std::int64_t*, std::int64_t,
                                                   std::int64_t, float*);
template void embedding_backward_add_kernel<double>(const double*, const std::int64_t*,
                                                    std::int64_t, std::int64_t, double*);

}  // namespace minigrad::detail
