// Layers: embedding, layer_norm (a fused kernel with its own backward), dropout, the activation
// modules, Sequential and ModuleList.
#include "minigrad/nn/layers.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "minigrad/custom_function.h"
#include "minigrad/dispatch.h"
#include "minigrad/nn/init.h"

namespace minigrad::nn {

using Grads = std::vector<Tensor>;

namespace {

/// A double as Python's repr writes it: the shortest round-trip digits, positional for exponents
/// in [-4, 16) (with ".0" for whole numbers), scientific otherwise: 0.5, 0.1, 0.0001, 1e-05.
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

// nn's fused primitives are custom Functions on the public API (minigrad/custom_function.h),
// named as PyTorch names their nodes.

/// Rows of weight gathered at flat's (checked) indices, shaped `shape`.
struct EmbeddingFn : autograd::Function<EmbeddingFn> {
  static constexpr const char* node_name = "EmbeddingBackward0";
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& weight, const Tensor& flat,
                        const Shape& shape) {
    const std::int64_t dim = weight.size(1);
    const std::int64_t* idx = flat.data_ptr<std::int64_t>();
    Tensor w = weight.contiguous();
    Tensor out = empty(shape, weight.dtype());
    dispatch(weight.dtype(), [&]<typename T>() {
      const T* src = w.data_ptr<T>();
      T* dst = out.data_ptr<T>();
      for (std::int64_t i = 0; i < flat.numel(); ++i)
        std::copy(src + idx[i] * dim, src + (idx[i] + 1) * dim, dst + i * dim);
    });
    ctx->save_for_backward({flat});
    ctx->saved_data["num"] = weight.size(0);
    return out;
  }
  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> grads) {
    // grad [..., dim] -> rows [N, dim] added at the N indices -> [num, dim]
    const Tensor& g = grads[0];
    Tensor indices = ctx->get_saved_variables()[0];
    std::int64_t dim = g.size(-1);
    Tensor rows = g.reshape({indices.numel(), dim});
    Tensor zero = zeros({ctx->saved_data["num"].toInt(), dim}, g.dtype());
    return {index_add(zero, 0, indices, rows), Tensor(), Tensor()};
  }
};

Tensor embedding_impl(const Tensor& input, const Tensor& weight, const char* op) {
  MG_CHECK(input.defined() && weight.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(input.dtype() == kInt64, op, "expected int64 indices, got ", dtype_name(input.dtype()));
  MG_CHECK(weight.dim() == 2, op, "weight must be 2-D [num_embeddings, embedding_dim], got shape ",
           weight.shape());
  const std::int64_t num = weight.size(0), dim = weight.size(1);
  Tensor flat = input.reshape({input.numel()}).contiguous();
  const std::int64_t* idx = flat.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < flat.numel(); ++i)
    MG_CHECK(idx[i] >= 0 && idx[i] < num, op, "index ", idx[i], " is out of range for ", num,
             " embeddings");
  Shape shape = input.shape();
  shape.push_back(dim);
  return EmbeddingFn::apply(weight, flat, shape);
}

/// layer_norm over the last k dims of x (arguments checked), with optional weight and bias.
struct LayerNormFn : autograd::Function<LayerNormFn> {
  static constexpr const char* node_name = "NativeLayerNormBackward0";
  static Tensor forward(autograd::AutogradContext* ctx, const Tensor& x, const Tensor& weight,
                        const Tensor& bias, std::int64_t k, double eps) {
    // Each row of n elements (the normalised dims) gets a mean and rstd = 1 / sqrt(var + eps).
    Shape stat_shape = x.shape();
    std::int64_t rows = 1, n = 1;
    for (std::int64_t i = 0; i < x.dim(); ++i) {
      if (i < x.dim() - k) {
        rows *= x.size(i);
      } else {
        n *= x.size(i);
        stat_shape[static_cast<std::size_t>(i)] = 1;
      }
    }
    Tensor xc = x.contiguous();
    Tensor w = weight.defined() ? weight.contiguous() : Tensor();
    Tensor b = bias.defined() ? bias.contiguous() : Tensor();
    Tensor out = empty(x.shape(), x.dtype());
    // NOTE: the statistics are kept in float64 whatever the input dtype: backward rebuilds x_hat
    // from them, and a float32 mean of 1e4-scale rows would lose the digits that matter.
    Tensor mean_t = empty(stat_shape, kFloat64);
    Tensor rstd_t = empty(stat_shape, kFloat64);
    dispatch_floating(x.dtype(), "layer_norm", [&]<typename T>() {
      const T* px = xc.data_ptr<T>();
      const T* pw = w.defined() ? w.data_ptr<T>() : nullptr;
      const T* pb = b.defined() ? b.data_ptr<T>() : nullptr;
      T* po = out.data_ptr<T>();
      double* pm = mean_t.data_ptr<double>();
      double* pr = rstd_t.data_ptr<double>();
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* row = px + r * n;
        T* orow = po + r * n;
        // NOTE: Welford's one-pass update in double: no E[x^2] - E[x]^2 cancellation, so rows
        // of 1e4 + small values keep their variance. The variance is biased (divided by n), as
        // PyTorch.
        double mean = 0, m2 = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          double v = static_cast<double>(row[j]);
          double delta = v - mean;
          mean += delta / static_cast<double>(j + 1);
          m2 += delta * (v - mean);
        }
        double rstd = 1.0 / std::sqrt(m2 / static_cast<double>(n) + eps);
        pm[r] = mean;
        pr[r] = rstd;
        for (std::int64_t j = 0; j < n; ++j) {
          double y = (static_cast<double>(row[j]) - mean) * rstd;
          if (pw) y *= static_cast<double>(pw[j]);
          if (pb) y += static_cast<double>(pb[j]);
          orow[j] = static_cast<T>(y);
        }
      }
    });
    // x_hat (from x and the statistics) feeds grad_x and grad_weight; weight only grad_x.
    bool x_hat_needed = ctx->needs_input_grad(0) || ctx->needs_input_grad(1);
    ctx->save_for_backward({x_hat_needed ? x : Tensor(),
                            ctx->needs_input_grad(0) ? weight : Tensor(),
                            x_hat_needed ? mean_t : Tensor(), x_hat_needed ? rstd_t : Tensor()});
    Shape dims;
    for (std::int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
    ctx->saved_data["dims"] = dims;
    ctx->saved_data["eps"] = eps;
    return out;
  }

  static std::vector<Tensor> backward(autograd::AutogradContext* ctx, std::vector<Tensor> grads) {
    const Tensor& g = grads[0];
    auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &gamma = saved[1], &mean64 = saved[2], &rstd64 = saved[3];
    if (!input.defined()) return {Tensor(), Tensor(), g, Tensor(), Tensor()};  // only bias
    Shape dims = ctx->saved_data["dims"].toIntVector();
    double eps = ctx->saved_data["eps"].toDouble();
    Tensor x_hat, rstd;
    if (is_grad_enabled()) {
      // create_graph: rebuild the statistics from input with public ops, so that second
      // derivatives see how mean and rstd depend on input.
      Tensor centered = input - mean(input, dims, /*keepdim=*/true);
      rstd = rsqrt(mean(centered * centered, dims, /*keepdim=*/true) + eps);
      x_hat = centered * rstd;
    } else {
      x_hat = ((input.to(kFloat64) - mean64) * rstd64).to(input.dtype());
      rstd = rstd64.to(input.dtype());
    }
    // g [..., *ns] -> grad_x [..., *ns], with g_hat = g * gamma and row means:
    // rstd * (g_hat - mean(g_hat) - x_hat * mean(g_hat * x_hat))
    Tensor grad_x;
    if (ctx->needs_input_grad(0)) {
      Tensor g_hat = gamma.defined() ? g * gamma : g;
      grad_x = rstd * (g_hat - mean(g_hat, dims, true) - x_hat * mean(g_hat * x_hat, dims, true));
    }
    // grad_weight = sum(g * x_hat) and grad_bias = sum(g) over the leading dims: returned shaped
    // like the output, the engine sums them to normalized_shape (Note [The engine]).
    return {grad_x, ctx->needs_input_grad(1) ? g * x_hat : Tensor(),
            ctx->needs_input_grad(2) ? g : Tensor(), Tensor(), Tensor()};
  }
};

void check_dropout_p(double p, const char* op) {
  MG_CHECK(p >= 0 && p <= 1, op, "dropout probability has to be between 0 and 1, but got ", p);
}

std::int64_t wrap_index(std::int64_t i, std::size_t size, const char* op) {
  auto n = static_cast<std::int64_t>(size);
  MG_CHECK(i >= -n && i < n, op, "index ", i, " is out of range for ", n, " modules");
  return i < 0 ? i + n : i;
}

}  // namespace

// ---------------------------------------------------------------- functional

namespace functional {

Tensor embedding(const Tensor& input, const Tensor& weight) {
  return embedding_impl(input, weight, "embedding");
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  const char* op = "layer_norm";
  MG_CHECK(x.defined(), op, "got an undefined input");
  MG_CHECK(x.is_floating_point(), op, "expected a floating-point input, got ",
           dtype_name(x.dtype()));
  const auto k = static_cast<std::int64_t>(normalized_shape.size());
  MG_CHECK(k >= 1, op, "normalized_shape must have at least 1 dim, got ", normalized_shape);
  bool trailing_match = x.dim() >= k;
  for (std::int64_t i = 0; trailing_match && i < k; ++i)
    trailing_match = x.size(x.dim() - k + i) == normalized_shape[static_cast<std::size_t>(i)];
  MG_CHECK(trailing_match, op, "normalized_shape is ", normalized_shape,
           " but the input has shape ", x.shape(), ": its last ", k, " dims must equal it");
  using Param = std::pair<const Tensor*, const char*>;
  for (const auto& [t, name] : {Param{&weight, "weight"}, Param{&bias, "bias"}}) {
    if (!t->defined()) continue;
    MG_CHECK(t->shape() == normalized_shape, op, name, " has shape ", t->shape(),
             " but normalized_shape is ", normalized_shape);
    MG_CHECK(t->dtype() == x.dtype(), op, name, " is ", dtype_name(t->dtype()),
             " but the input is ", dtype_name(x.dtype()));
  }
  return LayerNormFn::apply(x, weight, bias, k, eps);
}

// Note [Dropout stream]
// The mask keeps an element when a uniform draw U in [0, 1) (mg::rand, in the input's dtype,
// from the default generator) satisfies U >= p, which has probability 1 - p. PyTorch draws its
// mask with bernoulli_(1 - p), whose stream differs, so a seed gives the same statistics as
// PyTorch but not the same mask.
Tensor dropout(const Tensor& x, double p, bool training) {
  MG_CHECK(x.defined(), "dropout", "got an undefined input");
  check_dropout_p(p, "dropout");
  if (!training || p == 0) return x;
  MG_CHECK(x.is_floating_point(), "dropout", "expected a floating-point input, got ",
           dtype_name(x.dtype()));
  if (p == 1) return x * 0.0;  // as PyTorch: everything dropped, the gradient is zero
  Tensor scaled_mask;
  {
    NoGradGuard no_grad;
    scaled_mask = (rand(x.shape(), x.dtype()) >= p).to(x.dtype()) * (1.0 / (1.0 - p));
  }
  return x * scaled_mask;
}

}  // namespace functional

// ---------------------------------------------------------------- Embedding

EmbeddingImpl::EmbeddingImpl(std::int64_t num, std::int64_t dim, Dtype dtype)
    : UnaryModule("Embedding"), num_embeddings(num), embedding_dim(dim) {
  MG_CHECK(num >= 0 && dim >= 0, "Embedding", "num_embeddings (", num, ") and embedding_dim (", dim,
           ") must be non-negative");
  MG_CHECK(is_floating_point(dtype), "Embedding", "weight must be floating-point, got ",
           dtype_name(dtype));
  weight = register_parameter("weight", empty({num, dim}, dtype));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() { init::normal_(weight); }

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  return embedding_impl(indices, weight, "Embedding");
}

std::string EmbeddingImpl::extra_repr() const {
  return std::to_string(num_embeddings) + ", " + std::to_string(embedding_dim);
}

// ---------------------------------------------------------------- LayerNorm

LayerNormImpl::LayerNormImpl(Shape shape, double eps_, bool affine, Dtype dtype)
    : UnaryModule("LayerNorm"),
      normalized_shape(std::move(shape)),
      eps(eps_),
      elementwise_affine(affine) {
  MG_CHECK(!normalized_shape.empty(), "LayerNorm",
           "normalized_shape must have at least 1 dim, got ()");
  for (std::int64_t s : normalized_shape)
    MG_CHECK(s >= 0, "LayerNorm", "normalized_shape ", normalized_shape,
             " must not have negative sizes");
  MG_CHECK(is_floating_point(dtype), "LayerNorm", "parameters must be floating-point, got ",
           dtype_name(dtype));
  if (affine) {
    weight = register_parameter("weight", empty(normalized_shape, dtype));
    bias = register_parameter("bias", empty(normalized_shape, dtype));
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

// ---------------------------------------------------------------- Dropout and activations

DropoutImpl::DropoutImpl(double p_) : UnaryModule("Dropout"), p(p_) {
  check_dropout_p(p, "Dropout");
}

Tensor DropoutImpl::forward(const Tensor& x) const {
  return functional::dropout(x, p, is_training());
}

std::string DropoutImpl::extra_repr() const {
  return "p=" + python_float_repr(p) + ", inplace=False";
}

Tensor ReLUImpl::forward(const Tensor& x) const { return relu(x); }

GELUImpl::GELUImpl(std::string approx) : UnaryModule("GELU"), approximate(std::move(approx)) {
  MG_CHECK(approximate == "none" || approximate == "tanh", "GELU",
           "approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
}

Tensor GELUImpl::forward(const Tensor& x) const { return gelu(x, approximate); }

std::string GELUImpl::extra_repr() const { return "approximate='" + approximate + "'"; }

Tensor TanhImpl::forward(const Tensor& x) const { return tanh(x); }

Tensor SigmoidImpl::forward(const Tensor& x) const { return sigmoid(x); }

// ---------------------------------------------------------------- Sequential and ModuleList

SequentialImpl::SequentialImpl(std::initializer_list<AnyModule> modules)
    : UnaryModule("Sequential") {
  for (const auto& m : modules) push_back(m);
}

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> modules)
    : UnaryModule("Sequential") {
  for (const auto& m : modules) push_back(m.name, m.module);
}

void SequentialImpl::push_back(AnyModule module) {
  push_back(std::to_string(items_.size()), std::move(module));
}

void SequentialImpl::push_back(const std::string& name, AnyModule module) {
  register_module(name, module.module());
  items_.push_back(std::move(module));
}

void SequentialImpl::extend(const SequentialImpl& other) {
  MG_CHECK(&other != this, "Sequential", "cannot extend a Sequential with itself");
  for (const auto& item : other.items_) push_back(item);
}

Tensor SequentialImpl::forward(const Tensor& x) const {
  Tensor y = x;
  for (const auto& item : items_) y = item.forward(y);
  return y;
}

std::shared_ptr<Module> SequentialImpl::operator[](std::int64_t i) const {
  return items_[static_cast<std::size_t>(wrap_index(i, items_.size(), "Sequential"))].module();
}

ModuleListImpl::ModuleListImpl(std::initializer_list<ModulePtr> modules) : Module("ModuleList") {
  for (const auto& m : modules) push_back(m.get());
}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  MG_CHECK(module != nullptr, "ModuleList", "got a null module");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert(std::int64_t index, std::shared_ptr<Module> module) {
  MG_CHECK(module != nullptr, "ModuleList", "got a null module");
  auto n = static_cast<std::int64_t>(modules_.size());
  MG_CHECK(index >= -n && index <= n, "ModuleList", "insert index ", index,
           " is out of range for a list of ", n, " modules");
  if (index < 0) index += n;
  modules_.insert(modules_.begin() + index, std::move(module));
  rename_children();
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  MG_CHECK(&other != this, "ModuleList", "cannot extend a ModuleList with itself");
  for (const auto& m : other.modules_) push_back(m);
}

void ModuleListImpl::rename_children() {
  // Children are named by position: re-register them all in the new order.
  for (std::size_t i = 0; i < modules_.size(); ++i) {
    std::string name = std::to_string(i);
    if (named_children().contains(name)) unregister_module(name);
  }
  for (std::size_t i = 0; i < modules_.size(); ++i) register_module(std::to_string(i), modules_[i]);
}

std::shared_ptr<Module> ModuleListImpl::operator[](std::int64_t i) const {
  return modules_[static_cast<std::size_t>(wrap_index(i, modules_.size(), "ModuleList"))];
}

// ---------------------------------------------------------------- clone

std::shared_ptr<Module> EmbeddingImpl::clone() const {
  return clone_with([&] { return std::make_shared<EmbeddingImpl>(num_embeddings, embedding_dim); });
}

std::shared_ptr<Module> LayerNormImpl::clone() const {
  return clone_with(
      [&] { return std::make_shared<LayerNormImpl>(normalized_shape, eps, elementwise_affine); });
}

std::shared_ptr<Module> DropoutImpl::clone() const {
  return clone_with([&] { return std::make_shared<DropoutImpl>(p); });
}

std::shared_ptr<Module> ReLUImpl::clone() const {
  return clone_with([] { return std::make_shared<ReLUImpl>(); });
}

std::shared_ptr<Module> GELUImpl::clone() const {
  return clone_with([&] { return std::make_shared<GELUImpl>(approximate); });
}

std::shared_ptr<Module> TanhImpl::clone() const {
  return clone_with([] { return std::make_shared<TanhImpl>(); });
}

std::shared_ptr<Module> SigmoidImpl::clone() const {
  return clone_with([] { return std::make_shared<SigmoidImpl>(); });
}

std::shared_ptr<Module> SequentialImpl::clone() const {
  return clone_with([&] {
    auto copy = std::make_shared<SequentialImpl>();
    auto names = named_children().keys();
    for (std::size_t i = 0; i < items_.size(); ++i) copy->push_back(names[i], items_[i].clone());
    return copy;
  });
}

std::shared_ptr<Module> ModuleListImpl::clone() const {
  return clone_with([&] {
    auto copy = std::make_shared<ModuleListImpl>();
    for (const auto& m : modules_) copy->push_back(m->clone());
    return copy;
  });
}

}  // namespace minigrad::nn
