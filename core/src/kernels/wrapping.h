#pragma once
// Private: integer arithmetic that wraps around on overflow, as PyTorch's does (two's
// complement). Signed overflow is undefined behaviour in C++, so int64 values are added,
// subtracted, multiplied and negated as uint64 and converted back (well defined since C++20).
// Other types (float, double, bool) use the plain operators.
#include <cstdint>
#include <type_traits>

namespace minigrad::detail {

template <typename T>
inline constexpr bool kWraps = std::is_same_v<T, std::int64_t>;

template <typename T>
T wrapping_add(T a, T b) {
  if constexpr (kWraps<T>)
    return static_cast<T>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else
    return static_cast<T>(a + b);
}

template <typename T>
T wrapping_sub(T a, T b) {
  if constexpr (kWraps<T>)
    return static_cast<T>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
  else
    return static_cast<T>(a - b);
}

template <typename T>
T wrapping_mul(T a, T b) {
  if constexpr (kWraps<T>)
    return static_cast<T>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else
    return static_cast<T>(a * b);
}

/// -v; for int64, -INT64_MIN wraps to INT64_MIN (as PyTorch).
template <typename T>
T wrapping_neg(T v) {
  if constexpr (kWraps<T>)
    return static_cast<T>(std::uint64_t{0} - static_cast<std::uint64_t>(v));
  else
    return -v;
}

/// base^exp for exp >= 0 by repeated squaring (O(log exp) steps, wrapping like the products).
template <typename T>
T wrapping_pow(T base, T exp) {
  T result = 1;
  for (; exp > 0; exp /= 2) {
    if (exp % 2 == 1) result = wrapping_mul(result, base);
    if (exp > 1) base = wrapping_mul(base, base);
  }
  return result;
}

}  // namespace minigrad::detail
