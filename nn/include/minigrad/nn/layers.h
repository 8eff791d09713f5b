#pragma once
// Layers (torch.nn): Embedding, LayerNorm, Dropout, activations, and the containers Sequential
// and ModuleList, with their functional forms in nn::functional.
//
// nn::Module has no virtual forward (modules differ in what they take), so every single-input
// layer here derives from UnaryModule. Sequential chains anything with `forward(const Tensor&)`:
//
//   mg::manual_seed(0);
//   nn::Sequential net{std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>(),
//                      std::make_shared<nn::Linear>(4, 2)};
//   mg::Tensor y = net(x);  // x [N, 3] -> y [N, 2]
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "minigrad/nn/module.h"

namespace minigrad::nn {

namespace functional {

/// Rows of weight [num_embeddings, dim] picked by the int64 indices (any shape): [..., dim].
/// Throws for an index outside [0, num_embeddings). The gradient flows into weight only.
Tensor embedding(const Tensor& input, const Tensor& weight);
/// (x - mean) / sqrt(var + eps) * weight + bias over the last normalized_shape.size() dims, whose
/// sizes must equal normalized_shape (biased variance). weight and bias (shape normalized_shape)
/// are optional. A fused, numerically stable kernel with its own backward
/// (NativeLayerNormBackward0).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p);
/// otherwise returns x. Throws unless 0 <= p <= 1. The mask is drawn from the default generator
/// (see Note [Dropout stream] in layers.cpp: PyTorch's exact mask is not reproduced).
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);

}  // namespace functional

/// A module with one tensor in and one tensor out; Sequential chains them.
class UnaryModule : public Module {
 public:
  using Module::Module;
  /// The layer's computation.
  virtual Tensor forward(const Tensor& x) const = 0;
  /// Same as forward(x).
  Tensor operator()(const Tensor& x) const { return forward(x); }
};

/// A lookup table of num_embeddings vectors of size embedding_dim, as torch.nn.Embedding.
class EmbeddingImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// weight [num_embeddings, embedding_dim] ~ N(0, 1), drawn as PyTorch draws it.
  EmbeddingImpl(std::int64_t num_embeddings, std::int64_t embedding_dim, Dtype dtype = kFloat32);
  /// int64 indices of any shape -> [..., embedding_dim].
  Tensor forward(const Tensor& indices) const override;
  /// Draws new initial values (PyTorch's reset_parameters).
  void reset_parameters();
  /// "num_embeddings, embedding_dim", e.g. "Embedding(10, 3)".
  std::string extra_repr() const override;

  /// Number of rows of the table.
  std::int64_t num_embeddings;
  /// Size of each row.
  std::int64_t embedding_dim;
  /// The table, [num_embeddings, embedding_dim].
  Tensor weight;
};
MG_MODULE(Embedding);

/// Layer normalisation over the last dims, as torch.nn.LayerNorm.
class LayerNormImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// Normalises over dims of sizes normalized_shape; weight ones and bias zeros of that shape
  /// when elementwise_affine (otherwise neither exists).
  explicit LayerNormImpl(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                         Dtype dtype = kFloat32);
  /// Normalises over the last dim, of size normalized_size.
  explicit LayerNormImpl(std::int64_t normalized_size, double eps = 1e-5,
                         bool elementwise_affine = true, Dtype dtype = kFloat32);
  /// x [..., *normalized_shape] -> same shape.
  Tensor forward(const Tensor& x) const override;
  /// Resets weight to ones and bias to zeros.
  void reset_parameters();
  /// "(4,), eps=1e-05, elementwise_affine=True".
  std::string extra_repr() const override;

  /// Sizes of the normalised (trailing) dims.
  Shape normalized_shape;
  /// Added to the variance before the square root.
  double eps;
  /// Whether weight and bias exist.
  bool elementwise_affine;
  /// Scale, shape normalized_shape (undefined without elementwise_affine).
  Tensor weight;
  /// Shift, shape normalized_shape (undefined without elementwise_affine).
  Tensor bias;
};
MG_MODULE(LayerNorm);

/// Randomly zeroes elements in training mode, identity in eval mode, as torch.nn.Dropout.
class DropoutImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// Throws unless 0 <= p <= 1.
  explicit DropoutImpl(double p = 0.5);
  /// functional::dropout(x, p, is_training()).
  Tensor forward(const Tensor& x) const override;
  /// "p=0.5, inplace=False".
  std::string extra_repr() const override;

  /// Probability of zeroing an element.
  double p;
};
MG_MODULE(Dropout);

/// max(x, 0), as torch.nn.ReLU.
class ReLUImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  ReLUImpl() : UnaryModule("ReLU") {}
  /// relu(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(ReLU);

/// GELU, exact (approximate = "none") or with the tanh formula ("tanh"), as torch.nn.GELU.
class GELUImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// Throws unless approximate is "none" or "tanh".
  explicit GELUImpl(std::string approximate = "none");
  /// gelu(x, approximate).
  Tensor forward(const Tensor& x) const override;
  /// "approximate='none'".
  std::string extra_repr() const override;

  /// "none" or "tanh".
  std::string approximate;
};
MG_MODULE(GELU);

/// tanh(x), as torch.nn.Tanh.
class TanhImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  TanhImpl() : UnaryModule("Tanh") {}
  /// tanh(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(Tanh);

/// 1 / (1 + exp(-x)), as torch.nn.Sigmoid.
class SigmoidImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  SigmoidImpl() : UnaryModule("Sigmoid") {}
  /// sigmoid(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(Sigmoid);

/// m as an M; throws "[op] ..." naming m's type when it is another type.
template <typename M>
std::shared_ptr<M> checked_cast(const std::shared_ptr<Module>& m, const char* op) {
  auto out = std::dynamic_pointer_cast<M>(m);
  MG_CHECK(out != nullptr, op, "module of type ", m->type_name(), " is not of the requested type");
  return out;
}

/// A module M whose `forward(const Tensor&) const` returns a Tensor (UnaryModule, Linear, ...).
template <typename M>
concept UnaryForward = std::derived_from<M, Module> && requires(const M& m, const Tensor& x) {
  { m.forward(x) } -> std::convertible_to<Tensor>;
};

/// A shared module together with a call of its forward: what Sequential stores per child.
/// Converts implicitly from std::shared_ptr<M> for any UnaryForward M and from its holder
/// (nn::Linear(3, 4), nn::ReLU()).
class AnyModule {
 public:
  /// Wraps module; throws for a null pointer.
  template <UnaryForward M>
  AnyModule(std::shared_ptr<M> module)  // NOLINT(google-explicit-constructor): implicit by design
      : module_(module) {
    MG_CHECK(module != nullptr, "Sequential", "got a null module");
    forward_ = [m = module](const Tensor& x) -> Tensor { return m->forward(x); };
    clone_ = [m = std::move(module)]() -> AnyModule {
      auto copy = std::dynamic_pointer_cast<M>(m->clone());
      MG_CHECK(copy != nullptr, "Sequential", m->type_name(),
               "'s clone() returned a module of another type");
      return AnyModule(std::move(copy));
    };
  }
  template <typename H>
  requires IsModuleHolder<H> && UnaryForward<typename H::ContainedType> AnyModule(const H& holder)
      : AnyModule(holder.ptr()) {}  // NOLINT: implicit by design
  /// The wrapped module.
  const std::shared_ptr<Module>& module() const { return module_; }
  /// Calls the wrapped module's forward.
  Tensor forward(const Tensor& x) const { return forward_(x); }
  /// A deep copy of the wrapped module, wrapped (Module::clone).
  AnyModule clone() const { return clone_(); }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;
  std::function<AnyModule()> clone_;
};

/// A named child for Sequential({{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}}).
struct NamedAnyModule {
  NamedAnyModule(std::string name_, AnyModule module_)
      : name(std::move(name_)), module(std::move(module_)) {}
  std::string name;
  AnyModule module;
};

/// Runs its children one after the other, as torch.nn.Sequential. Children are named "0", "1",
/// ... unless given names.
class SequentialImpl : public UnaryModule {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// An empty Sequential (its forward returns the input).
  SequentialImpl() : UnaryModule("Sequential") {}
  /// Sequential{nn::Linear(3, 4), nn::ReLU(), ...}.
  SequentialImpl(std::initializer_list<AnyModule> modules);
  /// Sequential({{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}}).
  SequentialImpl(std::initializer_list<NamedAnyModule> modules);
  /// Sequential(nn::Linear(3, 4), nn::ReLU()) and Sequential(std::make_shared<ReLUImpl>()).
  template <typename... M>
  requires(sizeof...(M) > 0 &&
           (std::is_convertible_v<M, AnyModule> && ...)) explicit SequentialImpl(M&&... modules)
      : UnaryModule("Sequential") {
    (push_back(AnyModule(std::forward<M>(modules))), ...);
  }
  /// Appends a child, named by its position or by name.
  void push_back(AnyModule module);
  void push_back(const std::string& name, AnyModule module);
  /// Appends every child of other (sharing them).
  void extend(const SequentialImpl& other);
  /// Feeds x through every child in order.
  Tensor forward(const Tensor& x) const override;
  /// Number of children.
  std::size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  /// Child i (negative i counts from the end); throws when out of range.
  std::shared_ptr<Module> operator[](std::int64_t i) const;
  std::shared_ptr<Module> ptr(std::int64_t i) const { return (*this)[i]; }
  /// Child i as an M (a module class or its holder's); throws when out of range or of another
  /// type.
  template <typename M>
  auto ptr(std::int64_t i) const {
    if constexpr (IsModuleHolder<M>)
      return checked_cast<typename M::ContainedType>((*this)[i], "Sequential");
    else
      return checked_cast<M>((*this)[i], "Sequential");
  }
  template <typename M>
  auto& at(std::int64_t i) const {
    return *ptr<M>(i);
  }

 private:
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

/// One module of a braced ModuleList{...}: a module pointer or a holder. Not constructible from
/// nullptr, so that `nn::ModuleList list{nullptr};` is an empty holder, as in libtorch.
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
class ModuleListImpl : public Module {
 public:
  /// A deep copy of this module (Module::clone).
  std::shared_ptr<Module> clone() const override;
  /// An empty list.
  ModuleListImpl() : Module("ModuleList") {}
  /// ModuleList{std::make_shared<LinearImpl>(2, 2), std::make_shared<TanhImpl>()}.
  ModuleListImpl(std::initializer_list<ModulePtr> modules);
  /// ModuleList(nn::Linear(2, 2), nn::Tanh()).
  template <typename... M>
  requires(sizeof...(M) > 0 &&
           (IsModuleHolder<std::decay_t<M>> && ...)) explicit ModuleListImpl(M&&... modules)
      : Module("ModuleList") {
    (push_back(modules.ptr()), ...);
  }
  /// Appends a module (registered under its position); throws for a null pointer.
  void push_back(std::shared_ptr<Module> module);
  template <typename H>
  requires IsModuleHolder<H>
  void push_back(const H& holder) { push_back(std::shared_ptr<Module>(holder.ptr())); }
  /// Inserts a module at index (the later ones move up and are renamed).
  void insert(std::int64_t index, std::shared_ptr<Module> module);
  /// Appends every module of other (sharing them).
  void extend(const ModuleListImpl& other);
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
    if constexpr (IsModuleHolder<M>)
      return checked_cast<typename M::ContainedType>((*this)[i], "ModuleList");
    else
      return checked_cast<M>((*this)[i], "ModuleList");
  }
  template <typename M>
  auto& at(std::int64_t i) const {
    return *ptr<M>(i);
  }
  /// Iteration over the modules in order.
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  /// End of the iteration.
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

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

}  // namespace minigrad::nn
