#pragma once
// Shape ops, views, joining and splitting (core/src/ops/shape.cpp, core/src/ops/index.cpp).
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <cstdint>
#include <optional>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad {

/// A view with dims dim0 and dim1 swapped (no copy).
Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1);
/// A view with the dims in the order `dims` (a permutation of 0..dim()-1).
Tensor permute(const Tensor& x, const Shape& dims);
/// x with a new shape of the same numel (one size may be -1): a view when the strides allow,
/// else a copy.
Tensor reshape(const Tensor& x, const Shape& shape);
/// A view or copy (as reshape) merging dims start_dim..end_dim into one.
Tensor flatten(const Tensor& x, std::int64_t start_dim = 0, std::int64_t end_dim = -1);
/// A view with a size-1 dim inserted at dim (dim may be dim(), the end).
Tensor unsqueeze(const Tensor& x, std::int64_t dim);
/// A view without the size-1 dims (all of them, or dim only when it has size 1).
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, std::int64_t dim);
/// Concatenates along dim; all other sizes must match. Dtypes promote.
Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
/// Stacks equal-shaped tensors along a new dim.
Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
/// Pieces of split_size along dim (the last may be smaller); views of x. As in PyTorch, the pieces
/// of a tensor that requires grad share one node (SplitBackward0, SplitWithSizesBackward0 for a
/// list of sizes), and may not be written in place in grad mode, nor used after x (or another
/// view of it) was written in place: both throw. chunk's pieces are split's.
std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, const Shape& split_sizes, std::int64_t dim = 0);
/// `chunks` pieces of ceil(size / chunks) along dim (fewer when they run out), as torch.chunk.
std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim = 0);
/// Lower triangle of the last two dims (below diagonal k of them); the rest is zero.
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);
/// Upper triangle of the last two dims (above diagonal k of them); the rest is zero.
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);
/// A copy with the order of elements reversed along each of dims.
Tensor flip(const Tensor& x, const Shape& dims);
/// Elements shifted by shifts[i] along dims[i], wrapping around; with no dims, over the
/// flattened tensor (one shift). shifts and dims must have equal lengths.
Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims = {});
/// x tiled repeats[i] times along each dim (repeats may have more dims than x: leading new dims).
Tensor repeat(const Tensor& x, const Shape& repeats);
/// Each element repeated `repeats` times along dim (of the flattened tensor when dim is absent).
Tensor repeat_interleave(const Tensor& x, std::int64_t repeats,
                         std::optional<std::int64_t> dim = std::nullopt);
/// x viewed with other's shape (never copies).
Tensor view_as(const Tensor& x, const Tensor& other);

}  // namespace minigrad
