#pragma once
// Random sampling with the default generator (manual_seed, rand, randn, ...).
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <cstdint>
#include <utility>

#include "minigrad/tensor.h"

namespace minigrad {

/// Seeds the default generator (torch.manual_seed).
void manual_seed(std::uint64_t seed);
/// Standard normal samples.
Tensor randn(const Shape& shape, Dtype dtype = get_default_dtype());
Tensor randn(const Shape& shape, const TensorOptions& options);
/// Uniform samples in [0, 1).
Tensor rand(const Shape& shape, Dtype dtype = get_default_dtype());
Tensor rand(const Shape& shape, const TensorOptions& options);
/// One int as the size, libtorch's `torch::randn(5)`: shape [n].
template <SizeInteger I>
Tensor randn(I n, Dtype dtype = get_default_dtype()) {
  return randn(Shape{static_cast<std::int64_t>(n)}, dtype);
}
template <SizeInteger I>
Tensor randn(I n, const TensorOptions& options) {
  return randn(Shape{static_cast<std::int64_t>(n)}, options);
}
template <SizeInteger I>
Tensor rand(I n, Dtype dtype = get_default_dtype()) {
  return rand(Shape{static_cast<std::int64_t>(n)}, dtype);
}
template <SizeInteger I>
Tensor rand(I n, const TensorOptions& options) {
  return rand(Shape{static_cast<std::int64_t>(n)}, options);
}
/// Uniform integers in [low, high).
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype = kInt64);
Tensor randint(std::int64_t high, const Shape& shape, Dtype dtype = kInt64);
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
               const TensorOptions& options);
Tensor randint(std::int64_t high, const Shape& shape, const TensorOptions& options);
/// A random permutation of 0..n-1 (int64), as torch.randperm; throws for n < 0.
Tensor randperm(std::int64_t n);
/// num_samples category indices (int64) per row of probs (1-D or 2-D, non-negative weights),
/// drawn as PyTorch 1.13's CPU multinomial: the same indices for the same seed.
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement = false);

namespace detail {
/// nn::functional::dropout's forward in one pass, without autograd (Note [Fused dropout],
/// random.cpp): for a floating x and 0 < p < 1, returns {x * m, m} with the scaled mask
/// m = (rand(x.shape(), x.dtype()) >= p).to(x.dtype()) * (1 / (1 - p)), bit for bit.
std::pair<Tensor, Tensor> dropout_with_mask(const Tensor& x, double p);
}  // namespace detail

}  // namespace minigrad
