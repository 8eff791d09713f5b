// Losses: cross_entropy and nll_loss (core's fused ops, minigrad/ops/nn.h), kl_div and
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

#include "loss_common.h"
#include "minigrad/custom_function.h"
#include "minigrad/dispatch.h"
#include "minigrad/nn/functional.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/nn.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/profiler.h"

namespace minigrad::nn::functional {

using autograd::AutogradContext;
using autograd::IValue;
using Grads = std::vector<Tensor>;
using nn::detail::parse_reduction;
using nn::detail::reduce;

namespace {

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

// ---------------------------------------------------------------- public losses

// cross_entropy and nll_loss are core ops (minigrad/ops/nn.h, Note [Fused cross entropy]), so that
// their kernels live with core's.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                     std::int64_t ignore_index, const std::string& reduction,
                     double label_smoothing) {
  return minigrad::cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                std::int64_t ignore_index, const std::string& reduction) {
  return minigrad::nll_loss(input, target, weight, ignore_index, reduction);
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
  Reduction::Reduction red = parse_reduction(reduction, op);
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
  Reduction::Reduction red = parse_reduction(reduction, op);
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
  Reduction::Reduction red = parse_reduction(reduction, op);
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
  Reduction::Reduction red = parse_reduction(reduction, op);
  MG_CHECK(delta > 0, op, "delta must be positive, got ", delta);
  Tensor d = abs(input - target);
  return reduce(where(d.detach() < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), red);
}

}  // namespace minigrad::nn::functional

// ---------------------------------------------------------------- modules

namespace minigrad::nn {

namespace F = functional;

std::string reduction_name(const reduction_t& reduction) {
  return detail::kReductionNames[enumtype::reduction_get_enum(reduction)];
}

using nn::detail::clone_if_defined;
using nn::detail::register_optional_buffer;

L1LossImpl::L1LossImpl(const L1LossOptions& options_)
    : CopyCloneable("L1Loss"), options(options_) {}
Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::l1_loss(input, target, reduction_name(options.reduction()));
}

MSELossImpl::MSELossImpl(const MSELossOptions& options_)
    : CopyCloneable("MSELoss"), options(options_) {}
Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::mse_loss(input, target, reduction_name(options.reduction()));
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options_)
    : CopyCloneable("SmoothL1Loss"), options(options_) {}
Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::smooth_l1_loss(input, target, reduction_name(options.reduction()), options.beta());
}

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options_)
    : CopyCloneable("HuberLoss"), options(options_) {}
Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::huber_loss(input, target, reduction_name(options.reduction()), options.delta());
}

BCELossImpl::BCELossImpl(const BCELossOptions& options_) : Cloneable("BCELoss"), options(options_) {
  reset();
}
BCELossImpl::BCELossImpl(const BCELossImpl& other) : Cloneable(other), options(other.options) {
  options.weight(clone_if_defined(options.weight()));
}
void BCELossImpl::reset() { register_optional_buffer(*this, "weight", options.weight()); }
Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy(input, target, options.weight(),
                                 reduction_name(options.reduction()));
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_)
    : Cloneable("BCEWithLogitsLoss"), options(options_) {
  reset();
}
BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossImpl& other)
    : Cloneable(other), options(other.options) {
  // One tensor given as both stays one tensor (one buffer under two names).
  const bool tied =
      options.pos_weight().defined() && options.pos_weight().is_same(options.weight());
  options.weight(clone_if_defined(options.weight()));
  options.pos_weight(tied ? options.weight() : clone_if_defined(options.pos_weight()));
}
void BCEWithLogitsLossImpl::reset() {
  weight = register_optional_buffer(*this, "weight", options.weight());
  pos_weight = register_optional_buffer(*this, "pos_weight", options.pos_weight());
}
Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::binary_cross_entropy_with_logits(input, target, weight,
                                             reduction_name(options.reduction()), pos_weight);
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options_) : Cloneable("NLLLoss"), options(options_) {
  reset();
}
NLLLossImpl::NLLLossImpl(const NLLLossImpl& other) : Cloneable(other), options(other.options) {
  options.weight(clone_if_defined(options.weight()));
}
void NLLLossImpl::reset() { weight = register_optional_buffer(*this, "weight", options.weight()); }
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::nll_loss(input, target, weight, options.ignore_index(),
                     reduction_name(options.reduction()));
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options_)
    : Cloneable("CrossEntropyLoss"), options(options_) {
  reset();
}
CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossImpl& other)
    : Cloneable(other), options(other.options) {
  options.weight(clone_if_defined(options.weight()));
}
void CrossEntropyLossImpl::reset() {
  weight = register_optional_buffer(*this, "weight", options.weight());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) const {
  return F::cross_entropy(input, target, weight, options.ignore_index(),
                          reduction_name(options.reduction()), options.label_smoothing());
}

}  // namespace minigrad::nn
