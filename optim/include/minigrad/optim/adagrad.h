#pragma once
// Adagrad, as torch.optim.Adagrad (PyTorch 1.13, foreach=False).
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

/// Adagrad's options, named and defaulted as torch.optim.Adagrad's keyword arguments, set as
/// libtorch's: `Adagrad opt(params, AdagradOptions(0.1).lr_decay(1e-3));`.
struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(double, lr);
  /// The step size at step t is lr / (1 + (t - 1) * lr_decay).
  MG_ARG(double, lr_decay) = 0;
  /// L2 penalty added to the gradient.
  MG_ARG(double, weight_decay) = 0;
  /// The starting value of the sum of squared gradients.
  MG_ARG(double, initial_accumulator_value) = 0;
  MG_ARG(double, eps) = 1e-10;
  MG_ARG(bool, maximize) = false;

 public:
  MG_OPTIONS_EQUAL(AdagradOptions)
  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h).
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
    f("lr_decay", o.lr_decay());
    f("eps", o.eps());
    f("weight_decay", o.weight_decay());
    f("initial_accumulator_value", o.initial_accumulator_value());
    f("maximize", o.maximize());
  }
};

// Compiled once, in adagrad.cpp, not in every file that includes this header (compile time).
extern template class OptimizerWithOptions<AdagradOptions>;

/// Adagrad's state of one parameter, as libtorch's AdagradParamState: step(), sum(); Note [Typed
/// parameter state].
struct AdagradParamState : public OptimizerParamState {
  MG_PARAM_STATE_CLONE(AdagradParamState)
  MG_PARAM_STATE_EQUAL(AdagradParamState)
  MG_PARAM_STATE_STEP(AdagradParamState)
  MG_PARAM_STATE_TENSOR(AdagradParamState, sum)
};

/// Adagrad: sum += g^2; p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps), with
/// g += weight_decay * p first. NOTE: the state is created at a parameter's first step, not in
/// the constructor as PyTorch (a state_dict() before any step has no state).
class Adagrad : public OptimizerWithOptions<AdagradOptions> {
 public:
  /// One group holding params.
  Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults = {});
  /// Several groups; those without options take defaults.
  Adagrad(std::vector<OptimizerParamGroup> groups, const AdagradOptions& defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  void check_options(const AdagradOptions& options) const override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdagradParamState>();
  }
  StateKeys state_keys() const override { return {{"step", "sum"}, {}}; }
};

}  // namespace minigrad::optim
