#include "minigrad/optim/rmsprop.h"

#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"

namespace minigrad::optim {

template class OptimizerWithOptions<RMSpropOptions>;

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults)
    : OptimizerWithOptions("RMSprop", defaults) {
  init(std::move(params));
}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> groups, const RMSpropOptions& defaults)
    : OptimizerWithOptions("RMSprop", defaults) {
  init(std::move(groups));
}

void RMSprop::check_options(const RMSpropOptions& o) const {
  MG_CHECK(o.lr() >= 0, "RMSprop", "Invalid learning rate: ", o.lr(), " (must be >= 0)");
  MG_CHECK(o.eps() >= 0, "RMSprop", "Invalid epsilon value: ", o.eps(), " (must be >= 0)");
  MG_CHECK(o.momentum() >= 0, "RMSprop", "Invalid momentum value: ", o.momentum(),
           " (must be >= 0)");
  MG_CHECK(o.weight_decay() >= 0, "RMSprop", "Invalid weight_decay value: ", o.weight_decay(),
           " (must be >= 0)");
  MG_CHECK(o.alpha() >= 0, "RMSprop", "Invalid alpha value: ", o.alpha(), " (must be >= 0)");
}

// torch/optim/rmsprop.py, _single_tensor_rmsprop.
Tensor RMSprop::step(LossClosure closure) {
  Tensor loss = evaluate_closure(closure);
  check_gradients();
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups()) {
    const RMSpropOptions& o = options_of(group);
    for (Tensor& param : group.params()) {
      if (!param.grad().defined()) continue;
      ParamState& state = this->state(param);
      if (state.empty()) {
        state["step"] = scalar_tensor(0.0, kFloat32);
        state["square_avg"] = zeros_like(param);
      }
      if (o.momentum() > 0 && !state.contains("momentum_buffer")) {
        state["momentum_buffer"] = zeros_like(param);
      }
      if (o.centered() && !state.contains("grad_avg")) state["grad_avg"] = zeros_like(param);
      Tensor& step_t = state["step"];
      step_t.fill_(step_t.item<double>() + 1);

      Tensor grad = o.maximize() ? -param.grad() : param.grad();
      if (o.weight_decay() != 0) grad = grad + param * o.weight_decay();
      Tensor& square_avg = state["square_avg"];
      square_avg.copy_(square_avg * o.alpha() + grad * grad * (1 - o.alpha()));
      Tensor avg;
      if (o.centered()) {
        Tensor& grad_avg = state["grad_avg"];
        grad_avg.copy_(grad_avg * o.alpha() + grad * (1 - o.alpha()));
        avg = (square_avg - grad_avg * grad_avg).sqrt();
      } else {
        avg = square_avg.sqrt();
      }
      avg = avg + o.eps();
      if (o.momentum() > 0) {
        Tensor& buf = state["momentum_buffer"];
        buf.copy_(buf * o.momentum() + grad / avg);
        param.copy_(param + buf * -o.lr());
      } else {
        param.copy_(param + grad / avg * -o.lr());
      }
    }
  }
  return loss;
}

}  // namespace minigrad::optim
