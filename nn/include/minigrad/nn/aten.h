#pragma once
// ATen's lower-level calls a libtorch program reaches for (torch::binary_cross_entropy,
// torch::embedding, at::Reduction), with ATen's argument order and types. Each one delegates to
// the implementation nn::functional already uses (nn/src/aten.cpp, nn/src/layers.cpp): the same
// values and gradients.
#include <cstdint>

#include "minigrad/nn/options.h"  // mg::Reduction
#include "minigrad/tensor.h"

namespace minigrad {

/// torch::binary_cross_entropy(self, target, weight, reduction): nn::functional's
/// binary_cross_entropy with the reduction as ATen's int64 code (Reduction::None, Mean or Sum;
/// any other throws). An undefined weight means none.
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target,
                            const Tensor& weight = Tensor(),
                            std::int64_t reduction = Reduction::Mean);

/// torch::embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse), ATen's order
/// (weight first; mg::embedding(indices, weight) is F.embedding's). padding_idx -1 means none, as
/// ATen's (F.embedding has already turned a negative one into a row); scale_grad_by_freq divides
/// each row's gradient by how often its index occurs, as nn::Embedding's option. sparse=true
/// throws (minigrad has no sparse tensors): pass false, the dense gradient has the same values.
Tensor embedding(const Tensor& weight, const Tensor& indices, std::int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse = false);

}  // namespace minigrad
