#pragma once
// Backward ops: the fused gradients of ops whose backward is a kernel of its own, as PyTorch's
// (torch.ops.aten.sigmoid_backward, ...), with PyTorch's names and argument orders. A forward's
// backward calls them (sigmoid's is `sigmoid_backward(grad, result)`); each records its own
// derivative, so a double backward goes through them (TanhBackwardBackward0, ...). Like a binary
// op they broadcast and promote their operands; integer-only operands throw.
// Definitions in core/src/ops/elementwise.cpp and core/src/ops/softmax.cpp. Part of
// minigrad/ops.h.
#include <cstdint>
#include <string>

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

}  // namespace minigrad
