#pragma once
// Private: the GEMM kernels of matmul, mm and bmm over raw buffers (Note [GEMM without copies],
// Note [GEMM on threads] in gemm.cpp). No Tensor, no autograd: row-major c = op(a) op(b), where
// op transposes when the flag says so, with leading dimensions as BLAS takes them; optionally
// c = alpha op(a) op(b) + beta c, as BLAS (addmm, Linear's bias: Note [Fused addmm]). Instantiated
// for float, double (OpenBLAS above kSmallGemm multiply-adds) and std::int64_t (a loop that
// wraps on overflow, as PyTorch).
#include <cstdint>

#include "minigrad/shape.h"

namespace minigrad::detail {

/// How a matrix is handed to BLAS: usable at all, transposed, and its leading dimension.
struct BlasLayout {
  bool ok = false;
  bool trans = false;
  std::int64_t ld = 1;
};

/// How a rows x cols matrix with strides (sr, sc) can be handed to BLAS (Note [GEMM without
/// copies]); `ok` is false when it is neither row- nor column-major.
BlasLayout blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t sr, std::int64_t sc);

/// c [m, n] (leading dimension ldc) = alpha a [m, k] b [k, n] + beta c on the calling thread;
/// ta / tb: a / b is stored transposed (column-major) with leading dimension lda / ldb. beta 0
/// does not read c (a NaN there does not propagate), as BLAS; k 0 leaves beta c.
template <typename T>
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, T alpha = T(1),
          T beta = T(0));

/// gemm(), split across minigrad's threads by rows or columns of c when large (Note [GEMM on
/// threads]).
template <typename T>
void gemm_threaded(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                   std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc,
                   T alpha = T(1), T beta = T(0));

/// A batch of products c[i] [M, N] = a[i] [M, K] b[i] [K, N] over the batch dims `batch`: the
/// matrices of a and b step by the batch strides sa and sb (0 on broadcast dims; la / lb give
/// their layout), those of c are contiguous, one after the other (M * N apart). K == 0 fills c
/// with zeros. Split across threads by matrices or within each product (Note [GEMM on threads]).
template <typename T>
void gemm_batched(const Shape& batch, std::int64_t M, std::int64_t N, std::int64_t K, const T* a,
                  const Shape& sa, BlasLayout la, const T* b, const Shape& sb, BlasLayout lb, T* c);

}  // namespace minigrad::detail
