#pragma once
// Private: the softmax / log_softmax kernels (ops/softmax.cpp). Shapes are (outer, n, inner) of a
// contiguous tensor around the softmax dim; inner == 1 means contiguous rows of n. float32 runs
// the AVX2 / AVX-512 kernels (softmax_simd_impl.h) when the CPU has them (Note [Runtime SIMD
// dispatch], simd.h); float64, and float32 on other CPUs, portable loops (exp through xtensor).
// forward and backward are the ops' entries: they split the outer blocks across threads and run
// the row kernels below on each part.
#include <cstdint>

namespace minigrad::detail::softmax {

/// y = softmax(x) (log_softmax when log) over the n axis of `outer` blocks of n x inner values,
/// on threads (Note [Intra-op parallelism]).
template <typename T>
void forward(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner, bool log);

/// gx = y * (g - sum(g * y)) (softmax) or g - exp(y) * sum(g) (log_softmax, y its output), one
/// fused pass per row, on threads.
template <typename T>
void backward(const T* g, const T* y, T* gx, std::int64_t outer, std::int64_t n, std::int64_t inner,
              bool log);

/// forward on one thread (a part of the outer blocks).
template <typename T>
void forward_rows(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner,
                  bool log);

/// backward on one thread.
template <typename T>
void backward_rows(const T* g, const T* y, T* gx, std::int64_t outer, std::int64_t n,
                   std::int64_t inner, bool log);

}  // namespace minigrad::detail::softmax
