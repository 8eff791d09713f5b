// Random numbers bit-identical to PyTorch 1.13's CPU generator (x86-64 Linux build, AVX2 kernels,
// glibc libm): MT19937, its uniform conversions, randint's modulo, and the two normal algorithms
// (the 16-wide fill for contiguous tensors with >= 16 elements, per-element Box-Muller with a
// cached spare otherwise).
//
// This file is compiled with -ffp-contract=off (core/CMakeLists.txt): every multiply-add that
// PyTorch's build fuses is written as an explicit std::fma, and every other one must stay two
// roundings. A contracting compiler would otherwise change the last bits.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <sstream>
#include <type_traits>

#include "kernels/cephes_f32.h"
#include "kernels/dispatch.h"
#include "kernels/simd.h"
#include "minigrad/generator.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/random.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/profiler.h"
#include "parallel.h"
#include "random_engine.h"
#include "tensor_impl.h"

namespace minigrad {
namespace detail {
namespace {

// ---------------------------------------------------------------- Cephes float32 math
// torch-rng-parity §5.2: for float32 the AVX2 normal kernel (normal_fill_16_AVX2) does not use
// libm: log/sin/cos come from ATen's avx_mathfun.h (Pommier's Cephes-based SSE routines ported to
// AVX). Below is a scalar emulation of one lane. GCC -O2 -mfma, which built PyTorch, contracts 20
// of the routines' separate mul/add intrinsics into FMAs; those are the std::fma calls (checked
// exhaustively over every input the kernel can see: all k * 2^-24 values). Everything else is a
// plain float32 operation with its own rounding. The constants are in kernels/cephes_f32.h; the
// same 8 lanes at once, with AVX2 instructions, are kernels/normal_avx2.cpp.
using namespace cephes;

/// log256_ps for one lane. Here x is in (0, 1].
float cephes_log(float x) {
  const bool invalid = x <= 0.0f;  // the kernel ORs an all-ones mask in: NaN
  x = std::max(x, kMinNormPos);    // flushes denormals
  // Split x = m * 2^e with m in [0.5, 1), straight from the bits.
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const std::int32_t biased = static_cast<std::int32_t>(bits >> 23) - 127;
  const float m = std::bit_cast<float>((bits & 0x807FFFFFu) | 0x3F000000u);
  float e = static_cast<float>(biased) + 1.0f;
  // If m < sqrt(1/2): e -= 1 and t = 2m - 1 (computed as (m - 1) + m), else t = m - 1.
  const bool below = m < kSqrtHalf;
  float t = m - 1.0f;
  e = e - (below ? 1.0f : 0.0f);
  t = t + (below ? m : 0.0f);
  const float z = t * t;
  float y = kLogP[0];
  for (int k = 1; k <= 8; ++k) y = std::fma(y, t, kLogP[k]);  // fused by GCC
  y = y * t;
  y = std::fma(y, z, e * kLogQ1);  // fused by GCC; e * Q1 is rounded on its own
  y = y - z * 0.5f;                // z * 0.5 is exact
  t = t + y;
  t = std::fma(e, kLogQ2, t);  // fused by GCC
  return invalid ? std::numeric_limits<float>::quiet_NaN() : t;
}

/// sincos256_ps for one lane. Here t = kTwoPiF * u is in [0, 2*pi).
void cephes_sincos(float t, float& sin_out, float& cos_out) {
  std::uint32_t sign_sin = std::bit_cast<std::uint32_t>(t) & 0x80000000u;
  float x = std::fabs(t);
  // Octant j (rounded up to even), and the reduced argument x - j * pi/4 in three pieces.
  float y = x * kFourOverPi;
  std::int32_t j = static_cast<std::int32_t>(y);  // truncation, as cvttps
  j = (j + 1) & ~1;
  y = static_cast<float>(j);
  const auto uj = static_cast<std::uint32_t>(j);
  sign_sin ^= (uj & 4u) << 29;
  const bool sin_poly_is_sin = (uj & 2u) == 0;  // else the two polynomials swap roles
  const std::uint32_t sign_cos = (~(uj - 2u) & 4u) << 29;
  x = std::fma(y, kMinusDP1, x);  // the three reductions are fused by GCC
  x = std::fma(y, kMinusDP2, x);
  x = std::fma(y, kMinusDP3, x);
  const float z = x * x;
  // Cosine polynomial on [-pi/4, pi/4].
  float c = std::fma(kCosP0, z, kCosP1);  // fused by GCC
  c = std::fma(c, z, kCosP2);             // fused by GCC
  c = c * z;
  c = std::fma(c, z, -(z * 0.5f));  // fused by GCC (fmsub)
  c = c + 1.0f;
  // Sine polynomial on [-pi/4, pi/4].
  float s = std::fma(kSinP0, z, kSinP1);  // fused by GCC
  s = std::fma(s, z, kSinP2);             // fused by GCC
  s = s * z;
  s = std::fma(s, x, x);  // fused by GCC
  // The kernel selects with bit masks and then adds/subtracts; replayed literally (it only maps
  // -0 to +0, which cannot occur for angles in [0, 2*pi)).
  const float s_keep = sin_poly_is_sin ? s : 0.0f;
  const float c_keep = sin_poly_is_sin ? 0.0f : c;
  const float s_rest = s - s_keep;
  const float c_rest = c - c_keep;
  sin_out = std::bit_cast<float>(std::bit_cast<std::uint32_t>(c_keep + s_keep) ^ sign_sin);
  cos_out = std::bit_cast<float>(std::bit_cast<std::uint32_t>(c_rest + s_rest) ^ sign_cos);
}

// ---------------------------------------------------------------- 16-wide normal transforms
// torch-rng-parity §5.1: the fill path first writes n uniforms, then turns each block of 16 into
// 16 normals with Box-Muller. Lanes 0-7 hold the radius inputs and lanes 8-15 the angle inputs;
// the cos result goes to slot j and the sin result to slot j+8.

/// float32 block, the AVX2 kernel (§5.2): Cephes math, float32 angle, explicit fma affine step.
void transform16(float* d, float mean, float stddev) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];  // (0, 1]: never log(0)
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_log(u1));
    const float theta = kTwoPiF * u2;
    float s = 0.0f;
    float c = 0.0f;
    cephes_sincos(theta, s, c);
    d[j] = std::fma(radius * c, stddev, mean);
    d[j + 8] = std::fma(radius * s, stddev, mean);
  }
}

/// float64 block, the scalar kernel (§5.1): libm log/cos/sin, the angle is 2*pi (a double) times
/// u2, and the affine step is fused as in PyTorch's FMA-enabled build.
void transform16(double* d, double mean, double stddev) {
  for (int j = 0; j < 8; ++j) {
    const double u1 = 1.0 - d[j];
    const double u2 = d[j + 8];
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double theta = 6.283185307179586 * u2;
    d[j] = std::fma(radius * std::cos(theta), stddev, mean);
    d[j + 8] = std::fma(radius * std::sin(theta), stddev, mean);
  }
}

}  // namespace

void normal_blocks_scalar(float* d, std::int64_t blocks, float mean, float stddev) {
  for (std::int64_t b = 0; b < blocks; ++b) transform16(d + 16 * b, mean, stddev);
}

namespace {

/// `blocks` blocks of 16 uniforms at d into normals: float32 with the AVX2 kernel when the CPU
/// (and MINIGRAD_CPU_CAPABILITY) allows it, else the scalar emulation; the same bits either way
/// (tests/core/test_random.cpp checks every input).
void normal_blocks(float* d, std::int64_t blocks, float mean, float stddev) {
  if (simd::kernels_f32() != nullptr) {
    if (const simd::NormalBlocks kernel = simd::normal_blocks_avx2()) {
      kernel(d, blocks, mean, stddev);
      return;
    }
  }
  normal_blocks_scalar(d, blocks, mean, stddev);
}

void normal_blocks(double* d, std::int64_t blocks, double mean, double stddev) {
  for (std::int64_t b = 0; b < blocks; ++b) transform16(d + 16 * b, mean, stddev);
}

// Blocks of engine outputs: Mt19937::fill tempers them as vectors, and the conversion loops below
// vectorise too (the 24 low bits fit an int32, whose conversion to float is one instruction).
constexpr std::int64_t kDrawBlock = 256;

/// normal_fill: n >= 16. Draws n uniforms (twice as many engine outputs for double), transforms
/// every full block, and if n % 16 != 0 redraws 16 NEW uniforms into the last 16 slots and
/// transforms them again, overwriting finished outputs in the overlap (§5.1). So randn(17) costs
/// 33 draws, and randn(n) is not a prefix of randn(n + 1).
template <typename T>
void normal_fill(Generator& g, T* data, std::int64_t n, T mean, T stddev) {
  g.uniform01_fill(data, n);
  normal_blocks(data, n / 16, mean, stddev);
  if (n % 16 != 0) {
    T* tail = data + n - 16;
    g.uniform01_fill(tail, 16);
    normal_blocks(tail, 1, mean, stddev);
  }
}

template <typename T>
void normal_impl(Generator& g, T* data, std::int64_t n, double mean, double stddev) {
  if (n >= 16) {
    // §5.0: the fill path works in the element type, so mean/std are rounded to T first.
    normal_fill<T>(g, data, n, static_cast<T>(mean), static_cast<T>(stddev));
  } else {
    // §5.4: every element goes through the double Box-Muller with the spare, then is rounded.
    for (std::int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(g.normal_sample(mean, stddev));
  }
}

template <typename T>
void uniform_impl(Generator& g, T* data, std::int64_t n, double from_d, double to_d) {
  // torch-rng-parity §3: the bounds are rounded to T before the range is computed in T, and the
  // affine step is one fma (PyTorch's AVX2 uniform kernel is built with -mfma). For [0, 1) the
  // fma is exact either way; for other bounds it changes the last bit of about half the values.
  const T from = static_cast<T>(from_d);
  const T to = static_cast<T>(to_d);
  const T range = to - from;
  g.uniform01_fill(data, n);
  for (std::int64_t i = 0; i < n; ++i) data[i] = std::fma(data[i], range, from);
}

}  // namespace

// ---------------------------------------------------------------- Generator

void Generator::uniform01_fill(float* u, std::int64_t n) {
  std::uint32_t r[kDrawBlock];
  for (std::int64_t i0 = 0; i0 < n; i0 += kDrawBlock) {
    const std::int64_t nb = std::min(kDrawBlock, n - i0);
    engine.fill(r, nb);
    for (std::int64_t k = 0; k < nb; ++k) {
      u[i0 + k] = static_cast<float>(static_cast<std::int32_t>(r[k] & 0xFFFFFFu)) * 0x1p-24f;
    }
  }
}

void Generator::uniform01_fill(double* u, std::int64_t n) {
  std::uint32_t r[2 * kDrawBlock];
  for (std::int64_t i0 = 0; i0 < n; i0 += kDrawBlock) {
    const std::int64_t nb = std::min(kDrawBlock, n - i0);
    engine.fill(r, 2 * nb);
    for (std::int64_t k = 0; k < nb; ++k) {
      const std::uint64_t v = (std::uint64_t{r[2 * k]} << 32) | r[2 * k + 1];  // hi, then lo
      u[i0 + k] =
          static_cast<double>(static_cast<std::int64_t>(v & ((std::uint64_t{1} << 53) - 1))) *
          0x1p-53;
    }
  }
}

void Generator::seed(std::uint64_t seed) {
  // torch-rng-parity §1: manual_seed keeps the full 64-bit value for initial_seed() but seeds
  // MT19937 with the low 32 bits only (manual_seed(2^32 + 5) == manual_seed(5)); negative Python
  // seeds arrive here as their two's complement. Seeding also drops the cached normal.
  engine.seed(static_cast<std::uint32_t>(seed & 0xFFFFFFFFu));
  spare.reset();
  initial_seed = seed;
}

double Generator::normal_sample(double mean, double stddev) {
  // torch-rng-parity §5.4. A pair costs two uniform_double (4 engine draws). Note the role swap
  // against the fill path: here the FIRST uniform is the angle and the second the radius. The sin
  // value is cached in the generator, so it survives across calls and dtypes; only seed() clears
  // it, and the fill path neither reads nor clears it.
  double z = 0.0;
  if (spare) {
    z = *spare;
    spare.reset();
  } else {
    const double u_angle = uniform_double();
    const double u_radius = uniform_double();
    const double radius = std::sqrt(-2.0 * std::log(1.0 - u_radius));
    const double theta = 6.283185307179586 * u_angle;
    spare = radius * std::sin(theta);
    z = radius * std::cos(theta);
  }
  return std::fma(z, stddev, mean);  // fused in PyTorch's FMA build
}

void Generator::uniform_(float* data, std::int64_t n, double from, double to) {
  uniform_impl(*this, data, n, from, to);
}
void Generator::uniform_(double* data, std::int64_t n, double from, double to) {
  uniform_impl(*this, data, n, from, to);
}
void Generator::normal_(float* data, std::int64_t n, double mean, double stddev) {
  normal_impl(*this, data, n, mean, stddev);
}
void Generator::normal_(double* data, std::int64_t n, double mean, double stddev) {
  normal_impl(*this, data, n, mean, stddev);
}

void Generator::random_from_to_(std::int64_t* data, std::int64_t n, std::int64_t low,
                                std::int64_t high) {
  // torch-rng-parity §4: the range is taken in uint64 and the sum wraps, so the full int64 span
  // works. Ranges >= 2^32 cost 2 draws per element.
  const std::uint64_t range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint64_t v = range >= (std::uint64_t{1} << 32) ? random64() : random();
    data[i] = static_cast<std::int64_t>(v % range + static_cast<std::uint64_t>(low));
  }
}

Generator& default_generator() {
  static Generator g;
  return g;
}

// The one way to a public Generator's engine (Generator::impl() is private; this file alone
// defines its friend).
struct GeneratorAccess {
  static Generator& engine(const minigrad::Generator& generator) { return generator.impl(); }
};

}  // namespace detail

// ---------------------------------------------------------------- public API

void manual_seed(std::uint64_t seed) {
  detail::Generator& g = detail::default_generator();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.seed(seed);
}

namespace {
void check_shape(const Shape& shape, const char* op) {
  for (auto s : shape)
    MG_CHECK(s >= 0, op, "trying to create a tensor with negative dimension ", s, ": ", shape);
}
}  // namespace

namespace {

Tensor rand_from(detail::Generator& g, const Shape& shape, Dtype dtype) {
  MG_PROFILE_OP("rand");
  check_shape(shape, "rand");
  MG_CHECK(is_floating_point(dtype), "rand", "dtype must be float32 or float64, got ",
           dtype_name(dtype));
  Tensor out = detail::make_tensor(shape, dtype);
  std::lock_guard<std::mutex> lock(g.mutex);
  detail::dispatch_floating(
      dtype, "rand", [&]<typename T>() { g.uniform_(out.data_ptr<T>(), out.numel(), 0.0, 1.0); });
  return out;
}

Tensor randn_from(detail::Generator& g, const Shape& shape, Dtype dtype) {
  MG_PROFILE_OP("randn");
  check_shape(shape, "randn");
  MG_CHECK(is_floating_point(dtype), "randn", "dtype must be float32 or float64, got ",
           dtype_name(dtype));
  Tensor out = detail::make_tensor(shape, dtype);
  std::lock_guard<std::mutex> lock(g.mutex);
  detail::dispatch_floating(
      dtype, "randn", [&]<typename T>() { g.normal_(out.data_ptr<T>(), out.numel(), 0.0, 1.0); });
  return out;
}

Tensor randint_from(detail::Generator& g, std::int64_t low, std::int64_t high, const Shape& shape,
                    Dtype dtype) {
  MG_PROFILE_OP("randint");
  check_shape(shape, "randint");
  MG_CHECK(high > low, "randint", "expected low < high, but got low = ", low, " and high = ", high);
  MG_CHECK(dtype == kInt64 || is_floating_point(dtype), "randint", "unsupported dtype ",
           dtype_name(dtype));
  // PyTorch draws the same integers for floating dtypes and converts them, so fill int64 first.
  Tensor out = detail::make_tensor(shape, kInt64);
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    g.random_from_to_(out.data_ptr<std::int64_t>(), out.numel(), low, high);
  }
  return dtype == kInt64 ? out : out.to(dtype);
}

}  // namespace

Tensor rand(const Shape& shape, Dtype dtype) {
  return rand_from(detail::default_generator(), shape, dtype);
}
Tensor randn(const Shape& shape, Dtype dtype) {
  return randn_from(detail::default_generator(), shape, dtype);
}
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Dtype dtype) {
  return randint_from(detail::default_generator(), low, high, shape, dtype);
}
Tensor randint(std::int64_t high, const Shape& shape, Dtype dtype) {
  return randint(0, high, shape, dtype);
}
namespace {
Tensor with_grad(Tensor out, const TensorOptions& options, const char* op) {
  return detail::apply_options(std::move(out), options, op);
}
}  // namespace
Tensor rand(const Shape& shape, const TensorOptions& options) {
  return with_grad(rand(shape, options.dtype()), options, "rand");
}
Tensor randn(const Shape& shape, const TensorOptions& options) {
  return with_grad(randn(shape, options.dtype()), options, "randn");
}
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape,
               const TensorOptions& options) {
  return with_grad(randint(low, high, shape, options.dtype_or(kInt64)), options, "randint");
}
Tensor randint(std::int64_t high, const Shape& shape, const TensorOptions& options) {
  return randint(0, high, shape, options);
}

Tensor rand(const Shape& shape, Generator& generator, Dtype dtype) {
  return rand_from(detail::GeneratorAccess::engine(generator), shape, dtype);
}
Tensor randn(const Shape& shape, Generator& generator, Dtype dtype) {
  return randn_from(detail::GeneratorAccess::engine(generator), shape, dtype);
}
Tensor randint(std::int64_t low, std::int64_t high, const Shape& shape, Generator& generator,
               Dtype dtype) {
  return randint_from(detail::GeneratorAccess::engine(generator), low, high, shape, dtype);
}

// Note [Fused dropout]
// nn::functional::dropout was rand(x.shape(), x.dtype()) >= p, .to(x.dtype()), * (1 / (1 - p)),
// then x * that mask: five passes over memory and one generator call per element. Here one pass
// draws the uniforms (256 at a time: Generator::uniform01_fill, over Note [Our own MT19937]),
// picks the scaled mask value and writes both the output and the mask, holding the generator's
// lock once for the whole tensor. The results stay bit for bit those of the composite, so every
// seed keeps its masks:
// - the uniforms are rand's: one per element in row-major order, in x's dtype (uniform_ with
//   [0, 1) is exactly uniform01, its fma is exact);
// - ge wraps the double p as a 0-dim tensor of x's dtype, so the comparison is U >= T(p), and the
//   product with the double scale is taken in T as well: the mask holds T(1 / (1 - p)) or 0;
// - x * m is one rounding in T, as the composite's last multiply (x * 0 keeps its sign and NaN).
// The mask is kept in x's dtype, not as bytes: backward is then g * m, an ordinary mul that
// create_graph differentiates again, as PyTorch's MulBackward0 for the same composite.
// The draws are sequential by nature (one engine): they fill the mask's buffer on the calling
// thread, and only the select and multiply that follow are split across threads.
namespace detail {

std::pair<Tensor, Tensor> dropout_with_mask(const Tensor& x, double p) {
  MG_CHECK(x.defined() && x.is_floating_point(), "dropout",
           "expected a defined floating-point input, got ",
           x.defined() ? dtype_name(x.dtype()) : "an undefined tensor");
  MG_CHECK(p > 0 && p < 1, "dropout", "the fused pass needs 0 < p < 1, got ", p);
  const Tensor xc = x.contiguous();  // rand's row-major order pairs with x's logical order
  Tensor out = make_tensor(x.shape(), x.dtype());
  Tensor mask = make_tensor(x.shape(), x.dtype());
  Generator& g = default_generator();
  dispatch_floating(x.dtype(), "dropout", [&]<typename T>() {
    const T threshold = static_cast<T>(p);
    const T scale = static_cast<T>(1.0 / (1.0 - p));
    const T* px = xc.data_ptr<T>();
    T* po = out.data_ptr<T>();
    T* pm = mask.data_ptr<T>();
    const std::int64_t n = xc.numel();
    // The uniforms into the mask's buffer on this thread (the draws are sequential), then the
    // select and multiply, which vectorise, across threads.
    {
      std::lock_guard<std::mutex> lock(g.mutex);
      g.uniform01_fill(pm, n);
    }
    parallel_for(0, n, kGrainSize, [&](std::int64_t b, std::int64_t e) {
      // Locals and __restrict: without them GCC 12 kept this loop scalar.
      const T t = threshold, sc = scale;
      T* __restrict m = pm + b;
      T* __restrict o = po + b;
      const T* __restrict xi = px + b;
      for (std::int64_t k = 0; k < e - b; ++k) {
        const T v = m[k] >= t ? sc : T(0);
        m[k] = v;
        o[k] = xi[k] * v;
      }
    });
  });
  return {out, mask};
}

}  // namespace detail

/// PyTorch 1.13's randperm_cpu: start from 0..n-1, then for i in [0, n-2] swap element i with
/// element i + random() % (n - i), one 32-bit draw each (a Fisher-Yates shuffle run forwards).
Tensor randperm(std::int64_t n, Generator& generator) {
  MG_PROFILE_OP("randperm");
  MG_CHECK(n >= 0, "randperm", "n must be non-negative, got ", n);
  detail::Generator& g = detail::GeneratorAccess::engine(generator);
  Tensor out = detail::make_tensor({n}, kInt64);
  std::int64_t* p = out.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < n; ++i) p[i] = i;
  std::lock_guard<std::mutex> lock(g.mutex);
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    const auto z = static_cast<std::int64_t>(g.random() % static_cast<std::uint64_t>(n - i));
    std::swap(p[i], p[i + z]);
  }
  return out;
}
Tensor randperm(std::int64_t n) {
  Generator g = default_generator();
  return randperm(n, g);
}

/// PyTorch 1.13's multinomial on the CPU. Without replacement (or for one sample): the Gumbel
/// trick, q = probs / Exp(1) with the exponentials drawn for every element in row-major order
/// (-log(1 - u), u a 53-bit double, rounded to the dtype), then argmax (one sample) or topk of
/// each row. With replacement: per row, the cumulative sums in the dtype, divided by the total,
/// the last set to 1, and for each sample the first bucket whose cumulative value is not below
/// a 53-bit uniform (a binary search).
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement,
                   Generator& generator) {
  MG_PROFILE_OP("multinomial");
  const char* op = "multinomial";
  MG_CHECK(probs.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(probs.dim() == 1 || probs.dim() == 2, op, "probs must be 1-D or 2-D, got shape ",
           probs.shape());
  MG_CHECK(probs.is_floating_point(), op, "probs must be a floating-point tensor, got ",
           dtype_name(probs.dtype()));
  MG_CHECK(num_samples > 0, op, "num_samples must be positive, got ", num_samples);
  const std::int64_t cats = probs.size(-1);
  const std::int64_t rows = probs.dim() == 1 ? 1 : probs.size(0);
  MG_CHECK(replacement || num_samples <= cats, op, "cannot draw ", num_samples,
           " samples without replacement from ", cats, " categories");
  Tensor p = probs.detach().contiguous();
  detail::Generator& g = detail::GeneratorAccess::engine(generator);
  Tensor result;
  detail::dispatch_floating(p.dtype(), op, [&]<typename T>() {
    const T* pp = p.data_ptr<T>();
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (std::int64_t c = 0; c < cats; ++c) {
        T v = pp[r * cats + c];
        MG_CHECK(std::isfinite(v) && v >= 0, op, "probabilities must be finite and non-negative, ",
                 "got ", static_cast<double>(v), " in row ", r, " at index ", c);
        sum += v;
      }
      MG_CHECK(sum > 0, op, "the probabilities of row ", r, " sum to 0");
    }
    if (!replacement || num_samples == 1) {
      Tensor q = detail::make_tensor(p.shape(), p.dtype());
      T* pq = q.data_ptr<T>();
      {
        std::lock_guard<std::mutex> lock(g.mutex);
        for (std::int64_t i = 0; i < q.numel(); ++i)
          pq[i] = static_cast<T>(-1.0 * std::log(1.0 - g.uniform_double()));
      }
      for (std::int64_t i = 0; i < q.numel(); ++i) pq[i] = pp[i] / pq[i];
      result = num_samples == 1 ? argmax(q, -1, /*keepdim=*/true)
                                : std::get<1>(topk(q, num_samples, -1));
      return;
    }
    result = detail::make_tensor(probs.dim() == 1 ? Shape{num_samples} : Shape{rows, num_samples},
                                 kInt64);
    std::int64_t* po = result.data_ptr<std::int64_t>();
    std::vector<T> cum(static_cast<std::size_t>(cats));
    std::lock_guard<std::mutex> lock(g.mutex);
    for (std::int64_t r = 0; r < rows; ++r) {
      T sum = 0;
      for (std::int64_t c = 0; c < cats; ++c) {
        sum += pp[r * cats + c];
        cum[static_cast<std::size_t>(c)] = sum;
      }
      for (T& v : cum) v /= sum;
      cum.back() = 1;
      for (std::int64_t s = 0; s < num_samples; ++s) {
        const double u = g.uniform_double();
        std::int64_t lo = 0, hi = cats;
        while (hi - lo > 0) {
          std::int64_t mid = lo + (hi - lo) / 2;
          if (cum[static_cast<std::size_t>(mid)] < u)
            lo = mid + 1;
          else
            hi = mid;
        }
        po[r * num_samples + s] = lo;
      }
    }
  });
  return result;
}
Tensor multinomial(const Tensor& probs, std::int64_t num_samples, bool replacement) {
  Generator g = default_generator();
  return multinomial(probs, num_samples, replacement, g);
}

// ---------------------------------------------------------------- in-place fills
// Tensor::uniform_/normal_/random_. PyTorch fills any tensor through a TensorIterator, which
// visits the elements in memory order (dims sorted by stride), and normal_ picks its algorithm by
// layout: the 16-wide fill only for contiguous tensors with >= 16 elements, the per-element
// Box-Muller path for everything else, including large non-contiguous views
// (torch-rng-parity §5.0 and pitfall 11). Here a non-contiguous tensor is filled through a
// contiguous buffer in memory order, then copied into the view.

namespace {

void check_fillable(const Tensor& t, const char* op) {
  MG_CHECK(t.defined(), op, "called on an undefined tensor");
  MG_CHECK(!t.impl()->is_inference || InferenceMode::is_enabled(), op,
           "in-place update to an inference tensor outside InferenceMode is not allowed; clone() "
           "it to get a normal tensor first");
  MG_CHECK(!(t.requires_grad() && is_grad_enabled()), op,
           "a tensor that requires grad cannot be filled in place (autograd would not record "
           "it); fill it under NoGradGuard");
  for (std::int64_t d = 0; d < t.dim(); ++d)
    MG_CHECK(t.stride(d) != 0 || t.size(d) <= 1, op,
             "more than one element of the written-to tensor refers to a single memory location "
             "(dim ",
             d, " of shape ", t.shape(), " has stride 0); clone() the tensor first");
}

/// Calls fill(T* data, n, contiguous) on t's elements in memory order, holding g's lock.
template <typename T, typename Fill>
void fill_in_memory_order(Tensor& t, detail::Generator& g, Fill fill) {
  const std::int64_t n = t.numel();
  detail::bump_version(t);  // one in-place write (Note [Version counters])
  if (n == 0) return;
  if (t.is_contiguous()) {
    std::lock_guard<std::mutex> lock(g.mutex);
    fill(t.data_ptr<T>(), n, true);
    return;
  }
  // The outermost dim in memory first: strides descending, ties in dim order.
  std::vector<std::int64_t> order(static_cast<std::size_t>(t.dim()));
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = static_cast<std::int64_t>(d);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return t.stride(a) > t.stride(b); });
  NoGradGuard no_grad;
  Tensor view = t.detach().permute(order);
  Tensor buf = detail::make_tensor(view.shape(), t.dtype());
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    fill(buf.data_ptr<T>(), n, false);
  }
  detail::copy_into(view, buf);
}

Tensor& uniform_impl(Tensor& t, double from, double to, detail::Generator& g) {
  MG_PROFILE_OP("uniform_");
  check_fillable(t, "uniform_");
  MG_CHECK(t.is_floating_point(), "uniform_", "expected a floating-point tensor, got ",
           dtype_name(t.dtype()));
  MG_CHECK(from <= to, "uniform_", "expects to return a [from, to) range, but found from=", from,
           " > to=", to);
  detail::dispatch_floating(t.dtype(), "uniform_", [&]<typename T>() {
    const double lim = std::numeric_limits<T>::max();
    MG_CHECK(std::isfinite(from) && std::isfinite(to) && from >= -lim && to <= lim, "uniform_",
             "from=", from, " and to=", to, " must be finite and within ", dtype_name(t.dtype()),
             "'s range");
    MG_CHECK(static_cast<T>(to) - static_cast<T>(from) <= std::numeric_limits<T>::max(), "uniform_",
             "expects to - from <= the largest ", dtype_name(t.dtype()), ", but found to=", to,
             " and from=", from);
    fill_in_memory_order<T>(t, g, [&](T* p, std::int64_t n, bool) { g.uniform_(p, n, from, to); });
  });
  return t;
}

Tensor& normal_impl(Tensor& t, double mean, double std, detail::Generator& g) {
  MG_PROFILE_OP("normal_");
  check_fillable(t, "normal_");
  MG_CHECK(t.is_floating_point(), "normal_", "expected a floating-point tensor, got ",
           dtype_name(t.dtype()));
  MG_CHECK(std >= 0.0, "normal_", "expects std >= 0.0, but found std ", std);
  MG_CHECK(std::isfinite(mean) && std::isfinite(std), "normal_", "mean=", mean, " and std=", std,
           " must be finite");
  detail::dispatch_floating(t.dtype(), "normal_", [&]<typename T>() {
    fill_in_memory_order<T>(t, g, [&](T* p, std::int64_t n, bool contiguous) {
      if (contiguous) {
        g.normal_(p, n, mean, std);
      } else {  // PyTorch's per-element path, whatever the size
        for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(g.normal_sample(mean, std));
      }
    });
  });
  return t;
}

/// random_(from, to): (v % (to - from)) + from in wrapping 64-bit arithmetic, with v one 32-bit
/// draw, or a random64 when the range is >= 2^32 (as randint).
Tensor& random_from_to_impl(Tensor& t, std::int64_t from, std::int64_t to, detail::Generator& g) {
  MG_PROFILE_OP("random_");
  check_fillable(t, "random_");
  MG_CHECK(from < to, "random_", "expects 'from' to be less than 'to', but got from=", from,
           " >= to=", to);
  std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = lo;  // hi: largest to - 1
  if (t.dtype() == kFloat32) lo = -(std::int64_t{1} << 24), hi = std::int64_t{1} << 24;
  if (t.dtype() == kFloat64) lo = -(std::int64_t{1} << 53), hi = std::int64_t{1} << 53;
  if (t.dtype() == kBool) lo = 0, hi = 1;
  if (t.dtype() != kInt64)
    MG_CHECK(from >= lo && to - 1 <= hi, "random_", "from=", from, " and to - 1=", to - 1,
             " must lie in [", lo, ", ", hi, "] for ", dtype_name(t.dtype()),
             ": beyond it the integers are not all representable");
  const std::uint64_t range = static_cast<std::uint64_t>(to) - static_cast<std::uint64_t>(from);
  detail::dispatch(t.dtype(), [&]<typename T>() {
    fill_in_memory_order<T>(t, g, [&](T* p, std::int64_t n, bool) {
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t v = range >= (std::uint64_t{1} << 32) ? g.random64() : g.random();
        p[i] =
            static_cast<T>(static_cast<std::int64_t>(v % range + static_cast<std::uint64_t>(from)));
      }
    });
  });
  return t;
}

/// random_(): v % (2^digits + 1) for floating types (v: 32 bits for float32, 64 for float64),
/// v % 2^63 for int64 (64 bits), v & 1 for bool (32 bits).
Tensor& random_full_impl(Tensor& t, detail::Generator& g) {
  MG_PROFILE_OP("random_");
  check_fillable(t, "random_");
  detail::dispatch(t.dtype(), [&]<typename T>() {
    fill_in_memory_order<T>(t, g, [&](T* p, std::int64_t n, bool) {
      for (std::int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, bool>) {
          p[i] = (g.random() & 1u) != 0;
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          p[i] = static_cast<std::int64_t>(g.random64() % (std::uint64_t{1} << 63));
        } else if constexpr (std::is_same_v<T, float>) {
          p[i] = static_cast<float>(g.random() % ((std::uint64_t{1} << 24) + 1));
        } else {
          p[i] = static_cast<double>(g.random64() % ((std::uint64_t{1} << 53) + 1));
        }
      }
    });
  });
  return t;
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to) {
  return uniform_impl(*this, from, to, detail::default_generator());
}
Tensor& Tensor::uniform_(double from, double to, Generator& generator) {
  return uniform_impl(*this, from, to, detail::GeneratorAccess::engine(generator));
}
Tensor& Tensor::normal_(double mean, double std) {
  return normal_impl(*this, mean, std, detail::default_generator());
}
Tensor& Tensor::normal_(double mean, double std, Generator& generator) {
  return normal_impl(*this, mean, std, detail::GeneratorAccess::engine(generator));
}
Tensor& Tensor::random_(std::int64_t from, std::int64_t to) {
  return random_from_to_impl(*this, from, to, detail::default_generator());
}
Tensor& Tensor::random_(std::int64_t from, std::int64_t to, Generator& generator) {
  return random_from_to_impl(*this, from, to, detail::GeneratorAccess::engine(generator));
}
Tensor& Tensor::random_(std::int64_t to) { return random_(0, to); }
Tensor& Tensor::random_(std::int64_t to, Generator& generator) { return random_(0, to, generator); }
Tensor& Tensor::random_() { return random_full_impl(*this, detail::default_generator()); }
Tensor& Tensor::random_(Generator& generator) {
  return random_full_impl(*this, detail::GeneratorAccess::engine(generator));
}

// ---------------------------------------------------------------- Generator

// Note [Generator state layout]
// get_state() writes PyTorch 1.13's CPUGeneratorImplState byte for byte (5056 bytes,
// little-endian): u64 the_initial_seed @0, i32 left @8, i32 seeded @12, u64 next @16,
// u64 state[624] @24 (MT19937 words), f64 normal_x @5016, f64 normal_y @5024 (the cached
// Box-Muller value), f64 normal_rho @5032, i32 normal_is_valid @5040, f32
// next_float_normal_sample @5048, bool is_next_float_normal_sample_valid @5052.
// PyTorch's engine draws state[next++] after `if (--left == 0) twist();`; ours (as libstdc++'s
// std::mt19937) draws x[p++] after `if (p >= 624) twist();` (Mt19937::words() and position()).
// So p = 625 - left, and next = p except right after seeding, where PyTorch has next = 0 and
// p = 624 (the same behaviour).
namespace {

constexpr std::size_t kStateBytes = 5056;
constexpr std::size_t kWords = 624;

template <typename T>
void put(std::vector<std::uint8_t>& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
template <typename T>
T get(const std::vector<std::uint8_t>& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

std::vector<std::uint8_t> state_of(detail::Generator& g) {
  std::lock_guard<std::mutex> lock(g.mutex);
  std::vector<std::uint8_t> b(kStateBytes, 0);
  const std::uint32_t* words = g.engine.words();
  for (std::size_t i = 0; i < kWords; ++i) put<std::uint64_t>(b, 24 + 8 * i, words[i]);
  const std::int64_t p = g.engine.position();
  put<std::uint64_t>(b, 0, g.initial_seed);
  put<std::int32_t>(b, 8, static_cast<std::int32_t>(625 - p));
  put<std::int32_t>(b, 12, 1);
  put<std::uint64_t>(b, 16, static_cast<std::uint64_t>(p == 624 ? 0 : p));
  if (g.spare) {
    put<double>(b, 5024, *g.spare);
    put<std::int32_t>(b, 5040, 1);
  }
  return b;
}

void set_state_of(detail::Generator& g, const std::vector<std::uint8_t>& b) {
  const char* op = "set_state";
  MG_CHECK(b.size() == kStateBytes, op, "expected a state of ", kStateBytes,
           " bytes (PyTorch's CPU generator state), got ", b.size());
  auto left = get<std::int32_t>(b, 8);
  auto next = get<std::uint64_t>(b, 16);
  MG_CHECK(left >= 1 && left <= 624, op, "left is ", left, ", must be in [1, 624]");
  std::int64_t p = 625 - left;
  MG_CHECK(next == static_cast<std::uint64_t>(p) || (p == 624 && next == 0), op, "next is ", next,
           " but left is ", left, ": next must be 625 - left (or 0 when left is 1)");
  auto normal_valid = get<std::int32_t>(b, 5040);
  MG_CHECK(normal_valid == 0 || normal_valid == 1, op, "normal_is_valid is ", normal_valid);
  MG_CHECK(b[5052] == 0, op,
           "the state holds a cached float32 normal sample, which minigrad's generator never "
           "uses (PyTorch's CPU randn does not either)");
  std::uint32_t words[kWords];
  for (std::size_t i = 0; i < kWords; ++i) {
    auto w = get<std::uint64_t>(b, 24 + 8 * i);
    MG_CHECK(w <= 0xFFFFFFFFu, op, "state word ", i, " is ", w, ", more than 32 bits");
    words[i] = static_cast<std::uint32_t>(w);
  }
  std::lock_guard<std::mutex> lock(g.mutex);
  g.engine.set_state(words, static_cast<int>(p));
  g.initial_seed = get<std::uint64_t>(b, 0);
  if (normal_valid)
    g.spare = get<double>(b, 5024);
  else
    g.spare.reset();
}

}  // namespace

Generator::Generator() : impl_(std::make_shared<detail::Generator>()) {}

Generator& Generator::manual_seed(std::uint64_t seed) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->seed(seed);
  return *this;
}

std::uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->initial_seed;
}

std::vector<std::uint8_t> Generator::get_state() const { return state_of(*impl_); }
void Generator::set_state(const std::vector<std::uint8_t>& state) { set_state_of(*impl_, state); }

Generator default_generator() {
  // A non-owning handle: the default generator lives for the whole program.
  return Generator(
      std::shared_ptr<detail::Generator>(&detail::default_generator(), [](detail::Generator*) {}));
}

std::vector<std::uint8_t> get_rng_state() { return state_of(detail::default_generator()); }
void set_rng_state(const std::vector<std::uint8_t>& state) {
  set_state_of(detail::default_generator(), state);
}

}  // namespace minigrad
