#include "minigrad/optim/optimizer.h"

#include <atomic>
#include <cstdint>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "minigrad/parameter_names.h"
#include "minigrad/warning.h"

namespace minigrad::optim {

// Out of line: compiled here once, not in every file that destroys an optimizer.
Optimizer::~Optimizer() = default;

namespace {
std::atomic<bool> g_warn_no_gradient{true};
std::atomic<bool> g_strict_gradients{false};
}  // namespace

void set_warn_no_gradient(bool enabled) { g_warn_no_gradient.store(enabled); }
bool warn_no_gradient() { return g_warn_no_gradient.load(); }
void set_strict_gradients(bool strict) { g_strict_gradients.store(strict); }
bool strict_gradients() { return g_strict_gradients.load(); }

OptimizerOptions& OptimizerParamGroup::options() {
  return const_cast<OptimizerOptions&>(std::as_const(*this).options());
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  MG_CHECK(options_ != nullptr, "OptimizerParamGroup",
           "the group has no options: it gets a copy of the optimizer's defaults when it is added "
           "with add_param_group() or given to the optimizer's constructor");
  return *options_;
}

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup added(group.params(),
                            group.has_options() ? group.options().clone() : defaults_->clone());
  check_group_options(added.options());
  check_new_params(added.params());
  remember_names(added.params());
  param_groups_.push_back(std::move(added));
}

std::size_t Optimizer::size() const {
  std::size_t n = 0;
  for (const OptimizerParamGroup& g : param_groups_) n += g.params().size();
  return n;
}

std::size_t Optimizer::group_index(std::size_t i) const {
  MG_CHECK(i < param_groups_.size(), name_.c_str(), "parameter group ", i, " is out of range (",
           param_groups_.size(), " groups)");
  return i;
}

void Optimizer::remember_names(const std::vector<Tensor>& new_params) {
  for (const Tensor& p : new_params) {
    std::string name = parameter_name(p);
    if (!name.empty()) names_[p.impl()] = std::move(name);
  }
}

// Note [Parameters without a gradient] (optimizer.h).
void Optimizer::check_gradients() {
  const bool strict = strict_gradients();
  if (!strict && !warn_no_gradient()) return;
  const std::string op = name_ + ".step";
  struct Missing {
    std::int64_t position;
    const Tensor* param;
  };
  std::vector<Missing> missing;
  std::int64_t position = 0, trainable = 0, with_grad = 0;
  for (std::size_t i = 0; i < num_param_groups(); ++i) {
    for (const Tensor& p : params(i)) {
      if (p.requires_grad()) {
        ++trainable;
        if (p.grad().defined()) {
          ++with_grad;
          had_grad_.insert(p.impl());
        } else {
          missing.push_back({position, &p});
        }
      }
      ++position;
    }
  }
  if (trainable == 0) return;  // everything frozen: nothing is meant to train
  if (with_grad == 0) {
    if (!strict && reported_no_grads_) return;
    const std::string message =
        trainable == 1
            ? detail::error_message(
                  op, "the optimizer's one trainable parameter has no gradient, so step() ",
                  "changes nothing: call loss.backward() between zero_grad() and step(); if ",
                  "backward() did run, the loss does not depend on this parameter (was the ",
                  "optimizer given another model's parameters()?)")
            : detail::error_message(
                  op, "none of the ", trainable, " trainable parameters has a gradient, so ",
                  "step() changes nothing: call loss.backward() between zero_grad() and step(); ",
                  "if backward() did run, the loss does not depend on any of these parameters ",
                  "(was the optimizer given another model's parameters()?)");
    if (strict) throw Error(message);
    reported_no_grads_ = true;
    minigrad::warn(message);  // through the WarningHandler (minigrad/warning.h)
    return;
  }
  for (const Missing& m : missing) {
    const TensorImpl* impl = m.param->impl();
    if (had_grad_.contains(impl) || (!strict && reported_.contains(impl))) continue;
    const std::string name = param_name(*m.param);
    std::ostringstream who;
    if (name.empty()) {
      who << "parameter at position " << m.position;
    } else {
      who << "parameter " << name;
    }
    const std::string message = detail::error_message(
        op, who.str(), " (shape ", m.param->shape(), ") received no gradient in backward while ",
        with_grad, " of the ", trainable, " trainable parameters did, so step() does not train ",
        "it: it did not take part in the loss, or the graph was cut on its way there (detach(), ",
        "NoGradGuard, item()); use it in the loss, or freeze it with requires_grad_(false)");
    if (strict) throw Error(message);
    reported_.insert(impl);
    minigrad::warn(message);  // through the WarningHandler (minigrad/warning.h)
  }
}

Tensor Optimizer::evaluate_closure(const LossClosure& closure) const {
  if (!closure) return Tensor();
  Tensor loss;
  {
    GradModeGuard enable_grad(true);  // torch.enable_grad(): step() may run under no_grad
    loss = closure();
  }
  MG_CHECK(loss.defined(), (name_ + ".step").c_str(),
           "the closure returned no loss (an undefined tensor): it must compute the loss, call "
           "loss.backward() and return the loss");
  return loss;
}

void Optimizer::set_option(std::size_t /*group*/, const std::string& option_name,
                           const OptionValue& /*value*/) {
  MG_ERROR(name_.c_str(), "unknown option \"", option_name, "\"");
}

void Optimizer::zero_grad(bool set_to_none) {
  for (std::size_t i = 0; i < num_param_groups(); ++i) {
    for (const Tensor& p : params(i)) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
        continue;
      }
      // PyTorch detaches a grad that has history (create_graph) before zeroing it in place.
      if (g.requires_grad()) {
        g = g.detach();
        p.set_grad(g);
      }
      NoGradGuard no_grad;
      g.zero_();
    }
  }
}

void Optimizer::check_new_params(const std::vector<Tensor>& new_params) const {
  std::unordered_set<const TensorImpl*> seen;
  for (std::size_t i = 0; i < num_param_groups(); ++i) {
    for (const Tensor& p : params(i)) seen.insert(p.impl());
  }
  for (const Tensor& p : new_params) {
    MG_CHECK(p.defined(), name_.c_str(), "optimizer got an undefined tensor as a parameter");
    MG_CHECK(p.is_leaf(), name_.c_str(), "can't optimize a non-leaf Tensor");
    MG_CHECK(p.is_floating_point(), name_.c_str(), "can only optimize floating-point tensors, got ",
             dtype_name(p.dtype()));
    // NOTE: PyTorch only warns about a duplicate inside one group; we refuse it, since a
    // duplicate would be stepped twice.
    MG_CHECK(seen.insert(p.impl()).second, name_.c_str(),
             "some parameters appear in more than one parameter group (or twice in one)");
  }
}

}  // namespace minigrad::optim
