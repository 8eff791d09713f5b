// Creation ops: tensor(), zeros/ones/full/empty, *_like, arange, linspace, eye.
#include <cmath>

#include "kernels/dispatch.h"
#include "minigrad/ops.h"
#include "tensor_impl.h"

namespace minigrad {

namespace {

Tensor from_values(const std::vector<double>& values, const Shape& shape, Dtype dtype,
                   const char* op) {
  for (auto s : shape) MG_CHECK(s >= 0, op, "negative size in shape ", shape);
  std::int64_t n = detail::shape_numel(shape);
  MG_CHECK(n == static_cast<std::int64_t>(values.size()), op, "shape ", shape, " has ", n,
           " elements but ", values.size(), " values were given");
  Tensor out = detail::make_tensor(shape, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, std::int64_t>) {
        MG_CHECK(std::isfinite(values[i]), op, "value ", values[i], " at index ", i,
                 " cannot be stored in an int64 tensor");
      }
      p[i] = static_cast<T>(values[i]);
    }
  });
  return out;
}

}  // namespace

Tensor tensor(const std::vector<double>& values, const Shape& shape, Dtype dtype) {
  return from_values(values, shape, dtype, "tensor");
}

Tensor tensor(std::initializer_list<double> values, Dtype dtype) {
  return from_values(std::vector<double>(values), {static_cast<std::int64_t>(values.size())}, dtype,
                     "tensor");
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
  std::int64_t cols =
      rows ? static_cast<std::int64_t>(values.begin()->begin()->size()) : 0;
  for (const auto& mat : values) {
    MG_CHECK(static_cast<std::int64_t>(mat.size()) == rows, "tensor",
             "nested lists must be rectangular: a block has ", mat.size(), " rows, expected ", rows);
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
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    if constexpr (std::is_same_v<T, std::int64_t>) *p = value.to_int();
    else if constexpr (std::is_same_v<T, bool>) *p = value.to_double() != 0.0;
    else *p = static_cast<T>(value.to_double());
  });
  return out;
}

Tensor empty(const Shape& shape, Dtype dtype) { return detail::make_tensor(shape, dtype); }
Tensor zeros(const Shape& shape, Dtype dtype) { return full(shape, 0, dtype); }
Tensor ones(const Shape& shape, Dtype dtype) { return full(shape, 1, dtype); }
Tensor full(const Shape& shape, Scalar value, Dtype dtype) {
  Tensor out = detail::make_tensor(shape, dtype);
  out.fill_(value);
  return out;
}

Tensor empty_like(const Tensor& t) { return empty(t.shape(), t.dtype()); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }
Tensor ones_like(const Tensor& t) { return ones(t.shape(), t.dtype()); }
Tensor full_like(const Tensor& t, Scalar value) { return full(t.shape(), value, t.dtype()); }
Tensor rand_like(const Tensor& t) { return rand(t.shape(), t.dtype()); }
Tensor randn_like(const Tensor& t) { return randn(t.shape(), t.dtype()); }

Tensor arange(Scalar end) { return arange(0, end, 1); }

Tensor arange(Scalar start, Scalar end, Scalar step) {
  bool integral = start.kind() != Scalar::Kind::Float && end.kind() != Scalar::Kind::Float &&
                  step.kind() != Scalar::Kind::Float;
  return arange(start.to_double(), end.to_double(), step.to_double(), integral ? kInt64 : kFloat32);
}

Tensor arange(double start, double end, double step, Dtype dtype) {
  MG_CHECK(step != 0, "arange", "step must be nonzero");
  MG_CHECK(std::isfinite(start) && std::isfinite(end), "arange", "unsupported range: ", start,
           " -> ", end);
  MG_CHECK((step > 0 && end >= start) || (step < 0 && end <= start), "arange",
           "upper bound and larger bound inconsistent with step sign: start ", start, ", end ", end,
           ", step ", step);
  auto n = static_cast<std::int64_t>(std::ceil((end - start) / step));
  Tensor out = detail::make_tensor({n}, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return out;
}

Tensor linspace(double start, double end, std::int64_t steps, Dtype dtype) {
  MG_CHECK(steps >= 0, "linspace", "number of steps must be non-negative, got ", steps);
  Tensor out = detail::make_tensor({steps}, dtype);
  double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    // As PyTorch: the first half counts up from start, the second half down from end.
    std::int64_t half = steps / 2;
    for (std::int64_t i = 0; i < steps; ++i) {
      double v = i < half ? start + step * static_cast<double>(i)
                          : end - step * static_cast<double>(steps - 1 - i);
      p[i] = static_cast<T>(v);
    }
  });
  return out;
}

Tensor eye(std::int64_t n, std::optional<std::int64_t> m, Dtype dtype) {
  std::int64_t cols = m.value_or(n);
  MG_CHECK(n >= 0 && cols >= 0, "eye", "sizes must be non-negative, got n = ", n, ", m = ", cols);
  Tensor out = zeros({n, cols}, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::int64_t i = 0; i < std::min(n, cols); ++i) p[i * cols + i] = static_cast<T>(1);
  });
  return out;
}

}  // namespace minigrad
