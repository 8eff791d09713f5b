#include "minigrad/optim/sgd.h"

#include "minigrad/ops/elementwise.h"

namespace minigrad::optim {

template class OptimizerWithOptions<SGDOptions>;

SGD::SGD(std::vector<Tensor> params, const SGDOptions& defaults)
    : OptimizerWithOptions("SGD", defaults) {
  init(std::move(params));
}

SGD::SGD(std::vector<OptimizerParamGroup> groups, const SGDOptions& defaults)
    : OptimizerWithOptions("SGD", defaults) {
  init(std::move(groups));
}

void SGD::check_options(const SGDOptions& o) const {
  MG_CHECK(o.lr() >= 0, "SGD", "Invalid learning rate: ", o.lr(), " (must be >= 0)");
  MG_CHECK(o.momentum() >= 0, "SGD", "Invalid momentum value: ", o.momentum(), " (must be >= 0)");
  MG_CHECK(o.weight_decay() >= 0, "SGD", "Invalid weight_decay value: ", o.weight_decay(),
           " (must be >= 0)");
  MG_CHECK(!o.nesterov() || (o.momentum() > 0 && o.dampening() == 0), "SGD",
           "Nesterov momentum requires a momentum and zero dampening, got momentum = ",
           o.momentum(), " and dampening = ", o.dampening());
}

// torch/optim/sgd.py, _single_tensor_sgd.
Tensor SGD::step(LossClosure closure) {
  Tensor loss = evaluate_closure(closure);
  check_gradients();
  NoGradGuard no_grad;
  for (OptimizerParamGroup& group : param_groups()) {
    const SGDOptions& o = options_of(group);
    for (Tensor& param : group.params()) {
      if (!param.grad().defined()) continue;
      Tensor d_p = o.maximize() ? -param.grad() : param.grad();
      if (o.weight_decay() != 0) d_p = d_p + param * o.weight_decay();
      if (o.momentum() != 0) {
        ParamState& state = this->state(param);
        auto it = state.find("momentum_buffer");
        if (it == state.end()) {
          it = state.emplace("momentum_buffer", d_p.clone()).first;
        } else {
          Tensor& buf = it->second;
          buf.copy_(buf * o.momentum() + d_p * (1 - o.dampening()));
        }
        d_p = o.nesterov() ? d_p + it->second * o.momentum() : it->second;
      }
      param.copy_(param + d_p * -o.lr());
    }
  }
  return loss;
}

}  // namespace minigrad::optim
