#pragma once
// Private: the 32-bit Mersenne Twister of the CPU generator (random_engine.h).
//
// Note [Our own MT19937]
// PyTorch's CPU generator is MT19937 (Matsumoto and Nishimura 1998), and libstdc++'s std::mt19937
// gives the same outputs for the same 32-bit seed; minigrad used std::mt19937 until dropout's
// draws became a visible part of a tiny_lm training step. std::mt19937 keeps its 624 words private,
// so its twist (which refills all 624 at once) and its per-draw tempering run one word at a time.
// This class is the same algorithm with the same state and the same outputs, draw for draw, but
//   - twist() and fill() run over the words as vectors: the SIMD kernel table's mt_twist and
//     mt_temper (mt19937_simd_impl.h; AVX2 8 and AVX-512 16 words at a time), with the portable
//     loops of mt19937.cpp as the fallback;
//   - fill(out, n) hands out n outputs in one call, for loops that draw a block at a time
//   (dropout);
//   - words() / position() expose the state, which get_state / set_state (random.cpp) store in
//     PyTorch's layout without going through std::mt19937's text format.
// The twist vectorises because x[i] depends on x[i + 1] (not yet updated), x[i + 397] (not yet
// updated while i < 227) and x[i - 227] (updated 227 words earlier): any block of up to 227 words
// reads only values the sequential loop would read. tests/core/test_random.cpp checks the outputs
// against std::mt19937 on every SIMD level, across block boundaries and interleaved with single
// draws.
#include <cstdint>

namespace minigrad::detail {

class Mt19937 {
 public:
  static constexpr int kWords = 624;

  explicit Mt19937(std::uint32_t seed = 5489u) { this->seed(seed); }

  /// std::mt19937::seed(s): the state from Knuth's initialisation, the next draw twists first.
  void seed(std::uint32_t s);

  /// The next output (std::mt19937's operator()).
  std::uint32_t operator()() {
    if (p_ >= kWords) twist();
    return temper(x_[p_++]);
  }

  /// out[0 .. n) = the next n outputs: the same as n calls of operator().
  void fill(std::uint32_t* out, std::int64_t n);

  /// The 624 state words and the index of the next word to temper (libstdc++'s _M_x and _M_p:
  /// 624 means "twist before the next draw").
  const std::uint32_t* words() const { return x_; }
  int position() const { return p_; }
  /// Sets words and position (0 <= position <= 624), as std::mt19937's operator>> does.
  void set_state(const std::uint32_t* words, int position);

  static std::uint32_t temper(std::uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9D2C5680u;
    y ^= (y << 15) & 0xEFC60000u;
    return y ^ (y >> 18);
  }

 private:
  void twist();

  alignas(64) std::uint32_t x_[kWords];
  int p_ = kWords;
};

/// The portable forms of the SIMD kernels mt_twist and mt_temper (and their tails).
/// Regenerates all 624 words of state in place.
void mt_twist_portable(std::uint32_t* x);
/// out[i] = temper(x[i]) for i in [0, n).
void mt_temper_portable(const std::uint32_t* x, std::uint32_t* out, std::int64_t n);

}  // namespace minigrad::detail
