// The GEMM kernels (kernels/gemm.h): OpenBLAS for float and double products above kSmallGemm
// multiply-adds, a loop for smaller ones and for int64.
//
// Note [GEMM without copies]
// A matrix operand is passed to cblas_?gemm as it lies in memory: row-major strides go in as
// NoTrans with lda = row stride, column-major strides (a transposed view, k.transpose(-2, -1))
// as Trans with lda = column stride. Only an operand that is neither (a stride-0 expanded matrix,
// a permuted batch with gaps inside the matrix) is made contiguous first, by matmul.
#include "kernels/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/simd.h"
#include "kernels/wrapping.h"
#include "minigrad/parallel.h"
#include "parallel.h"

namespace minigrad::detail {

BlasLayout blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t sr, std::int64_t sc) {
  std::int64_t min_ld_row = std::max<std::int64_t>(1, cols);
  if ((cols == 1 || sc == 1) && (rows == 1 || sr >= min_ld_row))
    return {true, false, rows == 1 ? min_ld_row : sr};
  std::int64_t min_ld_col = std::max<std::int64_t>(1, rows);
  if ((rows == 1 || sr == 1) && (cols == 1 || sc >= min_ld_col))
    return {true, true, cols == 1 ? min_ld_col : sc};
  return {};
}

namespace {

/// c = alpha a b + beta c with a plain loop: integer matmul (BLAS has no integer GEMM) and tiny
/// float products. The same order as BLAS: the product, times alpha, plus beta c.
template <typename T>
void gemm_loop(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
               std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, T alpha,
               T beta) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (std::int64_t p = 0; p < k; ++p)
        acc = wrapping_add(acc, wrapping_mul(a[ta ? p * lda + i : i * lda + p],
                                             b[tb ? j * ldb + p : p * ldb + j]));
      if (alpha != T(1)) acc = wrapping_mul(alpha, acc);
      T& out = c[i * ldc + j];
      // beta 0 does not read c: it may hold garbage or NaN (BLAS's rule).
      out = beta == T(0) ? acc : wrapping_add(acc, beta == T(1) ? out : wrapping_mul(beta, out));
    }
}

// NOTE: OpenBLAS's set-up per call (argument checks, buffer and thread set-up) costs many times
// what a 4x4 product takes in a loop. Products of at most kSmallGemm
// multiply-adds (8x8x8) run in the loop: the lesson's 4-word attention is all such products.
constexpr std::int64_t kSmallGemm = 512;

// Note [Panel GEMM]
// A float32 product onto at most 64 columns (n <= 64) runs in minigrad's own kernel
// (gemm_simd_impl.h, AVX2 / AVX-512 through the kernel table), not in OpenBLAS, when k is at most
// 64 (any m and layout) or m is at least 64 (and a and b are not both transposed). Attention's
// per-head products ([24, 16] x [16, 24] for each of tiny_lm's 128 batch-heads) are too small for
// OpenBLAS's set-up per call (the NOTE above) and its packing; a product onto 64 columns ([8192,
// 512] x [512, 64], a head's projection) spends a quarter of its time in OpenBLAS copying a, which
// it then uses for only 64 columns. The kernel does not copy a row-major a: it keeps a block of 4
// (AVX-512) or 6 (AVX2) rows x 4 or 2 vectors of c in registers over a block of 256 k,
// broadcasting a straight from its rows, one FMA per element and k step, in k order. op(b) is
// packed per block of k into panels of whole vectors (zero past n) that stay in L2; a transposed
// a is copied a strip of whole cache lines at a time. `build/bench/gemm_sweep` measures it with
// cold caches against OpenBLAS 0.3.21 over n in {16, 50, 64}, m in {64, 200, 2048}, k in {100,
// 512, 3000} and three layouts (docs/performance.md, "Kernels alone"): faster than OpenBLAS as a
// geometric mean at both levels, against both its Cooperlake and its Haswell kernels
// (OPENBLAS_CORETYPE=Haswell, what an AVX2-only CPU runs), though not on every shape. Where it
// measured slower as a rule (fewer rows: the packing of op(b) is not paid back; both operands
// transposed) OpenBLAS keeps the product; above 64 columns, Note [Wide GEMM routing]. Products with
// n and k of at most 64 keep the kernel they had before the blocked one (small_gemm_kernel). The
// results differ from OpenBLAS's by rounding (another summation order), and are the same on every
// thread count: an element's sum does not depend on which rows or columns share its block.
// Products of at most kSmallGemm multiply-adds keep the loop above; off x86-64 or without AVX2
// everything goes to OpenBLAS.

// Note [GEMM on threads]
// OpenBLAS runs on one thread (set_num_threads keeps it there) and minigrad's pool does the
// splitting, so one set of threads serves every op: OpenBLAS's own workers spin after each call
// and took the core from minigrad's kernels (the tiny_lm step was slower on 2 threads than on 1).
// A batch of matrices is split by matrices; a single large product by blocks of kGemmRowAlign
// rows of c, so that OpenBLAS's micro-kernels cover the same rows as on one thread and every
// element gets the same bits (a Linear's output and gradients: test_linear.cpp), even when that
// leaves the chunks uneven (64 rows: 48 and 16). Only a wide product of at most kGemmRowAlign
// rows is split by columns, aligned to 16: that agrees with one thread to rounding only
// (OpenBLAS blocks part of a product differently from the whole). A chunk holds at least
// kGemmChunkMNK multiply-adds, enough work to pay for handing it to a worker: every Linear of the
// tiny_lm step ([768, 64] x [64, 64] and up) splits. With chunks of 4M the step's smaller
// products stayed on one thread and the second thread gained less; 1M (with the grains of
// kGrainSize, LayerNorm and GELU lowered too) is what docs/performance.md's tiny_lm rows measure.
constexpr std::int64_t kGemmChunkMNK = 1 << 20;

// Note [Wide GEMM routing]
// A float32 product onto more than 64 columns runs in the blocked kernel of Note [Wide GEMM]
// (gemm_simd_impl.h) when it has at least kWideGemmRows rows and not both operands transposed;
// otherwise in OpenBLAS. `build/bench/gemm_sweep --wide` (one thread, cold caches; the table is in
// docs/performance.md, "Kernels alone") times GPT-2's thirteen products, attention's [512, 64] x
// [64, 512] and a 1024 cube at OpenBLAS 0.3.21's speed or better on the AVX-512 level (its
// Cooperlake kernels; the weight gradients, k = 256, gain most), and level within the noise on
// AVX2. With fewer rows the packing of op(b) is not paid back (a product of 1 or 4 rows is slower
// than in OpenBLAS), nor with both operands transposed.
constexpr std::int64_t kWideGemmRows = 48;

/// Whether a float32 product runs in minigrad's own kernels: Note [Panel GEMM] above, and
/// Note [Wide GEMM routing] for n above 64.
bool use_panel_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (n > 64) return m >= kWideGemmRows && !(ta && tb);
  if (k <= 64) return true;
  return m >= 64 && !(ta && tb);
}
// NOTE: measured with OpenBLAS 0.3.21 on AMD EPYC (it runs its Haswell kernels there): sgemm
// gives the whole product's bits for a split at multiples of 48 rows, in all four transpose
// layouts, and not at 16, 32 or 64 rows, nor at any column split tried; dgemm at any multiple of
// 16 rows. Another OpenBLAS or CPU may block differently: test_linear.cpp would tell.
constexpr std::int64_t kGemmRowAlign = 48;

/// Where a product runs: the loop, minigrad's kernel or BLAS. gemm_threaded decides it once for
/// the whole product and runs every chunk there, so that a chunk's rows get the bits they get on
/// one thread (a chunk of fewer rows than kWideGemmRows would otherwise go to OpenBLAS).
enum class Route { kLoop, kOurs, kBlas };

template <typename T>
Route route_of(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    // k 0 (beta c alone) takes the loop too: it reads no a or b.
    if (m * n * k <= kSmallGemm) return Route::kLoop;
    // Our own kernel where it measured faster (Note [Panel GEMM], Note [Wide GEMM routing]).
    if constexpr (std::is_same_v<T, float>) {
      if (use_panel_gemm(ta, tb, m, n, k) && simd::kernels_f32() != nullptr) return Route::kOurs;
    }
    return Route::kBlas;
  } else {
    return Route::kLoop;
  }
}

template <typename T>
void gemm_via(Route route, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k,
              const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc,
              T alpha, T beta) {
  if (route == Route::kLoop)
    return gemm_loop<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta);
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto tA = ta ? CblasTrans : CblasNoTrans;
    auto tB = tb ? CblasTrans : CblasNoTrans;
    auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
    if constexpr (std::is_same_v<T, float>) {
      if (route == Route::kOurs) {
        simd::kernels_f32()->gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta);
        return;
      }
      cblas_sgemm(CblasRowMajor, tA, tB, M, N, K, alpha, a, static_cast<blasint>(lda), b,
                  static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
    } else {
      cblas_dgemm(CblasRowMajor, tA, tB, M, N, K, alpha, a, static_cast<blasint>(lda), b,
                  static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
    }
  }
}

}  // namespace

template <typename T>
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, T alpha, T beta) {
  gemm_via<T>(route_of<T>(ta, tb, m, n, k), ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta);
}

template <typename T>
void gemm_threaded(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                   std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, T alpha,
                   T beta) {
  // One chunk's worth (k 0 included: the grains below divide by it) runs here.
  const Route route = route_of<T>(ta, tb, m, n, k);
  if (m * n * k <= kGemmChunkMNK) {
    gemm_via<T>(route, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, alpha, beta);
  } else if (m >= n || m > kGemmRowAlign) {
    parallel_for(
        0, m, std::max<std::int64_t>(1, kGemmChunkMNK / (n * k)),
        [&](std::int64_t r0, std::int64_t r1) {
          gemm_via<T>(route, ta, tb, r1 - r0, n, k, ta ? a + r0 : a + r0 * lda, lda, b, ldb,
                      c + r0 * ldc, ldc, alpha, beta);
        },
        kGemmRowAlign);
  } else {
    parallel_for(
        0, n, std::max<std::int64_t>(1, kGemmChunkMNK / (m * k)),
        [&](std::int64_t c0, std::int64_t c1) {
          gemm_via<T>(route, ta, tb, m, c1 - c0, k, a, lda, tb ? b + c0 * ldb : b + c0, ldb, c + c0,
                      ldc, alpha, beta);
        },
        16);
  }
}

template <typename T>
void gemm_batched(const Shape& batch, std::int64_t M, std::int64_t N, std::int64_t K, const T* pa,
                  const Shape& sa, BlasLayout la, const T* pb, const Shape& sb, BlasLayout lb,
                  T* pc) {
  std::int64_t n_batch = 1;
  for (std::int64_t s : batch) n_batch *= s;
  if (M * N == 0) return;
  if (K == 0) {
    std::fill(pc, pc + n_batch * M * N, T(0));
    return;
  }
  // Matrices [mb, me) of the batch, in order.
  auto matrices = [&](std::int64_t mb, std::int64_t me) {
    std::vector<std::int64_t> idx(batch.size(), 0);
    std::int64_t oa = 0, ob = 0;
    for (auto d = static_cast<std::int64_t>(batch.size()) - 1, rest = mb; d >= 0; --d) {
      idx[d] = rest % batch[d];
      rest /= batch[d];
      oa += idx[d] * sa[d];
      ob += idx[d] * sb[d];
    }
    for (std::int64_t bi = mb; bi < me; ++bi) {
      gemm<T>(la.trans, lb.trans, M, N, K, pa + oa, la.ld, pb + ob, lb.ld, pc + bi * M * N, N);
      for (auto d = static_cast<std::int64_t>(batch.size()) - 1; d >= 0; --d) {
        oa += sa[d];
        ob += sb[d];
        if (++idx[d] < batch[d]) break;
        oa -= sa[d] * batch[d];
        ob -= sb[d] * batch[d];
        idx[d] = 0;
      }
    }
  };
  // Note [GEMM on threads]: split the batch when it has matrices enough for every thread, or
  // when each matrix is small; otherwise split each product.
  const std::int64_t mnk = M * N * K;
  if (n_batch >= 2 * get_num_threads() || (n_batch >= 2 && mnk <= kGemmChunkMNK)) {
    parallel_for(0, n_batch, std::max<std::int64_t>(1, kGemmChunkMNK / mnk), matrices);
  } else {
    for (std::int64_t bi = 0; bi < n_batch; ++bi) {
      std::int64_t oa = 0, ob = 0;
      for (auto d = static_cast<std::int64_t>(batch.size()) - 1, rest = bi; d >= 0; --d) {
        oa += rest % batch[d] * sa[d];
        ob += rest % batch[d] * sb[d];
        rest /= batch[d];
      }
      gemm_threaded<T>(la.trans, lb.trans, M, N, K, pa + oa, la.ld, pb + ob, lb.ld, pc + bi * M * N,
                       N);
    }
  }
}

#define MG_GEMM_INSTANTIATE(T)                                                                    \
  template void gemm<T>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const T*,           \
                        std::int64_t, const T*, std::int64_t, T*, std::int64_t, T, T);            \
  template void gemm_threaded<T>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const T*,  \
                                 std::int64_t, const T*, std::int64_t, T*, std::int64_t, T, T);   \
  template void gemm_batched<T>(const Shape&, std::int64_t, std::int64_t, std::int64_t, const T*, \
                                const Shape&, BlasLayout, const T*, const Shape&, BlasLayout, T*);
MG_GEMM_INSTANTIATE(float)
MG_GEMM_INSTANTIATE(double)
MG_GEMM_INSTANTIATE(std::int64_t)
#undef MG_GEMM_INSTANTIATE

}  // namespace minigrad::detail
