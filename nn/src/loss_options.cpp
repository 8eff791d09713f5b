// The functional losses' libtorch overloads (F::cross_entropy(x, y,
// F::CrossEntropyFuncOptions()...)): each reads its options and calls the functional loss of
// loss.cpp.
#include <string>

#include "minigrad/nn/functional.h"
#include "minigrad/nn/loss.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/nn.h"

namespace minigrad::nn::functional {

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return functional::l1_loss(input, target, reduction_name(options.reduction()));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return functional::mse_loss(input, target, reduction_name(options.reduction()));
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options) {
  return functional::smooth_l1_loss(input, target, reduction_name(options.reduction()),
                                    options.beta());
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options, double beta) {
  MG_CHECK(options.beta() == SmoothL1LossFuncOptions().beta() || options.beta() == beta,
           "smooth_l1_loss", "expected beta not to be provided in 'options', but got ",
           options.beta(), " (and beta ", beta,
           " as an argument): give beta once, in the options or as the argument");
  return functional::smooth_l1_loss(input, target, reduction_name(options.reduction()), beta);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return functional::huber_loss(input, target, reduction_name(options.reduction()),
                                options.delta());
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options) {
  return functional::binary_cross_entropy(input, target, options.weight(),
                                          reduction_name(options.reduction()));
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return functional::binary_cross_entropy_with_logits(
      input, target, options.weight(), reduction_name(options.reduction()), options.pos_weight());
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  return functional::nll_loss(input, target, options.weight(), options.ignore_index(),
                              reduction_name(options.reduction()));
}

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options) {
  return functional::cross_entropy(input, target, options.weight(), options.ignore_index(),
                                   reduction_name(options.reduction()), options.label_smoothing());
}

}  // namespace minigrad::nn::functional
