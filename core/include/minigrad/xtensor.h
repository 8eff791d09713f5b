#pragma once
// Opt-in bridge between minigrad::Tensor and xtensor's xt::xarray (copies the data both ways).
// Include it only if your project uses xtensor itself: no other minigrad header includes xtensor.
//
//   xt::xarray<float> a = minigrad::to_xarray<float>(t);
//   minigrad::Tensor u = minigrad::from_xarray(a);   // float -> kFloat32, double -> kFloat64
#include <cstdint>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include "minigrad/ops.h"

namespace minigrad {

/// A copy of t's elements (converted to T) as an xt::xarray with t's shape.
template <typename T>
xt::xarray<T> to_xarray(const Tensor& t) {
  std::vector<T> values = t.to_vector<T>();
  std::vector<std::size_t> shape(t.shape().begin(), t.shape().end());
  xt::xarray<T> out = xt::adapt(values, shape);
  return out;
}

/// A new tensor holding a copy of a's elements; the dtype follows T unless given.
template <typename T>
Tensor from_xarray(const xt::xarray<T>& a) {
  Dtype dtype = std::is_same_v<T, double> ? kFloat64
                : std::is_same_v<T, bool> ? kBool
                : std::is_integral_v<T>   ? kInt64
                                          : kFloat32;
  std::vector<double> values(a.begin(), a.end());
  Shape shape(a.shape().begin(), a.shape().end());
  return tensor(values, shape, dtype);
}

}  // namespace minigrad
