#pragma once
// Private: the strided loop every elementwise kernel runs on.
//
// for_each_row walks an n-d index space for K operands with their own strides (in elements,
// 0 on broadcast dims). It first drops size-1 dims and merges dims that are contiguous for every
// operand, so a contiguous or simply broadcast operation becomes one long row; then it calls
// inner(offsets, n, inner_strides) once per row of the last dim (or part of a row).
// With Parallel (unary_loop, binary_loop: pure per-element functions) a large range whose output
// is contiguous is split across threads (Note [Intra-op parallelism], parallel.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "minigrad/tensor.h"
#include "parallel.h"

namespace minigrad::detail {

template <std::size_t K, bool Parallel = false, typename Inner>
void for_each_row(const Shape& shape_in, const std::array<const Shape*, K>& strides_in,
                  Inner&& inner) {
  std::int64_t numel = 1;
  for (auto s : shape_in) numel *= s;
  if (numel == 0) return;
  // The merged shape and K stride lists live in one buffer, on the stack for up to
  // kStackDims dims: this loop runs for every elementwise op, and on a 2x2 add heap allocations
  // here cost more than the arithmetic.
  constexpr std::size_t kStackDims = 8;
  const std::size_t max_nd = shape_in.size();
  std::array<std::int64_t, (K + 1) * kStackDims> stack_buf;
  std::vector<std::int64_t> heap_buf;
  std::int64_t* buf = stack_buf.data();
  if (max_nd > kStackDims) {
    heap_buf.resize((K + 1) * max_nd);
    buf = heap_buf.data();
  }
  const std::size_t cap = max_nd > kStackDims ? max_nd : kStackDims;
  std::int64_t* shape = buf;
  std::array<std::int64_t*, K> st;
  for (std::size_t k = 0; k < K; ++k) st[k] = buf + (k + 1) * cap;
  // Drop size-1 dims, then merge dims that are contiguous for every operand.
  std::size_t nd = 0;
  for (std::size_t d = 0; d < max_nd; ++d) {
    if (shape_in[d] == 1) continue;
    shape[nd] = shape_in[d];
    for (std::size_t k = 0; k < K; ++k) st[k][nd] = (*strides_in[k])[d];
    ++nd;
  }
  if (nd > 1) {
    std::size_t w = 0;
    for (std::size_t d = 1; d < nd; ++d) {
      bool mergeable = true;
      for (std::size_t k = 0; k < K; ++k) mergeable &= st[k][w] == st[k][d] * shape[d];
      if (mergeable) {
        shape[w] *= shape[d];
        for (std::size_t k = 0; k < K; ++k) st[k][w] = st[k][d];
      } else {
        ++w;
        shape[w] = shape[d];
        for (std::size_t k = 0; k < K; ++k) st[k][w] = st[k][d];
      }
    }
    nd = w + 1;
  }
  std::array<std::int64_t, K> inner_st{};
  if (nd == 0) {
    inner(std::array<std::int64_t, K>{}, std::int64_t{1}, inner_st);
    return;
  }
  const std::int64_t n = shape[nd - 1];
  for (std::size_t k = 0; k < K; ++k) inner_st[k] = st[k][nd - 1];
  // Elements [b, e) in row-major order: partial rows at the ends, whole rows between.
  auto walk = [&](std::int64_t b, std::int64_t e) {
    std::array<std::int64_t, kStackDims> idx_stack;
    std::vector<std::int64_t> idx_heap;
    std::int64_t* idx = idx_stack.data();
    if (nd > kStackDims) {
      idx_heap.resize(nd);
      idx = idx_heap.data();
    }
    std::array<std::int64_t, K> off{};
    std::int64_t col = 0;
    for (std::size_t d = 0; d + 1 < nd; ++d) idx[d] = 0;
    if (b != 0) {  // a chunk that starts mid-range: unravel b
      std::int64_t rest = b / n;
      col = b % n;
      for (auto d = static_cast<std::int64_t>(nd) - 2; d >= 0; --d) {
        idx[d] = rest % shape[d];
        rest /= shape[d];
        for (std::size_t k = 0; k < K; ++k) off[k] += idx[d] * st[k][d];
      }
    }
    while (b < e) {
      const std::int64_t len = std::min(n - col, e - b);
      std::array<std::int64_t, K> at = off;
      for (std::size_t k = 0; k < K; ++k) at[k] += col * inner_st[k];
      inner(at, len, inner_st);
      b += len;
      col = 0;
      for (auto d = static_cast<std::int64_t>(nd) - 2; d >= 0; --d) {
        for (std::size_t k = 0; k < K; ++k) off[k] += st[k][d];
        if (++idx[d] < shape[d]) break;
        for (std::size_t k = 0; k < K; ++k) off[k] -= st[k][d] * shape[d];
        idx[d] = 0;
      }
    }
  };
  // Split across threads only when operand 0 (the output) is contiguous, so that no two elements
  // share memory and chunks never write the same place (Note [Intra-op parallelism]).
  bool out_contiguous = Parallel;
  for (std::int64_t d = static_cast<std::int64_t>(nd) - 1, expect = 1; d >= 0 && out_contiguous;
       --d) {
    out_contiguous = st[0][d] == expect;
    expect *= shape[d];
  }
  if (out_contiguous)
    parallel_for(0, numel, kGrainSize, walk);
  else
    walk(0, numel);
}

/// out[i] = f(a[i]) over a strided input and any output, both typed.
template <typename In, typename Out, typename F>
void unary_loop(const Shape& shape, const In* a, const Shape& sa, Out* out, const Shape& so, F f) {
  for_each_row<2, true>(shape, {&so, &sa}, [&](const auto& off, std::int64_t n, const auto& is) {
    Out* o = out + off[0];
    const In* x = a + off[1];
    if (is[0] == 1 && is[1] == 1) {
      for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else {
      for (std::int64_t i = 0; i < n; ++i) o[i * is[0]] = f(x[i * is[1]]);
    }
  });
}

/// out[i] = f(a[i], b[i]) with broadcast strides for a and b.
template <typename In, typename Out, typename F>
void binary_loop(const Shape& shape, const In* a, const Shape& sa, const In* b, const Shape& sb,
                 Out* out, const Shape& so, F f) {
  for_each_row<3, true>(shape, {&so, &sa, &sb},
                        [&](const auto& off, std::int64_t n, const auto& is) {
                          Out* o = out + off[0];
                          const In* x = a + off[1];
                          const In* y = b + off[2];
                          if (is[0] == 1 && is[1] == 1 && is[2] == 1) {
                            for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
                          } else if (is[0] == 1 && is[1] == 1 && is[2] == 0) {
                            const In yv = *y;
                            for (std::int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
                          } else if (is[0] == 1 && is[1] == 0 && is[2] == 1) {
                            const In xv = *x;
                            for (std::int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
                          } else {
                            for (std::int64_t i = 0; i < n; ++i)
                              o[i * is[0]] = f(x[i * is[1]], y[i * is[2]]);
                          }
                        });
}

}  // namespace minigrad::detail
