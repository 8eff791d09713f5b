#pragma once
// nn::utils: gradient clipping (torch.nn.utils.clip_grad_norm_, clip_grad_value_).
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::utils {

/// Scales the gradients of params so that their total norm (norm_type, default 2, or INFINITY) is
/// at most max_norm, as torch.nn.utils.clip_grad_norm_; returns the total norm before clipping.
/// A non-finite total norm throws if error_if_nonfinite, else scales the gradients by it (they
/// become nan, as PyTorch).
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
/// Clamps every gradient of params to [-clip_value, clip_value] in place, as
/// torch.nn.utils.clip_grad_value_.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value);

}  // namespace minigrad::nn::utils
