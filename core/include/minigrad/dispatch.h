#pragma once
// Calling a kernel templated on the element type for a tensor's runtime dtype, as ATen's
// AT_DISPATCH macros: what a custom Function with its own loops needs (minigrad/custom_function.h).
//
//   mg::dispatch_floating(x.dtype(), "my_op", [&]<typename T>() {
//     const T* px = x.data_ptr<T>();  // x contiguous
//     ...
//   });
#include <cstdint>

#include "minigrad/dtype.h"
#include "minigrad/error.h"

namespace minigrad {

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

}  // namespace minigrad
