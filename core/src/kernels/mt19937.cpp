// MT19937 (Note [Our own MT19937] in mt19937.h): seeding, the portable twist and tempering, and
// the dispatch to the SIMD kernel table.
#include "kernels/mt19937.h"

#include <algorithm>

#include "kernels/simd.h"
#include "minigrad/error.h"

namespace minigrad::detail {

void Mt19937::seed(std::uint32_t s) {
  x_[0] = s;
  for (int i = 1; i < kWords; ++i) {
    x_[i] = 1812433253u * (x_[i - 1] ^ (x_[i - 1] >> 30)) + static_cast<std::uint32_t>(i);
  }
  p_ = kWords;
}

void Mt19937::set_state(const std::uint32_t* words, int position) {
  MG_CHECK(position >= 0 && position <= kWords, "set_state", "the MT19937 position is ", position,
           ", must be in [0, ", kWords, "]");
  std::copy(words, words + kWords, x_);
  p_ = position;
}

void mt_twist_portable(std::uint32_t* x) {
  constexpr int kN = Mt19937::kWords, kM = 397;
  for (int i = 0; i < kN; ++i) {
    const std::uint32_t y = (x[i] & 0x80000000u) | (x[(i + 1) % kN] & 0x7FFFFFFFu);
    x[i] = x[(i + kM) % kN] ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908B0DFu);
  }
}

void mt_temper_portable(const std::uint32_t* x, std::uint32_t* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = Mt19937::temper(x[i]);
}

void Mt19937::twist() {
  if (const simd::Kernels* k = simd::kernels_f32()) {
    k->mt_twist(x_);
  } else {
    mt_twist_portable(x_);
  }
  p_ = 0;
}

void Mt19937::fill(std::uint32_t* out, std::int64_t n) {
  const simd::Kernels* k = simd::kernels_f32();
  while (n > 0) {
    if (p_ >= kWords) twist();
    const std::int64_t m = std::min<std::int64_t>(n, kWords - p_);
    if (k) {
      k->mt_temper(x_ + p_, out, m);
    } else {
      mt_temper_portable(x_ + p_, out, m);
    }
    p_ += static_cast<int>(m);
    out += m;
    n -= m;
  }
}

}  // namespace minigrad::detail
