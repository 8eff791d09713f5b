#pragma once
// Linear algebra and softmax (core/src/ops/linalg.cpp, core/src/ops/softmax.cpp).
// Part of minigrad/ops.h, which includes every family; include one family to depend on less.
#include <cstdint>
#include <string>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad {

/// torch.matmul: 1-D x 1-D is a dot product; 2-D x 2-D a matrix product; a 1-D operand gets a
/// dim prepended (left) or appended (right) and removed after; batch dims broadcast.
/// GEMM runs in OpenBLAS; transposed views are passed as transpose flags, not copied.
Tensor matmul(const Tensor& a, const Tensor& b);
/// Matrix product of two 2-D tensors.
Tensor mm(const Tensor& a, const Tensor& b);
/// Batched matrix product of two 3-D tensors with equal batch size.
Tensor bmm(const Tensor& a, const Tensor& b);
/// beta * input + alpha * (mat1 @ mat2) for 2-D mat1 [n, m], mat2 [m, p]; input broadcasts to
/// [n, p] (beta 0 ignores input's values, as PyTorch). The product runs in BLAS.
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1,
             Scalar alpha = 1);
/// Einstein summation of one or two operands ("ij,jk->ik", "bij,bjk->bik", "i,j->ij", "ij->ji",
/// "ij->i", "i,i->"), built from permute, sum, reshape and matmul; no "...", no letter repeated
/// within an operand, at most two operands (throws naming the equation otherwise).
Tensor einsum(const std::string& equation, const std::vector<Tensor>& tensors);

// ---------------------------------------------------------------- softmax

/// exp(x) / sum(exp(x)) along dim, fused and stable (the row max is subtracted first).
Tensor softmax(const Tensor& x, std::int64_t dim);
/// x - logsumexp(x) along dim, fused and stable.
Tensor log_softmax(const Tensor& x, std::int64_t dim);

}  // namespace minigrad
