#pragma once
// Classification, divergence and regression losses, with torch.nn.functional's (PyTorch 1.13)
// semantics.
//
// `reduction` is "mean" (the default), "sum" or "none" (kl_div also takes "batchmean"). With "none"
// the result has the input's shape without the class dim (cross_entropy, nll_loss) or the
// broadcast shape of input and target (kl_div, binary_cross_entropy_with_logits).
// Every loss throws minigrad::Error "[op] ..." on bad shapes, dtypes, reductions or targets.
#include <cstdint>
#include <string>

#include "minigrad/ops.h"
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
