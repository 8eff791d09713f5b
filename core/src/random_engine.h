#pragma once
// Private: the CPU random generator, bit-identical to PyTorch 1.13's default CPU generator
// (CPUGeneratorImpl plus the x86 AVX2 distribution kernels, as shipped in Linux builds).
//
// Everything that draws random numbers (randn/rand/randint, nn::init) goes through this file so
// that one seed gives PyTorch's exact values. The algorithms and their subtle points are
// documented next to the implementations in random.cpp.
#include <cstdint>
#include <mutex>
#include <optional>

#include "kernels/mt19937.h"

namespace minigrad::detail {

/// PyTorch's CPU generator: a 32-bit MT19937 engine plus the cached "spare" normal sample of the
/// per-element Box-Muller path.
///
/// Not synchronised by itself: hold `mutex` for every sequence of draws that must not interleave
/// with another thread's draws (in practice: one tensor fill), e.g.
///   Generator& g = default_generator();
///   std::lock_guard<std::mutex> lock(g.mutex);
///   g.uniform_(w.data_ptr<float>(), w.numel(), -bound, bound);
///
/// The fill functions take a contiguous row-major buffer of n elements and fill it in memory
/// order, exactly like PyTorch fills a fresh contiguous tensor.
struct Generator {
  std::mutex mutex;
  /// MT19937 (Note [Our own MT19937]): std::mt19937's and torch's mt19937 outputs. Seeded like
  /// a fresh torch.Generator(): 67280421310721, of which the engine keeps the low 32 bits.
  Mt19937 engine{0xF19CD101u};
  /// Box-Muller's second (sin) value, cached by normal_sample and consumed by its next call.
  std::optional<double> spare;
  /// The last seed given (torch's initial_seed()); a fresh generator's is 67280421310721.
  std::uint64_t initial_seed = 67280421310721ULL;

  /// torch.manual_seed: the engine gets the low 32 bits only, and the spare is cleared.
  void seed(std::uint64_t seed);
  // The four draws below are defined here, inline, so that fill loops inline them: core is
  // built with -fPIC, and GCC does not inline a function with external linkage defined in the
  // same .cpp there (it could be interposed), which cost a call per element.

  /// One 32-bit engine output.
  std::uint32_t random() { return static_cast<std::uint32_t>(engine()); }
  /// Two engine outputs, the first one is the HIGH word (torch-rng-parity §1).
  std::uint64_t random64() {
    const std::uint64_t hi = random();
    const std::uint64_t lo = random();
    return (hi << 32) | lo;
  }
  /// U[0,1) float: 1 draw, 24 low bits. torch-rng-parity §2: the 24 LOW bits of one draw, times
  /// 2^-24 (exact).
  float uniform_float() { return static_cast<float>(random() & 0xFFFFFFu) * 0x1p-24f; }
  /// U[0,1) double: 1 random64 (2 draws), 53 low bits. torch-rng-parity §2: the 53 LOW bits of
  /// hi:lo, times 2^-53 (exact).
  double uniform_double() {
    return static_cast<double>(random64() & ((std::uint64_t{1} << 53) - 1)) * 0x1p-53;
  }

  /// u[0 .. n) = n calls of uniform_float() (uniform_double()), the engine's outputs drawn in
  /// blocks (Mt19937::fill) and converted by a loop the compiler vectorises.
  void uniform01_fill(float* u, std::int64_t n);
  void uniform01_fill(double* u, std::int64_t n);

  /// One normal sample of the per-element path (float64 Box-Muller with the spare), returned as
  /// fma(z, stddev, mean) in double. PyTorch uses it for every element of tensors with fewer than
  /// 16 elements and of non-contiguous tensors; the caller rounds it to the tensor dtype.
  double normal_sample(double mean, double stddev);

  /// tensor.uniform_(from, to): bounds are first rounded to the element type, then each element
  /// is fma(U, to - from, from). 1 draw per float, 2 per double.
  void uniform_(float* data, std::int64_t n, double from, double to);
  void uniform_(double* data, std::int64_t n, double from, double to);

  /// tensor.normal_(mean, std) on a contiguous buffer: n >= 16 uses the 16-wide fill path
  /// (float32: the vectorised Cephes kernel emulated exactly), n < 16 uses normal_sample.
  void normal_(float* data, std::int64_t n, double mean, double stddev);
  void normal_(double* data, std::int64_t n, double mean, double stddev);

  /// torch.randint(low, high): (v % (high - low)) + low with v a 32-bit draw, or a random64 when
  /// high - low >= 2^32. Requires low < high.
  void random_from_to_(std::int64_t* data, std::int64_t n, std::int64_t low, std::int64_t high);
};

/// The process-wide default generator (torch's default CPU generator). Unlike torch, it starts
/// from a fixed seed (that of a fresh torch.Generator()), so unseeded runs are reproducible too.
Generator& default_generator();

/// The scalar emulation of PyTorch's float32 normal transform (random.cpp, torch-rng-parity
/// §5.2) over `blocks` blocks of 16 uniforms at d, in place: lanes 0-7 of a block are the radius
/// inputs, 8-15 the angle inputs. The reference the AVX2 kernel is tested against.
void normal_blocks_scalar(float* d, std::int64_t blocks, float mean, float stddev);

}  // namespace minigrad::detail
