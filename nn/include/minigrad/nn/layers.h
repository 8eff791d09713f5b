#pragma once
// Layers (torch.nn): Embedding, LayerNorm, RMSNorm, Dropout, Identity, Flatten, Unflatten and
// the activations, with their functional forms in nn::functional. The containers (Sequential,
// ModuleList, ...) are in containers.h.
//
// nn::Module has no virtual forward (modules differ in what they take), so every single-input
// layer here derives from UnaryModule. Options come as libtorch's options structs
// (`nn::Flatten(nn::FlattenOptions().start_dim(2))`) or, where Python has positional arguments,
// as constructor arguments (`nn::Dropout(0.2)`, `nn::ReLU(/*inplace=*/true)`).
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "minigrad/nn/module.h"
#include "minigrad/nn/options.h"

namespace minigrad::nn {

namespace functional {

/// Rows of weight [num_embeddings, dim] picked by the int64 indices (any shape): [..., dim].
/// Throws for an index outside [0, num_embeddings). The gradient flows into weight only, and
/// not into row padding_idx (negative counts from the end), as F.embedding.
Tensor embedding(const Tensor& input, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx = std::nullopt);
/// (x - mean) / sqrt(var + eps) * weight + bias over the last normalized_shape.size() dims, whose
/// sizes must equal normalized_shape (biased variance). weight and bias (shape normalized_shape)
/// are optional. A fused, numerically stable kernel with its own backward
/// (NativeLayerNormBackward0).
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// x / sqrt(mean(x^2) + eps) * weight over the last normalized_shape.size() dims, whose sizes
/// must equal normalized_shape, as PyTorch 2.4's F.rms_norm; eps defaults to the machine epsilon
/// of x's dtype (torch.finfo(x.dtype).eps), weight (shape normalized_shape) is optional.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                std::optional<double> eps = std::nullopt);
/// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p);
/// otherwise returns x. Throws unless 0 <= p <= 1. The mask is drawn from the default generator
/// (see Note [Dropout stream] in layers.cpp: PyTorch's exact mask is not reproduced). With
/// inplace, x itself is scaled (x.mul_(mask)) and returned.
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, bool inplace = false);

}  // namespace functional

/// A module with one tensor in and one tensor out; Sequential chains them.
class UnaryModule : public Module {
 public:
  using Module::Module;
  /// The layer's computation.
  virtual Tensor forward(const Tensor& x) const = 0;
  /// forward(x) through the module's hooks (Note [Forward hooks]).
  Tensor operator()(const Tensor& x) const {
    return call_with_hooks([this](const Tensor& a) { return forward(a); }, x);
  }
};

/// nn::Embedding's options, as libtorch's: EmbeddingOptions(10, 3).padding_idx(0).
struct EmbeddingOptions {
  EmbeddingOptions(std::int64_t num_embeddings, std::int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  MG_ARG(std::int64_t, num_embeddings);
  MG_ARG(std::int64_t, embedding_dim);
  /// The row that gets no gradient and starts as zeros (negative counts from the end).
  MG_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;
  /// The table itself, [num_embeddings, embedding_dim], instead of a random one (PyTorch's
  /// _weight; the module's weight shares its storage).
  MG_ARG(Tensor, _weight);
  /// Before each lookup, every looked-up row whose norm_type-norm exceeds max_norm is scaled, in
  /// place, to norm max_norm (PyTorch's embedding_renorm_: times max_norm / (norm + 1e-7)).
  MG_ARG(std::optional<double>, max_norm) = std::nullopt;
  MG_ARG(double, norm_type) = 2.0;
  /// Divides each row's gradient by how often its index occurs in the batch.
  MG_ARG(bool, scale_grad_by_freq) = false;
};

/// Embedding::from_pretrained's options, as libtorch's.
struct EmbeddingFromPretrainedOptions {
  /// Whether the weight stays fixed (requires_grad false).
  MG_ARG(bool, freeze) = true;
  MG_ARG(std::optional<std::int64_t>, padding_idx) = std::nullopt;
  MG_ARG(std::optional<double>, max_norm) = std::nullopt;
  MG_ARG(double, norm_type) = 2.0;
  MG_ARG(bool, scale_grad_by_freq) = false;
};

/// A lookup table of num_embeddings vectors of size embedding_dim, as torch.nn.Embedding.
class EmbeddingImpl : public Cloneable<EmbeddingImpl, UnaryModule> {
 public:
  /// weight [num_embeddings, embedding_dim] ~ N(0, 1), drawn as PyTorch draws it.
  EmbeddingImpl(std::int64_t num_embeddings, std::int64_t embedding_dim,
                Dtype dtype = get_default_dtype());
  /// The same with padding_idx (its row zeroed after the draw, as PyTorch) or a given _weight
  /// (nothing drawn). Throws for a padding_idx outside [-num_embeddings, num_embeddings) or a
  /// _weight of another shape.
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  /// int64 indices of any shape -> [..., embedding_dim].
  Tensor forward(const Tensor& indices) const override;
  /// Registers a new weight and draws it (libtorch's reset(); clone() calls it, Note [Cloning]).
  void reset() override;
  /// Draws new initial values (PyTorch's reset_parameters).
  void reset_parameters();
  /// "num_embeddings, embedding_dim", e.g. "Embedding(10, 3, padding_idx=0)".
  std::string extra_repr() const override;

  /// Number of rows of the table.
  std::int64_t num_embeddings;
  /// Size of each row.
  std::int64_t embedding_dim;
  /// The row without gradient, in [0, num_embeddings), or nullopt.
  std::optional<std::int64_t> padding_idx;
  /// EmbeddingOptions' max_norm, norm_type and scale_grad_by_freq (PyTorch's).
  std::optional<double> max_norm;
  double norm_type = 2.0;
  bool scale_grad_by_freq = false;
  /// The table, [num_embeddings, embedding_dim].
  Tensor weight;

 private:
  Dtype dtype_ = get_default_dtype();  // the dtype reset() makes the weight in
};

/// The holder of EmbeddingImpl, with from_pretrained.
class Embedding : public ModuleHolder<EmbeddingImpl> {
 public:
  using ModuleHolder<EmbeddingImpl>::ModuleHolder;
  using Impl = EmbeddingImpl;
  /// An Embedding whose weight is embeddings (2-D; shared, not copied), requires_grad unless
  /// freeze, as nn.Embedding.from_pretrained. Draws no random numbers.
  static Embedding from_pretrained(const Tensor& embeddings,
                                   const EmbeddingFromPretrainedOptions& options = {});
  /// Python's from_pretrained(embeddings, freeze, padding_idx).
  static Embedding from_pretrained(const Tensor& embeddings, bool freeze,
                                   std::optional<std::int64_t> padding_idx = std::nullopt);
};

/// Layer normalisation over the last dims, as torch.nn.LayerNorm.
class LayerNormImpl : public Cloneable<LayerNormImpl, UnaryModule> {
 public:
  /// Normalises over dims of sizes normalized_shape; weight ones and bias zeros of that shape
  /// when elementwise_affine (otherwise neither exists).
  explicit LayerNormImpl(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true,
                         Dtype dtype = get_default_dtype());
  /// Normalises over the last dim, of size normalized_size.
  explicit LayerNormImpl(std::int64_t normalized_size, double eps = 1e-5,
                         bool elementwise_affine = true, Dtype dtype = get_default_dtype());
  /// x [..., *normalized_shape] -> same shape.
  Tensor forward(const Tensor& x) const override;
  /// Registers new weight and bias tensors (when elementwise_affine) and resets them (libtorch's
  /// reset(); clone() calls it, Note [Cloning]).
  void reset() override;
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

 private:
  Dtype dtype_;  // the dtype reset() makes the parameters in
};
MG_MODULE(LayerNorm);

/// nn::RMSNorm's options: RMSNormOptions({4}).eps(1e-6).elementwise_affine(false).
struct RMSNormOptions {
  RMSNormOptions(Shape normalized_shape)  // NOLINT: implicit, as libtorch's options
      : normalized_shape_(std::move(normalized_shape)) {}
  MG_ARG(Shape, normalized_shape);
  /// nullopt: the machine epsilon of the input's dtype.
  MG_ARG(std::optional<double>, eps) = std::nullopt;
  /// Whether weight (ones, shape normalized_shape) exists.
  MG_ARG(bool, elementwise_affine) = true;
};

/// Root-mean-square normalisation over the last dims, as PyTorch 2.4's torch.nn.RMSNorm
/// (PyTorch 1.13 has none): x / sqrt(mean(x^2) + eps) * weight.
class RMSNormImpl : public Cloneable<RMSNormImpl, UnaryModule> {
 public:
  /// Throws for an empty or negative normalized_shape.
  explicit RMSNormImpl(const RMSNormOptions& options, Dtype dtype = get_default_dtype());
  /// x [..., *normalized_shape] -> same shape.
  Tensor forward(const Tensor& x) const override;
  /// Registers a new weight (when elementwise_affine) and resets it (libtorch's reset(); clone()
  /// calls it, Note [Cloning]).
  void reset() override;
  /// Resets weight to ones.
  void reset_parameters();
  /// "(4,), eps=None, elementwise_affine=True".
  std::string extra_repr() const override;

  RMSNormOptions options;
  /// Scale, shape normalized_shape (undefined without elementwise_affine).
  Tensor weight;

 private:
  Dtype dtype_;  // the dtype reset() makes the weight in
};
MG_MODULE(RMSNorm);

/// nn::Dropout's options: DropoutOptions(0.2).inplace(true), or DropoutOptions().p(0.2).
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(double, p);
  MG_ARG(bool, inplace) = false;
};

/// Randomly zeroes elements in training mode, identity in eval mode, as torch.nn.Dropout.
class DropoutImpl : public CopyCloneable<DropoutImpl, UnaryModule> {
 public:
  /// Throws unless 0 <= p <= 1.
  explicit DropoutImpl(const DropoutOptions& options = {});
  /// Python's Dropout(p, inplace).
  DropoutImpl(double p, bool inplace);
  /// functional::dropout(x, p, is_training(), inplace).
  Tensor forward(const Tensor& x) const override;
  /// "p=0.5, inplace=False".
  std::string extra_repr() const override;

  /// Probability of zeroing an element.
  double p;
  /// Whether forward scales its input in place.
  bool inplace;
};
MG_MODULE(Dropout);

/// nn::ReLU's options: ReLUOptions().inplace(true), or ReLUOptions(true).
struct ReLUOptions {
  ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(bool, inplace);
};

/// max(x, 0), as torch.nn.ReLU.
class ReLUImpl : public CopyCloneable<ReLUImpl, UnaryModule> {
 public:
  /// nn::ReLU(), nn::ReLU(/*inplace=*/true), nn::ReLU(nn::ReLUOptions().inplace(true)).
  explicit ReLUImpl(const ReLUOptions& options = {})
      : CopyCloneable("ReLU"), inplace(options.inplace()) {}
  /// relu(x), or x.relu_() with inplace.
  Tensor forward(const Tensor& x) const override;
  /// "inplace=True" when in place, else nothing (as PyTorch).
  std::string extra_repr() const override;

  /// Whether forward writes its input.
  bool inplace;
};
MG_MODULE(ReLU);

/// GELU, exact (approximate = "none") or with the tanh formula ("tanh"), as torch.nn.GELU.
class GELUImpl : public CopyCloneable<GELUImpl, UnaryModule> {
 public:
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
class TanhImpl : public CopyCloneable<TanhImpl, UnaryModule> {
 public:
  TanhImpl() : CopyCloneable("Tanh") {}
  /// tanh(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(Tanh);

/// 1 / (1 + exp(-x)), as torch.nn.Sigmoid.
class SigmoidImpl : public CopyCloneable<SigmoidImpl, UnaryModule> {
 public:
  SigmoidImpl() : CopyCloneable("Sigmoid") {}
  /// sigmoid(x).
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(Sigmoid);

/// x * sigmoid(x), as torch.nn.SiLU(inplace).
class SiLUImpl : public CopyCloneable<SiLUImpl, UnaryModule> {
 public:
  explicit SiLUImpl(bool inplace_ = false) : CopyCloneable("SiLU"), inplace(inplace_) {}
  /// silu(x), or x.mul_(sigmoid(x)) with inplace.
  Tensor forward(const Tensor& x) const override;
  /// "inplace=True" when in place, else nothing (as PyTorch).
  std::string extra_repr() const override;

  /// Whether forward writes its input.
  bool inplace;
};
MG_MODULE(SiLU);

/// x * tanh(softplus(x)), as torch.nn.Mish(inplace).
class MishImpl : public CopyCloneable<MishImpl, UnaryModule> {
 public:
  explicit MishImpl(bool inplace_ = false) : CopyCloneable("Mish"), inplace(inplace_) {}
  /// mish(x), or x.mul_(tanh(softplus(x))) with inplace.
  Tensor forward(const Tensor& x) const override;
  /// "inplace=True" when in place, else nothing (as PyTorch).
  std::string extra_repr() const override;

  /// Whether forward writes its input.
  bool inplace;
};
MG_MODULE(Mish);

/// nn::Softmax's options: SoftmaxOptions(1).
struct SoftmaxOptions {
  SoftmaxOptions(std::int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(std::int64_t, dim);
};

/// softmax over dim, as torch.nn.Softmax(dim).
class SoftmaxImpl : public CopyCloneable<SoftmaxImpl, UnaryModule> {
 public:
  /// nn::Softmax(1) or nn::Softmax(nn::SoftmaxOptions(1)).
  explicit SoftmaxImpl(const SoftmaxOptions& opts) : CopyCloneable("Softmax"), options(opts) {}
  /// softmax(x, dim).
  Tensor forward(const Tensor& x) const override;
  /// "dim=1".
  std::string extra_repr() const override;

  SoftmaxOptions options;
};
MG_MODULE(Softmax);

/// nn::LogSoftmax's options: LogSoftmaxOptions(1).
struct LogSoftmaxOptions {
  LogSoftmaxOptions(std::int64_t dim) : dim_(dim) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(std::int64_t, dim);
};

/// log_softmax over dim, as torch.nn.LogSoftmax(dim).
class LogSoftmaxImpl : public CopyCloneable<LogSoftmaxImpl, UnaryModule> {
 public:
  /// nn::LogSoftmax(1) or nn::LogSoftmax(nn::LogSoftmaxOptions(1)).
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& opts)
      : CopyCloneable("LogSoftmax"), options(opts) {}
  /// log_softmax(x, dim).
  Tensor forward(const Tensor& x) const override;
  /// "dim=1".
  std::string extra_repr() const override;

  LogSoftmaxOptions options;
};
MG_MODULE(LogSoftmax);

/// Returns its input, as torch.nn.Identity.
class IdentityImpl : public CopyCloneable<IdentityImpl, UnaryModule> {
 public:
  IdentityImpl() : CopyCloneable("Identity") {}
  /// x.
  Tensor forward(const Tensor& x) const override;
};
MG_MODULE(Identity);

/// nn::Flatten's options: FlattenOptions().start_dim(2).end_dim(-1).
struct FlattenOptions {
  MG_ARG(std::int64_t, start_dim) = 1;
  MG_ARG(std::int64_t, end_dim) = -1;
};

/// Flattens dims start_dim..end_dim into one, as torch.nn.Flatten (start_dim 1: keeps the batch).
class FlattenImpl : public CopyCloneable<FlattenImpl, UnaryModule> {
 public:
  explicit FlattenImpl(const FlattenOptions& opts = {}) : CopyCloneable("Flatten"), options(opts) {}
  /// Python's Flatten(start_dim, end_dim).
  FlattenImpl(std::int64_t start_dim, std::int64_t end_dim = -1)
      : FlattenImpl(FlattenOptions().start_dim(start_dim).end_dim(end_dim)) {}
  /// flatten(x, start_dim, end_dim).
  Tensor forward(const Tensor& x) const override;
  /// "start_dim=1, end_dim=-1".
  std::string extra_repr() const override;

  FlattenOptions options;
};
MG_MODULE(Flatten);

/// nn::Unflatten's options: UnflattenOptions(1, {2, 3}).
struct UnflattenOptions {
  UnflattenOptions(std::int64_t dim, Shape sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  MG_ARG(std::int64_t, dim);
  /// The sizes dim becomes; one may be -1 (inferred).
  MG_ARG(Shape, sizes);
};

/// Splits dim into sizes, as torch.nn.Unflatten(dim, unflattened_size).
class UnflattenImpl : public CopyCloneable<UnflattenImpl, UnaryModule> {
 public:
  explicit UnflattenImpl(const UnflattenOptions& opts)
      : CopyCloneable("Unflatten"), options(opts) {}
  UnflattenImpl(std::int64_t dim, Shape sizes) : UnflattenImpl(UnflattenOptions(dim, sizes)) {}
  /// x [..., n, ...] -> [..., *sizes, ...]; throws when the sizes do not multiply to n.
  Tensor forward(const Tensor& x) const override;
  /// "dim=1, unflattened_size=(2, 3)".
  std::string extra_repr() const override;

  UnflattenOptions options;
};
MG_MODULE(Unflatten);

}  // namespace minigrad::nn
