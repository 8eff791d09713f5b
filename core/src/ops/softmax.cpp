// softmax and log_softmax: fused, numerically stable kernels (the row max is subtracted before
// exp, so logits of 1e4 give no inf or NaN), with backward formulas written in public ops.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "minigrad/ops.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::SaveOutput;
using Grads = std::vector<Tensor>;

namespace {

/// Runs the softmax (or log_softmax) of x along dim into a new contiguous tensor.
template <bool kLog>
Tensor softmax_forward(const Tensor& x_in, std::int64_t dim, const char* op) {
  MG_CHECK(x_in.defined(), op, "got an undefined tensor");
  Tensor x = x_in.is_floating_point() ? x_in : x_in.to(kFloat32);
  std::int64_t d = detail::wrap_dim(dim, x.dim(), op);
  x = x.detach().contiguous();
  Tensor out = detail::make_tensor(x.shape(), x.dtype());
  std::int64_t outer = 1, n = 1, inner = 1;
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (i < d)
      outer *= x.shape()[i];
    else if (i == d)
      n = x.shape()[i];
    else
      inner *= x.shape()[i];
  }
  detail::dispatch_floating(x.dtype(), op, [&]<typename T>() {
    const T* px = x.impl()->data<T>();
    T* po = out.impl()->data<T>();
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t i = 0; i < inner; ++i) {
        const T* row = px + o * n * inner + i;
        T* orow = po + o * n * inner + i;
        T m = -std::numeric_limits<T>::infinity();
        for (std::int64_t j = 0; j < n; ++j) m = std::max(m, row[j * inner]);
        if (std::isnan(row[0])) m = row[0];
        double s = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          T e = std::exp(row[j * inner] - m);
          if constexpr (!kLog) orow[j * inner] = e;
          s += e;
        }
        if constexpr (kLog) {
          T lse = static_cast<T>(std::log(s)) + m;
          for (std::int64_t j = 0; j < n; ++j) orow[j * inner] = row[j * inner] - lse;
        } else {
          T inv = static_cast<T>(1.0 / s);
          for (std::int64_t j = 0; j < n; ++j) orow[j * inner] *= inv;
        }
      }
    }
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) {
  Tensor out = softmax_forward<false>(x, dim, "softmax");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "softmax");
  detail::record(
      "SoftmaxBackward0", out, {&x},
      [d](const Tensor& g, FunctionNode& n) {
        // grad_x = y * (g - sum(g * y, dim))
        Tensor y = n.output();
        return Grads{y * (g - sum(g * y, {d}, /*keepdim=*/true))};
      },
      false, SaveOutput::kYes);
  return out;
}

Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  Tensor out = softmax_forward<true>(x, dim, "log_softmax");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "log_softmax");
  detail::record(
      "LogSoftmaxBackward0", out, {&x},
      [d](const Tensor& g, FunctionNode& n) {
        // grad_x = g - exp(y) * sum(g, dim)
        return Grads{g - exp(n.output()) * sum(g, {d}, /*keepdim=*/true)};
      },
      false, SaveOutput::kYes);
  return out;
}

}  // namespace minigrad
