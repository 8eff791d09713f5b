#pragma once
// Private: the strided loop every elementwise kernel runs on.
//
// for_each_row walks an n-d index space for K operands with their own strides (in elements,
// 0 on broadcast dims). It first drops size-1 dims and merges dims that are contiguous for every
// operand, so a contiguous or simply broadcast operation becomes one long row; then it calls
// inner(offsets, n, inner_strides) once per row of the last dim.
#include <array>
#include <cstdint>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad::detail {

template <std::size_t K, typename Inner>
void for_each_row(const Shape& shape_in, const std::array<const Shape*, K>& strides_in,
                  Inner&& inner) {
  std::int64_t numel = 1;
  for (auto s : shape_in) numel *= s;
  if (numel == 0) return;
  // The merged shape, K stride lists and the index live in one buffer, on the stack for up to
  // kStackDims dims: this loop runs for every elementwise op, and on a 2x2 add heap allocations
  // here cost more than the arithmetic.
  constexpr std::size_t kStackDims = 8;
  const std::size_t max_nd = shape_in.size();
  std::array<std::int64_t, (K + 2) * kStackDims> stack_buf;
  std::vector<std::int64_t> heap_buf;
  std::int64_t* buf = stack_buf.data();
  if (max_nd > kStackDims) {
    heap_buf.resize((K + 2) * max_nd);
    buf = heap_buf.data();
  }
  const std::size_t cap = max_nd > kStackDims ? max_nd : kStackDims;
  std::int64_t* shape = buf;
  std::array<std::int64_t*, K> st;
  for (std::size_t k = 0; k < K; ++k) st[k] = buf + (k + 1) * cap;
  std::int64_t* idx = buf + (K + 1) * cap;
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
  std::array<std::int64_t, K> off{};
  std::array<std::int64_t, K> inner_st{};
  if (nd == 0) {
    inner(off, std::int64_t{1}, inner_st);
    return;
  }
  const std::int64_t n = shape[nd - 1];
  for (std::size_t k = 0; k < K; ++k) inner_st[k] = st[k][nd - 1];
  for (std::size_t d = 0; d < nd; ++d) idx[d] = 0;
  const std::int64_t rows = numel / n;
  for (std::int64_t r = 0; r < rows; ++r) {
    inner(off, n, inner_st);
    for (std::int64_t d = static_cast<std::int64_t>(nd) - 2; d >= 0; --d) {
      for (std::size_t k = 0; k < K; ++k) off[k] += st[k][d];
      if (++idx[d] < shape[d]) break;
      for (std::size_t k = 0; k < K; ++k) off[k] -= st[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

/// out[i] = f(a[i]) over a strided input and any output, both typed.
template <typename In, typename Out, typename F>
void unary_loop(const Shape& shape, const In* a, const Shape& sa, Out* out, const Shape& so, F f) {
  for_each_row<2>(shape, {&so, &sa}, [&](const auto& off, std::int64_t n, const auto& is) {
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
  for_each_row<3>(shape, {&so, &sa, &sb}, [&](const auto& off, std::int64_t n, const auto& is) {
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
      for (std::int64_t i = 0; i < n; ++i) o[i * is[0]] = f(x[i * is[1]], y[i * is[2]]);
    }
  });
}

}  // namespace minigrad::detail
