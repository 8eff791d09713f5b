#pragma once
// Private: calling a templated kernel for a runtime dtype.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "minigrad/dtype.h"
#include "minigrad/error.h"

namespace minigrad::detail {

/// Calls fn.template operator()<T>() with T the C++ type of dtype:
///   dispatch(t.dtype(), [&]<typename T>() { ... });
template <typename F>
decltype(auto) dispatch(Dtype dtype, F&& fn) {
  switch (dtype) {
    case Dtype::Float32:
      return fn.template operator()<float>();
    case Dtype::Float64:
      return fn.template operator()<double>();
    case Dtype::Int64:
      return fn.template operator()<std::int64_t>();
    case Dtype::Bool:
      return fn.template operator()<bool>();
  }
  MG_ERROR("dispatch", "unknown dtype ", static_cast<int>(dtype));
}

/// Like dispatch, for float32 and float64 only; other dtypes throw naming op.
template <typename F>
decltype(auto) dispatch_floating(Dtype dtype, const char* op, F&& fn) {
  switch (dtype) {
    case Dtype::Float32:
      return fn.template operator()<float>();
    case Dtype::Float64:
      return fn.template operator()<double>();
    default:
      break;
  }
  MG_ERROR(op, "expected a floating-point tensor (float32 or float64) but got ", dtype_name(dtype));
}

/// static_cast<D>(v) without undefined behaviour: a NaN or out-of-range float converted to an
/// integer gives the integer's minimum, as x86's conversion instruction (and so PyTorch) does.
template <typename D, typename S>
D convert_value(S v) {
  if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    constexpr auto lo = static_cast<S>(std::numeric_limits<D>::min());
    if (!(v >= lo && v < -lo)) return std::numeric_limits<D>::min();
  }
  return static_cast<D>(v);
}

template <typename T>
constexpr Dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return Dtype::Float32;
  if constexpr (std::is_same_v<T, double>) return Dtype::Float64;
  if constexpr (std::is_same_v<T, std::int64_t>) return Dtype::Int64;
  if constexpr (std::is_same_v<T, bool>) return Dtype::Bool;
}

}  // namespace minigrad::detail
