// softmax and log_softmax: fused, numerically stable kernels (the row max is subtracted before
// exp, so logits of 1e4 give no inf or NaN), and their backward ops _softmax_backward_data and
// _log_softmax_backward_data (Note [Backward ops] in ops/elementwise.cpp), each one kernel call
// (kernels/softmax.h, which picks the SIMD level and the threads) and a derivative in public ops.
#include <array>
#include <cmath>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/softmax.h"
#include "minigrad/ops/backward.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/reduce.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using detail::needs_grad;
using Grads = std::vector<Tensor>;

namespace {

/// (outer, n, inner) of a contiguous shape around dim d.
std::array<std::int64_t, 3> split_dims(const Shape& shape, std::int64_t d) {
  std::array<std::int64_t, 3> r{1, 1, 1};
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(shape.size()); ++i)
    r[i < d ? 0 : (i == d ? 1 : 2)] *= shape[i];
  return r;
}

/// Runs the softmax (or log_softmax) of x along dim into a new contiguous tensor.
template <bool kLog>
Tensor softmax_forward(const Tensor& x_in, std::int64_t dim, const char* op) {
  MG_CHECK(x_in.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Tensor x = x_in.is_floating_point() ? x_in : x_in.to(get_default_dtype());
  std::int64_t d = detail::wrap_dim(dim, x.dim(), op);
  x = x.detach().contiguous();
  Tensor out = detail::make_tensor(x.shape(), x.dtype());
  // Plain variables, not a structured binding: clang 14 cannot capture those in a lambda.
  const auto dims = split_dims(x.shape(), d);
  const std::int64_t outer = dims[0], n = dims[1], inner = dims[2];
  // An empty tensor has no rows, but outer or inner alone may be non-zero: (2, 0, 3) over dim 1
  // must not read row[0] (fuzz finding F7).
  if (out.numel() == 0) return out;
  detail::dispatch_floating(x.dtype(), op, [&]<typename T>() {
    detail::softmax::forward<T>(x.impl()->data<T>(), out.impl()->data<T>(), outer, n, inner, kLog);
  });
  return out;
}

/// softmax: grad_x = y * (g - sum(g * y, dim)); log_softmax: grad_x = g - exp(y) * sum(g, dim);
/// in one fused pass per row.
template <bool kLog>
Tensor softmax_backward(const Tensor& g_in, const Tensor& y_in, std::int64_t dim, const char* op) {
  MG_CHECK(g_in.defined() && y_in.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(g_in.is_floating_point() && y_in.is_floating_point(), op,
           "expected floating-point tensors but got ", dtype_name(g_in.dtype()), " and ",
           dtype_name(y_in.dtype()));
  MG_CHECK(g_in.dtype() == y_in.dtype(), op, "grad_output (", dtype_name(g_in.dtype()),
           ") and output (", dtype_name(y_in.dtype()), ") must have the same dtype");
  MG_CHECK(g_in.shape() == y_in.shape(), op, "grad_output of shape ", g_in.shape(),
           " and output of shape ", y_in.shape(), " must have the same shape");
  const std::int64_t d = detail::wrap_dim(dim, y_in.dim(), op);
  // Read only: contiguous() is the tensor itself when it already is (autograd's case).
  const Tensor g = g_in.contiguous(), y = y_in.contiguous();
  Tensor gx = detail::make_tensor(y.shape(), y.dtype());
  const auto dims = split_dims(y.shape(), d);
  const std::int64_t outer = dims[0], n = dims[1], inner = dims[2];
  if (gx.numel() == 0) return gx;  // as the forward (fuzz finding F7)
  detail::dispatch_floating(y.dtype(), op, [&]<typename T>() {
    detail::softmax::backward<T>(g.impl()->data<T>(), y.impl()->data<T>(), gx.impl()->data<T>(),
                                 outer, n, inner, kLog);
  });
  return gx;
}

}  // namespace

Tensor softmax(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("softmax");
  Tensor out = softmax_forward<false>(x, dim, "softmax");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "softmax");
  detail::record("SoftmaxBackward0", out, {&x}, {kOutput}, [d](const Tensor& g, FunctionNode& n) {
    Tensor y = n.saved(0);
    return Grads{_softmax_backward_data(g, y, d, y.dtype())};
  });
  return out;
}

Tensor log_softmax(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("log_softmax");
  Tensor out = softmax_forward<true>(x, dim, "log_softmax");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "log_softmax");
  detail::record("LogSoftmaxBackward0", out, {&x}, {kOutput},
                 [d](const Tensor& g, FunctionNode& n) {
                   Tensor y = n.saved(0);
                   return Grads{_log_softmax_backward_data(g, y, d, y.dtype())};
                 });
  return out;
}

// NOTE: input_dtype is PyTorch's argument, which only a half-precision softmax computed in float32
// uses (CUDA); on the CPU, as here, the result has output's dtype whatever it says.

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                              Dtype input_dtype) {
  MG_PROFILE_OP("_softmax_backward_data");
  Tensor out = softmax_backward<false>(grad_output, output, dim, "_softmax_backward_data");
  const std::int64_t d = detail::wrap_dim(dim, output.dim(), "_softmax_backward_data");
  // y (g - sum(g y)): d/dg = this op again; d/dy = gg (g - sum(g y)) - g sum(gg y)
  detail::record("SoftmaxBackwardDataBackward0", out, {&grad_output, &output},
                 {&output, needs_grad(output) ? &grad_output : nullptr},
                 [d, input_dtype](const Tensor& gg, FunctionNode& n) {
                   Tensor y = n.saved(0);
                   Grads r(2);
                   if (n.needs_input_grad(0)) r[0] = _softmax_backward_data(gg, y, d, input_dtype);
                   if (n.needs_input_grad(1)) {
                     Tensor g = n.saved(1);
                     r[1] = gg * (g - sum(g * y, {d}, /*keepdim=*/true)) -
                            g * sum(gg * y, {d}, /*keepdim=*/true);
                   }
                   return r;
                 });
  return out;
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, std::int64_t dim,
                                  [[maybe_unused]] Dtype input_dtype) {
  MG_PROFILE_OP("_log_softmax_backward_data");
  Tensor out = softmax_backward<true>(grad_output, output, dim, "_log_softmax_backward_data");
  const std::int64_t d = detail::wrap_dim(dim, output.dim(), "_log_softmax_backward_data");
  // g - exp(y) sum(g): d/dg = gg - sum(gg exp(y)) (its Jacobian is not symmetric, unlike
  // softmax's); d/dy = -gg exp(y) sum(g)
  detail::record("LogSoftmaxBackwardDataBackward0", out, {&grad_output, &output},
                 {&output, needs_grad(output) ? &grad_output : nullptr},
                 [d](const Tensor& gg, FunctionNode& n) {
                   Tensor y = n.saved(0);
                   Grads r(2);
                   if (n.needs_input_grad(0)) r[0] = gg - sum(gg * exp(y), {d}, /*keepdim=*/true);
                   if (n.needs_input_grad(1))
                     r[1] = -gg * exp(y) * sum(n.saved(1), {d}, /*keepdim=*/true);
                   return r;
                 });
  return out;
}

}  // namespace minigrad
