#pragma once
// Private: MT19937's twist and tempering (Note [Our own MT19937] in mt19937.h) written once over
// xsimd::batch<std::uint32_t, A>, compiled by softmax_avx2.cpp and softmax_avx512.cpp. Internal
// linkage only, as vec_math.h explains: this file must not include mt19937.h, whose inline
// member functions compiled here with -mavx512f could be the copy the linker keeps.
#include <xsimd/xsimd.hpp>

#include <cstdint>

namespace minigrad::detail::simd {
namespace {

/// y = (a & upper bit) | (b & lower 31 bits); returns (y >> 1) ^ (y odd ? 0x9908B0DF : 0).
template <class U>
U mt_mix(U a, U b) {
  const U y = (a & U(0x80000000u)) | (b & U(0x7FFFFFFFu));
  return (y >> 1) ^ ((U(0u) - (y & U(1u))) & U(0x9908B0DFu));
}

template <class A>
void mt_twist_kernel(std::uint32_t* x) {
  using U = xsimd::batch<std::uint32_t, A>;
  constexpr int W = static_cast<int>(U::size);
  constexpr int kN = 624, kM = 397;
  // i in [0, N - M): x[i + M] is an old word; in [N - M, N - 1): x[i + M - N] was updated 227
  // words earlier (more than W). Blocks first, the few words left over one at a time (scalar
  // code, the same formula).
  int i = 0;
  for (; i + W <= kN - kM; i += W) {
    const U r = mt_mix(U::load_unaligned(x + i), U::load_unaligned(x + i + 1)) ^
                U::load_unaligned(x + i + kM);
    r.store_unaligned(x + i);
  }
  for (; i < kN - kM; ++i) {
    const std::uint32_t y = (x[i] & 0x80000000u) | (x[i + 1] & 0x7FFFFFFFu);
    x[i] = x[i + kM] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);
  }
  for (; i + W <= kN - 1; i += W) {
    const U r = mt_mix(U::load_unaligned(x + i), U::load_unaligned(x + i + 1)) ^
                U::load_unaligned(x + i + kM - kN);
    r.store_unaligned(x + i);
  }
  for (; i < kN - 1; ++i) {
    const std::uint32_t y = (x[i] & 0x80000000u) | (x[i + 1] & 0x7FFFFFFFu);
    x[i] = x[i + kM - kN] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);
  }
  const std::uint32_t y = (x[kN - 1] & 0x80000000u) | (x[0] & 0x7FFFFFFFu);
  x[kN - 1] = x[kM - 1] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);
}

template <class A>
void mt_temper_kernel(const std::uint32_t* x, std::uint32_t* out, std::int64_t n) {
  using U = xsimd::batch<std::uint32_t, A>;
  constexpr std::int64_t W = static_cast<std::int64_t>(U::size);
  std::int64_t i = 0;
  for (; i + W <= n; i += W) {
    U y = U::load_unaligned(x + i);
    y = y ^ (y >> 11);
    y = y ^ ((y << 7) & U(0x9D2C5680u));
    y = y ^ ((y << 15) & U(0xEFC60000u));
    y = y ^ (y >> 18);
    y.store_unaligned(out + i);
  }
  for (; i < n; ++i) {
    std::uint32_t y = x[i];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    out[i] = y ^ (y >> 18);
  }
}

}  // namespace
}  // namespace minigrad::detail::simd
