#pragma once
// L-BFGS, as torch.optim.LBFGS (PyTorch 1.13): full-batch quasi-Newton steps that re-evaluate the
// loss through the closure step() is given.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim {

/// LBFGS's options, named and defaulted as torch.optim.LBFGS's keyword arguments, set as
/// libtorch's: `LBFGS opt(params, LBFGSOptions(1).max_iter(20).line_search_fn("strong_wolfe"));`.
struct LBFGSOptions : public OptimizerCloneableOptions<LBFGSOptions> {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(double, lr);
  /// Iterations per step().
  MG_ARG(std::int64_t, max_iter) = 20;
  /// Loss evaluations per step(); 0 (the default, PyTorch's None) means max_iter * 5 / 4, which
  /// the constructor writes into the group, as PyTorch.
  MG_ARG(std::int64_t, max_eval) = 0;
  /// Stop when every gradient element is at most this in magnitude.
  MG_ARG(double, tolerance_grad) = 1e-7;
  /// Stop when the loss or the parameters change by less than this.
  MG_ARG(double, tolerance_change) = 1e-9;
  /// Number of (s, y) pairs kept.
  MG_ARG(std::int64_t, history_size) = 100;
  /// "" (fixed steps of lr) or "strong_wolfe". Not in state_dict() (its values are numbers).
  MG_ARG(std::string, line_search_fn) = "";

 public:
  /// Field by field, line_search_fn included, as libtorch's operator==.
  friend bool operator==(const LBFGSOptions& a, const LBFGSOptions& b) {
    return ::minigrad::detail::option_fields_equal(a, b) &&
           a.line_search_fn() == b.line_search_fn();
  }
  /// Calls f(name, field) for each option by PyTorch's name (Note [Optimizer options in a
  /// state_dict], optimizer.h); line_search_fn is left out.
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
    f("max_iter", o.max_iter());
    f("max_eval", o.max_eval());
    f("tolerance_grad", o.tolerance_grad());
    f("tolerance_change", o.tolerance_change());
    f("history_size", o.history_size());
  }
};

// Compiled once, in lbfgs.cpp, not in every file that includes this header (compile time).
extern template class OptimizerWithOptions<LBFGSOptions>;

/// LBFGS's state (the first parameter's), as libtorch's LBFGSParamState: func_evals() and n_iter()
/// (the history is kept inside the optimizer: see LBFGS); Note [Typed parameter state].
struct LBFGSParamState : public OptimizerParamState {
  MG_PARAM_STATE_CLONE(LBFGSParamState)
  MG_PARAM_STATE_EQUAL(LBFGSParamState)
  MG_PARAM_STATE_COUNT(LBFGSParamState, func_evals)
  MG_PARAM_STATE_COUNT(LBFGSParamState, n_iter)
};

/// L-BFGS over all parameters as one flat vector (one parameter group only, as PyTorch).
/// step(closure) requires the closure: it calls it up to max_eval times and returns the loss of
/// its first call. Its state is PyTorch's: "func_evals" and "n_iter" in the first parameter's
/// state(); NOTE: the history (d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad) is kept
/// inside the optimizer and not in state_dict(), so a loaded LBFGS starts a new history.
class LBFGS : public OptimizerWithOptions<LBFGSOptions> {
 public:
  /// One group holding params.
  LBFGS(std::vector<Tensor> params, const LBFGSOptions& defaults = {});

  /// Runs up to max_iter L-BFGS iterations; throws without a closure.
  Tensor step(LossClosure closure = nullptr) override;

 protected:
  void check_options(const LBFGSOptions& options) const override;
  std::unique_ptr<OptimizerParamState> make_param_state() const override {
    return std::make_unique<LBFGSParamState>();
  }
  StateKeys state_keys() const override {
    return {{"func_evals", "n_iter"}, {}, {"func_evals", "n_iter"}};
  }

 private:
  Tensor gather_flat_grad() const;
  void add_grad(double step_size, const Tensor& update);
  // PyTorch's _directional_evaluate: the loss and flat gradient at x + t d, then back to x.
  std::pair<double, Tensor> directional_evaluate(const LossClosure& closure,
                                                 const std::vector<Tensor>& x, double t,
                                                 const Tensor& d);
  struct LineSearchResult {
    double loss;
    Tensor flat_grad;
    double t;
    std::int64_t func_evals;
  };
  LineSearchResult strong_wolfe(const LossClosure& closure, const std::vector<Tensor>& x, double t,
                                const Tensor& d, double f, const Tensor& g, double gtd,
                                double tolerance_change);

  Tensor d_;
  double t_ = 0;
  std::vector<Tensor> old_dirs_, old_stps_;
  std::vector<double> ro_;
  double H_diag_ = 1;
  Tensor prev_flat_grad_;
  double prev_loss_ = 0;
};

}  // namespace minigrad::optim
