#pragma once
// Learning-rate schedulers, as torch.optim.lr_scheduler (PyTorch 1.13, the recursive get_lr).
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim::lr_scheduler {

/// The scheduler base (PyTorch's _LRScheduler). Constructing a scheduler performs its initial
/// step (last_epoch becomes 0); call step() after each epoch's optimizer.step(). The base_lrs are
/// the groups' initial_lr (Optimizer::initial_lr): their lrs when the optimizer's first scheduler
/// was created, as PyTorch.
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances last_epoch by one and writes the new learning rates into the optimizer's groups.
  virtual void step();
  /// Sets last_epoch to epoch and writes its learning rates, from the closed form when the
  /// scheduler has one (PyTorch's deprecated step(epoch); SequentialLR uses step_to(0)).
  void step_to(std::int64_t epoch);
  /// The learning rates the last step() set, one per parameter group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// The number of step() calls since the initial one (0 after construction).
  std::int64_t last_epoch() const { return last_epoch_; }
  /// The groups' learning rates when the optimizer's first scheduler was created.
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// The optimizer whose learning rates this scheduler sets.
  Optimizer& optimizer() const { return optimizer_; }

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  /// The learning rates for last_epoch(), computed from the groups' current ones (chainable form).
  virtual std::vector<double> get_lr() const = 0;
  /// The learning rates for last_epoch() from base_lrs alone, if the schedule has such a form
  /// (PyTorch's _get_closed_form_lr); std::nullopt otherwise.
  virtual std::optional<std::vector<double>> closed_form_lr() const { return std::nullopt; }
  /// Performs the initial step; derived constructors call it last (get_lr is virtual).
  void initial_step() { step(); }
  /// Writes lrs into the groups and records them as get_last_lr().
  void apply(const std::vector<double>& lrs);

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;

  friend class SequentialLR;  // rewinds the schedulers it chains
};

/// Multiplies each group's lr by gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  /// Throws unless step_size > 0.
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() const override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  std::int64_t step_size_;
  double gamma_;
};

/// Anneals each group's lr from its base value to eta_min along a half cosine over T_max epochs
/// (and back up over the next T_max, as PyTorch's recursive formula does).
class CosineAnnealingLR : public LRScheduler {
 public:
  /// Throws unless T_max > 0.
  CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min = 0);

 protected:
  std::vector<double> get_lr() const override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  std::int64_t T_max_;
  double eta_min_;
};

/// A function of the epoch giving the factor LambdaLR multiplies a base lr by.
using LrLambda = std::function<double(std::int64_t epoch)>;

/// Sets each group's lr to base_lr * lr_lambda(epoch).
class LambdaLR : public LRScheduler {
 public:
  /// One function for every group.
  LambdaLR(Optimizer& optimizer, LrLambda lr_lambda);
  /// One function per group; throws unless there are as many as groups.
  LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas);

 protected:
  std::vector<double> get_lr() const override;

 private:
  std::vector<LrLambda> lr_lambdas_;
};

/// Scales each group's lr linearly from start_factor * lr to end_factor * lr over total_iters
/// epochs, then keeps it (a warm-up).
class LinearLR : public LRScheduler {
 public:
  /// Throws unless both factors are in [0, 1] and total_iters > 0.
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           std::int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() const override;
  std::optional<std::vector<double>> closed_form_lr() const override;

 private:
  double start_factor_, end_factor_;
  std::int64_t total_iters_;
};

/// OneCycleLR's options, named and defaulted as torch.optim.lr_scheduler.OneCycleLR's keyword
/// arguments, with chained setters: `OneCycleLR sched(opt, 0.1,
/// OneCycleLROptions().total_steps(1000));`.
struct OneCycleLROptions {
  /// The number of steps in the cycle; 0 (PyTorch's None) means epochs * steps_per_epoch.
  MG_ARG(std::int64_t, total_steps) = 0;
  MG_ARG(std::int64_t, epochs) = 0;
  MG_ARG(std::int64_t, steps_per_epoch) = 0;
  /// The fraction of the cycle spent increasing the lr.
  MG_ARG(double, pct_start) = 0.3;
  /// "cos" or "linear".
  MG_ARG(std::string, anneal_strategy) = "cos";
  /// Cycles "momentum" (SGD, RMSprop) or beta1 of "betas" (Adam, AdamW) inversely to the lr.
  MG_ARG(bool, cycle_momentum) = true;
  MG_ARG(double, base_momentum) = 0.85;
  MG_ARG(double, max_momentum) = 0.95;
  /// initial_lr = max_lr / div_factor.
  MG_ARG(double, div_factor) = 25.;
  /// min_lr = initial_lr / final_div_factor.
  MG_ARG(double, final_div_factor) = 1e4;
  /// Three phases (up, back down to initial_lr, then down to min_lr) instead of two.
  MG_ARG(bool, three_phase) = false;
};

/// The 1cycle policy: the lr rises from max_lr / div_factor to max_lr over pct_start of the
/// steps, then anneals to initial_lr / final_div_factor (momentum moves the other way). Step it
/// after every batch; stepping past total_steps throws.
class OneCycleLR : public LRScheduler {
 public:
  /// The same max_lr for every group.
  OneCycleLR(Optimizer& optimizer, double max_lr, const OneCycleLROptions& options = {});
  /// One max_lr per group.
  OneCycleLR(Optimizer& optimizer, std::vector<double> max_lrs,
             const OneCycleLROptions& options = {});
  /// The number of steps of the cycle.
  std::int64_t total_steps() const { return total_steps_; }

 protected:
  std::vector<double> get_lr() const override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;  // 0 initial, 1 max, 2 min
    bool start_max_momentum, end_max_momentum;
  };
  double anneal(double start, double end, double pct) const;
  void set_momentum(std::size_t group, double momentum) const;

  OneCycleLROptions options_;
  std::int64_t total_steps_ = 0;
  std::vector<Phase> phases_;
  std::vector<std::array<double, 3>> lrs_;  // per group: initial, max, min
  bool use_beta1_ = false;
};

/// Runs schedulers one after another: schedulers[i + 1] takes over at epoch milestones[i]
/// (restarting from its epoch 0), as torch.optim.lr_scheduler.SequentialLR; e.g. a linear
/// warm-up, then a cosine decay:
/// `SequentialLR s(opt, {std::make_shared<LinearLR>(opt, 0.01, 1.0, 100),
///                       std::make_shared<CosineAnnealingLR>(opt, 900)}, {100});`
class SequentialLR : public LRScheduler {
 public:
  /// Throws unless there is one milestone fewer than schedulers and they all drive optimizer.
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<std::int64_t> milestones);
  /// Steps the scheduler whose turn it is.
  void step() override;

 protected:
  std::vector<double> get_lr() const override { return last_lr_; }

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<std::int64_t> milestones_;
};

/// ReduceLROnPlateau's options, named and defaulted as its PyTorch keyword arguments, with chained
/// setters: `ReduceLROnPlateau sched(opt, ReduceLROnPlateauOptions().mode("max").factor(0.5));`.
struct ReduceLROnPlateauOptions {
  /// "min" (the metric should fall, e.g. a loss) or "max" (e.g. an accuracy).
  MG_ARG(std::string, mode) = "min";
  /// new lr = lr * factor; must be < 1.
  MG_ARG(double, factor) = 0.1;
  /// Epochs without improvement tolerated before the lr is reduced.
  MG_ARG(std::int64_t, patience) = 10;
  /// What counts as an improvement: by a fraction (threshold_mode "rel") or an amount ("abs").
  MG_ARG(double, threshold) = 1e-4;
  MG_ARG(std::string, threshold_mode) = "rel";
  /// Epochs to wait after a reduction before counting bad epochs again.
  MG_ARG(std::int64_t, cooldown) = 0;
  /// The lower bound of every group's lr...
  MG_ARG(double, min_lr) = 0;
  /// ...or one per group (PyTorch's list min_lr), when not empty.
  MG_ARG(std::vector<double>, min_lrs) = {};
  /// Reductions smaller than eps are skipped.
  MG_ARG(double, eps) = 1e-8;
};

/// Reduces the groups' lrs by factor when a metric stops improving for patience epochs, as
/// torch.optim.lr_scheduler.ReduceLROnPlateau: call step(metric) after each validation.
class ReduceLROnPlateau {
 public:
  /// Throws unless factor < 1, mode is "min" or "max", threshold_mode "rel" or "abs", and
  /// min_lrs is empty or has one value per group.
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options = {});
  ReduceLROnPlateau(const ReduceLROnPlateau&) = delete;
  ReduceLROnPlateau& operator=(const ReduceLROnPlateau&) = delete;

  /// Records this epoch's metric and reduces the lrs if it has not improved for too long.
  void step(double metric);
  /// The groups' lrs after the last step() (their current ones before any).
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// The number of step() calls.
  std::int64_t last_epoch() const { return last_epoch_; }
  /// The best metric so far (+inf in mode "min", -inf in "max", before any step).
  double best() const { return best_; }
  /// Epochs since the last improvement (reset by a reduction and during cooldown).
  std::int64_t num_bad_epochs() const { return num_bad_epochs_; }
  /// Whether a recent reduction's cooldown is still running.
  bool in_cooldown() const { return cooldown_counter_ > 0; }

 private:
  bool is_better(double a, double best) const;

  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;
  double best_;
  std::int64_t num_bad_epochs_ = 0;
  std::int64_t cooldown_counter_ = 0;
  std::int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace minigrad::optim::lr_scheduler
