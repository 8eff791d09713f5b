#pragma once
// Adam and AdamW, as torch.optim.Adam and torch.optim.AdamW (PyTorch 1.13, foreach=False).
#include <tuple>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::detail {
/// The one implementation of Adam's and AdamW's step() (adam.cpp): decoupled weight decay is a
/// flag.
struct AdamStep {
  template <typename AdamOrAdamW>
  static Tensor run(AdamOrAdamW& optimizer, const optim::LossClosure& closure, bool decoupled);
};
}  // namespace minigrad::detail

namespace minigrad::optim {

/// Adam's options, named and defaulted as torch.optim.Adam's keyword arguments, set as libtorch's:
/// `Adam opt(params, AdamOptions(1e-2).betas({0.9, 0.99}));`.
struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  /// (beta1, beta2), as libtorch's betas_t: `.betas({0.9, 0.99})`.
  using betas_t = std::tuple<double, double>;
  MG_ARG(double, lr);
  MG_ARG(betas_t, betas) = {0.9, 0.999};
  MG_ARG(double, eps) = 1e-8;
  /// L2 penalty added to the gradient.
  MG_ARG(double, weight_decay) = 0;
  /// Normalise by the running maximum of the second moment (AMSGrad).
  MG_ARG(bool, amsgrad) = false;
  MG_ARG(bool, maximize) = false;

 public:
  MG_OPTIONS_EQUAL(AdamOptions)
  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h).
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
    f("betas", o.betas());
    f("eps", o.eps());
    f("weight_decay", o.weight_decay());
    f("amsgrad", o.amsgrad());
    f("maximize", o.maximize());
  }
};

/// AdamW's options: Adam's, with decoupled weight decay defaulting to 1e-2 as torch.optim.AdamW:
/// `AdamW opt(params, AdamWOptions(1e-3).weight_decay(0.1));`.
struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  /// (beta1, beta2), as libtorch's betas_t: `.betas({0.9, 0.99})`.
  using betas_t = std::tuple<double, double>;
  MG_ARG(double, lr);
  MG_ARG(betas_t, betas) = {0.9, 0.999};
  MG_ARG(double, eps) = 1e-8;
  /// Decoupled decay: p *= 1 - lr * weight_decay before the Adam update.
  MG_ARG(double, weight_decay) = 1e-2;
  /// Normalise by the running maximum of the second moment (AMSGrad).
  MG_ARG(bool, amsgrad) = false;
  MG_ARG(bool, maximize) = false;

 public:
  MG_OPTIONS_EQUAL(AdamWOptions)
  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h).
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
    f("betas", o.betas());
    f("eps", o.eps());
    f("weight_decay", o.weight_decay());
    f("amsgrad", o.amsgrad());
    f("maximize", o.maximize());
  }
};

// Compiled once, in adam.cpp, not in every file that includes this header (compile time).
extern template class OptimizerWithOptions<AdamOptions>;
extern template class OptimizerWithOptions<AdamWOptions>;

/// Adam's state of one parameter, as libtorch's AdamParamState: step(), exp_avg(), exp_avg_sq(),
/// max_exp_avg_sq() (undefined without amsgrad); Note [Typed parameter state].
struct AdamParamState : public OptimizerParamState {
  MG_PARAM_STATE_CLONE(AdamParamState)
  MG_PARAM_STATE_EQUAL(AdamParamState)
  MG_PARAM_STATE_STEP(AdamParamState)
  MG_PARAM_STATE_TENSOR(AdamParamState, exp_avg)
  MG_PARAM_STATE_TENSOR(AdamParamState, exp_avg_sq)
  MG_PARAM_STATE_TENSOR(AdamParamState, max_exp_avg_sq)
};

/// AdamW's state of one parameter, as libtorch's AdamWParamState (the same fields as Adam's).
struct AdamWParamState : public OptimizerParamState {
  MG_PARAM_STATE_CLONE(AdamWParamState)
  MG_PARAM_STATE_EQUAL(AdamWParamState)
  MG_PARAM_STATE_STEP(AdamWParamState)
  MG_PARAM_STATE_TENSOR(AdamWParamState, exp_avg)
  MG_PARAM_STATE_TENSOR(AdamWParamState, exp_avg_sq)
  MG_PARAM_STATE_TENSOR(AdamWParamState, max_exp_avg_sq)
};

/// Adam: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
/// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps), with g += weight_decay * p first.
class Adam : public OptimizerWithOptions<AdamOptions> {
 public:
  /// One group holding params.
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = {});
  /// Several groups; those without options take defaults.
  Adam(std::vector<OptimizerParamGroup> groups, const AdamOptions& defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  friend struct ::minigrad::detail::AdamStep;
  void check_options(const AdamOptions& options) const override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdamParamState>();
  }
  StateKeys state_keys() const override {
    return {{"step", "exp_avg", "exp_avg_sq"}, {"max_exp_avg_sq"}};
  }
};

/// AdamW: Adam with the weight decay applied to the parameter (p *= 1 - lr * weight_decay)
/// instead of the gradient.
class AdamW : public OptimizerWithOptions<AdamWOptions> {
 public:
  /// One group holding params.
  AdamW(std::vector<Tensor> params, const AdamWOptions& defaults = {});
  /// Several groups; those without options take defaults.
  AdamW(std::vector<OptimizerParamGroup> groups, const AdamWOptions& defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  friend struct ::minigrad::detail::AdamStep;
  void check_options(const AdamWOptions& options) const override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<AdamWParamState>();
  }
  StateKeys state_keys() const override {
    return {{"step", "exp_avg", "exp_avg_sq"}, {"max_exp_avg_sq"}};
  }
};

}  // namespace minigrad::optim
