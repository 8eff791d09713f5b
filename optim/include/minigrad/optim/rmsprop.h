#pragma once
// RMSprop, as torch.optim.RMSprop (PyTorch 1.13, foreach=False).
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

/// RMSprop's options, named and defaulted as torch.optim.RMSprop's keyword arguments, set as
/// libtorch's: `RMSprop opt(params, RMSpropOptions(1e-3).momentum(0.9).centered(true));`.
struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(double, lr);
  /// Smoothing constant of the running average of g^2.
  MG_ARG(double, alpha) = 0.99;
  MG_ARG(double, eps) = 1e-8;
  /// L2 penalty added to the gradient.
  MG_ARG(double, weight_decay) = 0;
  MG_ARG(double, momentum) = 0;
  /// Normalise by an estimate of the gradient's variance (E[g^2] - E[g]^2) instead of E[g^2].
  MG_ARG(bool, centered) = false;
  MG_ARG(bool, maximize) = false;

 public:
  MG_OPTIONS_EQUAL(RMSpropOptions)
  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h).
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
    f("alpha", o.alpha());
    f("eps", o.eps());
    f("weight_decay", o.weight_decay());
    f("momentum", o.momentum());
    f("centered", o.centered());
    f("maximize", o.maximize());
  }
};

// Compiled once, in rmsprop.cpp, not in every file that includes this header (compile time).
extern template class OptimizerWithOptions<RMSpropOptions>;

/// RMSprop's state of one parameter, as libtorch's RMSpropParamState: step(), square_avg(),
/// momentum_buffer() (with momentum), grad_avg() (centered); Note [Typed parameter state].
struct RMSpropParamState : public OptimizerParamState {
  MG_PARAM_STATE_CLONE(RMSpropParamState)
  MG_PARAM_STATE_EQUAL(RMSpropParamState)
  MG_PARAM_STATE_STEP(RMSpropParamState)
  MG_PARAM_STATE_TENSOR(RMSpropParamState, square_avg)
  MG_PARAM_STATE_TENSOR(RMSpropParamState, momentum_buffer)
  MG_PARAM_STATE_TENSOR(RMSpropParamState, grad_avg)
};

/// RMSprop: v = alpha v + (1 - alpha) g^2 (centered: minus the square of the running mean of g);
/// p -= lr * g / (sqrt(v) + eps), through a momentum buffer when momentum > 0, with
/// g += weight_decay * p first.
class RMSprop : public OptimizerWithOptions<RMSpropOptions> {
 public:
  /// One group holding params.
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = {});
  /// Several groups; those without options take defaults.
  RMSprop(std::vector<OptimizerParamGroup> groups, const RMSpropOptions& defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  void check_options(const RMSpropOptions& options) const override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<RMSpropParamState>();
  }
  StateKeys state_keys() const override {
    return {{"step", "square_avg"}, {"momentum_buffer", "grad_avg"}};
  }
};

}  // namespace minigrad::optim
