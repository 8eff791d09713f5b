#pragma once
// Private: the reduction kernels of ops/reduce.cpp over raw buffers. No Tensor, no autograd: an
// input is a base pointer with a shape and strides (in elements), split by ReduceLayout into the
// dims the reduction keeps and the dims it reduces; every output is written at its row-major
// position among the kept dims. Instantiated for float, double, std::int64_t and bool.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "minigrad/shape.h"
#include "parallel.h"

namespace minigrad::detail {

/// The kept and reduced dims of a strided input (size and stride of each, in order).
struct ReduceLayout {
  Shape kept_shape, kept_strides, red_shape, red_strides;
  std::int64_t n_out = 1;  // outputs: the product of kept_shape
  std::int64_t n_red = 1;  // elements reduced into each output: the product of red_shape
};

/// Splits (shape, strides) by `reduced` (one flag per dim).
ReduceLayout reduce_layout(const Shape& shape, const Shape& strides,
                           const std::vector<bool>& reduced);

/// For each output o (in row-major order of the kept dims) calls fn(o, visit), where visit(g)
/// calls g(value, i) for every reduced element in row-major order of the reduced dims (i: its
/// position among them). Outputs are split across threads (Note [Intra-op parallelism]): fn must
/// write only output o.
template <typename T, typename Fn>
void reduce_rows(const T* base, const ReduceLayout& l, Fn fn) {
  const Shape &kept_shape = l.kept_shape, &kept_strides = l.kept_strides;
  const Shape &red_shape = l.red_shape, &red_strides = l.red_strides;
  const std::int64_t n_red = l.n_red;
  const bool one_red = red_shape.size() == 1;
  // Outputs [ob, oe) on one thread (Note [Intra-op parallelism]): fn only writes output o.
  auto outputs = [&](std::int64_t ob, std::int64_t oe) {
    std::vector<std::int64_t> kidx(kept_shape.size(), 0), ridx(red_shape.size(), 0);
    std::int64_t koff = 0;
    for (std::int64_t d = static_cast<std::int64_t>(kept_shape.size()) - 1, rest = ob; d >= 0;
         --d) {
      kidx[d] = rest % kept_shape[d];
      rest /= kept_shape[d];
      koff += kidx[d] * kept_strides[d];
    }
    for (std::int64_t o = ob; o < oe; ++o) {
      const T* p = base + koff;
      auto visit = [&](auto&& g) {
        if (one_red) {
          const std::int64_t st = red_strides[0];
          for (std::int64_t i = 0; i < n_red; ++i) g(p[i * st], i);
          return;
        }
        std::fill(ridx.begin(), ridx.end(), 0);
        std::int64_t roff = 0;
        for (std::int64_t i = 0; i < n_red; ++i) {
          g(p[roff], i);
          for (auto d = static_cast<std::int64_t>(red_shape.size()) - 1; d >= 0; --d) {
            roff += red_strides[d];
            if (++ridx[d] < red_shape[d]) break;
            roff -= red_strides[d] * red_shape[d];
            ridx[d] = 0;
          }
        }
      };
      fn(o, visit);
      for (auto d = static_cast<std::int64_t>(kept_shape.size()) - 1; d >= 0; --d) {
        koff += kept_strides[d];
        if (++kidx[d] < kept_shape[d]) break;
        koff -= kept_strides[d] * kept_shape[d];
        kidx[d] = 0;
      }
    }
  };
  parallel_for(0, l.n_out, std::max<std::int64_t>(1, kGrainSize / std::max<std::int64_t>(n_red, 1)),
               outputs);
}

/// out[o] = the sum of output o's elements: floating point accumulates in double (NOTE in
/// reduce.cpp), integers and bool in int64 wrapping as PyTorch.
template <typename T, typename O>
void sum_kernel(const T* x, const ReduceLayout& l, O* out);

/// The sum over the leading rows of a contiguous [rows, cols] matrix: out[c] = sum_r x[r, c]
/// (a Linear bias's gradient), row after row into a double per column; the same values added in
/// the same order as sum_kernel, so bit-identical to it.
template <typename T>
void sum_leading_rows(const T* x, std::int64_t rows, std::int64_t cols, T* out);

/// The sum of x[i]^2 over a contiguous array of n elements, each square rounded to T and added
/// in double (as sum(x * x)): norm(x, 2)'s full reduction, one pass and no temporary (a gradient
/// clip takes one per parameter). Eight running sums over interleaved elements, added at the
/// end; a long array is cut into fixed chunks whose sums are added in order on the calling
/// thread, so the result has the same bits on any thread count.
template <typename T>
double sum_of_squares(const T* x, std::int64_t n);

/// values[o] = the max (kMax) or min of output o's elements, indices[o] (unless null) its position
/// among the reduced elements. NOTE: NaN wins every comparison (it propagates, as in PyTorch);
/// ties keep the first index. Every output needs at least one element (checked by callers).
template <bool kMax, typename T>
void extreme_kernel(const T* x, const ReduceLayout& l, T* values, std::int64_t* indices);

/// out[o] = all (kAll) or any of output o's elements being non-zero; empty gives true / false.
template <bool kAll, typename T>
void all_any_kernel(const T* x, const ReduceLayout& l, bool* out);

/// The running sum of a contiguous [outer, n, inner] input along n: floating point accumulates
/// in double, integers and bool in int64 wrapping (O is T for floating point, else int64).
template <typename T, typename O>
void cumsum_kernel(const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner, O* out);

}  // namespace minigrad::detail
