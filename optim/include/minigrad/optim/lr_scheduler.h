#pragma once
// Learning-rate schedulers, as torch.optim.lr_scheduler (PyTorch 1.13, the recursive get_lr).
#include <cstdint>
#include <vector>

#include "minigrad/optim/optimizer.h"

namespace minigrad::optim::lr_scheduler {

/// The scheduler base (PyTorch's _LRScheduler). Constructing a scheduler performs its initial
/// step (last_epoch becomes 0); call step() after each epoch's optimizer.step().
class LRScheduler {
 public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// Advances last_epoch by one and writes the new learning rates into the optimizer's groups.
  void step();
  /// The learning rates the last step() set, one per parameter group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  /// The number of step() calls since the initial one (0 after construction).
  std::int64_t last_epoch() const { return last_epoch_; }
  /// The groups' learning rates when the scheduler was created.
  const std::vector<double>& base_lrs() const { return base_lrs_; }

 protected:
  explicit LRScheduler(Optimizer& optimizer);
  /// The learning rates for last_epoch(), computed from the groups' current ones (chainable form).
  virtual std::vector<double> get_lr() const = 0;
  /// Performs the initial step; derived constructors call it last (get_lr is virtual).
  void initial_step() { step(); }

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  std::int64_t last_epoch_ = -1;
  std::vector<double> last_lr_;
};

/// Multiplies each group's lr by gamma every step_size epochs.
class StepLR : public LRScheduler {
 public:
  /// Throws unless step_size > 0.
  StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() const override;

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

 private:
  std::int64_t T_max_;
  double eta_min_;
};

}  // namespace minigrad::optim::lr_scheduler
