// Layers: dropout, the functional embedding, layer_norm and rms_norm (forwarded to core's ops,
// minigrad/ops/nn.h), and the modules built on them and on the core ops (Embedding, LayerNorm,
// RMSNorm, activations, Identity, Flatten, Unflatten).
#include "minigrad/nn/layers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "minigrad/custom_function.h"
#include "minigrad/dispatch.h"
#include "minigrad/nn/aten.h"
#include "minigrad/nn/init.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/nn.h"
#include "minigrad/ops/random.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "repr.h"

namespace minigrad::nn {

using Grads = std::vector<Tensor>;

// Declared in repr.h: activation.cpp prints with it too.
std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e-05"
  std::size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  bool negative = mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa)
    if (c >= '0' && c <= '9') digits += c;
  if (exp < -4 || exp >= 16) return sci;  // to_chars already writes at least 2 exponent digits
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else {
    auto int_len = static_cast<std::size_t>(exp + 1);
    if (digits.size() <= int_len) {
      out = digits + std::string(int_len - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  }
  return negative ? "-" + out : out;
}

namespace {

/// padding_idx in [0, num) (negative counts from the end); throws naming op otherwise.
std::int64_t wrap_padding_idx(std::int64_t padding_idx, std::int64_t num, const char* op) {
  MG_CHECK(padding_idx >= -num && padding_idx < num, op, "padding_idx ", padding_idx,
           " is out of range for ", num, " embeddings (expected a value in [", -num, ", ", num,
           "))");
  return padding_idx < 0 ? padding_idx + num : padding_idx;
}

void check_dropout_p(double p, const char* op) {
  MG_CHECK(p >= 0 && p <= 1, op, "dropout probability has to be between 0 and 1, but got ", p);
}

/// x * m for the scaled mask m that dropout draws (Note [Fused dropout], core/src/random.cpp). The
/// node is PyTorch's: on CPU, F.dropout in training is the composite input * noise, whose node is
/// MulBackward0 saving the noise; its backward g * m is a mul, so create_graph works.
struct DropoutFn : autograd::Function<DropoutFn> {
  static constexpr const char* node_name = "MulBackward0";
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, double p) {
    auto [out, scaled_mask] = minigrad::detail::dropout_with_mask(x, p);
    ctx->save_for_backward({ctx->needs_input_grad(0) ? scaled_mask : Tensor()});
    return out;
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->get_saved_variables()[0], Tensor()};
  }
};

}  // namespace

// ---------------------------------------------------------------- functional

namespace functional {

// embedding, layer_norm and rms_norm are core ops (minigrad/ops/nn.h), so that their kernels live
// with core's.
Tensor embedding(const Tensor& input, const Tensor& weight,
                 std::optional<std::int64_t> padding_idx) {
  return minigrad::embedding(input, weight, padding_idx);
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return minigrad::layer_norm(x, normalized_shape, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  return minigrad::rms_norm(x, normalized_shape, weight, eps);
}

// Note [Dropout stream]
// The mask keeps an element when a uniform draw U in [0, 1) (mg::rand's, in the input's dtype,
// from the default generator) satisfies U >= p, which has probability 1 - p. PyTorch draws its
// mask with bernoulli_(1 - p), whose stream differs, so a seed gives the same statistics as
// PyTorch but not the same mask. (scaled_dot_product_attention's dropout_p draws PyTorch's own
// mask, Note [SDPA dropout] in functional.cpp: on the CPU, bernoulli_(1 - p) keeps where a
// float64 uniform is < 1 - p.)
Tensor dropout(const Tensor& x, double p, bool training, bool inplace) {
  MG_PROFILE_OP("dropout");
  MG_CHECK(x.defined(), "dropout", "got an undefined input");
  check_dropout_p(p, "dropout");
  if (!training || p == 0) return x;
  MG_CHECK(x.is_floating_point(), "dropout", "expected a floating-point input, got ",
           dtype_name(x.dtype()));
  // One fused pass draws the mask and applies it (Note [Fused dropout], core/src/random.cpp).
  if (!inplace && p < 1) return DropoutFn::apply(x, p);
  // p == 1 and inplace: x * mask or mul_ (with its in-place rules: version counter, leaf check).
  Tensor scaled_mask;
  {
    NoGradGuard no_grad;
    // As PyTorch: with p == 1 everything is dropped and the gradient is zero.
    scaled_mask = p == 1 ? zeros_like(x) : minigrad::detail::dropout_with_mask(x, p).second;
  }
  if (!inplace) return x * scaled_mask;
  Tensor out = x;
  out.mul_(scaled_mask);
  return out;
}

}  // namespace functional

// ---------------------------------------------------------------- Embedding

EmbeddingImpl::EmbeddingImpl(std::int64_t num, std::int64_t dim, Dtype dtype)
    : Cloneable("Embedding"), num_embeddings(num), embedding_dim(dim), dtype_(dtype) {
  MG_CHECK(num >= 0 && dim >= 0, "Embedding", "num_embeddings (", num, ") and embedding_dim (", dim,
           ") must be non-negative");
  MG_CHECK(is_floating_point(dtype), "Embedding", "weight must be floating-point, got ",
           dtype_name(dtype));
  reset();
}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options)
    : Cloneable("Embedding"),
      num_embeddings(options.num_embeddings()),
      embedding_dim(options.embedding_dim()) {
  const std::int64_t num = num_embeddings, dim = embedding_dim;
  MG_CHECK(num >= 0 && dim >= 0, "Embedding", "num_embeddings (", num, ") and embedding_dim (", dim,
           ") must be non-negative");
  if (options.padding_idx())
    padding_idx = wrap_padding_idx(*options.padding_idx(), num, "Embedding");
  MG_CHECK(!options.max_norm() || *options.max_norm() >= 0.0, "Embedding",
           "max_norm must be non-negative, got ", python_float_repr(*options.max_norm()));
  max_norm = options.max_norm();
  norm_type = options.norm_type();
  scale_grad_by_freq = options.scale_grad_by_freq();
  const Tensor& given = options._weight();
  if (!given.defined()) {
    reset();
    return;
  }
  MG_CHECK(given.shape() == (Shape{num, dim}), "Embedding", "_weight has shape ", given.shape(),
           " but num_embeddings and embedding_dim are (", num, ", ", dim, ")");
  MG_CHECK(given.is_floating_point(), "Embedding", "weight must be floating-point, got ",
           dtype_name(given.dtype()));
  weight = register_parameter("weight", given.detach());
}

void EmbeddingImpl::reset() {
  weight = register_parameter("weight", empty({num_embeddings, embedding_dim}, dtype_));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) {
    NoGradGuard no_grad;
    weight.select(0, *padding_idx).fill_(0.0);
  }
}

namespace {
// scale_grad_by_freq (nn::Embedding's option and ATen's embedding argument): each position's
// gradient divided by its index's count in the batch, before the rows add up.
void scale_grad_by_frequency(Tensor& out, const Tensor& indices, const Tensor& weight) {
  if (!out.requires_grad()) return;
  const Tensor flat = indices.reshape({-1});
  Tensor scale =
      ones({1}, weight.dtype()) /
      flat.bincount(std::nullopt, weight.size(0)).index_select(0, flat).to(weight.dtype());
  scale = scale.reshape(indices.shape()).unsqueeze(-1);
  out.register_hook([scale](const Tensor& g) { return g * scale; });
}
}  // namespace

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  if (max_norm && indices.defined() && indices.dtype() == kInt64 && indices.numel() > 0) {
    // PyTorch's embedding_renorm_: each distinct looked-up row, in place, without autograd.
    NoGradGuard no_grad;
    std::vector<std::int64_t> rows = indices.contiguous().to_vector<std::int64_t>();
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    for (std::int64_t i : rows) {
      MG_CHECK(i >= 0 && i < num_embeddings, "Embedding", "index ", i, " is out of range for ",
               num_embeddings, " embeddings");
      Tensor row = weight.select(0, i);
      const double norm = norm_type == 2.0
                              ? sqrt((row * row).sum()).item<double>()
                              : pow(pow(abs(row), norm_type).sum(), 1.0 / norm_type).item<double>();
      if (norm > *max_norm) row.mul_(*max_norm / (norm + 1e-7));
    }
  }
  Tensor out = minigrad::detail::embedding(indices, weight, padding_idx, "Embedding");
  if (scale_grad_by_freq) scale_grad_by_frequency(out, indices, weight);
  return out;
}

std::string EmbeddingImpl::extra_repr() const {
  std::string out = std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim) +
                    (padding_idx ? ", padding_idx=" + std::to_string(*padding_idx) : "");
  if (max_norm) out += ", max_norm=" + python_float_repr(*max_norm);
  if (norm_type != 2.0) out += ", norm_type=" + python_float_repr(norm_type);
  if (scale_grad_by_freq) out += ", scale_grad_by_freq=True";
  return out;
}

}  // namespace minigrad::nn

namespace minigrad {

// torch::embedding (minigrad/nn/aten.h): ATen's argument order over the same lookup and gradient
// scaling as nn::Embedding.
Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  MG_CHECK(!sparse, "embedding",
           "sparse=true is not supported (minigrad has no sparse tensors): call "
           "embedding(weight, indices, padding_idx, scale_grad_by_freq, /*sparse=*/false), whose "
           "dense gradient has the values of the sparse one's to_dense()");
  MG_CHECK(padding_idx >= -1, "embedding", "padding_idx ", padding_idx,
           " is invalid at ATen level: pass -1 for none or a row in [0, num_embeddings) "
           "(F::embedding counts a negative padding_idx from the end)");
  Tensor out = minigrad::detail::embedding(
      indices, weight, padding_idx >= 0 ? std::optional<std::int64_t>(padding_idx) : std::nullopt,
      "embedding");
  if (scale_grad_by_freq) nn::scale_grad_by_frequency(out, indices, weight);
  return out;
}

}  // namespace minigrad

namespace minigrad::nn {

Embedding Embedding::from_pretrained(const Tensor& embeddings,
                                     const EmbeddingFromPretrainedOptions& options) {
  MG_CHECK(embeddings.defined() && embeddings.dim() == 2, "Embedding.from_pretrained",
           "embeddings must be 2-D [num_embeddings, embedding_dim], got ",
           embeddings.defined() ? detail::shape_str(embeddings.shape()) : "an undefined tensor");
  Embedding out(EmbeddingOptions(embeddings.size(0), embeddings.size(1))
                    .padding_idx(options.padding_idx())
                    ._weight(embeddings)
                    .max_norm(options.max_norm())
                    .norm_type(options.norm_type())
                    .scale_grad_by_freq(options.scale_grad_by_freq()));
  out->weight.requires_grad_(!options.freeze());
  return out;
}

Embedding Embedding::from_pretrained(const Tensor& embeddings, bool freeze,
                                     std::optional<std::int64_t> padding_idx) {
  return from_pretrained(embeddings,
                         EmbeddingFromPretrainedOptions().freeze(freeze).padding_idx(padding_idx));
}

// ---------------------------------------------------------------- LayerNorm

LayerNormImpl::LayerNormImpl(Shape shape, double eps_, bool affine, Dtype dtype)
    : Cloneable("LayerNorm"),
      normalized_shape(std::move(shape)),
      eps(eps_),
      elementwise_affine(affine),
      dtype_(dtype) {
  MG_CHECK(!normalized_shape.empty(), "LayerNorm",
           "normalized_shape must have at least 1 dim, got ()");
  for (std::int64_t s : normalized_shape)
    MG_CHECK(s >= 0, "LayerNorm", "normalized_shape ", normalized_shape,
             " must not have negative sizes");
  MG_CHECK(is_floating_point(dtype), "LayerNorm", "parameters must be floating-point, got ",
           dtype_name(dtype));
  reset();
}

void LayerNormImpl::reset() {
  if (elementwise_affine) {
    weight = register_parameter("weight", empty(normalized_shape, dtype_));
    bias = register_parameter("bias", empty(normalized_shape, dtype_));
  } else {
    weight = bias = Tensor();
  }
  reset_parameters();
}

LayerNormImpl::LayerNormImpl(std::int64_t normalized_size, double eps_, bool affine, Dtype dtype)
    : LayerNormImpl(Shape{normalized_size}, eps_, affine, dtype) {}

void LayerNormImpl::reset_parameters() {
  if (!elementwise_affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& x) const {
  return functional::layer_norm(x, normalized_shape, weight, bias, eps);
}

std::string LayerNormImpl::extra_repr() const {
  return detail::shape_str(normalized_shape) + ", eps=" + python_float_repr(eps) +
         ", elementwise_affine=" + (elementwise_affine ? "True" : "False");
}

// ---------------------------------------------------------------- RMSNorm

RMSNormImpl::RMSNormImpl(const RMSNormOptions& opts, Dtype dtype)
    : Cloneable("RMSNorm"), options(opts), dtype_(dtype) {
  const Shape& shape = options.normalized_shape();
  MG_CHECK(!shape.empty(), "RMSNorm", "normalized_shape must have at least 1 dim, got ()");
  for (std::int64_t s : shape)
    MG_CHECK(s >= 0, "RMSNorm", "normalized_shape ", shape, " must not have negative sizes");
  MG_CHECK(is_floating_point(dtype), "RMSNorm", "parameters must be floating-point, got ",
           dtype_name(dtype));
  reset();
}

void RMSNormImpl::reset() {
  weight = options.elementwise_affine()
               ? register_parameter("weight", empty(options.normalized_shape(), dtype_))
               : Tensor();
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (options.elementwise_affine()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& x) const {
  return functional::rms_norm(x, options.normalized_shape(), weight, options.eps());
}

std::string RMSNormImpl::extra_repr() const {
  return detail::shape_str(options.normalized_shape()) +
         ", eps=" + (options.eps() ? python_float_repr(*options.eps()) : "None") +
         ", elementwise_affine=" + (options.elementwise_affine() ? "True" : "False");
}

// ---------------------------------------------------------------- Dropout and activations

DropoutImpl::DropoutImpl(const DropoutOptions& options)
    : CopyCloneable("Dropout"), p(options.p()), inplace(options.inplace()) {
  check_dropout_p(p, "Dropout");
}

DropoutImpl::DropoutImpl(double p_, bool inplace_)
    : DropoutImpl(DropoutOptions(p_).inplace(inplace_)) {}

Tensor DropoutImpl::forward(const Tensor& x) const {
  return functional::dropout(x, p, is_training(), inplace);
}

std::string DropoutImpl::extra_repr() const {
  return "p=" + python_float_repr(p) + ", inplace=" + (inplace ? "True" : "False");
}

Tensor ReLUImpl::forward(const Tensor& x) const {
  if (!inplace) return relu(x);
  Tensor out = x;
  out.relu_();
  return out;
}

std::string ReLUImpl::extra_repr() const { return inplace ? "inplace=True" : ""; }

GELUImpl::GELUImpl(std::string approx) : CopyCloneable("GELU"), approximate(std::move(approx)) {
  MG_CHECK(approximate == "none" || approximate == "tanh", "GELU",
           "approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
}

Tensor GELUImpl::forward(const Tensor& x) const { return gelu(x, approximate); }

std::string GELUImpl::extra_repr() const { return "approximate='" + approximate + "'"; }

Tensor TanhImpl::forward(const Tensor& x) const { return tanh(x); }

Tensor SigmoidImpl::forward(const Tensor& x) const { return sigmoid(x); }

// In place, silu and mish multiply x by a factor computed from it: x.mul_ keeps x's old value for
// the backward (Note [In-place ops]), and the factor's nodes saved no tensor that shares x's
// storage (sigmoid saves its output; softplus' ops work on a clone), so the write breaks none.
Tensor SiLUImpl::forward(const Tensor& x) const {
  if (!inplace) return silu(x);
  Tensor out = x;
  return out.mul_(sigmoid(x));
}

std::string SiLUImpl::extra_repr() const { return inplace ? "inplace=True" : ""; }

Tensor MishImpl::forward(const Tensor& x) const {
  if (!inplace) return mish(x);
  Tensor c = x.clone();
  Tensor out = x;
  return out.mul_(tanh(relu(c) + log(1 + exp(-abs(c)))));
}

std::string MishImpl::extra_repr() const { return inplace ? "inplace=True" : ""; }

Tensor SoftmaxImpl::forward(const Tensor& x) const { return softmax(x, options.dim()); }

std::string SoftmaxImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }

Tensor LogSoftmaxImpl::forward(const Tensor& x) const { return log_softmax(x, options.dim()); }

std::string LogSoftmaxImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }

Tensor IdentityImpl::forward(const Tensor& x) const { return x; }

Tensor FlattenImpl::forward(const Tensor& x) const {
  return flatten(x, options.start_dim(), options.end_dim());
}

std::string FlattenImpl::extra_repr() const {
  return "start_dim=" + std::to_string(options.start_dim()) +
         ", end_dim=" + std::to_string(options.end_dim());
}

Tensor UnflattenImpl::forward(const Tensor& x) const {
  MG_CHECK(x.defined(), "Unflatten", "got an undefined input");
  const std::int64_t n = x.dim(), d = options.dim();
  MG_CHECK(d >= -n && d < n, "Unflatten", "dim ", d, " is out of range for a tensor with ", n,
           " dims (expected a dim in [", -n, ", ", n - 1, "])");
  const auto dim = static_cast<std::size_t>(d < 0 ? d + n : d);
  const Shape& sizes = options.sizes();
  std::int64_t product = 1, inferred = 0;
  for (std::int64_t s : sizes) {
    if (s == -1)
      ++inferred;
    else
      product *= s;
  }
  const std::int64_t size = x.size(static_cast<std::int64_t>(dim));
  bool ok = inferred == 0 ? product == size : inferred == 1 && product > 0 && size % product == 0;
  MG_CHECK(ok, "Unflatten", "sizes ", sizes, " do not multiply to the size of dim ", d, " (", size,
           ") of the input of shape ", x.shape());
  Shape shape(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(dim));
  shape.insert(shape.end(), sizes.begin(), sizes.end());
  shape.insert(shape.end(), x.shape().begin() + static_cast<std::ptrdiff_t>(dim) + 1,
               x.shape().end());
  return x.reshape(shape);
}

std::string UnflattenImpl::extra_repr() const {
  return "dim=" + std::to_string(options.dim()) +
         ", unflattened_size=" + detail::shape_str(options.sizes());
}

}  // namespace minigrad::nn
