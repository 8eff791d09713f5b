#pragma once
// scaled_dot_product_attention as one core op (core/src/ops/attention.cpp). Not included by
// minigrad/ops.h: users call nn::functional::scaled_dot_product_attention (nn/functional.h),
// which forwards here; include this header to call the core op without nn.
#include <optional>

#include "minigrad/tensor.h"

namespace minigrad {

/// softmax(q k^T * scale + mask) v. q [..., L, E], k [..., S, E], v [..., S, Ev] -> [..., L, Ev].
/// scale defaults to 1/sqrt(E); is_causal hides the future (key j > i); attn_mask is a bool mask
/// (true = may attend) or a float mask added to the scores. Without a mask tensor and with equal
/// batch dims, one fused kernel (Note [Flash attention on the CPU]); otherwise composed.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace minigrad
