#pragma once
// Elementwise ops, comparisons and the operators (core/src/ops/elementwise.cpp).
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <optional>
#include <string>

#include "minigrad/tensor.h"

namespace minigrad {

/// The shape a and b broadcast to (torch.broadcast_shapes); throws "[op] shapes (2, 3) and (4,)
/// cannot be broadcast ..." (op names the caller, "broadcast_shapes" by default).
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op = "broadcast_shapes");
// Binary ops broadcast as NumPy/PyTorch and promote dtypes as PyTorch (tensors over scalars).

/// a + b elementwise (add, sub, mul and div throw when the shapes cannot be broadcast).
Tensor add(const Tensor& a, const Tensor& b);
/// a - b elementwise; two bool tensors throw, as PyTorch.
Tensor sub(const Tensor& a, const Tensor& b);
/// a * b elementwise.
Tensor mul(const Tensor& a, const Tensor& b);
/// True division: integer inputs give float32.
Tensor div(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, Scalar b);
Tensor sub(const Tensor& a, Scalar b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, Scalar b);
/// -x elementwise; a bool x throws, as PyTorch.
Tensor neg(const Tensor& x);
/// e^x elementwise (integer inputs give the default floating dtype, as the ops below).
Tensor exp(const Tensor& x);
/// The natural logarithm (-inf at 0, NaN below).
Tensor log(const Tensor& x);
/// The square root (NaN below 0).
Tensor sqrt(const Tensor& x);
/// 1 / sqrt(x).
Tensor rsqrt(const Tensor& x);
/// x to the power exponent elementwise (a tensor exponent broadcasts with x).
Tensor pow(const Tensor& x, Scalar exponent);
Tensor pow(const Tensor& x, const Tensor& exponent);
Tensor pow(Scalar base, const Tensor& exponent);
/// |x| elementwise.
Tensor abs(const Tensor& x);
/// -1, 0 or 1 (not differentiable: its gradient is zero).
Tensor sign(const Tensor& x);
/// The hyperbolic tangent.
Tensor tanh(const Tensor& x);
/// 1 / (1 + e^-x).
Tensor sigmoid(const Tensor& x);
/// max(x, 0); the gradient at 0 is 0, as PyTorch.
Tensor relu(const Tensor& x);
/// The Gauss error function.
Tensor erf(const Tensor& x);
/// GELU, exact (erf) by default; approximate = "tanh" uses PyTorch's tanh formula.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
/// x * sigmoid(x) (SiLU, swish), as torch.nn.functional.silu.
Tensor silu(const Tensor& x);
/// x * tanh(softplus(x)), as torch.nn.functional.mish.
Tensor mish(const Tensor& x);
/// Clamps to [min, max]; either bound may be absent. The gradient passes where min <= x <= max.
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max = std::nullopt);
/// The larger of a and b elementwise (broadcast); ties split the gradient evenly.
Tensor maximum(const Tensor& a, const Tensor& b);
/// The smaller of a and b elementwise (broadcast); ties split the gradient evenly.
Tensor minimum(const Tensor& a, const Tensor& b);
/// Elements of a where cond is true, of b elsewhere; cond must be bool. All three broadcast.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
/// x with value wherever mask (bool, broadcastable to x) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);

// Comparisons return bool tensors and are not differentiable.
/// a == b elementwise (broadcast).
Tensor eq(const Tensor& a, const Tensor& b);
/// a != b elementwise (broadcast).
Tensor ne(const Tensor& a, const Tensor& b);
/// a < b elementwise (broadcast).
Tensor lt(const Tensor& a, const Tensor& b);
/// a <= b elementwise (broadcast).
Tensor le(const Tensor& a, const Tensor& b);
/// a > b elementwise (broadcast).
Tensor gt(const Tensor& a, const Tensor& b);
/// a >= b elementwise (broadcast).
Tensor ge(const Tensor& a, const Tensor& b);
/// a and b elementwise (broadcast), a bool tensor; other dtypes are compared with zero.
Tensor logical_and(const Tensor& a, const Tensor& b);
/// a or b elementwise (broadcast), a bool tensor.
Tensor logical_or(const Tensor& a, const Tensor& b);
/// not a elementwise, a bool tensor.
Tensor logical_not(const Tensor& a);
/// A bool tensor, true where x is NaN (never for integers); not differentiable.
Tensor isnan(const Tensor& x);
/// A bool tensor, true where x is +-inf (never for integers); not differentiable.
Tensor isinf(const Tensor& x);
/// A bool tensor, true where x is neither NaN nor +-inf (always for integers).
Tensor isfinite(const Tensor& x);
/// start + weight * (end - start), start and end of one floating dtype, broadcast.
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);
/// start + weight * (end - start) with a tensor weight; all three broadcast, one dtype.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
/// True when |a - b| <= atol + rtol * |b| everywhere, the two broadcast (torch.allclose; shapes
/// that do not broadcast throw).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
/// True when shapes and all values are equal.
bool equal(const Tensor& a, const Tensor& b);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);

}  // namespace minigrad
