#pragma once
// Reductions (core/src/ops/reduce.cpp).
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <cstdint>
#include <optional>
#include <tuple>

#include "minigrad/tensor.h"

namespace minigrad {

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

}  // namespace minigrad
