#pragma once
// The optimizer base classes: parameter groups, per-parameter state, zero_grad.
// A C++ reading of torch/optim/optimizer.py (PyTorch 1.13).
#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad::optim {

/// One parameter group: tensors that share one set of options (a dict in `param_groups`).
/// A group's options are complete: fields left out take the optimizer's PyTorch defaults, not the
/// options of another group (as libtorch; PyTorch's Python fills them from the constructor's
/// keyword arguments instead).
template <typename Options>
struct ParamGroup {
  std::vector<Tensor> params;
  Options options{};
};

/// The state of one parameter, as PyTorch's `optimizer.state[p]`: "step", "momentum_buffer",
/// "exp_avg", "exp_avg_sq", "max_exp_avg_sq". Empty until the parameter's first step.
using ParamState = std::map<std::string, Tensor>;

/// What every optimizer offers, whatever its options: the interface schedulers and training loops
/// use. Not copyable (a copy would alias the state tensors); schedulers keep a reference to it.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// Updates every parameter that has a gradient (parameters whose grad() is undefined are
  /// skipped, as PyTorch). Runs under NoGradGuard and writes the parameters in place.
  virtual void step() = 0;
  /// Clears the gradients: set_to_none (the default, as PyTorch 2) makes them undefined,
  /// otherwise they are detached and filled with zeros in place.
  void zero_grad(bool set_to_none = true);

  /// The optimizer's name as it appears in error messages: "SGD", "Adam", "AdamW".
  const std::string& name() const { return name_; }
  /// Number of parameter groups.
  virtual std::size_t num_param_groups() const = 0;
  /// The parameters of group i.
  virtual const std::vector<Tensor>& params(std::size_t group) const = 0;
  /// The learning rate of group i (what lr schedulers read and write).
  virtual double lr(std::size_t group) const = 0;
  /// Sets the learning rate of group i.
  virtual void set_lr(std::size_t group, double lr) = 0;

  /// The state of parameter p (keyed by its TensorImpl, so every alias of p finds it); an empty
  /// state is created on first access, as the defaultdict `optimizer.state`.
  ParamState& state(const Tensor& p) { return state_[p.impl()]; }

 protected:
  explicit Optimizer(std::string name) : name_(std::move(name)) {}
  /// Throws unless every tensor is a defined leaf that appears in no group yet.
  void check_new_params(const std::vector<Tensor>& params) const;

 private:
  std::string name_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

/// An optimizer whose groups carry options of type Options (SGDOptions, AdamOptions, ...).
/// Derived classes implement step() and check_options().
template <typename Options>
class OptimizerWithOptions : public Optimizer {
 public:
  using Group = ParamGroup<Options>;

  /// The parameter groups; options may be changed between steps:
  /// `opt.param_groups()[0].options.lr = 0.01`.
  std::vector<Group>& param_groups() { return groups_; }
  const std::vector<Group>& param_groups() const { return groups_; }

  /// Adds a group (e.g. layers unfrozen while fine-tuning). Throws if its options are invalid or a
  /// parameter already belongs to a group.
  void add_param_group(Group group) {
    check_options(group.options);
    check_new_params(group.params);
    groups_.push_back(std::move(group));
  }

  std::size_t num_param_groups() const override { return groups_.size(); }
  const std::vector<Tensor>& params(std::size_t group) const override {
    return group_at(group).params;
  }
  double lr(std::size_t group) const override { return group_at(group).options.lr; }
  void set_lr(std::size_t group, double lr) override {
    groups_[group_index(group)].options.lr = lr;
  }

 protected:
  explicit OptimizerWithOptions(std::string name) : Optimizer(std::move(name)) {}
  /// Adds the groups; to be called from the derived constructor (it calls check_options).
  void init(std::vector<Group> groups);
  /// Adds one group holding params.
  void init(std::vector<Tensor> params, const Options& options);
  /// Throws minigrad::Error("[name] ...") for invalid options.
  virtual void check_options(const Options& options) const = 0;

 private:
  std::size_t group_index(std::size_t i) const {
    MG_CHECK(i < groups_.size(), name().c_str(), "parameter group ", i, " is out of range (",
             groups_.size(), " groups)");
    return i;
  }
  const Group& group_at(std::size_t i) const { return groups_[group_index(i)]; }

  std::vector<Group> groups_;
};

template <typename Options>
void OptimizerWithOptions<Options>::init(std::vector<Group> groups) {
  MG_CHECK(!groups.empty(), name().c_str(), "optimizer got an empty parameter list");
  for (Group& g : groups) add_param_group(std::move(g));
}

template <typename Options>
void OptimizerWithOptions<Options>::init(std::vector<Tensor> params, const Options& options) {
  MG_CHECK(!params.empty(), name().c_str(), "optimizer got an empty parameter list");
  add_param_group({std::move(params), options});
}

}  // namespace minigrad::optim
