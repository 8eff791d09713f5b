#pragma once
// Vector and matrix helpers: outer, cross, diag, trace, with libtorch 1.13's signatures;
// core/src/ops/matrix.cpp. Part of minigrad/ops.h. Each backward is a formula of public ops.
#include <cstdint>
#include <optional>

#include "minigrad/tensor.h"

namespace minigrad {

/// The outer product of two 1-D tensors: out[i][j] = a[i] * b[j] (dtypes promoted as mul).
Tensor outer(const Tensor& a, const Tensor& b);
/// The cross product of 3-vectors along dim (broadcast as mul). Without dim, the first dim of
/// size 3, as torch.cross's deprecated default.
Tensor cross(const Tensor& a, const Tensor& b, std::optional<std::int64_t> dim = std::nullopt);
/// torch.linalg.cross: the cross product along dim (-1 by default).
Tensor linalg_cross(const Tensor& a, const Tensor& b, std::int64_t dim = -1);
/// A 1-D tensor gives the 2-D matrix with it on diagonal `diagonal` (> 0 above the main one,
/// < 0 below); a 2-D tensor gives its diagonal `diagonal` as a 1-D tensor (a copy).
Tensor diag(const Tensor& x, std::int64_t diagonal = 0);
/// The sum of the main diagonal of a 2-D tensor (integer and bool inputs give int64).
Tensor trace(const Tensor& x);

}  // namespace minigrad
