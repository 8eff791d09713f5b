// The fused scaled-dot-product attention kernels (Note [Flash attention on the CPU],
// attention.h). No xtensor here: <cblas.h> and xtensor-blas clash in one translation unit.
#include "kernels/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/simd.h"
#include "parallel.h"

namespace minigrad::detail::attention {

namespace {

constexpr std::int64_t kQueryTile = 128;
constexpr std::int64_t kKeyTile = 512;

/// c = alpha * op(a) op(b) + beta * c, row-major.
template <typename T>
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  const auto tA = ta ? CblasTrans : CblasNoTrans;
  const auto tB = tb ? CblasTrans : CblasNoTrans;
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, tA, tB, M, N, K, alpha, a, static_cast<blasint>(lda), b,
                static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, tA, tB, M, N, K, alpha, a, static_cast<blasint>(lda), b,
                static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
  }
}

/// Max of n values, ignoring NaN (NaN reaches the output through the sum of exps).
template <typename T>
T row_max(const T* x, std::int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (std::int64_t j = 0; j < n; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

/// x[j] = exp(x[j] - m) for n values; returns their sum.
template <typename T>
T exp_sum(T* x, std::int64_t n, T m) {
  if constexpr (std::is_same_v<T, float>) {
    if (const auto* k = simd::kernels_f32()) return k->exp_sum(x, x, n, m);
  }
  double s = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - m);
    s += static_cast<double>(x[j]);
  }
  return static_cast<T>(s);
}

/// Keys of tile [j0, j0 + bc) that query i may see: all of them, or under is_causal those <= i.
std::int64_t visible(const Dims& d, std::int64_t i, std::int64_t j0, std::int64_t bc) {
  return d.causal ? std::clamp<std::int64_t>(i - j0 + 1, 0, bc) : bc;
}

/// Keys that some query of [i0, i0 + br) may see.
std::int64_t key_end(const Dims& d, std::int64_t i0, std::int64_t br) {
  return d.causal ? std::min(d.S, i0 + br) : d.S;
}

/// Slices per parallel chunk: a slice costs about L * S * (E + Ev) multiply-adds.
std::int64_t slices_grain(const Dims& d) {
  const std::int64_t work = std::max<std::int64_t>(1, d.L * d.S * (d.E + d.Ev));
  return std::max<std::int64_t>(1, kGrainSize * 8 / work);
}

/// A thread's scratch buffer of at least n values; kept between calls (no allocation, no page
/// faults, no zeroing in steady state).
template <typename T>
T* scratch(int slot, std::int64_t n) {
  thread_local std::vector<T> buffers[4];
  auto& b = buffers[slot];
  if (static_cast<std::int64_t>(b.size()) < n) b.resize(static_cast<std::size_t>(n));
  return b.data();
}

}  // namespace

template <typename T>
void forward(const Operand<T>& q, const Operand<T>& k, const Operand<T>& v, T* out, T* lse,
             const Dims& d) {
  const T scale = static_cast<T>(d.scale);
  const std::int64_t tq = std::min(kQueryTile, d.L), tk = std::min(kKeyTile, d.S);
  parallel_for(0, d.batch, slices_grain(d), [&](std::int64_t b0, std::int64_t b1) {
    T* s = scratch<T>(0, tq * tk);
    T* acc = scratch<T>(1, tq * d.Ev);
    T* m = scratch<T>(2, tq);
    T* l = scratch<T>(3, tq);
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* Q = q.data + q.offset[b];
      const T* K = k.data + k.offset[b];
      const T* V = v.data + v.offset[b];
      T* O = out + b * d.L * d.Ev;
      for (std::int64_t i0 = 0; i0 < d.L; i0 += kQueryTile) {
        const std::int64_t br = std::min(kQueryTile, d.L - i0);
        std::fill(m, m + br, -std::numeric_limits<T>::infinity());
        std::fill(l, l + br, T(0));
        std::fill(acc, acc + br * d.Ev, T(0));
        const std::int64_t jend = key_end(d, i0, br);
        for (std::int64_t j0 = 0; j0 < jend; j0 += kKeyTile) {
          const std::int64_t bc = std::min(kKeyTile, jend - j0);
          // s [br, bc] = scale * Q[i0:] K[j0:]^T
          gemm<T>(false, true, br, bc, d.E, scale, Q + i0 * q.ld, q.ld, K + j0 * k.ld, k.ld, T(0),
                  s, bc);
          for (std::int64_t r = 0; r < br; ++r) {
            T* row = s + r * bc;
            const std::int64_t nv = visible(d, i0 + r, j0, bc);
            std::fill(row + nv, row + bc, T(0));
            if (nv == 0) continue;
            const T mnew = std::max(m[r], row_max(row, nv));
            const T sum = exp_sum(row, nv, mnew);
            const T corr = std::exp(m[r] - mnew);  // 0 on the first tile (m = -inf)
            if (corr != T(1)) {
              T* a = acc + r * d.Ev;
              for (std::int64_t e = 0; e < d.Ev; ++e) a[e] *= corr;
            }
            l[r] = l[r] * corr + sum;
            m[r] = mnew;
          }
          // acc [br, Ev] += p [br, bc] V[j0:] [bc, Ev]
          gemm<T>(false, false, br, d.Ev, bc, T(1), s, bc, V + j0 * v.ld, v.ld, T(1), acc, d.Ev);
        }
        for (std::int64_t r = 0; r < br; ++r) {
          const T inv = T(1) / l[r];
          const T* a = acc + r * d.Ev;
          T* o = O + (i0 + r) * d.Ev;
          for (std::int64_t e = 0; e < d.Ev; ++e) o[e] = a[e] * inv;
          lse[b * d.L + i0 + r] = m[r] + static_cast<T>(std::log(static_cast<double>(l[r])));
        }
      }
    }
  });
}

template <typename T>
void backward(const Operand<T>& q, const Operand<T>& k, const Operand<T>& v, const T* out,
              const T* lse, const Operand<T>& dout, T* dq, T* dk, T* dv, const Dims& d) {
  const T scale = static_cast<T>(d.scale);
  const std::int64_t tq = std::min(kQueryTile, d.L), tk = std::min(kKeyTile, d.S);
  const std::int64_t ldo = dout.ld;
  parallel_for(0, d.batch, slices_grain(d), [&](std::int64_t b0, std::int64_t b1) {
    T* p = scratch<T>(0, tq * tk);
    T* ds = scratch<T>(1, tq * tk);
    T* D = scratch<T>(2, d.L);
    for (std::int64_t b = b0; b < b1; ++b) {
      const T* Q = q.data + q.offset[b];
      const T* K = k.data + k.offset[b];
      const T* V = v.data + v.offset[b];
      const T* O = out + b * d.L * d.Ev;
      const T* dO = dout.data + dout.offset[b];
      const T* LSE = lse + b * d.L;
      T* dQ = dq + b * d.L * d.E;
      T* dK = dk + b * d.S * d.E;
      T* dV = dv + b * d.S * d.Ev;
      std::fill(dQ, dQ + d.L * d.E, T(0));
      std::fill(dK, dK + d.S * d.E, T(0));
      std::fill(dV, dV + d.S * d.Ev, T(0));
      for (std::int64_t i = 0; i < d.L; ++i) {  // D = rowsum(dO * O)
        double acc = 0;
        for (std::int64_t e = 0; e < d.Ev; ++e)
          acc += static_cast<double>(dO[i * ldo + e]) * static_cast<double>(O[i * d.Ev + e]);
        D[i] = static_cast<T>(acc);
      }
      for (std::int64_t i0 = 0; i0 < d.L; i0 += kQueryTile) {
        const std::int64_t br = std::min(kQueryTile, d.L - i0);
        const std::int64_t jend = key_end(d, i0, br);
        for (std::int64_t j0 = 0; j0 < jend; j0 += kKeyTile) {
          const std::int64_t bc = std::min(kKeyTile, jend - j0);
          // p [br, bc] = exp(scale * Q[i0:] K[j0:]^T - lse), 0 where not visible
          gemm<T>(false, true, br, bc, d.E, scale, Q + i0 * q.ld, q.ld, K + j0 * k.ld, k.ld, T(0),
                  p, bc);
          for (std::int64_t r = 0; r < br; ++r) {
            T* row = p + r * bc;
            const std::int64_t nv = visible(d, i0 + r, j0, bc);
            std::fill(row + nv, row + bc, T(0));
            exp_sum(row, nv, LSE[i0 + r]);
          }
          // dV[j0:] [bc, Ev] += p^T [bc, br] dO[i0:] [br, Ev]
          gemm<T>(true, false, bc, d.Ev, br, T(1), p, bc, dO + i0 * ldo, ldo, T(1), dV + j0 * d.Ev,
                  d.Ev);
          // ds [br, bc] = dO[i0:] [br, Ev] V[j0:]^T [Ev, bc], then p * (ds - D)
          gemm<T>(false, true, br, bc, d.Ev, T(1), dO + i0 * ldo, ldo, V + j0 * v.ld, v.ld, T(0),
                  ds, bc);
          for (std::int64_t r = 0; r < br; ++r) {
            const T Dr = D[i0 + r];
            const T* pr = p + r * bc;
            T* dr = ds + r * bc;
            for (std::int64_t j = 0; j < bc; ++j) dr[j] = pr[j] * (dr[j] - Dr);
          }
          // dQ[i0:] [br, E] += scale * ds [br, bc] K[j0:] [bc, E]
          gemm<T>(false, false, br, d.E, bc, scale, ds, bc, K + j0 * k.ld, k.ld, T(1),
                  dQ + i0 * d.E, d.E);
          // dK[j0:] [bc, E] += scale * ds^T [bc, br] Q[i0:] [br, E]
          gemm<T>(true, false, bc, d.E, br, scale, ds, bc, Q + i0 * q.ld, q.ld, T(1), dK + j0 * d.E,
                  d.E);
        }
      }
    }
  });
}

template void forward<float>(const Operand<float>&, const Operand<float>&, const Operand<float>&,
                             float*, float*, const Dims&);
template void forward<double>(const Operand<double>&, const Operand<double>&,
                              const Operand<double>&, double*, double*, const Dims&);
template void backward<float>(const Operand<float>&, const Operand<float>&, const Operand<float>&,
                              const float*, const float*, const Operand<float>&, float*, float*,
                              float*, const Dims&);
template void backward<double>(const Operand<double>&, const Operand<double>&,
                               const Operand<double>&, const double*, const double*,
                               const Operand<double>&, double*, double*, double*, const Dims&);

}  // namespace minigrad::detail::attention
