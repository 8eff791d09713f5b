#pragma once
// Backward ops: the fused gradients of ops whose backward is a kernel of its own, as PyTorch's
// (torch.ops.aten.sigmoid_backward, ...), with PyTorch's names and argument orders. A forward's
// backward calls them (sigmoid's is `sigmoid_backward(grad, result)`); each records its own
// derivative, so a double backward goes through them (TanhBackwardBackward0, ...). Like a binary
// op they broadcast and promote their operands; integer-only operands throw.
// Definitions in core/src/ops/elementwise.cpp, core/src/ops/softmax.cpp and core/src/ops/nn.cpp.
// Part of minigrad/ops.h.
#include <array>
#include <cstdint>
#include <string>
#include <tuple>

#include "minigrad/tensor.h"

namespace minigrad {

/// grad_output * (1 - output^2): tanh's gradient from its output.
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output);
/// grad_output * (1 - output) * output: sigmoid's gradient from its output.
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output);
/// grad_output * gelu'(self), approximate "none" or "tanh" as gelu; throws for another string.
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self,
                     const std::string& approximate = "none");

/// softmax's gradient from its output along dim: output * (grad_output - sum(grad_output *
/// output, dim)); the two must have the same shape and dtype. input_dtype is PyTorch's argument:
/// the result has output's dtype (as PyTorch on the CPU).
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                              Dtype input_dtype);
/// log_softmax's gradient from its output along dim: grad_output - exp(output) *
/// sum(grad_output, dim); as _softmax_backward_data otherwise.
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                  Dtype input_dtype);

/// embedding's gradient for its [num_weights, dim] table: the rows of grad_output (one per index,
/// grad_output's last dim the row) added at their indices into zeros. Rows at padding_idx (-1:
/// none) add nothing; with scale_grad_by_freq each row is divided by how often its index occurs.
/// Indices must be int64 in [0, num_weights).
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                std::int64_t num_weights, std::int64_t padding_idx,
                                bool scale_grad_by_freq);
/// embedding's backward as PyTorch's: embedding_dense_backward; sparse = true throws (minigrad
/// has no sparse tensors).
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, std::int64_t num_weights,
                          std::int64_t padding_idx, bool scale_grad_by_freq, bool sparse);

/// layer_norm's gradients (grad_input, grad_weight, grad_bias) for input normalised over its last
/// dims, normalized_shape, given the forward's per-row mean and rstd = 1 / sqrt(var + eps) (shaped
/// like input with those dims 1, any floating dtype): with x_hat = (input - mean) * rstd and
/// g = grad_out * weight (weight may be undefined: ones),
///   grad_input  = rstd * (g - mean(g) - x_hat * mean(g * x_hat))   (means over the row)
///   grad_weight = sum over the rows of grad_out * x_hat, grad_bias = sum of grad_out
/// An output whose output_mask entry is false is undefined; bias is PyTorch's argument, unused.
/// Its derivative (NativeLayerNormBackwardBackward0) treats mean and rstd as the statistics of
/// input, as PyTorch's: they get no gradient of their own.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, const Shape& normalized_shape, const Tensor& mean,
    const Tensor& rstd, const Tensor& weight, const Tensor& bias, std::array<bool, 3> output_mask);

}  // namespace minigrad
