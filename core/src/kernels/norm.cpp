// layer_norm's forward and fused backward kernels (kernels/norm.h).
//
// Note [Layer norm kernels]
// Forward: two passes over each row in double, the sum (then the mean) and the sum of squared
// deviations from it (then the biased variance). Unlike a running E[x^2] - E[x]^2 this does not
// cancel on rows of 1e4 + small values, and unlike Welford's one-pass update it has no division
// per element and no loop-carried dependency through one: each sum runs in kLanes independent
// lanes, so the loops vectorise (plain x86-64, SSE2: two doubles a register).
//
// Backward (ops/nn.cpp, without create_graph): per row, x_hat is rebuilt in double from the saved
// statistics, and the two row sums of grad_x (sum g_hat, sum g_hat * x_hat) are taken in double
// (PyTorch 1.13 sums float32 rows in float; double keeps float32's gradients within float32
// rounding of float64's). grad_w and grad_b are summed over rows into weight-shaped [n] results,
// not returned as output-shaped products for the engine to sum (Note [The engine]). One loop
// converts and multiplies, adding into the column sums and writing g_hat and g_hat * x_hat to a
// row buffer; the row sums of that buffer run in lanes in loops of their own: with the lanes in
// the first loop GCC 12 kept it scalar (callgrind, a [768, 64] float32 backward: 1.33M
// instructions, 0.97M split so).
//
// float32 rows on AVX2 / AVX-512 CPUs run norm_simd_impl.h instead (norm_avx2.cpp,
// norm_avx512.cpp, picked at the level kernels_f32() runs, Note [Runtime SIMD dispatch] in
// simd.h): the same operations in double vectors of 8, element j of a group in lane j mod 8 (the
// lanes above), so the same sums, and every other operation the same one in the same order; those
// files are compiled with -ffp-contract=off, as this one is for plain x86-64 (no FMA to fuse
// into), so the results are the same bits (tests/core/test_kernels.cpp compares every level).
// Each row is widened to double once, and w and b once per chunk: widening is two µops on AVX-512
// and the loops above widen x three times (GPT-2's and tiny_lm's rows on both levels:
// docs/performance.md, "Kernels alone"). What is left is the chain of one add per 8 elements in
// each sum: more lanes (or rows in lockstep, tried before the widening once) would break it, at
// the price of new bits.
//
// Threads: rows are cut into fixed chunks of about kChunkElems elements, whatever the thread
// count. A forward row or a grad_x row only depends on its own row. The sums over rows are taken
// per chunk, rows in order, into the chunk's own double buffer, and the chunks' buffers are then
// added in chunk order on the calling thread: the same bits on 1 or 8 threads. kChunkElems, a
// quarter of kGrainSize (a chunk costs a few double operations per element), cuts one call of
// tiny_lm (768 rows of 64) into 6 chunks of 128 rows, 3 per thread on 2 threads.
#include "kernels/norm.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "kernels/norm_simd.h"
#include "kernels/simd.h"
#include "parallel.h"

namespace minigrad::detail {

namespace {

constexpr int kLanes = 8;
constexpr std::int64_t kChunkElems = kGrainSize / 4;

/// Rows in one chunk of rows of n elements (Note [Layer norm kernels]).
std::int64_t chunk_rows(std::int64_t n) {
  return std::max<std::int64_t>(1, kChunkElems / std::max<std::int64_t>(n, 1));
}

double add_lanes(const double (&s)[kLanes]) {
  double r = 0;
  for (double v : s) r += v;
  return r;
}

/// Sum of n contiguous doubles in kLanes independent lanes (the loop vectorises).
double sum_lanes(const double* v, std::int64_t n) {
  double s[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) s[l] += v[j + l];
  for (; j < n; ++j) s[0] += v[j];
  return add_lanes(s);
}

/// layer_norm forward of rows [r0, r1). kContig fixes the column stride at 1 so that the compiler
/// sees contiguous loads (the strided form is for tests and callers that pass views).
template <typename T, bool kContig>
void forward_rows(const T* x, std::int64_t x_row_stride, std::int64_t x_col_stride, const T* w,
                  const T* b, std::int64_t r0, std::int64_t r1, std::int64_t n, double eps, T* out,
                  double* mean_out, double* rstd_out) {
  const std::int64_t cs = kContig ? 1 : x_col_stride;
  for (std::int64_t r = r0; r < r1; ++r) {
    const T* row = x + r * x_row_stride;
    T* orow = out + r * n;
    double s[kLanes] = {};
    std::int64_t j = 0;
    for (; j + kLanes <= n; j += kLanes)
      for (int l = 0; l < kLanes; ++l) s[l] += static_cast<double>(row[(j + l) * cs]);
    for (; j < n; ++j) s[0] += static_cast<double>(row[j * cs]);
    // NOTE: an empty row gets mean 0 and rstd 1 / sqrt(eps), not NaN.
    const double mean = n > 0 ? add_lanes(s) / static_cast<double>(n) : 0.0;
    double q[kLanes] = {};
    for (j = 0; j + kLanes <= n; j += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        double d = static_cast<double>(row[(j + l) * cs]) - mean;
        q[l] += d * d;
      }
    }
    for (; j < n; ++j) {
      double d = static_cast<double>(row[j * cs]) - mean;
      q[0] += d * d;
    }
    const double var = n > 0 ? add_lanes(q) / static_cast<double>(n) : 0.0;
    const double rstd = 1.0 / std::sqrt(var + eps);
    mean_out[r] = mean;
    rstd_out[r] = rstd;
    // One loop per affine case, so that none tests w or b per element.
    if (w && b) {
      for (j = 0; j < n; ++j)
        orow[j] = static_cast<T>((static_cast<double>(row[j * cs]) - mean) * rstd *
                                     static_cast<double>(w[j]) +
                                 static_cast<double>(b[j]));
    } else if (w) {
      for (j = 0; j < n; ++j)
        orow[j] = static_cast<T>((static_cast<double>(row[j * cs]) - mean) * rstd *
                                 static_cast<double>(w[j]));
    } else if (b) {
      for (j = 0; j < n; ++j)
        orow[j] = static_cast<T>((static_cast<double>(row[j * cs]) - mean) * rstd +
                                 static_cast<double>(b[j]));
    } else {
      for (j = 0; j < n; ++j)
        orow[j] = static_cast<T>((static_cast<double>(row[j * cs]) - mean) * rstd);
    }
  }
}

/// layer_norm backward of rows [r0, r1): grad_x's rows (if grad_x) and, when kSums, the rows'
/// g * x_hat and g added into pw[0, n) and pb[0, n). kWeight (w is not null) and kSums are
/// template arguments so that no loop tests them per element (the compiler then vectorises them).
template <typename T, bool kWeight, bool kSums>
void backward_rows(const T* g, const T* x, const double* mean, const double* rstd, const T* w,
                   std::int64_t r0, std::int64_t r1, std::int64_t n, T* grad_x,
                   double* __restrict pw, double* __restrict pb) {
  const double inv_n = 1.0 / static_cast<double>(n);
  // g_hat and g_hat * x_hat of one row, then summed by sum_lanes (Note [Layer norm kernels]).
  std::vector<double> buf(grad_x ? static_cast<std::size_t>(2 * n) : 0);
  double* __restrict gh = buf.data();
  double* __restrict ghx = gh + n;
  for (std::int64_t r = r0; r < r1; ++r) {
    const T* gr = g + r * n;
    const T* xr = x + r * n;
    const double m = mean[r], rs = rstd[r];
    if (!grad_x) {
      if constexpr (kSums) {
        for (std::int64_t j = 0; j < n; ++j) {
          const double gj = static_cast<double>(gr[j]);
          pw[j] += gj * ((static_cast<double>(xr[j]) - m) * rs);
          pb[j] += gj;
        }
      }
      continue;
    }
    for (std::int64_t j = 0; j < n; ++j) {
      const double gj = static_cast<double>(gr[j]);
      const double xh = (static_cast<double>(xr[j]) - m) * rs;
      gh[j] = gj * (kWeight ? static_cast<double>(w[j]) : 1.0);
      ghx[j] = gh[j] * xh;
      if constexpr (kSums) {
        pw[j] += gj * xh;
        pb[j] += gj;
      }
    }
    const double a_mean = sum_lanes(gh, n) * inv_n, c_mean = sum_lanes(ghx, n) * inv_n;
    // rstd * (g_hat - a / n - x_hat * c / n), with x_hat = (x - mean) * rstd, as
    // rstd * g_hat + x * k1 + k0 (PyTorch's form): on rows of 1e4 + small values x * k1 + k0
    // cancels about 4 of double's 16 digits, far below float32's rounding.
    const double k1 = -rs * rs * c_mean, k0 = rs * (m * rs * c_mean - a_mean);
    T* gx = grad_x + r * n;
    for (std::int64_t j = 0; j < n; ++j)
      gx[j] = static_cast<T>(rs * gh[j] + static_cast<double>(xr[j]) * k1 + k0);
  }
}

/// The AVX2 / AVX-512 rows for contiguous float32 rows at the level kernels_f32() runs, or
/// nullptr (portable loops).
const simd::LayerNormRows* simd_rows() {
  const simd::Kernels* k = simd::kernels_f32();
  if (k == nullptr) return nullptr;
  if (k->level == simd::Level::kAvx512) {
    if (const simd::LayerNormRows* rows = simd::layer_norm_rows_avx512()) return rows;
  }
  return simd::layer_norm_rows_avx2();
}

}  // namespace

template <typename T>
void layer_norm_kernel(const T* x, std::int64_t x_row_stride, std::int64_t x_col_stride, const T* w,
                       const T* b, std::int64_t rows, std::int64_t n, double eps, T* out,
                       double* mean_out, double* rstd_out) {
  const simd::LayerNormRows* fast = nullptr;
  if constexpr (std::is_same_v<T, float>) fast = x_col_stride == 1 ? simd_rows() : nullptr;
  parallel_for(0, rows, chunk_rows(n), [&](std::int64_t r0, std::int64_t r1) {
    if constexpr (std::is_same_v<T, float>) {
      if (fast)
        return fast->forward(x, x_row_stride, w, b, r0, r1, n, eps, out, mean_out, rstd_out);
    }
    if (x_col_stride == 1) {
      forward_rows<T, true>(x, x_row_stride, 1, w, b, r0, r1, n, eps, out, mean_out, rstd_out);
    } else {
      forward_rows<T, false>(x, x_row_stride, x_col_stride, w, b, r0, r1, n, eps, out, mean_out,
                             rstd_out);
    }
  });
}

template <typename T>
void layer_norm_backward_kernel(const T* g, const T* x, const double* mean, const double* rstd,
                                const T* w, std::int64_t rows, std::int64_t n, T* grad_x, T* grad_w,
                                T* grad_b) {
  const std::int64_t per_chunk = chunk_rows(n);
  const std::int64_t chunks = (rows + per_chunk - 1) / per_chunk;
  // Chunk c's sums over its rows: partial[c * 2n, + n) for grad_w, [+ n, + 2n) for grad_b (both
  // taken when either is asked for: one pass computes them together).
  const bool sums = grad_w || grad_b;
  if (!grad_x && !sums) return;
  std::vector<double> partial(
      sums ? static_cast<std::size_t>(std::max<std::int64_t>(chunks, 1) * 2 * n) : 0);
  const simd::LayerNormRows* fast = nullptr;
  if constexpr (std::is_same_v<T, float>) fast = simd_rows();
  parallel_for(0, chunks, 1, [&](std::int64_t c0, std::int64_t c1) {
    for (std::int64_t c = c0; c < c1; ++c) {
      const std::int64_t r0 = c * per_chunk, r1 = std::min(rows, r0 + per_chunk);
      double* pw = sums ? partial.data() + c * 2 * n : nullptr;
      double* pb = sums ? pw + n : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        if (fast) {
          fast->backward(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
          continue;
        }
      }
      if (w && sums) {
        backward_rows<T, true, true>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
      } else if (w) {
        backward_rows<T, true, false>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
      } else if (sums) {
        backward_rows<T, false, true>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
      } else {
        backward_rows<T, false, false>(g, x, mean, rstd, w, r0, r1, n, grad_x, pw, pb);
      }
    }
  });
  if (!sums) return;
  // Chunk order, on this thread: the same bits whatever the thread count.
  for (std::int64_t c = 1; c < chunks; ++c) {
    const double* p = partial.data() + c * 2 * n;
    for (std::int64_t j = 0; j < 2 * n; ++j) partial[static_cast<std::size_t>(j)] += p[j];
  }
  for (std::int64_t j = 0; j < n; ++j) {
    if (grad_w) grad_w[j] = static_cast<T>(partial[static_cast<std::size_t>(j)]);
    if (grad_b) grad_b[j] = static_cast<T>(partial[static_cast<std::size_t>(n + j)]);
  }
}

template void layer_norm_kernel<float>(const float*, std::int64_t, std::int64_t, const float*,
                                       const float*, std::int64_t, std::int64_t, double, float*,
                                       double*, double*);
template void layer_norm_kernel<double>(const double*, std::int64_t, std::int64_t, const double*,
                                        const double*, std::int64_t, std::int64_t, double, double*,
                                        double*, double*);
template void layer_norm_backward_kernel<float>(const float*, const float*, const double*,
                                                const double*, const float*, std::int64_t,
                                                std::int64_t, float*, float*, float*);
template void layer_norm_backward_kernel<double>(const double*, const double*, const double*,
                                                 const double*, const double*, std::int64_t,
                                                 std::int64_t, double*, double*, double*);

}  // namespace minigrad::detail
