// Math ops (minigrad/ops/math.h): unary math, rounding, the binary math ops and the activations
// with a kernel. Each forward is a plain loop over the elements (kernels/loops.h); each backward,
// directly under its forward, is one formula of public ops (derivatives.yaml's), so it can be
// differentiated again.
#include <cmath>
#include <numbers>
#include <type_traits>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/loops.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/math.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using detail::needs_grad;
using detail::record;
using Grads = std::vector<Tensor>;

namespace {

void check_defined(const char* op, const Tensor& x) {
  MG_CHECK(x.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
}

void check_floating(const char* op, const Tensor& x) {
  check_defined(op, x);
  MG_CHECK(x.is_floating_point(), op, "expected a floating-point tensor but got ",
           dtype_name(x.dtype()));
}

/// f(x) elementwise into a new tensor of dtype dt (x converted to dt first, without history).
template <typename F>
Tensor map_unary(const char* op, const Tensor& x, Dtype dt, F f) {
  Tensor in = x.detach().to(dt);
  Tensor out = detail::make_tensor(in.shape(), dt);
  detail::dispatch(dt, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      MG_ERROR(op, "internal error: no bool kernel");
    } else {
      detail::unary_loop<T, T>(in.shape(), in.impl()->data<T>(), in.strides(),
                               out.impl()->data<T>(), out.strides(),
                               [&](T v) { return static_cast<T>(f(v)); });
    }
  });
  return out;
}

/// A floating-point unary op: integer and bool inputs compute in the default dtype, as PyTorch.
template <typename F>
Tensor float_unary(const char* op, const Tensor& x, F f) {
  check_defined(op, x);
  return map_unary(op, x, x.is_floating_point() ? x.dtype() : get_default_dtype(), f);
}

/// f(a, b) elementwise, broadcast, both converted to dt (without history): a floating dt, or
/// also int64 with kIntegers.
template <bool kIntegers = false, typename F>
Tensor map_binary(const char* op, const Tensor& a, const Tensor& b, Dtype dt, F f) {
  Shape shape = detail::broadcast_shapes(a.shape(), b.shape(), op);
  Tensor ac = a.detach().to(dt), bc = b.detach().to(dt);
  Tensor out = detail::make_tensor(shape, dt);
  Shape sa = detail::broadcast_strides(ac, shape), sb = detail::broadcast_strides(bc, shape);
  detail::dispatch(dt, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool> || (std::is_integral_v<T> && !kIntegers)) {
      MG_ERROR(op, "internal error: no kernel for ", dtype_name(dt));
    } else {
      detail::binary_loop<T, T>(shape, ac.impl()->data<T>(), sa, bc.impl()->data<T>(), sb,
                                out.impl()->data<T>(), out.strides(),
                                [&](T x, T y) { return static_cast<T>(f(x, y)); });
    }
  });
  return out;
}

/// The dtype a binary op computes in: a and b promoted, integers to the default floating dtype.
Dtype float_result(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, a);
  check_defined(op, b);
  Dtype dt = detail::result_type(a, b);
  return is_floating_point(dt) ? dt : get_default_dtype();
}

/// s as a 0-dim tensor of the dtype it takes next to t.
Tensor wrap(const char* op, const Tensor& t, Scalar s) {
  check_defined(op, t);
  return scalar_tensor(s, detail::result_type(t, s));
}

/// Records a unary op whose backward reads x: backward(g, x) gives x's gradient.
template <typename B>
void record_x(const char* node, Tensor& out, const Tensor& x, B backward) {
  record(node, out, {&x}, {&x},
         [backward](const Tensor& g, FunctionNode& n) { return Grads{backward(g, n.saved(0))}; });
}

/// Records a unary op whose backward reads its output y: backward(g, y).
template <typename B>
void record_y(const char* node, Tensor& out, const Tensor& x, B backward) {
  record(node, out, {&x}, {kOutput},
         [backward](const Tensor& g, FunctionNode& n) { return Grads{backward(g, n.saved(0))}; });
}

}  // namespace

// ---------------------------------------------------------------- unary math

#define MG_FLOAT_UNARY(name, node, fn, grad)                                          \
  Tensor name(const Tensor& x) {                                                      \
    MG_PROFILE_OP(#name);                                                             \
    Tensor out = float_unary(#name, x, [](auto v) { return fn(v); });                 \
    record_x(node, out, x, [](const Tensor& g, const Tensor& self) { return grad; }); \
    return out;                                                                       \
  }

MG_FLOAT_UNARY(sin, "SinBackward0", std::sin, g* cos(self))
MG_FLOAT_UNARY(cos, "CosBackward0", std::cos, g * -sin(self))
MG_FLOAT_UNARY(asin, "AsinBackward0", std::asin, g* rsqrt(1 - self * self))
MG_FLOAT_UNARY(acos, "AcosBackward0", std::acos, -g* rsqrt(1 - self * self))
MG_FLOAT_UNARY(atan, "AtanBackward0", std::atan, g / (self * self + 1))
MG_FLOAT_UNARY(sinh, "SinhBackward0", std::sinh, g* cosh(self))
MG_FLOAT_UNARY(cosh, "CoshBackward0", std::cosh, g* sinh(self))
MG_FLOAT_UNARY(asinh, "AsinhBackward0", std::asinh, g* rsqrt(self* self + 1))
MG_FLOAT_UNARY(acosh, "AcoshBackward0", std::acosh, g* rsqrt(self* self - 1))
MG_FLOAT_UNARY(atanh, "AtanhBackward0", std::atanh, g / (1 - self * self))
MG_FLOAT_UNARY(log1p, "Log1PBackward0", std::log1p, g / (self + 1))
MG_FLOAT_UNARY(log2, "Log2Backward0", std::log2, g / (self * std::numbers::ln2))
MG_FLOAT_UNARY(log10, "Log10Backward0", std::log10, g / (self * std::numbers::ln10))
#undef MG_FLOAT_UNARY

// The ops whose derivative reads their own output.
#define MG_FLOAT_UNARY_Y(name, node, fn, grad)                                     \
  Tensor name(const Tensor& x) {                                                   \
    MG_PROFILE_OP(#name);                                                          \
    Tensor out = float_unary(#name, x, [](auto v) { return fn(v); });              \
    record_y(node, out, x, [](const Tensor& g, const Tensor& y) { return grad; }); \
    return out;                                                                    \
  }

MG_FLOAT_UNARY_Y(tan, "TanBackward0", std::tan, g*(1 + y * y))
MG_FLOAT_UNARY_Y(expm1, "Expm1Backward0", std::expm1, g*(y + 1))
MG_FLOAT_UNARY_Y(exp2, "Exp2Backward0", std::exp2, g* y* std::numbers::ln2)
MG_FLOAT_UNARY_Y(reciprocal, "ReciprocalBackward0", 1 /, -g*(y* y))
#undef MG_FLOAT_UNARY_Y

Tensor square(const Tensor& x) {
  MG_PROFILE_OP("square");
  check_defined("square", x);
  // As torch.square: pow(x, 2) (PowBackward0), a bool tensor as int64.
  return pow(x.dtype() == kBool ? x.to(kInt64) : x, 2);
}

// ---------------------------------------------------------------- rounding

namespace {

/// A rounding op: floating-point tensors rounded by f, int64 ones copied, bool ones refused (as
/// PyTorch). The gradient is zero everywhere.
template <typename F>
Tensor rounding(const char* op, const char* node, const Tensor& x, F f) {
  check_defined(op, x);
  MG_CHECK(x.dtype() != kBool, op, "not implemented for bool tensors");
  Tensor out = x.is_floating_point() ? map_unary(op, x, x.dtype(), f) : x.detach().clone();
  record(node, out, {&x}, [](const Tensor& g, FunctionNode&) { return Grads{zeros_like(g)}; });
  return out;
}

}  // namespace

Tensor floor(const Tensor& x) {
  MG_PROFILE_OP("floor");
  return rounding("floor", "FloorBackward0", x, [](auto v) { return std::floor(v); });
}
Tensor ceil(const Tensor& x) {
  MG_PROFILE_OP("ceil");
  return rounding("ceil", "CeilBackward0", x, [](auto v) { return std::ceil(v); });
}
Tensor round(const Tensor& x) {
  MG_PROFILE_OP("round");
  // NOTE: nearbyint in the default rounding mode: halves go to even (0.5 -> 0, 2.5 -> 2).
  return rounding("round", "RoundBackward0", x, [](auto v) { return std::nearbyint(v); });
}
Tensor round(const Tensor& x, std::int64_t decimals) {
  MG_PROFILE_OP("round");
  check_floating("round", x);
  // As PyTorch: scale by 10^|decimals|, round half to even, scale back.
  const bool neg = decimals < 0;
  const double p = std::pow(10.0, static_cast<double>(neg ? -decimals : decimals));
  return rounding("round", "RoundBackward1", x, [neg, p](auto v) {
    using T = decltype(v);
    const T s = static_cast<T>(p);
    return neg ? std::nearbyint(v / s) * s : std::nearbyint(v * s) / s;
  });
}
Tensor trunc(const Tensor& x) {
  MG_PROFILE_OP("trunc");
  return rounding("trunc", "TruncBackward0", x, [](auto v) { return std::trunc(v); });
}

Tensor frac(const Tensor& x) {
  MG_PROFILE_OP("frac");
  check_floating("frac", x);
  Tensor out = map_unary("frac", x, x.dtype(), [](auto v) { return v - std::trunc(v); });
  record("FracBackward0", out, {&x}, [](const Tensor& g, FunctionNode&) { return Grads{g}; });
  return out;
}

// ---------------------------------------------------------------- binary math

Tensor atan2(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("atan2");
  Dtype dt = float_result("atan2", a, b);
  Tensor out = map_binary("atan2", a, b, dt, [](auto y, auto x) { return std::atan2(y, x); });
  record("Atan2Backward0", out, {&a, &b}, {&a, &b}, [](const Tensor& g, FunctionNode& n) {
    Tensor self = n.saved(0), other = n.saved(1);
    Tensor r = g / (self * self + other * other);
    return Grads{n.needs_input_grad(0) ? r * other : Tensor(),
                 n.needs_input_grad(1) ? -r * self : Tensor()};
  });
  return out;
}

namespace {

/// remainder (floor = true, Python's sign) or fmod (C's sign) of a and b; node names the node.
Tensor modulo(const char* op, const char* node, const Tensor& a, const Tensor& b, bool floor_mode) {
  check_defined(op, a);
  check_defined(op, b);
  Dtype dt = detail::result_type(a, b);
  MG_CHECK(dt != kBool, op, "not implemented for bool tensors");
  if (!is_floating_point(dt)) {
    NoGradGuard no_grad;
    MG_CHECK(!(b.to(dt) == 0).any().item<bool>(), op,
             "integer division by zero (ZeroDivisionError)");
  }
  Tensor out = map_binary<true>(op, a, b, dt, [floor_mode](auto x, auto y) {
    using T = decltype(x);
    T r;
    if constexpr (std::is_integral_v<T>)
      r = x % y;
    else
      r = std::fmod(x, y);  // NaN for y == 0
    // NOTE: remainder takes the divisor's sign, as Python's % and torch.remainder.
    if (floor_mode && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  });
  // d/da = 1; d/db = -floor(a / b) (remainder) or -trunc(a / b) (fmod), as derivatives.yaml.
  record(node, out, {&a, &b}, {needs_grad(b) ? &a : nullptr, needs_grad(b) ? &b : nullptr},
         [floor_mode](const Tensor& g, FunctionNode& n) {
           Tensor gb;
           if (n.needs_input_grad(1)) {
             Tensor q = n.saved(0) / n.saved(1);
             gb = -g * (floor_mode ? floor(q) : trunc(q));
           }
           return Grads{n.needs_input_grad(0) ? g : Tensor(), gb};
         });
  return out;
}

}  // namespace

Tensor remainder(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("remainder");
  return modulo("remainder", "RemainderBackward1", a, b, true);
}
Tensor remainder(const Tensor& a, Scalar b) {
  MG_PROFILE_OP("remainder");
  return modulo("remainder", "RemainderBackward0", a, wrap("remainder", a, b), true);
}
Tensor remainder(Scalar a, const Tensor& b) {
  MG_PROFILE_OP("remainder");
  return remainder(wrap("remainder", b, a), b);
}
Tensor fmod(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("fmod");
  return modulo("fmod", "FmodBackward1", a, b, false);
}
Tensor fmod(const Tensor& a, Scalar b) {
  MG_PROFILE_OP("fmod");
  return modulo("fmod", "FmodBackward0", a, wrap("fmod", a, b), false);
}
Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator%(const Tensor& a, Scalar b) { return remainder(a, b); }
Tensor operator%(Scalar a, const Tensor& b) { return remainder(a, b); }

namespace {

/// The dtype of hypot and logaddexp: a and b promoted, which must be floating-point.
Dtype floating_pair(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, a);
  check_defined(op, b);
  Dtype dt = detail::result_type(a, b);
  MG_CHECK(is_floating_point(dt), op, "expected floating-point tensors but got ",
           dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  return dt;
}

}  // namespace

Tensor hypot(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("hypot");
  Dtype dt = floating_pair("hypot", a, b);
  Tensor out = map_binary("hypot", a, b, dt, [](auto x, auto y) { return std::hypot(x, y); });
  record("HypotBackward0", out, {&a, &b},
         {needs_grad(a) ? &a : nullptr, needs_grad(b) ? &b : nullptr, kOutput},
         [](const Tensor& g, FunctionNode& n) {
           Tensor r = g / n.saved(2);
           return Grads{n.needs_input_grad(0) ? r * n.saved(0) : Tensor(),
                        n.needs_input_grad(1) ? r * n.saved(1) : Tensor()};
         });
  return out;
}

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("logaddexp");
  Dtype dt = floating_pair("logaddexp", a, b);
  Tensor out = map_binary("logaddexp", a, b, dt, [](auto x, auto y) {
    // As PyTorch: two equal infinities give themselves (inf - inf would be NaN).
    if (std::isinf(x) && x == y) return x;
    auto m = x > y ? x : y;
    return m + std::log1p(std::exp(-std::abs(x - y)));
  });
  // d/da = exp(a) / (exp(a) + exp(b)) = sigmoid(a - b).
  record("LogaddexpBackward0", out, {&a, &b}, {&a, &b}, [](const Tensor& g, FunctionNode& n) {
    Tensor d = n.saved(0) - n.saved(1);
    return Grads{n.needs_input_grad(0) ? g * sigmoid(d) : Tensor(),
                 n.needs_input_grad(1) ? g * sigmoid(-d) : Tensor()};
  });
  return out;
}

namespace {

Tensor xlogy_impl(const char* node, const Tensor& a, const Tensor& b) {
  Dtype dt = float_result("xlogy", a, b);
  Tensor out = map_binary("xlogy", a, b, dt, [](auto x, auto y) {
    using T = decltype(x);
    if (std::isnan(y)) return static_cast<T>(NAN);
    // NOTE: 0 * log(y) is 0 for every y but NaN, also for y == 0, as torch.xlogy.
    if (x == 0) return T(0);
    return x * std::log(y);
  });
  // d/da = xlogy(a != 0, b); d/db = a / b.
  record(node, out, {&a, &b}, {&a, &b}, [](const Tensor& g, FunctionNode& n) {
    Tensor self = n.saved(0), other = n.saved(1);
    return Grads{n.needs_input_grad(0) ? g * xlogy(ne(self, zeros_like(self)).to(g.dtype()), other)
                                       : Tensor(),
                 n.needs_input_grad(1) ? g * self / other : Tensor()};
  });
  return out;
}

}  // namespace

Tensor xlogy(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("xlogy");
  return xlogy_impl("XlogyBackward0", a, b);
}
Tensor xlogy(Scalar a, const Tensor& b) {
  MG_PROFILE_OP("xlogy");
  return xlogy_impl("XlogyBackward1", wrap("xlogy", b, a), b);
}
Tensor xlogy(const Tensor& a, Scalar b) {
  MG_PROFILE_OP("xlogy");
  return xlogy_impl("XlogyBackward2", a, wrap("xlogy", a, b));
}

// ---------------------------------------------------------------- activations

namespace {

/// An activation: floating-point x only, f elementwise in x's dtype.
template <typename F>
Tensor activation(const char* op, const Tensor& x, F f) {
  check_floating(op, x);
  return map_unary(op, x, x.dtype(), f);
}

}  // namespace

Tensor softplus(const Tensor& x, double beta, double threshold) {
  MG_PROFILE_OP("softplus");
  Tensor out = activation("softplus", x, [beta, threshold](auto v) {
    using T = decltype(v);
    const T bx = v * static_cast<T>(beta);
    return bx > static_cast<T>(threshold) ? v : std::log1p(std::exp(bx)) / static_cast<T>(beta);
  });
  // d/dx = sigmoid(beta x), and 1 where beta x > threshold (the linear part).
  record_x("SoftplusBackward0", out, x, [beta, threshold](const Tensor& g, const Tensor& self) {
    Tensor bx = self * beta;
    return where(bx > threshold, g, g * sigmoid(bx));
  });
  return out;
}

namespace {

/// PyTorch's elu kernel: scale * x for x > 0, else alpha * scale * (exp(x * input_scale) - 1).
Tensor elu_impl(const char* op, const char* node, const Tensor& x, double alpha, double scale,
                double input_scale) {
  Tensor out = activation(op, x, [alpha, scale, input_scale](auto v) {
    using T = decltype(v);
    return v > 0 ? v * static_cast<T>(scale)
                 : std::expm1(v * static_cast<T>(input_scale)) * static_cast<T>(alpha * scale);
  });
  // NOTE: at x == 0 the gradient is the left side's, alpha * scale * input_scale, and at a NaN
  // the right side's, scale, as PyTorch's scalar loop (x <= 0 picks the left side; PyTorch 1.13's
  // vectorised loop, over whole blocks of elements (8 in float64), gives NaN there instead).
  record_x(node, out, x, [alpha, scale, input_scale](const Tensor& g, const Tensor& self) {
    return where(self <= 0, g * exp(self * input_scale) * (alpha * scale * input_scale), g * scale);
  });
  return out;
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

Tensor elu(const Tensor& x, double alpha) {
  MG_PROFILE_OP("elu");
  return elu_impl("elu", "EluBackward0", x, alpha, 1.0, 1.0);
}
Tensor selu(const Tensor& x) {
  MG_PROFILE_OP("selu");
  return elu_impl("selu", "EluBackward0", x, kSeluAlpha, kSeluScale, 1.0);
}
Tensor celu(const Tensor& x, double alpha) {
  MG_PROFILE_OP("celu");
  check_defined("celu", x);
  MG_CHECK(alpha != 0, "celu", "alpha cannot be 0 (ZeroDivisionError)");
  return elu_impl("celu", "CeluBackward0", x, alpha, 1.0, 1.0 / alpha);
}

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  MG_PROFILE_OP("leaky_relu");
  Tensor out = activation("leaky_relu", x, [negative_slope](auto v) {
    return v > 0 ? v : v * static_cast<decltype(v)>(negative_slope);
  });
  // NOTE: at x == 0 the gradient is negative_slope, as PyTorch.
  record_x("LeakyReluBackward0", out, x, [negative_slope](const Tensor& g, const Tensor& self) {
    return where(self > 0, g, g * negative_slope);
  });
  return out;
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  MG_PROFILE_OP("hardtanh");
  check_defined("hardtanh", x);
  MG_CHECK(x.dtype() != kBool, "hardtanh", "bool inputs not supported for hardtanh");
  if (!x.is_floating_point()) return clamp(x, min_val, max_val);  // int64, as PyTorch
  Tensor out = activation("hardtanh", x, [min_val, max_val](auto v) {
    using T = decltype(v);
    const T lo = static_cast<T>(min_val), hi = static_cast<T>(max_val);
    return v < lo ? lo : (v > hi ? hi : v);  // NaN stays NaN
  });
  // NOTE: the gradient is zero at both bounds and beyond, and passes elsewhere (NaN too), as
  // PyTorch's scalar loop (its vectorised loop, over whole blocks, gives 0 at a NaN).
  record_x("HardtanhBackward0", out, x, [min_val, max_val](const Tensor& g, const Tensor& self) {
    return where(logical_or(self <= min_val, self >= max_val), zeros_like(g), g);
  });
  return out;
}

Tensor hardsigmoid(const Tensor& x) {
  MG_PROFILE_OP("hardsigmoid");
  Tensor out = activation("hardsigmoid", x, [](auto v) {
    using T = decltype(v);
    return v <= -3 ? T(0) : (v >= 3 ? T(1) : v / 6 + T(0.5));
  });
  // NOTE: the gradient is 1/6 strictly inside (-3, 3) and zero at both ends, as PyTorch, whose
  // kernel multiplies by 1/6 rounded to float32 (0.1666666716337204) in float64 too: so does this.
  record_x("HardsigmoidBackward0", out, x, [](const Tensor& g, const Tensor& self) {
    return where(logical_and(self > -3, self < 3), g * static_cast<double>(1.0f / 6.0f),
                 zeros_like(g));
  });
  return out;
}

Tensor hardswish(const Tensor& x) {
  MG_PROFILE_OP("hardswish");
  Tensor out = activation("hardswish", x, [](auto v) {
    using T = decltype(v);
    return v <= -3 ? T(0) : (v >= 3 ? v : v * (v + 3) / 6);
  });
  // NOTE: as PyTorch, the gradient is 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above.
  record_x("HardswishBackward0", out, x, [](const Tensor& g, const Tensor& self) {
    return where(self < -3, zeros_like(g), where(self <= 3, g * (self / 3 + 0.5), g));
  });
  return out;
}

Tensor log_sigmoid(const Tensor& x) {
  MG_PROFILE_OP("log_sigmoid");
  // min(x, 0) - log1p(exp(-|x|)): no exp overflows.
  Tensor out = activation("log_sigmoid", x, [](auto v) {
    using T = decltype(v);
    return (v < 0 ? v : T(0)) - std::log1p(std::exp(-std::abs(v)));
  });
  record_x("LogSigmoidBackward0", out, x,
           [](const Tensor& g, const Tensor& self) { return g * sigmoid(-self); });
  return out;
}

// The in-place forms: the op computed, then written into x (Note [In-place ops]).
Tensor& elu_(Tensor& x, double alpha) {
  return detail::inplace_op(x, "elu_", {}, [&](const Tensor& s) { return elu(s, alpha); });
}
Tensor& selu_(Tensor& x) {
  return detail::inplace_op(x, "selu_", {}, [](const Tensor& s) { return selu(s); });
}
Tensor& celu_(Tensor& x, double alpha) {
  return detail::inplace_op(x, "celu_", {}, [&](const Tensor& s) { return celu(s, alpha); });
}
Tensor& leaky_relu_(Tensor& x, double negative_slope) {
  return detail::inplace_op(x, "leaky_relu_", {},
                            [&](const Tensor& s) { return leaky_relu(s, negative_slope); });
}
Tensor& hardtanh_(Tensor& x, double min_val, double max_val) {
  return detail::inplace_op(x, "hardtanh_", {},
                            [&](const Tensor& s) { return hardtanh(s, min_val, max_val); });
}
Tensor& hardsigmoid_(Tensor& x) {
  return detail::inplace_op(x, "hardsigmoid_", {}, [](const Tensor& s) { return hardsigmoid(s); });
}
Tensor& hardswish_(Tensor& x) {
  return detail::inplace_op(x, "hardswish_", {}, [](const Tensor& s) { return hardswish(s); });
}

// ---------------------------------------------------------------- Tensor methods

#define MG_MATH_METHOD(name)                                                      \
  Tensor Tensor::name() const { return minigrad::name(*this); }                   \
  Tensor& Tensor::name##_() {                                                     \
    return detail::inplace_op(*this, #name "_", {},                               \
                              [](const Tensor& s) { return minigrad::name(s); }); \
  }
MG_MATH_METHOD(sin)
MG_MATH_METHOD(cos)
MG_MATH_METHOD(tan)
MG_MATH_METHOD(asin)
MG_MATH_METHOD(acos)
MG_MATH_METHOD(atan)
MG_MATH_METHOD(sinh)
MG_MATH_METHOD(cosh)
MG_MATH_METHOD(asinh)
MG_MATH_METHOD(acosh)
MG_MATH_METHOD(atanh)
MG_MATH_METHOD(log1p)
MG_MATH_METHOD(log2)
MG_MATH_METHOD(log10)
MG_MATH_METHOD(expm1)
MG_MATH_METHOD(exp2)
MG_MATH_METHOD(floor)
MG_MATH_METHOD(ceil)
MG_MATH_METHOD(round)
MG_MATH_METHOD(trunc)
MG_MATH_METHOD(frac)
MG_MATH_METHOD(reciprocal)
MG_MATH_METHOD(square)
#undef MG_MATH_METHOD

Tensor Tensor::round(std::int64_t decimals) const { return minigrad::round(*this, decimals); }
Tensor& Tensor::round_(std::int64_t decimals) {
  return detail::inplace_op(*this, "round_", {},
                            [decimals](const Tensor& s) { return minigrad::round(s, decimals); });
}

// `others` lists a tensor operand, so that the in-place op records history when only it
// requires grad.
#define MG_MATH_BINARY_METHOD(name, Other, others)                                        \
  Tensor Tensor::name(Other other) const { return minigrad::name(*this, other); }         \
  Tensor& Tensor::name##_(Other other) {                                                  \
    return detail::inplace_op(*this, #name "_", others,                                   \
                              [&](const Tensor& s) { return minigrad::name(s, other); }); \
  }
#define MG_TENSOR_OTHER \
  { &other }
MG_MATH_BINARY_METHOD(atan2, const Tensor&, MG_TENSOR_OTHER)
MG_MATH_BINARY_METHOD(remainder, const Tensor&, MG_TENSOR_OTHER)
MG_MATH_BINARY_METHOD(remainder, Scalar, {})
MG_MATH_BINARY_METHOD(fmod, const Tensor&, MG_TENSOR_OTHER)
MG_MATH_BINARY_METHOD(fmod, Scalar, {})
MG_MATH_BINARY_METHOD(hypot, const Tensor&, MG_TENSOR_OTHER)
MG_MATH_BINARY_METHOD(xlogy, const Tensor&, MG_TENSOR_OTHER)
MG_MATH_BINARY_METHOD(xlogy, Scalar, {})
#undef MG_TENSOR_OTHER
#undef MG_MATH_BINARY_METHOD
Tensor Tensor::logaddexp(const Tensor& other) const { return minigrad::logaddexp(*this, other); }

}  // namespace minigrad
