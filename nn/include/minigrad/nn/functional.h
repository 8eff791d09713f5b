#pragma once
// nn::functional: stateless layers and losses (torch.nn.functional).
#include <concepts>
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
/// softmax(q k^T * scale + mask) v, PyTorch 2's F.scaled_dot_product_attention with its arguments
/// in its order. q [..., L, E], k [..., S, E], v [..., S, Ev] -> [..., L, Ev]. attn_mask is a bool
/// mask (true = may attend) or a float mask added to the scores; dropout_p in [0, 1] drops
/// attention weights after the softmax with F.dropout(weights, dropout_p, training=true) of
/// torch 1.13's CPU stream (Note [SDPA dropout]): like PyTorch's function it always drops, so pass
/// `is_training() ? p : 0.0` from a module; is_causal hides the future (key j > i); scale defaults
/// to 1/sqrt(E) (the lesson's missing detail). Causal attention is `(q, k, v, {}, 0.0, true)`.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);
/// The old order (q, k, v, attn_mask, is_causal, ...) does not compile: a bool where dropout_p
/// goes would otherwise become dropout_p = 1.0 (or 0.0) without a word.
template <typename Bool, typename... Rest>
requires std::same_as<Bool, bool> Tensor scaled_dot_product_attention(const Tensor&, const Tensor&,
                                                                      const Tensor&, const Tensor&,
                                                                      Bool, Rest&&...) {
  static_assert(!std::same_as<Bool, bool>,
                "scaled_dot_product_attention takes PyTorch's order (q, k, v, attn_mask, "
                "dropout_p, is_causal, scale): write (q, k, v, {}, 0.0, true) for causal "
                "attention");
  return Tensor();
}

}  // namespace minigrad::nn::functional
