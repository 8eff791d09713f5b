// The reduction kernels (kernels/reduce.h): sum, max/min with indices, all/any and cumsum, each a
// loop over reduce_rows or over a contiguous layout.
#include "kernels/reduce.h"

#include <algorithm>
#include <type_traits>
#include <vector>

#include "kernels/wrapping.h"

namespace minigrad::detail {

ReduceLayout reduce_layout(const Shape& shape, const Shape& strides,
                           const std::vector<bool>& reduced) {
  ReduceLayout l;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      l.red_shape.push_back(shape[d]);
      l.red_strides.push_back(strides[d]);
      l.n_red *= shape[d];
    } else {
      l.kept_shape.push_back(shape[d]);
      l.kept_strides.push_back(strides[d]);
      l.n_out *= shape[d];
    }
  }
  return l;
}

template <typename T, typename O>
void sum_kernel(const T* x, const ReduceLayout& l, O* out) {
  if constexpr (std::is_floating_point_v<T>) {
    reduce_rows<T>(x, l, [&](std::int64_t o, auto&& visit) {
      double acc = 0;  // NOTE: float32 sums accumulate in double
      visit([&](T v, std::int64_t) { acc += v; });
      out[o] = static_cast<O>(acc);
    });
  } else {
    reduce_rows<T>(x, l, [&](std::int64_t o, auto&& visit) {
      std::int64_t acc = 0;
      visit([&](T v, std::int64_t) { acc = wrapping_add(acc, static_cast<std::int64_t>(v)); });
      out[o] = acc;
    });
  }
}

template <typename T>
void sum_leading_rows(const T* x, std::int64_t rows, std::int64_t cols, T* out) {
  // Columns [cb, ce) on one thread (Note [Intra-op parallelism]).
  auto columns = [&](std::int64_t cb, std::int64_t ce) {
    std::vector<double> acc(static_cast<std::size_t>(ce - cb), 0.0);
    const T* p = x + cb;
    for (std::int64_t i = 0; i < rows; ++i, p += cols)
      for (std::int64_t c = 0; c < ce - cb; ++c) acc[static_cast<std::size_t>(c)] += p[c];
    for (std::int64_t c = cb; c < ce; ++c)
      out[c] = static_cast<T>(acc[static_cast<std::size_t>(c - cb)]);
  };
  parallel_for(0, cols, std::max<std::int64_t>(16, kGrainSize / std::max<std::int64_t>(rows, 1)),
               columns);
}

template <typename T>
double sum_of_squares(const T* x, std::int64_t n) {
  constexpr int kLanes = 8;
  constexpr std::int64_t kChunk = 1 << 16;  // elements per partial sum, fixed (reduce.h)
  auto chunk_sum = [x](std::int64_t b, std::int64_t e) {
    double s[kLanes] = {};
    std::int64_t i = b;
    for (; i + kLanes <= e; i += kLanes)
      for (int l = 0; l < kLanes; ++l) s[l] += static_cast<double>(x[i + l] * x[i + l]);
    for (int l = 0; i < e; ++i, ++l) s[l] += static_cast<double>(x[i] * x[i]);
    double r = 0;
    for (double v : s) r += v;
    return r;
  };
  if (n <= kChunk) return chunk_sum(0, n);
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<std::size_t>(chunks));
  parallel_for(0, chunks, std::max<std::int64_t>(1, kGrainSize / kChunk),
               [&](std::int64_t c0, std::int64_t c1) {
                 for (std::int64_t c = c0; c < c1; ++c)
                   partial[static_cast<std::size_t>(c)] =
                       chunk_sum(c * kChunk, std::min(n, (c + 1) * kChunk));
               });
  double r = 0;
  for (double v : partial) r += v;
  return r;
}
template double sum_of_squares<float>(const float*, std::int64_t);
template double sum_of_squares<double>(const double*, std::int64_t);

namespace {

template <bool kMax, typename T>
bool better(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return kMax ? v > best : v < best;
}

}  // namespace

template <bool kMax, typename T>
void extreme_kernel(const T* x, const ReduceLayout& l, T* values, std::int64_t* indices) {
  reduce_rows<T>(x, l, [&](std::int64_t o, auto&& visit) {
    T best{};
    std::int64_t at = -1;
    visit([&](T v, std::int64_t i) {
      if (at < 0 || better<kMax>(v, best)) {
        best = v;
        at = i;
      }
    });
    values[o] = best;
    if (indices) indices[o] = at;
  });
}

template <bool kAll, typename T>
void all_any_kernel(const T* x, const ReduceLayout& l, bool* out) {
  reduce_rows<T>(x, l, [&](std::int64_t o, auto&& visit) {
    bool acc = kAll;
    visit([&](T v, std::int64_t) {
      // NOTE: NaN is non-zero, so it counts as true (as PyTorch).
      bool nz = v != T(0);
      acc = kAll ? (acc && nz) : (acc || nz);
    });
    out[o] = acc;
  });
}

template <typename T, typename O>
void cumsum_kernel(const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner, O* out) {
  using A = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      A acc = 0;  // NOTE: float32 accumulates in double, as PyTorch's CPU kernel
      for (std::int64_t k = 0; k < n; ++k) {
        std::int64_t at = (o * n + k) * inner + i;
        if constexpr (std::is_integral_v<A>)
          acc = wrapping_add(acc, static_cast<A>(x[at]));
        else
          acc += static_cast<A>(x[at]);
        out[at] = static_cast<O>(acc);
      }
    }
}

#define MG_REDUCE_INSTANTIATE(T, O)                                                         \
  template void sum_kernel<T, O>(const T*, const ReduceLayout&, O*);                        \
  template void extreme_kernel<true, T>(const T*, const ReduceLayout&, T*, std::int64_t*);  \
  template void extreme_kernel<false, T>(const T*, const ReduceLayout&, T*, std::int64_t*); \
  template void all_any_kernel<true, T>(const T*, const ReduceLayout&, bool*);              \
  template void all_any_kernel<false, T>(const T*, const ReduceLayout&, bool*);             \
  template void cumsum_kernel<T, O>(const T*, std::int64_t, std::int64_t, std::int64_t, O*);
MG_REDUCE_INSTANTIATE(float, float)
MG_REDUCE_INSTANTIATE(double, double)
MG_REDUCE_INSTANTIATE(std::int64_t, std::int64_t)
MG_REDUCE_INSTANTIATE(bool, std::int64_t)
#undef MG_REDUCE_INSTANTIATE
template void sum_leading_rows<float>(const float*, std::int64_t, std::int64_t, float*);
template void sum_leading_rows<double>(const double*, std::int64_t, std::int64_t, double*);

}  // namespace minigrad::detail
