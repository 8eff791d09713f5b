#pragma once
// Private: the fused Adam / AdamW update over raw buffers (Note [Fused Adam]). No autograd, no
// Tensor: contiguous arrays of n elements. Included by simd.h, so it defines no inline function
// (Note [Runtime SIMD dispatch]): only the coefficients' struct and declarations.
//
// Note [Fused Adam]
// One pass per parameter reads p, g, m, v (and max_v) once and writes p, m, v (max_v) once, where
// the unfused optimizer ran about fifteen whole-tensor ops with a temporary each. The arithmetic
// is PyTorch 1.13's CPU kernels', element by element, in the parameter's dtype with every scalar
// first rounded to it (`iter.scalar_value<opmath_t>` is float for float32), including the fused
// multiply-adds that ATen's vectorised `add(alpha)` and `addcmul` compile to:
//   g  = maximize ? -g : g
//   g  = fma(wd, p, g)                        Adam with weight_decay: grad.add(param, alpha=wd)
//   p  = p * (1 - lr wd)                      AdamW: param.mul_(1 - lr * weight_decay)
//   m  = fma(1 - b1, g, m * b1)               exp_avg.mul_(b1).add_(g, alpha=1 - b1)
//   v  = fma((1 - b2) * g, g, v * b2)         exp_avg_sq.mul_(b2).addcmul_(g, g, value=1 - b2)
//   mv = max(mv, v); use mv below            amsgrad: torch.maximum(max_exp_avg_sq, exp_avg_sq)
//   d  = sqrt(v) / sqrt(1 - b2^t) + eps       (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
//   p  = p + (-lr / (1 - b1^t) * m) / d       param.addcdiv_(exp_avg, denom, value=-step_size)
// Checked bit for bit against torch.optim.AdamW (foreach=False and True) on 100,003 float32
// values (tests/core/test_fused_optim.cpp holds PyTorch's printed values). Every operation is
// correctly rounded (fma included), so the AVX-512, AVX2 and portable (std::fma) paths, and any
// split of the elements across threads, give the same bits.
#include <cstdint>

namespace minigrad::detail {

/// The per-step scalars of Note [Fused Adam], already rounded to T.
template <typename T>
struct AdamCoeffs {
  T weight_decay;  // Adam's L2 term (used when l2)
  T decay;         // AdamW's 1 - lr * weight_decay (used when decoupled)
  T beta1, one_minus_beta1;
  T beta2, one_minus_beta2;
  T bias_correction2_sqrt;
  T eps;
  T neg_step_size;  // -lr / (1 - beta1^step)
  bool l2;          // Adam with weight_decay != 0
  bool decoupled;   // AdamW
  bool amsgrad;     // max_v is read and written
  bool maximize;    // g is negated
};

/// The update of Note [Fused Adam] over elements [0, n) (max_v is null unless c.amsgrad). Runs the
/// SIMD kernel of this CPU for float (Note [Runtime SIMD dispatch]), portable code otherwise.
void fused_adam_kernel(float* p, const float* g, float* m, float* v, float* max_v, std::int64_t n,
                       const AdamCoeffs<float>& c);
void fused_adam_kernel(double* p, const double* g, double* m, double* v, double* max_v,
                       std::int64_t n, const AdamCoeffs<double>& c);
/// The portable float kernel alone (tests compare it with the SIMD ones).
void fused_adam_kernel_portable(float* p, const float* g, float* m, float* v, float* max_v,
                                std::int64_t n, const AdamCoeffs<float>& c);

}  // namespace minigrad::detail
