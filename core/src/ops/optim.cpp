// The fused optimizer steps (minigrad/fused_optim.h): checks, then the kernel of
// kernels/optim.cpp over chunks of elements (Note [Fused Adam]).
#include "minigrad/fused_optim.h"

#include <cmath>
#include <initializer_list>

#include "kernels/optim.h"
#include "parallel.h"
#include "tensor_impl.h"

namespace minigrad::detail {
namespace {

/// Elements per chunk: the update reads 4-5 and writes 3-4 values per element, several times
/// an add's work (a quarter of kGrainSize: tiny_lm's [256, 64] weights split).
constexpr std::int64_t kAdamGrain = kGrainSize / 4;

template <typename T>
AdamCoeffs<T> adam_coeffs(const FusedAdamOptions& o, double step) {
  const double bias_correction1 = 1 - std::pow(o.beta1, step);
  const double bias_correction2 = 1 - std::pow(o.beta2, step);
  AdamCoeffs<T> c{};
  c.weight_decay = static_cast<T>(o.weight_decay);
  c.decay = static_cast<T>(1 - o.lr * o.weight_decay);
  c.beta1 = static_cast<T>(o.beta1);
  c.one_minus_beta1 = static_cast<T>(1 - o.beta1);
  c.beta2 = static_cast<T>(o.beta2);
  c.one_minus_beta2 = static_cast<T>(1 - o.beta2);
  c.bias_correction2_sqrt = static_cast<T>(std::sqrt(bias_correction2));
  c.eps = static_cast<T>(o.eps);
  c.neg_step_size = static_cast<T>(-(o.lr / bias_correction1));
  c.l2 = !o.decoupled_weight_decay && o.weight_decay != 0;
  c.decoupled = o.decoupled_weight_decay;
  c.amsgrad = o.amsgrad;
  c.maximize = o.maximize;
  return c;
}

template <typename T>
void run_adam(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
              const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, double step,
              const FusedAdamOptions& o) {
  const AdamCoeffs<T> c = adam_coeffs<T>(o, step);
  T* p = param.data_ptr<T>();
  const T* g = grad.data_ptr<T>();
  T* m = exp_avg.data_ptr<T>();
  T* v = exp_avg_sq.data_ptr<T>();
  T* mv = o.amsgrad ? max_exp_avg_sq.data_ptr<T>() : nullptr;
  parallel_for(
      0, param.numel(), kAdamGrain,
      [&](std::int64_t b, std::int64_t e) {
        fused_adam_kernel(p + b, g + b, m + b, v + b, mv ? mv + b : nullptr, e - b, c);
      },
      kSimdAlign);
}

}  // namespace

bool fused_adam_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                 const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, double step,
                 const FusedAdamOptions& options) {
  constexpr const char* kOp = "_fused_adam_";
  MG_CHECK(param.defined() && grad.defined() && exp_avg.defined() && exp_avg_sq.defined(), kOp,
           "called with an undefined tensor");
  MG_CHECK(!options.amsgrad || max_exp_avg_sq.defined(), kOp,
           "amsgrad needs max_exp_avg_sq, got an undefined tensor");
  MG_CHECK(step >= 1, kOp, "step must be >= 1 (already incremented), got ", step);
  const Tensor* others[] = {&grad, &exp_avg, &exp_avg_sq,
                            options.amsgrad ? &max_exp_avg_sq : &exp_avg_sq};
  const char* names[] = {"grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  for (int i = 0; i < 4; ++i) {
    MG_CHECK(others[i]->shape() == param.shape(), kOp, names[i], " has shape ", others[i]->shape(),
             " but param has shape ", param.shape());
  }
  MG_CHECK(!is_grad_enabled() ||
               !(param.requires_grad() || exp_avg.requires_grad() || exp_avg_sq.requires_grad() ||
                 (options.amsgrad && max_exp_avg_sq.requires_grad())),
           kOp, "writes its tensors in place without recording them; call it under NoGradGuard");
  const Dtype dt = param.dtype();
  if (dt != kFloat32 && dt != kFloat64) return false;
  if (!param.is_contiguous()) return false;
  for (const Tensor* t : others) {
    if (t->dtype() != dt || !t->is_contiguous()) return false;
  }
  if (dt == kFloat32) {
    run_adam<float>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, options);
  } else {
    run_adam<double>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, options);
  }
  for (const Tensor* t : {&param, &exp_avg, &exp_avg_sq}) bump_version(*t);
  if (options.amsgrad) bump_version(max_exp_avg_sq);
  return true;
}

}  // namespace minigrad::detail
