#pragma once
// Math ops: trigonometric, hyperbolic, logarithmic and rounding functions, the binary math ops
// (atan2, remainder, fmod, hypot, logaddexp, xlogy) and the activations of torch.nn.functional
// that have a kernel (softplus, elu, selu, celu, leaky_relu, hardtanh, hardsigmoid, hardswish,
// log_sigmoid; nn::functional and the nn modules call them); core/src/ops/math.cpp. Part of
// minigrad/ops.h.
// Unless said otherwise: integer and bool inputs compute in the default floating dtype, as
// PyTorch; binary ops broadcast and promote as add; every backward is a formula of public ops,
// so each op can be differentiated twice.
#include <cstdint>

#include "minigrad/tensor.h"

namespace minigrad {

/// The sine.
Tensor sin(const Tensor& x);
/// The cosine.
Tensor cos(const Tensor& x);
/// The tangent.
Tensor tan(const Tensor& x);
/// The arcsine (NaN outside [-1, 1]).
Tensor asin(const Tensor& x);
/// The arccosine (NaN outside [-1, 1]).
Tensor acos(const Tensor& x);
/// The arctangent.
Tensor atan(const Tensor& x);
/// The hyperbolic sine.
Tensor sinh(const Tensor& x);
/// The hyperbolic cosine.
Tensor cosh(const Tensor& x);
/// The inverse hyperbolic sine.
Tensor asinh(const Tensor& x);
/// The inverse hyperbolic cosine (NaN below 1).
Tensor acosh(const Tensor& x);
/// The inverse hyperbolic tangent (+-inf at +-1, NaN outside [-1, 1]).
Tensor atanh(const Tensor& x);
/// log(1 + x), accurate near 0.
Tensor log1p(const Tensor& x);
/// The base-2 logarithm.
Tensor log2(const Tensor& x);
/// The base-10 logarithm.
Tensor log10(const Tensor& x);
/// exp(x) - 1, accurate near 0.
Tensor expm1(const Tensor& x);
/// 2^x.
Tensor exp2(const Tensor& x);
/// Rounds down; an int64 tensor is returned as a copy, a bool one throws (as PyTorch). The
/// gradient of floor, ceil, round and trunc is zero.
Tensor floor(const Tensor& x);
/// Rounds up (dtypes as floor).
Tensor ceil(const Tensor& x);
/// Rounds to the nearest integer, halves to even (dtypes as floor).
Tensor round(const Tensor& x);
/// Rounds to `decimals` decimal places (negative: to tens, hundreds...), halves to even, as
/// torch.round(x, decimals=d); floating-point tensors only.
Tensor round(const Tensor& x, std::int64_t decimals);
/// Rounds toward zero (dtypes as floor).
Tensor trunc(const Tensor& x);
/// x - trunc(x); floating-point tensors only.
Tensor frac(const Tensor& x);
/// 1 / x.
Tensor reciprocal(const Tensor& x);
/// x * x, in x's dtype (bool gives int64), as torch.square.
Tensor square(const Tensor& x);

/// atan2(a, b): the angle of the point (b, a), in (-pi, pi].
Tensor atan2(const Tensor& a, const Tensor& b);
/// The remainder of a / b with b's sign (Python's %, torch.remainder); a float remainder by 0 is
/// NaN, an integer one throws. Bool tensors throw.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
Tensor remainder(Scalar a, const Tensor& b);
/// The remainder of a / b with a's sign (C's fmod, torch.fmod); dtypes as remainder.
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);
/// sqrt(a^2 + b^2) without overflow; floating-point tensors only.
Tensor hypot(const Tensor& a, const Tensor& b);
/// log(exp(a) + exp(b)) without overflow; floating-point tensors only.
Tensor logaddexp(const Tensor& a, const Tensor& b);
/// a * log(b), 0 where a == 0 (also when b is 0); NaN where b is NaN.
Tensor xlogy(const Tensor& a, const Tensor& b);
Tensor xlogy(const Tensor& a, Scalar b);
Tensor xlogy(Scalar a, const Tensor& b);

/// remainder(a, b), as libtorch's operator%.
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, Scalar b);
Tensor operator%(Scalar a, const Tensor& b);

// Activations (torch.nn.functional's), floating-point tensors only, each with its in-place form
// (writes x and returns it, as libtorch's torch::elu_).

/// log(1 + exp(beta x)) / beta, and x where beta x > threshold, as F.softplus.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
/// x where x > 0, else alpha (exp(x) - 1), as F.elu.
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor& elu_(Tensor& x, double alpha = 1.0);
/// scale * elu(x, alpha) with PyTorch's constants (alpha 1.6732..., scale 1.0507...).
Tensor selu(const Tensor& x);
Tensor& selu_(Tensor& x);
/// max(0, x) + min(0, alpha (exp(x / alpha) - 1)); alpha 0 throws.
Tensor celu(const Tensor& x, double alpha = 1.0);
Tensor& celu_(Tensor& x, double alpha = 1.0);
/// x where x > 0, else negative_slope * x; the gradient at 0 is negative_slope, as PyTorch.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, double negative_slope = 0.01);
/// x clamped to [min_val, max_val] (int64 too, bool throws); the gradient is zero at both bounds,
/// as PyTorch.
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor& hardtanh_(Tensor& x, double min_val = -1.0, double max_val = 1.0);
/// relu6(x + 3) / 6; the gradient is zero at -3 and 3, as PyTorch.
Tensor hardsigmoid(const Tensor& x);
Tensor& hardsigmoid_(Tensor& x);
/// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& x);
Tensor& hardswish_(Tensor& x);
/// log(sigmoid(x)) without overflow, as F.logsigmoid (libtorch's log_sigmoid).
Tensor log_sigmoid(const Tensor& x);

}  // namespace minigrad
