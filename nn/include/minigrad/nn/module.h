#pragma once
// nn::Module: the base of every layer, as torch.nn.Module.
//
// A module registers its parameters, buffers and child modules by name, in order; parameters()
// and named_parameters() walk them recursively with PyTorch's dotted names ("W_q.weight").
// Modules are neither copyable nor movable: a parent registers members by address, or shares
// them through holders (Note [Module holders]). Both styles work:
//
//   struct Attention : mg::nn::Module {            // Python's style: members by value
//     mg::nn::Linear W_q{3, 3, false}, W_k{3, 3, false};
//     Attention() { register_module("W_q", W_q); register_module("W_k", W_k); }
//   };
//   struct NetImpl : mg::nn::Module {              // libtorch's style: a holder per module
//     NetImpl() { fc = register_module("fc", mg::nn::Linear(4, 2)); }
//     mg::Tensor forward(const mg::Tensor& x) { return fc(x); }
//     mg::nn::Linear fc{nullptr};
//   };
//   MG_MODULE(Net);  // Net net; net->forward(x); net->named_parameters()["fc.weight"]
#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/generator.h"
#include "minigrad/io.h"
#include "minigrad/nn/hooks.h"
#include "minigrad/nn/ordered_dict.h"
#include "minigrad/tensor.h"

namespace minigrad::nn {

/// A module's state: (name, tensor) pairs in PyTorch's order, as `module.state_dict()`.
using StateDict = NamedTensors;

/// What load_state_dict found besides the keys it loaded, as PyTorch's `_IncompatibleKeys`
/// (both lists are empty after a strict load).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     // the module's keys the dict lacks
  std::vector<std::string> unexpected_keys;  // the dict's keys the module lacks
};

template <typename Contained>
class ModuleHolder;

class Module : public std::enable_shared_from_this<Module> {
 public:
  /// A module named after its C++ type, demangled, as libtorch's Module(): `struct Net :
  /// nn::Module {}` is "Net", a class in a namespace "tiny_lm::Block" (computed the first time
  /// it is asked for).
  Module() = default;
  /// A module printed and named in errors as type_name ("Linear").
  explicit Module(std::string type_name) : type_name_(std::move(type_name)), named_(true) {}
  virtual ~Module();
  Module& operator=(const Module&) = delete;

  /// The class name printed by operator<< and named in errors ("Linear").
  const std::string& type_name() const;
  /// The same, libtorch's name().
  const std::string& name() const { return type_name(); }
  /// Writes the module's own part of its printout, as libtorch's pretty_print: by default
  /// PyTorch's, its type name and, for a module without children, "(" extra_repr() ")". Override
  /// it to print the module your way (`Net(x=1, y=3.14)`); its children, if any, follow it in
  /// parentheses, one a line, as libtorch's.
  virtual void pretty_print(std::ostream& os) const;
  /// Extra text inside the parentheses when printed, as PyTorch's extra_repr().
  virtual std::string extra_repr() const { return ""; }

  /// Registers a parameter (requires_grad is set on it) and returns the handle to keep as a member.
  Tensor register_parameter(const std::string& name, Tensor param, bool requires_grad = true);
  /// Registers a tensor that is part of the module's state but not trained.
  Tensor register_buffer(const std::string& name, Tensor buffer);
  /// Registers a child that the caller owns (typically a member); returns it.
  template <typename M>
  requires std::derived_from<M, Module> M& register_module(const std::string& name, M& child) {
    add_child(name, &child, nullptr);
    return child;
  }
  /// Registers a child that this module shares.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> child) {
    add_child(name, child.get(), child);
    return child;
  }
  /// Registers the module of a holder: `fc = register_module("fc", nn::Linear(3, 4));`.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, const ModuleHolder<M>& holder) {
    return register_module(name, holder.ptr());
  }
  /// Replaces the child registered as name (keeping its place); returns the new one. A holder
  /// member that held the old child must be assigned the result.
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> child) {
    replace_child(name, child.get(), child);
    return child;
  }
  template <typename M>
  std::shared_ptr<M> replace_module(const std::string& name, const ModuleHolder<M>& holder) {
    return replace_module(name, holder.ptr());
  }
  /// Removes the child registered as name; throws if there is none.
  void unregister_module(const std::string& name);
  /// Replaces the parameter registered as name with param, keeping its place in parameters() and
  /// state_dict() (requires_grad is set on it), and returns param; throws if there is none. As
  /// with replace_module, a member that held the old tensor must be assigned the result. Weight
  /// tying, nanoGPT's `self.transformer.wte.weight = self.lm_head.weight`, is
  ///   wte->weight = wte->replace_parameter("weight", lm_head->weight);
  /// after which one tensor is registered under two names (Note [Shared parameters]).
  Tensor replace_parameter(const std::string& name, Tensor param, bool requires_grad = true);

  /// All parameters, recursively, in registration order (children after own parameters), each
  /// tensor once: a tensor registered under two names (tied weights) is listed under the first,
  /// as PyTorch's (Note [Shared parameters]).
  /// Like named_parameters(), records each parameter's dotted name for parameter_name(), so an
  /// optimizer built from `model.parameters()` can name a parameter that gets no gradient.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// (name, parameter) in order with dotted names ("weight", "W_q.weight", "layers.0.bias"), as
  /// an OrderedDict: named_parameters()["fc.weight"], .find(), .contains(), .keys(). A shared
  /// tensor appears once, under its first name (PyTorch's remove_duplicate=True).
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  /// The number of parameter elements, each shared tensor counted once (as PyTorch's
  /// sum(p.numel() for p in model.parameters())); with trainable_only, only those that require
  /// grad.
  std::int64_t num_parameters(bool trainable_only = false) const;
  /// Buffers, as parameters(): each tensor once, under its first name.
  std::vector<Tensor> buffers(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  /// Direct children, in registration order. A child registered by reference (a member) comes
  /// as a non-owning pointer: it lives as long as its parent, not as long as the pointer.
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  /// This module (unless include_self is false) and all below it, depth first, as PyTorch's
  /// modules(); names are dotted paths ("" for this module, or name_prefix).
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = "", bool include_self = true) const;
  /// This module as a T (a module class or its holder's), or nullptr: model.as<nn::Linear>().
  template <typename T>
  auto* as() {
    if constexpr (requires { typename T::ContainedType; })
      return dynamic_cast<typename T::ContainedType*>(this);
    else
      return dynamic_cast<T*>(this);
  }
  template <typename T>
  const auto* as() const {
    if constexpr (requires { typename T::ContainedType; })
      return dynamic_cast<const typename T::ContainedType*>(this);
    else
      return dynamic_cast<const T*>(this);
  }

  /// Clears every parameter's gradient (set_to_none, as PyTorch 2) or zeroes it.
  void zero_grad(bool set_to_none = true);
  /// Sets training mode on this module and all children (Dropout behaves differently).
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Converts every floating-point parameter and buffer to dtype, in place (handles stay valid).
  void to(Dtype dtype);
  /// Calls fn on every module of the tree, children first, then this one (as PyTorch).
  void apply(const std::function<void(Module&)>& fn);
  /// The same with each module's dotted name (libtorch's apply(NamedModuleApplyFunction)).
  void apply(const std::function<void(const std::string&, Module&)>& fn,
             const std::string& name_prefix = "");
  /// libtorch's other forms, in the same order: a const module, a shared pointer to each module
  /// (a member registered by reference comes as a non-owning one), with or without names.
  void apply(const std::function<void(const Module&)>& fn) const;
  void apply(const std::function<void(const std::string&, const Module&)>& fn,
             const std::string& name_prefix = "") const;
  void apply(const std::function<void(const std::shared_ptr<Module>&)>& fn) const;
  void apply(const std::function<void(const std::string&, const std::shared_ptr<Module>&)>& fn,
             const std::string& name_prefix = "") const;

  /// Parameters and buffers with dotted names in PyTorch's order: each module's own parameters,
  /// then its own buffers, then its children's, recursively ("scale", "fc1.weight", "fc1.bias").
  /// A shared tensor keeps every name, as PyTorch's (tied weights are saved under both).
  /// The tensors are detached aliases of the module's: they share its storage, as in PyTorch.
  StateDict state_dict() const;
  /// Copies the dict's tensors into the parameters and buffers of the same names, in place, so
  /// handles held as members stay valid. Everything is checked first, and nothing is changed if
  /// anything is wrong: every tensor must be defined and match the shape and dtype of the module's
  /// (always), and with strict no key may be missing or unexpected. The error lists each problem:
  /// `[load_state_dict] Net: size mismatch for fc1.weight: the checkpoint has shape (3, 5), the
  /// module has (3, 4)`. Returns the missing and unexpected keys (non-strict loads).
  LoadStateDictResult load_state_dict(const StateDict& dict, bool strict = true);

  // ---- serialization archives (libtorch's Module::save / Module::load; minigrad/serialize.h) --
  /// Writes the module's own parameters, then its own buffers, then each child as a nested
  /// archive under its name (libtorch's layout); undefined tensors are skipped. mg::save(model,
  /// path) calls it.
  virtual void save(serialize::OutputArchive& archive) const;
  /// Reads what save() wrote, in place, in the same order (each tensor copied into the module's,
  /// shapes checked): a missing tensor throws "No such serialized tensor 'fc.weight'", a missing
  /// child "No such serialized submodule: 'fc'". mg::load(model, path) calls it.
  virtual void load(serialize::InputArchive& archive);
  // ---- end of serialization archives ------------------------------------------------------------

  /// A deep copy: a new module of the same type and configuration whose parameters and buffers
  /// are copies of this one's (values, dtype, requires_grad, gradients), whose submodules are
  /// such copies too, and whose training mode is the same, as copy.deepcopy(model) and
  /// libtorch's clone(). The built-in modules are nn::Cloneable; a module of yours derives from
  /// nn::Cloneable<NameImpl> and defines reset() (Note [Cloning]), or overrides clone() with
  /// clone_with(). Making the copy draws no random numbers from the default generator. Throws
  /// for a module that implements neither.
  virtual std::shared_ptr<Module> clone() const;

  /// Writes the module tree as PyTorch prints it.
  void print(std::ostream& os, int indent = 0) const;

  // Note [Forward hooks]
  // As PyTorch's Module.__call__: a call `model(x)` runs the pre-hooks, forward, then the hooks;
  // calling `model->forward(x)` (or `model.forward(x)`) runs forward alone, as PyTorch's
  // `model.forward(x)` does. A call goes through the hooks from a holder (`fc(x)`), from a built-in
  // module's own call operator, from AnyModule (Sequential, ModuleList's AnyModules) and from an
  // nn::Cloneable<Net>'s `net(x)`; the built-in modules call their children that way, as PyTorch's
  // do. A hook sees the Tensor arguments given to the call, in order, as PyTorch's positional
  // inputs (`mha(q, k, v)` gives three; an undefined Tensor given for a mask is one), and its
  // outputs; non-Tensor arguments (flags) pass through untouched. clone() does not copy hooks.

  /// Registers fn to run before every call's forward, as PyTorch's register_forward_pre_hook:
  /// fn(Module& m, const std::vector<Tensor>& inputs) returns void (nothing replaced), or the
  /// inputs to use instead: a std::vector<Tensor> of the same length, a Tensor (for a forward that
  /// takes one), or a std::optional of either (std::nullopt keeps them). Pre-hooks run in
  /// registration order, each seeing the inputs the previous one returned.
  template <typename F>
  RemovableHandle register_forward_pre_hook(F fn) {
    using In = const std::vector<Tensor>&;
    static_assert(std::is_invocable_v<F&, Module&, In>,
                  "a forward pre-hook is called as fn(nn::Module&, const std::vector<Tensor>&)");
    using R = std::invoke_result_t<F&, Module&, In>;
    return forward_pre_hooks_.add(
        [fn = std::move(fn)](Module& m, In inputs) mutable -> std::optional<std::vector<Tensor>> {
          if constexpr (std::is_void_v<R>) {
            fn(m, inputs);
            return std::nullopt;
          } else {
            return hook_result(fn(m, inputs));
          }
        });
  }
  /// Registers fn to run after every call's forward, as PyTorch's register_forward_hook:
  /// fn(Module& m, const std::vector<Tensor>& inputs, const Tensor& output) for a forward that
  /// returns a Tensor, or fn(m, inputs, const std::vector<Tensor>& outputs) for any forward that
  /// returns Tensors (the elements of a pair, a tuple or a vector: MultiheadAttention's (output,
  /// weights)). It returns void (nothing replaced), or the output(s) to return instead: a Tensor,
  /// a std::vector<Tensor> of the same length, or a std::optional of either. Hooks run in
  /// registration order, each seeing what the previous one returned; an undefined Tensor
  /// returned by a Tensor hook keeps the output, as PyTorch's None.
  ///   auto h = model->fc->register_forward_hook(
  ///       [&](nn::Module& m, const std::vector<Tensor>& in, const Tensor& out) { seen = out; });
  ///   model(x);    // the hook runs
  ///   h.remove();
  template <typename F>
  RemovableHandle register_forward_hook(F fn) {
    using In = const std::vector<Tensor>&;
    constexpr bool one = std::is_invocable_v<F&, Module&, In, const Tensor&>;
    static_assert(one || std::is_invocable_v<F&, Module&, In, In>,
                  "a forward hook is called as fn(nn::Module&, const std::vector<Tensor>& inputs, "
                  "const Tensor& output) or fn(..., const std::vector<Tensor>& outputs)");
    return forward_hooks_.add(
        [fn = std::move(fn)](Module& m, In inputs,
                             In outputs) mutable -> std::optional<std::vector<Tensor>> {
          if constexpr (one) {
            if (outputs.size() != 1) throw_hook_arity(m, outputs.size());
            using R = std::invoke_result_t<F&, Module&, In, const Tensor&>;
            if constexpr (std::is_void_v<R>) {
              fn(m, inputs, outputs[0]);
              return std::nullopt;
            } else {
              return hook_result(fn(m, inputs, outputs[0]));
            }
          } else {
            using R = std::invoke_result_t<F&, Module&, In, In>;
            if constexpr (std::is_void_v<R>) {
              fn(m, inputs, outputs);
              return std::nullopt;
            } else {
              return hook_result(fn(m, inputs, outputs));
            }
          }
        });
  }
  /// Whether any forward pre-hook or hook is registered on this module (not its children).
  bool has_forward_hooks() const noexcept {
    return !forward_pre_hooks_.empty() || !forward_hooks_.empty();
  }
  /// How many forward pre-hooks and hooks are registered on this module.
  std::size_t num_forward_pre_hooks() const noexcept { return forward_pre_hooks_.size(); }
  std::size_t num_forward_hooks() const noexcept { return forward_hooks_.size(); }

  /// Calls forward(args...) through this module's hooks (Note [Forward hooks]): what a module's
  /// call operator does, `return call_with_hooks([&](auto&&... a) { return forward(a...); },
  /// args...)`. Without hooks it is the plain call.
  template <typename F, typename... Args>
  std::invoke_result_t<F&&, Args&&...> call_with_hooks(F&& forward, Args&&... args) const {
    using R = std::invoke_result_t<F&&, Args&&...>;
    if (!has_forward_hooks()) return std::forward<F>(forward)(std::forward<Args>(args)...);
    if constexpr (std::is_reference_v<R> || std::is_void_v<R>) {
      throw_hook_output_type(typeid(R));
    } else {
      return call_hooked<R>(std::forward<F>(forward), std::forward<Args>(args)...);
    }
  }

 private:
  template <typename R, typename F, typename... Args>
  R call_hooked(F&& forward, Args&&... args) const {
    std::vector<Tensor> inputs;
    (
        [&](const auto& a) {
          if constexpr (std::is_same_v<std::decay_t<decltype(a)>, Tensor>) inputs.push_back(a);
        }(args),
        ...);
    const bool replaced = run_forward_pre_hooks(inputs);
    std::size_t next = 0;
    auto pick = [&]<typename A>(A&& a) -> decltype(auto) {
      if constexpr (std::is_same_v<std::decay_t<A>, Tensor>) {
        return static_cast<Tensor&>(inputs[next++]);
      } else {
        return std::forward<A>(a);
      }
    };
    // Braces evaluate left to right, so `next` walks the tensors in order.
    R out = replaced ? std::apply(std::forward<F>(forward),
                                  std::tuple<decltype(pick(std::forward<Args>(args)))...>{
                                      pick(std::forward<Args>(args))...})
                     : std::forward<F>(forward)(std::forward<Args>(args)...);
    if (forward_hooks_.empty()) return out;
    if constexpr (requires { hook_outputs(out); }) {
      std::vector<Tensor> outputs = hook_outputs(out);
      if (run_forward_hooks(inputs, outputs)) set_hook_outputs(out, outputs);
    } else {
      throw_hook_output_type(typeid(R));
    }
    return out;
  }

 public:
 protected:
  /// Removes the parameter registered as name; throws if there is none (ParameterDict).
  void unregister_parameter(const std::string& name);
  /// For clone() overrides: makes a fresh module with make() (its random initialisation leaves
  /// the default generator where it was) and copies this module's state into it (copy_state_to).
  template <typename F>
  std::shared_ptr<Module> clone_with(F&& make) const {
    std::shared_ptr<Module> copy;
    {
      const std::vector<std::uint8_t> rng = default_generator().get_state();
      copy = make();
      default_generator().set_state(rng);
    }
    copy_state_to(*copy);
    return copy;
  }
  /// Copies parameters and buffers (values, requires_grad, gradients) and the training mode of
  /// every module into copy, a module of the same structure; throws naming what differs.
  void copy_state_to(Module& copy) const;

  // Note [Cloning]
  // libtorch's scheme (nn::Cloneable<Derived>::clone): the copy is made with Derived's copy
  // constructor, which copies the configuration (options, flags) and, through Module's protected
  // copy constructor, the type name and training mode but no registry: its Tensor and holder
  // members still name the original's. rebuild_as_copy_of() then empties the registries and
  // calls reset(), which registers new parameters, buffers and children and assigns the members;
  // a child registered by reference (a member held by value) was copied with its parent and is
  // rebuilt the same way. Last, copy_state_to() copies every value (with its dtype, so a module
  // converted with to(kFloat64) clones as float64), requires_grad, gradient and training mode.
  // Every built-in module clones this way; none writes a clone(). A module that makes its tensors
  // and children from options defines reset() (Linear, LayerNorm, Embedding, MultiheadAttention,
  // Transformer); one that is all configuration (an activation, most losses) derives from
  // nn::CopyCloneable, whose reset() makes nothing. A module whose children or tensors were given
  // to it rather than made cannot remake them in reset(): a container (Sequential, ModuleList,
  // ModuleDict, ParameterList, ParameterDict) and the Transformer stacks override
  // rebuild_as_copy_of() to put clones of the original's in (libtorch's containers override
  // clone() for the same reason), and a loss whose options hold a weight copies it in its copy
  // constructor, so the copy's options and buffer are its own tensor (libtorch's share it).

  /// A copy made by a copy constructor: the original's type name and training mode, no
  /// parameters, buffers, children or hooks (Note [Cloning]).
  Module(const Module& other);
  /// Makes this module, copied by a copy constructor from original, a structural copy of it with
  /// tensors of its own (Note [Cloning]). nn::Cloneable<Derived> with a reset() implements it;
  /// the default throws, naming the module.
  virtual void rebuild_as_copy_of(const Module& original);
  /// rebuild_as_copy_of's work: empties the registries, calls reset (which registers everything
  /// anew) and rebuilds the children registered by reference.
  void rebuild_with(const Module& original, const std::function<void()>& reset);

 private:
  void add_child(const std::string& name, Module* child, std::shared_ptr<Module> owner);
  void replace_child(const std::string& name, Module* child, std::shared_ptr<Module> owner);
  /// A shared pointer to this module: its owner's when it has one, else a non-owning one.
  std::shared_ptr<Module> self_handle() const;
  void collect_modules(const std::string& prefix,
                       OrderedDict<std::string, std::shared_ptr<Module>>& out) const;
  void collect(const std::string& prefix, bool recurse, bool buffers,
               std::vector<std::pair<std::string, Tensor>>& out) const;
  /// The state_dict's (name, handle) pairs, not detached.
  void collect_state(const std::string& prefix, StateDict& out) const;

  /// Runs the pre-hooks on inputs; whether one replaced them (Note [Forward hooks]).
  bool run_forward_pre_hooks(std::vector<Tensor>& inputs) const;
  /// Runs the hooks on outputs; whether one replaced them.
  bool run_forward_hooks(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) const;
  [[noreturn]] static void throw_hook_arity(const Module& m, std::size_t outputs);
  [[noreturn]] void throw_hook_output_type(const std::type_info& type) const;
  static std::optional<std::vector<Tensor>> hook_result(std::vector<Tensor> v) { return v; }
  static std::optional<std::vector<Tensor>> hook_result(std::optional<std::vector<Tensor>> v) {
    return v;
  }
  static std::optional<std::vector<Tensor>> hook_result(const Tensor& t) {
    if (!t.defined()) return std::nullopt;
    return std::vector<Tensor>{t};
  }
  static std::optional<std::vector<Tensor>> hook_result(const std::optional<Tensor>& t) {
    if (!t) return std::nullopt;
    return std::vector<Tensor>{*t};
  }
  /// A forward's outputs as the Tensors a hook sees, and back.
  static std::vector<Tensor> hook_outputs(const Tensor& t) { return {t}; }
  static std::vector<Tensor> hook_outputs(const std::vector<Tensor>& v) { return v; }
  template <typename... T>
  requires(std::is_same_v<T, Tensor>&&...) static std::vector<Tensor> hook_outputs(
      const std::tuple<T...>& t) {
    return std::apply([](const auto&... x) { return std::vector<Tensor>{x...}; }, t);
  }
  static std::vector<Tensor> hook_outputs(const std::pair<Tensor, Tensor>& p) {
    return {p.first, p.second};
  }
  void set_hook_outputs(Tensor& t, std::vector<Tensor>& v) const {
    check_hook_outputs(1, v.size());
    t = std::move(v[0]);
  }
  void set_hook_outputs(std::vector<Tensor>& out, std::vector<Tensor>& v) const {
    check_hook_outputs(out.size(), v.size());
    out = std::move(v);
  }
  void set_hook_outputs(std::pair<Tensor, Tensor>& out, std::vector<Tensor>& v) const {
    check_hook_outputs(2, v.size());
    out = {std::move(v[0]), std::move(v[1])};
  }
  template <typename... T>
  void set_hook_outputs(std::tuple<T...>& out, std::vector<Tensor>& v) const {
    check_hook_outputs(sizeof...(T), v.size());
    std::size_t i = 0;
    std::apply([&](auto&... x) { ((x = std::move(v[i++])), ...); }, out);
  }
  void check_hook_outputs(std::size_t expected, std::size_t got) const;

  HookList<ForwardPreHook> forward_pre_hooks_;
  HookList<ForwardHook> forward_hooks_;
  struct Child {
    std::string name;
    Module* module;
    std::shared_ptr<Module> owner;  // set when this module owns the child
  };
  /// Every module, children first, with its dotted name (the apply overloads).
  void visit(const std::string& prefix,
             const std::function<void(const std::string&, const Module&)>& fn) const;

  mutable std::string type_name_;  // empty until type_name() derives it
  mutable std::atomic<bool> named_{false};
  bool training_ = true;
  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<Child> children_;
};

/// The dotted name ("W_k.weight") under which the last parameters() or named_parameters() call
/// that listed p named it (a call on a submodule, which says "weight", keeps the fuller name its
/// parent gave), or "" if no module has listed p (a tensor made by hand). Optimizers
/// read it when they are given their parameters, so their "received no gradient" warnings name
/// the parameter (Note [Parameter names for optimizers], docs/architecture.md). The record holds
/// no reference to p: it never keeps a tensor alive.
std::string parameter_name(const Tensor& p);

/// Prints like PyTorch: `Linear(in_features=16, out_features=8, bias=False)`.
std::ostream& operator<<(std::ostream& os, const Module& m);

/// Saves module.state_dict() (and metadata) to a safetensors file, atomically; the file loads in
/// PyTorch with the same key names (tests/io/torch_interop.py reads it without the safetensors
/// package). A path ending in .pt or .pth is written in torch.save's own format instead
/// (save_torch, minigrad/io.h): `model.load_state_dict(torch.load("model.pt"))` in PyTorch; that
/// format has no metadata.
void save(const Module& module, const std::string& path, const Metadata& metadata = {});
/// Loads a safetensors file, or a .pt / .pth file written by torch.save(model.state_dict()) or
/// nn::save (load_torch), into module with load_state_dict(strict): a corrupt file or a
/// mismatched checkpoint throws and leaves the module unchanged.
LoadStateDictResult load(Module& module, const std::string& path, bool strict = true);

// Note [Module scopes]
// To draw a model's graph with one box per module (autograd::to_dot's collapse_modules), each
// graph node must know which module call created it. Modules have no central call path, so a
// call opens a scope on a thread-local stack and every node made meanwhile keeps the innermost
// one (Node::module_scope()). Scopes are opened by a holder's call operator (`fc(x)`), by
// AnyModule (Sequential, ModuleList's AnyModules) and by an nn::ModuleScope guard at the top of a
// forward (yours, or one called as `m->forward(...)` / `m.forward(...)`). Nothing is opened, and
// a node pays one thread-local load, unless an nn::RecordModuleScopes is alive on the thread; it
// names each call by the root's named_modules() ("blocks.0.attn"; a module outside the root by
// its class). The root itself opens no scope: its own code's nodes stay loose in the picture.

/// While alive, graph nodes made on this thread remember the module call that made them, named
/// by root.named_modules(), for `autograd::to_dot(loss, {.collapse_modules = true})`. Nests: the
/// innermost one names the calls.
class RecordModuleScopes {
 public:
  explicit RecordModuleScopes(const Module& root);
  ~RecordModuleScopes();
  RecordModuleScopes(const RecordModuleScopes&) = delete;
  RecordModuleScopes& operator=(const RecordModuleScopes&) = delete;
  /// The qualified name of m under the root ("" for the root), or its class when not below it.
  std::string name_of(const Module& m) const;

 private:
  std::unordered_map<const Module*, std::string> names_;
  RecordModuleScopes* previous_;
};

/// Opens a module scope for a call of m while alive, when an nn::RecordModuleScopes is recording
/// (else it does nothing): put `nn::ModuleScope scope(*this);` first in a forward of yours that
/// is called directly (`block->forward(x, mask)`) rather than through a holder.
class ModuleScope {
 public:
  explicit ModuleScope(const Module& m);
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  std::optional<autograd::ModuleScopeGuard> guard_;
};

}  // namespace minigrad::nn

namespace minigrad::nn {

// ---------------------------------------------------------------- holders

// Note [Module holders]
// libtorch names each built-in module twice: LinearImpl is the Module, and Linear a
// ModuleHolder<LinearImpl>, a shared pointer to one with `->` and a call operator. minigrad does
// the same so that libtorch code ports by renaming torch:: to mg::: `nn::Linear fc{nullptr};
// fc = register_module("fc", nn::Linear(3, 4)); fc->weight; fc(x)`. A holder made with arguments
// makes its module (`nn::Linear fc(3, 4)`); copies share it. A user's module gets a holder with
// MG_MODULE(Name) after `struct NameImpl : mg::nn::Module {...}` (libtorch's TORCH_MODULE).
// Modules written Python-style, as plain members registered by reference, keep working.

/// A shared module with `->`, `*` and a call operator that forwards to forward() (libtorch's).
template <typename Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  /// Makes the module with its default arguments (only for modules that have them).
  ModuleHolder() requires std::is_default_constructible_v<Contained>
      : impl_(std::make_shared<Contained>()) {}
  /// An empty holder, to be assigned later (`nn::Linear fc{nullptr};`).
  ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as libtorch's
  /// Makes the module from these arguments: nn::Linear fc(3, 4, /*bias=*/false). A single holder
  /// of this type is a copy (sharing the module), but several arguments may start with one:
  /// nn::ModuleList(list, fc), as libtorch's.
  template <typename Head, typename... Tail>
  requires(
      !std::is_same_v<std::decay_t<Head>, std::nullptr_t> &&
      !(sizeof...(Tail) == 0 && std::is_base_of_v<ModuleHolder, std::decay_t<Head>>)&&std::
          is_constructible_v<Contained, Head&&, Tail&&...>) explicit ModuleHolder(Head&& head,
                                                                                  Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}
  /// Holds an existing module (what register_module returns).
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT

  explicit operator bool() const noexcept { return impl_ != nullptr; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  Contained* operator->() const { return get(); }
  Contained& operator*() const { return *get(); }
  /// The module; throws for an empty holder.
  Contained* get() const {
    MG_CHECK(impl_ != nullptr, "ModuleHolder",
             "accessing an empty module holder: it was made with nullptr and never assigned "
             "(assign one, e.g. fc = register_module(\"fc\", nn::Linear(3, 4)))");
    return impl_.get();
  }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  /// Calls the module's forward.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    Contained* m = get();
    ModuleScope scope(*m);      // Note [Module scopes]
    return m->call_with_hooks(  // Note [Forward hooks]
        [m](auto&&... a) -> decltype(auto) { return m->forward(std::forward<decltype(a)>(a)...); },
        std::forward<Args>(args)...);
  }
  /// Indexes the module (Sequential, ModuleList).
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) const {
    return (*get())[std::forward<Arg>(arg)];
  }

 protected:
  std::shared_ptr<Contained> impl_;
};

/// Base for a module that clone() copies as libtorch's torch::nn::Cloneable<Derived> does
/// (Note [Cloning]): define reset() to (re)create the parameters, buffers and children from the
/// configuration, call it from the constructor, and clone() needs nothing more:
///   struct NetImpl : nn::Cloneable<NetImpl> {
///     NetImpl() { reset(); }
///     void reset() override { fc = register_module("fc", nn::Linear(4, 2)); }
///     nn::Linear fc{nullptr};
///   };
/// Base is the class Derived would otherwise derive from: Module, or a module interface that
/// derives from it (nn::UnaryModule, nn::LossModule; libtorch derives from Module virtually).
template <typename Derived, typename Base = Module>
class Cloneable : public Base {
  static_assert(std::is_base_of_v<Module, Base>, "nn::Cloneable's Base must derive from Module");

 public:
  using Base::Base;
  Cloneable() = default;
  /// (Re)creates the module's parameters, buffers and children from its configuration, as
  /// libtorch's reset(). Pure virtual in libtorch; here a module that does not define it is
  /// cloned through its default constructor instead (what nn::Cloneable did before reset()
  /// existed, and what modules that build themselves in the constructor still rely on).
  virtual void reset() {}

  std::shared_ptr<Module> clone() const override {
    if constexpr (defines_reset()) {
      std::shared_ptr<Derived> copy;
      {
        // reset() draws initial values that are overwritten: leave the generator untouched,
        // also when reset() throws.
        struct RestoreGenerator {
          std::vector<std::uint8_t> state = default_generator().get_state();
          ~RestoreGenerator() { default_generator().set_state(state); }
        } restore;
        copy = std::make_shared<Derived>(static_cast<const Derived&>(*this));
        static_cast<Cloneable&>(*copy).rebuild_as_copy_of(*this);
      }
      this->copy_state_to(*copy);
      return copy;
    } else {
      static_assert(std::is_default_constructible_v<Derived>,
                    "nn::Cloneable<Derived> without reset() clones through Derived's default "
                    "constructor; define reset(), or override clone() with clone_with()");
      return this->clone_with([] { return std::make_shared<Derived>(); });
    }
  }

 protected:
  Cloneable(const Cloneable&) = default;
  void rebuild_as_copy_of(const Module& original) override {
    if constexpr (defines_reset())
      this->rebuild_with(original, [this] { reset(); });
    else
      Module::rebuild_as_copy_of(original);
  }

 private:
  /// Whether Derived overrides reset() (else &Derived::reset names Cloneable's).
  static constexpr bool defines_reset() {
    return !std::is_same_v<decltype(&Derived::reset), void (Cloneable::*)()>;
  }

 public:
  /// `net(x)` on a module of yours: Derived::forward(x) through the hooks, as PyTorch's
  /// `net(x)` (Note [Forward hooks]). A class that derives from nn::Module directly has no call
  /// operator (C++20 gives a base no way to name its derived class's forward): give it a holder
  /// with MG_MODULE, or derive it from nn::Cloneable<Derived>.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    auto* self = static_cast<Derived*>(this);
    ModuleScope scope(*self);  // Note [Module scopes]
    return this->call_with_hooks(
        [self](auto&&... a) -> decltype(auto) {
          return self->forward(std::forward<decltype(a)>(a)...);
        },
        std::forward<Args>(args)...);
  }
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    const auto* self = static_cast<const Derived*>(this);
    ModuleScope scope(*self);
    return this->call_with_hooks(
        [self](auto&&... a) -> decltype(auto) {
          return self->forward(std::forward<decltype(a)>(a)...);
        },
        std::forward<Args>(args)...);
  }
};

/// An nn::Cloneable whose reset() makes nothing (Note [Cloning]): the base of a module that is
/// all configuration (an activation, a loss without weights), which its copy constructor copies,
/// or whose children are given to it rather than made (a container, which overrides
/// rebuild_as_copy_of to clone them). libtorch's modules of both kinds define an empty reset().
template <typename Derived, typename Base = Module>
class CopyCloneable : public Cloneable<Derived, Base> {
 public:
  using Cloneable<Derived, Base>::Cloneable;
  /// Nothing to make.
  void reset() override {}
};

/// Whether T is a ModuleHolder (or derives from one).
template <typename T>
concept IsModuleHolder = requires {
  typename T::ContainedType;
}
&&std::is_base_of_v<ModuleHolder<typename T::ContainedType>, T>;

/// Prints the held module, as `std::cout << model` for a libtorch holder.
template <IsModuleHolder H>
std::ostream& operator<<(std::ostream& os, const H& holder) {
  return os << *holder;
}
/// nn::save / nn::load of a holder's module.
template <IsModuleHolder H>
void save(const H& holder, const std::string& path, const Metadata& metadata = {}) {
  save(*holder, path, metadata);
}
template <IsModuleHolder H>
LoadStateDictResult load(const H& holder, const std::string& path, bool strict = true) {
  return load(*holder, path, strict);
}

}  // namespace minigrad::nn

/// Defines the holder Name of NameImpl, as libtorch's TORCH_MODULE(Name).
#define MG_MODULE_IMPL(Name, ImplType)                          \
  class Name : public ::minigrad::nn::ModuleHolder<ImplType> {  \
   public:                                                      \
    using ::minigrad::nn::ModuleHolder<ImplType>::ModuleHolder; \
    using Impl = ImplType;                                      \
  }
#define MG_MODULE(Name) MG_MODULE_IMPL(Name, Name##Impl)
