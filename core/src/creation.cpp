// Creation ops: tensor(), zeros/ones/full/empty, *_like, arange, linspace, eye.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "kernels/dispatch.h"
#include "minigrad/ops.h"
#include "tensor_impl.h"

namespace minigrad {

namespace {

void check_shape(const Shape& shape, const char* op) {
  for (auto s : shape)
    MG_CHECK(s >= 0, op, "trying to create a tensor with negative dimension ", s, ": ", shape);
}

/// True when v converts to int64 without overflow (what c10's checked_convert accepts).
bool fits_int64(double v) {
  // 2^63 is exact in double; every double below it (and >= -2^63) converts.
  return std::isfinite(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}

/// Converts a double to T as PyTorch does: truncation for int64 (range-checked), v != 0 for bool.
template <typename T>
T convert(double v, const char* op) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    MG_CHECK(fits_int64(v), op, "value ", v, " cannot be converted to int64 without overflow");
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

Tensor from_values(const std::vector<double>& values, const Shape& shape, Dtype dtype,
                   const char* op) {
  check_shape(shape, op);
  std::int64_t n = detail::shape_numel(shape);
  MG_CHECK(n == static_cast<std::int64_t>(values.size()), op, "shape ", shape, " has ", n,
           " elements but ", values.size(), " values were given");
  Tensor out = detail::make_tensor(shape, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) p[i] = convert<T>(values[i], op);
  });
  return out;
}

/// A Scalar as the dtype's value: integers stay exact, floats convert as convert() does.
template <typename T>
T scalar_as(Scalar value, const char* op) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    if (value.kind() != Scalar::Kind::Float) return value.to_int();
  }
  return convert<T>(value.to_double(), op);
}

}  // namespace

Tensor detail::tensor_from_int64(const std::vector<std::int64_t>& values, Dtype dtype) {
  Tensor out = detail::make_tensor({static_cast<std::int64_t>(values.size())}, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>)
        p[i] = values[i] != 0;
      else
        p[i] = static_cast<T>(values[i]);
    }
  });
  return out;
}

Tensor tensor(const std::vector<double>& values, const Shape& shape, Dtype dtype) {
  return from_values(values, shape, dtype, "tensor");
}

Tensor tensor(std::initializer_list<std::initializer_list<double>> values, Dtype dtype) {
  std::vector<double> flat;
  std::int64_t cols = values.size() ? static_cast<std::int64_t>(values.begin()->size()) : 0;
  std::int64_t r = 0;
  for (const auto& row : values) {
    MG_CHECK(static_cast<std::int64_t>(row.size()) == cols, "tensor", "row ", r, " has ",
             row.size(), " values but row 0 has ", cols, ": nested lists must be rectangular");
    flat.insert(flat.end(), row.begin(), row.end());
    ++r;
  }
  return from_values(flat, {static_cast<std::int64_t>(values.size()), cols}, dtype, "tensor");
}

Tensor tensor(std::initializer_list<std::initializer_list<std::initializer_list<double>>> values,
              Dtype dtype) {
  std::vector<double> flat;
  std::int64_t rows = values.size() ? static_cast<std::int64_t>(values.begin()->size()) : 0;
  std::int64_t cols = rows ? static_cast<std::int64_t>(values.begin()->begin()->size()) : 0;
  for (const auto& mat : values) {
    MG_CHECK(static_cast<std::int64_t>(mat.size()) == rows, "tensor",
             "nested lists must be rectangular: a block has ", mat.size(), " rows, expected ",
             rows);
    for (const auto& row : mat) {
      MG_CHECK(static_cast<std::int64_t>(row.size()) == cols, "tensor",
               "nested lists must be rectangular: a row has ", row.size(), " values, expected ",
               cols);
      flat.insert(flat.end(), row.begin(), row.end());
    }
  }
  return from_values(flat, {static_cast<std::int64_t>(values.size()), rows, cols}, dtype, "tensor");
}

Tensor scalar_tensor(Scalar value, Dtype dtype) {
  Tensor out = detail::make_tensor({}, dtype);
  detail::dispatch(
      dtype, [&]<typename T>() { *out.impl()->data<T>() = scalar_as<T>(value, "scalar_tensor"); });
  return out;
}

Tensor empty(const Shape& shape, Dtype dtype) {
  check_shape(shape, "empty");
  return detail::make_tensor(shape, dtype);
}

namespace {
Tensor filled(const Shape& shape, Scalar value, Dtype dtype, const char* op) {
  check_shape(shape, op);
  Tensor out = detail::make_tensor(shape, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    const T v = scalar_as<T>(value, op);
    T* p = out.impl()->data<T>();
    std::fill(p, p + out.numel(), v);
  });
  return out;
}
}  // namespace

Tensor zeros(const Shape& shape, Dtype dtype) { return filled(shape, 0, dtype, "zeros"); }
Tensor ones(const Shape& shape, Dtype dtype) { return filled(shape, 1, dtype, "ones"); }
Tensor full(const Shape& shape, Scalar value, Dtype dtype) {
  return filled(shape, value, dtype, "full");
}

Tensor empty_like(const Tensor& t) {
  MG_CHECK(t.defined(), "empty_like", "got an undefined tensor");
  return empty(t.shape(), t.dtype());
}
Tensor zeros_like(const Tensor& t) {
  MG_CHECK(t.defined(), "zeros_like", "got an undefined tensor");
  return zeros(t.shape(), t.dtype());
}
Tensor ones_like(const Tensor& t) {
  MG_CHECK(t.defined(), "ones_like", "got an undefined tensor");
  return ones(t.shape(), t.dtype());
}
Tensor full_like(const Tensor& t, Scalar value) {
  MG_CHECK(t.defined(), "full_like", "got an undefined tensor");
  return full(t.shape(), value, t.dtype());
}
Tensor rand_like(const Tensor& t) {
  MG_CHECK(t.defined(), "rand_like", "got an undefined tensor");
  return rand(t.shape(), t.dtype());
}
Tensor randn_like(const Tensor& t) {
  MG_CHECK(t.defined(), "randn_like", "got an undefined tensor");
  return randn(t.shape(), t.dtype());
}

namespace {
/// arange over int64, exact: the size is computed without going through double.
Tensor arange_int(std::int64_t start, std::int64_t end, std::int64_t step) {
  MG_CHECK(step != 0, "arange", "step must be nonzero");
  MG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), "arange",
           "upper bound and larger bound inconsistent with step sign: start ", start, ", end ", end,
           ", step ", step);
  // Unsigned arithmetic cannot overflow here: every true value fits in int64.
  using U = std::uint64_t;
  const U span = step > 0 ? U(end) - U(start) : U(start) - U(end);
  const U mag = step > 0 ? U(step) : U(0) - U(step);
  const auto n = static_cast<std::int64_t>(span / mag + (span % mag != 0 ? 1 : 0));
  Tensor out = detail::make_tensor({n}, kInt64);
  auto* p = out.impl()->data<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<std::int64_t>(U(start) + U(step) * U(i));
  return out;
}
}  // namespace

Tensor arange(Scalar end) { return arange(0, end, 1); }

Tensor arange(Scalar start, Scalar end, Scalar step) {
  bool integral = start.kind() != Scalar::Kind::Float && end.kind() != Scalar::Kind::Float &&
                  step.kind() != Scalar::Kind::Float;
  if (integral) return arange_int(start.to_int(), end.to_int(), step.to_int());
  return arange(start.to_double(), end.to_double(), step.to_double(), kFloat32);
}

Tensor arange(double start, double end, double step, Dtype dtype) {
  MG_CHECK(dtype != kBool, "arange", "not implemented for bool");
  if (dtype == kInt64) {
    // As PyTorch: start, end and step are first converted to int64 (truncating).
    return arange_int(convert<std::int64_t>(start, "arange"), convert<std::int64_t>(end, "arange"),
                      convert<std::int64_t>(step, "arange"));
  }
  MG_CHECK(std::isfinite(start) && std::isfinite(end), "arange", "unsupported range: ", start,
           " -> ", end);
  MG_CHECK(step != 0, "arange", "step must be nonzero");
  MG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), "arange",
           "upper bound and larger bound inconsistent with step sign: start ", start, ", end ", end,
           ", step ", step);
  const double size = std::ceil((end - start) / step);
  MG_CHECK(size >= 0 && size < 9.2e18, "arange", "invalid size ", size,
           ", possible overflow: start ", start, ", end ", end, ", step ", step);
  auto n = static_cast<std::int64_t>(size);
  Tensor out = detail::make_tensor({n}, dtype);
  detail::dispatch_floating(dtype, "arange", [&]<typename T>() {
    // NOTE: PyTorch's CPU kernel computes in double for float32 too, then rounds each value.
    T* p = out.impl()->data<T>();
    for (std::int64_t i = 0; i < n; ++i)
      p[i] = static_cast<T>(start + step * static_cast<double>(i));
  });
  return out;
}

Tensor linspace(double start, double end, std::int64_t steps, Dtype dtype) {
  MG_CHECK(steps >= 0, "linspace", "number of steps must be non-negative, got ", steps);
  MG_CHECK(dtype != kBool, "linspace", "not implemented for bool");
  Tensor out = detail::make_tensor({steps}, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = out.impl()->data<T>();
      // As PyTorch's CPU kernel: start and end are first converted to the dtype, the step is
      // computed in the dtype (double for int64), the first half counts up from start and the
      // second half down from end. One step gives start.
      // NOTE: PyTorch's x86 build contracts `start + step * i` into a fused multiply-add, which
      // changes last bits (linspace(-1, 1, 7)[3] is -2.98e-08, not 0); std::fma reproduces it.
      // Its vectorised loop (16 or more steps) rounds differently again, in the last bit.
      using StepT = std::conditional_t<std::is_integral_v<T>, double, T>;
      const T s = convert<T>(start, "linspace");
      const T e = convert<T>(end, "linspace");
      if (steps == 1) {
        p[0] = s;
        return;
      }
      const StepT step =
          (static_cast<StepT>(e) - static_cast<StepT>(s)) / static_cast<StepT>(steps - 1);
      const std::int64_t half = steps / 2;
      for (std::int64_t i = 0; i < steps; ++i) {
        const StepT v =
            i < half ? std::fma(step, static_cast<StepT>(i), static_cast<StepT>(s))
                     : std::fma(-step, static_cast<StepT>(steps - i - 1), static_cast<StepT>(e));
        p[i] = static_cast<T>(v);
      }
    }
  });
  return out;
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, Dtype dtype) {
  std::int64_t cols = m.value_or(n);
  MG_CHECK(n >= 0, "eye", "n must be greater or equal to 0, got ", n);
  MG_CHECK(cols >= 0, "eye", "m must be greater or equal to 0, got ", cols);
  Tensor out = zeros({n, cols}, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = static_cast<T>(1);
  });
  return out;
}

}  // namespace minigrad
