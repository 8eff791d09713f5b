#pragma once
// nn::functional: stateless layers and losses (torch.nn.functional).
#include <optional>
#include <string>

#include "minigrad/autograd.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::functional {

/// x W^T + b, with weight [out, in] and an optional bias [out].
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);
/// Mean (or "sum", or "none") of the squared differences; shapes must match.
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");
/// softmax(q k^T * scale + mask) v. q [..., L, E], k [..., S, E], v [..., S, Ev] -> [..., L, Ev].
/// scale defaults to 1/sqrt(E) (the lesson's missing detail); is_causal hides the future (key j >
/// i); attn_mask is a bool mask (true = may attend) or a float mask added to the scores.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace minigrad::nn::functional
