#pragma once
// Private: the project's single include of xtensor (0.26 moved the headers; change them here).
// Use xt::adapt over minigrad's own buffers and write results with xt::noalias(out) = expr;.
// Never keep an `auto` expression beyond its statement and never xt::eval a reducer
// (docs/architecture.md, "xtensor traps").
#include <array>
#include <cstddef>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>

namespace minigrad::detail {

/// A 1-D xtensor view of n elements at ptr (no copy, no ownership).
template <typename T>
auto adapt_1d(T* ptr, std::size_t n) {
  return xt::adapt(ptr, n, xt::no_ownership(), std::array<std::size_t, 1>{n});
}

}  // namespace minigrad::detail
