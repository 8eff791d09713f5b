// Creation ops: tensor(), zeros/ones/full/empty, *_like, arange, linspace, eye.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "kernels/dispatch.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/random.h"
#include "minigrad/profiler.h"
#include "parallel.h"
#include "tensor_impl.h"

namespace minigrad {

// ---------------------------------------------------------------- Device

Device::Device(const std::string& name) : type_(kCPU), index_(-1) {
  if (name == "cpu") return;
  auto fail = [&] {
    MG_ERROR("Device", "expected a device string such as \"cpu\" or \"cuda:0\", got \"", name,
             "\"");
  };
  if (name.rfind("cuda", 0) != 0) fail();
  type_ = kCUDA;
  if (name.size() == 4) return;
  if (name[4] != ':' || name.size() < 6 || name.size() > 8) fail();
  int index = 0;
  for (std::size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') fail();
    index = index * 10 + (name[i] - '0');
  }
  if (index > 127) fail();
  index_ = static_cast<std::int8_t>(index);
}

std::string Device::str() const {
  if (is_cpu()) return "cpu";
  return has_index() ? "cuda:" + std::to_string(index_) : "cuda";
}

void check_cpu(const Device& device, const char* op) {
  MG_CHECK(device.is_cpu(), op, "CUDA is not available: minigrad runs on the CPU (asked for ",
           device.str(), "); pick the device with mg::cuda::is_available(), which is false");
}

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
  MG_PROFILE_OP(op);
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

namespace {

/// Walks nested lists, recording each depth's length (lists at one depth must agree), the values
/// in row-major order (as doubles, and exactly as int64 for integers) and the widest kind seen.
void flatten_nested(const TensorData& data, std::size_t depth, Shape& shape,
                    std::vector<double>& flat, std::vector<std::int64_t>& ints, Dtype& kind) {
  if (!data.is_list()) {
    MG_CHECK(shape.size() == depth, "tensor", "nested lists must be rectangular: a number at ",
             "depth ", depth, " where ", shape.size(), " levels of lists were seen");
    flat.push_back(data.to_double());
    ints.push_back(data.to_int());
    kind = promote_types(kind, data.kind());
    return;
  }
  auto n = static_cast<std::int64_t>(data.list().size());
  if (shape.size() <= depth)
    shape.push_back(n);
  else
    MG_CHECK(shape[depth] == n, "tensor", "nested lists must be rectangular: a list at depth ",
             depth, " has ", n, " values, expected ", shape[depth]);
  for (const TensorData& e : data.list()) flatten_nested(e, depth + 1, shape, flat, ints, kind);
}

/// Applies the options' dtype (or the default) and requires_grad to values of shape.
Tensor with_options(const std::vector<double>& values, const Shape& shape,
                    const TensorOptions& options, const char* op) {
  check_cpu(options.device(), op);
  Tensor out = from_values(values, shape, options.dtype(), op);
  return options.requires_grad() ? out.requires_grad_() : out;
}

}  // namespace

Tensor tensor(const std::vector<double>& values, const Shape& shape, const TensorOptions& options) {
  return with_options(values, shape, options, "tensor");
}
Tensor tensor(const TensorData& data, const TensorOptions& options) {
  MG_PROFILE_OP("tensor");
  check_cpu(options.device(), "tensor");
  Shape shape;
  std::vector<double> flat;
  std::vector<std::int64_t> ints;
  Dtype kind = kBool;
  flatten_nested(data, 0, shape, flat, ints, kind);
  if (flat.empty()) kind = kFloat64;  // torch.tensor([]) is floating point
  Dtype dt = options.dtype_or(kind == kFloat64 ? get_default_dtype() : kind);
  Tensor out = dt == kInt64 && kind != kFloat64 ? detail::tensor_from_int64(ints, dt).reshape(shape)
                                                : from_values(flat, shape, dt, "tensor");
  return options.requires_grad() ? out.requires_grad_() : out;
}

Tensor from_blob(void* data, const Shape& sizes, const Shape& strides,
                 const TensorOptions& options) {
  check_cpu(options.device(), "from_blob");
  check_shape(sizes, "from_blob");
  MG_CHECK(data != nullptr || detail::shape_numel(sizes) == 0, "from_blob", "data is null");
  MG_CHECK(strides.size() == sizes.size(), "from_blob", "sizes ", sizes, " and strides ", strides,
           " have different lengths");
  // The extent of memory the view reaches, for Storage::nbytes.
  std::int64_t span = 1;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    MG_CHECK(strides[d] >= 0, "from_blob", "negative strides are not supported: ", strides);
    if (sizes[d] == 0) span = 0;
  }
  if (span) {
    for (std::size_t d = 0; d < sizes.size(); ++d) span += (sizes[d] - 1) * strides[d];
  }
  Dtype dt = options.dtype();
  auto storage =
      std::allocate_shared<Storage>(detail::CachingAllocator<Storage>{}, data,
                                    static_cast<std::size_t>(span) * element_size(dt), nullptr);
  Tensor out = detail::make_tensor_on(std::move(storage), sizes, strides, dt);
  return options.requires_grad() ? out.requires_grad_() : out;
}
Tensor from_blob(void* data, const Shape& sizes, const TensorOptions& options) {
  return from_blob(data, sizes, detail::contiguous_strides(sizes), options);
}
Tensor from_blob(void* data, const Shape& sizes, const std::function<void(void*)>& deleter,
                 const TensorOptions& options) {
  Tensor out = from_blob(data, sizes, detail::contiguous_strides(sizes), options);
  out.impl()->storage->deleter = std::make_unique<std::function<void(void*)>>(deleter);
  return out;
}

Tensor scalar_tensor(Scalar value, Dtype dtype) {
  MG_PROFILE_OP("scalar_tensor");
  Tensor out = detail::make_tensor({}, dtype);
  detail::dispatch(
      dtype, [&]<typename T>() { *out.impl()->data<T>() = scalar_as<T>(value, "scalar_tensor"); });
  return out;
}

Tensor scalar_tensor(Scalar value, const TensorOptions& options) {
  check_cpu(options.device(), "scalar_tensor");
  Tensor out = scalar_tensor(value, options.dtype());
  return options.requires_grad() ? out.requires_grad_() : out;
}

Tensor empty(const Shape& shape, Dtype dtype) {
  MG_PROFILE_OP("empty");
  check_shape(shape, "empty");
  return detail::make_tensor(shape, dtype);
}

namespace {
Tensor filled(const Shape& shape, Scalar value, Dtype dtype, const char* op) {
  MG_PROFILE_OP(op);
  check_shape(shape, op);
  Tensor out = detail::make_tensor(shape, dtype);
  detail::dispatch(dtype, [&]<typename T>() {
    const T v = scalar_as<T>(value, op);
    T* p = out.impl()->data<T>();
    // About a memset: split only above 4 grains.
    detail::parallel_for(0, out.numel(), 4 * detail::kGrainSize,
                         [&](std::int64_t b, std::int64_t e) { std::fill(p + b, p + e, v); });
  });
  return out;
}
}  // namespace

Tensor zeros(const Shape& shape, Dtype dtype) { return filled(shape, 0, dtype, "zeros"); }
Tensor ones(const Shape& shape, Dtype dtype) { return filled(shape, 1, dtype, "ones"); }
Tensor full(const Shape& shape, Scalar value, Dtype dtype) {
  return filled(shape, value, dtype, "full");
}

Tensor detail::apply_options(Tensor out, const TensorOptions& options, const char* op) {
  check_cpu(options.device(), op);
  return options.requires_grad() ? out.requires_grad_() : out;
}

namespace {
Tensor finish(Tensor out, const TensorOptions& options, const char* op) {
  return detail::apply_options(std::move(out), options, op);
}
}  // namespace

Tensor empty(const Shape& shape, const TensorOptions& options) {
  return finish(empty(shape, options.dtype()), options, "empty");
}
Tensor zeros(const Shape& shape, const TensorOptions& options) {
  return finish(zeros(shape, options.dtype()), options, "zeros");
}
Tensor ones(const Shape& shape, const TensorOptions& options) {
  return finish(ones(shape, options.dtype()), options, "ones");
}
Tensor full(const Shape& shape, Scalar value, const TensorOptions& options) {
  return finish(full(shape, value, options.dtype()), options, "full");
}
Tensor empty_like(const Tensor& t, const TensorOptions& options) {
  MG_PROFILE_OP("empty_like");
  MG_CHECK(t.defined(), "empty_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return finish(empty(t.shape(), options.dtype_or(t.dtype())), options, "empty_like");
}
Tensor zeros_like(const Tensor& t, const TensorOptions& options) {
  MG_PROFILE_OP("zeros_like");
  MG_CHECK(t.defined(), "zeros_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return finish(zeros(t.shape(), options.dtype_or(t.dtype())), options, "zeros_like");
}
Tensor ones_like(const Tensor& t, const TensorOptions& options) {
  MG_PROFILE_OP("ones_like");
  MG_CHECK(t.defined(), "ones_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return finish(ones(t.shape(), options.dtype_or(t.dtype())), options, "ones_like");
}
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options) {
  MG_PROFILE_OP("full_like");
  MG_CHECK(t.defined(), "full_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return finish(full(t.shape(), value, options.dtype_or(t.dtype())), options, "full_like");
}

Tensor empty_like(const Tensor& t) {
  MG_PROFILE_OP("empty_like");
  MG_CHECK(t.defined(), "empty_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return empty(t.shape(), t.dtype());
}
Tensor zeros_like(const Tensor& t) {
  MG_PROFILE_OP("zeros_like");
  MG_CHECK(t.defined(), "zeros_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return zeros(t.shape(), t.dtype());
}
Tensor ones_like(const Tensor& t) {
  MG_PROFILE_OP("ones_like");
  MG_CHECK(t.defined(), "ones_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return ones(t.shape(), t.dtype());
}
Tensor full_like(const Tensor& t, Scalar value) {
  MG_PROFILE_OP("full_like");
  MG_CHECK(t.defined(), "full_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return full(t.shape(), value, t.dtype());
}
Tensor rand_like(const Tensor& t) {
  MG_PROFILE_OP("rand_like");
  MG_CHECK(t.defined(), "rand_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return rand(t.shape(), t.dtype());
}
Tensor randn_like(const Tensor& t) {
  MG_PROFILE_OP("randn_like");
  MG_CHECK(t.defined(), "randn_like",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return randn(t.shape(), t.dtype());
}

namespace {
/// arange over int64, exact: the size is computed without going through double.
Tensor arange_int(std::int64_t start, std::int64_t end, std::int64_t step) {
  MG_PROFILE_OP("arange");
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
  MG_PROFILE_OP("arange");
  bool integral = start.kind() != Scalar::Kind::Float && end.kind() != Scalar::Kind::Float &&
                  step.kind() != Scalar::Kind::Float;
  if (integral) return arange_int(start.to_int(), end.to_int(), step.to_int());
  return arange(start.to_double(), end.to_double(), step.to_double(), get_default_dtype());
}

Tensor arange(Scalar end, const TensorOptions& options) { return arange(0, end, 1, options); }
Tensor arange(Scalar start, Scalar end, const TensorOptions& options) {
  return arange(start, end, 1, options);
}
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options) {
  MG_PROFILE_OP("arange");
  Tensor out = options.has_dtype()
                   ? arange(start.to_double(), end.to_double(), step.to_double(), options.dtype())
                   : arange(start, end, step);
  return finish(out, options, "arange");
}

Tensor arange(double start, double end, double step, Dtype dtype) {
  MG_PROFILE_OP("arange");
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
  MG_PROFILE_OP("linspace");
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
  MG_PROFILE_OP("eye");
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

namespace minigrad {
Tensor linspace(double start, double end, std::int64_t steps, const TensorOptions& options) {
  return finish(linspace(start, end, steps, options.dtype()), options, "linspace");
}
Tensor eye(std::int64_t n, const TensorOptions& options) {
  return finish(eye(n, std::nullopt, options.dtype()), options, "eye");
}
Tensor eye(std::int64_t n, std::optional<std::int64_t> m, const TensorOptions& options) {
  return finish(eye(n, m, options.dtype()), options, "eye");
}
}  // namespace minigrad
