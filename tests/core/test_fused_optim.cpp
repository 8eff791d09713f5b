// The fused Adam kernel (Note [Fused Adam], core/src/kernels/optim.h) without the optimizer: every
// SIMD level this CPU has gives the portable kernel's bits, any thread count gives the same bits,
// and bad calls throw [_fused_adam_]. Its values against PyTorch's are in
// tests/optim/test_optim_more.cpp (OptimFused.*).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../core/src/kernels/optim.h"
#include "../../core/src/kernels/simd.h"
#include "../../core/src/parallel.h"
#include "minigrad/fused_optim.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;
namespace simd = minigrad::detail::simd;
using minigrad::detail::AdamCoeffs;

namespace {

struct Buffers {
  std::vector<float> p, g, m, v, mv;
};

Buffers random_buffers(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Buffers b;
  for (std::int64_t i = 0; i < n; ++i) {
    b.p.push_back(normal(rng));
    b.g.push_back(normal(rng) * 1e-2f);
    b.m.push_back(normal(rng) * 1e-3f);
    const float v = normal(rng) * 1e-3f;
    b.v.push_back(v * v);
    b.mv.push_back(i % 3 == 0 ? v * v * 2 : 0.0f);
  }
  // Special values: NaN and inf gradients, zero moments, a negative zero.
  if (n > 40) {
    b.g[3] = std::numeric_limits<float>::quiet_NaN();
    b.g[17] = std::numeric_limits<float>::infinity();
    b.m[20] = 0.0f;
    b.v[20] = 0.0f;
    b.g[20] = -0.0f;
  }
  return b;
}

AdamCoeffs<float> coeffs(bool l2, bool decoupled, bool amsgrad, bool maximize) {
  AdamCoeffs<float> c{};
  c.weight_decay = 0.1f;
  c.decay = static_cast<float>(1 - 6e-4 * 0.1);
  c.beta1 = 0.9f;
  c.one_minus_beta1 = static_cast<float>(1 - 0.9);
  c.beta2 = 0.95f;
  c.one_minus_beta2 = static_cast<float>(1 - 0.95);
  c.bias_correction2_sqrt = static_cast<float>(std::sqrt(1 - std::pow(0.95, 3)));
  c.eps = 1e-8f;
  c.neg_step_size = static_cast<float>(-6e-4 / (1 - std::pow(0.9, 3)));
  c.l2 = l2;
  c.decoupled = decoupled;
  c.amsgrad = amsgrad;
  c.maximize = maximize;
  return c;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST(FusedAdam, EverySimdLevelGivesThePortableBits) {
  std::vector<const simd::Kernels*> levels;
  for (auto level : {simd::Level::kAvx2, simd::Level::kAvx512})
    if (const auto* k = simd::kernels_f32_at(level)) levels.push_back(k);
  if (levels.empty()) GTEST_SKIP() << "no AVX2 / AVX-512 on this CPU: the portable kernel only";
  for (std::int64_t n : {1, 7, 8, 15, 16, 17, 37, 1000, 4099}) {
    for (int flags = 0; flags < 16; ++flags) {
      const AdamCoeffs<float> c = coeffs(flags & 1, flags & 2, flags & 4, flags & 8);
      Buffers ref = random_buffers(n, static_cast<unsigned>(n));
      minigrad::detail::fused_adam_kernel_portable(ref.p.data(), ref.g.data(), ref.m.data(),
                                                   ref.v.data(), ref.mv.data(), n, c);
      for (const simd::Kernels* k : levels) {
        Buffers b = random_buffers(n, static_cast<unsigned>(n));
        k->adam(b.p.data(), b.g.data(), b.m.data(), b.v.data(), b.mv.data(), n, c);
        EXPECT_TRUE(same_bits(b.p, ref.p)) << k->name << " n " << n << " flags " << flags;
        EXPECT_TRUE(same_bits(b.m, ref.m)) << k->name << " n " << n << " flags " << flags;
        EXPECT_TRUE(same_bits(b.v, ref.v)) << k->name << " n " << n << " flags " << flags;
        EXPECT_TRUE(same_bits(b.mv, ref.mv)) << k->name << " n " << n << " flags " << flags;
      }
    }
  }
}

TEST(FusedAdam, SameBitsOnOneAndTwoThreads) {
  const int saved = mg::get_num_threads();
  const std::int64_t n = 300007;  // several chunks of the kernel's grain, and a tail
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    mg::set_num_threads(threads);
    Buffers b = random_buffers(n, 5);
    mg::Tensor p = mg::tensor(b.p), g = mg::tensor(b.g), m = mg::tensor(b.m), v = mg::tensor(b.v),
               mv = mg::tensor(b.mv);
    mg::detail::FusedAdamOptions o;
    o.lr = 6e-4;
    o.beta2 = 0.95;
    o.weight_decay = 0.1;
    o.amsgrad = true;
    o.decoupled_weight_decay = true;
    const std::int64_t regions = mg::detail::parallel_regions_run();
    ASSERT_TRUE(mg::detail::fused_adam_(p, g, m, v, mv, 3, o));
    if (threads == 2) {
      EXPECT_GT(mg::detail::parallel_regions_run(), regions);
    }
    results.push_back(p.to_vector<float>());
    results.push_back(mv.to_vector<float>());
  }
  mg::set_num_threads(saved);
  EXPECT_TRUE(same_bits(results[0], results[2]));
  EXPECT_TRUE(same_bits(results[1], results[3]));
}

TEST(FusedAdam, Float64MatchesTheFormula) {
  mg::Tensor p = mg::tensor({0.5, -1.0}, mg::kFloat64), g = mg::tensor({0.25, 0.5}, mg::kFloat64);
  mg::Tensor m = mg::zeros({2}, mg::kFloat64), v = mg::zeros({2}, mg::kFloat64);
  mg::detail::FusedAdamOptions o;
  o.lr = 0.1;
  ASSERT_TRUE(mg::detail::fused_adam_(p, g, m, v, mg::Tensor(), 1, o));
  // Step 1 of Adam moves each value by lr * g / (|g| + eps): about -0.1 here.
  EXPECT_NEAR(p.to_vector<double>()[0], 0.4, 1e-7);
  EXPECT_NEAR(p.to_vector<double>()[1], -1.1, 1e-7);
  EXPECT_DOUBLE_EQ(m.to_vector<double>()[0], 0.025);
  EXPECT_DOUBLE_EQ(v.to_vector<double>()[1], 0.001 * 0.25);
}

TEST(FusedAdam, DeclinesWhatItCannotRunAndThrowsOnBadCalls) {
  mg::detail::FusedAdamOptions o;
  mg::Tensor p = mg::zeros({2, 3}), g = mg::ones({2, 3}), m = mg::zeros({2, 3}),
             v = mg::zeros({2, 3});
  // Not applicable: the caller runs the unfused ops, nothing is written.
  EXPECT_FALSE(mg::detail::fused_adam_(p, mg::ones({3, 2}).t(), m, v, mg::Tensor(), 1, o));
  EXPECT_FALSE(mg::detail::fused_adam_(p, g, m.to(mg::kFloat64), v, mg::Tensor(), 1, o));
  EXPECT_FALSE(mg::detail::fused_adam_(p.to(mg::kInt64), g.to(mg::kInt64), m.to(mg::kInt64),
                                       v.to(mg::kInt64), mg::Tensor(), 1, o));
  EXPECT_EQ(m.sum().item<double>(), 0.0);
  auto expect_error = [](auto&& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << "expected [_fused_adam_] " << what;
    } catch (const mg::Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[_fused_adam_] ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error([&] { mg::detail::fused_adam_(p, mg::ones({3}), m, v, mg::Tensor(), 1, o); },
               "grad has shape (3,) but param has shape (2, 3)");
  expect_error([&] { mg::detail::fused_adam_(p, g, m, v, mg::Tensor(), 0, o); },
               "step must be >= 1");
  o.amsgrad = true;
  expect_error([&] { mg::detail::fused_adam_(p, g, m, v, mg::Tensor(), 1, o); },
               "amsgrad needs max_exp_avg_sq");
  o.amsgrad = false;
  mg::Tensor leaf = mg::zeros({2, 3}).requires_grad_();
  expect_error([&] { mg::detail::fused_adam_(leaf, g, m, v, mg::Tensor(), 1, o); }, "NoGradGuard");
  expect_error([&] { mg::detail::fused_adam_(mg::Tensor(), g, m, v, mg::Tensor(), 1, o); },
               "undefined tensor");
}
