#pragma once
// The fused ops nn is built on: embedding, layer_norm, rms_norm, cross_entropy, nll_loss
// (core/src/ops/nn.cpp; kernels in core/src/kernels/{embedding,norm,loss}.cpp).
// nn::functional forwards to these under the same names; the modules (nn::Embedding,
// nn::LayerNorm, nn::CrossEntropyLoss, ...) call nn::functional.
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <cstdint>
#include <optional>
#include <string>

#include "minigrad/tensor.h"

namespace minigrad {

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
/// Cross entropy of logits input ([N, C], [N, C, d1, ...] or [C]) against int64 class indices
/// (the input's shape without C) or class probabilities (the input's shape), as
/// F.cross_entropy; see nn::functional::cross_entropy (minigrad/nn/loss.h) for weight,
/// ignore_index, reduction, label_smoothing and what it throws.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     std::int64_t ignore_index = -100, const std::string& reduction = "mean",
                     double label_smoothing = 0.0);
/// Negative log likelihood -weight[t] * input[n, t] of log-probabilities against int64 class
/// indices, as F.nll_loss; see nn::functional::nll_loss (minigrad/nn/loss.h).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                std::int64_t ignore_index = -100, const std::string& reduction = "mean");

namespace detail {
/// embedding() without its profiler scope, naming `op` in its messages (nn::Embedding's forward
/// reports as "[Embedding]").
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx,
                 const char* op);
}  // namespace detail

}  // namespace minigrad
