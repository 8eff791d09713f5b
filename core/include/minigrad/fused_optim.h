#pragma once
// The fused optimizer steps the built-in optimizers call (the role of PyTorch's
// torch._fused_adam_): internal API in minigrad::detail, public only so that minigrad::optim, a
// separate library, can reach core's kernels. The arithmetic is PyTorch 1.13's (Note [Fused Adam]
// in core/src/kernels/optim.h).
#include "minigrad/tensor.h"

namespace minigrad::detail {

/// The options of one Adam / AdamW update, as torch.optim.Adam(W)'s; `decoupled_weight_decay`
/// selects AdamW (p *= 1 - lr * weight_decay) over Adam (grad += weight_decay * p).
struct FusedAdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;
  bool decoupled_weight_decay = false;
};

/// One Adam / AdamW step of one parameter at step count `step` (>= 1, already incremented), in one
/// pass over param, grad, exp_avg, exp_avg_sq and, with amsgrad, max_exp_avg_sq (otherwise pass an
/// undefined tensor), split across threads with the same bits for any thread count. Writes param
/// and the moments in place (bumping their versions). Returns false and touches nothing when the
/// kernel does not apply: dtypes other than one float32 or float64 for all, or a non-contiguous
/// tensor; the caller then runs the unfused ops. Throws minigrad::Error `[_fused_adam_] ...` for an
/// undefined tensor, differing shapes, step < 1, or grad mode on with a tensor that requires grad.
bool fused_adam_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                 const Tensor& exp_avg_sq, const Tensor& max_exp_avg_sq, double step,
                 const FusedAdamOptions& options);

}  // namespace minigrad::detail
