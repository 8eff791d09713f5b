#include "minigrad/optim/adam.h"

#include <cmath>
#include <tuple>

#include "minigrad/fused_optim.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"

namespace minigrad::optim {

template class OptimizerWithOptions<AdamOptions>;
template class OptimizerWithOptions<AdamWOptions>;

namespace {

// The options Adam and AdamW check alike, with PyTorch's messages.
template <typename Options>
void check_adam_options(const char* name, const Options& o) {
  MG_CHECK(o.lr() >= 0, name, "Invalid learning rate: ", o.lr(), " (must be >= 0)");
  MG_CHECK(o.eps() >= 0, name, "Invalid epsilon value: ", o.eps(), " (must be >= 0)");
  const double betas[2] = {std::get<0>(o.betas()), std::get<1>(o.betas())};
  for (int i = 0; i < 2; ++i) {
    MG_CHECK(betas[i] >= 0 && betas[i] < 1, name, "Invalid beta parameter at index ", i, ": ",
             betas[i], " (must be in [0, 1))");
  }
  MG_CHECK(o.weight_decay() >= 0, name, "Invalid weight_decay value: ", o.weight_decay(),
           " (must be >= 0)");
}

// Lazy state initialisation and `step_t += 1`; returns the new step count.
double init_and_count_step(ParamState& state, const Tensor& param, bool amsgrad) {
  if (state.empty()) {
    state["step"] = scalar_tensor(0.0, kFloat32);  // torch.tensor(0.)
    state["exp_avg"] = zeros_like(param);
    state["exp_avg_sq"] = zeros_like(param);
  }
  if (amsgrad && !state.contains("max_exp_avg_sq")) state["max_exp_avg_sq"] = zeros_like(param);
  Tensor& step_t = state["step"];
  step_t.fill_(step_t.item<double>() + 1);
  return step_t.item<double>();
}

// One pass over param, grad and the moments (core's fused kernel behind minigrad/fused_optim.h,
// Note [Fused Adam]), with PyTorch's arithmetic; false when the tensors do not suit the kernel (a
// non-contiguous gradient, moments of another dtype loaded from a state_dict, ...): then the ops
// below run.
template <typename Options>
bool fused_update(const Tensor& param, ParamState& state, double step, const Options& o,
                  bool decoupled) {
  detail::FusedAdamOptions f;
  f.lr = o.lr();
  f.beta1 = std::get<0>(o.betas());
  f.beta2 = std::get<1>(o.betas());
  f.eps = o.eps();
  f.weight_decay = o.weight_decay();
  f.amsgrad = o.amsgrad();
  f.maximize = o.maximize();
  f.decoupled_weight_decay = decoupled;
  return detail::fused_adam_(param, param.grad(), state["exp_avg"], state["exp_avg_sq"],
                             o.amsgrad() ? state["max_exp_avg_sq"] : Tensor(), step, f);
}

// One parameter's update, Adam's and AdamW's (the non-capturable branch of _single_tensor_adam
// and _single_tensor_adamw): they differ only in where the weight decay goes, into the gradient
// (Adam's L2 penalty) or, decoupled, onto the parameter first (AdamW's p *= 1 - lr * wd). Then
// the moments, and p += -step_size * exp_avg / denom.
template <typename Options>
void adam_update(Tensor& param, ParamState& state, double step, const Options& o, bool decoupled) {
  Tensor grad = o.maximize() ? -param.grad() : param.grad();
  if (decoupled)
    param.copy_(param * (1 - o.lr() * o.weight_decay()));
  else if (o.weight_decay() != 0)
    grad = grad + param * o.weight_decay();

  const auto [beta1, beta2] = o.betas();
  Tensor& exp_avg = state["exp_avg"];
  Tensor& exp_avg_sq = state["exp_avg_sq"];
  exp_avg.copy_(exp_avg * beta1 + grad * (1 - beta1));
  exp_avg_sq.copy_(exp_avg_sq * beta2 + grad * grad * (1 - beta2));

  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2 = 1 - std::pow(beta2, step);
  const double step_size = o.lr() / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);

  Tensor denom;
  if (o.amsgrad()) {
    Tensor& max_exp_avg_sq = state["max_exp_avg_sq"];
    max_exp_avg_sq.copy_(maximum(max_exp_avg_sq, exp_avg_sq));
    denom = max_exp_avg_sq.sqrt() / bias_correction2_sqrt + o.eps();
  } else {
    denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + o.eps();
  }
  param.copy_(param + exp_avg / denom * -step_size);
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, const AdamOptions& defaults)
    : OptimizerWithOptions("Adam", defaults) {
  init(std::move(params));
}

Adam::Adam(std::vector<OptimizerParamGroup> groups, const AdamOptions& defaults)
    : OptimizerWithOptions("Adam", defaults) {
  init(std::move(groups));
}

void Adam::check_options(const AdamOptions& o) const { check_adam_options("Adam", o); }

// torch/optim/adam.py, _single_tensor_adam: the weight decay goes into the gradient.
Tensor Adam::step(LossClosure closure) {
  return ::minigrad::detail::AdamStep::run(*this, closure, /*decoupled=*/false);
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& defaults)
    : OptimizerWithOptions("AdamW", defaults) {
  init(std::move(params));
}

AdamW::AdamW(std::vector<OptimizerParamGroup> groups, const AdamWOptions& defaults)
    : OptimizerWithOptions("AdamW", defaults) {
  init(std::move(groups));
}

void AdamW::check_options(const AdamWOptions& o) const { check_adam_options("AdamW", o); }

// torch/optim/adamw.py, _single_tensor_adamw: the weight decay is decoupled.
Tensor AdamW::step(LossClosure closure) {
  return ::minigrad::detail::AdamStep::run(*this, closure, /*decoupled=*/true);
}

}  // namespace minigrad::optim

namespace minigrad::detail {

// Adam's and AdamW's step(): one loop, decoupled weight decay the only difference (fused when the
// tensors allow).
template <typename AdamOrAdamW>
Tensor AdamStep::run(AdamOrAdamW& opt, const optim::LossClosure& closure, bool decoupled) {
  Tensor loss = opt.evaluate_closure(closure);
  opt.check_gradients();
  NoGradGuard no_grad;
  for (optim::OptimizerParamGroup& group : opt.param_groups()) {
    const auto& o = opt.options_of(group);
    for (Tensor& param : group.params()) {
      if (!param.grad().defined()) continue;
      optim::ParamState& state = opt.state(param);
      const double step = optim::init_and_count_step(state, param, o.amsgrad());
      if (!optim::fused_update(param, state, step, o, decoupled))
        optim::adam_update(param, state, step, o, decoupled);
    }
  }
  return loss;
}

}  // namespace minigrad::detail
