#include "minigrad/optim/lr_scheduler.h"

#include <cmath>
#include <numbers>

namespace minigrad::optim::lr_scheduler {

// NOTE: PyTorch takes base_lrs from a group's 'initial_lr' (set by the first scheduler attached
// to the optimizer) and can resume from a given last_epoch; here base_lrs are the groups' lrs
// when this scheduler is created, and it always starts at last_epoch = -1.
LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (std::size_t i = 0; i < optimizer.num_param_groups(); ++i) {
    base_lrs_.push_back(optimizer.lr(i));
  }
}

void LRScheduler::step() {
  ++last_epoch_;
  const std::vector<double> values = get_lr();
  last_lr_.clear();
  for (std::size_t i = 0; i < values.size() && i < optimizer_.num_param_groups(); ++i) {
    optimizer_.set_lr(i, values[i]);
    last_lr_.push_back(optimizer_.lr(i));
  }
}

StepLR::StepLR(Optimizer& optimizer, std::int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  MG_CHECK(step_size > 0, "StepLR", "step_size must be positive, got ", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lr() const {
  std::vector<double> lrs;
  const bool decay = last_epoch_ != 0 && last_epoch_ % step_size_ == 0;
  for (std::size_t i = 0; i < optimizer_.num_param_groups(); ++i) {
    lrs.push_back(decay ? optimizer_.lr(i) * gamma_ : optimizer_.lr(i));
  }
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, std::int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  MG_CHECK(T_max > 0, "CosineAnnealingLR", "T_max must be positive, got ", T_max);
  initial_step();
}

// NOTE: the recursive form of lr_scheduler.py's get_lr, term by term in the same order, so the
// doubles match PyTorch's exactly (the closed form differs in the last bits).
std::vector<double> CosineAnnealingLR::get_lr() const {
  constexpr double pi = std::numbers::pi;
  const auto e = static_cast<double>(last_epoch_);
  const auto T = static_cast<double>(T_max_);
  std::vector<double> lrs;
  for (std::size_t i = 0; i < optimizer_.num_param_groups(); ++i) {
    const double lr = optimizer_.lr(i);
    const double base_lr = i < base_lrs_.size() ? base_lrs_[i] : lr;
    if (last_epoch_ == 0) {
      lrs.push_back(lr);
    } else if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0) {
      lrs.push_back(lr + (base_lr - eta_min_) * (1 - std::cos(pi / T)) / 2);
    } else {
      lrs.push_back((1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) *
                        (lr - eta_min_) +
                    eta_min_);
    }
  }
  return lrs;
}

}  // namespace minigrad::optim::lr_scheduler
