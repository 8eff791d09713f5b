#pragma once
// nn::utils: gradient clipping (torch.nn.utils.clip_grad_norm_, clip_grad_value_).
#include <initializer_list>
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

/// libtorch's overloads: a brace list of parameters, `clip_grad_norm_({w, b}, 1.0)`, or a single
/// one, `clip_grad_norm_(w, 1.0)` (PyTorch's `clip_grad_norm_(w, 1.0)` with a tensor). They
/// return the total norm as a 0-dim tensor, as the vector form and PyTorch do (libtorch 1.13
/// returns a double: write `.item<double>()`).
inline Tensor clip_grad_norm_(std::initializer_list<Tensor> params, double max_norm,
                              double norm_type = 2.0, bool error_if_nonfinite = false) {
  return clip_grad_norm_(std::vector<Tensor>(params), max_norm, norm_type, error_if_nonfinite);
}
inline Tensor clip_grad_norm_(const Tensor& param, double max_norm, double norm_type = 2.0,
                              bool error_if_nonfinite = false) {
  return clip_grad_norm_(std::vector<Tensor>{param}, max_norm, norm_type, error_if_nonfinite);
}
/// clip_grad_value_ of a brace list of parameters or of one, as libtorch's overloads.
inline void clip_grad_value_(std::initializer_list<Tensor> params, double clip_value) {
  clip_grad_value_(std::vector<Tensor>(params), clip_value);
}
inline void clip_grad_value_(const Tensor& param, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{param}, clip_value);
}

}  // namespace minigrad::nn::utils
