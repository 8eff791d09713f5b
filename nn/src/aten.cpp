// ATen-level binary_cross_entropy (minigrad/nn/aten.h); its embedding is in layers.cpp, beside
// nn::Embedding's forward, whose gradient scaling it shares.
#include "minigrad/nn/aten.h"

#include <string>

#include "loss_common.h"
#include "minigrad/error.h"
#include "minigrad/nn/loss.h"

namespace minigrad {

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const Tensor& weight,
                            std::int64_t reduction) {
  MG_CHECK(reduction >= Reduction::None && reduction < Reduction::END, "binary_cross_entropy",
           reduction,
           " is not a valid value for reduction (expected Reduction::None (0), "
           "Reduction::Mean (1) or Reduction::Sum (2))");
  return nn::functional::binary_cross_entropy(self, target, weight,
                                              nn::detail::kReductionNames[reduction]);
}

}  // namespace minigrad
