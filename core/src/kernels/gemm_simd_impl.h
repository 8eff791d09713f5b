#pragma once
// Private: the float32 GEMM of small products (Note [Small GEMM] in gemm.cpp) written once over
// V = Vec<A> of vec_math.h, compiled by softmax_avx2.cpp and softmax_avx512.cpp. Internal linkage
// only, as vec_math.h explains.
#include <algorithm>
#include <cstdint>

#include "kernels/simd.h"
#include "kernels/vec_math.h"

namespace minigrad::detail::simd {
namespace {

/// Rows [i0, i0 + R) and the R x C vectors of c starting at column j0: the sum over p of
/// a(i, p) * bp(p, j) in registers, one FMA per vector and p, then c = alpha acc + beta c.
/// bp is op(b) packed, row p at bp + p * ldp; kTail: the last vector holds only `tail` columns.
template <class V, int R, int C>
void small_gemm_block(bool ta, std::int64_t k, const float* a, std::int64_t lda, const float* bp,
                      std::int64_t ldp, float* c, std::int64_t ldc, std::int64_t j0,
                      std::int64_t last_cols, float alpha, float beta) {
  using Reg = typename V::Reg;
  constexpr std::int64_t W = V::kWidth;
  Reg acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < C; ++q) acc[r][q] = V::zero();
  // a(i, p): row-major a[i * lda + p], transposed a[p * lda + i].
  const std::int64_t step_i = ta ? 1 : lda, step_p = ta ? lda : 1;
  for (std::int64_t p = 0; p < k; ++p) {
    Reg bv[C];
    for (int q = 0; q < C; ++q) bv[q] = V::load(bp + p * ldp + j0 + q * W);
    for (int r = 0; r < R; ++r) {
      const Reg av = V::set1(a[r * step_i + p * step_p]);
      for (int q = 0; q < C; ++q) acc[r][q] = V::fmadd(av, bv[q], acc[r][q]);
    }
  }
  const Reg va = V::set1(alpha), vb = V::set1(beta);
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc + j0;
    for (int q = 0; q < C; ++q) {
      const bool partial = q == C - 1 && last_cols < W;
      Reg v = alpha == 1.0f ? acc[r][q] : V::mul(va, acc[r][q]);
      if (beta != 0.0f) {  // beta 0 does not read c (BLAS's rule)
        const Reg old =
            partial ? V::load_partial(row + q * W, last_cols, V::zero()) : V::load(row + q * W);
        v = V::add(v, beta == 1.0f ? old : V::mul(vb, old));
      }
      if (partial) {
        V::store_partial(row + q * W, last_cols, v);
      } else {
        V::store(row + q * W, v);
      }
    }
  }
}

template <class V, int R>
void small_gemm_rows(bool ta, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
                     const float* bp, std::int64_t ldp, float* c, std::int64_t ldc, float alpha,
                     float beta) {
  constexpr std::int64_t W = V::kWidth;
  std::int64_t j0 = 0;
  for (; j0 + 2 * W <= n; j0 += 2 * W)
    small_gemm_block<V, R, 2>(ta, k, a, lda, bp, ldp, c, ldc, j0, W, alpha, beta);
  if (n - j0 > W) {
    small_gemm_block<V, R, 2>(ta, k, a, lda, bp, ldp, c, ldc, j0, n - j0 - W, alpha, beta);
  } else if (n > j0) {
    small_gemm_block<V, R, 1>(ta, k, a, lda, bp, ldp, c, ldc, j0, n - j0, alpha, beta);
  }
}

/// Rows of c per block: R x 2 accumulators, enough independent FMAs to hide their latency (2 per
/// cycle, 4 cycles each) within the register file with op(b)'s two vectors and a broadcast of a:
/// 6 rows on AVX2 (15 of 16 registers; 4 rows ran 1.5x slower), 4 on AVX-512 (its 16-wide vectors
/// already give 8 independent FMAs per k step; 6 and 8 rows measured slower on 24x24x16).
template <class V>
constexpr int kSmallGemmRows = V::kWidth == 16 ? 4 : 6;

/// The last rows (fewer than a block): R rows when rows == R, else fewer.
template <class V, int R>
void small_gemm_last_rows(int rows, bool ta, std::int64_t n, std::int64_t k, const float* a,
                          std::int64_t lda, const float* bp, std::int64_t ldp, float* c,
                          std::int64_t ldc, float alpha, float beta) {
  if constexpr (R > 0) {
    if (rows == R) {
      small_gemm_rows<V, R>(ta, n, k, a, lda, bp, ldp, c, ldc, alpha, beta);
    } else {
      small_gemm_last_rows<V, R - 1>(rows, ta, n, k, a, lda, bp, ldp, c, ldc, alpha, beta);
    }
  }
}

/// c [m, n] = alpha op(a) op(b) + beta c for n, k <= kSmallGemmMaxNK (any m), float32.
template <class V>
void small_gemm_kernel(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                       const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                       std::int64_t ldc, float alpha, float beta) {
  constexpr std::int64_t W = V::kWidth;
  // op(b) as k rows of whole vectors (zero past n), unless b already is one: row-major with
  // n a multiple of the width. Then every load of the inner loop is a full vector.
  alignas(64) float packed[kSmallGemmMaxNK * (kSmallGemmMaxNK + 16)];
  const float* bp = b;
  std::int64_t ldp = ldb;
  if (tb || n % W != 0) {
    ldp = (n + W - 1) / W * W;
    if (tb) {
      // b's rows are op(b)'s columns: read each once, in order.
      for (std::int64_t j = 0; j < n; ++j) {
        const float* col = b + j * ldb;
        for (std::int64_t p = 0; p < k; ++p) packed[p * ldp + j] = col[p];
      }
    } else {
      for (std::int64_t p = 0; p < k; ++p)
        std::copy(b + p * ldb, b + p * ldb + n, packed + p * ldp);
    }
    for (std::int64_t p = 0; p < k; ++p)
      std::fill(packed + p * ldp + n, packed + (p + 1) * ldp, 0.0f);
    bp = packed;
  }
  const std::int64_t step_i = ta ? 1 : lda;
  constexpr int R = kSmallGemmRows<V>;
  std::int64_t i = 0;
  for (; i + R <= m; i += R)
    small_gemm_rows<V, R>(ta, n, k, a + i * step_i, lda, bp, ldp, c + i * ldc, ldc, alpha, beta);
  if (i < m) {
    small_gemm_last_rows<V, R - 1>(static_cast<int>(m - i), ta, n, k, a + i * step_i, lda, bp, ldp,
                                   c + i * ldc, ldc, alpha, beta);
  }
}

}  // namespace
}  // namespace minigrad::detail::simd
