// Losses: cross_entropy (a fused log_softmax + loss kernel), nll_loss (its own kernel), kl_div and
// binary_cross_entropy_with_logits (composed from public ops and one stable softplus primitive),
// binary_cross_entropy (a Function with PyTorch's clamped formulas), and the pointwise regression
// losses l1_loss, smooth_l1_loss and huber_loss (composed from public ops).
// Semantics follow PyTorch 1.13 (aten/src/ATen/native/LossNLL.cpp, Loss.cpp).
#include "minigrad/nn/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "minigrad/custom_function.h"
#include "minigrad/dispatch.h"
#include "minigrad/nn/functional.h"
#include "minigrad/profiler.h"

namespace minigrad::nn::functional {

using autograd::AutogradContext;
using autograd::IValue;
using Grads = std::vector<Tensor>;

namespace {

enum class Reduction { kNone, kMean, kSum };

Reduction parse_reduction(const std::string& r, const char* op) {
  if (r == "mean") return Reduction::kMean;
  if (r == "sum") return Reduction::kSum;
  MG_CHECK(r == "none", op, "reduction must be \"mean\", \"sum\" or \"none\", got \"", r, "\"");
  return Reduction::kNone;
}

/// Where the classes are in a [N, C, d1, ...] or [C] input, and the loss's per-position shape.
struct ClassLayout {
  std::int64_t dim = 0;    // the class dim: 1, or 0 for a 1-D input
  std::int64_t C = 0;      // number of classes
  std::int64_t outer = 1;  // N
  std::int64_t inner = 1;  // d1 * d2 * ...
  Shape loss_shape;        // the input's shape without the class dim
};

ClassLayout class_layout(const Tensor& x, const char* op) {
  MG_CHECK(x.is_floating_point(), op, "input must be floating point, got ", dtype_name(x.dtype()));
  MG_CHECK(x.dim() >= 1, op, "input must have at least 1 dim (the classes), got shape ", x.shape());
  ClassLayout l;
  l.dim = x.dim() == 1 ? 0 : 1;
  l.C = x.shape()[l.dim];
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (i < l.dim) l.outer *= x.shape()[i];
    if (i > l.dim) l.inner *= x.shape()[i];
    if (i != l.dim) l.loss_shape.push_back(x.shape()[i]);
  }
  return l;
}

/// A [C] weight, checked and made contiguous (undefined when absent).
Tensor check_class_weight(const Tensor& weight, const ClassLayout& l, Dtype dtype, const char* op) {
  if (!weight.defined()) return Tensor();
  MG_CHECK(weight.dim() == 1 && weight.size(0) == l.C, op,
           "weight must be a 1-D tensor with one entry per class (", l.C, "), got shape ",
           weight.shape());
  MG_CHECK(weight.dtype() == dtype, op, "weight must have the input's dtype (", dtype_name(dtype),
           "), got ", dtype_name(weight.dtype()));
  return weight.detach().contiguous();
}

/// Class-index targets, validated: per position, the target class (-1 where ignored) and its
/// weight (0 where ignored), and the mean's denominator (sum of those weights).
struct IndexTarget {
  std::vector<std::int64_t> cls;
  std::vector<double> w;
  double weight_sum = 0;
};

IndexTarget check_index_target(const Tensor& target, const ClassLayout& l, const Tensor& weight,
                               std::int64_t ignore_index, const char* op) {
  MG_CHECK(target.dtype() == kInt64, op, "class-index target must be int64, got ",
           dtype_name(target.dtype()));
  IndexTarget it;
  std::vector<std::int64_t> t = target.to_vector<std::int64_t>();
  std::vector<double> wc = weight.defined() ? weight.to_vector<double>() : std::vector<double>();
  it.cls.resize(t.size());
  it.w.resize(t.size());
  for (std::size_t p = 0; p < t.size(); ++p) {
    if (t[p] == ignore_index) {
      it.cls[p] = -1;
      it.w[p] = 0;
      continue;
    }
    MG_CHECK(t[p] >= 0 && t[p] < l.C, op, "target ", t[p], " is out of bounds for ", l.C,
             " classes");
    it.cls[p] = t[p];
    it.w[p] = weight.defined() ? wc[static_cast<std::size_t>(t[p])] : 1.0;
    it.weight_sum += it.w[p];
  }
  return it;
}

/// The target distribution q for class indices, with public ops:
/// q[n, c, ...] = valid * weight[c] * (a * [c == target] + b), valid = target != ignore_index.
/// Shape [N, C, d1, ...] (or [C] for a 1-D input).
Tensor index_target_distribution(const Tensor& target, const Tensor& weight, const ClassLayout& l,
                                 std::int64_t ndim, std::int64_t ignore_index, double a, double b,
                                 Dtype dtype) {
  Shape class_shape(static_cast<std::size_t>(ndim - l.dim), 1);  // [C, 1, ..., 1]
  class_shape[0] = l.C;
  Tensor classes = arange(l.C).reshape(class_shape);
  Tensor t = target.unsqueeze(l.dim);  // [N, 1, d1, ...]
  Tensor valid = (t != ignore_index).to(dtype);
  Tensor q = (classes == t).to(dtype) * valid * a;
  if (b != 0) q = q + valid * b;
  if (weight.defined()) q = q * weight.reshape(class_shape);
  return q;
}

/// log(sum_j exp(row[j * inner])) over n entries, stable (the row max is subtracted first).
template <typename T>
double row_logsumexp(const T* row, std::int64_t n, std::int64_t inner) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < n; ++j) m = std::max(m, row[j * inner]);
  if (n > 0 && std::isnan(row[0])) m = row[0];
  if (std::isinf(m)) return static_cast<double>(m);  // all -inf (or an inf logit)
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j) s += std::exp(static_cast<double>(row[j * inner] - m));
  return std::log(s) + static_cast<double>(m);
}

/// Gradient of the reduced or per-position loss g, broadcast against [N, C, d1, ...].
Tensor broadcast_grad(const Tensor& g, Reduction red, std::int64_t class_dim) {
  return red == Reduction::kNone ? g.unsqueeze(class_dim) : g;
}

// ---------------------------------------------------------------- cross_entropy, class indices

// Note [Fused cross entropy]
// The loss at a position is -sum_c q_c * log_softmax(x)_c for a target distribution q (scaled by
// the reduction). The kernel computes each row's logsumexp once and the loss from it, so no
// [N, C] log_softmax is materialised. The gradient is g * (softmax(x) * sum_c q_c - q): for class
// indices q is built in backward from the target with public ops, and softmax(x) is the public
// op, so create_graph differentiates it again.

/// What the fused cross entropy (and nll_loss, with ls = 0) needs besides its tensors (checked by
/// its caller).
struct CrossEntropyArgs {
  std::int64_t ignore_index;
  Reduction red;
  double ls;
  ClassLayout l;
  IndexTarget it;
};

/// cross_entropy with class-index targets (Note [Fused cross entropy]).
struct CrossEntropyIndexFn : autograd::Function<CrossEntropyIndexFn> {
  static constexpr const char* node_name = "CrossEntropyBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& target,
                        const Tensor& weight, const CrossEntropyArgs& args) {
    Tensor xc = x.contiguous();
    const IndexTarget& it = args.it;
    const ClassLayout& l = args.l;
    const double ls = args.ls;
    const Reduction red = args.red;
    std::vector<double> wc = weight.defined() ? weight.to_vector<double>() : std::vector<double>();
    Tensor out = empty(red == Reduction::kNone ? l.loss_shape : Shape{}, x.dtype());
    dispatch_floating(x.dtype(), "cross_entropy", [&]<typename T>() {
      const T* px = xc.data_ptr<T>();
      T* po = out.data_ptr<T>();
      double total = 0;
      for (std::int64_t o = 0; o < l.outer; ++o) {
        for (std::int64_t i = 0; i < l.inner; ++i) {
          std::size_t p = static_cast<std::size_t>(o * l.inner + i);
          double loss = 0;
          if (it.cls[p] >= 0) {
            const T* row = px + o * l.C * l.inner + i;
            double lse = row_logsumexp(row, l.C, l.inner);
            loss = (1 - ls) * it.w[p] * (lse - static_cast<double>(row[it.cls[p] * l.inner]));
            // NOTE: PyTorch adds the smoothing term only when label_smoothing > 0 (so an inf logit
            // of a non-target class gives no inf * 0 = NaN without smoothing).
            if (ls > 0) {
              double smooth = 0;
              for (std::int64_t j = 0; j < l.C; ++j) {
                double wj = weight.defined() ? wc[static_cast<std::size_t>(j)] : 1.0;
                smooth += wj * (lse - static_cast<double>(row[j * l.inner]));
              }
              loss += ls / static_cast<double>(l.C) * smooth;
            }
          }
          if (red == Reduction::kNone) po[p] = static_cast<T>(loss);
          total += loss;
        }
      }
      // NOTE: "mean" divides both the nll and the smoothing term by the summed target weights, as
      // PyTorch 1.13; no valid target gives 0 / 0 = NaN.
      if (red == Reduction::kSum) po[0] = static_cast<T>(total);
      if (red == Reduction::kMean) po[0] = static_cast<T>(total / it.weight_sum);
    });
    // NOTE: with no valid target the mean's gradient is 0 (every q entry is masked), as PyTorch.
    double scale = red == Reduction::kMean && it.weight_sum != 0 ? 1 / it.weight_sum : 1.0;
    double a = (1 - ls) * scale, b = l.C > 0 ? ls / static_cast<double>(l.C) * scale : 0.0;
    ctx->save_for_backward({x, target, weight});
    ctx->saved_data["args"] = IValue::of(Backward{args.ignore_index, red, l, x.dim(), a, b});
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &tgt = saved[1], &w = saved[2];
    const auto& p = ctx->saved_data["args"].to<Backward>();
    // g [] or [N, d...] . (softmax(input) * sum_c q - q) [N, C, d...] -> [N, C, d...]
    Tensor q =
        index_target_distribution(tgt, w, p.l, p.ndim, p.ignore_index, p.a, p.b, input.dtype());
    Tensor probs = minigrad::softmax(input, p.l.dim) * sum(q, {p.l.dim}, true);
    return {broadcast_grad(grads[0], p.red, p.l.dim) * (probs - q), Tensor(), Tensor(), Tensor()};
  }
  struct Backward {
    std::int64_t ignore_index;
    Reduction red;
    ClassLayout l;
    std::int64_t ndim;
    double a, b;
  };
};

Tensor cross_entropy_index(const Tensor& x, const Tensor& target, const Tensor& weight_in,
                           std::int64_t ignore_index, Reduction red, double ls,
                           const ClassLayout& l) {
  const char* op = "cross_entropy";
  MG_CHECK(target.shape() == l.loss_shape, op, "input has shape ", x.shape(),
           ": target must have shape ", l.loss_shape, " (class indices) or ", x.shape(),
           " (class probabilities), got ", target.shape());
  Tensor weight = check_class_weight(weight_in, l, x.dtype(), op);
  IndexTarget it = check_index_target(target, l, weight, ignore_index, op);
  return CrossEntropyIndexFn::apply(x, target, weight,
                                    CrossEntropyArgs{ignore_index, red, ls, l, std::move(it)});
}

// ---------------------------------------------------------------- cross_entropy, probabilities

/// cross_entropy with a target distribution q (already smoothed and weighted), promoted to x's
/// dtype (Note [Fused cross entropy]).
struct CrossEntropyProbFn : autograd::Function<CrossEntropyProbFn> {
  static constexpr const char* node_name = "CrossEntropyBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& q, Reduction red,
                        const ClassLayout& l) {
    Tensor xc = x.contiguous(), qc = q.contiguous();
    const Dtype dt = x.dtype();
    Tensor out = empty(red == Reduction::kNone ? l.loss_shape : Shape{}, dt);
    dispatch_floating(dt, "cross_entropy", [&]<typename T>() {
      const T* px = xc.data_ptr<T>();
      const T* pq = qc.data_ptr<T>();
      T* po = out.data_ptr<T>();
      double total = 0;
      for (std::int64_t o = 0; o < l.outer; ++o) {
        for (std::int64_t i = 0; i < l.inner; ++i) {
          std::int64_t base = o * l.C * l.inner + i;
          double lse = row_logsumexp(px + base, l.C, l.inner);
          double loss = 0;
          for (std::int64_t j = 0; j < l.C; ++j) {
            std::int64_t k = base + j * l.inner;
            loss += static_cast<double>(pq[k]) * (lse - static_cast<double>(px[k]));
          }
          if (red == Reduction::kNone) po[o * l.inner + i] = static_cast<T>(loss);
          total += loss;
        }
      }
      if (red == Reduction::kSum) po[0] = static_cast<T>(total);
      // NOTE: "mean" divides by the number of positions, numel / C; an empty input gives NaN.
      if (red == Reduction::kMean)
        po[0] = static_cast<T>(x.numel() == 0 ? std::numeric_limits<double>::quiet_NaN()
                                              : total / static_cast<double>(l.outer * l.inner));
    });
    double scale = red == Reduction::kMean && l.outer * l.inner > 0
                       ? 1.0 / static_cast<double>(l.outer * l.inner)
                       : 1.0;
    ctx->save_for_backward({x, ctx->needs_input_grad(0) ? q : Tensor()});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["none"] = red == Reduction::kNone;
    ctx->saved_data["dim"] = l.dim;
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &input = saved[0], &probs = saved[1];
    std::int64_t d = ctx->saved_data["dim"].toInt();
    Reduction red = ctx->saved_data["none"].toBool() ? Reduction::kNone : Reduction::kSum;
    Tensor gs = broadcast_grad(grads[0], red, d) * ctx->saved_data["scale"].toDouble();
    Grads r(4);
    // g [] or [N, d...] . (softmax(input) * sum_c probs - probs) [N, C, d...] -> [N, C, d...]
    if (ctx->needs_input_grad(0))
      r[0] = gs * (minigrad::softmax(input, d) * sum(probs, {d}, true) - probs);
    // d loss / d probs = -log_softmax(input)
    if (ctx->needs_input_grad(1)) r[1] = gs * -minigrad::log_softmax(input, d);
    return r;
  }
};

Tensor cross_entropy_prob(const Tensor& x_in, const Tensor& target, const Tensor& weight,
                          std::int64_t ignore_index, Reduction red, double ls,
                          const ClassLayout& l) {
  const char* op = "cross_entropy";
  MG_CHECK(target.is_floating_point(), op,
           "a target with the input's shape holds class probabilities and must be floating point, "
           "got ",
           dtype_name(target.dtype()));
  MG_CHECK(ignore_index < 0, op, "ignore_index (", ignore_index,
           ") is not supported for class-probability targets");
  Dtype dt = promote_types(x_in.dtype(), target.dtype());
  if (weight.defined()) {
    MG_CHECK(weight.dim() == 1 && weight.size(0) == l.C, op,
             "weight must be a 1-D tensor with one entry per class (", l.C, "), got shape ",
             weight.shape());
    MG_CHECK(weight.is_floating_point(), op, "weight must be floating point, got ",
             dtype_name(weight.dtype()));
    dt = promote_types(dt, weight.dtype());
  }
  Tensor x = x_in.to(dt);
  Tensor q = target.to(dt);
  if (ls > 0) q = q * (1 - ls) + ls / static_cast<double>(l.C);
  if (weight.defined()) {
    Shape class_shape(static_cast<std::size_t>(x.dim()), 1);
    class_shape[static_cast<std::size_t>(l.dim)] = l.C;
    q = q * weight.detach().to(dt).reshape(class_shape);
  }
  return CrossEntropyProbFn::apply(x, q, red, l);
}

// ---------------------------------------------------------------- softplus

/// log(1 + exp(z)) as max(z, 0) + log1p(exp(-|z|)), finite for any finite z; gradient sigmoid(z).
/// NOTE: an explicit primitive because composing relu and abs gives gradient 0 at z = 0 (both have
/// a zero gradient at their kink) instead of sigmoid(0) = 0.5.
struct SoftplusFn : autograd::Function<SoftplusFn> {
  static constexpr const char* node_name = "SoftplusBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& z) {
    Tensor zc = z.contiguous();
    Tensor out = empty(z.shape(), z.dtype());
    dispatch_floating(z.dtype(), "softplus", [&]<typename T>() {
      const T* pz = zc.data_ptr<T>();
      T* po = out.data_ptr<T>();
      for (std::int64_t k = 0; k < zc.numel(); ++k) {
        double v = static_cast<double>(pz[k]);
        po[k] = static_cast<T>(std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v))));
      }
    });
    ctx->save_for_backward({z});
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    return {grads[0] * minigrad::sigmoid(ctx->get_saved_variables()[0])};
  }
};

Tensor softplus(const Tensor& z) { return SoftplusFn::apply(z); }

Tensor reduce(const Tensor& loss, Reduction red) {
  if (red == Reduction::kSum) return loss.sum();
  if (red == Reduction::kMean) return loss.mean();
  return loss;
}

// ---------------------------------------------------------------- binary_cross_entropy

/// log(x) clamped to >= -100, as PyTorch's binary_cross_entropy.
Tensor clamped_log(const Tensor& x) { return clamp(log(x), -100.0); }

/// -w (t log x + (1 - t) log(1 - x)) elementwise, with the logs clamped. The gradients are
/// PyTorch's formulas written with public ops (so they can be differentiated again): the input's
/// (x - t) / max(x (1 - x), 1e-12) * w stays finite at x = 0 and 1; the target's is
/// (log(1 - x) - log(x)) * w, clamped; weight gets none, as in PyTorch 1.13.
struct BinaryCrossEntropyFn : autograd::Function<BinaryCrossEntropyFn> {
  static constexpr const char* node_name = "BinaryCrossEntropyBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& x, const Tensor& t, const Tensor& w) {
    ctx->save_for_backward({x, t, w});
    Tensor loss = -(t * clamped_log(x) + (1.0 - t) * clamped_log(1.0 - x));
    return w.defined() ? loss * w : loss;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &x = saved[0], &t = saved[1], &w = saved[2];
    Tensor g = w.defined() ? grads[0] * w : grads[0];
    Tensor gx = g * (x - t) / clamp(x * (1.0 - x), 1e-12);
    Tensor gt = g * (clamped_log(1.0 - x) - clamped_log(x));
    return {gx, gt, Tensor()};
  }
};

/// The checks every pointwise loss makes: defined floating tensors of the same shape.
void check_pointwise(const Tensor& input, const Tensor& target, const char* op) {
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(input.is_floating_point() && target.is_floating_point(), op,
           "input and target must be floating point, got ", dtype_name(input.dtype()), " and ",
           dtype_name(target.dtype()));
  MG_CHECK(target.shape() == input.shape(), op, "target has shape ", target.shape(),
           " but input has shape ", input.shape(), "; they must match");
}

}  // namespace

namespace {

struct NllLossFn : autograd::Function<NllLossFn> {
  static constexpr const char* node_name = "NllLossBackward0";
  static Tensor forward(AutogradContext* ctx, const Tensor& input, const Tensor& target,
                        const Tensor& weight, const CrossEntropyArgs& args) {
    Tensor xc = input.contiguous();
    const IndexTarget& it = args.it;
    const ClassLayout& l = args.l;
    const Reduction red = args.red;
    Tensor out = empty(red == Reduction::kNone ? l.loss_shape : Shape{}, input.dtype());
    dispatch_floating(input.dtype(), "nll_loss", [&]<typename T>() {
      const T* px = xc.data_ptr<T>();
      T* po = out.data_ptr<T>();
      double total = 0;
      for (std::int64_t o = 0; o < l.outer; ++o) {
        for (std::int64_t i = 0; i < l.inner; ++i) {
          std::size_t p = static_cast<std::size_t>(o * l.inner + i);
          double loss = 0;
          if (it.cls[p] >= 0)
            loss = -it.w[p] * static_cast<double>(px[(o * l.C + it.cls[p]) * l.inner + i]);
          if (red == Reduction::kNone) po[p] = static_cast<T>(loss);
          total += loss;
        }
      }
      if (red == Reduction::kSum) po[0] = static_cast<T>(total);
      if (red == Reduction::kMean) po[0] = static_cast<T>(total / it.weight_sum);
    });
    double scale = red == Reduction::kMean && it.weight_sum != 0 ? 1 / it.weight_sum : 1.0;
    ctx->save_for_backward({target, weight});
    ctx->saved_data["args"] =
        IValue::of(Backward{args.ignore_index, red, l, input.dim(), input.dtype(), scale});
    return out;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const auto& p = ctx->saved_data["args"].to<Backward>();
    // g [] or [N, d...] . -q [N, C, d...] -> [N, C, d...]; q is one-hot * weight
    Tensor q = index_target_distribution(saved[0], saved[1], p.l, p.ndim, p.ignore_index, p.scale,
                                         0.0, p.dtype);
    return {broadcast_grad(grads[0], p.red, p.l.dim) * -q, Tensor(), Tensor(), Tensor()};
  }
  struct Backward {
    std::int64_t ignore_index;
    Reduction red;
    ClassLayout l;
    std::int64_t ndim;
    Dtype dtype;
    double scale;
  };
};

}  // namespace

// ---------------------------------------------------------------- public losses

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     std::int64_t ignore_index, const std::string& reduction,
                     double label_smoothing) {
  MG_PROFILE_OP("cross_entropy");
  const char* op = "cross_entropy";
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Reduction red = parse_reduction(reduction, op);
  // NOTE: PyTorch 1.13 silently ignores a negative label_smoothing; minigrad rejects it.
  MG_CHECK(label_smoothing >= 0 && label_smoothing <= 1, op,
           "label_smoothing must be between 0.0 and 1.0, got ", label_smoothing);
  ClassLayout l = class_layout(input, op);
  // As PyTorch: a target with the input's shape holds probabilities, anything else class indices.
  if (target.shape() == input.shape())
    return cross_entropy_prob(input, target, weight, ignore_index, red, label_smoothing, l);
  return cross_entropy_index(input, target, weight, ignore_index, red, label_smoothing, l);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight_in,
                std::int64_t ignore_index, const std::string& reduction) {
  MG_PROFILE_OP("nll_loss");
  const char* op = "nll_loss";
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Reduction red = parse_reduction(reduction, op);
  ClassLayout l = class_layout(input, op);
  MG_CHECK(target.shape() == l.loss_shape, op, "input has shape ", input.shape(),
           ": target must have shape ", l.loss_shape, ", got ", target.shape());
  Tensor weight = check_class_weight(weight_in, l, input.dtype(), op);
  IndexTarget it = check_index_target(target, l, weight, ignore_index, op);
  return NllLossFn::apply(input, target, weight,
                          CrossEntropyArgs{ignore_index, red, 0.0, l, std::move(it)});
}

Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction,
              bool log_target) {
  MG_PROFILE_OP("kl_div");
  const char* op = "kl_div";
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(
      reduction == "mean" || reduction == "batchmean" || reduction == "sum" || reduction == "none",
      op, "reduction must be \"mean\", \"batchmean\", \"sum\" or \"none\", got \"", reduction,
      "\"");
  MG_CHECK(input.is_floating_point() && target.is_floating_point(), op,
           "input and target must be floating point, got ", dtype_name(input.dtype()), " and ",
           dtype_name(target.dtype()));
  broadcast_shapes(input.shape(), target.shape(), op);
  Tensor loss;
  if (log_target) {
    loss = exp(target) * (target - input);
  } else {
    // xlogy(t, t) - t * input: t * log(t) is 0 where t == 0 (log reads 1 there, so no 0 * -inf).
    loss = target * (log(where(target == 0.0, 1.0, target)) - input);
  }
  if (reduction == "none") return loss;
  if (reduction == "mean") return loss.mean();
  Tensor total = loss.sum();
  if (reduction == "batchmean" && input.dim() != 0)
    return total / static_cast<double>(input.size(0));
  return total;
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight, const std::string& reduction,
                                        const Tensor& pos_weight) {
  MG_PROFILE_OP("binary_cross_entropy_with_logits");
  const char* op = "binary_cross_entropy_with_logits";
  MG_CHECK(input.defined() && target.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Reduction red = parse_reduction(reduction, op);
  MG_CHECK(input.is_floating_point() && target.is_floating_point(), op,
           "input and target must be floating point, got ", dtype_name(input.dtype()), " and ",
           dtype_name(target.dtype()));
  MG_CHECK(target.shape() == input.shape(), op, "target has shape ", target.shape(),
           " but input has shape ", input.shape(), "; they must match");
  for (const Tensor* w : {&weight, &pos_weight}) {
    if (!w->defined()) continue;
    const char* name = w == &weight ? "weight" : "pos_weight";
    MG_CHECK(w->is_floating_point(), op, name, " must be floating point, got ",
             dtype_name(w->dtype()));
    bool broadcasts = true;
    try {
      broadcasts = broadcast_shapes(input.shape(), w->shape(), op) == input.shape();
    } catch (const Error&) {
      broadcasts = false;
    }
    MG_CHECK(broadcasts, op, name, " of shape ", w->shape(),
             " does not broadcast to the input's shape ", input.shape());
  }
  // (1 - t) * x + lw * softplus(-x), lw = 1 + (pos_weight - 1) * t; softplus(-x) =
  // max(-x, 0) + log(1 + exp(-|x|)) never overflows.
  Tensor sp = softplus(-input);
  Tensor loss = (1.0 - target) * input;
  loss = pos_weight.defined() ? loss + (1.0 + (pos_weight - 1.0) * target) * sp : loss + sp;
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, red);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            const std::string& reduction) {
  MG_PROFILE_OP("binary_cross_entropy");
  const char* op = "binary_cross_entropy";
  check_pointwise(input, target, op);
  Reduction red = parse_reduction(reduction, op);
  if (weight.defined()) {
    MG_CHECK(weight.is_floating_point(), op, "weight must be floating point, got ",
             dtype_name(weight.dtype()));
    MG_CHECK(broadcast_shapes(input.shape(), weight.shape(), op) == input.shape(), op,
             "weight of shape ", weight.shape(), " does not broadcast to the input's shape ",
             input.shape());
  }
  for (double v : input.detach().to_vector<double>())
    MG_CHECK(v >= 0.0 && v <= 1.0, op, "all elements of input should be between 0 and 1, got ", v);
  // As PyTorch, the weight is used in the input's dtype.
  Tensor w = weight.defined() ? weight.detach().to(input.dtype()) : weight;
  return reduce(BinaryCrossEntropyFn::apply(input, target, w), red);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  MG_PROFILE_OP("l1_loss");
  const char* op = "l1_loss";
  check_pointwise(input, target, op);
  return reduce(abs(input - target), parse_reduction(reduction, op));
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                      double beta) {
  MG_PROFILE_OP("smooth_l1_loss");
  const char* op = "smooth_l1_loss";
  check_pointwise(input, target, op);
  Reduction red = parse_reduction(reduction, op);
  MG_CHECK(beta >= 0, op, "beta must be non-negative, got ", beta);
  if (beta == 0) {
    // PyTorch's kernel at beta 0: gradient +1 where x > 0, -1 where x <= 0 (0 included), nan at a
    // nan (its x / beta branch); not abs's gradient (0 at 0 and at nan). x times that constant
    // sign is |x| with exactly this gradient.
    Tensor x = input - target;
    Tensor v = x.detach();
    Tensor s = where(isnan(v), full_like(v, std::numeric_limits<double>::quiet_NaN()),
                     where(v > 0, 1.0, full_like(v, -1.0)));
    return reduce(x * s, red);
  }
  Tensor d = abs(input - target);
  // The branch is chosen on the values (no gradient through the condition), as PyTorch's kernel.
  return reduce(where(d.detach() < beta, 0.5 * d * d / beta, d - 0.5 * beta), red);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                  double delta) {
  MG_PROFILE_OP("huber_loss");
  const char* op = "huber_loss";
  check_pointwise(input, target, op);
  Reduction red = parse_reduction(reduction, op);
  MG_CHECK(delta > 0, op, "delta must be positive, got ", delta);
  Tensor d = abs(input - target);
  return reduce(where(d.detach() < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), red);
}

}  // namespace minigrad::nn::functional

// ---------------------------------------------------------------- modules

namespace minigrad::nn {

namespace F = functional;

std::string reduction_name(const reduction_t& reduction) {
  struct Name {
    const char* operator()(enumtype::kNone) const { return "none"; }
    const char* operator()(enumtype::kMean) const { return "mean"; }
    const char* operator()(enumtype::kSum) const { return "sum"; }
  };
  return std::visit(Name{}, reduction);
}

namespace {

/// An optional tensor option, copied for a clone (which must not share its buffers).
Tensor clone_if_defined(const Tensor& t) { return t.defined() ? t.clone() : Tensor(); }

/// Registers a defined optional tensor as a buffer, as PyTorch's register_buffer(name, None)
/// (which lists only defined ones); returns it.
Tensor register_optional_buffer(Module& m, const std::string& name, const Tensor& t) {
  return t.defined() ? m.register_buffer(name, t) : Tensor();
}

}  // namespace

L1LossImpl::L1LossImpl(const L1LossOptions& options_) : LossModule("L1Loss"), options(options_) {}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::l1_loss(input, target, reduction_name(options.reduction()));
}
std::shared_ptr<Module> L1LossImpl::clone() const {
  return clone_with([&] { return std::make_shared<L1LossImpl>(options); });
}

MSELossImpl::MSELossImpl(const MSELossOptions& options_)
    : LossModule("MSELoss"), options(options_) {}
Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::mse_loss(input, target, reduction_name(options.reduction()));
}
std::shared_ptr<Module> MSELossImpl::clone() const {
  return clone_with([&] { return std::make_shared<MSELossImpl>(options); });
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options_)
    : LossModule("SmoothL1Loss"), options(options_) {}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::smooth_l1_loss(input, target, reduction_name(options.reduction()), options.beta());
}
std::shared_ptr<Module> SmoothL1LossImpl::clone() const {
  return clone_with([&] { return std::make_shared<SmoothL1LossImpl>(options); });
}

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options_)
    : LossModule("HuberLoss"), options(options_) {}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::huber_loss(input, target, reduction_name(options.reduction()), options.delta());
}
std::shared_ptr<Module> HuberLossImpl::clone() const {
  return clone_with([&] { return std::make_shared<HuberLossImpl>(options); });
}

BCELossImpl::BCELossImpl(const BCELossOptions& options_)
    : LossModule("BCELoss"), options(options_) {
  register_optional_buffer(*this, "weight", options.weight());
}
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy(input, target, options.weight(),
                                 reduction_name(options.reduction()));
}
std::shared_ptr<Module> BCELossImpl::clone() const {
  return clone_with([&] {
    return std::make_shared<BCELossImpl>(
        BCELossOptions(options).weight(clone_if_defined(options.weight())));
  });
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_)
    : LossModule("BCEWithLogitsLoss"), options(options_) {
  weight = register_optional_buffer(*this, "weight", options.weight());
  pos_weight = register_optional_buffer(*this, "pos_weight", options.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy_with_logits(input, target, weight,
                                             reduction_name(options.reduction()), pos_weight);
}
std::shared_ptr<Module> BCEWithLogitsLossImpl::clone() const {
  return clone_with([&] {
    return std::make_shared<BCEWithLogitsLossImpl>(
        BCEWithLogitsLossOptions(options)
            .weight(clone_if_defined(options.weight()))
            .pos_weight(clone_if_defined(options.pos_weight())));
  });
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options_)
    : LossModule("NLLLoss"), options(options_) {
  weight = register_optional_buffer(*this, "weight", options.weight());
}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::nll_loss(input, target, weight, options.ignore_index(),
                     reduction_name(options.reduction()));
}
std::shared_ptr<Module> NLLLossImpl::clone() const {
  return clone_with([&] {
    return std::make_shared<NLLLossImpl>(
        NLLLossOptions(options).weight(clone_if_defined(options.weight())));
  });
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options_)
    : LossModule("CrossEntropyLoss"), options(options_) {
  weight = register_optional_buffer(*this, "weight", options.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::cross_entropy(input, target, weight, options.ignore_index(),
                          reduction_name(options.reduction()), options.label_smoothing());
}
std::shared_ptr<Module> CrossEntropyLossImpl::clone() const {
  return clone_with([&] {
    return std::make_shared<CrossEntropyLossImpl>(
        CrossEntropyLossOptions(options).weight(clone_if_defined(options.weight())));
  });
}

}  // namespace minigrad::nn
