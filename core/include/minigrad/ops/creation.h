#pragma once
// Creation functions (tensor, zeros, arange, ...): torch.* factory functions.
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
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
/// A 1-D tensor from a std::vector, its dtype as libtorch 1.13's (TensorDataContainer's
/// compute_desired_dtype): the default dtype for float and double (float32 unless
/// set_default_dtype changed it), int64 for integers, bool for bool.
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  const Dtype natural = std::is_same_v<T, bool> ? kBool
                        : std::is_integral_v<T> ? kInt64
                                                : get_default_dtype();
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
/// One int as the size, libtorch's `torch::zeros(3)` (IntArrayRef of one element): shape [n].
template <SizeInteger I>
Tensor empty(I n, Dtype dtype = get_default_dtype()) {
  return empty(Shape{static_cast<std::int64_t>(n)}, dtype);
}
template <SizeInteger I>
Tensor zeros(I n, Dtype dtype = get_default_dtype()) {
  return zeros(Shape{static_cast<std::int64_t>(n)}, dtype);
}
template <SizeInteger I>
Tensor ones(I n, Dtype dtype = get_default_dtype()) {
  return ones(Shape{static_cast<std::int64_t>(n)}, dtype);
}
template <SizeInteger I>
Tensor full(I n, Scalar value, Dtype dtype = get_default_dtype()) {
  return full(Shape{static_cast<std::int64_t>(n)}, value, dtype);
}
template <SizeInteger I>
Tensor empty(I n, const TensorOptions& options) {
  return empty(Shape{static_cast<std::int64_t>(n)}, options);
}
template <SizeInteger I>
Tensor zeros(I n, const TensorOptions& options) {
  return zeros(Shape{static_cast<std::int64_t>(n)}, options);
}
template <SizeInteger I>
Tensor ones(I n, const TensorOptions& options) {
  return ones(Shape{static_cast<std::int64_t>(n)}, options);
}
template <SizeInteger I>
Tensor full(I n, Scalar value, const TensorOptions& options) {
  return full(Shape{static_cast<std::int64_t>(n)}, value, options);
}
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

}  // namespace minigrad
