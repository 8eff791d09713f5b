#pragma once
// Private: the fused scaled-dot-product attention kernels (ops/attention.cpp).
//
// Note [Flash attention on the CPU]
// softmax(q k^T * scale) v for `batch` independent (batch, head) slices, as FlashAttention-2
// computes it: the forward walks the keys in tiles of kKeyTile for each tile of kQueryTile
// queries, keeps per query row the running max m, the running sum l of exp(score - m) and the
// unnormalised output, and rescales both by exp(m_old - m_new) when the max grows (the online
// softmax). The [L, S] scores are never materialised: only one [kQueryTile, kKeyTile] tile per
// thread. It saves the log-sum-exp lse = m + log(l) of each row. The backward recomputes each
// tile's probabilities as exp(score - lse) and accumulates
//   dV += P^T dO,  dS = P * (dO V^T - D),  dQ += scale dS K,  dK += scale dS^T Q,
// with D = rowsum(dO * O). With is_causal (key j visible to query i when j <= i, PyTorch's
// top-left tril of ones(L, S)) the tiles entirely above the diagonal are skipped. The tile
// products go to BLAS (cblas_?gemm), the exp to the run-time dispatched SIMD exp (Note [Runtime
// SIMD dispatch]) for float32. Slices are split across threads (parallel_for), each computed
// whole by one thread in a fixed order: the same bits on any number of threads.
#include <cstdint>

namespace minigrad::detail::attention {

struct Dims {
  std::int64_t batch;  // (batch, head) slices
  std::int64_t L;      // queries
  std::int64_t S;      // keys
  std::int64_t E;      // q / k features
  std::int64_t Ev;     // v features
  bool causal;
  double scale;
};

/// An operand read in place: slice b's [rows, cols] matrix starts at data + offset[b], its rows
/// are ld elements apart, its columns adjacent (MultiheadAttention's heads are such views).
template <typename T>
struct Operand {
  const T* data;
  const std::int64_t* offset;  // one per slice
  std::int64_t ld;
};

/// q [batch, L, E], k [batch, S, E], v [batch, S, Ev] -> out [batch, L, Ev] and lse [batch, L]
/// (preallocated, contiguous).
template <typename T>
void forward(const Operand<T>& q, const Operand<T>& k, const Operand<T>& v, T* out, T* lse,
             const Dims& d);

/// The gradients of forward's out for dout [batch, L, Ev], into dq, dk, dv (preallocated,
/// contiguous, overwritten); out and lse are forward's.
template <typename T>
void backward(const Operand<T>& q, const Operand<T>& k, const Operand<T>& v, const T* out,
              const T* lse, const Operand<T>& dout, T* dq, T* dk, T* dv, const Dims& d);

}  // namespace minigrad::detail::attention
