// layer_norm's forward kernel (kernels/norm.h).
#include "kernels/norm.h"

#include <cmath>

namespace minigrad::detail {

template <typename T>
void layer_norm_kernel(const T* x, std::int64_t x_row_stride, std::int64_t x_col_stride, const T* w,
                       const T* b, std::int64_t rows, std::int64_t n, double eps, T* out,
                       double* mean_out, double* rstd_out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * x_row_stride;
    T* orow = out + r * n;
    // NOTE: Welford's one-pass update in double: no E[x^2] - E[x]^2 cancellation, so rows
    // of 1e4 + small values keep their variance. The variance is biased (divided by n), as
    // PyTorch.
    double mean = 0, m2 = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      double v = static_cast<double>(row[j * x_col_stride]);
      double delta = v - mean;
      mean += delta / static_cast<double>(j + 1);
      m2 += delta * (v - mean);
    }
    double rstd = 1.0 / std::sqrt(m2 / static_cast<double>(n) + eps);
    mean_out[r] = mean;
    rstd_out[r] = rstd;
    for (std::int64_t j = 0; j < n; ++j) {
      double y = (static_cast<double>(row[j * x_col_stride]) - mean) * rstd;
      if (w) y *= static_cast<double>(w[j]);
      if (b) y += static_cast<double>(b[j]);
      orow[j] = static_cast<T>(y);
    }
  }
}

template void layer_norm_kernel<float>(const float*, std::int64_t, std::int64_t, const float*,
                                       const float*, std::int64_t, std::int64_t, double, float*,
                                       double*, double*);
template void layer_norm_kernel<double>(const double*, std::int64_t, std::int64_t, const double*,
                                        const double*, std::int64_t, std::int64_t, double, double*,
                                        double*, double*);

}  // namespace minigrad::detail
