// The forward loops of cross_entropy and nll_loss (kernels/loss.h).
#include "kernels/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/simd.h"

namespace minigrad::detail {

template <typename T>
double row_logsumexp(const T* row, std::int64_t n, std::int64_t stride) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < n; ++j) m = std::max(m, row[j * stride]);
  if (n > 0 && std::isnan(row[0])) m = row[0];
  if (std::isinf(m)) return static_cast<double>(m);  // all -inf (or an inf logit)
  if constexpr (std::is_same_v<T, float>) {
    // A contiguous float32 row: the exps as the SIMD kernel's vectors (~1 ulp, Note [Vectorised
    // exp]) into a scratch row, summed in double in 4 partial sums. The scalar double exp per
    // logit was ~80 ms of GPT-2 small's forward (50257 classes x 256 positions).
    const simd::Kernels* k = simd::kernels_f32();
    if (stride == 1 && k != nullptr && n >= 16) {
      thread_local std::vector<float> scratch;
      if (static_cast<std::int64_t>(scratch.size()) < n)
        scratch.resize(static_cast<std::size_t>(n));
      float* e = scratch.data();
      for (std::int64_t j = 0; j < n; ++j) e[j] = row[j] - m;  // as below: the difference in T
      k->exp(e, e, n);
      double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      std::int64_t j = 0;
      for (; j + 4 <= n; j += 4) {
        s0 += e[j];
        s1 += e[j + 1];
        s2 += e[j + 2];
        s3 += e[j + 3];
      }
      for (; j < n; ++j) s0 += e[j];
      return std::log((s0 + s1) + (s2 + s3)) + static_cast<double>(m);
    }
  }
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j) s += std::exp(static_cast<double>(row[j * stride] - m));
  return std::log(s) + static_cast<double>(m);
}

template <typename T>
double cross_entropy_index_kernel(const T* x, const ClassStrides& l, const std::int64_t* cls,
                                  const double* w, const double* class_w, double ls, T* loss) {
  double total = 0;
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t i = 0; i < l.inner; ++i) {
      const std::int64_t p = o * l.inner + i;
      double v = 0;
      if (cls[p] >= 0) {
        const T* row = x + o * l.so + i * l.si;
        double lse = row_logsumexp(row, l.C, l.sc);
        v = (1 - ls) * w[p] * (lse - static_cast<double>(row[cls[p] * l.sc]));
        // NOTE: PyTorch adds the smoothing term only when label_smoothing > 0 (so an inf logit
        // of a non-target class gives no inf * 0 = NaN without smoothing).
        if (ls > 0) {
          double smooth = 0;
          for (std::int64_t j = 0; j < l.C; ++j) {
            double wj = class_w ? class_w[j] : 1.0;
            smooth += wj * (lse - static_cast<double>(row[j * l.sc]));
          }
          v += ls / static_cast<double>(l.C) * smooth;
        }
      }
      if (loss) loss[p] = static_cast<T>(v);
      total += v;
    }
  }
  return total;
}

template <typename T>
double cross_entropy_prob_kernel(const T* x, const T* q, const ClassStrides& l, T* loss) {
  double total = 0;
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t i = 0; i < l.inner; ++i) {
      const std::int64_t base = o * l.so + i * l.si;
      double lse = row_logsumexp(x + base, l.C, l.sc);
      double v = 0;
      for (std::int64_t j = 0; j < l.C; ++j) {
        std::int64_t k = base + j * l.sc;
        v += static_cast<double>(q[k]) * (lse - static_cast<double>(x[k]));
      }
      if (loss) loss[o * l.inner + i] = static_cast<T>(v);
      total += v;
    }
  }
  return total;
}

template <typename T>
double nll_loss_kernel(const T* x, const ClassStrides& l, const std::int64_t* cls, const double* w,
                       T* loss) {
  double total = 0;
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t i = 0; i < l.inner; ++i) {
      const std::int64_t p = o * l.inner + i;
      double v = 0;
      if (cls[p] >= 0) v = -w[p] * static_cast<double>(x[o * l.so + cls[p] * l.sc + i * l.si]);
      if (loss) loss[p] = static_cast<T>(v);
      total += v;
    }
  }
  return total;
}

#define MG_LOSS_INSTANTIATE(T)                                                                     \
  template double row_logsumexp<T>(const T*, std::int64_t, std::int64_t);                          \
  template double cross_entropy_index_kernel<T>(const T*, const ClassStrides&,                     \
                                                const std::int64_t*, const double*, const double*, \
                                                double, T*);                                       \
  template double cross_entropy_prob_kernel<T>(const T*, const T*, const ClassStrides&, T*);       \
  template double nll_loss_kernel<T>(const T*, const ClassStrides&, const std::int64_t*,           \
                                     const double*, T*);
MG_LOSS_INSTANTIATE(float)
MG_LOSS_INSTANTIATE(double)
#undef MG_LOSS_INSTANTIATE

}  // namespace minigrad::detail
