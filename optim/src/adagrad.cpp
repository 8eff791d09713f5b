#include "minigrad/optim/adagrad.h"

#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"

namespace minigrad::optim {

template class OptimizerWithOptions<AdagradOptions>;

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults)
    : OptimizerWithOptions("Adagrad", defaults) {
  init(std::move(params));
}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> groups, const AdagradOptions& defaults)
    : OptimizerWithOptions("Adagrad", defaults) {
  init(std::move(groups));
}

void Adagrad::check_options(const AdagradOptions& o) const {
  MG_CHECK(o.lr() >= 0, "Adagrad", "Invalid learning rate: ", o.lr(), " (must be >= 0)");
  MG_CHECK(o.lr_decay() >= 0, "Adagrad", "Invalid lr_decay value: ", o.lr_decay(),
           " (must be >= 0)");
  MG_CHECK(o.weight_decay() >= 0, "Adagrad", "Invalid weight_decay value: ", o.weight_decay(),
           " (must be >= 0)");
  MG_CHECK(o.initial_accumulator_value() >= 0, "Adagrad",
           "Invalid initial_accumulator_value value: ", o.initial_accumulator_value(),
           " (must be >= 0)");
  MG_CHECK(o.eps() >= 0, "Adagrad", "Invalid epsilon value: ", o.eps(), " (must be >= 0)");
}

// torch/optim/adagrad.py, _single_tensor_adagrad.
Tensor Adagrad::step(LossClosure closure) {
  Tensor loss = evaluate_closure(closure);
  check_gradients();
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups()) {
    const AdagradOptions& o = options_of(group);
    for (Tensor& param : group.params()) {
      if (!param.grad().defined()) continue;
      ParamState& state = this->state(param);
      if (state.empty()) {
        state["step"] = scalar_tensor(0.0, kFloat32);  // torch.tensor(0.)
        state["sum"] = full_like(param, o.initial_accumulator_value());
      }
      Tensor& step_t = state["step"];
      step_t.fill_(step_t.item<double>() + 1);
      const double step = step_t.item<double>();
      Tensor grad = o.maximize() ? -param.grad() : param.grad();
      if (o.weight_decay() != 0) grad = grad + param * o.weight_decay();
      const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
      Tensor& sum = state["sum"];
      sum.copy_(sum + grad * grad);
      const Tensor std = sum.sqrt() + o.eps();
      param.copy_(param + grad / std * -clr);
    }
  }
  return loss;
}

}  // namespace minigrad::optim
