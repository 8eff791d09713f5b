// The fused Adam / AdamW update (Note [Fused Adam] in optim.h): the portable kernels and the
// run-time choice of the float32 SIMD ones.
#include "kernels/optim.h"

#include <cmath>

#include "kernels/simd.h"

namespace minigrad::detail {
namespace {

template <typename T>
void adam_portable(T* p, const T* g, T* m, T* v, T* max_v, std::int64_t n, const AdamCoeffs<T>& c) {
  for (std::int64_t i = 0; i < n; ++i) {
    T gi = c.maximize ? -g[i] : g[i];
    T pi = p[i];
    if (c.l2) gi = std::fma(c.weight_decay, pi, gi);
    if (c.decoupled) pi = pi * c.decay;
    const T mi = std::fma(c.one_minus_beta1, gi, m[i] * c.beta1);
    T vi = std::fma(c.one_minus_beta2 * gi, gi, v[i] * c.beta2);
    m[i] = mi;
    v[i] = vi;
    if (c.amsgrad) {
      // NOTE: torch.maximum propagates NaN; v is NaN whenever max_v is (v stays NaN once it is),
      // so "max_v > v ? max_v : v" (v when either is NaN, as the SIMD max) agrees with it.
      vi = max_v[i] > vi ? max_v[i] : vi;
      max_v[i] = vi;
    }
    const T denom = std::sqrt(vi) / c.bias_correction2_sqrt + c.eps;
    p[i] = pi + (c.neg_step_size * mi) / denom;
  }
}

}  // namespace

void fused_adam_kernel_portable(float* p, const float* g, float* m, float* v, float* max_v,
                                std::int64_t n, const AdamCoeffs<float>& c) {
  adam_portable(p, g, m, v, max_v, n, c);
}

void fused_adam_kernel(float* p, const float* g, float* m, float* v, float* max_v, std::int64_t n,
                       const AdamCoeffs<float>& c) {
  if (const simd::Kernels* k = simd::kernels_f32()) {
    k->adam(p, g, m, v, max_v, n, c);
    return;
  }
  adam_portable(p, g, m, v, max_v, n, c);
}

void fused_adam_kernel(double* p, const double* g, double* m, double* v, double* max_v,
                       std::int64_t n, const AdamCoeffs<double>& c) {
  adam_portable(p, g, m, v, max_v, n, c);
}

}  // namespace minigrad::detail
