// Containers: AnyModule's checks, Sequential, ModuleList, ModuleDict, ParameterList,
// ParameterDict and Functional.
#include "minigrad/nn/containers.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "module_depth.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace minigrad::nn {

namespace container_detail {

std::string type_name(const std::type_info& type) {
  int status = 0;
  char* name = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name != nullptr ? name : type.name();
  std::free(name);  // NOLINT(cppcoreguidelines-no-malloc): __cxa_demangle allocates with malloc
  return out;
}

std::size_t wrap_index(std::int64_t i, std::size_t size, const char* op) {
  auto n = static_cast<std::int64_t>(size);
  MG_CHECK(i >= -n && i < n, op, "index ", i, " is out of range for ", n, " modules");
  return static_cast<std::size_t>(i < 0 ? i + n : i);
}

void throw_argument_count(const std::string& module, std::size_t expected, std::size_t got) {
  MG_ERROR("AnyModule", module, "'s forward() takes ", expected, " argument",
           expected == 1 ? "" : "s", ", but ", got, got == 1 ? " was" : " were", " given");
}

void throw_argument_type(const std::string& module, std::size_t index,
                         const std::type_info& expected, const std::type_info& got) {
  MG_ERROR("AnyModule", module, "'s forward() expects argument ", index, " to be of type ",
           type_name(expected), ", but got ", type_name(got));
}

}  // namespace container_detail

// ---------------------------------------------------------------- AnyModule

void container_detail::fill_default_arguments(
    const std::string& module, std::vector<AnyValue>& args,
    const std::vector<std::pair<unsigned int, AnyValue>>& defaults, std::size_t count) {
  std::size_t required = count;
  for (const auto& d : defaults) required = std::min<std::size_t>(required, d.first);
  MG_CHECK(args.size() >= required, "AnyModule", module, "'s forward() takes at least ", required,
           " argument(s) (the last ", count - required, " have defaults), got ", args.size());
  for (std::size_t i = args.size(); i < count; ++i) {
    auto it =
        std::find_if(defaults.begin(), defaults.end(), [i](const auto& d) { return d.first == i; });
    MG_CHECK(it != defaults.end(), "AnyModule", module, "'s forward() has no default for argument ",
             i, " (MG_FORWARD_HAS_DEFAULT_ARGS gives none), and it was not passed");
    args.push_back(it->second);
  }
}

AnyValue AnyModule::forward_values(std::vector<AnyValue>& args) const {
  MG_CHECK(!is_empty(), "AnyModule", "cannot call forward() on an empty AnyModule");
  ModuleScope scope(*module_);  // Note [Module scopes]
  return forward_(args);
}

const std::shared_ptr<Module>& AnyModule::ptr() const {
  MG_CHECK(!is_empty(), "AnyModule", "the AnyModule is empty: it holds no module");
  return module_;
}

const std::type_info& AnyModule::type_info() const {
  MG_CHECK(!is_empty(), "AnyModule", "the AnyModule is empty: it holds no module");
  return *type_;
}

AnyModule AnyModule::clone() const {
  MG_CHECK(!is_empty(), "AnyModule", "the AnyModule is empty: it holds no module");
  return clone_();
}

// ---------------------------------------------------------------- Sequential

SequentialImpl::SequentialImpl(std::initializer_list<AnyModule> modules)
    : CopyCloneable("Sequential") {
  for (const auto& m : modules) push_back(m);
}

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> modules)
    : CopyCloneable("Sequential") {
  for (const auto& m : modules) push_back(m.name, m.module);
}

void SequentialImpl::push_back(AnyModule module) {
  push_back(std::to_string(items_.size()), std::move(module));
}

void SequentialImpl::push_back(const std::string& name, AnyModule module) {
  register_module(name, module.ptr());
  items_.push_back(std::move(module));
}

container_detail::NestingScope::NestingScope(const char* op, const std::string& type) {
  MG_CHECK(depth::module_depth < depth::kMaxModuleDepth, op, type,
           ": modules are nested more than ", depth::kMaxModuleDepth, " levels deep");
  ++depth::module_depth;
}
container_detail::NestingScope::~NestingScope() { --depth::module_depth; }

AnyValue SequentialImpl::chain(AnyValue out) const {
  for (std::size_t i = 1; i < items_.size(); ++i) {
    std::vector<AnyValue> args;
    args.push_back(std::move(out));
    out = items_[i].forward_values(args);
  }
  return out;
}

std::shared_ptr<Module> SequentialImpl::operator[](std::int64_t i) const {
  return items_[container_detail::wrap_index(i, items_.size(), "Sequential")].ptr();
}

void SequentialImpl::rebuild_as_copy_of(const Module& original) {
  depth::DepthGuard guard("Module.clone", type_name());
  const std::vector<std::string> names = original.named_children().keys();
  rebuild_with(original, [&] {
    std::vector<AnyModule> shared = std::move(items_);
    items_.clear();
    for (std::size_t i = 0; i < shared.size(); ++i) push_back(names[i], shared[i].clone());
  });
}

// ---------------------------------------------------------------- ModuleList

ModuleListImpl::ModuleListImpl(std::initializer_list<ModulePtr> modules)
    : CopyCloneable("ModuleList") {
  for (const auto& m : modules) push_back(m);
}

void ModuleListImpl::push_back(ModulePtr module) {
  MG_CHECK(module.get() != nullptr, "ModuleList", "got a null module");
  register_module(std::to_string(modules_.size()), module.get());
  modules_.push_back(module.get());
}

void ModuleListImpl::insert(std::int64_t index, ModulePtr module) {
  MG_CHECK(module.get() != nullptr, "ModuleList", "got a null module");
  auto n = static_cast<std::int64_t>(modules_.size());
  MG_CHECK(index >= -n && index <= n, "ModuleList", "insert index ", index,
           " is out of range for a list of ", n, " modules");
  if (index < 0) index += n;
  modules_.insert(modules_.begin() + index, module.get());
  rename_children();
}

void ModuleListImpl::rename_children() {
  // Children are named by position: re-register them all in the new order.
  for (const auto& name : named_children().keys()) unregister_module(name);
  for (std::size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

std::shared_ptr<Module> ModuleListImpl::operator[](std::int64_t i) const {
  return modules_[container_detail::wrap_index(i, modules_.size(), "ModuleList")];
}

void ModuleListImpl::rebuild_as_copy_of(const Module& original) {
  depth::DepthGuard guard("Module.clone", type_name());
  rebuild_with(original, [&] {
    std::vector<std::shared_ptr<Module>> shared = std::move(modules_);
    modules_.clear();
    for (const auto& m : shared) push_back(m->clone());
  });
}

// ---------------------------------------------------------------- ModuleDict

ModuleDictImpl::ModuleDictImpl(std::initializer_list<std::pair<std::string, ModulePtr>> modules)
    : CopyCloneable("ModuleDict") {
  for (const auto& [key, m] : modules) insert(key, m);
}

ModuleDictImpl::ModuleDictImpl(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules)
    : CopyCloneable("ModuleDict") {
  update(modules);
}

ModuleDictImpl::ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules)
    : CopyCloneable("ModuleDict") {
  update(modules);
}

void ModuleDictImpl::insert(const std::string& key, ModulePtr module) {
  MG_CHECK(module.get() != nullptr, "ModuleDict", "got a null module for key \"", key, "\"");
  if (std::shared_ptr<Module>* existing = modules_.find(key)) {
    *existing = module.get();
    replace_module(key, module.get());
    return;
  }
  register_module(key, module.get());
  modules_.insert(key, module.get());
}

void ModuleDictImpl::update(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, m] : modules) insert(key, m);
}

std::shared_ptr<Module> ModuleDictImpl::pop(const std::string& key) {
  std::shared_ptr<Module> m = modules_[key];
  modules_.erase(key);
  unregister_module(key);
  return m;
}

void ModuleDictImpl::clear() {
  for (const auto& key : modules_.keys()) unregister_module(key);
  modules_.clear();
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> ModuleDictImpl::items() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  for (const auto& item : modules_) out.emplace_back(item.key(), item.value());
  return out;
}

void ModuleDictImpl::rebuild_as_copy_of(const Module& original) {
  depth::DepthGuard guard("Module.clone", type_name());
  rebuild_with(original, [&] {
    const OrderedDict<std::string, std::shared_ptr<Module>> shared = modules_;
    modules_.clear();
    for (const auto& item : shared) insert(item.key(), item.value()->clone());
  });
}

// ---------------------------------------------------------------- ParameterList, ParameterDict

namespace {
/// "2x3", as PyTorch's 'x'.join(str(size) for size in p.size()).
std::string size_str(const Tensor& p) {
  std::ostringstream out;
  for (std::int64_t i = 0; i < p.dim(); ++i) out << (i ? "x" : "") << p.size(i);
  return out.str();
}

/// torch.typename(p): "torch.FloatTensor".
std::string legacy_type_name(Dtype dtype) {
  switch (dtype) {
    case kFloat32:
      return "torch.FloatTensor";
    case kFloat64:
      return "torch.DoubleTensor";
    case kInt64:
      return "torch.LongTensor";
    case kBool:
      return "torch.BoolTensor";
    default:
      return std::string("torch.") + dtype_name(dtype);
  }
}
}  // namespace

ParameterListImpl::ParameterListImpl(const std::vector<Tensor>& params)
    : CopyCloneable("ParameterList") {
  extend(params);
}

Tensor& ParameterListImpl::append(const Tensor& param) {
  MG_CHECK(param.defined(), "ParameterList", "got an undefined tensor");
  params_.push_back(register_parameter(std::to_string(params_.size()), param));
  return params_.back();
}

Tensor& ParameterListImpl::at(std::int64_t i) {
  return params_[container_detail::wrap_index(i, params_.size(), "ParameterList")];
}

const Tensor& ParameterListImpl::at(std::int64_t i) const {
  return params_[container_detail::wrap_index(i, params_.size(), "ParameterList")];
}

std::string ParameterListImpl::extra_repr() const {
  std::ostringstream out;
  for (std::size_t i = 0; i < params_.size(); ++i)
    out << (i ? "\n" : "") << "  (" << i << "): Parameter containing: [torch."
        << dtype_name(params_[i].dtype()) << " of size " << size_str(params_[i]) << "]";
  return out.str();
}

void ParameterListImpl::rebuild_as_copy_of(const Module& original) {
  // New tensors of the same shapes and dtypes; clone() copies the values in.
  rebuild_with(original, [&] {
    std::vector<Tensor> shared = std::move(params_);
    params_.clear();
    for (const Tensor& p : shared) append(minigrad::empty(p.shape(), p.dtype()));
  });
}

ParameterDictImpl::ParameterDictImpl(std::initializer_list<std::pair<std::string, Tensor>> params)
    : CopyCloneable("ParameterDict") {
  for (const auto& [key, p] : params) insert(key, p);
}

ParameterDictImpl::ParameterDictImpl(const OrderedDict<std::string, Tensor>& params)
    : CopyCloneable("ParameterDict") {
  update(params);
}

Tensor& ParameterDictImpl::insert(const std::string& key, const Tensor& param) {
  MG_CHECK(param.defined(), "ParameterDict", "got an undefined tensor for key \"", key, "\"");
  if (Tensor* existing = params_.find(key)) {
    *existing = replace_parameter(key, param);
    return *existing;
  }
  return params_.insert(key, register_parameter(key, param));
}

Tensor ParameterDictImpl::pop(const std::string& key) {
  Tensor p = params_[key];
  params_.erase(key);
  unregister_parameter(key);
  return p;
}

void ParameterDictImpl::clear() {
  for (const auto& key : params_.keys()) unregister_parameter(key);
  params_.clear();
}

std::string ParameterDictImpl::extra_repr() const {
  std::ostringstream out;
  for (const auto& [key, p] : params_)
    out << (key == params_.front().key() ? "" : "\n") << "  (" << key
        << "): Parameter containing: [" << legacy_type_name(p.dtype()) << " of size " << size_str(p)
        << "]";
  return out.str();
}

void ParameterDictImpl::rebuild_as_copy_of(const Module& original) {
  // New tensors of the same shapes and dtypes; clone() copies the values in.
  rebuild_with(original, [&] {
    const OrderedDict<std::string, Tensor> shared = params_;
    params_.clear();
    for (const auto& [key, p] : shared) insert(key, minigrad::empty(p.shape(), p.dtype()));
  });
}

// ---------------------------------------------------------------- Functional

FunctionalImpl::FunctionalImpl(Function function)
    : CopyCloneable("Functional"), function_(std::move(function)) {
  MG_CHECK(function_ != nullptr, "Functional", "got an empty function");
}

Tensor FunctionalImpl::forward(const Tensor& x) const { return function_(x); }

}  // namespace minigrad::nn
