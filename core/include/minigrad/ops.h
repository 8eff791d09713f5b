#pragma once
// The public ops. Every differentiable op here has an entry in tests/core/op_table.cpp.
// Dims may be negative (counted from the end). Every op throws minigrad::Error on bad input.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "minigrad/tensor.h"
#include "minigrad/tensor_options.h"

namespace minigrad {

// ---------------------------------------------------------------- creation

namespace detail {
/// A 1-D tensor of the values converted to dtype (exact for int64); used by tensor() below.
Tensor tensor_from_int64(const std::vector<std::int64_t>& values, Dtype dtype);
/// A creation function's result with the options' requires_grad; throws for a CUDA device.
Tensor apply_options(Tensor out, const TensorOptions& options, const char* op);
/// The 1-D tensor of a range of numbers of type T, in dtype (integers exact).
template <typename T, typename It>
Tensor tensor_1d(It begin, It end, Dtype dtype, const TensorOptions& options);
}  // namespace detail

// Every creation function takes a Dtype or, as libtorch's, TensorOptions
// (TensorOptions().dtype(kFloat64).requires_grad(true), mg::dtype(kFloat64), mg::kFloat64);
// without either, floating-point results get the default dtype (get_default_dtype(), float32).

/// A tensor of `shape` holding `values` (row-major), converted to dtype. numel must match.
Tensor tensor(const std::vector<double>& values, const Shape& shape,
              Dtype dtype = get_default_dtype());
Tensor tensor(const std::vector<double>& values, const Shape& shape, const TensorOptions& options);
/// A 1-D tensor: tensor({1.0, 2.0, 3.0}), with PyTorch's dtype for the values: floating point
/// gives the default dtype, integers int64, bools bool (torch.tensor([1, 2]) is int64).
/// (A template, so that a column such as tensor({{1.0}, {2.0}}) picks the 2-D overload below.)
/// Integer values are kept exact for int64 (tensor({INT64_MAX})).
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& options) {
  constexpr Dtype natural = std::is_same_v<T, bool> ? kBool
                            : std::is_integral_v<T> ? kInt64
                                                    : Dtype::Float32;
  Dtype dt = options.dtype_or(natural == Dtype::Float32 ? get_default_dtype() : natural);
  return detail::tensor_1d<T>(values.begin(), values.end(), dt, options);
}
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(std::initializer_list<T> values) {
  return tensor(values, TensorOptions());
}
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(std::initializer_list<T> values, Dtype dtype) {
  return tensor(values, TensorOptions(dtype));
}
/// A 1-D tensor from a std::vector, its dtype from the C++ type as libtorch's: float32 for
/// float, float64 for double, int64 for integers, bool for bool.
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  constexpr Dtype natural = std::is_same_v<T, bool>    ? kBool
                            : std::is_integral_v<T>    ? kInt64
                            : std::is_same_v<T, float> ? kFloat32
                                                       : kFloat64;
  return detail::tensor_1d<T>(values.begin(), values.end(), options.dtype_or(natural), options);
}
/// A 0-dim tensor from a number, its dtype as torch.tensor(3.5) (the default dtype), tensor(3)
/// (int64) and tensor(true) (bool).
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(T value, const TensorOptions& options = {}) {
  Tensor out = tensor({value}, options).reshape({});
  return options.requires_grad() ? out.detach().requires_grad_() : out;
}
/// A number or a braced list of TensorData (libtorch's TensorDataContainer): what tensor() takes
/// for nested lists, so that every brace is one dim ({{1.0}, {2.0}} is (2, 1)).
class TensorData {
 public:
  template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
  TensorData(T value)  // NOLINT: implicit, as each number of a braced list converts
      : double_(static_cast<double>(value)),
        int_(std::is_integral_v<T> ? static_cast<std::int64_t>(value) : 0),
        kind_(std::is_same_v<T, bool> ? kBool
              : std::is_integral_v<T> ? kInt64
                                      : kFloat64) {}
  TensorData(std::initializer_list<TensorData> list)  // NOLINT
      : list_(list), is_list_(true) {}
  bool is_list() const { return is_list_; }
  const std::initializer_list<TensorData>& list() const { return list_; }
  double to_double() const { return double_; }
  std::int64_t to_int() const { return int_; }
  /// bool, int64 or (for any floating-point number) float64.
  Dtype kind() const { return kind_; }

 private:
  std::initializer_list<TensorData> list_{};
  double double_ = 0;
  std::int64_t int_ = 0;
  Dtype kind_ = kFloat64;
  bool is_list_ = false;
};
/// A tensor from nested lists, any depth: tensor({{1.0, 2.0}, {3.0, 4.0}}). Lists at one depth
/// must have equal lengths. The dtype is PyTorch's for the values (a float anywhere gives the
/// default dtype, else int64, or bool when all are bools) unless the options name one.
Tensor tensor(const TensorData& data, const TensorOptions& options = {});
/// A tensor viewing memory the caller owns (torch::from_blob): no copy; data must outlive the
/// tensor (and its views) unless a deleter is given, which runs when the last one goes. strides
/// default to contiguous. The memory is read and written as the dtype's C++ type.
Tensor from_blob(void* data, const Shape& sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, const Shape& sizes, const Shape& strides,
                 const TensorOptions& options = {});
Tensor from_blob(void* data, const Shape& sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options = {});
/// A 0-dim tensor holding value.
Tensor scalar_tensor(Scalar value, Dtype dtype = get_default_dtype());
Tensor scalar_tensor(Scalar value, const TensorOptions& options);
/// Uninitialised memory of the given shape.
Tensor empty(const Shape& shape, Dtype dtype = get_default_dtype());
/// Zeros of the given shape.
Tensor zeros(const Shape& shape, Dtype dtype = get_default_dtype());
/// Ones of the given shape.
Tensor ones(const Shape& shape, Dtype dtype = get_default_dtype());
/// `value` everywhere in the given shape.
Tensor full(const Shape& shape, Scalar value, Dtype dtype = get_default_dtype());
Tensor empty(const Shape& shape, const TensorOptions& options);
Tensor zeros(const Shape& shape, const TensorOptions& options);
Tensor ones(const Shape& shape, const TensorOptions& options);
Tensor full(const Shape& shape, Scalar value, const TensorOptions& options);
/// Same shape as t; t's dtype unless the options name one.
Tensor empty_like(const Tensor& t);
/// Zeros of t's shape.
Tensor zeros_like(const Tensor& t);
/// Ones of t's shape.
Tensor ones_like(const Tensor& t);
/// `value` everywhere in t's shape.
Tensor full_like(const Tensor& t, Scalar value);
/// Uniform samples in [0, 1) of t's shape (t must be floating point).
Tensor rand_like(const Tensor& t);
/// Standard normal samples of t's shape (t must be floating point).
Tensor randn_like(const Tensor& t);
Tensor empty_like(const Tensor& t, const TensorOptions& options);
Tensor zeros_like(const Tensor& t, const TensorOptions& options);
Tensor ones_like(const Tensor& t, const TensorOptions& options);
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options);
/// Values start, start+step, ... below end, as torch.arange. Integer arguments give int64.
Tensor arange(Scalar end);
Tensor arange(Scalar start, Scalar end, Scalar step = 1);
Tensor arange(double start, double end, double step, Dtype dtype);
Tensor arange(Scalar end, const TensorOptions& options);
Tensor arange(Scalar start, Scalar end, const TensorOptions& options);
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options);
/// `steps` evenly spaced values from start to end inclusive.
Tensor linspace(double start, double end, std::int64_t steps, Dtype dtype = get_default_dtype());
Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options);
/// Identity matrix n x m (m defaults to n).
Tensor eye(std::int64_t n, std::optional<std::int64_t> m = std::nullopt,
           Dtype dtype = get_default_dtype());
Tensor eye(std::int64_t n, const TensorOptions& options);
Tensor eye(std::int64_t n, std::optional<std::int64_t> m, const TensorOptions& options);

namespace detail {
template <typename T, typename It>
Tensor tensor_1d(It begin, It end, Dtype dtype, const TensorOptions& options) {
  Tensor out;
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    out = tensor_from_int64(std::vector<std::int64_t>(begin, end), dtype);
  else
    out = tensor(std::vector<double>(begin, end),
                 Shape{static_cast<std::int64_t>(std::distance(begin, end))}, dtype);
  return apply_options(std::move(out), options, "tensor");
}
}  // namespace detail

// ---------------------------------------------------------------- random

/// Seeds the default generator (torch.manual_seed).
void manual_seed(std::uint64_t seed);
/// Standard normal samples.
Tensor randn(const Shape& shape, Dtype dtype = get_default_dtype());
Tensor randn(const Shape& shape, const TensorOptions& options);
/// Uniform samples in [0, 1).
Tensor rand(const Shape& shape, Dtype dtype = get_default_dtype());
Tensor rand(const Shape& shape, const TensorOptions& options);
/// Uniform integers in [low, high).
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype = kInt64);
Tensor randint(std::int64_t high, const Shape& shape, Dtype dtype = kInt64);
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
               const TensorOptions& options);
Tensor randint(std::int64_t high, const Shape& shape, const TensorOptions& options);
/// A random permutation of 0..n-1 (int64), as torch.randperm; throws for n < 0.
Tensor randperm(std::int64_t n);
/// num_samples category indices (int64) per row of probs (1-D or 2-D, non-negative weights),
/// drawn as PyTorch 1.13's CPU multinomial: the same indices for the same seed.
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement = false);

// ---------------------------------------------------------------- elementwise

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
/// True when the tensors have the same shape and |a - b| <= atol + rtol * |b| everywhere.
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

// ---------------------------------------------------------------- reductions
// `dims` lists the dims to reduce; an empty list reduces all of them.

/// Sum over dims (integer and bool inputs give int64); float32 accumulates in double.
Tensor sum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// Mean over dims; throws for integer inputs, as PyTorch.
Tensor mean(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// Largest element of the whole tensor (gradient shared evenly among ties, as PyTorch).
Tensor max(const Tensor& x);
/// Smallest element of the whole tensor (gradient shared evenly among ties, as PyTorch).
Tensor min(const Tensor& x);
/// (values, indices) along dim; the gradient goes to the index returned.
std::tuple<Tensor, Tensor> max(const Tensor& x, std::int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Max over dims; the gradient is shared evenly among ties.
Tensor amax(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// Min over dims; the gradient is shared evenly among ties.
Tensor amin(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// Index of the largest element (of the flattened tensor when dim is absent), int64.
Tensor argmax(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt,
              bool keepdim = false);
/// Index of the smallest element (of the flattened tensor when dim is absent), int64.
Tensor argmin(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt,
              bool keepdim = false);
/// Variance with Bessel's correction by default (correction = 1), as torch.var.
Tensor var(const Tensor& x, const Shape& dims = {}, double correction = 1, bool keepdim = false);
/// Standard deviation, sqrt(var(x, dims, correction)), as torch.std.
Tensor std(const Tensor& x, const Shape& dims = {}, double correction = 1, bool keepdim = false);
/// log(sum(exp(x))) computed stably.
Tensor logsumexp(const Tensor& x, const Shape& dims, bool keepdim = false);
/// Vector p-norm over dims (all elements by default); p may be any positive value or INFINITY.
Tensor norm(const Tensor& x, double p = 2, const Shape& dims = {}, bool keepdim = false);
/// (var, mean) over dims, as torch.var_mean (correction 1 is unbiased, 0 is biased).
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const Shape& dims = {}, double correction = 1,
                                    bool keepdim = false);
/// (std, mean) over dims, as torch.std_mean.
std::tuple<Tensor, Tensor> std_mean(const Tensor& x, const Shape& dims = {}, double correction = 1,
                                    bool keepdim = false);
/// Whether every element is non-zero (a 0-dim bool tensor); not differentiable.
Tensor all(const Tensor& x);
/// Whether every element along dim is non-zero (bool); not differentiable.
Tensor all(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Whether any element is non-zero (a 0-dim bool tensor); not differentiable.
Tensor any(const Tensor& x);
/// Whether any element along dim is non-zero (bool); not differentiable.
Tensor any(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Running sum along dim (integer and bool inputs give int64); float32 accumulates in double.
Tensor cumsum(const Tensor& x, std::int64_t dim);

// ---------------------------------------------------------------- linear algebra

/// torch.matmul: 1-D x 1-D is a dot product; 2-D x 2-D a matrix product; a 1-D operand gets a
/// dim prepended (left) or appended (right) and removed after; batch dims broadcast.
/// GEMM runs in OpenBLAS; transposed views are passed as transpose flags, not copied.
Tensor matmul(const Tensor& a, const Tensor& b);
/// Matrix product of two 2-D tensors.
Tensor mm(const Tensor& a, const Tensor& b);
/// Batched matrix product of two 3-D tensors with equal batch size.
Tensor bmm(const Tensor& a, const Tensor& b);
/// beta * input + alpha * (mat1 @ mat2) for 2-D mat1 [n, m], mat2 [m, p]; input broadcasts to
/// [n, p] (beta 0 ignores input's values, as PyTorch). The product runs in BLAS.
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
             Scalar alpha = 1);
/// Einstein summation of one or two operands ("ij,jk->ik", "bij,bjk->bik", "i,j->ij", "ij->ji",
/// "ij->i", "i,i->"), built from permute, sum, reshape and matmul; no "...", no letter repeated
/// within an operand, at most two operands (throws naming the equation otherwise).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors);

// ---------------------------------------------------------------- softmax

/// exp(x) / sum(exp(x)) along dim, fused and stable (the row max is subtracted first).
Tensor softmax(const Tensor& x, std::int64_t dim);
/// x - logsumexp(x) along dim, fused and stable.
Tensor log_softmax(const Tensor& x, std::int64_t dim);

// ---------------------------------------------------------------- shape and indexing

/// A view with dims dim0 and dim1 swapped (no copy).
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1);
/// A view with the dims in the order `dims` (a permutation of 0..dim()-1).
Tensor permute(const Tensor& x, const Shape& dims);
/// x with a new shape of the same numel (one size may be -1): a view when the strides allow,
/// else a copy.
Tensor reshape(const Tensor& x, const Shape& shape);
/// A view or copy (as reshape) merging dims start_dim..end_dim into one.
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
/// A view with a size-1 dim inserted at dim (dim may be dim(), the end).
Tensor unsqueeze(const Tensor& x, std::int64_t dim);
/// A view without the size-1 dims (all of them, or dim only when it has size 1).
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, std::int64_t dim);
/// Concatenates along dim; all other sizes must match. Dtypes promote.
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
/// Stacks equal-shaped tensors along a new dim.
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
/// Pieces of split_size along dim (the last may be smaller); views of x.
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const Shape& split_sizes, std::int64_t dim = 0);
/// `chunks` pieces of ceil(size / chunks) along dim (fewer when they run out), as torch.chunk.
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
/// Entries of x along dim at the int64 1-D `index`.
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
/// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (and so on); index is int64 of x's rank.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
/// A copy of self with src's entries added at index along dim (the backward of gather).
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
/// A copy of self with source's slices added at index along dim (the backward of index_select).
Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
/// Lower triangle of the last two dims (below diagonal k of them); the rest is zero.
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);
/// Upper triangle of the last two dims (above diagonal k of them); the rest is zero.
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);
/// A copy with the order of elements reversed along each of dims.
Tensor flip(const Tensor& x, const Shape& dims);
/// Elements shifted by shifts[i] along dims[i], wrapping around; with no dims, over the
/// flattened tensor (one shift). shifts and dims must have equal lengths.
Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims = {});
/// x tiled repeats[i] times along each dim (repeats may have more dims than x: leading new dims).
Tensor repeat(const Tensor& x, const Shape& repeats);
/// Each element repeated `repeats` times along dim (of the flattened tensor when dim is absent).
Tensor repeat_interleave(const Tensor& x, std::int64_t repeats,
                         std::optional<std::int64_t> dim = std::nullopt);
/// x viewed with other's shape (never copies).
Tensor view_as(const Tensor& x, const Tensor& other);
/// (values, indices) sorted along dim; stable (ties keep their order, as stable=True); NaN sorts
/// as the largest value. The values' gradient goes to the indices.
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false);
/// The indices of sort(x, dim, descending), int64.
Tensor argsort(const Tensor& x, std::int64_t dim = -1, bool descending = false);
/// The k largest (or smallest) (values, indices) along dim, in sorted order (also when sorted is
/// false); throws unless 0 <= k <= x.size(dim).
std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim = -1,
                                bool largest = true, bool sorted = true);
/// gather along dim after broadcasting x and indices (same rank) except at dim; with no dim,
/// the flattened x at the flattened indices. As torch.take_along_dim.
Tensor take_along_dim(const Tensor& x, const Tensor& indices,
                      std::optional<std::int64_t> dim = std::nullopt);
/// A copy of self with src's entries written at index along dim (torch.scatter); duplicate
/// indices leave an unspecified one of the values.
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
/// A copy of self with value written at index along dim.
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value);
/// A copy of self with src's entries reduced into it at index along dim (torch.scatter_reduce,
/// PyTorch 1.13): reduce is "sum", "prod", "mean", "amax" or "amin"; with include_self false,
/// self's values at the positions that receive src are left out of the reduction. Integer means
/// round down. Shapes as scatter; self and src have the same (non-bool) dtype. Differentiable
/// in self and src with PyTorch's rules (amax/amin share the gradient evenly among ties).
Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
/// A copy of self (broadcast with the bool mask) with source's first elements, in row-major
/// order, written where mask is true; source needs at least as many elements as true entries.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

}  // namespace minigrad
