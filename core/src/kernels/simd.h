#pragma once
// Private: run-time CPU dispatch of the hand-vectorised float32 kernels.
//
// Note [Runtime SIMD dispatch]
// The library is compiled for plain x86-64 (or whatever the target is), never -march=native. The
// float32 softmax kernels and their exp are written once over xsimd::batch<float, A>
// (softmax_simd_impl.h, vec_math.h) and compiled once per architecture, each in its own
// translation unit with its -m flags: softmax_avx2.cpp (-mavx2 -mfma,
// xsimd::fma3<xsimd::avx2>) and softmax_avx512.cpp (-mavx512f, xsimd::avx512f). No SSE2 level:
// compiled over xsimd::sse2 the same code ran slower than the portable float32 path (xsimd's
// own exp, 4 lanes), which therefore stays for x86-64 CPUs without AVX2. simd.cpp asks the CPU once
// which of them may run and hands out their function table; off x86-64 the table is null and
// callers keep their portable code. Why: one binary for every x86-64 (and non-x86) machine, yet
// AVX2 / AVX-512 speed where available, as PyTorch's ATen dispatches its CPU kernels. Used by
// softmax / log_softmax (kernels/softmax.cpp), the float unary ops (kernels/unary.cpp) and the
// fused Adam update (kernels/optim.cpp, optim_simd_impl.h); layer_norm's float32 rows are two more
// such files (norm_avx2.cpp, norm_avx512.cpp: Note [Layer norm kernels] in norm.cpp). Not
// xsimd::dispatch: xsimd 8.1.0's reads CPUID only, without XGETBV, so on a CPU whose OS does not
// save the YMM / ZMM registers (a VM with AVX-512 masked off in XCR0) it would run AVX-512 code and
// crash; and it can neither be capped (MINIGRAD_CPU_CAPABILITY) nor asked for one level (the tests
// run every level this CPU has).
// __builtin_cpu_supports checks both CPUID and XGETBV.
#include <cstdint>

#include "optim.h"  // relative: tests include this file by path

namespace minigrad::detail::simd {

/// kPortable: the scalar / xtensor code in ops/softmax.cpp (float64 always; float32 off x86-64).
enum class Level { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

/// The kernels of one instruction set (float32, and MT19937's integer twist). Shapes are (outer, n,
/// inner) of a contiguous tensor around the reduced dim (inner == 1: contiguous rows of n).
struct Kernels {
  Level level;
  const char* name;
  /// y[i] = exp(x[i]) for n values (y may equal x); ~1 ulp, exp(-inf) = 0, exp(nan) = nan.
  void (*exp)(const float* x, float* y, std::int64_t n);
  /// softmax (log_softmax when log) of x along the middle dim into y.
  void (*softmax_forward)(const float* x, float* y, std::int64_t outer, std::int64_t n,
                          std::int64_t inner, bool log);
  /// The max of n contiguous values (NaN ignored; -inf for none), and sum(exp(x - m)) over
  /// them, in double (cross_entropy's logsumexp of a row, kernels/loss.cpp); m must be that max
  /// (or NaN): no x - m may be positive.
  float (*max)(const float* x, std::int64_t n);
  double (*exp_sum)(const float* x, std::int64_t n, float m);
  /// gx = y * (g - sum(g * y)) (softmax) or g - exp(y) * sum(g) (log_softmax, y its output).
  void (*softmax_backward)(const float* g, const float* y, float* gx, std::int64_t outer,
                           std::int64_t n, std::int64_t inner, bool log);
  /// y = tanh(x) and y = sigmoid(x) over n contiguous values (y may equal x; Note [Vectorised
  /// tanh and sigmoid] in activation_simd_impl.h).
  void (*tanh)(const float* x, float* y, std::int64_t n);
  void (*sigmoid)(const float* x, float* y, std::int64_t n);
  /// Their gradients from the output y: gx = g * (1 - y^2) and g * (1 - y) * y, with PyTorch's
  /// roundings (the first with one FMA).
  void (*tanh_backward)(const float* g, const float* y, float* gx, std::int64_t n);
  void (*sigmoid_backward)(const float* g, const float* y, float* gx, std::int64_t n);
  /// y = gelu(x) over n contiguous values (y may equal x), the tanh approximation when tanh_form
  /// (Note [Vectorised GELU] in gelu_simd_impl.h).
  void (*gelu)(const float* x, float* y, std::int64_t n, bool tanh_form);
  /// gx = g * gelu'(x) over n contiguous values.
  void (*gelu_backward)(const float* g, const float* x, float* gx, std::int64_t n, bool tanh_form);
  /// The fused Adam / AdamW update over n contiguous values (Note [Fused Adam], optim.h).
  void (*adam)(float* p, const float* g, float* m, float* v, float* max_v, std::int64_t n,
               const AdamCoeffs<float>& c);
  /// MT19937's twist of its 624 state words, in place, and the tempering of n words into out
  /// (Note [Our own MT19937] in mt19937.h). Not float32, but the same dispatch.
  void (*mt_twist)(std::uint32_t* x);
  void (*mt_temper)(const std::uint32_t* x, std::uint32_t* out, std::int64_t n);
  /// c [m, n] = alpha op(a) op(b) + beta c, any m, n, k (Note [Panel GEMM] in gemm.cpp), with
  /// gemm()'s arguments; beta 0 does not read c.
  void (*gemm)(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
               std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc,
               float alpha, float beta);
};

/// PyTorch's float32 normal transform over `blocks` blocks of 16 uniforms, in place
/// (random.cpp's normal_fill), 8 lanes at a time as PyTorch's AVX2 kernel: the same bits as the
/// scalar emulation, on every AVX2 or AVX-512 CPU.
using NormalBlocks = void (*)(float* d, std::int64_t blocks, float mean, float stddev);
/// Defined in normal_avx2.cpp (-mavx2 -mfma -ffp-contract=off); null off x86-64. Call it only when
/// kernels_f32() is not null (the CPU has AVX2 and FMA).
NormalBlocks normal_blocks_avx2();

/// The best level this CPU supports among those compiled in (kPortable off x86-64).
Level detected_level();

/// Caps the level used from now on (tests compare every path); kAvx512 lifts the cap. The initial
/// cap comes from MINIGRAD_CPU_CAPABILITY=default|avx2|avx512 (as ATEN_CPU_CAPABILITY), if
/// set.
void set_max_level(Level level);

/// The kernels to use now (detected level, capped by set_max_level), or nullptr: portable code.
const Kernels* kernels_f32();

/// The kernels of one level if compiled in and supported by this CPU, else nullptr.
const Kernels* kernels_f32_at(Level level);

// Defined in softmax_avx2.cpp / softmax_avx512.cpp; null when that file was compiled without its
// instruction set (not x86-64).
const Kernels* avx2_kernels_f32();
const Kernels* avx512_kernels_f32();

}  // namespace minigrad::detail::simd
