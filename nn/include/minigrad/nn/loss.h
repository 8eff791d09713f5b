#pragma once
// Classification, divergence and regression losses, with torch.nn.functional's (PyTorch 1.13)
// semantics.
//
// `reduction` is "mean" (the default), "sum" or "none" (kl_div also takes "batchmean"). With "none"
// the result has the input's shape without the class dim (cross_entropy, nll_loss) or the
// broadcast shape of input and target (kl_div, binary_cross_entropy_with_logits).
// Every loss throws minigrad::Error "[op] ..." on bad shapes, dtypes, reductions or targets.
//
// The module forms (nn::MSELoss, nn::CrossEntropyLoss, ...) are libtorch's: an options struct
// whose reduction is mg::kNone, mg::kMean or mg::kSum, a holder with `->`, and
// forward(input, target) calling the functional form:
//   nn::CrossEntropyLoss loss(nn::CrossEntropyLossOptions().label_smoothing(0.1));
//   mg::Tensor l = loss(logits, target);
#include <cstdint>
#include <string>

#include <memory>

#include "minigrad/nn/module.h"
#include "minigrad/nn/options.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::functional {

/// Cross entropy between the logits `input` ([N, C], [N, C, d1, ...] or [C]; classes on dim 1, or
/// dim 0 for 1-D input) and `target`, which is either int64 class indices ([N], [N, d1, ...] or a
/// 0-dim tensor) or class probabilities (floating, the input's shape).
/// Fused: one kernel computes log_softmax over the classes and the loss (stable for logits of
/// +-1e4); the gradient is (softmax(input) - target distribution) * scale, written with public ops,
/// so it can be differentiated again.
/// - weight: optional 1-D per-class weight [C] (same dtype as input); not differentiated.
/// - ignore_index: class-index targets equal to it contribute 0 and are left out of the mean's
///   denominator; probability targets need ignore_index < 0.
/// - "mean" with class indices divides by the sum of the target classes' weights (the count of
///   non-ignored targets without weight); with probabilities, by the number of positions
///   (numel / C). An empty or fully ignored batch gives NaN, as PyTorch.
/// - label_smoothing in [0, 1] mixes the target with the uniform distribution:
///   (1 - ls) * loss + ls / C * sum_c weight_c * -log_softmax(input)_c, as PyTorch.
/// Throws for a target class outside [0, C) ("[cross_entropy] target 7 is out of bounds for 5
/// classes"), a target of the wrong shape or dtype, a weight that is not [C], a non-floating input,
/// a bad reduction or label_smoothing outside [0, 1].
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     std::int64_t ignore_index = -100, const std::string& reduction = "mean",
                     double label_smoothing = 0.0);

/// Negative log likelihood: -weight[t] * input[n, t] for log-probabilities `input` ([N, C],
/// [N, C, d1, ...] or [C]) and int64 class indices `target` ([N], [N, d1, ...] or 0-dim).
/// weight and ignore_index work as in cross_entropy; "mean" divides by the summed weights of the
/// non-ignored targets (NaN when there are none, as PyTorch).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                std::int64_t ignore_index = -100, const std::string& reduction = "mean");

/// Kullback-Leibler divergence, pointwise target * (log(target) - input) for log-probabilities
/// `input` (target * log(target) is 0 where target is 0), or exp(target) * (target - input) when
/// log_target. input and target broadcast. "mean" averages over ALL elements (PyTorch 1.13's
/// behaviour); "batchmean" is the sum divided by input.size(0) (the sum for a 0-dim input), which
/// is the mathematical KL divergence per sample. Differentiable in input and target.
Tensor kl_div(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
              bool log_target = false);

/// Binary cross entropy on logits, in the stable form
/// (1 - t) * x + lw * (max(-x, 0) + log(1 + exp(-|x|))) with lw = 1 + (pos_weight - 1) * t
/// (= max(x, 0) - x * t + log(1 + exp(-|x|)) without pos_weight), times weight.
/// target has the input's shape; weight and pos_weight (per class, the last dim) must broadcast to
/// it. Differentiable in input, target, weight and pos_weight; logits of +-1e4 give finite results.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = Tensor(),
                                        const std::string& reduction = "mean",
                                        const Tensor& pos_weight = Tensor());

/// Binary cross entropy of probabilities `input` (each in [0, 1]) and `target` (the input's
/// shape): -weight * (t * log(x) + (1 - t) * log(1 - x)), each log clamped to >= -100 as PyTorch
/// does (so x = 0 or 1 gives a finite loss). weight (optional) must broadcast to the input's shape
/// and is used in the input's dtype.
/// Differentiable in input and target (not weight, as PyTorch 1.13); the input's gradient is
/// (x - t) / max(x (1 - x), 1e-12) * weight, PyTorch's. Throws for an input outside [0, 1]
/// ("[binary_cross_entropy] all elements of input should be between 0 and 1").
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const Tensor& weight = Tensor(), const std::string& reduction = "mean");

/// Mean absolute error |input - target| (reduced); input and target have the same shape.
Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");

/// Smooth L1: 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0
/// is l1_loss. Throws for a negative beta. input and target have the same shape.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const std::string& reduction = "mean", double beta = 1.0);

/// Huber: 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target), which is
/// delta * smooth_l1_loss with beta = delta. Throws unless delta > 0. Same shapes.
Tensor huber_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                  double delta = 1.0);

}  // namespace minigrad::nn::functional

namespace minigrad::nn {

/// libtorch's TORCH_OPTIONS_CTOR_VARIANT_ARG3: an options struct made from a reduction tag, so
/// that `nn::MSELoss(mg::kSum)` and `nn::MSELossOptions(mg::kNone)` work.
#define MG_LOSS_REDUCTION_CTORS(Options)                               \
  Options() {}                                                         \
  Options(enumtype::kNone r) : reduction_(r) {} /* NOLINT: implicit */ \
  Options(enumtype::kMean r) : reduction_(r) {} /* NOLINT: implicit */ \
  Options(enumtype::kSum r) : reduction_(r) {}  /* NOLINT: implicit */

/// nn::L1Loss's options: L1LossOptions(mg::kSum), or L1LossOptions().reduction(mg::kNone).
struct L1LossOptions {
  using reduction_t = nn::reduction_t;
  MG_LOSS_REDUCTION_CTORS(L1LossOptions)
  MG_ARG(reduction_t, reduction) = kMean;
};

/// nn::MSELoss's options: MSELossOptions(mg::kSum), or MSELossOptions().reduction(mg::kNone).
struct MSELossOptions {
  using reduction_t = nn::reduction_t;
  MG_LOSS_REDUCTION_CTORS(MSELossOptions)
  MG_ARG(reduction_t, reduction) = kMean;
};

/// nn::SmoothL1Loss's options: SmoothL1LossOptions().reduction(mg::kNone).beta(0.5).
struct SmoothL1LossOptions {
  using reduction_t = nn::reduction_t;
  MG_LOSS_REDUCTION_CTORS(SmoothL1LossOptions)
  MG_ARG(reduction_t, reduction) = kMean;
  /// Where the loss changes from quadratic to linear (>= 0).
  MG_ARG(double, beta) = 1.0;
};

/// nn::HuberLoss's options: HuberLossOptions().reduction(mg::kNone).delta(0.5).
struct HuberLossOptions {
  using reduction_t = nn::reduction_t;
  MG_LOSS_REDUCTION_CTORS(HuberLossOptions)
  MG_ARG(reduction_t, reduction) = kMean;
  /// Where the loss changes from quadratic to linear (> 0).
  MG_ARG(double, delta) = 1.0;
};

#undef MG_LOSS_REDUCTION_CTORS

/// nn::BCELoss's options: BCELossOptions().weight(w).reduction(mg::kSum).
struct BCELossOptions {
  using reduction_t = nn::reduction_t;
  /// Rescales each element's loss; broadcasts to the input's shape (optional).
  MG_ARG(Tensor, weight) = {};
  MG_ARG(reduction_t, reduction) = kMean;
};

/// nn::BCEWithLogitsLoss's options: BCEWithLogitsLossOptions().pos_weight(pw).reduction(mg::kSum).
struct BCEWithLogitsLossOptions {
  using reduction_t = nn::reduction_t;
  /// Rescales each element's loss; broadcasts to the input's shape (optional).
  MG_ARG(Tensor, weight) = {};
  MG_ARG(reduction_t, reduction) = kMean;
  /// The weight of positive examples, per class (the last dim; optional).
  MG_ARG(Tensor, pos_weight) = {};
};

/// nn::NLLLoss's options: NLLLossOptions().weight(w).ignore_index(0).reduction(mg::kSum).
struct NLLLossOptions {
  using reduction_t = nn::reduction_t;
  /// Per-class weight [C] (optional).
  MG_ARG(Tensor, weight) = {};
  /// Targets equal to it contribute nothing.
  MG_ARG(std::int64_t, ignore_index) = -100;
  MG_ARG(reduction_t, reduction) = kMean;
};

/// nn::CrossEntropyLoss's options:
/// CrossEntropyLossOptions().weight(w).ignore_index(0).reduction(mg::kSum).label_smoothing(0.1).
struct CrossEntropyLossOptions {
  using reduction_t = nn::reduction_t;
  /// Per-class weight [C] (optional).
  MG_ARG(Tensor, weight) = {};
  /// Class-index targets equal to it contribute nothing.
  MG_ARG(std::int64_t, ignore_index) = -100;
  MG_ARG(reduction_t, reduction) = kMean;
  /// In [0, 1]: how much of the target is mixed with the uniform distribution.
  MG_ARG(double, label_smoothing) = 0.0;
};

/// A loss: forward(input, target) -> the loss tensor (0-dim unless the reduction is kNone).
class LossModule : public Module {
 public:
  using Module::Module;
  /// The loss of input against target.
  virtual Tensor forward(const Tensor& input, const Tensor& target) const = 0;
  /// Same as forward(input, target).
  Tensor operator()(const Tensor& input, const Tensor& target) const {
    return call_with_hooks(  // Note [Forward hooks]
        [this](const Tensor& i, const Tensor& t) { return forward(i, t); }, input, target);
  }
};

/// Mean absolute error, as torch.nn.L1Loss: functional::l1_loss.
class L1LossImpl : public CopyCloneable<L1LossImpl, LossModule> {
 public:
  explicit L1LossImpl(const L1LossOptions& options_ = {});
  /// l1_loss(input, target, reduction).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  L1LossOptions options;
};
MG_MODULE(L1Loss);

/// Mean squared error, as torch.nn.MSELoss: functional::mse_loss.
class MSELossImpl : public CopyCloneable<MSELossImpl, LossModule> {
 public:
  explicit MSELossImpl(const MSELossOptions& options_ = {});
  /// mse_loss(input, target, reduction).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  MSELossOptions options;
};
MG_MODULE(MSELoss);

/// Smooth L1, as torch.nn.SmoothL1Loss: functional::smooth_l1_loss.
class SmoothL1LossImpl : public CopyCloneable<SmoothL1LossImpl, LossModule> {
 public:
  /// A negative beta throws in forward ("[smooth_l1_loss] ..."), as PyTorch.
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options_ = {});
  /// smooth_l1_loss(input, target, reduction, beta).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  SmoothL1LossOptions options;
};
MG_MODULE(SmoothL1Loss);

/// Huber, as torch.nn.HuberLoss: functional::huber_loss.
class HuberLossImpl : public CopyCloneable<HuberLossImpl, LossModule> {
 public:
  /// A delta <= 0 throws in forward ("[huber_loss] ..."), as PyTorch.
  explicit HuberLossImpl(const HuberLossOptions& options_ = {});
  /// huber_loss(input, target, reduction, delta).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  HuberLossOptions options;
};
MG_MODULE(HuberLoss);

/// Binary cross entropy of probabilities, as torch.nn.BCELoss: functional::binary_cross_entropy.
/// A given weight is registered as the buffer "weight", as PyTorch's.
class BCELossImpl : public Cloneable<BCELossImpl, LossModule> {
 public:
  explicit BCELossImpl(const BCELossOptions& options_ = {});
  /// A copy with its own copy of the options' weight (clone(), Note [Cloning]).
  BCELossImpl(const BCELossImpl& other);
  /// Registers the options' weight as buffers (libtorch's reset()).
  void reset() override;
  /// binary_cross_entropy(input, target, weight, reduction).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  BCELossOptions options;
};
MG_MODULE(BCELoss);

/// Binary cross entropy on logits, as torch.nn.BCEWithLogitsLoss:
/// functional::binary_cross_entropy_with_logits. Given weight and pos_weight are registered as the
/// buffers "weight" and "pos_weight", as PyTorch's.
class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl, LossModule> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options_ = {});
  /// A copy with its own copy of the options' weight and pos_weight (clone(), Note [Cloning]).
  BCEWithLogitsLossImpl(const BCEWithLogitsLossImpl& other);
  /// Registers the options' weight and pos_weight as buffers (libtorch's reset()).
  void reset() override;
  /// binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  BCEWithLogitsLossOptions options;
  /// options.weight() (undefined without one).
  Tensor weight;
  /// options.pos_weight() (undefined without one).
  Tensor pos_weight;
};
MG_MODULE(BCEWithLogitsLoss);

/// Negative log likelihood, as torch.nn.NLLLoss: functional::nll_loss. A given weight is
/// registered as the buffer "weight", as PyTorch's.
class NLLLossImpl : public Cloneable<NLLLossImpl, LossModule> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options_ = {});
  /// A copy with its own copy of the options' weight (clone(), Note [Cloning]).
  NLLLossImpl(const NLLLossImpl& other);
  /// Registers the options' weight as buffers (libtorch's reset()).
  void reset() override;
  /// nll_loss(input, target, weight, ignore_index, reduction).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  NLLLossOptions options;
  /// options.weight() (undefined without one).
  Tensor weight;
};
MG_MODULE(NLLLoss);

/// Cross entropy of logits, as torch.nn.CrossEntropyLoss: functional::cross_entropy. A given
/// weight is registered as the buffer "weight", as PyTorch's. A label_smoothing outside [0, 1]
/// throws in forward ("[cross_entropy] ..."), as PyTorch.
class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl, LossModule> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options_ = {});
  /// A copy with its own copy of the options' weight (clone(), Note [Cloning]).
  CrossEntropyLossImpl(const CrossEntropyLossImpl& other);
  /// Registers the options' weight as buffers (libtorch's reset()).
  void reset() override;
  /// cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing).
  Tensor forward(const Tensor& input, const Tensor& target) const override;
  CrossEntropyLossOptions options;
  /// options.weight() (undefined without one).
  Tensor weight;
};
MG_MODULE(CrossEntropyLoss);

}  // namespace minigrad::nn

namespace minigrad::nn::functional {

// libtorch's functional options (torch::nn::functional::CrossEntropyFuncOptions, ...): the loss
// modules' options under their functional names, taken by an overload of each functional loss:
//   F::cross_entropy(x, y, F::CrossEntropyFuncOptions().reduction(mg::kSum).label_smoothing(0.1))

/// Options of functional::l1_loss: its reduction.
using L1LossFuncOptions = L1LossOptions;
/// Options of functional::mse_loss: its reduction.
using MSELossFuncOptions = MSELossOptions;
/// Options of functional::smooth_l1_loss: reduction and beta.
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
/// Options of functional::huber_loss: reduction and delta.
using HuberLossFuncOptions = HuberLossOptions;
/// Options of functional::binary_cross_entropy: weight and reduction.
using BinaryCrossEntropyFuncOptions = BCELossOptions;
/// Options of functional::binary_cross_entropy_with_logits: weight, reduction and pos_weight.
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
/// Options of functional::nll_loss: weight, ignore_index and reduction.
using NLLLossFuncOptions = NLLLossOptions;
/// Options of functional::cross_entropy: weight, ignore_index, reduction and label_smoothing.
using CrossEntropyFuncOptions = CrossEntropyLossOptions;

/// l1_loss(input, target, reduction) with the reduction from options (libtorch's overload).
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options);
/// mse_loss(input, target, reduction) with the reduction from options (libtorch's overload).
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options);
/// smooth_l1_loss(input, target, reduction, beta) from options (libtorch's overload).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options);
/// libtorch 1.13's smooth_l1_loss(input, target, options, beta): the reduction from options, beta
/// given apart. options.beta() must then be left at its default 1.0 (or equal beta): libtorch
/// 1.13 ignores it here and libtorch 2 refuses it ("expected beta not to be provided in
/// 'options'"), so a different one throws instead of being silently dropped.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options, double beta);
/// huber_loss(input, target, reduction, delta) from options (libtorch's overload).
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options);
/// binary_cross_entropy(input, target, weight, reduction) from options (libtorch's overload).
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options);
/// binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight) from options
/// (libtorch's overload).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options);
/// nll_loss(input, target, weight, ignore_index, reduction) from options (libtorch's overload).
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options);
/// cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing) from options
/// (libtorch's overload).
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options);

}  // namespace minigrad::nn::functional
