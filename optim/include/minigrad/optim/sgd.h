#pragma once
// Stochastic gradient descent with momentum, as torch.optim.SGD (PyTorch 1.13, foreach=False).
#include <limits>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

/// Marks an option that has no default (PyTorch's `required`): SGD's learning rate.
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

/// SGD's options, named and defaulted as torch.optim.SGD's keyword arguments:
/// `SGD opt(params, {.lr = 0.1, .momentum = 0.9});`. lr has no default, as in PyTorch: leaving
/// it out throws "[SGD] lr is required".
struct SGDOptions {
  double lr = kRequired;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;

  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h).
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr);
    f("momentum", o.momentum);
    f("dampening", o.dampening);
    f("weight_decay", o.weight_decay);
    f("nesterov", o.nesterov);
    f("maximize", o.maximize);
  }
};

// Compiled once, in sgd.cpp, not in every file that includes this header (compile time).
extern template class OptimizerWithOptions<SGDOptions>;

/// Stochastic gradient descent, optionally with (Nesterov) momentum and L2 weight decay:
/// g += weight_decay * p; b = momentum * b + (1 - dampening) * g (b = g on the first step);
/// g = nesterov ? g + momentum * b : b; p -= lr * g.
class SGD : public OptimizerWithOptions<SGDOptions> {
 public:
  /// One group holding params.
  SGD(std::vector<Tensor> params, const SGDOptions& options);
  /// Several groups, each with its own options: `SGD opt({{{w}, {.lr = 0.1}}, {{b}, {.lr = 1}}});`
  explicit SGD(std::vector<Group> groups);

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  void check_options(const SGDOptions& options) const override;
  StateKeys state_keys() const override { return {{"momentum_buffer"}, {}}; }
};

}  // namespace minigrad::optim
