// nn::Module: registration, recursive traversal, modes, dtype conversion and printing.
#include "minigrad/nn/module.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "minigrad/nn/containers.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/parameter_names.h"
#include "module_depth.h"

namespace minigrad::nn {

// Out of line: the key function, so Module's vtable is compiled here, not in every user file.
// Iterative, as the autograd graph's (Note [Iterative graph destruction]): a dying module hands
// the children it owns to a thread-local list that only the outermost destructor drains, so a
// Sequential nested 100,000 deep is destroyed without overflowing the stack.
Module::~Module() {
  thread_local std::vector<std::shared_ptr<Module>>* pending = nullptr;
  std::vector<std::shared_ptr<Module>> owned;
  for (Child& c : children_)
    if (c.owner) owned.push_back(std::move(c.owner));
  if (pending) {
    for (auto& m : owned) pending->push_back(std::move(m));
    return;
  }
  pending = &owned;
  while (!owned.empty()) {
    std::shared_ptr<Module> m = std::move(owned.back());
    owned.pop_back();
    m.reset();  // may append its own children to `owned`
  }
  pending = nullptr;
}

namespace {
// Takes the module, not its type name: the name is derived only if there is an error (register_*
// runs in constructors, where typeid(*this) is not yet the most derived class).
// The messages contain libtorch's ("Parameter name must not be empty", "Buffer name must not
// contain a dot (got 'a.b')", "Submodule 'fc' already defined"), where a port greps for them.
const char* libtorch_kind(const char* what) {
  const std::string w = what;
  return w == "parameter" ? "Parameter" : w == "buffer" ? "Buffer" : "Submodule";
}

void check_name(const std::string& name, const Module& m, const char* what) {
  const std::string op = "register_" + std::string(what);
  MG_CHECK(!name.empty(), op, m.type_name(), ": ", libtorch_kind(what), " name must not be empty");
  MG_CHECK(name.find('.') == std::string::npos, op, m.type_name(), ": ", libtorch_kind(what),
           " name must not contain a dot (got '", name, "')");
}

}  // namespace

std::string parameter_name(const Tensor& p) { return minigrad::parameter_name(p); }

const std::string& Module::type_name() const {
  if (!named_.load(std::memory_order_acquire)) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    if (!named_.load(std::memory_order_relaxed)) {
      type_name_ = container_detail::type_name(typeid(*this));
      named_.store(true, std::memory_order_release);
    }
  }
  return type_name_;
}

// ---------------------------------------------------------------- forward hooks

std::size_t hook_detail::next_hook_id() {
  static std::atomic<std::size_t> next{0};
  return next++;
}

bool Module::run_forward_pre_hooks(std::vector<Tensor>& inputs) const {
  bool replaced = false;
  Module& self = const_cast<Module&>(*this);  // a hook gets the module as PyTorch's, mutable
  for (auto& hook : forward_pre_hooks_.snapshot()) {
    std::optional<std::vector<Tensor>> out = hook(self, inputs);
    if (!out) continue;
    MG_CHECK(out->size() == inputs.size(), "register_forward_pre_hook", type_name(),
             ": a forward pre-hook returned ", out->size(), " input(s) for a call with ",
             inputs.size(), " Tensor argument(s): it may replace them, not add or drop any");
    inputs = std::move(*out);
    replaced = true;
  }
  return replaced;
}

bool Module::run_forward_hooks(const std::vector<Tensor>& inputs,
                               std::vector<Tensor>& outputs) const {
  bool replaced = false;
  Module& self = const_cast<Module&>(*this);
  for (auto& hook : forward_hooks_.snapshot()) {
    std::optional<std::vector<Tensor>> out = hook(self, inputs, outputs);
    if (!out) continue;
    check_hook_outputs(outputs.size(), out->size());
    outputs = std::move(*out);
    replaced = true;
  }
  return replaced;
}

void Module::check_hook_outputs(std::size_t expected, std::size_t got) const {
  MG_CHECK(got == expected, "register_forward_hook", type_name(), ": a forward hook returned ", got,
           " output(s) for a forward that returns ", expected,
           ": it may replace them, not add or drop any");
}

void Module::throw_hook_arity(const Module& m, std::size_t outputs) {
  MG_ERROR("register_forward_hook", m.type_name(), "'s forward returned ", outputs,
           " tensors, and the hook takes one (const Tensor& output): take "
           "const std::vector<Tensor>& outputs instead");
}

void Module::throw_hook_output_type(const std::type_info& type) const {
  MG_ERROR("register_forward_hook", type_name(), "'s forward returns ",
           container_detail::type_name(type),
           ", and a module with forward hooks must return Tensors (a Tensor, or a pair, tuple or "
           "vector of them) by value");
}

namespace {
/// What `name` already names among a module's parameters, buffers and children ("parameter",
/// "buffer", "module"), or nullptr. PyTorch keeps one namespace for the three (a module's
/// attributes): register_buffer("w") after a parameter "w" is "attribute 'w' already exists".
template <typename Children>
const char* used_as(const std::string& name,
                    const std::vector<std::pair<std::string, Tensor>>& parameters,
                    const std::vector<std::pair<std::string, Tensor>>& buffers,
                    const Children& children) {
  for (const auto& [n, p] : parameters)
    if (n == name) return "parameter";
  for (const auto& [n, b] : buffers)
    if (n == name) return "buffer";
  for (const auto& c : children)
    if (c.name == name) return "module";
  return nullptr;
}
}  // namespace

Tensor Module::register_parameter(const std::string& name, Tensor param, bool requires_grad) {
  check_name(name, *this, "parameter");
  if (const char* other = used_as(name, {}, buffers_, children_))
    MG_ERROR("register_parameter", type_name(), " already has a ", other, " \"", name,
             "\": parameters, buffers and submodules share one namespace (PyTorch: attribute '",
             name, "' already exists)");
  for (const auto& [n, p] : parameters_)
    MG_CHECK(n != name, "register_parameter", type_name(), ": Parameter '", name,
             "' already defined");
  if (param.defined()) param.requires_grad_(requires_grad);
  parameters_.emplace_back(name, param);
  return param;
}

Tensor Module::replace_parameter(const std::string& name, Tensor param, bool requires_grad) {
  for (auto& [n, p] : parameters_) {
    if (n != name) continue;
    if (param.defined()) param.requires_grad_(requires_grad);
    p = param;
    return param;
  }
  MG_ERROR("replace_parameter", type_name(), " has no parameter \"", name, "\"");
}

void Module::unregister_parameter(const std::string& name) {
  for (auto it = parameters_.begin(); it != parameters_.end(); ++it) {
    if (it->first != name) continue;
    parameters_.erase(it);
    return;
  }
  MG_ERROR("unregister_parameter", type_name(), " has no parameter \"", name, "\"");
}

Tensor Module::register_buffer(const std::string& name, Tensor buffer) {
  check_name(name, *this, "buffer");
  if (const char* other = used_as(name, parameters_, {}, children_))
    MG_ERROR("register_buffer", type_name(), " already has a ", other, " \"", name,
             "\": parameters, buffers and submodules share one namespace (PyTorch: attribute '",
             name, "' already exists)");
  for (const auto& [n, b] : buffers_)
    MG_CHECK(n != name, "register_buffer", type_name(), ": Buffer '", name, "' already defined");
  buffers_.emplace_back(name, buffer);
  return buffer;
}

void Module::add_child(const std::string& name, Module* child, std::shared_ptr<Module> owner) {
  check_name(name, *this, "module");
  if (const char* other = used_as(name, parameters_, buffers_, std::vector<Child>{}))
    MG_ERROR("register_module", type_name(), " already has a ", other, " \"", name,
             "\": parameters, buffers and submodules share one namespace (PyTorch: attribute '",
             name, "' already exists)");
  MG_CHECK(child != nullptr && child != this, "register_module", type_name(), ": module \"", name,
           "\" must be another, existing module");
  for (const auto& c : children_)
    MG_CHECK(c.name != name, "register_module", type_name(), ": Submodule '", name,
             "' already defined");
  children_.push_back({name, child, std::move(owner)});
}

using depth::DepthGuard;  // Note [Module depth] (module_depth.h)

void Module::collect(const std::string& prefix, bool recurse, bool buffers,
                     std::vector<std::pair<std::string, Tensor>>& out) const {
  DepthGuard guard(buffers ? "named_buffers" : "named_parameters", type_name());
  for (const auto& [n, t] : buffers ? buffers_ : parameters_)
    if (t.defined()) out.emplace_back(prefix + n, t);
  if (!recurse) return;
  for (const auto& c : children_) c.module->collect(prefix + c.name + ".", true, buffers, out);
}

// Note [Shared parameters]
// One tensor may be registered under several names: weight tying (nanoGPT's
// `wte.weight = lm_head.weight`, here wte->replace_parameter("weight", lm_head->weight)), or a
// module registered twice. PyTorch's named_parameters() and named_buffers() list each tensor once,
// under the first name in their order (a memo of the tensors seen; remove_duplicate=True since
// 2.0, always before), so parameters().size(), num_parameters(), an optimizer's parameter list
// and weight-decay groups count it once, and it is updated once per step. state_dict() keeps
// every name, as PyTorch's (a checkpoint of a tied model has both keys; loading writes the one
// tensor twice, with the same values). Identity is the TensorImpl: handles that share it are one
// parameter.
namespace {
OrderedDict<std::string, Tensor> to_dict(std::vector<std::pair<std::string, Tensor>> items,
                                         const char* what) {
  OrderedDict<std::string, Tensor> out(what);
  std::set<const TensorImpl*> seen;
  for (auto& [n, t] : items)
    if (!t.defined() || seen.insert(t.impl()).second) out.insert(std::move(n), std::move(t));
  return out;
}
}  // namespace

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, false, out);
  OrderedDict<std::string, Tensor> dict = to_dict(std::move(out), "parameter");
  out.clear();
  for (const auto& item : dict) out.emplace_back(item.key(), item.value());
  record_parameter_names(out);
  return dict;
}

void Module::collect_state(const std::string& prefix, StateDict& out) const {
  DepthGuard guard("state_dict", type_name());
  // torch.nn.Module._save_to_state_dict: own parameters, own buffers, then each child.
  for (const auto& [n, p] : parameters_)
    if (p.defined()) out.emplace_back(prefix + n, p);
  for (const auto& [n, b] : buffers_)
    if (b.defined()) out.emplace_back(prefix + n, b);
  for (const auto& c : children_) c.module->collect_state(prefix + c.name + ".", out);
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state("", out);
  for (auto& [n, t] : out) t = t.detach();
  return out;
}

LoadStateDictResult Module::load_state_dict(const StateDict& dict, bool strict) {
  StateDict own;
  collect_state("", own);
  std::map<std::string, const Tensor*> given;
  std::vector<std::string> problems;
  for (const auto& [name, t] : dict) {
    if (!given.emplace(name, &t).second) problems.push_back("\"" + name + "\" appears twice");
  }
  LoadStateDictResult result;
  std::set<std::string> known;
  for (const auto& [name, p] : own) {
    known.insert(name);
    auto it = given.find(name);
    if (it == given.end()) {
      result.missing_keys.push_back(name);
      continue;
    }
    const Tensor& t = *it->second;
    std::ostringstream os;
    if (!t.defined()) {
      os << "\"" << name << "\" is an undefined tensor";
    } else if (t.shape() != p.shape()) {
      os << "size mismatch for " << name << ": the checkpoint has shape "
         << detail::shape_str(t.shape()) << ", the module has " << detail::shape_str(p.shape());
    } else if (t.dtype() != p.dtype()) {
      os << "dtype mismatch for " << name << ": the checkpoint has " << dtype_name(t.dtype())
         << ", the module has " << dtype_name(p.dtype()) << " (convert one with .to(dtype))";
    }
    if (!os.str().empty()) problems.push_back(os.str());
  }
  for (const auto& [name, t] : dict) {
    if (!known.contains(name)) result.unexpected_keys.push_back(name);
  }
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string out;
    for (const auto& k : keys) out += (out.empty() ? "\"" : ", \"") + k + "\"";
    return out;
  };
  if (strict && !result.missing_keys.empty())
    problems.push_back("missing key(s) " + quoted(result.missing_keys));
  if (strict && !result.unexpected_keys.empty())
    problems.push_back("unexpected key(s) " + quoted(result.unexpected_keys));
  if (!problems.empty()) {
    std::string all;
    for (const auto& p : problems) all += (all.empty() ? "" : "; ") + p;
    MG_ERROR("load_state_dict", type_name(), ": ", all, "; nothing was loaded");
  }

  // Everything matches: copy in place. A source that shares storage with one of the module's
  // tensors (a dict from this module's own state_dict) is copied first, so no copy reads data an
  // earlier copy overwrote.
  auto aliases_own = [&own](const Tensor& src) {
    for (const auto& [name, p] : own)
      if (src.is_alias_of(p)) return true;
    return false;
  };
  NoGradGuard no_grad;
  for (auto& [name, p] : own) {
    auto it = given.find(name);
    if (it == given.end()) continue;
    const Tensor& src = *it->second;
    Tensor dst = p;
    dst.copy_(aliases_own(src) ? src.detach().clone() : src);
  }
  return result;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, p] : named_parameters(recurse)) out.push_back(p);
  return out;
}

std::int64_t Module::num_parameters(bool trainable_only) const {
  std::vector<std::pair<std::string, Tensor>> all;
  collect("", true, false, all);
  std::set<const TensorImpl*> seen;
  std::int64_t n = 0;
  for (const auto& [name, p] : all)
    if ((!trainable_only || p.requires_grad()) && seen.insert(p.impl()).second) n += p.numel();
  return n;
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out;
  collect("", recurse, true, out);
  return to_dict(std::move(out), "buffer");
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [n, b] : named_buffers(recurse)) out.push_back(b);
  return out;
}

namespace {
/// The owner when there is one, else a pointer that owns nothing (the aliasing constructor).
std::shared_ptr<Module> handle(Module* m, const std::shared_ptr<Module>& owner) {
  return owner ? owner : std::shared_ptr<Module>(std::shared_ptr<Module>(), m);
}
}  // namespace

std::shared_ptr<Module> Module::self_handle() const {
  auto* self = const_cast<Module*>(this);
  return handle(self, self->weak_from_this().lock());
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& c : children_) out.push_back(handle(c.module, c.owner));
  return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("module");
  for (const auto& c : children_) out.insert(c.name, handle(c.module, c.owner));
  return out;
}

void Module::collect_modules(const std::string& prefix,
                             OrderedDict<std::string, std::shared_ptr<Module>>& out) const {
  DepthGuard guard("named_modules", type_name());
  for (const auto& c : children_) {
    std::string name = prefix.empty() ? c.name : prefix + "." + c.name;
    // A module registered twice appears once, under its first name (PyTorch's memo).
    bool seen = false;
    for (const auto& item : out) seen |= item.value().get() == c.module;
    if (!seen) out.insert(name, handle(c.module, c.owner));
    c.module->collect_modules(name, out);
  }
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix, bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out("module");
  if (include_self) out.insert(name_prefix, self_handle());
  collect_modules(name_prefix, out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  return named_modules("", include_self).values();
}

void Module::replace_child(const std::string& name, Module* child, std::shared_ptr<Module> owner) {
  MG_CHECK(child != nullptr && child != this, "replace_module", type_name(), ": module \"", name,
           "\" must be another, existing module");
  for (auto& c : children_) {
    if (c.name != name) continue;
    c.module = child;
    c.owner = std::move(owner);
    return;
  }
  MG_ERROR("replace_module", type_name(), " has no module \"", name, "\"");
}

void Module::unregister_module(const std::string& name) {
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->name != name) continue;
    children_.erase(it);
    return;
  }
  MG_ERROR("unregister_module", type_name(), " has no module \"", name, "\"");
}

void Module::zero_grad(bool set_to_none) {
  for (auto& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.set_grad({});
    } else {
      // In place, as PyTorch's (and Optimizer::zero_grad): whoever holds the gradient sees the
      // zeros, and its version moves on. A gradient with history (create_graph) is detached first.
      Tensor g = p.grad();
      if (g.requires_grad()) {
        g = g.detach();
        p.set_grad(g);
      }
      NoGradGuard no_grad;
      g.zero_();
    }
  }
}

void Module::train(bool on) {
  DepthGuard guard("train", type_name());
  training_ = on;
  for (auto& c : children_) c.module->train(on);
}

void Module::to(Dtype dtype) {
  MG_CHECK(is_floating_point(dtype), "Module.to",
           "modules can only be converted to a floating-point ", "dtype, got ", dtype_name(dtype));
  // Replace each tensor's contents in place, so handles held as members stay valid
  // (PyTorch assigns param.data the same way).
  auto convert = [dtype](Tensor& t) {
    if (!t.defined() || !t.is_floating_point() || t.dtype() == dtype) return;
    Tensor grad = t.grad();
    t.set_data(t.detach().to(dtype));
    if (grad.defined()) t.set_grad(grad.detach().to(dtype));
  };
  for (auto& [n, p] : parameters_) convert(p);
  for (auto& [n, b] : buffers_) convert(b);
  DepthGuard guard("Module.to", type_name());
  for (auto& c : children_) c.module->to(dtype);
}

std::shared_ptr<Module> Module::clone() const {
  MG_ERROR("Module.clone", type_name(),
           " does not implement clone(): derive it from nn::Cloneable<", type_name(),
           "Impl> (cloned through its default constructor) or override clone() with "
           "clone_with([&] { return std::make_shared<",
           type_name(), "Impl>(...); })");
}

Module::Module(const Module& other)
    : std::enable_shared_from_this<Module>(),
      type_name_(other.type_name()),
      named_(true),
      training_(other.training_) {}

void Module::rebuild_as_copy_of(const Module& /*original*/) {
  MG_ERROR("Module.clone", type_name(),
           " is registered by reference (a member held by value) in a module cloned with "
           "reset(), so it is copied with its parent and must be rebuilt in place: derive it "
           "from nn::Cloneable<",
           type_name(), "Impl> and define reset(), or hold it through a holder");
}

void Module::rebuild_with(const Module& original, const std::function<void()>& reset) {
  parameters_.clear();
  buffers_.clear();
  children_.clear();
  reset();
  for (Child& c : children_) {
    auto it = std::find_if(original.children_.begin(), original.children_.end(),
                           [&](const Child& o) { return o.name == c.name; });
    if (it == original.children_.end()) continue;  // copy_state_to names the difference
    MG_CHECK(c.module != it->module, "Module.clone", type_name(),
             ": reset() registered the "
             "original's child \"",
             c.name,
             "\" instead of making a new one, so the copy would "
             "share it; make the child in reset() (fc = register_module(\"fc\", nn::Linear(...)))");
    // A child registered by reference is a member copied with this module: rebuild it too. An
    // owned child was made by reset() and has tensors of its own already.
    if (!c.owner) c.module->rebuild_as_copy_of(*it->module);
  }
}

void Module::copy_state_to(Module& copy) const {
  auto copy_tensors = [&](const OrderedDict<std::string, Tensor>& from,
                          OrderedDict<std::string, Tensor> to, const char* what) {
    if (from.keys() != to.keys()) {
      // The usual cause: weight tying done after construction (replace_parameter on a built
      // model), which the copy's constructor does not repeat, so the copy lists more tensors.
      bool lost_ties = to.size() > from.size();
      for (const std::string& k : from.keys()) lost_ties = lost_ties && to.contains(k);
      MG_CHECK(!lost_ties, "Module.clone", type_name(),
               ": the original shares one tensor under "
               "several ",
               what,
               " names (tied after construction, with replace_parameter), the "
               "copy made by clone() does not; tie them in the module's constructor so that the "
               "copy is built tied");
      MG_ERROR("Module.clone", type_name(), ": the copy's ", what,
               " are not the original's (the copy made by clone() must have the same structure)");
    }
    for (std::size_t i = 0; i < from.size(); ++i) {
      const Tensor& src = from[i].value();
      Tensor& dst = to[i].value();
      if (!src.defined() || !dst.defined()) continue;
      MG_CHECK(src.shape() == dst.shape(), "Module.clone", type_name(), ": ", what, " ",
               from[i].key(), " has shape ", src.shape(), " but the copy's has ", dst.shape());
      dst.set_data(src.detach().clone());
      if (dst.is_leaf() && dst.requires_grad() != src.requires_grad())
        dst.requires_grad_(src.requires_grad());
      Tensor grad = src.grad();
      dst.set_grad(grad.defined() ? grad.detach().clone() : Tensor());
    }
  };
  copy_tensors(named_parameters(), copy.named_parameters(), "parameters");
  copy_tensors(named_buffers(), copy.named_buffers(), "buffers");
  auto mine = named_modules();
  auto theirs = copy.named_modules();
  MG_CHECK(mine.keys() == theirs.keys(), "Module.clone", type_name(),
           ": the copy's submodules are not the original's");
  for (std::size_t i = 0; i < mine.size(); ++i)
    theirs[i].value()->training_ = mine[i].value()->training_;
}

void Module::visit(const std::string& prefix,
                   const std::function<void(const std::string&, const Module&)>& fn) const {
  DepthGuard guard("apply", type_name());
  for (const auto& c : children_)
    c.module->visit(prefix.empty() ? c.name : prefix + "." + c.name, fn);
  fn(prefix, *this);
}
void Module::apply(const std::function<void(Module&)>& fn) {
  visit("", [&fn](const std::string&, const Module& m) { fn(const_cast<Module&>(m)); });
}
void Module::apply(const std::function<void(const std::string&, Module&)>& fn,
                   const std::string& name_prefix) {
  visit(name_prefix,
        [&fn](const std::string& name, const Module& m) { fn(name, const_cast<Module&>(m)); });
}
void Module::apply(const std::function<void(const Module&)>& fn) const {
  visit("", [&fn](const std::string&, const Module& m) { fn(m); });
}
void Module::apply(const std::function<void(const std::string&, const Module&)>& fn,
                   const std::string& name_prefix) const {
  visit(name_prefix, fn);
}
void Module::apply(const std::function<void(const std::shared_ptr<Module>&)>& fn) const {
  visit("", [&fn](const std::string&, const Module& m) { fn(m.self_handle()); });
}
void Module::apply(
    const std::function<void(const std::string&, const std::shared_ptr<Module>&)>& fn,
    const std::string& name_prefix) const {
  visit(name_prefix,
        [&fn](const std::string& name, const Module& m) { fn(name, m.self_handle()); });
}

void Module::pretty_print(std::ostream& os) const {
  os << type_name();
  std::string extra = extra_repr();
  if (children_.empty() && extra.find('\n') == std::string::npos) os << "(" << extra << ")";
}

void Module::print(std::ostream& os, int indent) const {
  DepthGuard guard("print", type_name());
  pretty_print(os);
  std::string extra = extra_repr();
  // As PyTorch's __repr__: a one-line extra_repr without children stays inside the parentheses
  // (pretty_print wrote them); otherwise each of its lines goes on a line of its own, indented.
  if (children_.empty() && extra.find('\n') == std::string::npos) return;
  os << "(";
  std::string pad(static_cast<std::size_t>(indent + 2), ' ');
  if (!extra.empty()) {
    std::istringstream lines(extra);
    for (std::string line; std::getline(lines, line);) os << "\n" << pad << line;
  }
  for (const auto& c : children_) {
    os << "\n" << pad << "(" << c.name << "): ";
    c.module->print(os, indent + 2);
  }
  os << "\n" << std::string(static_cast<std::size_t>(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  m.print(os);
  return os;
}

void save(const Module& module, const std::string& path, const Metadata& metadata) {
  if (is_torch_path(path)) {
    MG_CHECK(metadata.empty(), "save", path,
             ": torch.save's format has no place for metadata; save to a .safetensors path to "
             "keep it");
    save_torch(path, module.state_dict());
    return;
  }
  save_safetensors(path, module.state_dict(), metadata);
}

LoadStateDictResult load(Module& module, const std::string& path, bool strict) {
  const NamedTensors tensors =
      is_torch_path(path) ? load_torch(path) : load_safetensors(path).tensors;
  try {
    return module.load_state_dict(tensors, strict);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (loading " + path + ")");
  }
}

// ---------------------------------------------------------------- module scopes

namespace {
// The innermost RecordModuleScopes of this thread (Note [Module scopes]).
thread_local RecordModuleScopes* recording_scopes = nullptr;
}  // namespace

RecordModuleScopes::RecordModuleScopes(const Module& root) : previous_(recording_scopes) {
  for (const auto& [name, m] : root.named_modules()) names_.emplace(m.get(), name);
  recording_scopes = this;
}

RecordModuleScopes::~RecordModuleScopes() { recording_scopes = previous_; }

std::string RecordModuleScopes::name_of(const Module& m) const {
  auto it = names_.find(&m);
  return it != names_.end() ? it->second : m.type_name();
}

ModuleScope::ModuleScope(const Module& m) {
  if (recording_scopes == nullptr) return;
  std::string name = recording_scopes->name_of(m);
  if (name.empty()) return;  // the root: its own nodes stay loose
  guard_.emplace(&m, std::move(name), m.type_name());
}

}  // namespace minigrad::nn
