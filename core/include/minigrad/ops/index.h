#pragma once
// Gathering, scattering and sorting along a dim (core/src/ops/index.cpp).
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "minigrad/tensor.h"

namespace minigrad {

/// Entries of x along dim at the int64 1-D `index`.
Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index);
/// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (and so on); index is int64 of x's rank.
Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index);
/// A copy of self with src's entries added at index along dim (the backward of gather).
Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
/// A copy of self with source's slices added at index along dim (the backward of index_select).
Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source);
/// (values, indices) sorted along dim; stable (ties keep their order, as stable=True); NaN sorts
/// as the largest value. The values' gradient goes to the indices.
std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim = -1, bool descending = false);
/// The indices of sort(x, dim, descending), int64.
Tensor argsort(const Tensor& x, std::int64_t dim = -1, bool descending = false);
/// The k largest (or smallest) (values, indices) along dim, in sorted order (also when sorted is
/// false); throws unless 0 <= k <= x.size(dim).
std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim = -1,
                                bool largest = true, bool sorted = true);
/// gather along dim after broadcasting x and indices (same rank) except at dim; with no dim,
/// the flattened x at the flattened indices. As torch.take_along_dim.
Tensor take_along_dim(const Tensor& x, const Tensor& indices,
                      std::optional<std::int64_t> dim = std::nullopt);
/// A copy of self with src's entries written at index along dim (torch.scatter); duplicate
/// indices leave an unspecified one of the values.
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src);
/// A copy of self with value written at index along dim.
Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value);
/// A copy of self with src's entries reduced into it at index along dim (torch.scatter_reduce,
/// PyTorch 1.13): reduce is "sum", "prod", "mean", "amax" or "amin"; with include_self false,
/// self's values at the positions that receive src are left out of the reduction. Integer means
/// round down. Shapes as scatter; self and src have the same (non-bool) dtype. Differentiable
/// in self and src with PyTorch's rules (amax/amin share the gradient evenly among ties).
Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
/// A copy of self (broadcast with the bool mask) with source's first elements, in row-major
/// order, written where mask is true; source needs at least as many elements as true entries.
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source);

}  // namespace minigrad
