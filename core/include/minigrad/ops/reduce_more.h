#pragma once
// More reductions (prod, cumprod, median, nansum, count_nonzero) and the counting ops (unique,
// bincount), with libtorch 1.13's signatures; core/src/ops/reduce_more.cpp. Part of
// minigrad/ops.h. prod, cumprod, median and nansum are differentiable (each backward a formula
// of public ops, so it can be differentiated again); count_nonzero, unique and bincount are not.
#include <cstdint>
#include <optional>
#include <tuple>

#include "minigrad/tensor.h"

namespace minigrad {

/// The product of all elements (integer and bool inputs give int64). The gradient is right with
/// zeros in the input too, as PyTorch's (one zero: only it gets a non-zero gradient).
Tensor prod(const Tensor& x);
/// The product along dim.
Tensor prod(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// The running product along dim (integer and bool inputs give int64); gradient as prod's.
Tensor cumprod(const Tensor& x, std::int64_t dim);
/// The median of all elements: the lower of the two middle values for an even count, as
/// torch.median (NaN if any element is NaN). The gradient goes to that element.
Tensor median(const Tensor& x);
/// (values, indices) of the median along dim (the lower middle value); the gradient goes to the
/// index returned.
std::tuple<Tensor, Tensor> median(const Tensor& x, std::int64_t dim, bool keepdim = false);
/// Sum over dims (all by default) treating NaN as zero; the gradient of a NaN element is zero.
Tensor nansum(const Tensor& x, const Shape& dims = {}, bool keepdim = false);
/// The number of non-zero elements over dims (all when empty), int64; not differentiable.
Tensor count_nonzero(const Tensor& x, const Shape& dims);
Tensor count_nonzero(const Tensor& x, std::optional<std::int64_t> dim = std::nullopt);

/// The distinct elements of x, flattened (always sorted, as PyTorch's CPU kernel), with, when
/// asked, the index of each element of x in them (x's shape) and each one's count; what is not
/// asked is an empty tensor. As libtorch's at::_unique2 (torch.unique without dim).
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted = true,
                                            bool return_inverse = false,
                                            bool return_counts = false);
/// (unique, inverse) as at::_unique.
std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted = true,
                                   bool return_inverse = false);
/// The distinct slices of x along dim, sorted lexicographically, with the inverse (one index per
/// slice) and the counts when asked, as at::unique_dim (torch.unique(x, dim=d)).
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, std::int64_t dim, bool sorted = true,
                                              bool return_inverse = false,
                                              bool return_counts = false);
/// How often each value 0..max(x) occurs in a 1-D non-negative integer tensor (at least minlength
/// bins); with weights (x's shape) each occurrence adds its weight instead of 1 (the result has
/// the weights' dtype, float64 for integer weights). int64 without weights.
Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights = std::nullopt,
                std::int64_t minlength = 0);

}  // namespace minigrad
