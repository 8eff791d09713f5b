#pragma once
// nn::utils: gradient clipping.
#include <vector>

#include "minigrad/autograd.h"
#include "minigrad/ops.h"

namespace minigrad::nn::utils {

/// Scales the gradients of params so that their total norm (norm_type, default 2, or INFINITY) is
/// at most max_norm, as torch.nn.utils.clip_grad_norm_; returns the total norm before clipping.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2.0);

}  // namespace minigrad::nn::utils
