// The forward loops of cross_entropy and nll_loss (kernels/loss.h).
#include "kernels/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/simd.h"
#include "minigrad/parallel.h"
#include "parallel.h"

namespace minigrad::detail {

template <typename T>
double row_logsumexp(const T* row, std::int64_t n, std::int64_t stride) {
  if constexpr (std::is_same_v<T, float>) {
    // A contiguous float32 row: the SIMD kernels' max, then exps (~1 ulp, Note [Vectorised exp])
    // summed in float vectors and blocks of them in double. A chain of scalar maxss (each waiting
    // for the one before) and a double exp per logit were a visible part of GPT-2 small's forward
    // (50257 classes x 256 positions).
    const simd::Kernels* k = simd::kernels_f32();
    if (stride == 1 && k != nullptr && n > 0) {
      float m = k->max(row, n);
      if (std::isnan(row[0])) m = row[0];
      if (std::isinf(m)) return static_cast<double>(m);  // all -inf (or an inf logit)
      return std::log(k->exp_sum(row, n, m)) + static_cast<double>(m);
    }
  }
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < n; ++j) m = std::max(m, row[j * stride]);
  if (n > 0 && std::isnan(row[0])) m = row[0];
  if (std::isinf(m)) return static_cast<double>(m);  // all -inf (or an inf logit)
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j) s += std::exp(static_cast<double>(row[j * stride] - m));
  return std::log(s) + static_cast<double>(m);
}

template <typename T>
double cross_entropy_index_kernel(const T* x, const ClassStrides& l, const std::int64_t* cls,
                                  const double* w, const double* class_w, double ls, T* loss) {
  // The positions' logsumexps first, across threads (each is one row's, so the bits do not
  // depend on the thread count), then the losses and their sum in position order.
  const std::int64_t positions = l.outer * l.inner;
  std::vector<double> lses(static_cast<std::size_t>(positions));
  parallel_for(0, positions, std::max<std::int64_t>(1, kGrainSize / std::max<std::int64_t>(l.C, 1)),
               [&](std::int64_t p0, std::int64_t p1) {
                 for (std::int64_t p = p0; p < p1; ++p) {
                   if (cls[p] < 0) continue;
                   const std::int64_t o = p / l.inner, i = p % l.inner;
                   lses[p] = row_logsumexp(x + o * l.so + i * l.si, l.C, l.sc);
                 }
               });
  double total = 0;
  for (std::int64_t o = 0; o < l.outer; ++o) {
    for (std::int64_t i = 0; i < l.inner; ++i) {
      const std::int64_t p = o * l.inner + i;
      double v = 0;
      if (cls[p] >= 0) {
        const T* row = x + o * l.so + i * l.si;
        const double lse = lses[p];
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
