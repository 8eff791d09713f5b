#pragma once
// The optimizer base classes: options, parameter groups, per-parameter state, zero_grad,
// state_dict. A C++ reading of torch/optim/optimizer.py (PyTorch 1.13) with libtorch's C++ API
// (torch/optim/optimizer.h: OptimizerOptions, OptimizerParamGroup, param_groups()).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "minigrad/arg.h"
#include "minigrad/io.h"
#include "minigrad/tensor.h"

namespace minigrad::detail {
// Note [Optimizer options in a state_dict]
// Each Options struct lists its fields once, by PyTorch's names, in a static
// `fields(options, f)` that calls f(name, field) per field (sgd.h, adam.h). The field types are
// double, std::int64_t (saved as a number), bool and std::tuple<double, double> (betas); these
// helpers turn them into checkpoint values and back.
inline OptionValue to_option_value(double v) { return v; }
inline OptionValue to_option_value(std::int64_t v) { return static_cast<double>(v); }
inline OptionValue to_option_value(bool v) { return v; }
inline OptionValue to_option_value(const std::tuple<double, double>& v) {
  return std::vector<double>{std::get<0>(v), std::get<1>(v)};
}
// Assigns value to field; returns false when the value has the wrong type or length.
inline bool from_option_value(const OptionValue& value, double& field) {
  const double* v = std::get_if<double>(&value);
  if (v) field = *v;
  return v != nullptr;
}
inline bool from_option_value(const OptionValue& value, std::int64_t& field) {
  const double* v = std::get_if<double>(&value);
  if (!v || *v != std::floor(*v) || std::abs(*v) > 9007199254740992.0) return false;
  field = static_cast<std::int64_t>(*v);
  return true;
}
inline bool from_option_value(const OptionValue& value, bool& field) {
  const bool* v = std::get_if<bool>(&value);
  if (v) field = *v;
  return v != nullptr;
}
inline bool from_option_value(const OptionValue& value, std::tuple<double, double>& field) {
  const auto* v = std::get_if<std::vector<double>>(&value);
  if (!v || v->size() != 2) return false;
  field = {(*v)[0], (*v)[1]};
  return true;
}
inline const char* option_type_name(double) { return "a number"; }
inline const char* option_type_name(std::int64_t) { return "an integer"; }
inline const char* option_type_name(bool) { return "true or false"; }
inline const char* option_type_name(const std::tuple<double, double>&) {
  return "a list of 2 numbers";
}
/// libtorch's operator== on an optimizer's options: every field fields() lists equal (exactly, in
/// its own type: a NaN option is unequal to itself, as in libtorch).
template <typename Options>
bool option_fields_equal(const Options& a, const Options& b) {
  bool equal = true;
  Options::fields(a, [&](const char* name, const auto& field_a) {
    Options::fields(b, [&](const char* other_name, const auto& field_b) {
      if constexpr (std::is_same_v<decltype(field_a), decltype(field_b)>) {
        if (std::string_view(name) == other_name && !(field_a == field_b)) equal = false;
      }
    });
  });
  return equal;
}
}  // namespace minigrad::detail

namespace minigrad::optim {

/// The base of every optimizer's options, as libtorch's torch::optim::OptimizerOptions: what an
/// optimizer needs of a group's options whatever their type (its lr), and a copy.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  /// A copy of the whole options (of the derived type).
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;

 protected:
  OptimizerOptions() = default;
  OptimizerOptions(const OptimizerOptions&) = default;
  OptimizerOptions& operator=(const OptimizerOptions&) = default;
};

/// Derive an Options struct from OptimizerCloneableOptions<Options> (libtorch's
/// OptimizerCloneableOptions): it gives clone(), get_lr() and set_lr() from the struct's
/// MG_ARG(double, lr).
template <typename Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
};

/// One parameter group, as libtorch's OptimizerParamGroup: tensors that share one set of options.
/// A group made without options takes a copy of the optimizer's defaults when it is added; a
/// group's options are complete (fields left out take the option type's defaults, not another
/// group's, as libtorch; PyTorch's Python fills them from the constructor's keyword arguments).
/// Copying a group copies its options.
///
///   optim::SGD opt({optim::OptimizerParamGroup({w}, optim::SGDOptions(0.1)),
///                   optim::OptimizerParamGroup({b})},  // takes the defaults: lr 1
///                  optim::SGDOptions(1));
///   static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).lr(0.01);
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params)  // NOLINT: implicit, as libtorch's
      : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  /// A group with a copy of options: `OptimizerParamGroup({w}, SGDOptions(0.1))`.
  template <typename Options>
  requires std::derived_from<Options, OptimizerOptions> OptimizerParamGroup(
      std::vector<Tensor> params, const Options& options)
      : params_(std::move(params)), options_(options.clone()) {}
  OptimizerParamGroup(const OptimizerParamGroup& other)
      : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other) {
    std::unique_ptr<OptimizerOptions> options = other.options_ ? other.options_->clone() : nullptr;
    params_ = other.params_;
    options_ = std::move(options);
    return *this;
  }
  OptimizerParamGroup(OptimizerParamGroup&&) noexcept = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) noexcept = default;
  ~OptimizerParamGroup() = default;

  bool has_options() const { return options_ != nullptr; }
  /// The group's options, of its optimizer's options type: cast them to it to read or set a
  /// field, `static_cast<SGDOptions&>(group.options()).momentum(0.9)`; get_lr()/set_lr() need no
  /// cast. Throws if the group has no options (it was made without and not added to an
  /// optimizer).
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// Note [Typed parameter state]
// A parameter's state is both PyTorch's dict (`optimizer.state[p]["exp_avg"]`: the state is a
// std::map from PyTorch's names to tensors, what state_dict() saves) and libtorch's typed object
// (`static_cast<AdamParamState&>(*opt.state().at(p.unsafeGetTensorImpl())).exp_avg()`): each
// optimizer creates its state as its own OptimizerParamState subclass (make_param_state), whose
// accessors read and write the same map entries. A tensor accessor returns the state tensor's
// handle (an alias: `s.exp_avg().mul_(2)` changes the state; an absent entry gives an undefined
// tensor), a setter replaces the entry; step() is the "step" entry as an integer (0 before the
// first step).

/// The state of one parameter, as PyTorch's `optimizer.state[p]`: "step", "momentum_buffer",
/// "exp_avg", "exp_avg_sq", "max_exp_avg_sq". Empty until the parameter's first step. The base of
/// the typed states (AdamParamState, SGDParamState, ...: Note [Typed parameter state]), as
/// libtorch's OptimizerParamState.
class OptimizerParamState : public std::map<std::string, Tensor> {
 public:
  OptimizerParamState() = default;
  OptimizerParamState(const OptimizerParamState&) = default;
  OptimizerParamState(OptimizerParamState&&) = default;
  OptimizerParamState& operator=(const OptimizerParamState&) = default;
  OptimizerParamState& operator=(OptimizerParamState&&) = default;
  virtual ~OptimizerParamState();
  /// A copy of the same type whose tensors alias this state's (libtorch's clone()).
  virtual std::unique_ptr<OptimizerParamState> clone() const;

 protected:
  /// Entry `key`, or an undefined tensor without one.
  Tensor get(const char* key) const;
  /// Sets entry `key`.
  void set(const char* key, const Tensor& value) { (*this)[key] = value; }
  /// The "step" entry as an integer, 0 without one.
  std::int64_t get_step() const;
  /// Writes the "step" entry (a float32 scalar, as PyTorch's, made if missing).
  void set_step(std::int64_t step);
  /// Entry `key` as an integer (0 without one); writes it (an int64 scalar if missing).
  std::int64_t get_count(const char* key) const;
  void set_count(const char* key, std::int64_t value);
  /// libtorch's operator== on a typed state: the same step() and, entry by entry, tensors equal
  /// as torch::equal (an entry absent on both sides, or undefined on both, is equal).
  bool equals(const OptimizerParamState& other) const;

 public:
  /// The same comparison through the base, `*opt1.state().at(k) == *opt2.state().at(k)` (each
  /// typed state has its own, as libtorch's).
  friend bool operator==(const OptimizerParamState& a, const OptimizerParamState& b) {
    return a.equals(b);
  }
};
/// PyTorch's name for one parameter's state (a map from state names to tensors).
using ParamState = OptimizerParamState;

}  // namespace minigrad::optim

namespace minigrad::guts {
/// c10::guts::to_string: what `<<` prints; libtorch keys an optimizer's state() by
/// `c10::guts::to_string(p.unsafeGetTensorImpl())`.
template <typename T>
std::string to_string(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}
}  // namespace minigrad::guts

namespace minigrad::optim {

/// Every parameter's state, as libtorch's `optimizer.state()`: keyed by the string of the
/// parameter's TensorImpl pointer (`c10::guts::to_string(p.unsafeGetTensorImpl())`, so libtorch
/// code ports by renaming), and also by the pointer itself (`state.at(p.unsafeGetTensorImpl())`).
class ParamStateMap : public std::unordered_map<std::string, std::unique_ptr<OptimizerParamState>> {
  using Base = std::unordered_map<std::string, std::unique_ptr<OptimizerParamState>>;

 public:
  using Base::at;
  using Base::contains;
  using Base::count;
  using Base::find;
  using Base::operator[];
  /// The key of the parameter whose TensorImpl is p.
  static std::string key(const TensorImpl* p) { return guts::to_string(p); }
  std::unique_ptr<OptimizerParamState>& at(const TensorImpl* p) { return Base::at(key(p)); }
  const std::unique_ptr<OptimizerParamState>& at(const TensorImpl* p) const {
    return Base::at(key(p));
  }
  bool contains(const TensorImpl* p) const { return Base::contains(key(p)); }
  std::size_t count(const TensorImpl* p) const { return Base::count(key(p)); }
  iterator find(const TensorImpl* p) { return Base::find(key(p)); }
  const_iterator find(const TensorImpl* p) const { return Base::find(key(p)); }
  std::unique_ptr<OptimizerParamState>& operator[](const TensorImpl* p) { return (*this)[key(p)]; }
};

/// A typed state's step accessors (libtorch's TORCH_ARG(int64_t, step)).
#define MG_PARAM_STATE_STEP(Self)                  \
  std::int64_t step() const { return get_step(); } \
  Self& step(std::int64_t value) {                 \
    set_step(value);                               \
    return *this;                                  \
  }
/// A typed state's tensor accessors (libtorch's TORCH_ARG(torch::Tensor, name)).
#define MG_PARAM_STATE_TENSOR(Self, name)    \
  Tensor name() const { return get(#name); } \
  Self& name(const Tensor& value) {          \
    set(#name, value);                       \
    return *this;                            \
  }
/// A typed state's integer accessors (libtorch's TORCH_ARG(int64_t, name)), e.g. LBFGS's
/// func_evals.
#define MG_PARAM_STATE_COUNT(Self, name)                 \
  std::int64_t name() const { return get_count(#name); } \
  Self& name(std::int64_t value) {                       \
    set_count(#name, value);                             \
    return *this;                                        \
  }
/// operator== as libtorch's on a typed state (OptimizerParamState::equals): `s1 == s2`.
#define MG_PARAM_STATE_EQUAL(Self) \
  friend bool operator==(const Self& a, const Self& b) { return a.equals(b); }
/// Field by field, as libtorch's operator== on an optimizer's options: `o1 == o2`.
#define MG_OPTIONS_EQUAL(Options)                              \
  friend bool operator==(const Options& a, const Options& b) { \
    return ::minigrad::detail::option_fields_equal(a, b);      \
  }
/// clone() returning a copy of the typed state.
#define MG_PARAM_STATE_CLONE(Self)                              \
  std::unique_ptr<OptimizerParamState> clone() const override { \
    return std::make_unique<Self>(*this);                       \
  }

/// What step() may call to re-evaluate the model, as libtorch's `LossClosure`: it clears the
/// gradients, computes the loss, calls backward() and returns the loss.
using LossClosure = std::function<Tensor()>;

// Note [Parameters without a gradient]
// A parameter that never receives a gradient never trains, and nothing else tells the user. So
// step() first looks at the gradients backward() left (only that state matters: after
// zero_grad() they are undefined until the next backward) and reports, on stderr, prefixed
// "minigrad warning: ":
//   - once per parameter and optimizer, each parameter that requires grad, has no gradient while
//     others have one, and has had none at any earlier step() of this optimizer (one that trained
//     before and misses a gradient now, e.g. a branch a batch did not use, is not reported):
//     "[SGD.step] parameter W_k.weight (shape (3, 3)) received no gradient in backward ...";
//   - once per optimizer, a step() where no parameter that requires grad has a gradient
//     (step() before backward()): "[SGD.step] none of the 2 trainable parameters has a gradient
//     ...".
// Frozen parameters (requires_grad false) are never reported. The parameter is named by the
// dotted name Module::parameters() recorded (minigrad::parameter_name, minigrad/parameter_names.h),
// else by its position in the optimizer (counted through the groups). set_strict_gradients(true)
// throws minigrad::Error with the same message instead, at every such step(), before any parameter
// changes; set_warn_no_gradient(false) silences the warnings (strict mode still throws).

/// Turns the "received no gradient" warnings of step() on or off for the whole process (on by
/// default). Thread-safe.
void set_warn_no_gradient(bool enabled);
bool warn_no_gradient();
/// Strict gradients: step() throws minigrad::Error instead of warning when a parameter received
/// no gradient (or none has one), for the whole process (off by default). Thread-safe.
void set_strict_gradients(bool strict);
bool strict_gradients();
/// What every optimizer offers, whatever its options: the interface schedulers and training loops
/// use (libtorch's torch::optim::Optimizer). Not copyable (a copy would alias the state tensors);
/// schedulers keep a reference to it.
class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// Updates every parameter that has a gradient (parameters whose grad() is undefined are
  /// skipped, as PyTorch). Runs under NoGradGuard and writes the parameters in place. Warns once
  /// about a parameter that receives no gradient, or throws in strict mode (Note [Parameters
  /// without a gradient]). A closure, if given, is called first with grad enabled (as
  /// libtorch's `step(LossClosure)`; LBFGS calls it several times) and its loss returned;
  /// without one step() returns an undefined tensor.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  /// Clears the gradients: set_to_none (the default, as PyTorch 2) makes them undefined,
  /// otherwise they are detached and filled with zeros in place.
  void zero_grad(bool set_to_none = true);

  /// The optimizer's name as it appears in error messages: "SGD", "Adam", "AdamW".
  const std::string& name() const { return name_; }

  /// The parameter groups, as libtorch's param_groups(): each has params() and options() (this
  /// optimizer's options type, e.g. SGDOptions, behind an OptimizerOptions&). Options changed
  /// here take effect at the next step():
  /// `static_cast<SGDOptions&>(opt.param_groups()[0].options()).lr(0.01)`. Add groups with
  /// add_param_group(), which checks them.
  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  /// Adds a group (e.g. layers unfrozen while fine-tuning); a group without options gets a copy of
  /// defaults(). Throws if its options are another optimizer's or invalid, or a parameter already
  /// belongs to a group.
  void add_param_group(const OptimizerParamGroup& group);
  /// The options groups without their own get (the constructor's options), as libtorch.
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  /// The parameters of the first group (libtorch's parameters()).
  const std::vector<Tensor>& parameters() const { return params(0); }
  /// The number of parameters in all groups (libtorch's size()).
  std::size_t size() const;

  /// Number of parameter groups.
  std::size_t num_param_groups() const { return param_groups_.size(); }
  /// The parameters of group i.
  const std::vector<Tensor>& params(std::size_t group) const {
    return param_groups_[group_index(group)].params();
  }
  /// The learning rate of group i (what lr schedulers read and write).
  double lr(std::size_t group) const {
    return param_groups_[group_index(group)].options().get_lr();
  }
  /// Sets the learning rate of group i.
  void set_lr(std::size_t group, double lr) {
    param_groups_[group_index(group)].options().set_lr(lr);
  }

  /// The name a warning gives parameter p: its dotted name from Module::parameters()
  /// ("W_k.weight"), recorded when the optimizer was given p, or "" if it has none.
  std::string param_name(const Tensor& p) const {
    auto it = names_.find(p.impl());
    return it == names_.end() ? std::string() : it->second;
  }

  /// The state of parameter p (keyed by its TensorImpl, so every alias of p finds it); an empty
  /// state of this optimizer's type (make_param_state) is created on first access, as the
  /// defaultdict `optimizer.state`.
  ParamState& state(const Tensor& p) {
    std::unique_ptr<OptimizerParamState>& slot = state_[ParamStateMap::key(p.impl())];
    if (!slot) slot = make_param_state();
    return *slot;
  }
  /// Every parameter's state (ParamStateMap: keyed as libtorch's, by
  /// `c10::guts::to_string(p.unsafeGetTensorImpl())`, or by the pointer):
  /// `static_cast<AdamParamState&>(*opt.state().at(key))`, as libtorch (Note [Typed parameter
  /// state]). Parameters not stepped yet are absent or empty.
  ParamStateMap& state() noexcept { return state_; }
  const ParamStateMap& state() const noexcept { return state_; }

  /// Option `name` (PyTorch's name: "lr", "momentum", "betas", ...) of group i, as a
  /// state_dict() value; std::nullopt if this optimizer has no such option (what OneCycleLR
  /// uses to find "momentum" or "betas").
  virtual std::optional<OptionValue> option(std::size_t /*group*/,
                                            const std::string& /*name*/) const {
    return std::nullopt;
  }
  /// Sets option `name` of group i; throws if there is no such option, the value has the wrong
  /// type, or the options become invalid.
  virtual void set_option(std::size_t group, const std::string& name, const OptionValue& value);

  /// The learning rate of group i when the first lr scheduler was attached to this optimizer
  /// (PyTorch's `group['initial_lr']`, the schedulers' base_lrs), or std::nullopt before.
  std::optional<double> initial_lr(std::size_t group) const {
    auto it = initial_lrs_.find(group);
    return it == initial_lrs_.end() ? std::nullopt : std::optional<double>(it->second);
  }
  /// Records group i's initial_lr unless it has one (PyTorch's `setdefault('initial_lr', lr)`);
  /// returns it.
  double set_default_initial_lr(std::size_t group) {
    return initial_lrs_.try_emplace(group, lr(group)).first->second;
  }
  /// Sets group i's initial_lr (OneCycleLR sets it to max_lr / div_factor, as PyTorch).
  void set_initial_lr(std::size_t group, double lr) { initial_lrs_[group] = lr; }

  /// The optimizer's state as PyTorch's `optimizer.state_dict()`: each parameter's state keyed by
  /// its position (counted through the groups in order) and each group's options by PyTorch's
  /// names with its parameters' positions. The state tensors are aliases, not copies.
  virtual OptimizerStateDict state_dict() const = 0;
  /// Restores a state_dict() of an optimizer of the same kind over parameters of the same shapes
  /// (a resumed run then continues bit for bit). Checks everything first and changes nothing if
  /// anything is wrong: the optimizer's name, the number and sizes of the groups, each option's
  /// name, type and validity, each state tensor's name, shape and dtype. Options the dict leaves
  /// out keep their current values; the state tensors are copied (converted to the parameter's
  /// dtype, "step" excepted, as PyTorch).
  virtual void load_state_dict(const OptimizerStateDict& dict) = 0;

  /// Writes state_dict() into archive (libtorch's Optimizer::save): "optimizer" (the name), each
  /// state tensor under "state.<position>.<name>", each group's options under
  /// "param_groups.<group>.<option>" (a tuple's numbers under ".0", ".1") and its parameters'
  /// positions under "param_groups.<group>.params.<k>". mg::save(optimizer, path) calls it.
  virtual void save(serialize::OutputArchive& archive) const;
  /// Reads what save() wrote (or a torch.save(optimizer.state_dict()) file's archive) and
  /// restores it with load_state_dict(), which refuses another optimizer's or a mismatched
  /// state and then changes nothing. mg::load(optimizer, path) calls it.
  virtual void load(serialize::InputArchive& archive);

 protected:
  Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults)
      : name_(std::move(name)), defaults_(std::move(defaults)) {}
  /// Throws unless options are of this optimizer's options type and valid.
  virtual void check_group_options(const OptimizerOptions& options) const = 0;
  /// i, or an error if there is no group i.
  std::size_t group_index(std::size_t i) const;
  /// Throws unless every tensor is a defined leaf that appears in no group yet.
  void check_new_params(const std::vector<Tensor>& params) const;
  /// Records the parameters' names (minigrad::parameter_name, minigrad/parameter_names.h) for the
  /// warnings; called with each new group.
  void remember_names(const std::vector<Tensor>& params);
  /// The check every step() makes first (Note [Parameters without a gradient]): warns on stderr,
  /// or throws in strict mode.
  void check_gradients();
  /// Calls closure with grad enabled and returns its loss (undefined without a closure); throws
  /// "[<name>.step] the closure returned no loss ..." if it returns an undefined tensor.
  Tensor evaluate_closure(const LossClosure& closure) const;

  /// The per-parameter state keys step() writes: a non-empty state has all of `required` and may
  /// have `optional` ones (load_state_dict refuses any other).
  struct StateKeys {
    std::vector<std::string> required;
    std::vector<std::string> optional;
    /// The keys that hold a single number rather than a tensor of the parameter's shape.
    std::vector<std::string> scalars = {"step"};
  };
  virtual StateKeys state_keys() const = 0;
  /// The state of p, or nullptr if it has none (unlike state(), creates nothing).
  const ParamState* find_state(const Tensor& p) const {
    auto it = state_.find(p.impl());
    return it == state_.end() || !it->second || it->second->empty() ? nullptr : it->second.get();
  }
  /// Replaces the whole state (load_state_dict); each entry becomes a make_param_state().
  void replace_state(std::unordered_map<const TensorImpl*, ParamState> state);
  /// A new, empty state of this optimizer's type (AdamParamState for Adam, ...; the base
  /// OptimizerParamState unless overridden).
  virtual std::unique_ptr<OptimizerParamState> make_param_state() const {
    return std::make_unique<OptimizerParamState>();
  }

 private:
  std::string name_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<OptimizerParamGroup> param_groups_;
  ParamStateMap state_;
  // Note [Parameters without a gradient]: names, parameters that had a gradient at some step(),
  // parameters already reported, and whether "no parameter has a gradient" was reported.
  std::unordered_map<const TensorImpl*, std::string> names_;
  std::unordered_set<const TensorImpl*> had_grad_;
  std::unordered_set<const TensorImpl*> reported_;
  bool reported_no_grads_ = false;
  std::map<std::size_t, double> initial_lrs_;
};

/// An optimizer whose groups carry options of type Options (SGDOptions, AdamOptions, ...).
/// Derived classes implement step(), check_options() and state_keys(). It is also the base of a
/// user-defined optimizer: an Options struct derived from OptimizerCloneableOptions<Options> with
/// an MG_ARG(double, lr) and a static `fields()` (Note [Optimizer options in a state_dict]), a
/// constructor that calls init(), and the three overrides; state_dict, set_option and the
/// schedulers then work on it (OptimCustom in tests/optim/test_optim_more.cpp).
template <typename Options>
class OptimizerWithOptions : public Optimizer {
 public:
  std::optional<OptionValue> option(std::size_t group, const std::string& name) const override {
    std::optional<OptionValue> out;
    Options::fields(options_of(param_groups()[group_index(group)]),
                    [&](const char* field_name, const auto& field) {
                      if (name == field_name) out = detail::to_option_value(field);
                    });
    return out;
  }
  void set_option(std::size_t group, const std::string& name, const OptionValue& value) override {
    Options o = options_of(param_groups()[group_index(group)]);
    bool known = false;
    Options::fields(o, [&](const char* field_name, auto& field) {
      if (name != field_name) return;
      known = true;
      MG_CHECK(detail::from_option_value(value, field), this->name().c_str(), "option \"", name,
               "\" must be ", detail::option_type_name(field));
    });
    MG_CHECK(known, this->name().c_str(), "unknown option \"", name, "\"");
    check_options(o);
    options_of(param_groups()[group]) = o;
  }

  OptimizerStateDict state_dict() const override;
  void load_state_dict(const OptimizerStateDict& dict) override;

 protected:
  OptimizerWithOptions(std::string name, const Options& defaults)
      : Optimizer(std::move(name), defaults.clone()) {}
  /// Checks the defaults and adds the groups; to be called from the derived constructor (it
  /// calls check_options).
  void init(std::vector<OptimizerParamGroup> groups);
  /// Checks the defaults and adds one group holding params.
  void init(std::vector<Tensor> params);
  /// Throws minigrad::Error("[name] ...") for invalid options.
  virtual void check_options(const Options& options) const = 0;
  void check_group_options(const OptimizerOptions& options) const final {
    check_options(options_of(options));
  }
  /// A group's options as this optimizer's type (throws if someone set another type).
  Options& options_of(OptimizerParamGroup& group) const {
    return const_cast<Options&>(options_of(std::as_const(group).options()));
  }
  const Options& options_of(const OptimizerParamGroup& group) const {
    return options_of(group.options());
  }

 private:
  const Options& options_of(const OptimizerOptions& options) const {
    const auto* o = dynamic_cast<const Options*>(&options);
    MG_CHECK(o != nullptr, name().c_str(),
             "the parameter group's options are another optimizer's: give it this optimizer's "
             "options type (",
             name(), "Options for ", name(), ")");
    return *o;
  }
};

template <typename Options>
void OptimizerWithOptions<Options>::init(std::vector<OptimizerParamGroup> groups) {
  check_group_options(defaults());
  MG_CHECK(!groups.empty(), name().c_str(), "optimizer got an empty parameter list");
  for (const OptimizerParamGroup& g : groups) add_param_group(g);
}

template <typename Options>
void OptimizerWithOptions<Options>::init(std::vector<Tensor> params) {
  MG_CHECK(!params.empty(), name().c_str(), "optimizer got an empty parameter list");
  init(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))});
}

template <typename Options>
OptimizerStateDict OptimizerWithOptions<Options>::state_dict() const {
  OptimizerStateDict out;
  out.optimizer = name();
  std::int64_t position = 0;
  for (const OptimizerParamGroup& g : param_groups()) {
    ParamGroupState group;
    Options::fields(options_of(g), [&](const char* field_name, const auto& field) {
      group.options.emplace_back(field_name, detail::to_option_value(field));
    });
    for (const Tensor& p : g.params()) {
      if (const ParamState* s = find_state(p)) out.state[position] = *s;
      group.params.push_back(position++);
    }
    out.param_groups.push_back(std::move(group));
  }
  return out;
}

template <typename Options>
void OptimizerWithOptions<Options>::load_state_dict(const OptimizerStateDict& dict) {
  const std::string op = "load_state_dict";
  const std::string& me = name();
  MG_CHECK(dict.optimizer.empty() || dict.optimizer == me, op, me, ": the state_dict is ",
           dict.optimizer, "'s, not ", me, "'s");
  std::vector<OptimizerParamGroup>& groups = param_groups();
  // libtorch's (and torch.optim's) phrases first, then the counts.
  MG_CHECK(dict.param_groups.size() == groups.size(), op, me,
           ": loaded state dict has a different number of parameter groups: the state_dict has ",
           dict.param_groups.size(), " parameter groups, the optimizer has ", groups.size());
  // Options: start from the current ones, apply the dict's, check the result.
  std::vector<Options> options;
  std::map<std::int64_t, const Tensor*> by_position;  // the dict's positions -> our parameters
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const ParamGroupState& loaded = dict.param_groups[i];
    MG_CHECK(loaded.params.size() == groups[i].params().size(), op, me,
             ": loaded state dict contains a parameter group that has a different size than the "
             "optimizer's parameter group: parameter group ",
             i, " of the state_dict has ", loaded.params.size(),
             " parameters, the optimizer's has ", groups[i].params().size());
    for (std::size_t j = 0; j < loaded.params.size(); ++j) {
      MG_CHECK(by_position.emplace(loaded.params[j], &groups[i].params()[j]).second, op, me,
               ": parameter position ", loaded.params[j], " appears twice in param_groups");
    }
    Options o = options_of(groups[i]);
    for (const auto& option : loaded.options) {
      // Not a structured binding: clang before 16 cannot capture one in the lambda below.
      const auto& key = option.first;
      const auto& value = option.second;
      bool known = false;
      Options::fields(o, [&](const char* field_name, auto& field) {
        if (key != field_name) return;
        known = true;
        MG_CHECK(detail::from_option_value(value, field), op, me, ": option \"", key,
                 "\" of parameter group ", i, " must be ", detail::option_type_name(field));
      });
      MG_CHECK(known, op, me, ": unknown option \"", key, "\" in parameter group ", i);
    }
    check_options(o);
    options.push_back(o);
  }
  // State: names, shapes and dtypes against the parameters.
  const StateKeys keys = state_keys();
  std::set<std::string> allowed(keys.required.begin(), keys.required.end());
  allowed.insert(keys.optional.begin(), keys.optional.end());
  std::unordered_map<const TensorImpl*, ParamState> state;
  for (const auto& [position, param_state] : dict.state) {
    auto it = by_position.find(position);
    MG_CHECK(it != by_position.end(), op, me, ": the state_dict has state for parameter position ",
             position, ", which no parameter group lists");
    const Tensor& p = *it->second;
    if (param_state.empty()) continue;
    for (const std::string& k : keys.required) {
      MG_CHECK(param_state.contains(k), op, me, ": the state of parameter ", position, " has no \"",
               k, "\"");
    }
    ParamState converted;
    for (const auto& [k, t] : param_state) {
      MG_CHECK(allowed.contains(k), op, me, ": unknown state \"", k, "\" for parameter ", position);
      MG_CHECK(t.defined(), op, me, ": state \"", k, "\" of parameter ", position, " is undefined");
      if (std::find(keys.scalars.begin(), keys.scalars.end(), k) != keys.scalars.end()) {
        MG_CHECK(t.numel() == 1 && t.dtype() != kBool, op, me, ": state \"", k, "\" of parameter ",
                 position, " must be a single number, got shape ", t.shape(), " ",
                 dtype_name(t.dtype()));
        // A count of steps: a NaN or negative one would load and fail at the next step().
        const double v = t.template item<double>();
        MG_CHECK(k != "step" || (std::isfinite(v) && v >= 0), op, me, ": state \"", k,
                 "\" of parameter ", position, " must be a finite number >= 0, got ", v);
        converted[k] = t.detach().clone();
        continue;
      }
      MG_CHECK(t.shape() == p.shape() && t.is_floating_point(), op, me, ": state \"", k,
               "\" of parameter ", position, " has shape ", t.shape(), " ", dtype_name(t.dtype()),
               ", the parameter has ", p.shape(), " ", dtype_name(p.dtype()));
      converted[k] = t.detach().to(p.dtype()).clone();
    }
    state[p.impl()] = std::move(converted);
  }
  // Everything checked: apply.
  for (std::size_t i = 0; i < groups.size(); ++i) options_of(groups[i]) = options[i];
  replace_state(std::move(state));
}

/// Saves optimizer.state_dict() to a safetensors file, atomically (layout in docs/api.md:
/// tensors "state.<position>.<name>", the groups as JSON in the metadata). A .pt or .pth path is
/// written as torch.save(optimizer.state_dict()) writes it: torch.optim's load_state_dict takes
/// `torch.load(path)`.
inline void save(const Optimizer& optimizer, const std::string& path) {
  save_optimizer_state(path, optimizer.state_dict());
}
/// Loads a file written by save(), or a .pt / .pth file written by
/// torch.save(optimizer.state_dict()), into optimizer with load_state_dict; a corrupt or
/// mismatched file throws and leaves the optimizer unchanged.
inline void load(Optimizer& optimizer, const std::string& path) {
  OptimizerStateDict dict = load_optimizer_state(path);
  try {
    optimizer.load_state_dict(dict);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (loading " + path + ")");
  }
}

}  // namespace minigrad::optim

namespace minigrad::serialize {
/// `archive << optimizer` / `archive >> optimizer`: Optimizer::save / load, so that
/// mg::save(optimizer, "opt.pt") and mg::load(optimizer, "opt.pt") work, as libtorch's.
inline OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer) {
  optimizer.save(archive);
  return archive;
}
inline InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer) {
  optimizer.load(archive);
  return archive;
}
}  // namespace minigrad::serialize
