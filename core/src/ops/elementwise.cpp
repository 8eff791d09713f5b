// Elementwise ops: arithmetic with broadcasting and type promotion, unary math, comparisons,
// where and masked_fill. Each op's backward sits directly under its forward.
#include <cmath>
#include <numbers>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/loops.h"
#include "kernels/unary.h"
#include "kernels/wrapping.h"
#include "minigrad/ops/backward.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using detail::needs_grad;
using detail::record;
using Grads = std::vector<Tensor>;

namespace {

void check_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    MG_CHECK(t->defined(), op,
             "got an undefined tensor (a default-constructed Tensor, or one moved from)");
}

/// t converted to dtype without recording history (forward kernels only).
Tensor convert(const Tensor& t, Dtype dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = detail::make_tensor(t.shape(), dtype);
  detail::copy_into(out, t);
  return out;
}

/// Broadcasts a and b, converts both to `compute`, and writes f(x, y) into a new tensor of
/// out_dtype (compute's C++ type, or bool).
template <typename F>
Tensor binary_kernel(const char* op, const Tensor& a, const Tensor& b, Dtype compute,
                     Dtype out_dtype, F f) {
  check_defined(op, {&a, &b});
  Shape shape = detail::broadcast_shapes(a.shape(), b.shape(), op);
  Tensor ac = convert(a, compute), bc = convert(b, compute);
  Tensor out = detail::make_tensor(shape, out_dtype);
  Shape sa = detail::broadcast_strides(ac, shape), sb = detail::broadcast_strides(bc, shape);
  detail::dispatch(compute, [&]<typename T>() {
    const T* pa = ac.impl()->data<T>();
    const T* pb = bc.impl()->data<T>();
    if (out_dtype == kBool) {
      detail::binary_loop<T, bool>(shape, pa, sa, pb, sb, out.impl()->data<bool>(), out.strides(),
                                   [&](T x, T y) { return static_cast<bool>(f(x, y)); });
    } else {
      detail::binary_loop<T, T>(shape, pa, sa, pb, sb, out.impl()->data<T>(), out.strides(),
                                [&](T x, T y) { return static_cast<T>(f(x, y)); });
    }
  });
  return out;
}

using detail::unary::Op;

/// A floating-point unary op: integer and bool inputs compute in float32 (the default dtype), as
/// PyTorch; the kernel layer picks the code (kernels/unary.h).
Tensor float_unary(const char* name, const Tensor& x, Op op) {
  check_defined(name, {&x});
  Dtype dt = x.is_floating_point() ? x.dtype() : get_default_dtype();
  Tensor converted;
  const Tensor& in = x.dtype() == dt ? x : (converted = convert(x, dt));
  Tensor out = detail::make_tensor(in.shape(), dt);
  detail::dispatch_floating(dt, name, [&]<typename T>() {
    detail::unary::forward<T>(op, in.shape(), in.impl()->data<T>(), in.strides(),
                              out.impl()->data<T>());
  });
  return out;
}

/// g * op'(v), broadcasting g and v and promoting them as a binary op: the backward ops of
/// tanh, sigmoid (v their output) and gelu (v its input), in one pass (kernels/unary.h).
Tensor unary_backward(const char* name, const Tensor& g, const Tensor& v, Op op) {
  check_defined(name, {&g, &v});
  Dtype dt = detail::result_type(g, v);
  MG_CHECK(is_floating_point(dt), name, "expected floating-point tensors but got ",
           dtype_name(g.dtype()), " and ", dtype_name(v.dtype()));
  Tensor g_converted, v_converted;
  const Tensor& gc = g.dtype() == dt ? g : (g_converted = convert(g, dt));
  const Tensor& vc = v.dtype() == dt ? v : (v_converted = convert(v, dt));
  if (g.shape() == v.shape()) {  // the usual case (autograd's): no broadcast
    Tensor out = detail::make_tensor(v.shape(), dt);
    detail::dispatch_floating(dt, name, [&]<typename T>() {
      detail::unary::backward<T>(op, v.shape(), gc.impl()->data<T>(), gc.strides(),
                                 vc.impl()->data<T>(), vc.strides(), out.impl()->data<T>());
    });
    return out;
  }
  Shape shape = detail::broadcast_shapes(g.shape(), v.shape(), name);
  Tensor out = detail::make_tensor(shape, dt);
  Shape sg = detail::broadcast_strides(gc, shape), sv = detail::broadcast_strides(vc, shape);
  detail::dispatch_floating(dt, name, [&]<typename T>() {
    detail::unary::backward<T>(op, shape, gc.impl()->data<T>(), sg, vc.impl()->data<T>(), sv,
                               out.impl()->data<T>());
  });
  return out;
}

/// A unary op that keeps the dtype (neg, abs, relu, sign).
template <typename F>
Tensor same_dtype_unary(const char* op, const Tensor& x, F f) {
  check_defined(op, {&x});
  Tensor out = detail::make_tensor(x.shape(), x.dtype());
  detail::dispatch(x.dtype(), [&]<typename T>() {
    detail::unary_loop<T, T>(x.shape(), x.impl()->data<T>(), x.strides(), out.impl()->data<T>(),
                             out.strides(), [&](T v) { return static_cast<T>(f(v)); });
  });
  return out;
}

/// s as a 0-dim tensor of the dtype it takes next to a; op names the caller in errors.
Tensor wrap(const char* op, const Tensor& a, Scalar s) {
  check_defined(op, {&a});
  return scalar_tensor(s, detail::result_type(a, s));
}

}  // namespace

// ---------------------------------------------------------------- arithmetic

Tensor add(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("add");
  check_defined("add", {&a, &b});
  Tensor out = binary_kernel("add", a, b, detail::result_type(a, b), detail::result_type(a, b),
                             [](auto x, auto y) { return detail::wrapping_add(x, y); });
  record("AddBackward0", out, {&a, &b}, [](const Tensor& g, FunctionNode&) { return Grads{g, g}; });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("sub");
  check_defined("sub", {&a, &b});
  MG_CHECK(!(a.dtype() == kBool && b.dtype() == kBool), "sub",
           "subtraction of two bool tensors is not supported; use logical_xor or ~");
  Tensor out = binary_kernel("sub", a, b, detail::result_type(a, b), detail::result_type(a, b),
                             [](auto x, auto y) { return detail::wrapping_sub(x, y); });
  record("SubBackward0", out, {&a, &b}, [](const Tensor& g, FunctionNode& n) {
    return Grads{g, n.needs_input_grad(1) ? neg(g) : Tensor()};
  });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("mul");
  check_defined("mul", {&a, &b});
  Tensor out = binary_kernel("mul", a, b, detail::result_type(a, b), detail::result_type(a, b),
                             [](auto x, auto y) { return detail::wrapping_mul(x, y); });
  // a's gradient reads b and b's reads a: each is kept only when the other needs a gradient.
  record("MulBackward0", out, {&a, &b},
         {needs_grad(a) ? &b : nullptr, needs_grad(b) ? &a : nullptr},
         [](const Tensor& g, FunctionNode& n) {
           return Grads{n.needs_input_grad(0) ? g * n.saved(0) : Tensor(),
                        n.needs_input_grad(1) ? g * n.saved(1) : Tensor()};
         });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("div");
  check_defined("div", {&a, &b});
  Dtype dt = detail::result_type(a, b);
  if (!is_floating_point(dt)) dt = get_default_dtype();  // true division
  Tensor out = binary_kernel("div", a, b, dt, dt, [](auto x, auto y) { return x / y; });
  record("DivBackward0", out, {&a, &b}, {needs_grad(b) ? &a : nullptr, &b},
         [](const Tensor& g, FunctionNode& n) {
           // d(a/b)/da = 1/b;  d(a/b)/db = -a/b^2
           Tensor other = n.saved(1);
           return Grads{n.needs_input_grad(0) ? g / other : Tensor(),
                        n.needs_input_grad(1) ? -g * n.saved(0) / (other * other) : Tensor()};
         });
  return out;
}

// A tensor and a number: the number is not an input of the graph. Each op computes as its tensor
// form on the number wrapped as a 0-dim tensor, and its node keeps the number, not that tensor
// (as libtorch's MulBackward1): a long chain of `y = y * 0.5` holds one small node per op.
// Numbered as Python's MulBackward0, which `x * 0.5` records in PyTorch.

namespace {
/// The tensor form's result without its node: the op on a and s wrapped.
template <typename Op>
Tensor with_scalar(const char* op, const Tensor& a, Scalar s, Op tensor_op) {
  Tensor w = wrap(op, a, s);
  NoGradGuard no_grad;
  return tensor_op(a, w);
}
}  // namespace

Tensor add(const Tensor& a, Scalar b) {
  Tensor out = with_scalar("add", a, b, [](const Tensor& x, const Tensor& y) { return add(x, y); });
  record("AddBackward0", out, {&a}, [](const Tensor& g, FunctionNode&) { return Grads{g}; });
  return out;
}
Tensor sub(const Tensor& a, Scalar b) {
  Tensor out = with_scalar("sub", a, b, [](const Tensor& x, const Tensor& y) { return sub(x, y); });
  record("SubBackward0", out, {&a}, [](const Tensor& g, FunctionNode&) { return Grads{g}; });
  return out;
}
Tensor mul(const Tensor& a, Scalar b) {
  Tensor out = with_scalar("mul", a, b, [](const Tensor& x, const Tensor& y) { return mul(x, y); });
  record("MulBackward0", out, {&a}, [b](const Tensor& g, FunctionNode&) { return Grads{g * b}; });
  return out;
}
Tensor div(const Tensor& a, Scalar b) {
  Tensor out = with_scalar("div", a, b, [](const Tensor& x, const Tensor& y) { return div(x, y); });
  record("DivBackward0", out, {&a}, [b](const Tensor& g, FunctionNode&) { return Grads{g / b}; });
  return out;
}

Tensor neg(const Tensor& x) {
  MG_PROFILE_OP("neg");
  check_defined("neg", {&x});
  MG_CHECK(x.dtype() != kBool, "neg", "negation of a bool tensor is not supported; use ~ instead");
  Tensor out = same_dtype_unary("neg", x, [](auto v) { return detail::wrapping_neg(v); });
  record("NegBackward0", out, {&x}, [](const Tensor& g, FunctionNode&) { return Grads{-g}; });
  return out;
}

// ---------------------------------------------------------------- unary math

// Each op: its kernel, then its backward in one line of public ops. tanh, sigmoid and gelu call
// their backward op (tanh_backward, ...), PyTorch's: a fused kernel that records its own
// derivative, so double backward runs it too (Note [Backward ops] below).

Tensor exp(const Tensor& x) {
  MG_PROFILE_OP("exp");
  Tensor out = float_unary("exp", x, Op::kExp);
  record("ExpBackward0", out, {&x}, {kOutput},
         [](const Tensor& g, FunctionNode& n) { return Grads{g * n.saved(0)}; });
  return out;
}

Tensor log(const Tensor& x) {
  MG_PROFILE_OP("log");
  Tensor out = float_unary("log", x, Op::kLog);
  record("LogBackward0", out, {&x}, {&x},
         [](const Tensor& g, FunctionNode& n) { return Grads{g / n.saved(0)}; });
  return out;
}

Tensor sqrt(const Tensor& x) {
  MG_PROFILE_OP("sqrt");
  Tensor out = float_unary("sqrt", x, Op::kSqrt);
  record("SqrtBackward0", out, {&x}, {kOutput},
         [](const Tensor& g, FunctionNode& n) { return Grads{g / (2 * n.saved(0))}; });
  return out;
}

Tensor rsqrt(const Tensor& x) {
  MG_PROFILE_OP("rsqrt");
  Tensor out = float_unary("rsqrt", x, Op::kRsqrt);
  record("RsqrtBackward0", out, {&x}, {kOutput}, [](const Tensor& g, FunctionNode& n) {
    // d(x^-1/2)/dx = -1/2 x^-3/2 = -1/2 y^3
    Tensor y = n.saved(0);
    return Grads{g * y * y * y * -0.5};
  });
  return out;
}

Tensor tanh(const Tensor& x) {
  MG_PROFILE_OP("tanh");
  Tensor out = float_unary("tanh", x, Op::kTanh);
  record("TanhBackward0", out, {&x}, {kOutput},
         [](const Tensor& g, FunctionNode& n) { return Grads{tanh_backward(g, n.saved(0))}; });
  return out;
}

Tensor sigmoid(const Tensor& x) {
  MG_PROFILE_OP("sigmoid");
  Tensor out = float_unary("sigmoid", x, Op::kSigmoid);
  record("SigmoidBackward0", out, {&x}, {kOutput},
         [](const Tensor& g, FunctionNode& n) { return Grads{sigmoid_backward(g, n.saved(0))}; });
  return out;
}

Tensor erf(const Tensor& x) {
  MG_PROFILE_OP("erf");
  Tensor out = float_unary("erf", x, Op::kErf);
  record("ErfBackward0", out, {&x}, {&x}, [](const Tensor& g, FunctionNode& n) {
    // d erf(x)/dx = 2/sqrt(pi) exp(-x^2)
    Tensor self = n.saved(0);
    return Grads{g * exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi))};
  });
  return out;
}

namespace {
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kC = 0.044715;  // the cubic coefficient of gelu's tanh approximation

void check_approximate(const char* op, const std::string& approximate) {
  MG_CHECK(approximate == "none" || approximate == "tanh", op,
           "approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
}
}  // namespace

Tensor gelu(const Tensor& x, const std::string& approximate) {
  MG_PROFILE_OP("gelu");
  check_defined("gelu", {&x});
  check_approximate("gelu", approximate);
  MG_CHECK(x.is_floating_point(), "gelu", "expected a floating-point tensor but got ",
           dtype_name(x.dtype()));
  const bool tanh_form = approximate == "tanh";
  Tensor out = float_unary("gelu", x, tanh_form ? Op::kGeluTanh : Op::kGelu);
  record("GeluBackward0", out, {&x}, {&x}, [tanh_form](const Tensor& g, FunctionNode& n) {
    return Grads{gelu_backward(g, n.saved(0), tanh_form ? "tanh" : "none")};
  });
  return out;
}

// ---------------------------------------------------------------- backward ops

// Note [Backward ops]
// As PyTorch's derivatives.yaml, a forward whose gradient has a fused kernel calls it as an op of
// its own, `sigmoid: self: sigmoid_backward(grad, result)`: tanh_backward, sigmoid_backward and
// gelu_backward take PyTorch's arguments in PyTorch's order (aten::sigmoid_backward(grad_output,
// output)), run one kernel pass (kernels/unary.h), and record their own derivative in public ops
// (PyTorch's TanhBackwardBackward0, ...). So the forward's backward is one line, with or without
// create_graph, and a double backward runs the fused kernel and then this derivative. Like any
// binary op they broadcast and promote their two operands.

Tensor tanh_backward(const Tensor& grad_output, const Tensor& output) {
  MG_PROFILE_OP("tanh_backward");
  Tensor out = unary_backward("tanh_backward", grad_output, output, Op::kTanh);
  // g (1 - y^2): d/dg = 1 - y^2, d/dy = -2 y g
  record("TanhBackwardBackward0", out, {&grad_output, &output},
         {&output, needs_grad(output) ? &grad_output : nullptr},
         [](const Tensor& gg, FunctionNode& n) {
           Tensor y = n.saved(0);
           return Grads{n.needs_input_grad(0) ? tanh_backward(gg, y) : Tensor(),
                        n.needs_input_grad(1) ? gg * (-2 * y * n.saved(1)) : Tensor()};
         });
  return out;
}

Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output) {
  MG_PROFILE_OP("sigmoid_backward");
  Tensor out = unary_backward("sigmoid_backward", grad_output, output, Op::kSigmoid);
  // g (1 - y) y: d/dg = (1 - y) y, d/dy = g (1 - 2 y)
  record("SigmoidBackwardBackward0", out, {&grad_output, &output},
         {&output, needs_grad(output) ? &grad_output : nullptr},
         [](const Tensor& gg, FunctionNode& n) {
           Tensor y = n.saved(0);
           return Grads{n.needs_input_grad(0) ? sigmoid_backward(gg, y) : Tensor(),
                        n.needs_input_grad(1) ? gg * n.saved(1) * (-2 * y + 1) : Tensor()};
         });
  return out;
}

Tensor gelu_backward(const Tensor& grad_output, const Tensor& self,
                     const std::string& approximate) {
  MG_PROFILE_OP("gelu_backward");
  check_approximate("gelu_backward", approximate);
  const bool tanh_form = approximate == "tanh";
  Tensor out =
      unary_backward("gelu_backward", grad_output, self, tanh_form ? Op::kGeluTanh : Op::kGelu);
  // g gelu'(x): d/dg = gelu'(x) (this op again), d/dx = g gelu''(x)
  record("GeluBackwardBackward0", out, {&grad_output, &self},
         {&self, needs_grad(self) ? &grad_output : nullptr},
         [tanh_form](const Tensor& gg, FunctionNode& n) {
           Tensor x = n.saved(0);
           Grads r(2);
           if (n.needs_input_grad(0)) r[0] = gelu_backward(gg, x, tanh_form ? "tanh" : "none");
           if (n.needs_input_grad(1)) {
             Tensor second;
             if (!tanh_form) {
               // (Phi(x) + x phi(x))' = 2 phi(x) - x^2 phi(x)
               Tensor pdf = exp(x * x * -0.5) * kInvSqrt2Pi;
               second = pdf * (2 - x * x);
             } else {
               // t = tanh(u), u = k (x + c x^3): (0.5 (1 + t) + 0.5 x (1 - t^2) u')'
               // = (1 - t^2) (u' - x t u'^2 + 3 k c x^2)
               Tensor t = tanh((x + x * x * x * kC) * kSqrt2OverPi);
               Tensor du = (1 + 3 * kC * x * x) * kSqrt2OverPi;
               second = (1 - t * t) * (du - x * t * du * du + 3 * kC * kSqrt2OverPi * x * x);
             }
             r[1] = gg * n.saved(1) * second;
           }
           return r;
         });
  return out;
}

// ---------------------------------------------------------------- more activations

Tensor silu(const Tensor& x) {
  MG_PROFILE_OP("silu");
  Tensor out = float_unary("silu", x, Op::kSilu);
  record("SiluBackward0", out, {&x}, {&x}, [](const Tensor& g, FunctionNode& n) {
    // d(x s(x))/dx = s (1 + x (1 - s)), s = sigmoid(x)
    Tensor self = n.saved(0);
    Tensor s = sigmoid(self);
    return Grads{g * s * (1 + self * (1 - s))};
  });
  return out;
}

Tensor mish(const Tensor& x) {
  MG_PROFILE_OP("mish");
  Tensor out = float_unary("mish", x, Op::kMish);
  record("MishBackward0", out, {&x}, {&x}, [](const Tensor& g, FunctionNode& n) {
    // d(x tanh(sp(x)))/dx = t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x)); softplus written
    // as relu(x) + log(1 + exp(-|x|)), which does not overflow.
    Tensor self = n.saved(0);
    Tensor t = tanh(relu(self) + log(1 + exp(-abs(self))));
    return Grads{g * (t + self * sigmoid(self) * (1 - t * t))};
  });
  return out;
}

Tensor abs(const Tensor& x) {
  MG_PROFILE_OP("abs");
  Tensor out = same_dtype_unary("abs", x, [](auto v) {
    if constexpr (std::is_same_v<decltype(v), bool>)
      return v;
    else
      return v < 0 ? detail::wrapping_neg(v) : v;  // abs(INT64_MIN) wraps, as PyTorch
  });
  record("AbsBackward0", out, {&x}, {&x}, [](const Tensor& g, FunctionNode& n) {
    return Grads{g * sign(n.saved(0))};  // NOTE: abs'(0) = sign(0) = 0, as PyTorch
  });
  return out;
}

Tensor sign(const Tensor& x) {
  MG_PROFILE_OP("sign");
  Tensor out = same_dtype_unary("sign", x, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, bool>)
      return v;
    else
      return static_cast<T>((T(0) < v) - (v < T(0)));
  });
  record("SignBackward0", out, {&x},
         [](const Tensor& g, FunctionNode&) { return Grads{zeros_like(g)}; });
  return out;
}

Tensor relu(const Tensor& x) {
  MG_PROFILE_OP("relu");
  check_defined("relu", {&x});
  MG_CHECK(x.dtype() != kBool, "relu", "not supported for bool tensors");
  // NOTE: NaN stays NaN (v != v), as PyTorch: a NaN in the activations must not vanish.
  Tensor out =
      same_dtype_unary("relu", x, [](auto v) { return v > 0 || v != v ? v : decltype(v)(0); });
  record("ReluBackward0", out, {&x}, {kOutput}, [](const Tensor& g, FunctionNode& n) {
    // NOTE: relu'(0) = 0, and the gradient passes through a NaN, as PyTorch's threshold_backward.
    return Grads{where(n.saved(0) <= 0, 0.0, g)};
  });
  return out;
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  MG_PROFILE_OP("clamp");
  check_defined("clamp", {&x});
  MG_CHECK(lo.has_value() || hi.has_value(), "clamp", "at least one of min and max must be given");
  MG_CHECK(x.dtype() != kBool, "clamp", "not supported for bool tensors");
  // NOTE: as torch.clamp with a float bound, an int64 tensor with a bound that is not an int64
  // value (2.5, NaN, inf, 1e30) is clamped in float32: clamp(int64 [1, 2, 3], 0.5, 2.5) is
  // [1., 2., 2.5]. Integral bounds keep int64.
  auto int64_value = [](std::optional<double> b) {
    return !b ||
           (*b >= -9223372036854775808.0 && *b < 9223372036854775808.0 && std::trunc(*b) == *b);
  };
  if (!x.is_floating_point() && !(int64_value(lo) && int64_value(hi)))
    return clamp(x.to(get_default_dtype()), lo, hi);
  double l = lo.value_or(-INFINITY), h = hi.value_or(INFINITY);
  // NOTE: as torch.clamp, min wins when min > max, and NaN stays NaN.
  Tensor out = same_dtype_unary("clamp", x, [l, h, lo, hi](auto v) {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T>) {
      // In int64, with the bounds truncated to int64 as PyTorch does (no round trip through
      // double, which would turn INT64_MAX into 2^63).
      if (lo && v < static_cast<T>(*lo)) v = static_cast<T>(*lo);
      if (hi && v > static_cast<T>(*hi)) v = static_cast<T>(*hi);
      return v;
    }
    if (v != v) return v;
    if ((lo && *lo != *lo) || (hi && *hi != *hi))
      return static_cast<T>(NAN);  // a NaN bound, as PyTorch
    double d = static_cast<double>(v);
    d = d < l ? l : d;
    d = d > h ? h : d;
    return static_cast<T>(d);
  });
  record("ClampBackward1", out, {&x}, {&x}, [lo, hi](const Tensor& g, FunctionNode& n) {
    // The gradient passes where min <= self <= max.
    Tensor self = n.saved(0);
    Tensor mask = ones_like(self).to(kBool);
    if (lo) mask = logical_and(mask, ge(self, scalar_tensor(*lo, self.dtype())));
    if (hi) mask = logical_and(mask, le(self, scalar_tensor(*hi, self.dtype())));
    return Grads{g * mask};
  });
  return out;
}

Tensor pow(const Tensor& x, Scalar exponent) {
  MG_PROFILE_OP("pow");
  check_defined("pow", {&x});
  Tensor e = wrap("pow", x, exponent);
  Dtype dt = detail::result_type(x, e);
  if (!is_floating_point(dt)) {
    MG_CHECK(exponent.to_int() >= 0, "pow", "integers to negative integer powers are not allowed (",
             exponent.to_int(), ")");
  }
  double p = exponent.to_double();
  Tensor out = binary_kernel("pow", x, e, dt, dt, [](auto b, auto ex) {
    using T = decltype(b);
    if constexpr (std::is_same_v<T, bool>)
      return static_cast<bool>(b || !ex);
    else if constexpr (std::is_integral_v<T>)
      return detail::wrapping_pow(b, ex);
    else
      return std::pow(b, ex);
  });
  record("PowBackward0", out, {&x}, {&x}, [p](const Tensor& g, FunctionNode& n) {
    if (p == 0.0) return Grads{zeros_like(g)};
    return Grads{g * (p * pow(n.saved(0), p - 1))};
  });
  return out;
}

Tensor pow(const Tensor& x, const Tensor& exponent) {
  MG_PROFILE_OP("pow");
  check_defined("pow", {&x, &exponent});
  Dtype dt = detail::result_type(x, exponent);
  MG_CHECK(is_floating_point(dt), "pow",
           "a tensor exponent needs a floating-point base or exponent, got ", dtype_name(x.dtype()),
           " and ", dtype_name(exponent.dtype()));
  Tensor out =
      binary_kernel("pow", x, exponent, dt, dt, [](auto b, auto ex) { return std::pow(b, ex); });
  // Both gradients read both tensors.
  record("PowBackward1", out, {&x, &exponent}, {&x, &exponent},
         [](const Tensor& g, FunctionNode& n) {
           Tensor self = n.saved(0), e = n.saved(1);
           Grads r(2);
           if (n.needs_input_grad(0)) {
             // d(x^e)/dx = e x^(e-1); zero where e == 0 (also at x == 0), as PyTorch
             r[0] = where(e == 0, 0.0, g * (e * pow(self, e - 1)));
           }
           if (n.needs_input_grad(1)) {
             // d(x^e)/de = x^e log(x); zero where x == 0 and e >= 0, as PyTorch
             Tensor mask = logical_and(self == 0, e >= 0);
             r[1] = where(mask, 0.0, g * (pow(self, e) * log(self)));
           }
           return r;
         });
  return out;
}

Tensor pow(Scalar base, const Tensor& exponent) {
  check_defined("pow", {&exponent});
  return pow(scalar_tensor(base, detail::result_type(exponent, base)), exponent);
}

// ---------------------------------------------------------------- maximum, minimum, where

namespace {
template <bool kMax>
Tensor extremum(const char* op, const char* node, const Tensor& a, const Tensor& b) {
  check_defined(op, {&a, &b});
  Dtype dt = detail::result_type(a, b);
  Tensor out = binary_kernel(op, a, b, dt, dt, [](auto x, auto y) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      if (x != x) return x;  // NaN propagates, as torch.maximum
      if (y != y) return y;
    }
    return kMax ? (x > y ? x : y) : (x < y ? x : y);
  });
  record(node, out, {&a, &b}, {&a, &b}, [](const Tensor& g, FunctionNode& n) {
    // As PyTorch's formula: each side gets the gradient unless it lost the comparison, ties split
    // it evenly, and where either side is NaN (no comparison holds) both get all of it.
    Tensor self = n.saved(0), other = n.saved(1);
    Dtype gd = g.dtype();
    Tensor tie = eq(self, other).to(gd) * 0.5;
    Tensor a_lost = (kMax ? lt(self, other) : gt(self, other)).to(gd);
    Tensor b_lost = (kMax ? gt(self, other) : lt(self, other)).to(gd);
    return Grads{g * (1 - a_lost - tie), g * (1 - b_lost - tie)};
  });
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("maximum");
  return extremum<true>("maximum", "MaximumBackward0", a, b);
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("minimum");
  return extremum<false>("minimum", "MinimumBackward0", a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("where");
  check_defined("where", {&cond, &a, &b});
  MG_CHECK(cond.dtype() == kBool, "where", "condition must be a bool tensor, got ",
           dtype_name(cond.dtype()));
  Shape shape = detail::broadcast_shapes(detail::broadcast_shapes(cond.shape(), a.shape(), "where"),
                                         b.shape(), "where");
  Dtype dt = detail::result_type(a, b);
  Tensor ac = convert(a, dt), bc = convert(b, dt);
  Tensor out = detail::make_tensor(shape, dt);
  Shape sc = detail::broadcast_strides(cond, shape), sa = detail::broadcast_strides(ac, shape),
        sb = detail::broadcast_strides(bc, shape);
  const Shape& so = out.strides();
  detail::dispatch(dt, [&]<typename T>() {
    const bool* pc = cond.impl()->data<bool>();
    const T* pa = ac.impl()->data<T>();
    const T* pb = bc.impl()->data<T>();
    T* po = out.impl()->data<T>();
    detail::for_each_row<4>(
        shape, {&so, &sc, &sa, &sb}, [&](const auto& off, std::int64_t n, const auto& is) {
          for (std::int64_t i = 0; i < n; ++i)
            po[off[0] + i * is[0]] =
                pc[off[1] + i * is[1]] ? pa[off[2] + i * is[2]] : pb[off[3] + i * is[3]];
        });
  });
  record("WhereBackward0", out, {&cond, &a, &b}, {&cond}, [](const Tensor& g, FunctionNode& n) {
    Tensor condition = n.saved(0);
    return Grads{Tensor(), n.needs_input_grad(1) ? where(condition, g, 0.0) : Tensor(),
                 n.needs_input_grad(2) ? where(condition, 0.0, g) : Tensor()};
  });
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  check_defined("where", {&cond, &a});
  return where(cond, a, wrap("where", a, b));
}
Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  check_defined("where", {&cond, &b});
  return where(cond, wrap("where", b, a), b);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  MG_PROFILE_OP("masked_fill");
  check_defined("masked_fill", {&x, &mask});
  MG_CHECK(mask.dtype() == kBool, "masked_fill", "mask must be a bool tensor, got ",
           dtype_name(mask.dtype()));
  Shape b = detail::broadcast_shapes(x.shape(), mask.shape(), "masked_fill");
  MG_CHECK(b == x.shape(), "masked_fill", "mask of shape ", mask.shape(),
           " does not broadcast to the tensor's shape ", x.shape());
  Tensor v = scalar_tensor(value, x.dtype());
  Tensor out;
  {
    NoGradGuard no_grad;
    out = where(mask, v, x);
  }
  record("MaskedFillBackward0", out, {&x}, {&mask},
         [](const Tensor& g, FunctionNode& n) { return Grads{where(n.saved(0), 0.0, g)}; });
  return out;
}

// ---------------------------------------------------------------- comparisons and logic

#define MG_COMPARISON(name, expr)                                       \
  Tensor name(const Tensor& a, const Tensor& b) {                       \
    check_defined(#name, {&a, &b});                                     \
    return binary_kernel(#name, a, b, detail::result_type(a, b), kBool, \
                         [](auto x, auto y) { return expr; });          \
  }
MG_COMPARISON(eq, x == y)
MG_COMPARISON(ne, x != y)
MG_COMPARISON(lt, x < y)
MG_COMPARISON(le, x <= y)
MG_COMPARISON(gt, x > y)
MG_COMPARISON(ge, x >= y)
#undef MG_COMPARISON

Tensor logical_and(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("logical_and");
  check_defined("logical_and", {&a, &b});
  return binary_kernel("logical_and", a, b, detail::result_type(a, b), kBool,
                       [](auto x, auto y) { return x != 0 && y != 0; });
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("logical_or");
  check_defined("logical_or", {&a, &b});
  return binary_kernel("logical_or", a, b, detail::result_type(a, b), kBool,
                       [](auto x, auto y) { return x != 0 || y != 0; });
}
Tensor logical_not(const Tensor& a) {
  MG_PROFILE_OP("logical_not");
  check_defined("logical_not", {&a});
  Tensor out = detail::make_tensor(a.shape(), kBool);
  detail::dispatch(a.dtype(), [&]<typename T>() {
    detail::unary_loop<T, bool>(a.shape(), a.impl()->data<T>(), a.strides(),
                                out.impl()->data<bool>(), out.strides(),
                                [](T v) { return v == T(0); });
  });
  return out;
}

namespace {
template <typename Pred>
Tensor float_class(const char* op, const Tensor& x, bool integer_result, Pred pred) {
  check_defined(op, {&x});
  Tensor out = detail::make_tensor(x.shape(), kBool);
  detail::dispatch(x.dtype(), [&]<typename T>() {
    detail::unary_loop<T, bool>(x.shape(), x.impl()->data<T>(), x.strides(),
                                out.impl()->data<bool>(), out.strides(), [&](T v) {
                                  if constexpr (std::is_floating_point_v<T>)
                                    return pred(static_cast<double>(v));
                                  else
                                    return integer_result;
                                });
  });
  return out;
}
}  // namespace

Tensor isnan(const Tensor& x) {
  MG_PROFILE_OP("isnan");
  return float_class("isnan", x, false, [](double v) { return std::isnan(v); });
}
Tensor isinf(const Tensor& x) {
  MG_PROFILE_OP("isinf");
  return float_class("isinf", x, false, [](double v) { return std::isinf(v); });
}
Tensor isfinite(const Tensor& x) {
  MG_PROFILE_OP("isfinite");
  return float_class("isfinite", x, true, [](double v) { return std::isfinite(v); });
}

// NOTE: lerp is composed of differentiable ops (start + weight * (end - start)); PyTorch's
// kernel switches to end - (end - start) * (1 - weight) for weight >= 0.5, which differs only in
// rounding. The three operands broadcast.
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) {
  MG_PROFILE_OP("lerp");
  check_defined("lerp", {&start, &end});
  MG_CHECK(start.is_floating_point() && end.dtype() == start.dtype(), "lerp", "start (",
           dtype_name(start.dtype()), ") and end (", dtype_name(end.dtype()),
           ") must have the same floating-point dtype");
  detail::broadcast_shapes(start.shape(), end.shape(), "lerp");
  return start + (end - start) * weight;
}
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  MG_PROFILE_OP("lerp");
  check_defined("lerp", {&start, &end, &weight});
  MG_CHECK(
      start.is_floating_point() && end.dtype() == start.dtype() && weight.dtype() == start.dtype(),
      "lerp", "start (", dtype_name(start.dtype()), "), end (", dtype_name(end.dtype()),
      ") and weight (", dtype_name(weight.dtype()), ") must have the same floating-point dtype");
  detail::broadcast_shapes(detail::broadcast_shapes(start.shape(), end.shape(), "lerp"),
                           weight.shape(), "lerp");
  return start + weight * (end - start);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  check_defined("allclose", {&a, &b});
  // As torch.allclose (torch.isclose(a, b).all()): the two broadcast, and shapes that do not
  // broadcast are an error, not "false".
  const Shape shape = detail::broadcast_shapes(a.shape(), b.shape(), "allclose");
  auto x = a.expand(shape).to_vector<double>(), y = b.expand(shape).to_vector<double>();
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) return false;
    if (x[i] == y[i]) continue;
    if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) return false;
  }
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  check_defined("equal", {&a, &b});
  return a.shape() == b.shape() && a.to_vector<double>() == b.to_vector<double>();
}

// ---------------------------------------------------------------- operators

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator+(Scalar a, const Tensor& b) {
  Tensor out = with_scalar("add", b, a, [](const Tensor& y, const Tensor& x) { return add(x, y); });
  record("AddBackward0", out, {&b}, [](const Tensor& g, FunctionNode&) { return Grads{g}; });
  return out;
}
Tensor operator-(Scalar a, const Tensor& b) {
  Tensor out = with_scalar("sub", b, a, [](const Tensor& y, const Tensor& x) { return sub(x, y); });
  record("SubBackward0", out, {&b}, [](const Tensor& g, FunctionNode&) { return Grads{-g}; });
  return out;
}
Tensor operator*(Scalar a, const Tensor& b) {
  Tensor out = with_scalar("mul", b, a, [](const Tensor& y, const Tensor& x) { return mul(x, y); });
  record("MulBackward0", out, {&b}, [a](const Tensor& g, FunctionNode&) { return Grads{g * a}; });
  return out;
}
Tensor operator/(Scalar a, const Tensor& b) { return div(wrap("div", b, a), b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, wrap("eq", a, b)); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, wrap("ne", a, b)); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, wrap("lt", a, b)); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, wrap("le", a, b)); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, wrap("gt", a, b)); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, wrap("ge", a, b)); }
Tensor operator&(const Tensor& a, const Tensor& b) { return logical_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return logical_or(a, b); }
Tensor operator~(const Tensor& a) { return logical_not(a); }

}  // namespace minigrad
