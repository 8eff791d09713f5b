#include "minigrad/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace minigrad::optim::lr_scheduler {

// NOTE: base_lrs are the groups' initial_lr, set by the optimizer's first scheduler (PyTorch's
// group.setdefault('initial_lr', group['lr'])); a scheduler always starts at last_epoch = -1
// (PyTorch can resume from a given last_epoch).
LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {
  for (std::size_t i = 0; i < optimizer.num_param_groups(); ++i) {
    base_lrs_.push_back(optimizer.set_default_initial_lr(i));
  }
}

void LRScheduler::apply(const std::vector<double>& values) {
  last_lr_.clear();
  for (std::size_t i = 0; i < values.size() && i < optimizer_.num_param_groups(); ++i) {
    optimizer_.set_lr(i, values[i]);
    last_lr_.push_back(optimizer_.lr(i));
  }
}

void LRScheduler::step() {
  ++last_epoch_;
  apply(get_lr());
}

void LRScheduler::step_to(std::int64_t epoch) {
  last_epoch_ = epoch;
  std::optional<std::vector<double>> closed = closed_form_lr();
  apply(closed ? *closed : get_lr());
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

std::optional<std::vector<double>> StepLR::closed_form_lr() const {
  std::vector<double> lrs;
  for (double base_lr : base_lrs_) {
    lrs.push_back(base_lr * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_)));
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

std::optional<std::vector<double>> CosineAnnealingLR::closed_form_lr() const {
  std::vector<double> lrs;
  for (double base_lr : base_lrs_) {
    lrs.push_back(eta_min_ + (base_lr - eta_min_) *
                                 (1 + std::cos(std::numbers::pi * static_cast<double>(last_epoch_) /
                                               static_cast<double>(T_max_))) /
                                 2);
  }
  return lrs;
}

LambdaLR::LambdaLR(Optimizer& optimizer, LrLambda lr_lambda)
    : LambdaLR(optimizer, std::vector<LrLambda>(optimizer.num_param_groups(), lr_lambda)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas)
    : LRScheduler(optimizer), lr_lambdas_(std::move(lr_lambdas)) {
  MG_CHECK(lr_lambdas_.size() == optimizer.num_param_groups(), "LambdaLR", "expected ",
           optimizer.num_param_groups(), " lr_lambdas (one per parameter group), but got ",
           lr_lambdas_.size());
  for (std::size_t i = 0; i < lr_lambdas_.size(); ++i) {
    MG_CHECK(lr_lambdas_[i] != nullptr, "LambdaLR", "lr_lambda ", i, " is empty");
  }
  initial_step();
}

std::vector<double> LambdaLR::get_lr() const {
  std::vector<double> lrs;
  for (std::size_t i = 0; i < base_lrs_.size(); ++i) {
    lrs.push_back(base_lrs_[i] * lr_lambdas_[i](last_epoch_));
  }
  return lrs;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   std::int64_t total_iters)
    : LRScheduler(optimizer),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  MG_CHECK(start_factor >= 0 && start_factor <= 1, "LinearLR",
           "start_factor expected to be between 0 and 1, got ", start_factor);
  MG_CHECK(end_factor >= 0 && end_factor <= 1, "LinearLR",
           "end_factor expected to be between 0 and 1, got ", end_factor);
  MG_CHECK(total_iters > 0, "LinearLR", "total_iters must be positive, got ", total_iters);
  initial_step();
}

// The recursive form of lr_scheduler.py's LinearLR.get_lr, in PyTorch's order of operations.
std::vector<double> LinearLR::get_lr() const {
  std::vector<double> lrs;
  const auto e = static_cast<double>(last_epoch_);
  const auto n = static_cast<double>(total_iters_);
  for (std::size_t i = 0; i < optimizer_.num_param_groups(); ++i) {
    const double lr = optimizer_.lr(i);
    if (last_epoch_ == 0) {
      lrs.push_back(lr * start_factor_);
    } else if (last_epoch_ > total_iters_) {
      lrs.push_back(lr);
    } else {
      lrs.push_back(lr * (1. + (end_factor_ - start_factor_) /
                                   (n * start_factor_ + (e - 1) * (end_factor_ - start_factor_))));
    }
  }
  return lrs;
}

std::optional<std::vector<double>> LinearLR::closed_form_lr() const {
  std::vector<double> lrs;
  const auto done = static_cast<double>(std::min(total_iters_, last_epoch_));
  for (double base_lr : base_lrs_) {
    lrs.push_back(base_lr * (start_factor_ + (end_factor_ - start_factor_) * done /
                                                 static_cast<double>(total_iters_)));
  }
  return lrs;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, const OneCycleLROptions& options)
    : OneCycleLR(optimizer, std::vector<double>(optimizer.num_param_groups(), max_lr), options) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, std::vector<double> max_lrs,
                       const OneCycleLROptions& o)
    : LRScheduler(optimizer), options_(o) {
  const char* op = "OneCycleLR";
  if (o.total_steps() != 0) {
    MG_CHECK(o.total_steps() > 0, op, "expected a positive total_steps, but got ", o.total_steps());
    total_steps_ = o.total_steps();
  } else {
    MG_CHECK(o.epochs() != 0 || o.steps_per_epoch() != 0, op,
             "you must define either total_steps OR (epochs AND steps_per_epoch)");
    MG_CHECK(o.epochs() > 0, op, "expected a positive epochs, but got ", o.epochs());
    MG_CHECK(o.steps_per_epoch() > 0, op, "expected a positive steps_per_epoch, but got ",
             o.steps_per_epoch());
    total_steps_ = o.epochs() * o.steps_per_epoch();
  }
  MG_CHECK(o.pct_start() >= 0 && o.pct_start() <= 1, op,
           "expected pct_start between 0 and 1, but got ", o.pct_start());
  MG_CHECK(o.anneal_strategy() == "cos" || o.anneal_strategy() == "linear", op,
           "anneal_strategy must be one of 'cos' or 'linear', instead got '", o.anneal_strategy(),
           "'");
  MG_CHECK(max_lrs.size() == optimizer.num_param_groups(), op, "expected ",
           optimizer.num_param_groups(), " values for max_lr, got ", max_lrs.size());
  const auto total = static_cast<double>(total_steps_);
  enum { kInitial = 0, kMax = 1, kMin = 2 };
  if (o.three_phase()) {
    phases_ = {{o.pct_start() * total - 1, kInitial, kMax, true, false},
               {2 * o.pct_start() * total - 2, kMax, kInitial, false, true},
               {total - 1, kInitial, kMin, true, true}};
  } else {
    phases_ = {{o.pct_start() * total - 1, kInitial, kMax, true, false},
               {total - 1, kMax, kMin, false, true}};
  }
  for (std::size_t i = 0; i < max_lrs.size(); ++i) {
    const double initial_lr = max_lrs[i] / o.div_factor();
    lrs_.push_back({initial_lr, max_lrs[i], initial_lr / o.final_div_factor()});
    optimizer.set_initial_lr(i, initial_lr);
    base_lrs_[i] = initial_lr;
  }
  if (o.cycle_momentum()) {
    use_beta1_ = optimizer.option(0, "betas").has_value();
    MG_CHECK(
        use_beta1_ || optimizer.option(0, "momentum").has_value(), op,
        "optimizer must support momentum with cycle_momentum enabled (", optimizer.name(),
        " has neither \"momentum\" nor \"betas\"; pass OneCycleLROptions().cycle_momentum(false))");
    for (std::size_t i = 0; i < optimizer.num_param_groups(); ++i)
      set_momentum(i, o.max_momentum());
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == "cos") {
    const double cos_out = std::cos(std::numbers::pi * pct) + 1;
    return end + (start - end) / 2.0 * cos_out;
  }
  return (end - start) * pct + start;
}

void OneCycleLR::set_momentum(std::size_t group, double momentum) const {
  if (use_beta1_) {
    auto betas = std::get<std::vector<double>>(*optimizer_.option(group, "betas"));
    betas[0] = momentum;
    optimizer_.set_option(group, "betas", betas);
  } else {
    optimizer_.set_option(group, "momentum", momentum);
  }
}

std::vector<double> OneCycleLR::get_lr() const {
  const std::int64_t step_num = last_epoch_;
  MG_CHECK(step_num <= total_steps_, "OneCycleLR", "tried to step ", step_num + 1,
           " times. The specified number of total steps is ", total_steps_);
  std::vector<double> lrs;
  for (std::size_t g = 0; g < optimizer_.num_param_groups(); ++g) {
    double start_step = 0, computed_lr = 0, computed_momentum = 0;
    for (std::size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (static_cast<double>(step_num) <= phase.end_step || i == phases_.size() - 1) {
        const double pct =
            (static_cast<double>(step_num) - start_step) / (phase.end_step - start_step);
        computed_lr = anneal(lrs_[g][phase.start_lr], lrs_[g][phase.end_lr], pct);
        const auto momentum = [&](bool max) {
          return max ? options_.max_momentum() : options_.base_momentum();
        };
        computed_momentum =
            anneal(momentum(phase.start_max_momentum), momentum(phase.end_max_momentum), pct);
        break;
      }
      start_step = phase.end_step;
    }
    lrs.push_back(computed_lr);
    if (options_.cycle_momentum()) set_momentum(g, computed_momentum);
  }
  return lrs;
}

SequentialLR::SequentialLR(Optimizer& optimizer,
                           std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<std::int64_t> milestones)
    : LRScheduler(optimizer),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  const char* op = "SequentialLR";
  MG_CHECK(!schedulers_.empty(), op, "expects at least one scheduler");
  for (std::size_t i = 0; i < schedulers_.size(); ++i) {
    MG_CHECK(schedulers_[i] != nullptr, op, "scheduler ", i, " is null");
    MG_CHECK(&schedulers_[i]->optimizer_ == &optimizer, op,
             "expects all schedulers to belong to the same optimizer, but got scheduler at index ",
             i, " to be different than the optimizer passed in");
  }
  MG_CHECK(milestones_.size() + 1 == schedulers_.size(), op,
           "expects number of schedulers provided to be one more than the number of milestone "
           "points, but got number of schedulers ",
           schedulers_.size(), " and the number of milestones to be equal to ", milestones_.size());
  last_epoch_ = 0;
  // Reset the learning rates to their initial values, "undo" the step each scheduler made, and
  // perform the initial step of the first one only.
  for (std::size_t i = 0; i < optimizer.num_param_groups(); ++i) {
    optimizer.set_lr(i, *optimizer.initial_lr(i));
  }
  for (auto& s : schedulers_) --s->last_epoch_;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

void SequentialLR::step() {
  ++last_epoch_;
  const auto idx = static_cast<std::size_t>(
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin());
  LRScheduler& scheduler = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    scheduler.step_to(0);
  } else {
    scheduler.step();
  }
  last_lr_ = scheduler.get_last_lr();
}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& o)
    : optimizer_(optimizer), options_(o) {
  const char* op = "ReduceLROnPlateau";
  MG_CHECK(o.factor() < 1.0, op, "factor should be < 1.0, got ", o.factor());
  MG_CHECK(o.mode() == "min" || o.mode() == "max", op, "mode '", o.mode(),
           "' is unknown (expected 'min' or 'max')");
  MG_CHECK(o.threshold_mode() == "rel" || o.threshold_mode() == "abs", op, "threshold mode '",
           o.threshold_mode(), "' is unknown (expected 'rel' or 'abs')");
  const std::size_t n = optimizer.num_param_groups();
  if (o.min_lrs().empty()) {
    min_lrs_.assign(n, o.min_lr());
  } else {
    MG_CHECK(o.min_lrs().size() == n, op, "expected ", n, " min_lrs, got ", o.min_lrs().size());
    min_lrs_ = o.min_lrs();
  }
  best_ = o.mode() == "min" ? std::numeric_limits<double>::infinity()
                            : -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) last_lr_.push_back(optimizer.lr(i));
}

bool ReduceLROnPlateau::is_better(double a, double best) const {
  const bool rel = options_.threshold_mode() == "rel";
  if (options_.mode() == "min") {
    return rel ? a < best * (1. - options_.threshold()) : a < best - options_.threshold();
  }
  return rel ? a > best * (options_.threshold() + 1.) : a > best + options_.threshold();
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric, best_)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // ignore any bad epochs in cooldown
  }
  if (num_bad_epochs_ > options_.patience()) {
    for (std::size_t i = 0; i < optimizer_.num_param_groups(); ++i) {
      const double old_lr = optimizer_.lr(i);
      const double new_lr = std::max(old_lr * options_.factor(), min_lrs_[i]);
      if (old_lr - new_lr > options_.eps()) optimizer_.set_lr(i, new_lr);
    }
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (std::size_t i = 0; i < optimizer_.num_param_groups(); ++i) {
    last_lr_.push_back(optimizer_.lr(i));
  }
}

}  // namespace minigrad::optim::lr_scheduler
