#pragma once
// nn::Module: the base of every layer, as torch.nn.Module.
//
// A module registers its parameters, buffers and child modules by name, in order; parameters()
// and named_parameters() walk them recursively with PyTorch's dotted names ("W_q.weight").
// Modules are neither copyable nor movable: a parent registers members by address.
//
//   struct Attention : mg::nn::Module {
//     mg::nn::Linear W_q{3, 3, false}, W_k{3, 3, false};
//     Attention() { register_module("W_q", W_q); register_module("W_k", W_k); }
//   };
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/io.h"
#include "minigrad/ops.h"

namespace minigrad::nn {

/// A module's state: (name, tensor) pairs in PyTorch's order, as `module.state_dict()`.
using StateDict = NamedTensors;

/// What load_state_dict found besides the keys it loaded, as PyTorch's `_IncompatibleKeys`
/// (both lists are empty after a strict load).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys;     // the module's keys the dict lacks
  std::vector<std::string> unexpected_keys;  // the dict's keys the module lacks
};

class Module {
 public:
  explicit Module(std::string type_name = "Module") : type_name_(std::move(type_name)) {}
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The class name printed by operator<< ("Linear").
  const std::string& type_name() const { return type_name_; }
  /// Extra text inside the parentheses when printed, as PyTorch's extra_repr().
  virtual std::string extra_repr() const { return ""; }

  /// Registers a parameter (requires_grad is set on it) and returns the handle to keep as a member.
  Tensor register_parameter(const std::string& name, Tensor param, bool requires_grad = true);
  /// Registers a tensor that is part of the module's state but not trained.
  Tensor register_buffer(const std::string& name, Tensor buffer);
  /// Registers a child that the caller owns (typically a member); returns it.
  template <typename M>
  M& register_module(const std::string& name, M& child) {
    add_child(name, &child, nullptr);
    return child;
  }
  /// Registers a child that this module owns.
  template <typename M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> child) {
    add_child(name, child.get(), child);
    return child;
  }

  /// All parameters, recursively, in registration order (children after own parameters).
  /// Like named_parameters(), records each parameter's dotted name for parameter_name(), so an
  /// optimizer built from `model.parameters()` can name a parameter that gets no gradient.
  std::vector<Tensor> parameters(bool recurse = true) const;
  /// (name, parameter) pairs with dotted names: "weight", "W_q.weight", "layers.0.bias".
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;
  /// Direct children, in registration order.
  std::vector<Module*> children() const;
  std::vector<std::pair<std::string, Module*>> named_children() const;

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

  /// Parameters and buffers with dotted names in PyTorch's order: each module's own parameters,
  /// then its own buffers, then its children's, recursively ("scale", "fc1.weight", "fc1.bias").
  /// The tensors are detached aliases of the module's: they share its storage, as in PyTorch.
  StateDict state_dict() const;
  /// Copies the dict's tensors into the parameters and buffers of the same names, in place, so
  /// handles held as members stay valid. Everything is checked first, and nothing is changed if
  /// anything is wrong: every tensor must be defined and match the shape and dtype of the module's
  /// (always), and with strict no key may be missing or unexpected. The error lists each problem:
  /// `[load_state_dict] Net: size mismatch for fc1.weight: the checkpoint has shape (3, 5), the
  /// module has (3, 4)`. Returns the missing and unexpected keys (non-strict loads).
  LoadStateDictResult load_state_dict(const StateDict& dict, bool strict = true);

  /// Writes the module tree as PyTorch prints it.
  void print(std::ostream& os, int indent = 0) const;

 private:
  void add_child(const std::string& name, Module* child, std::shared_ptr<Module> owner);
  void collect(const std::string& prefix, bool recurse, bool buffers,
               std::vector<std::pair<std::string, Tensor>>& out) const;
  /// The state_dict's (name, handle) pairs, not detached.
  void collect_state(const std::string& prefix, StateDict& out) const;

  struct Child {
    std::string name;
    Module* module;
    std::shared_ptr<Module> owner;  // set when this module owns the child
  };
  std::string type_name_;
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
/// package).
void save(const Module& module, const std::string& path, const Metadata& metadata = {});
/// Loads a safetensors file into module with load_state_dict(strict): a corrupt file or a
/// mismatched checkpoint throws and leaves the module unchanged.
LoadStateDictResult load(Module& module, const std::string& path, bool strict = true);

}  // namespace minigrad::nn
