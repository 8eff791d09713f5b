#pragma once
// Private: calling a templated kernel for a runtime dtype.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "minigrad/dispatch.h"
#include "minigrad/dtype.h"
#include "minigrad/error.h"

namespace minigrad::detail {

// dispatch and dispatch_floating are public (minigrad/dispatch.h), for kernels in custom
// Functions too.
using minigrad::dispatch;
using minigrad::dispatch_floating;

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
