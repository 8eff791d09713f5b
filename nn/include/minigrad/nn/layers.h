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
class Embedding : public UnaryModule {
 public:
  /// weight [num_embeddings, embedding_dim] ~ N(0, 1), drawn as PyTorch draws it.
  Embedding(std::int64_t num_embeddings, std::int64_t embedding_dim, Dtype dtype = kFloat32);
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

/// Layer normalisation over the last dims, as torch.nn.LayerNorm.
class LayerNorm : public UnaryModule {
 public:
  /// Normalises over dims of sizes normalized_shape; weight ones and bias zeros of that shape
  /// when elementwise_affine (otherwise neither exists).
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                     Dtype dtype = kFloat32);
  /// Normalises over the last dim, of size normalized_size.
  explicit LayerNorm(std::int64_t normalized_size, double eps = 1e-5,
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

/// Randomly zeroes elements in training mode, identity in eval mode, as torch.nn.Dropout.
class Dropout : public UnaryModule {
 public:
  /// Throws unless 0 <= p <= 1.
  explicit Dropout(double p = 0.5);
  /// functional::dropout(x, p, is_training()).
  Tensor forward(const Tensor& x) const override;
  /// "p=0.5, inplace=False".
  std::string extra_repr() const override;

  /// Probability of zeroing an element.
  double p;
};

/// max(x, 0), as torch.nn.ReLU.
class ReLU : public UnaryModule {
 public:
  ReLU() : UnaryModule("ReLU") {}
  /// relu(x).
  Tensor forward(const Tensor& x) const override;
};

/// GELU, exact (approximate = "none") or with the tanh formula ("tanh"), as torch.nn.GELU.
class GELU : public UnaryModule {
 public:
  /// Throws unless approximate is "none" or "tanh".
  explicit GELU(std::string approximate = "none");
  /// gelu(x, approximate).
  Tensor forward(const Tensor& x) const override;
  /// "approximate='none'".
  std::string extra_repr() const override;

  /// "none" or "tanh".
  std::string approximate;
};

/// tanh(x), as torch.nn.Tanh.
class Tanh : public UnaryModule {
 public:
  Tanh() : UnaryModule("Tanh") {}
  /// tanh(x).
  Tensor forward(const Tensor& x) const override;
};

/// 1 / (1 + exp(-x)), as torch.nn.Sigmoid.
class Sigmoid : public UnaryModule {
 public:
  Sigmoid() : UnaryModule("Sigmoid") {}
  /// sigmoid(x).
  Tensor forward(const Tensor& x) const override;
};

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
/// Converts implicitly from std::shared_ptr<M> for any UnaryForward M (including nn::Linear).
class AnyModule {
 public:
  /// Wraps module; throws for a null pointer.
  template <UnaryForward M>
  AnyModule(std::shared_ptr<M> module)  // NOLINT(google-explicit-constructor): implicit by design
      : module_(module) {
    MG_CHECK(module != nullptr, "Sequential", "got a null module");
    forward_ = [m = std::move(module)](const Tensor& x) -> Tensor { return m->forward(x); };
  }
  /// The wrapped module.
  const std::shared_ptr<Module>& module() const { return module_; }
  /// Calls the wrapped module's forward.
  Tensor forward(const Tensor& x) const { return forward_(x); }

 private:
  std::shared_ptr<Module> module_;
  std::function<Tensor(const Tensor&)> forward_;
};

/// Runs its children one after the other, as torch.nn.Sequential. Children are named "0", "1", ...
class Sequential : public UnaryModule {
 public:
  /// An empty Sequential (its forward returns the input).
  Sequential() : UnaryModule("Sequential") {}
  /// Sequential{std::make_shared<Linear>(3, 4), std::make_shared<ReLU>(), ...}.
  Sequential(std::initializer_list<AnyModule> modules);
  /// std::make_shared<Sequential>(std::make_shared<ReLU>(), std::make_shared<Dropout>(0.2)).
  template <UnaryForward... M>
  requires(sizeof...(M) > 0) explicit Sequential(std::shared_ptr<M>... modules)
      : UnaryModule("Sequential") {
    (push_back(AnyModule(std::move(modules))), ...);
  }
  /// Appends a child, named by its position.
  void push_back(AnyModule module);
  /// Feeds x through every child in order.
  Tensor forward(const Tensor& x) const override;
  /// Number of children.
  std::size_t size() const { return items_.size(); }
  /// Child i (negative i counts from the end); throws when out of range.
  std::shared_ptr<Module> operator[](std::int64_t i) const;
  /// Child i as an M; throws when out of range or of another type.
  template <typename M>
  std::shared_ptr<M> ptr(std::int64_t i) const {
    return checked_cast<M>((*this)[i], "Sequential");
  }

 private:
  std::vector<AnyModule> items_;
};

/// An indexed list of modules, as torch.nn.ModuleList; children are named "0", "1", ...
class ModuleList : public Module {
 public:
  /// An empty list.
  ModuleList() : Module("ModuleList") {}
  /// ModuleList{std::make_shared<Linear>(2, 2), std::make_shared<Tanh>()}.
  ModuleList(std::initializer_list<std::shared_ptr<Module>> modules);
  /// Appends a module (registered under its position); throws for a null pointer.
  void push_back(std::shared_ptr<Module> module);
  /// Number of modules.
  std::size_t size() const { return modules_.size(); }
  /// Module i (negative i counts from the end); throws when out of range.
  std::shared_ptr<Module> operator[](std::int64_t i) const;
  /// Module i as an M, e.g. list.ptr<Linear>(0)->forward(x); throws when of another type.
  template <typename M>
  std::shared_ptr<M> ptr(std::int64_t i) const {
    return checked_cast<M>((*this)[i], "ModuleList");
  }
  /// Iteration over the modules in order.
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const { return modules_.begin(); }
  /// End of the iteration.
  std::vector<std::shared_ptr<Module>>::const_iterator end() const { return modules_.end(); }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace minigrad::nn
