#pragma once
// Private: minigrad's own float32 GEMM (Note [Panel GEMM] in gemm.cpp) written once over
// V = Vec<A> of vec_math.h, compiled by softmax_avx2.cpp and softmax_avx512.cpp. Internal linkage
// only, as vec_math.h explains.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/simd.h"
#include "kernels/vec_math.h"

namespace minigrad::detail::simd {
namespace {

/// Rows of c per block and vectors of c per row in registers: R x C accumulators, enough
/// independent FMAs to hide their latency (2 per cycle, 4 cycles each), plus op(b)'s C vectors and
/// a broadcast of a, within the register file. AVX2: 6 x 2 (15 of 16 registers; 4 rows measured
/// slower). AVX-512: 4 x 4 (21 of 32; 4 x 2 measured slower on [8192, 512] x [512, 64]).
template <class V>
constexpr int kGemmRows = V::kWidth == 16 ? 4 : 6;
template <class V>
constexpr int kGemmVecs = V::kWidth == 16 ? 4 : 2;

/// Blocks of k and of n: a block of op(b) packed (at most kGemmKc x kGemmNc floats, 256 KiB) stays
/// in L2 while every row block of a runs over it, and a row block of a (R x kGemmKc) in L1.
constexpr std::int64_t kGemmKc = 256;
constexpr std::int64_t kGemmNc = 256;
/// Rows of a transposed a copied at a time: a few blocks of rows, whole cache lines of a.
template <class V>
constexpr std::int64_t kGemmStrip = 4 * kGemmRows<V>;

/// Rows [0, R) of c and its first C vectors: the sum over p < k of a(i, p) * bp(p, j) in
/// registers, one FMA per vector and p in p's order, then c = alpha acc + beta c. bp holds a panel
/// of op(b), row p at bp + p * ldp; the last vector holds only `last_cols` (1 .. W) columns.
template <class V, int R, int C>
void gemm_block(bool ta, std::int64_t k, const float* a, std::int64_t lda, const float* bp,
                std::int64_t ldp, float* c, std::int64_t ldc, std::int64_t last_cols, float alpha,
                float beta) {
  using Reg = typename V::Reg;
  constexpr std::int64_t W = V::kWidth;
  Reg acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < C; ++q) acc[r][q] = V::zero();
  // a(i, p): row-major a[i * lda + p], transposed a[p * lda + i].
  const std::int64_t step_i = ta ? 1 : lda, step_p = ta ? lda : 1;
  for (std::int64_t p = 0; p < k; ++p) {
    Reg bv[C];
    for (int q = 0; q < C; ++q) bv[q] = V::load(bp + p * ldp + q * W);
    for (int r = 0; r < R; ++r) {
      const Reg av = V::set1(a[r * step_i + p * step_p]);
      for (int q = 0; q < C; ++q) acc[r][q] = V::fmadd(av, bv[q], acc[r][q]);
    }
  }
  const Reg va = V::set1(alpha), vb = V::set1(beta);
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
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

/// R rows of c over one panel of `cols` (1 .. C W) columns: C vectors when they need C, else
/// fewer.
template <class V, int R, int C>
void gemm_panel(std::int64_t cols, bool ta, std::int64_t k, const float* a, std::int64_t lda,
                const float* bp, std::int64_t ldp, float* c, std::int64_t ldc, float alpha,
                float beta) {
  constexpr std::int64_t W = V::kWidth;
  if constexpr (C > 1) {
    if (cols <= (C - 1) * W)
      return gemm_panel<V, R, C - 1>(cols, ta, k, a, lda, bp, ldp, c, ldc, alpha, beta);
  }
  gemm_block<V, R, C>(ta, k, a, lda, bp, ldp, c, ldc, cols - (C - 1) * W, alpha, beta);
}

/// R rows of c, all n columns: panel q of op(b) (columns [q C W, (q + 1) C W)) at
/// bp + q * panel_stride, its rows ldp apart.
template <class V, int R, int C>
void gemm_rows(bool ta, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
               const float* bp, std::int64_t panel_stride, std::int64_t ldp, float* c,
               std::int64_t ldc, float alpha, float beta) {
  constexpr std::int64_t NC = C * V::kWidth;
  for (std::int64_t j0 = 0, q = 0; j0 < n; j0 += NC, ++q) {
    gemm_panel<V, R, C>(std::min(NC, n - j0), ta, k, a, lda, bp + q * panel_stride, ldp, c + j0,
                        ldc, alpha, beta);
  }
}

/// The last rows (fewer than a block): R rows when rows == R, else fewer.
template <class V, int R, int C>
void gemm_last_rows(int rows, bool ta, std::int64_t n, std::int64_t k, const float* a,
                    std::int64_t lda, const float* bp, std::int64_t panel_stride, std::int64_t ldp,
                    float* c, std::int64_t ldc, float alpha, float beta) {
  if constexpr (R > 0) {
    if (rows == R) {
      gemm_rows<V, R, C>(ta, n, k, a, lda, bp, panel_stride, ldp, c, ldc, alpha, beta);
    } else {
      gemm_last_rows<V, R - 1, C>(rows, ta, n, k, a, lda, bp, panel_stride, ldp, c, ldc, alpha,
                                  beta);
    }
  }
}

/// This thread's buffer `which` (0: op(b)'s packed block, 1: a strip of a transposed a) of at
/// least n floats: grown once, then reused.
inline float* grown_buffer(int which, std::int64_t n) {
  thread_local std::vector<float> buffers[2];
  std::vector<float>& buf = buffers[which];
  if (static_cast<std::int64_t>(buf.size()) < n) buf.resize(static_cast<std::size_t>(n));
  return buf.data();
}

/// All m rows of op(a) (a strip of a transposed a, or a copy of one), R at a time, then the
/// last few, over panels of C vectors.
template <class V, int C>
void gemm_strip(bool ta, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                std::int64_t lda, const float* bp, std::int64_t panel_stride, std::int64_t ldp,
                float* c, std::int64_t ldc, float alpha, float beta) {
  constexpr int R = kGemmRows<V>;
  const std::int64_t step_i = ta ? 1 : lda;
  std::int64_t i = 0;
  for (; i + R <= m; i += R)
    gemm_rows<V, R, C>(ta, n, k, a + i * step_i, lda, bp, panel_stride, ldp, c + i * ldc, ldc,
                       alpha, beta);
  if (i < m) {
    gemm_last_rows<V, R - 1, C>(static_cast<int>(m - i), ta, n, k, a + i * step_i, lda, bp,
                                panel_stride, ldp, c + i * ldc, ldc, alpha, beta);
  }
}

// ---------------------------------------------------------------- n and k of at most 64
// The small path, as it was before the blocked one below existed: sharing the block function
// with the blocked path, GCC compiled it measurably slower on a [24, 16] x [16, 24] product (its
// inlining changed), so it keeps its own (Note [Panel GEMM]).

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

/// c [m, n] = alpha op(a) op(b) + beta c for n, k <= 64 (any m), float32: 4 (AVX-512) or 6
/// (AVX2) rows x 2 vectors a block (6 and 8 rows measured slower on AVX-512 at 24x24x16).
template <class V>
void small_gemm_kernel(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
                       const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                       std::int64_t ldc, float alpha, float beta) {
  constexpr std::int64_t W = V::kWidth;
  // op(b) as k rows of whole vectors (zero past n), unless b already is one: row-major with
  // n a multiple of the width. Then every load of the inner loop is a full vector.
  alignas(64) float packed[64 * (64 + 16)];
  const float* bp = b;
  std::int64_t ldp = ldb;
  if (tb || n % W != 0) {
    ldp = (n + W - 1) / W * W;
    if (tb) {
      // b's rows are op(b)'s columns: squares of W x W through V::transpose where whole, the
      // rest one value at a time, each row of b read once, in order (scalar, the packing took
      // as long as a [64, 64] x [64, 64] product's arithmetic: attention's scores and their
      // gradient).
      using Reg = typename V::Reg;
      const std::int64_t n_sq = n / W * W, k_sq = k / W * W;
      for (std::int64_t j0 = 0; j0 < n_sq; j0 += W) {
        for (std::int64_t p0 = 0; p0 < k_sq; p0 += W) {
          Reg t[W];
          for (std::int64_t i = 0; i < W; ++i) t[i] = V::load(b + (j0 + i) * ldb + p0);
          V::transpose(t);
          for (std::int64_t x = 0; x < W; ++x) V::store(packed + (p0 + x) * ldp + j0, t[x]);
        }
      }
      for (std::int64_t j = 0; j < n; ++j) {
        const float* col = b + j * ldb;
        for (std::int64_t p = j < n_sq ? k_sq : 0; p < k; ++p) packed[p * ldp + j] = col[p];
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
  constexpr int R = kGemmRows<V>;
  std::int64_t i = 0;
  for (; i + R <= m; i += R)
    small_gemm_rows<V, R>(ta, n, k, a + i * step_i, lda, bp, ldp, c + i * ldc, ldc, alpha, beta);
  if (i < m) {
    small_gemm_last_rows<V, R - 1>(static_cast<int>(m - i), ta, n, k, a + i * step_i, lda, bp, ldp,
                                   c + i * ldc, ldc, alpha, beta);
  }
}

// ---------------------------------------------------------------- n above 64
// Note [Wide GEMM]
// The blocked product of the BLAS libraries (Goto and van de Geijn, "Anatomy of
// high-performance matrix multiplication", 2008), for products onto more than 64 columns. Per
// block of kWideNc columns and kWideKc of k, op(b) is packed into panels of NR = 2 vectors of
// columns, each kc rows of whole vectors (zero past n); per block of kWideMc rows, op(a) into
// panels of R rows, each kc groups of R values side by side (zero past m). A tile of R x NR of c
// is then a sum over kc of one broadcast of a and two vector loads of b per row and step, into
// R x 2 registers, one FMA per element and step in k's order; the first block of k stores
// alpha acc + beta c, the later ones add alpha acc. The lines of the tile of c are prefetched as
// the tile starts, and the next block of op(b) where it lies in b a few lines before each tile
// (GPT-2's weights come from memory, and its products measured faster with it). A
// transposed operand (a row-major a, a transposed b: k runs along their rows) is packed a square of
// kWidth x kWidth at a time through V::transpose. Sizes: R = 8 (AVX-512) or 6 (AVX2) rows, so 16 or
// 12 accumulators; a panel of b (256 x 32 floats at AVX-512) is reused by every row panel of a
// block of a (192 x 256 floats, in L2). An element gets the same operations, so the same bits, as
// in the panel and small kernels above (blocks of k of the same size): how a product is split
// across threads by rows or columns does not change its bits (tests/core/test_vec_math.cpp,
// GemmOnTwoThreadsHasTheBitsOfOne).

template <class V>
constexpr int kWideRows = V::kWidth == 16 ? 8 : 6;
/// Vectors of c per row of a tile. At AVX2, 4 rows x 3 vectors measured the same within noise
/// and 8 x 1 slower (too few independent accumulators).
constexpr int kWideVecs = 2;
constexpr std::int64_t kWideKc = 256;
static_assert(kWideKc == kGemmKc, "the kernels sum k in the same blocks (Note [Wide GEMM])");
constexpr std::int64_t kWideMc = 192;  // a multiple of both R
constexpr std::int64_t kWideNc = 768;  // a multiple of both NR

/// This thread's buffer `which` of at least n floats, 64-byte aligned (packed panels are read
/// with whole-vector loads: a panel across cache lines costs a split load per vector).
inline float* aligned_buffer(int which, std::int64_t n) {
  float* p = grown_buffer(which, n + 16);
  const auto misalign = reinterpret_cast<std::uintptr_t>(p) % 64;
  return misalign == 0 ? p : p + (64 - misalign) / sizeof(float);
}

/// op(a)[0 : mc, 0 : kc] as panels of R rows: panel i at ap + i R kc, its step p at p R. Writes
/// up to kWidth floats past the last panel (the buffer has room).
template <class V>
void wide_pack_a(bool ta, std::int64_t mc, std::int64_t kc, const float* a, std::int64_t lda,
                 float* ap) {
  using Reg = typename V::Reg;
  constexpr int R = kWideRows<V>;
  constexpr std::int64_t W = V::kWidth;
  for (std::int64_t i0 = 0; i0 < mc; i0 += R) {
    const int rows = static_cast<int>(std::min<std::int64_t>(R, mc - i0));
    float* dst = ap + i0 * kc;
    std::int64_t p = 0;
    if (!ta && rows == R) {
      // k runs along a's rows: W steps of R rows at a time, transposed. Each store writes W
      // values of which the first R are step p + x's; the rest is overwritten by the next ones.
      for (; p + W <= kc; p += W) {
        Reg t[W];
        for (int r = 0; r < R; ++r) t[r] = V::load(a + (i0 + r) * lda + p);
        for (std::int64_t r = R; r < W; ++r) t[r] = V::zero();
        V::transpose(t);
        for (std::int64_t x = 0; x < W; ++x) V::store(dst + (p + x) * R, t[x]);
      }
    }
    for (; p < kc; ++p) {
      for (int r = 0; r < rows; ++r)
        dst[p * R + r] = ta ? a[p * lda + i0 + r] : a[(i0 + r) * lda + p];
      for (int r = rows; r < R; ++r) dst[p * R + r] = 0.0f;
    }
  }
}

/// op(b)[0 : kc, 0 : nc] as panels of NR = 2 W columns: panel q at bp + q NR kc, its row p at
/// p NR.
template <class V>
void wide_pack_b(bool tb, std::int64_t kc, std::int64_t nc, const float* b, std::int64_t ldb,
                 float* bp) {
  using Reg = typename V::Reg;
  constexpr std::int64_t W = V::kWidth, NR = kWideVecs * W;
  for (std::int64_t j0 = 0; j0 < nc; j0 += NR) {
    const std::int64_t cols = std::min(NR, nc - j0);
    float* dst = bp + j0 * kc;
    if (!tb) {
      for (std::int64_t p = 0; p < kc; ++p) {
        const float* row = b + p * ldb + j0;
        for (std::int64_t q = 0; q < kWideVecs; ++q) {
          const std::int64_t w = cols - q * W;
          const Reg v = w >= W  ? V::load(row + q * W)
                        : w > 0 ? V::load_partial(row + q * W, V::tail_mask(w), V::zero())
                                : V::zero();
          V::store(dst + p * NR + q * W, v);
        }
      }
      continue;
    }
    std::int64_t p = 0;
    if (cols == NR) {
      // b's rows are op(b)'s columns: squares of W columns x W steps, transposed.
      for (; p + W <= kc; p += W) {
        for (std::int64_t q = 0; q < kWideVecs; ++q) {
          Reg t[W];
          for (std::int64_t i = 0; i < W; ++i) t[i] = V::load(b + (j0 + q * W + i) * ldb + p);
          V::transpose(t);
          for (std::int64_t x = 0; x < W; ++x) V::store(dst + (p + x) * NR + q * W, t[x]);
        }
      }
    }
    for (std::int64_t j = 0; j < NR; ++j) {
      if (j >= cols) {
        for (std::int64_t s = p; s < kc; ++s) dst[s * NR + j] = 0.0f;
        continue;
      }
      const float* col = b + (j0 + j) * ldb;
      for (std::int64_t s = p; s < kc; ++s) dst[s * NR + j] = col[s];
    }
  }
}

/// One tile: rows [0, rows) and columns [0, cols) of c (rows <= R, cols <= NR) from a panel of
/// op(a) and one of op(b) over kc steps; c = alpha acc + beta c (beta 0 does not read c).
template <class V>
void wide_tile(std::int64_t kc, const float* ap, const float* bp, float* c, std::int64_t ldc,
               int rows, std::int64_t cols, float alpha, float beta) {
  using Reg = typename V::Reg;
  constexpr int R = kWideRows<V>;
  constexpr std::int64_t W = V::kWidth, NR = kWideVecs * W;
  for (int r = 0; r < rows; ++r) {
    __builtin_prefetch(c + r * ldc);
    __builtin_prefetch(c + r * ldc + W);
    __builtin_prefetch(c + r * ldc + NR - 1);
  }
  constexpr int Q = kWideVecs;
  Reg acc[R][Q];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < Q; ++q) acc[r][q] = V::zero();
  for (std::int64_t p = 0; p < kc; ++p) {
    Reg bv[Q];
    for (int q = 0; q < Q; ++q) bv[q] = V::load(bp + p * NR + q * W);
    for (int r = 0; r < R; ++r) {
      const Reg av = V::set1(ap[p * R + r]);
      for (int q = 0; q < Q; ++q) acc[r][q] = V::fmadd(av, bv[q], acc[r][q]);
    }
  }
  const Reg va = V::set1(alpha), vb = V::set1(beta);
  for (int r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    for (std::int64_t q = 0; q < kWideVecs; ++q) {
      const std::int64_t w = cols - q * W;
      if (w <= 0) break;
      Reg v = alpha == 1.0f ? acc[r][q] : V::mul(va, acc[r][q]);
      if (beta != 0.0f) {
        const Reg old = w >= W ? V::load(row + q * W)
                               : V::load_partial(row + q * W, V::tail_mask(w), V::zero());
        v = V::add(v, beta == 1.0f ? old : V::mul(vb, old));
      }
      if (w >= W) {
        V::store(row + q * W, v);
      } else {
        V::store_partial(row + q * W, V::tail_mask(w), v);
      }
    }
  }
}

/// c [m, n] = alpha op(a) op(b) + beta c, float32, any m, n, k (Note [Wide GEMM]).
template <class V>
void wide_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
               std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
               float alpha, float beta) {
  constexpr int R = kWideRows<V>;
  constexpr std::int64_t W = V::kWidth, NR = kWideVecs * W;
  float* const bp = aligned_buffer(0, kWideKc * kWideNc);
  float* const ap = aligned_buffer(1, kWideKc * (kWideMc + R) + W);
  for (std::int64_t j0 = 0; j0 < n; j0 += kWideNc) {
    const std::int64_t nc = std::min(kWideNc, n - j0);
    // k 0: one pass with no terms, c = beta c.
    for (std::int64_t p0 = 0; p0 < std::max<std::int64_t>(k, 1); p0 += kWideKc) {
      const std::int64_t kc = std::min(kWideKc, k - p0);
      wide_pack_b<V>(tb, kc, nc, tb ? b + j0 * ldb + p0 : b + p0 * ldb + j0, ldb, bp);
      const float bt = p0 == 0 ? beta : 1.0f;
      // The next block of op(b) as it lies in b (the next block of k, else of n), one cache line
      // at a time, spread over this block's tiles: its packing then reads from cache, not memory.
      std::int64_t np0 = p0 + kWideKc, nj0 = j0;
      if (np0 >= k) {
        np0 = 0;
        nj0 = j0 + kWideNc;
      }
      const std::int64_t nkc = nj0 < n ? std::min(kWideKc, k - np0) : 0;
      const std::int64_t nnc = nj0 < n ? std::min(kWideNc, n - nj0) : 0;
      const std::int64_t row_len = tb ? nkc : nnc, line_floats = 64 / sizeof(float);
      const std::int64_t lines_per_row = (row_len + line_floats - 1) / line_floats;
      const std::int64_t lines = (tb ? nnc : nkc) * lines_per_row;
      const float* next_b = lines == 0 ? b : tb ? b + nj0 * ldb + np0 : b + np0 * ldb + nj0;
      const std::int64_t tiles = (m + R - 1) / R * ((nc + NR - 1) / NR);
      const std::int64_t lines_per_tile = tiles > 0 ? (lines + tiles - 1) / tiles : 0;
      std::int64_t line = 0;
      for (std::int64_t i0 = 0; i0 < m; i0 += kWideMc) {
        const std::int64_t mc = std::min(kWideMc, m - i0);
        wide_pack_a<V>(ta, mc, kc, ta ? a + p0 * lda + i0 : a + i0 * lda + p0, lda, ap);
        for (std::int64_t jr = 0; jr < nc; jr += NR) {
          for (std::int64_t ir = 0; ir < mc; ir += R) {
            for (std::int64_t e = 0; e < lines_per_tile && line < lines; ++e, ++line) {
              __builtin_prefetch(next_b + line / lines_per_row * ldb +
                                 std::min(line % lines_per_row * line_floats, row_len - 1));
            }
            wide_tile<V>(kc, ap + ir * kc, bp + jr * kc, c + (i0 + ir) * ldc + j0 + jr, ldc,
                         static_cast<int>(std::min<std::int64_t>(R, mc - ir)),
                         std::min(NR, nc - jr), alpha, bt);
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------- any m, n, k

/// c [m, n] = alpha op(a) op(b) + beta c, float32, any m, n, k (Note [Panel GEMM] in gemm.cpp).
template <class V>
void gemm_kernel(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                 std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
                 float alpha, float beta) {
  if (n <= 64 && k <= 64)
    return small_gemm_kernel<V>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta);
  if (n > 64) return wide_gemm<V>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta);
  constexpr std::int64_t W = V::kWidth;
  constexpr int C = kGemmVecs<V>;
  constexpr std::int64_t NC = C * W;
  const std::int64_t step_p = ta ? lda : 1;
  for (std::int64_t j0 = 0; j0 < n; j0 += kGemmNc) {
    const std::int64_t nc = std::min(kGemmNc, n - j0);
    // k 0: one pass with no terms, c = beta c.
    for (std::int64_t p0 = 0; p0 < std::max<std::int64_t>(k, 1); p0 += kGemmKc) {
      const std::int64_t kc = std::min(kGemmKc, k - p0);
      // op(b)[p0 : p0 + kc, j0 : j0 + nc] as panels of NC columns, each kc rows of whole
      // vectors (zero past nc), one after the other: the inner loop reads a panel in order.
      // A single panel that b already is (row-major, whole vectors) is read where it lies.
      const float* bp = b + p0 * ldb + j0;
      std::int64_t ldp = ldb, panel_stride = 0;
      if (tb || nc > NC || nc % W != 0) {
        ldp = std::min(NC, (nc + W - 1) / W * W);
        panel_stride = kc * ldp;
        const std::int64_t panels = (nc + NC - 1) / NC;
        float* dst = grown_buffer(0, panels * panel_stride);
        for (std::int64_t q = 0; q < panels; ++q) {
          float* panel = dst + q * panel_stride;
          const std::int64_t c0 = q * NC, w = std::min(NC, nc - c0);
          if (tb) {
            // b's rows are op(b)'s columns: 8 of them at a time, read in order, each p's 8 values
            // written side by side (column by column measured slower).
            std::int64_t j = 0;
            for (; j + 8 <= w; j += 8) {
              const float* col = b + (j0 + c0 + j) * ldb + p0;
              for (std::int64_t p = 0; p < kc; ++p)
                for (std::int64_t u = 0; u < 8; ++u) panel[p * ldp + j + u] = col[u * ldb + p];
            }
            for (; j < w; ++j) {
              const float* col = b + (j0 + c0 + j) * ldb + p0;
              for (std::int64_t p = 0; p < kc; ++p) panel[p * ldp + j] = col[p];
            }
          } else {
            for (std::int64_t p = 0; p < kc; ++p) {
              const float* row = b + (p0 + p) * ldb + j0 + c0;
              std::copy(row, row + w, panel + p * ldp);
            }
          }
          for (std::int64_t p = 0; p < kc; ++p)
            std::fill(panel + p * ldp + w, panel + (p + 1) * ldp, 0.0f);
        }
        bp = dst;
      }
      // The first block of k applies beta; the later ones add to what it stored.
      const float bt = p0 == 0 ? beta : 1.0f;
      const float* ak = a + p0 * step_p;
      float* cj = c + j0;
      // A transposed a: its rows i .. i + R at one p are a few floats of one cache line, and the
      // next p is lda floats away. Unless a is small, copy a strip of kGemmStrip rows (whole
      // lines) over this block of k once, then run its row blocks from the copy (measured faster at
      // [512, 512]^T x [512, 64]).
      constexpr std::int64_t S = kGemmStrip<V>;
      if (!ta || m * kc <= 64 * 64) {
        gemm_strip<V, C>(ta, m, nc, kc, ak, lda, bp, panel_stride, ldp, cj, ldc, alpha, bt);
        continue;
      }
      float* const strip = grown_buffer(1, S * kc);
      for (std::int64_t i0 = 0; i0 < m; i0 += S) {
        const std::int64_t rows = std::min(S, m - i0);
        float* dst = strip;
        if (rows == S && S % W == 0) {
          for (std::int64_t p = 0; p < kc; ++p)
            for (std::int64_t q = 0; q < S; q += W)
              V::store(dst + p * S + q, V::load(ak + p * lda + i0 + q));
        } else {
          for (std::int64_t p = 0; p < kc; ++p)
            for (std::int64_t r = 0; r < rows; ++r) dst[p * S + r] = ak[p * lda + i0 + r];
        }
        gemm_strip<V, C>(true, rows, nc, kc, strip, S, bp, panel_stride, ldp, cj + i0 * ldc, ldc,
                         alpha, bt);
      }
    }
  }
}

}  // namespace
}  // namespace minigrad::detail::simd
