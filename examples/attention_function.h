#pragma once
// Scaled dot-product attention as a custom Function with a backward derived by hand
// (docs/tutorial.md, "Write attention's backward yourself"). examples/attention_backward.cpp
// gradchecks it and compares it with the built-in op; the op table gradchecks it too.
#include <minigrad/minigrad.h>

#include <cmath>
#include <vector>

/// out = softmax(q k^T / sqrt(d)) v for q [..., L, d], k [..., S, d], v [..., S, dv].
struct Attention : minigrad::autograd::Function<Attention> {
  using Tensor = minigrad::Tensor;

  static Tensor forward(minigrad::autograd::AutogradContext* ctx, const Tensor& q, const Tensor& k,
                        const Tensor& v) {
    double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    Tensor p = (q.matmul(k.transpose(-2, -1)) * scale).softmax(-1);  // [..., L, S]
    ctx->save_for_backward({q, k, v, p});
    ctx->saved_data["scale"] = scale;
    return p.matmul(v);
  }

  // With S = q k^T * scale, P = softmax(S) (rows) and out = P v, given G = d loss / d out:
  //   dv = P^T G                         [..., S, dv]
  //   dP = G v^T                         [..., L, S]
  //   dS = P * (dP - rowsum(dP * P))     softmax's backward, row by row
  //   dq = dS k * scale,  dk = dS^T q * scale
  static std::vector<Tensor> backward(minigrad::autograd::AutogradContext* ctx,
                                      std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    const Tensor &q = saved[0], &k = saved[1], &v = saved[2];
    double scale = ctx->saved_data["scale"].toDouble();
    // P was computed without history, so it is a constant to a second backward: under
    // create_graph, rebuild it from q and k with differentiable ops instead.
    Tensor p = minigrad::is_grad_enabled() ? (q.matmul(k.transpose(-2, -1)) * scale).softmax(-1)
                                           : saved[3];
    const Tensor& g = grads[0];
    Tensor dp = g.matmul(v.transpose(-2, -1));
    Tensor ds = p * (dp - (dp * p).sum(-1, /*keepdim=*/true));
    return {ds.matmul(k) * scale, ds.transpose(-2, -1).matmul(q) * scale,
            p.transpose(-2, -1).matmul(g)};
  }
};
