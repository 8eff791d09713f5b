#pragma once
// Stochastic gradient descent with momentum, as torch.optim.SGD (PyTorch 1.13, foreach=False).
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

/// SGD's options, named and defaulted as torch.optim.SGD's keyword arguments, set as libtorch's:
/// `SGD opt(params, SGDOptions(0.1).momentum(0.9).nesterov(true));`. lr has no default, as in
/// PyTorch and libtorch: it is the constructor's argument.
struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(double, lr);
  MG_ARG(double, momentum) = 0;
  MG_ARG(double, dampening) = 0;
  MG_ARG(double, weight_decay) = 0;
  MG_ARG(bool, nesterov) = false;
  MG_ARG(bool, maximize) = false;

 public:
  MG_OPTIONS_EQUAL(SGDOptions)
  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h).
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
    f("momentum", o.momentum());
    f("dampening", o.dampening());
    f("weight_decay", o.weight_decay());
    f("nesterov", o.nesterov());
    f("maximize", o.maximize());
  }
};

// Compiled once, in sgd.cpp, not in every file that includes this header (compile time).
extern template class OptimizerWithOptions<SGDOptions>;

/// SGD's state of one parameter, as libtorch's SGDParamState: momentum_buffer() (undefined
/// without momentum, as SGD keeps no state then); Note [Typed parameter state].
struct SGDParamState : public OptimizerParamState {
  MG_PARAM_STATE_CLONE(SGDParamState)
  MG_PARAM_STATE_EQUAL(SGDParamState)
  MG_PARAM_STATE_TENSOR(SGDParamState, momentum_buffer)
};

/// Stochastic gradient descent, optionally with (Nesterov) momentum and L2 weight decay:
/// g += weight_decay * p; b = momentum * b + (1 - dampening) * g (b = g on the first step);
/// g = nesterov ? g + momentum * b : b; p -= lr * g.
class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  /// One group holding params.
  SGD(std::vector<Tensor> params, const SGDOptions& defaults);
  /// Several groups; those without options take defaults:
  /// `SGD opt({OptimizerParamGroup({w}, SGDOptions(0.1)), OptimizerParamGroup({b})}, 1.0);`
  SGD(std::vector<OptimizerParamGroup> groups, const SGDOptions& defaults);

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  void check_options(const SGDOptions& options) const override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<SGDParamState>();
  }
  StateKeys state_keys() const override { return {{"momentum_buffer"}, {}}; }
};

}  // namespace minigrad::optim
