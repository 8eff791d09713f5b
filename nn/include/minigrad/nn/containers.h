#pragma once
// Containers, as libtorch's torch::nn: AnyModule (any module, any forward signature), Sequential,
// ModuleList, ModuleDict, ParameterList, ParameterDict, and Functional (a module from a function).
//
//   mg::nn::Sequential net({{"fc", mg::nn::Linear(3, 4)}, {"act", mg::nn::ReLU()}});
//   net->push_back("out", mg::nn::Linear(4, 2));
//   mg::Tensor y = net->forward(x);              // x [N, 3] -> y [N, 2]
//   net->named_parameters()["out.weight"];       // PyTorch's names
//   mg::nn::AnyModule any(mg::nn::MultiheadAttention(8, 2));
//   auto [out, weights] = any.forward<std::pair<mg::Tensor, mg::Tensor>>(q, k, v);
#include <any>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "minigrad/nn/layers.h"

namespace minigrad::nn {

namespace container_detail {
/// The C++ name of a type, demangled: "minigrad::Tensor", "double".
std::string type_name(const std::type_info& type);
/// i as an index into size items (negative counts from the end); throws "[op] index ..." else.
std::size_t wrap_index(std::int64_t i, std::size_t size, const char* op);
/// While alive, one level of module nesting (a Sequential's forward): throws "[op] ...: modules
/// are nested more than 1000 levels deep" past the limit, as every walk of a module tree
/// (Note [Module depth]).
class NestingScope {
 public:
  NestingScope(const char* op, const std::string& type);
  ~NestingScope();
  NestingScope(const NestingScope&) = delete;
  NestingScope& operator=(const NestingScope&) = delete;
};
}  // namespace container_detail

/// m as an M; throws "[op] ..." naming m's type when it is another type.
template <typename M>
std::shared_ptr<M> checked_cast(const std::shared_ptr<Module>& m, const char* op) {
  auto out = std::dynamic_pointer_cast<M>(m);
  MG_CHECK(out != nullptr, op, "module of type ", m->type_name(), " is not of the requested type");
  return out;
}

/// M, or the module type of the holder M (nn::Linear -> nn::LinearImpl).
template <typename M>
struct ContainedModule {
  using type = M;
};
template <IsModuleHolder H>
struct ContainedModule<H> {
  using type = typename H::ContainedType;
};

/// A value of any type, as libtorch's AnyValue: what AnyModule::any_forward returns.
class AnyValue {
 public:
  template <typename T>
  requires(!std::is_same_v<std::decay_t<T>, AnyValue>) explicit AnyValue(T&& value)
      : value_(std::forward<T>(value)) {}
  /// The value if it is a T, else nullptr.
  template <typename T>
  T* try_get() noexcept {
    return std::any_cast<T>(&value_);
  }
  /// The value as a T; throws "[AnyValue] ..." naming both types when it is not one.
  template <typename T>
  T get() const {
    const T* v = std::any_cast<T>(&value_);
    MG_CHECK(v != nullptr, "AnyValue", "the value is of type ",
             container_detail::type_name(type_info()), ", not ",
             container_detail::type_name(typeid(T)));
    return *v;
  }
  const std::type_info& type_info() const noexcept { return value_.type(); }

 private:
  std::any value_;
};

namespace container_detail {
/// The return and argument types of a pointer to a forward member function.
template <typename F>
struct ForwardSignature;
template <typename C, typename R, typename... A>
struct ForwardSignature<R (C::*)(A...)> {
  using Return = R;
  using Args = std::tuple<A...>;
};
template <typename C, typename R, typename... A>
struct ForwardSignature<R (C::*)(A...) const> : ForwardSignature<R (C::*)(A...)> {};

/// &M::forward; a UnaryModule's forward(const Tensor&) const (Sequential also has a template).
template <typename M>
auto forward_pointer() {
  if constexpr (std::derived_from<M, UnaryModule>)
    return static_cast<Tensor (M::*)(const Tensor&) const>(&M::forward);
  else
    return &M::forward;
}

[[noreturn]] void throw_argument_count(const std::string& module, std::size_t expected,
                                       std::size_t got);

// Note [Braces for module lists]
// C++ evaluates a function's arguments in an unspecified order (g++: right to left), so
// nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)) would build, and draw the initial
// weights of, the second Linear first: for the same seed the model starts elsewhere than
// PyTorch's nn.Sequential(...), which builds left to right, and nothing says so. The elements of a
// braced list are evaluated left to right, so nn::Sequential{...} and nn::ModuleList{...} are
// PyTorch's. The parenthesised constructors therefore refuse (static_assert) two or more
// arguments built in the call (rvalues); modules already built (named lvalues), or a single
// module, have no order to get wrong and are accepted, as libtorch's.

/// How many of a forwarding constructor's arguments are temporaries (deduced as non-references).
template <typename... M>
inline constexpr std::size_t temporaries = ((std::is_lvalue_reference_v<M> ? 0 : 1) + ... + 0);
/// Appends to args the defaults (MG_FORWARD_HAS_DEFAULT_ARGS) of the arguments after them, up to
/// count; throws when args has fewer than the required ones or a missing one has no default.
void fill_default_arguments(const std::string& module, std::vector<AnyValue>& args,
                            const std::vector<std::pair<unsigned int, AnyValue>>& defaults,
                            std::size_t count);
[[noreturn]] void throw_argument_type(const std::string& module, std::size_t index,
                                      const std::type_info& expected, const std::type_info& got);
}  // namespace container_detail

/// A module with one forward() (a UnaryModule, or one whose forward is not overloaded).
template <typename M>
concept HasForward = std::derived_from<M, Module> &&
    (std::derived_from<M, UnaryModule> || requires { &M::forward; });

/// libtorch's FORWARD_HAS_DEFAULT_ARGS, inside a module class: the default values of its forward's
/// trailing arguments as {index, AnyValue(value)} pairs (indices counted from 0, each value of the
/// argument's type after decay), so that AnyModule and Sequential call forward with fewer
/// arguments, as C++ does when it is called directly:
///   Tensor forward(const Tensor& x, const Tensor& mask = {}, double scale = 1.0) const;
///   MG_FORWARD_HAS_DEFAULT_ARGS({1, mg::nn::AnyValue(mg::Tensor())}, {2, mg::nn::AnyValue(1.0)})
#define MG_FORWARD_HAS_DEFAULT_ARGS(...)                                                          \
  friend class ::minigrad::nn::AnyModule; /* it may be in a protected part */                     \
  static std::vector<std::pair<unsigned int, ::minigrad::nn::AnyValue>> _forward_default_args() { \
    return {__VA_ARGS__};                                                                         \
  }

/// Any module with any forward signature, as libtorch's AnyModule: forward(args...) checks the
/// number and the types of the arguments against the module's forward() and throws
/// "[AnyModule] ..." when they differ (fewer arguments are filled in from the defaults a
/// module declares with MG_FORWARD_HAS_DEFAULT_ARGS). Converts implicitly from std::shared_ptr<M>
/// and from a holder (nn::Linear(3, 4)), so containers take modules as they come.
class AnyModule {
 public:
  /// An empty AnyModule; forward() on it throws.
  AnyModule() = default;
  /// Wraps module; throws for a null pointer.
  template <HasForward M>
  AnyModule(std::shared_ptr<M> module)  // NOLINT(google-explicit-constructor): implicit by design
      : module_(module), type_(&typeid(M)) {
    MG_CHECK(module != nullptr, "AnyModule", "got a null module");
    forward_ = [m = module.get()](std::vector<AnyValue>& args) {
      auto f = container_detail::forward_pointer<M>();
      using Signature = container_detail::ForwardSignature<decltype(f)>;
      static_assert(!std::is_void_v<typename Signature::Return>,
                    "AnyModule needs a forward() that returns a value");
      constexpr std::size_t count = std::tuple_size_v<typename Signature::Args>;
      if constexpr (requires { M::_forward_default_args(); }) {
        if (args.size() < count)
          container_detail::fill_default_arguments(m->type_name(), args, M::_forward_default_args(),
                                                   count);
      }
      return call(*m, f, args, static_cast<typename Signature::Args*>(nullptr),
                  std::make_index_sequence<std::tuple_size_v<typename Signature::Args>>());
    };
    clone_ = [m = module.get()]() -> AnyModule {
      auto copy = std::dynamic_pointer_cast<M>(m->clone());
      MG_CHECK(copy != nullptr, "AnyModule", m->type_name(),
               "'s clone() returned a module of another type");
      return AnyModule(std::move(copy));
    };
  }
  template <IsModuleHolder H>
  requires HasForward<typename H::ContainedType> AnyModule(const H& holder)  // NOLINT: implicit
      : AnyModule(holder.ptr()) {}

  /// Calls the module's forward with these arguments; its result as an AnyValue.
  template <typename... Args>
  AnyValue any_forward(Args&&... args) const {
    std::vector<AnyValue> values;
    values.reserve(sizeof...(Args));
    (values.emplace_back(std::forward<Args>(args)), ...);
    return forward_values(values);
  }
  /// Calls the module's forward with arguments already wrapped (chaining in Sequential).
  AnyValue forward_values(std::vector<AnyValue>& args) const;
  /// Calls the module's forward; its result as an R (Tensor unless said otherwise).
  template <typename R = Tensor, typename... Args>
  R forward(Args&&... args) const {
    return result_as<R>(any_forward(std::forward<Args>(args)...));
  }

  /// The module; throws when empty.
  const std::shared_ptr<Module>& ptr() const;
  /// The module as an M (a module class or its holder's); throws when it is another type.
  template <typename M>
  auto ptr() const {
    return checked_cast<typename ContainedModule<M>::type>(ptr(), "AnyModule");
  }
  /// The module as an M&, or as a holder M.
  template <typename M>
  decltype(auto) get() const {
    if constexpr (IsModuleHolder<M>)
      return M(ptr<M>());
    else
      return static_cast<M&>(*ptr<M>());
  }
  /// typeid of the module's class.
  const std::type_info& type_info() const;
  bool is_empty() const noexcept { return module_ == nullptr; }
  /// A deep copy of the module, wrapped (Module::clone).
  AnyModule clone() const;

 private:
  template <typename M, typename F, typename... A, std::size_t... I>
  static AnyValue call(M& m, F f, std::vector<AnyValue>& args, std::tuple<A...>*,
                       std::index_sequence<I...>) {
    if (args.size() != sizeof...(A))
      container_detail::throw_argument_count(m.type_name(), sizeof...(A), args.size());
    return AnyValue(m.call_with_hooks(  // Note [Forward hooks]
        [&m, f](A... a) -> decltype(auto) { return (m.*f)(std::forward<A>(a)...); },
        static_cast<A>(argument<std::decay_t<A>>(m, args, I))...));
  }
  template <typename T>
  static T& argument(const Module& m, std::vector<AnyValue>& args, std::size_t i) {
    T* v = args[i].template try_get<T>();
    if (v == nullptr)
      container_detail::throw_argument_type(m.type_name(), i, typeid(T), args[i].type_info());
    return *v;
  }
  template <typename R>
  R result_as(AnyValue value) const {
    if (R* v = value.template try_get<R>()) return std::move(*v);
    MG_ERROR("AnyModule", module_->type_name(), "'s forward() returned ",
             container_detail::type_name(value.type_info()), ", not the requested ",
             container_detail::type_name(typeid(R)));
  }

  std::shared_ptr<Module> module_;
  const std::type_info* type_ = nullptr;
  std::function<AnyValue(std::vector<AnyValue>&)> forward_;
  std::function<AnyModule()> clone_;
};

/// A named child for Sequential({{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}}).
struct NamedAnyModule {
  NamedAnyModule(std::string name_, AnyModule module_)
      : name(std::move(name_)), module(std::move(module_)) {}
  std::string name;
  AnyModule module;
};

// ---------------------------------------------------------------- Sequential

/// Runs its children one after the other, as torch.nn.Sequential: the first gets forward's
/// arguments, each next one the previous one's result. Children may have any forward signature
/// (AnyModule) and are named "0", "1", ... unless given names.
class SequentialImpl : public CopyCloneable<SequentialImpl, UnaryModule> {
 public:
  /// An empty Sequential (its forward returns its one input).
  SequentialImpl() : CopyCloneable("Sequential") {}
  /// Sequential{nn::Linear(3, 4), nn::ReLU(), ...}.
  SequentialImpl(std::initializer_list<AnyModule> modules);
  /// Sequential({{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}}).
  SequentialImpl(std::initializer_list<NamedAnyModule> modules);
  /// Sequential(fc1, act, fc2) of modules already built, or of one module
  /// (Sequential(std::make_shared<ReLUImpl>())). Modules built in the call go in braces,
  /// Sequential{nn::Linear(3, 4), nn::ReLU()}: parentheses with two or more of them do not
  /// compile (Note [Braces for module lists]).
  template <typename... M>
  requires(sizeof...(M) > 0 &&
           (std::is_convertible_v<M, AnyModule> && ...)) explicit SequentialImpl(M&&... modules)
      : CopyCloneable("Sequential") {
    static_assert(container_detail::temporaries<M...> < 2,
                  "nn::Sequential(a, b, ...) with two or more modules built in the call builds "
                  "them in an unspecified order (g++: right to left), so their initial weights "
                  "differ from PyTorch's for the same seed: write nn::Sequential{a, b, ...} "
                  "(braces build left to right, as PyTorch)");
    (push_back(AnyModule(std::forward<M>(modules))), ...);
  }
  /// Appends a child, named by its position or by name.
  void push_back(AnyModule module);
  void push_back(const std::string& name, AnyModule module);
  /// Appends every module of a container: another Sequential (sharing its children), a
  /// std::vector of module pointers or holders.
  template <typename Container>
  void extend(const Container& modules) {
    if constexpr (std::is_same_v<Container, SequentialImpl>)
      MG_CHECK(&modules != this, "Sequential", "cannot extend a Sequential with itself");
    for (const auto& m : modules) push_back(AnyModule(m));
  }
  /// Feeds the inputs through every child in order; the last result as an R.
  template <typename R = Tensor, typename... In>
  R forward(In&&... inputs) const {
    if constexpr (sizeof...(In) == 1) {
      if (items_.empty()) return AnyValue(std::forward<In>(inputs)...).template get<R>();
    }
    MG_CHECK(!items_.empty(), "Sequential", "an empty Sequential returns its one input, got ",
             sizeof...(In), " inputs");
    container_detail::NestingScope nesting("Sequential.forward", type_name());
    AnyValue out = items_.front().any_forward(std::forward<In>(inputs)...);
    return chain(std::move(out)).template get<R>();
  }
  Tensor forward(const Tensor& x) const override { return forward<Tensor>(x); }
  /// Number of children.
  std::size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  /// Iteration over the children as AnyModules.
  std::vector<AnyModule>::const_iterator begin() const { return items_.begin(); }
  std::vector<AnyModule>::const_iterator end() const { return items_.end(); }
  /// Child i (negative i counts from the end); throws when out of range.
  std::shared_ptr<Module> operator[](std::int64_t i) const;
  std::shared_ptr<Module> ptr(std::int64_t i) const { return (*this)[i]; }
  /// Child i as an M (a module class or its holder's); throws when out of range or of another
  /// type.
  template <typename M>
  auto ptr(std::int64_t i) const {
    return checked_cast<typename ContainedModule<M>::type>((*this)[i], "Sequential");
  }
  template <typename M>
  auto& at(std::int64_t i) const {
    return *ptr<M>(i);
  }

 protected:
  /// Puts clones of the original's children in place of the shared ones a copy starts with
  /// (Note [Cloning]).
  void rebuild_as_copy_of(const Module& original) override;

 private:
  /// out through the children after the first.
  AnyValue chain(AnyValue out) const;
  std::vector<AnyModule> items_;
};

/// The holder of SequentialImpl (Note [Module holders]), with its list constructors.
class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  using Impl = SequentialImpl;
  Sequential() : ModuleHolder(std::make_shared<SequentialImpl>()) {}
  Sequential(std::initializer_list<AnyModule> modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(modules)) {}
  Sequential(std::initializer_list<NamedAnyModule> modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(modules)) {}
};

// ---------------------------------------------------------------- ModuleList, ModuleDict

/// One module of a braced list: a module pointer or a holder. Not constructible from nullptr,
/// so that `nn::ModuleList list{nullptr};` is an empty holder, as in libtorch.
class ModulePtr {
 public:
  template <typename M>
  requires std::derived_from<M, Module> ModulePtr(std::shared_ptr<M> module)
      : module_(std::move(module)) {}  // NOLINT: implicit
  template <IsModuleHolder H>
  ModulePtr(const H& holder) : module_(holder.ptr()) {}  // NOLINT: implicit
  const std::shared_ptr<Module>& get() const { return module_; }

 private:
  std::shared_ptr<Module> module_;
};

/// An indexed list of modules, as torch.nn.ModuleList; children are named "0", "1", ...
class ModuleListImpl : public CopyCloneable<ModuleListImpl> {
 public:
  /// An empty list.
  ModuleListImpl() : CopyCloneable("ModuleList") {}
  /// ModuleList{std::make_shared<LinearImpl>(2, 2), nn::Tanh()}.
  ModuleListImpl(std::initializer_list<ModulePtr> modules);
  /// ModuleList(fc1, act) of holders or std::shared_ptr<M>s already built (the first may be a
  /// ModuleList, as in libtorch), or of one. Modules built in the call go in braces,
  /// ModuleList{nn::Linear(2, 2), nn::Tanh()}: parentheses with two or more of them do not
  /// compile (Note [Braces for module lists]).
  template <typename... M>
  requires(sizeof...(M) > 0 &&
           (std::is_constructible_v<ModulePtr, M&&> && ...)) explicit ModuleListImpl(M&&... modules)
      : CopyCloneable("ModuleList") {
    static_assert(container_detail::temporaries<M...> < 2,
                  "nn::ModuleList(a, b, ...) with two or more modules built in the call builds "
                  "them in an unspecified order (g++: right to left), so their initial weights "
                  "differ from PyTorch's for the same seed: write nn::ModuleList{a, b, ...} "
                  "(braces build left to right, as PyTorch)");
    (push_back(ModulePtr(modules)), ...);
  }
  /// Appends a module (registered under its position); throws for a null pointer.
  void push_back(ModulePtr module);
  /// push_back(nullptr) throws, as a null module pointer does.
  void push_back(std::nullptr_t) { push_back(ModulePtr(std::shared_ptr<Module>())); }
  /// Inserts a module at index (negative counts from the end; the later ones move up and are
  /// renamed), as libtorch's insert and Python's list.insert.
  void insert(std::int64_t index, ModulePtr module);
  /// Appends every module of another ModuleList (sharing them) or of a std::vector of module
  /// pointers or holders.
  template <typename Container>
  void extend(const Container& modules) {
    if constexpr (std::is_same_v<Container, ModuleListImpl>)
      MG_CHECK(&modules != this, "ModuleList", "cannot extend a ModuleList with itself");
    for (const auto& m : modules) push_back(ModulePtr(m));
  }
  /// Number of modules.
  std::size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  /// Module i (negative i counts from the end); throws when out of range.
  std::shared_ptr<Module> operator[](std::int64_t i) const;
  std::shared_ptr<Module> ptr(std::int64_t i) const { return (*this)[i]; }
  /// Module i as an M (a module class or its holder's), e.g. list->ptr<nn::Linear>(0); throws
  /// when of another type.
  template <typename M>
  auto ptr(std::int64_t i) const {
    return checked_cast<typename ContainedModule<M>::type>((*this)[i], "ModuleList");
  }
  template <typename M>
  auto& at(std::int64_t i) const {
    return *ptr<M>(i);
  }
  /// Iteration over the modules in order.
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  /// End of the iteration.
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 protected:
  /// Puts clones of the original's children in place of the shared ones a copy starts with
  /// (Note [Cloning]).
  void rebuild_as_copy_of(const Module& original) override;

 private:
  void rename_children();
  std::vector<std::shared_ptr<Module>> modules_;
};
/// The holder of ModuleListImpl; also made from a braced list of modules.
class ModuleList : public ModuleHolder<ModuleListImpl> {
 public:
  using ModuleHolder<ModuleListImpl>::ModuleHolder;
  using Impl = ModuleListImpl;
  ModuleList() : ModuleHolder(std::make_shared<ModuleListImpl>()) {}
  ModuleList(std::initializer_list<ModulePtr> modules)
      : ModuleHolder(std::make_shared<ModuleListImpl>(modules)) {}
};

/// Modules by name in insertion order, as torch.nn.ModuleDict; each is a child under its key.
class ModuleDictImpl : public CopyCloneable<ModuleDictImpl> {
 public:
  using Item = OrderedDict<std::string, std::shared_ptr<Module>>::Item;
  ModuleDictImpl() : CopyCloneable("ModuleDict") {}
  /// ModuleDict({{"fc", nn::Linear(2, 3)}, {"act", nn::Tanh()}}).
  ModuleDictImpl(std::initializer_list<std::pair<std::string, ModulePtr>> modules);
  /// From (key, module) pairs or another dict's items, as libtorch.
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& modules);
  /// Adds module under key, or replaces the one there (keeping its place), as `md[key] = m`.
  void insert(const std::string& key, ModulePtr module);
  /// insert() of every (key, module) pair: a std::vector of pairs, an OrderedDict, a ModuleDict.
  void update(const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  template <typename Container>
  void update(const Container& modules) {
    for (const auto& item : modules) insert(item.key(), item.value());
  }
  /// Removes key and returns its module; throws naming the keys when it is absent.
  std::shared_ptr<Module> pop(const std::string& key);
  /// Removes every module.
  void clear();
  /// The module under key; throws naming the keys when it is absent.
  std::shared_ptr<Module> operator[](const std::string& key) const { return modules_[key]; }
  /// The module under key as an M (a module class or its holder's); throws when of another type.
  template <typename M>
  auto ptr(const std::string& key) const {
    return checked_cast<typename ContainedModule<M>::type>(modules_[key], "ModuleDict");
  }
  template <typename M>
  auto& at(const std::string& key) const {
    return *ptr<M>(key);
  }
  bool contains(const std::string& key) const { return modules_.contains(key); }
  std::size_t size() const { return modules_.size(); }
  bool empty() const { return modules_.is_empty(); }
  bool is_empty() const { return modules_.is_empty(); }
  std::vector<std::string> keys() const { return modules_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const;
  /// Iteration over (key, module) items in order.
  std::vector<Item>::const_iterator begin() const { return modules_.begin(); }
  std::vector<Item>::const_iterator end() const { return modules_.end(); }

 protected:
  /// Puts clones of the original's children in place of the shared ones a copy starts with
  /// (Note [Cloning]).
  void rebuild_as_copy_of(const Module& original) override;

 private:
  OrderedDict<std::string, std::shared_ptr<Module>> modules_{"module"};
};
/// The holder of ModuleDictImpl; also made from a braced list of (key, module) pairs.
class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  using Impl = ModuleDictImpl;
  ModuleDict() : ModuleHolder(std::make_shared<ModuleDictImpl>()) {}
  ModuleDict(std::initializer_list<std::pair<std::string, ModulePtr>> modules)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(modules)) {}
};

// ---------------------------------------------------------------- ParameterList, ParameterDict

// Note [Parameter containers]
// ParameterList and ParameterDict register each tensor as a parameter of their own, named by its
// position ("0", "1", ...) or its key, so a parent's named_parameters() says "params.0" and
// "pd.alpha", as PyTorch. A tensor added becomes a parameter that requires grad, as PyTorch wraps
// it in nn.Parameter (libtorch keeps the tensor's own requires_grad: set it after adding if you
// need that). The tensor is registered itself, not a copy: the caller's handle is the parameter.

/// A list of parameters, as torch.nn.ParameterList.
class ParameterListImpl : public CopyCloneable<ParameterListImpl> {
 public:
  ParameterListImpl() : CopyCloneable("ParameterList") {}
  /// ParameterList(a, b, ...), as libtorch.
  template <typename... T>
  requires(sizeof...(T) > 0 &&
           (std::is_convertible_v<T, Tensor> && ...)) explicit ParameterListImpl(T&&... params)
      : CopyCloneable("ParameterList") {
    (append(params), ...);
  }
  /// ParameterList(std::vector<Tensor>{a, b}), as Python's ParameterList([a, b]).
  explicit ParameterListImpl(const std::vector<Tensor>& params);
  /// Adds param as parameter "size()"; returns it.
  Tensor& append(const Tensor& param);
  /// append() of every tensor of a container (a std::vector, another ParameterList).
  template <typename Container>
  void extend(const Container& params) {
    for (const auto& p : params) append(p);
  }
  /// Parameter i (negative counts from the end); throws when out of range.
  Tensor& at(std::int64_t i);
  const Tensor& at(std::int64_t i) const;
  Tensor& operator[](std::int64_t i) { return at(i); }
  const Tensor& operator[](std::int64_t i) const { return at(i); }
  std::size_t size() const { return params_.size(); }
  bool is_empty() const { return params_.empty(); }
  /// Iteration over the parameters in order.
  std::vector<Tensor>::const_iterator begin() const { return params_.begin(); }
  std::vector<Tensor>::const_iterator end() const { return params_.end(); }
  /// PyTorch's lines: "(0): Parameter containing: [torch.float32 of size 2x3]".
  std::string extra_repr() const override;

 protected:
  /// Puts new tensors in place of the shared ones a copy starts with
  /// (Note [Cloning]).
  void rebuild_as_copy_of(const Module& original) override;

 private:
  std::vector<Tensor> params_;
};
MG_MODULE(ParameterList);

/// Parameters by name in insertion order, as torch.nn.ParameterDict.
class ParameterDictImpl : public CopyCloneable<ParameterDictImpl> {
 public:
  using Item = OrderedDict<std::string, Tensor>::Item;
  ParameterDictImpl() : CopyCloneable("ParameterDict") {}
  /// ParameterDict({{"alpha", a}, {"beta", b}}).
  ParameterDictImpl(std::initializer_list<std::pair<std::string, Tensor>> params);
  explicit ParameterDictImpl(const OrderedDict<std::string, Tensor>& params);
  /// Adds param under key, or replaces the one there (keeping its place); returns it.
  Tensor& insert(const std::string& key, const Tensor& param);
  /// insert() of every (key, tensor) item of an OrderedDict or another ParameterDict.
  template <typename Container>
  void update(const Container& params) {
    for (const auto& item : params) insert(item.key(), item.value());
  }
  /// Removes key and returns its parameter; throws naming the keys when it is absent.
  Tensor pop(const std::string& key);
  /// Removes every parameter.
  void clear();
  /// The parameter under key; throws naming the keys when it is absent.
  Tensor& get(const std::string& key) { return params_[key]; }
  const Tensor& get(const std::string& key) const { return params_[key]; }
  Tensor& operator[](const std::string& key) { return params_[key]; }
  const Tensor& operator[](const std::string& key) const { return params_[key]; }
  bool contains(const std::string& key) const { return params_.contains(key); }
  std::size_t size() const { return params_.size(); }
  bool empty() const { return params_.is_empty(); }
  bool is_empty() const { return params_.is_empty(); }
  std::vector<std::string> keys() const { return params_.keys(); }
  std::vector<Tensor> values() const { return params_.values(); }
  /// Iteration over (key, parameter) items in order.
  std::vector<Item>::const_iterator begin() const { return params_.begin(); }
  std::vector<Item>::const_iterator end() const { return params_.end(); }
  /// PyTorch's lines: "(alpha): Parameter containing: [torch.FloatTensor of size 2]".
  std::string extra_repr() const override;

 protected:
  /// Puts new tensors in place of the shared ones a copy starts with
  /// (Note [Cloning]).
  void rebuild_as_copy_of(const Module& original) override;

 private:
  OrderedDict<std::string, Tensor> params_{"parameter"};
};
/// The holder of ParameterDictImpl; also made from a braced list of (key, tensor) pairs.
class ParameterDict : public ModuleHolder<ParameterDictImpl> {
 public:
  using ModuleHolder<ParameterDictImpl>::ModuleHolder;
  using Impl = ParameterDictImpl;
  ParameterDict() : ModuleHolder(std::make_shared<ParameterDictImpl>()) {}
  ParameterDict(std::initializer_list<std::pair<std::string, Tensor>> params)
      : ModuleHolder(std::make_shared<ParameterDictImpl>(params)) {}
};

// ---------------------------------------------------------------- Functional

/// A module from a function of one tensor, as libtorch's torch::nn::Functional:
/// `nn::Functional(mg::relu)`, `nn::Functional([](const mg::Tensor& x) { return x * 2; })`, or a
/// function with its further arguments bound: `nn::Functional(mg::softmax, /*dim=*/1)`.
class FunctionalImpl : public CopyCloneable<FunctionalImpl, UnaryModule> {
 public:
  using Function = std::function<Tensor(Tensor)>;
  explicit FunctionalImpl(Function function);
  /// function(input, args...).
  template <typename F, typename... Args>
  requires(sizeof...(Args) > 0) explicit FunctionalImpl(F function, Args&&... args)
      : FunctionalImpl(Function([function, ... bound = std::forward<Args>(args)](Tensor x) {
          return function(x, bound...);
        })) {}
  /// function(x).
  Tensor forward(const Tensor& x) const override;

 private:
  Function function_;
};
MG_MODULE(Functional);

}  // namespace minigrad::nn
