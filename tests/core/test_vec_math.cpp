// The float32 SIMD kernels of core/src/kernels over xsimd::batch (Note [Runtime SIMD dispatch]):
// the vectorised exp against std::exp over a sweep of float32 inputs (max error in ulp), and the
// softmax / log_softmax kernels of EVERY level compiled in and supported by this CPU (AVX2,
// AVX-512: each called explicitly, so an AVX-512 machine also tests the AVX2 code) against
// the portable path and a double-precision reference. Without AVX2 (or off x86-64) only the
// portable path exists and the kernel tests report themselves skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../core/src/kernels/gemm.h"
#include "../../core/src/kernels/simd.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;
namespace simd = minigrad::detail::simd;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// The kernels of every level this CPU supports (AVX2, AVX-512).
std::vector<const simd::Kernels*> available_kernels() {
  std::vector<const simd::Kernels*> r;
  for (auto level : {simd::Level::kAvx2, simd::Level::kAvx512})
    if (const auto* k = simd::kernels_f32_at(level)) r.push_back(k);
  return r;
}

/// Error of got against the exact value (a double) in units of float32's last place at the exact
/// value (the denormal spacing 2^-149 below FLT_MIN).
double ulp_error(float got, double exact) {
  if (std::isinf(exact) || exact > std::numeric_limits<float>::max()) {
    return std::isinf(got) && got > 0 ? 0.0 : std::numeric_limits<double>::infinity();
  }
  const double a = std::fabs(exact);
  double ulp = std::ldexp(1.0, -149);
  if (a >= std::numeric_limits<float>::min()) ulp = std::ldexp(1.0, std::ilogb(a) - 23);
  return std::fabs(static_cast<double>(got) - exact) / ulp;
}

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// Every 251st float32 bit pattern from -0 down to -inf and from +0 up to +inf (~17 million
/// values: denormal and normal inputs, the underflow and overflow ranges), every 7th in
/// [-1, -0.5] and [0.5, 1], then `extra`.
std::vector<float> float_sweep(std::initializer_list<float> extra) {
  std::vector<float> xs;
  for (std::uint64_t b = 0; b <= 0x7f800000u; b += 251) {
    xs.push_back(from_bits(static_cast<std::uint32_t>(b)));
    xs.push_back(from_bits(static_cast<std::uint32_t>(b) | 0x80000000u));
  }
  for (std::uint32_t b = 0x3f000000u; b <= 0x3f800000u; b += 7) {
    xs.push_back(from_bits(b));
    xs.push_back(from_bits(b | 0x80000000u));
  }
  xs.insert(xs.end(), extra);
  return xs;
}

/// Restores the default dispatch when a test ends.
struct LevelGuard {
  ~LevelGuard() { simd::set_max_level(simd::Level::kAvx512); }
};

}  // namespace

TEST(VecMath, DispatchIsConsistent) {
  LevelGuard guard;
  simd::set_max_level(simd::Level::kAvx512);  // lifts a MINIGRAD_CPU_CAPABILITY cap
  const auto* best = simd::kernels_f32();
  if (simd::detected_level() == simd::Level::kPortable) {
    EXPECT_EQ(best, nullptr);
    GTEST_SKIP() << "no AVX2 on this CPU: the portable kernels run";
  }
  ASSERT_NE(best, nullptr);
  EXPECT_EQ(best->level, simd::detected_level());
  simd::set_max_level(simd::Level::kPortable);
  EXPECT_EQ(simd::kernels_f32(), nullptr);
  simd::set_max_level(simd::Level::kAvx2);
  ASSERT_NE(simd::kernels_f32(), nullptr);
  EXPECT_EQ(simd::kernels_f32()->level, simd::Level::kAvx2);
}

// Every level this CPU supports is compiled in and reachable, so the tests below run each of them
// (a level missing from the build would otherwise only shrink available_kernels()).
TEST(VecMath, EveryLevelTheCpuHasIsCompiledIn) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  struct Expect {
    simd::Level level;
    bool supported;
    const char* name;
  };
  const Expect levels[] = {
      {simd::Level::kAvx2,
       __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? true : false, "avx2"},
      {simd::Level::kAvx512,
       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma")
           ? true
           : false,
       "avx512"}};
  for (const auto& e : levels) {
    const auto* k = simd::kernels_f32_at(e.level);
    if (!e.supported) {
      EXPECT_EQ(k, nullptr) << e.name;
      continue;
    }
    ASSERT_NE(k, nullptr) << e.name << ": the CPU has it, the build does not";
    EXPECT_EQ(k->level, e.level);
    EXPECT_STREQ(k->name, e.name);
    std::printf("SIMD level %s: compiled in and supported\n", e.name);
  }
  EXPECT_EQ(simd::kernels_f32_at(simd::Level::kPortable), nullptr);
#else
  GTEST_SKIP() << "not x86-64: only the portable kernels exist";
#endif
}

TEST(VecMath, ExpMaxUlpErrorOverASweep) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  // The sweep of float_sweep() and chosen values at the edges, in chunks of 1M.
  const std::vector<float> xs = float_sweep(
      {0.0f, -0.0f, 1.0f, -1.0f, 88.72283f, 88.72284f, 89.0f, -87.33654f, -103.2789f, -103.97208f,
       -103.9721f, -104.0f, -150.0f, kInf, -kInf, std::numeric_limits<float>::max(),
       -std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()});
  constexpr std::size_t kChunk = 1 << 20;
  std::vector<float> ys(kChunk);
  for (const auto* k : kernels) {
    double worst = 0, worst_x = 0;
    double worst_negative = 0;  // over x <= 0, what softmax sees
    for (std::size_t c = 0; c < xs.size(); c += kChunk) {
      const std::size_t len = std::min(kChunk, xs.size() - c);
      k->exp(xs.data() + c, ys.data(), static_cast<std::int64_t>(len));
      for (std::size_t i = 0; i < len; ++i) {
        const float x = xs[c + i];
        const double e = ulp_error(ys[i], std::exp(static_cast<double>(x)));
        if (e > worst) worst = e, worst_x = x;
        if (x <= 0 && e > worst_negative) worst_negative = e;
      }
    }
    std::printf(
        "vectorised exp (%s): max error %.3f ulp over %zu inputs (at x = %.9g); x <= 0: "
        "%.3f ulp\n",
        k->name, worst, xs.size(), worst_x, worst_negative);
    // Under 1 ulp (0.85 measured; Cephes' degree-7 polynomial gave 0.97, an Estrin evaluation of
    // the degree-6 one 1.22).
    EXPECT_LT(worst, 1.0) << k->name << " at x = " << worst_x;
    // Special values, exactly.
    const float special[] = {0.0f,    -0.0f,   -kInf,  kInf,
                             -200.0f, -104.0f, 100.0f, std::numeric_limits<float>::quiet_NaN(),
                             -1e30f,  1e30f,   1.0f};
    float out[std::size(special)];
    k->exp(special, out, static_cast<std::int64_t>(std::size(special)));
    EXPECT_EQ(out[0], 1.0f) << k->name;
    EXPECT_EQ(out[1], 1.0f) << k->name;
    EXPECT_EQ(out[2], 0.0f) << k->name;
    EXPECT_EQ(out[3], kInf) << k->name;
    EXPECT_EQ(out[4], 0.0f) << k->name;
    EXPECT_EQ(out[5], 0.0f) << k->name;
    EXPECT_EQ(out[6], kInf) << k->name;
    EXPECT_TRUE(std::isnan(out[7])) << k->name;
    EXPECT_EQ(out[8], 0.0f) << k->name;
    EXPECT_EQ(out[9], kInf) << k->name;
    EXPECT_NEAR(out[10], 2.7182817f, 3e-7f) << k->name;
    // Every length of tail, in place.
    for (std::int64_t n = 0; n <= 40; ++n) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = -0.37f * i;
      std::vector<float> want(v);
      for (auto& w : want) w = std::exp(w);
      k->exp(v.data(), v.data(), n);
      for (std::int64_t i = 0; i < n; ++i)
        EXPECT_NEAR(v[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)],
                    2.5e-7f * want[static_cast<std::size_t>(i)])
            << k->name << " n = " << n << " i = " << i;
    }
  }
}

// Every level's tanh and sigmoid (Note [Vectorised tanh and sigmoid]) against double-precision
// references over float_sweep() (whose every 7th float in [0.5, 1] covers tanh's branch at
// 0.625), special values exactly, and every length of tail.
TEST(VecMath, TanhAndSigmoidMaxUlpErrorOverASweep) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  const std::vector<float> xs =
      float_sweep({0.625f, -0.625f, 0.62499994f, 9.0f, 17.0f, 44.0f, 45.0f, -88.0f, -89.0f, -104.0f,
                   std::numeric_limits<float>::denorm_min()});
  struct Fn {
    const char* name;
    void (*const simd::Kernels::*kernel)(const float*, float*, std::int64_t);
    double (*exact)(double);
  };
  const Fn fns[] = {
      {"tanh", &simd::Kernels::tanh, [](double x) { return std::tanh(x); }},
      {"sigmoid", &simd::Kernels::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }}};
  constexpr std::size_t kChunk = 1 << 20;
  std::vector<float> ys(kChunk);
  for (const auto* k : kernels) {
    for (const Fn& fn : fns) {
      double worst = 0, worst_x = 0;
      for (std::size_t c = 0; c < xs.size(); c += kChunk) {
        const std::size_t len = std::min(kChunk, xs.size() - c);
        (k->*fn.kernel)(xs.data() + c, ys.data(), static_cast<std::int64_t>(len));
        for (std::size_t i = 0; i < len; ++i) {
          const double exact = fn.exact(static_cast<double>(xs[c + i]));
          // Below float32's smallest normal the spacing is the denormals' (ulp_error's rule);
          // sign errors and NaN count as infinite.
          const double e = std::signbit(ys[i]) != std::signbit(exact) && exact != 0
                               ? std::numeric_limits<double>::infinity()
                               : ulp_error(std::fabs(ys[i]), std::fabs(exact));
          if (!(e <= worst)) worst = e, worst_x = xs[c + i];
        }
      }
      std::printf("vectorised %s (%s): max error %.3f ulp over %zu inputs (at x = %.9g)\n", fn.name,
                  k->name, worst, xs.size(), worst_x);
      EXPECT_LE(worst, 3.0) << fn.name << " " << k->name << " at x = " << worst_x;
    }
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float special[] = {0.0f, -0.0f, kInf, -kInf, nan, 100.0f, -100.0f, 1e-30f, -1e-30f};
    float t[std::size(special)], sg[std::size(special)];
    k->tanh(special, t, static_cast<std::int64_t>(std::size(special)));
    k->sigmoid(special, sg, static_cast<std::int64_t>(std::size(special)));
    EXPECT_EQ(t[0], 0.0f) << k->name;
    EXPECT_TRUE(std::signbit(t[1])) << k->name << ": tanh(-0) is -0";
    EXPECT_EQ(t[2], 1.0f) << k->name;
    EXPECT_EQ(t[3], -1.0f) << k->name;
    EXPECT_TRUE(std::isnan(t[4])) << k->name;
    EXPECT_EQ(t[5], 1.0f) << k->name;
    EXPECT_EQ(t[6], -1.0f) << k->name;
    EXPECT_EQ(t[7], 1e-30f) << k->name;
    EXPECT_EQ(t[8], -1e-30f) << k->name;
    EXPECT_EQ(sg[0], 0.5f) << k->name;
    EXPECT_EQ(sg[1], 0.5f) << k->name;
    EXPECT_EQ(sg[2], 1.0f) << k->name;
    EXPECT_EQ(sg[3], 0.0f) << k->name;
    EXPECT_TRUE(std::isnan(sg[4])) << k->name;
    EXPECT_EQ(sg[5], 1.0f) << k->name;
    EXPECT_GT(sg[6], 0.0f) << k->name;  // 3.7e-44, a denormal
    EXPECT_EQ(sg[7], 0.5f) << k->name;
    // Every length of tail, in place.
    for (std::int64_t n = 0; n <= 40; ++n) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = 0.37f * i - 7.0f;
      std::vector<float> w(v);
      k->tanh(v.data(), v.data(), n);
      k->sigmoid(w.data(), w.data(), n);
      for (std::int64_t i = 0; i < n; ++i) {
        const double x = 0.37f * i - 7.0f;
        EXPECT_NEAR(v[static_cast<std::size_t>(i)], std::tanh(x), 3e-7) << k->name << " n " << n;
        EXPECT_NEAR(w[static_cast<std::size_t>(i)], 1 / (1 + std::exp(-x)), 3e-7)
            << k->name << " n " << n;
      }
    }
  }
}

namespace {

/// softmax / log_softmax of x along dim in double, from float inputs.
std::vector<double> reference_softmax(const std::vector<float>& x, const mg::Shape& shape,
                                      std::int64_t dim, bool log) {
  std::int64_t outer = 1, n = shape[static_cast<std::size_t>(dim)], inner = 1;
  for (std::int64_t d = 0; d < dim; ++d) outer *= shape[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(dim) + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<double> y(x.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      auto at = [&](std::int64_t j) { return static_cast<std::size_t>((o * n + j) * inner + i); };
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<double>(x[at(j)]));
      double s = 0;
      for (std::int64_t j = 0; j < n; ++j) s += std::exp(x[at(j)] - m);
      for (std::int64_t j = 0; j < n; ++j)
        y[at(j)] = log ? (x[at(j)] - m) - std::log(s) : std::exp(x[at(j)] - m) / s;
    }
  return y;
}

std::vector<float> values_of(const mg::Tensor& t) { return t.to_vector<float>(); }

mg::Tensor make(const std::vector<float>& v, const mg::Shape& shape) {
  return mg::tensor(std::vector<double>(v.begin(), v.end()), shape, mg::kFloat32);
}

}  // namespace

TEST(VecMath, SoftmaxKernelsMatchPortableAndReference) {
  if (available_kernels().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  LevelGuard guard;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  // Rows of every tail length, long rows, and softmax over the first and middle dims (inner > 1,
  // including an inner size past the 256-column tile).
  const std::vector<std::pair<mg::Shape, std::int64_t>> cases = {
      {{3, 1}, -1},     {{4, 5}, -1},    {{2, 17}, -1},    {{3, 31}, -1}, {{2, 64}, -1},
      {{5, 129}, -1},   {{2, 1000}, -1}, {{7, 3}, 0},      {{5, 19}, 0},  {{3, 4, 21}, 1},
      {{2, 3, 300}, 1}, {{1, 9, 40}, 1}, {{6, 2, 5, 3}, 2}};
  for (const auto& c : cases) {
    // Not a structured binding: clang 14 cannot capture those in a lambda.
    const mg::Shape& shape = c.first;
    const std::int64_t dim = c.second;
    std::int64_t numel = 1;
    for (auto s : shape) numel *= s;
    std::vector<float> xv(static_cast<std::size_t>(numel)), gv(xv.size());
    for (auto& v : xv) v = normal(rng);
    for (auto& v : gv) v = normal(rng);
    mg::Tensor x = make(xv, shape);
    mg::Tensor g = make(gv, shape);
    const std::int64_t d = dim < 0 ? dim + static_cast<std::int64_t>(shape.size()) : dim;
    for (bool log : {false, true}) {
      auto run = [&](simd::Level level, std::vector<float>& y, std::vector<float>& gx) {
        simd::set_max_level(level);
        mg::Tensor xr = x.detach().requires_grad_();
        mg::Tensor out = log ? mg::log_softmax(xr, dim) : mg::softmax(xr, dim);
        y = values_of(out);
        gx = values_of(mg::autograd::grad({out}, {xr}, {g})[0]);
      };
      std::vector<float> y0, gx0;
      run(simd::Level::kPortable, y0, gx0);
      const auto want = reference_softmax(xv, shape, d, log);
      for (const auto* k : available_kernels()) {
        std::vector<float> y1, gx1;
        run(k->level, y1, gx1);
        const std::string what = std::string(k->name) + (log ? " log_softmax" : " softmax") +
                                 " numel " + std::to_string(numel) + " dim " + std::to_string(d);
        for (std::size_t i = 0; i < y1.size(); ++i) {
          EXPECT_NEAR(y1[i], want[i], 2e-6 * std::max(1.0, std::fabs(want[i]))) << what << " " << i;
          EXPECT_NEAR(y1[i], y0[i], 2e-6 * std::max(1.0f, std::fabs(y0[i]))) << what << " " << i;
          EXPECT_NEAR(gx1[i], gx0[i], 1e-5 * std::max(1.0f, std::fabs(gx0[i]))) << what << " " << i;
        }
      }
    }
  }
}

TEST(VecMath, SoftmaxKernelsMaskedAndNonFiniteRows) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  LevelGuard guard;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: masked positions; row 1: fully masked (nan, as PyTorch); row 2: a NaN (the row is
  // nan); row 3: +inf (nan, as PyTorch); row 4: logits of +-1e4.
  std::vector<float> xv = {0.0f,  -kInf, 1.0f,  -kInf, -kInf, -kInf, -kInf, -kInf, -kInf,
                           1.0f,  nan,   2.0f,  3.0f,  -kInf, -kInf, -kInf, -kInf, -kInf,
                           1.0f,  kInf,  2.0f,  3.0f,  -kInf, -kInf, -kInf, -kInf, -kInf,
                           -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf,
                           1e4f,  -1e4f, 0.0f,  -kInf, -kInf, -kInf, -kInf, -kInf, -kInf};
  mg::Tensor x = make(xv, {5, 9});
  for (bool log : {false, true}) {
    simd::set_max_level(simd::Level::kPortable);
    const auto want = values_of(log ? mg::log_softmax(x, -1) : mg::softmax(x, -1));
    for (const auto* k : kernels) {
      simd::set_max_level(k->level);
      const auto got = values_of(log ? mg::log_softmax(x, -1) : mg::softmax(x, -1));
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << k->name << " " << i;
        } else if (std::isinf(want[i])) {
          EXPECT_EQ(got[i], want[i]) << k->name << " log " << log << " " << i;
        } else {
          EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0f, std::fabs(want[i])))
              << k->name << " log " << log << " " << i;
        }
      }
      // The rows that are NaN: the fully masked row, the row with a NaN, the row with +inf.
      for (std::size_t j = 9; j < 36; ++j) EXPECT_TRUE(std::isnan(got[j])) << k->name << " " << j;
    }
  }
}

namespace {

/// gelu and its derivative in double precision (long double's erfc for the "none" form's tail).
double gelu_ref(double x, bool tanh_form) {
  if (tanh_form) {
    const double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    return x / (1 + std::exp(-2 * u));
  }
  return 0.5 * x * static_cast<double>(std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L)));
}
double gelu_grad_ref(double x, bool tanh_form) {
  if (tanh_form) {
    const double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
    const double s = 1 / (1 + std::exp(-2 * u));
    return s + 2 * x * s * (1 - s) * 0.79788456080286535588 * (1 + 3 * 0.044715 * x * x);
  }
  const double cdf =
      0.5 * static_cast<double>(std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L)));
  return cdf + x * std::exp(-0.5 * x * x) * 0.39894228040143267794;
}

/// Every 2039th float32 bit pattern of magnitude up to 20 (past it gelu is x or 0 in float32), of
/// both signs, then chosen values.
std::vector<float> gelu_inputs() {
  std::vector<float> xs;
  for (std::uint32_t b = 0; b <= 0x41a00000u; b += 2039) {
    xs.push_back(from_bits(b));
    xs.push_back(from_bits(b | 0x80000000u));
  }
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, -0.7517916f, 5.0f, -5.0f, 9.0f, -9.0f, 13.0f, -13.0f,
                  14.5f, -14.5f, 100.0f, -100.0f, 1e30f, -1e30f})
    xs.push_back(v);
  return xs;
}

}  // namespace

// The GELU kernels (Note [Vectorised GELU]) against double references on every level. The
// error is in float32 ulps of the result, divided by the problem's own condition where float32
// inputs make an exact result impossible: the tanh form's exp(-2u) amplifies the rounding of u by
// 2|u|, and the derivative is a sum of two terms that cancel near x = -0.75 (its error is measured
// against the terms' magnitude, not the sum's).
// Every level's max and exp_sum (cross_entropy's logsumexp of a row, kernels/loss.cpp) against
// std::max and a double sum, over lengths below, at and past one and four vectors and a block of
// the float partial sums (1024), and GPT-2's 50257; with the max in the masked tail; a NaN is
// skipped by the max and reaches the sum; a row of -inf has max -inf.
TEST(VecMath, MaxAndExpSumKernels) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 gen(9);
  std::uniform_real_distribution<float> dist(-20.0f, 20.0f);
  for (const auto* k : kernels) {
    for (std::int64_t n : {1, 7, 8, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025, 50257}) {
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = dist(gen);
      x.back() = 25.0f;  // the max, in the last (often partial) vector
      float want_max = -kInf;
      for (float v : x) want_max = std::max(want_max, v);
      ASSERT_EQ(k->max(x.data(), n), want_max) << k->name << " n " << n;
      double want_sum = 0;
      for (float v : x) want_sum += std::exp(static_cast<double>(v) - want_max);
      EXPECT_NEAR(k->exp_sum(x.data(), n, want_max), want_sum, 1e-6 * want_sum)
          << k->name << " n " << n;
      x[static_cast<std::size_t>(n / 2)] = std::numeric_limits<float>::quiet_NaN();
      if (n > 1) {
        EXPECT_EQ(k->max(x.data(), n), 25.0f) << k->name << " n " << n;
      }
      EXPECT_TRUE(std::isnan(k->exp_sum(x.data(), n, 25.0f))) << k->name << " n " << n;
      std::fill(x.begin(), x.end(), -kInf);
      EXPECT_EQ(k->max(x.data(), n), -kInf) << k->name << " n " << n;
    }
  }
}

TEST(VecMath, GeluKernelsAgainstDoubleReference) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  const std::vector<float> xs = gelu_inputs();
  const std::vector<float> ones(xs.size(), 1.0f);
  std::vector<float> y(xs.size()), gx(xs.size());
  for (const auto* k : kernels) {
    for (bool tanh_form : {false, true}) {
      k->gelu(xs.data(), y.data(), static_cast<std::int64_t>(xs.size()), tanh_form);
      k->gelu_backward(ones.data(), xs.data(), gx.data(), static_cast<std::int64_t>(xs.size()),
                       tanh_form);
      double worst_y = 0, worst_y_x = 0, worst_g = 0, worst_g_x = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const double x = xs[i];
        const double u = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
        const double cond = tanh_form ? 1 + 2 * std::fabs(u) : 1;
        // Results below 2^-100 (x < -13.5, or the tanh form's x < -9.4) are checked for their
        // absolute error only: their partial products reach float32's denormals.
        if (std::fabs(gelu_ref(x, tanh_form)) < 0x1p-100) {
          EXPECT_LE(std::fabs(y[i] - gelu_ref(x, tanh_form)), 0x1p-110) << k->name << " " << x;
          EXPECT_LE(std::fabs(gx[i] - gelu_grad_ref(x, tanh_form)), 0x1p-110)
              << k->name << " " << x;
          continue;
        }
        const double ey = ulp_error(y[i], gelu_ref(x, tanh_form)) / cond;
        if (ey > worst_y) worst_y = ey, worst_y_x = x;
        // The derivative's terms: Phi(x) (or s) and x phi(x) (or its tanh counterpart).
        const double s = tanh_form ? 1 / (1 + std::exp(-2 * u)) : gelu_ref(x, false) / x;
        const double scale = std::fabs(std::isfinite(s) ? s : 1.0) +
                             std::fabs(gelu_grad_ref(x, tanh_form) - (std::isfinite(s) ? s : 0));
        const double exact_g = gelu_grad_ref(x, tanh_form);
        const double eg = ulp_error(gx[i], exact_g) /
                          (std::max(1.0, scale / std::max(std::fabs(exact_g), 1e-300)) * cond);
        if (eg > worst_g) worst_g = eg, worst_g_x = x;
      }
      std::printf("%s gelu (%s): max error %.2f ulp (x = %g), derivative %.2f ulp (x = %g)\n",
                  k->name, tanh_form ? "tanh" : "none", worst_y, worst_y_x, worst_g, worst_g_x);
      // "none": the erfc fit's 2.3e-7 relative error (Note [Vectorised GELU]) near x = 0.
      const double bound = tanh_form ? 4.0 : 8.0;
      EXPECT_LE(worst_y, bound) << k->name << (tanh_form ? " tanh" : " none")
                                << " at x = " << worst_y_x;
      EXPECT_LE(worst_g, bound) << k->name << (tanh_form ? " tanh" : " none")
                                << " at x = " << worst_g_x;
    }
  }
}

TEST(VecMath, GeluKernelsNonFiniteInputs) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Lengths 3 and 17: a partial tail only, and one full AVX-512 register plus a tail.
  std::vector<float> xs = {nan,  kInf, -kInf, 1.0f, 2.0f, -1.0f, 0.5f, 3.0f, -3.0f,
                           4.0f, 5.0f, 6.0f,  7.0f, 8.0f, 9.0f,  nan,  kInf};
  std::vector<float> ones(xs.size(), 1.0f), y(xs.size()), g(xs.size());
  for (const auto* k : kernels) {
    for (bool tanh_form : {false, true}) {
      for (std::int64_t n : {3, 17}) {
        k->gelu(xs.data(), y.data(), n, tanh_form);
        k->gelu_backward(ones.data(), xs.data(), g.data(), n, tanh_form);
        // As the scalar formulas (and PyTorch): gelu(nan) = nan, gelu(inf) = inf,
        // gelu(-inf) = -inf * 0 = nan.
        EXPECT_TRUE(std::isnan(y[0])) << k->name;
        EXPECT_EQ(y[1], kInf) << k->name;
        EXPECT_TRUE(std::isnan(y[2])) << k->name;
        EXPECT_TRUE(std::isnan(g[0])) << k->name;
      }
      EXPECT_TRUE(std::isnan(y[15])) << k->name;
      EXPECT_EQ(y[16], kInf) << k->name;
    }
  }
}

namespace {

/// Runs one level's gemm on random a, b, c of the given shape and layout (leading dimensions
/// larger than the matrices) and checks c against a double-precision product: elements past
/// column n (the rest of each row's leading dimension) must be left alone, and beta 0 must not
/// read c (a NaN there does not reach the result).
void check_gemm(const simd::Kernels* k, std::mt19937& gen, std::int64_t m, std::int64_t n,
                std::int64_t kk, bool ta, bool tb, float alpha, float beta) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const float sentinel = 12345.0f;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::int64_t lda = (ta ? m : kk) + 3, ldb = (tb ? kk : n) + 2, ldc = n + 5;
  std::vector<float> a((ta ? kk : m) * lda), b((tb ? n : kk) * ldb), c(m * ldc);
  for (auto& v : a) v = dist(gen);
  for (auto& v : b) v = dist(gen);
  for (auto& v : c) v = dist(gen);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = n; j < ldc; ++j) c[i * ldc + j] = sentinel;
  std::vector<float> c0 = c;
  if (beta == 0.0f)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = nan;
  k->gemm(ta, tb, m, n, kk, a.data(), lda, b.data(), ldb, c.data(), ldc, alpha, beta);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= n) {
        ASSERT_EQ(got, sentinel) << k->name << " wrote past n at " << i << "," << j;
        continue;
      }
      double exact = 0, scale = 0;
      for (std::int64_t p = 0; p < kk; ++p) {
        const double av = ta ? a[p * lda + i] : a[i * lda + p];
        const double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        exact += av * bv;
        scale += std::fabs(av * bv);
      }
      exact = alpha * exact + (beta == 0.0f ? 0.0 : beta * c0[i * ldc + j]);
      scale = std::fabs(alpha) * scale + std::fabs(beta) + 1e-30;
      ASSERT_NEAR(got, exact, 4e-7 * static_cast<double>(kk + 2) * scale)
          << k->name << " m " << m << " n " << n << " k " << kk << " ta " << ta << " tb " << tb
          << " alpha " << alpha << " beta " << beta << " at " << i << "," << j;
    }
  }
}

}  // namespace

// Every level's gemm (Note [Panel GEMM] in gemm.cpp) over the shapes the kernel splits
// differently: row blocks of 4 / 6 and their remainders, n below, at and above one vector and one
// panel of 2 or 4 vectors, k from 1 to 64, all four transpose layouts, and alpha / beta as BLAS
// takes them.
TEST(VecMath, GemmKernelsOnSmallProducts) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 gen(7);
  int cases = 0;
  for (const auto* k : kernels) {
    for (std::int64_t m : {1, 3, 4, 5, 6, 7, 13, 24}) {
      for (std::int64_t n : {1, 7, 8, 9, 16, 17, 24, 31, 33, 64}) {
        for (std::int64_t kk : {1, 2, 16, 24, 63, 64}) {
          for (int layout = 0; layout < 4; ++layout) {
            for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {1.5f, 0.5f}, {-2.0f, 1.0f}}) {
              check_gemm(k, gen, m, n, kk, layout & 1, layout & 2, alpha, beta);
              if (HasFatalFailure()) return;
              ++cases;
            }
          }
        }
      }
    }
  }
  std::printf("gemm, small products: %d cases on %zu levels\n", cases, kernels.size());
}

// The same over the blocks of k (256: c is stored after the first and added to after each later
// one, beta applied once) and of n (256 columns per packed block of op(b), in panels), with k and
// n just below, at and past each boundary.
TEST(VecMath, GemmKernelsAcrossBlocksOfKAndN) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 gen(8);
  int cases = 0;
  for (const auto* k : kernels) {
    for (std::int64_t m : {5, 33}) {
      for (std::int64_t n : {64, 65, 200, 256, 257, 300}) {
        for (std::int64_t kk : {255, 256, 257, 600}) {
          for (int layout = 0; layout < 4; ++layout) {
            for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {-2.0f, 0.5f}}) {
              check_gemm(k, gen, m, n, kk, layout & 1, layout & 2, alpha, beta);
              if (HasFatalFailure()) return;
              ++cases;
            }
          }
        }
      }
    }
  }
  std::printf("gemm, across blocks: %d cases on %zu levels\n", cases, kernels.size());
}

// The blocked kernel of products onto more than 64 columns (Note [Wide GEMM] in
// gemm_simd_impl.h): rows past a panel of 8 / 6 and past a block of 192 (197), columns past a
// panel of 2 vectors (65, 97, 130) and past a block of 768 (800), k past a square of the
// transposing pack (17), a block of 256 (270, 300) or alone (1), every layout, alpha and beta.
TEST(VecMath, GemmKernelsOnWideProducts) {
  const auto kernels = available_kernels();
  if (kernels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 gen(9);
  int cases = 0;
  const std::int64_t shapes[][3] = {{1, 65, 1},    {7, 97, 17},   {8, 65, 300},  {9, 800, 17},
                                    {13, 97, 300}, {200, 97, 33}, {200, 800, 5}, {197, 130, 270}};
  for (const auto* k : kernels) {
    for (const auto& s : shapes) {
      for (int layout = 0; layout < 4; ++layout) {
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {-2.0f, 0.5f}, {1.0f, 1.0f}}) {
          check_gemm(k, gen, s[0], s[1], s[2], layout & 1, layout & 2, alpha, beta);
          if (HasFatalFailure()) return;
          ++cases;
        }
      }
    }
  }
  std::printf("gemm, wide products: %d cases on %zu levels\n", cases, kernels.size());
}

// minigrad's three float32 kernels (small, panel, wide) give an element the same bits: one FMA
// per k step in k's order from zero over blocks of 256, then alpha and beta. So a product split
// across threads by rows (48 at a time, the last chunk shorter) or by columns (some chunks 64
// columns or fewer, the panel kernel's) has the bits of the whole product on one thread, and
// gemm_threaded runs every chunk where the whole product runs, even a chunk too small to be
// routed there alone.
TEST(VecMath, GemmOnTwoThreadsHasTheBitsOfOne) {
  if (available_kernels().empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  const int saved = mg::get_num_threads();
  std::mt19937 gen(10);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::int64_t shapes[][3] = {
      {50, 700, 300}, {300, 200, 300}, {48, 1000, 70}, {250, 96, 600}};
  for (const auto& s : shapes) {
    const std::int64_t m = s[0], n = s[1], kk = s[2];
    for (int layout = 0; layout < 3; ++layout) {
      const bool ta = layout & 1, tb = layout & 2;
      std::vector<float> a(m * kk), b(kk * n);
      for (auto& v : a) v = dist(gen);
      for (auto& v : b) v = dist(gen);
      std::vector<float> c[2];
      for (int threads : {1, 2}) {
        mg::set_num_threads(threads);
        c[threads - 1].assign(m * n, 0.0f);
        minigrad::detail::gemm_threaded<float>(ta, tb, m, n, kk, a.data(), ta ? m : kk, b.data(),
                                               tb ? kk : n, c[threads - 1].data(), n);
      }
      mg::set_num_threads(saved);
      for (std::int64_t i = 0; i < m * n; ++i)
        ASSERT_EQ(c[0][i], c[1][i]) << "m " << m << " n " << n << " k " << kk << " ta " << ta
                                    << " tb " << tb << " at " << i;
    }
  }
}

// tanh's and sigmoid's backward (kernels/unary.cpp; the kernel table's tanh_backward and
// sigmoid_backward) round as PyTorch's: torch 1.13's tanh_backward(g, y) equals g * fma(-y, y, 1)
// and sigmoid_backward(g, y) equals (g * (1 - y)) * y on every one of 10^6 random float32 and
// 2000 float64 elements (g * (1 - y * y) and g * y * (1 - y) differ in 30% and 36%). So the
// gradient must be exactly that function of minigrad's own y, on every level, both dtypes, strided
// or not. Against torch's own numbers (its forward differs from ours by a few ulp, so loosely):
// x = [-0.78201681, 0.66483939, -1.65166545, 2.25655723, 1.86926007, -0.95830041, -0.07664429,
// 0.35988152], g = [0.70298815, 0.09529032, -0.55025184, 1.39842463, 0.01531346, 0.32076231,
// -1.63496435, 1.42385459]: x.grad of tanh(x).backward(g) = [0.40243503, 0.06306032,
// -0.07527423, 0.06000759, 0.00139025, 0.14343889, -1.62539744, 1.25427258], of
// sigmoid(x).backward(g) = [0.15139647, 0.02137257, -0.07428418, 0.11998634, 0.00177286,
// 0.06427065, -0.40814137, 0.34468231].
TEST(VecMath, TanhAndSigmoidBackwardRoundAsPyTorch) {
  const std::vector<double> x8 = {-0.78201681375503540,  0.66483938694000244, -1.6516654491424561,
                                  2.2565572261810303,    1.8692600727081299,  -0.95830041170120239,
                                  -0.076644293963909149, 0.35988152027130127};
  const std::vector<double> g8 = {0.70298814773559570, 0.095290318131446838, -0.55025184154510498,
                                  1.3984246253967285,  0.015313461422920227, 0.32076230645179749,
                                  -1.6349643468856812, 1.4238545894622803};
  const std::vector<double> tanh8 = {
      0.4024350345134735,    0.06306032091379166, -0.07527422904968262, 0.06000758707523346,
      0.0013902526115998626, 0.1434388905763626,  -1.6253974437713623,  1.2542725801467896};
  const std::vector<double> sigmoid8 = {
      0.1513964682817459,    0.021372567862272263, -0.07428418099880219, 0.11998634040355682,
      0.0017728559905663133, 0.06427065283060074,  -0.4081413745880127,  0.3446823060512543};
  // 8 values, then 29 more (a tail on every vector width), saturated ones among them.
  std::vector<double> xs = x8, gs = g8;
  for (int i = 0; i < 29; ++i) {
    xs.push_back(-9.0 + 0.61 * i);
    gs.push_back(0.37 - 0.05 * i);
  }
  const auto n = static_cast<std::int64_t>(xs.size());
  std::vector<simd::Level> levels{simd::Level::kPortable};
  for (auto level : {simd::Level::kAvx2, simd::Level::kAvx512})
    if (simd::kernels_f32_at(level)) levels.push_back(level);
  LevelGuard guard;
  for (const simd::Level level : levels) {
    simd::set_max_level(level);
    for (const mg::Dtype dtype : {mg::kFloat32, mg::kFloat64}) {
      for (const bool strided : {false, true}) {
        SCOPED_TRACE("level " + std::to_string(static_cast<int>(level)) + " " +
                     mg::dtype_name(dtype) + (strided ? " strided" : ""));
        mg::Tensor x = mg::tensor(xs, {n}, dtype), g = mg::tensor(gs, {n}, dtype);
        if (strided) {
          x = mg::stack({x, x}, 1).select(1, 0);
          g = mg::stack({g, g}, 1).select(1, 1);
        }
        x.requires_grad_();
        for (const bool is_tanh : {true, false}) {
          const mg::Tensor y = is_tanh ? mg::tanh(x) : mg::sigmoid(x);
          const mg::Tensor gx = mg::autograd::grad({y}, {x}, {g})[0];
          const auto yv = y.to_vector<double>(), gv = g.to_vector<double>();
          const auto got = gx.to_vector<double>();
          for (std::int64_t i = 0; i < n; ++i) {
            double want;
            if (dtype == mg::kFloat32) {
              const auto yf = static_cast<float>(yv[i]), gf = static_cast<float>(gv[i]);
              want = is_tanh ? gf * std::fma(-yf, yf, 1.0f) : gf * (1.0f - yf) * yf;
            } else {
              want = is_tanh ? gv[i] * std::fma(-yv[i], yv[i], 1.0) : gv[i] * (1.0 - yv[i]) * yv[i];
            }
            ASSERT_EQ(got[i], want) << (is_tanh ? "tanh" : "sigmoid") << " element " << i;
            if (i < 8) {
              const double torch = is_tanh ? tanh8[i] : sigmoid8[i];
              EXPECT_NEAR(got[i], torch, 1e-5 * std::fabs(torch)) << "element " << i;
            }
          }
        }
      }
    }
  }
}

// The softmax forward takes a tensor's rows in pairs (rows_exp_sum in softmax_simd_impl.h): a
// row's softmax and log_softmax must be the same bits whether it was paired with its neighbour
// or computed alone (a thread's chunk boundary or an odd row count decides), on every level;
// lengths across the SIMD tails and the kBlock fold, with an all -inf row and a NaN.
TEST(VecMath, SoftmaxRowsPairedOrAloneGiveTheSameBits) {
  LevelGuard guard;
  for (const auto* k : available_kernels()) {
    SCOPED_TRACE(k->name);
    std::vector<std::int64_t> lengths{128, 1029, 2100, 4100};
    for (std::int64_t n = 1; n <= 70; ++n) lengths.push_back(n);
    for (const std::int64_t n : lengths) {
      const std::int64_t rows = 7;
      std::vector<float> x(static_cast<std::size_t>(rows * n));
      std::mt19937 gen(static_cast<std::uint32_t>(n));
      std::normal_distribution<float> dist(0.0f, 3.0f);
      for (auto& v : x) v = dist(gen);
      std::fill(x.begin() + n, x.begin() + 2 * n, -INFINITY);   // row 1: all -inf
      if (n > 3) x[static_cast<std::size_t>(3 * n + 2)] = NAN;  // row 3: a NaN
      for (const bool log : {false, true}) {
        std::vector<float> all(x.size()), one(static_cast<std::size_t>(n));
        k->softmax_forward(x.data(), all.data(), rows, n, 1, log);
        for (std::int64_t r = 0; r < rows; ++r) {
          k->softmax_forward(x.data() + r * n, one.data(), 1, n, 1, log);
          EXPECT_EQ(std::memcmp(one.data(), all.data() + r * n, sizeof(float) * n), 0)
              << "n " << n << " row " << r << (log ? " log_softmax" : " softmax");
        }
      }
    }
  }
}
