// Bit-exact parity of minigrad's random numbers with PyTorch 1.13's CPU generator.
//
// The reference values come from torch 1.13 (x86-64 Linux, AVX2 kernels, glibc): the golden cases
// in tests/data/torch_rng_golden.h and the literals below. Every comparison is on the bit pattern,
// never with a tolerance: a last-bit difference means an algorithm detail is wrong.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <minigrad/minigrad.h>

// The private generator, for the ops the public API does not expose (uniform_/normal_ with
// bounds, the nn.init formulas) and for counting raw engine draws.
#include "../../core/src/kernels/simd.h"
#include "../../core/src/random_engine.h"
#include "data/torch_rng_golden.h"

namespace mg = minigrad;

namespace torch_rng_golden {
// gtest prints a failing parameter with this instead of its raw bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
}  // namespace torch_rng_golden

namespace {

mg::detail::Generator& gen() { return mg::detail::default_generator(); }

/// The element bits of a float32/float64/int64 tensor, zero-extended to 64 bits (the encoding
/// of torch_rng_golden.h).
std::vector<std::uint64_t> bits_of(const mg::Tensor& t) {
  mg::Tensor c = t.contiguous();
  std::vector<std::uint64_t> out(static_cast<std::size_t>(c.numel()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (c.dtype() == mg::kFloat32) {
      out[i] = std::bit_cast<std::uint32_t>(c.data_ptr<float>()[i]);
    } else if (c.dtype() == mg::kFloat64) {
      out[i] = std::bit_cast<std::uint64_t>(c.data_ptr<double>()[i]);
    } else {
      out[i] = static_cast<std::uint64_t>(c.data_ptr<std::int64_t>()[i]);
    }
  }
  return out;
}

template <typename T>
std::vector<std::uint64_t> bits_of(const std::vector<T>& v) {
  std::vector<std::uint64_t> out;
  for (T x : v) {
    if constexpr (sizeof(T) == 4) {
      out.push_back(std::bit_cast<std::uint32_t>(x));
    } else {
      out.push_back(std::bit_cast<std::uint64_t>(x));
    }
  }
  return out;
}

std::uint32_t fbits(float x) { return std::bit_cast<std::uint32_t>(x); }
std::uint64_t dbits(double x) { return std::bit_cast<std::uint64_t>(x); }

/// Number of raw 32-bit engine draws between two states: replays a fresh std::mt19937 (torch's
/// engine) seeded with `seed` until it yields the generator's next output.
int draws_used_since_seed(std::uint32_t seed) {
  std::mt19937 ref(seed);
  std::uint32_t next = 0;
  {
    std::lock_guard<std::mutex> lock(gen().mutex);
    next = gen().random();
  }
  for (int i = 0; i < 100000; ++i) {
    if (static_cast<std::uint32_t>(ref()) == next) return i;
  }
  return -1;
}

// ---------------------------------------------------------------- golden-case interpreter

mg::Shape parse_shape(const std::string& s) {
  mg::Shape shape;
  std::stringstream ss(s);
  std::string dim;
  while (std::getline(ss, dim, ',')) shape.push_back(std::stoll(dim));
  return shape;
}

std::int64_t numel_of(const mg::Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

template <typename T>
std::vector<std::uint64_t> uniform_bits(std::int64_t n, double from, double to) {
  std::vector<T> v(static_cast<std::size_t>(n));
  std::lock_guard<std::mutex> lock(gen().mutex);
  gen().uniform_(v.data(), n, from, to);
  return bits_of(v);
}

template <typename T>
std::vector<std::uint64_t> normal_bits(std::int64_t n, double mean, double std) {
  std::vector<T> v(static_cast<std::size_t>(n));
  std::lock_guard<std::mutex> lock(gen().mutex);
  gen().normal_(v.data(), n, mean, std);
  return bits_of(v);
}

/// Runs the ops of one golden case (see the op language in torch_rng_golden.h) and returns the
/// bits each op produced. nn.Linear and nn.init are emulated with torch's Python formulas (all in
/// double, glibc sqrt/pow) on top of the generator's uniform_/normal_.
std::vector<std::vector<std::uint64_t>> run_case(const torch_rng_golden::Case& c) {
  mg::manual_seed(c.seed);
  std::vector<std::vector<std::uint64_t>> results;
  std::vector<std::uint64_t> pending_linear_bias;
  for (std::size_t k = 0; k < c.n_ops; ++k) {
    std::stringstream ss(c.ops[k].op);
    std::vector<std::string> w;
    for (std::string tok; ss >> tok;) w.push_back(tok);
    const std::string& name = w.at(0);
    if (name == "randn" || name == "rand") {
      const mg::Dtype dt = w.at(1) == "f32" ? mg::kFloat32 : mg::kFloat64;
      const mg::Shape shape = parse_shape(w.at(2));
      results.push_back(bits_of(name == "randn" ? mg::randn(shape, dt) : mg::rand(shape, dt)));
    } else if (name == "uniform" || name == "normal") {
      const std::int64_t n = numel_of(parse_shape(w.at(2)));
      const double a = std::stod(w.at(3));
      const double b = std::stod(w.at(4));
      const bool f32 = w.at(1) == "f32";
      if (name == "uniform") {
        results.push_back(f32 ? uniform_bits<float>(n, a, b) : uniform_bits<double>(n, a, b));
      } else {
        results.push_back(f32 ? normal_bits<float>(n, a, b) : normal_bits<double>(n, a, b));
      }
    } else if (name == "randint") {
      results.push_back(
          bits_of(mg::randint(std::stoll(w.at(2)), std::stoll(w.at(3)), parse_shape(w.at(1)))));
    } else if (name == "linear" && w.at(4) == "weight") {
      // nn.Linear(in, out).reset_parameters(): kaiming_uniform_(weight, a=sqrt(5)), then
      // bias.uniform_(-1/sqrt(fan_in), 1/sqrt(fan_in)).
      const std::int64_t in = std::stoll(w.at(1));
      const std::int64_t out = std::stoll(w.at(2));
      const double a = std::sqrt(5.0);
      const double gain = std::sqrt(2.0 / (1 + std::pow(a, 2.0)));
      const double std_dev = gain / std::sqrt(static_cast<double>(in));
      const double bound = std::sqrt(3.0) * std_dev;
      results.push_back(uniform_bits<float>(out * in, -bound, bound));
      if (w.at(3) == "1") {
        const double b = 1 / std::sqrt(static_cast<double>(in));
        pending_linear_bias = uniform_bits<float>(out, -b, b);
      }
    } else if (name == "linear" && w.at(4) == "bias") {
      results.push_back(pending_linear_bias);
    } else if (name == "xavier_uniform" || name == "xavier_normal") {
      const mg::Shape shape = parse_shape(w.at(2));
      std::int64_t receptive = 1;
      for (std::size_t d = 2; d < shape.size(); ++d) receptive *= shape[d];
      const std::int64_t fan_in = shape.at(1) * receptive;
      const std::int64_t fan_out = shape.at(0) * receptive;
      const double std_dev = 1.0 * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
      if (name == "xavier_uniform") {
        const double a = std::sqrt(3.0) * std_dev;
        results.push_back(uniform_bits<float>(numel_of(shape), -a, a));
      } else {
        results.push_back(normal_bits<float>(numel_of(shape), 0.0, std_dev));
      }
    } else {
      ADD_FAILURE() << "unknown golden op " << c.ops[k].op;
      results.emplace_back();
    }
  }
  return results;
}

class RandomGolden : public ::testing::TestWithParam<torch_rng_golden::Case> {};

// Every golden case, every value, bit for bit.
TEST_P(RandomGolden, BitExact) {
  const torch_rng_golden::Case& c = GetParam();
  const auto results = run_case(c);
  ASSERT_EQ(results.size(), c.n_ops);
  for (std::size_t k = 0; k < c.n_ops; ++k) {
    const torch_rng_golden::Op& op = c.ops[k];
    SCOPED_TRACE(std::string("op ") + std::to_string(k) + ": " + op.op);
    ASSERT_EQ(results[k].size(), op.n);
    int mismatches = 0;
    for (std::size_t i = 0; i < op.n; ++i) {
      if (results[k][i] != op.bits[i] && ++mismatches <= 5) {
        ADD_FAILURE() << "element " << i << ": got bits 0x" << std::hex << results[k][i]
                      << ", torch 0x" << op.bits[i];
      }
    }
    EXPECT_EQ(mismatches, 0) << "of " << op.n << " elements";
  }
}

std::string case_name(const ::testing::TestParamInfo<torch_rng_golden::Case>& p) {
  return p.param.name;
}

INSTANTIATE_TEST_SUITE_P(Random, RandomGolden, ::testing::ValuesIn(torch_rng_golden::kCases),
                         case_name);

// ---------------------------------------------------------------- hand-written checks

// torch-rng-parity §1: MT19937 seeded with 0 (torch: the first four raw 32-bit outputs).
TEST(RandomEngine, Seed0Outputs) {
  mg::manual_seed(0);
  std::lock_guard<std::mutex> lock(gen().mutex);
  EXPECT_EQ(gen().random(), 2357136044u);
  EXPECT_EQ(gen().random(), 2546248239u);
  EXPECT_EQ(gen().random(), 3071714933u);
  EXPECT_EQ(gen().random(), 3626093760u);
}

// Our own MT19937 (Note [Our own MT19937] in mt19937.h) gives std::mt19937's outputs (the
// reference: libstdc++'s implementation of the published algorithm), draw for draw, on every
// SIMD level this CPU has and the portable code: single draws, blocks of many sizes across twist
// boundaries, both mixed, and after set_state at every kind of position.
TEST(RandomEngine, Mt19937MatchesStdOnEveryLevel) {
  namespace simd = minigrad::detail::simd;
  std::vector<simd::Level> levels{simd::Level::kPortable};
  for (auto level : {simd::Level::kAvx2, simd::Level::kAvx512})
    if (simd::kernels_f32_at(level)) levels.push_back(level);
  struct Restore {
    ~Restore() { simd::set_max_level(simd::Level::kAvx512); }
  } restore;
  for (const simd::Level level : levels) {
    simd::set_max_level(level);
    SCOPED_TRACE("level " + std::to_string(static_cast<int>(level)));
    for (const std::uint32_t seed : {0u, 1u, 5489u, 0xF19CD101u, 0xFFFFFFFFu}) {
      std::mt19937 ref(seed);
      minigrad::detail::Mt19937 ours(seed);
      // Single draws, then blocks whose sizes cross the 624-word twist at many offsets.
      for (int i = 0; i < 1000; ++i) ASSERT_EQ(ours(), ref()) << "seed " << seed << " draw " << i;
      std::vector<std::uint32_t> block;
      for (const std::int64_t n : {1, 7, 15, 16, 17, 623, 624, 625, 1000, 1248, 5000, 3}) {
        block.assign(static_cast<std::size_t>(n), 0);
        ours.fill(block.data(), n);
        for (std::int64_t i = 0; i < n; ++i)
          ASSERT_EQ(block[static_cast<std::size_t>(i)], ref()) << "seed " << seed << " n " << n;
        ASSERT_EQ(ours(), ref());
      }
    }
    // set_state: position 624 (twist next), 0 and a middle one, from std::mt19937's text form.
    std::mt19937 ref(123u);
    for (int skip : {0, 1, 300}) {
      for (int i = 0; i < skip; ++i) ref();
      std::stringstream text;
      text << ref;
      std::vector<std::uint32_t> words(624);
      for (auto& w : words) text >> w;
      int position = 0;
      text >> position;
      minigrad::detail::Mt19937 ours;
      ours.set_state(words.data(), position);
      EXPECT_EQ(ours.position(), position);
      std::vector<std::uint32_t> block(2000);
      ours.fill(block.data(), 2000);
      for (std::uint32_t v : block) ASSERT_EQ(v, ref()) << "skip " << skip;
    }
  }
  minigrad::detail::Mt19937 ours;
  std::uint32_t words[624] = {};
  EXPECT_THROW(ours.set_state(words, 625), minigrad::Error);
  EXPECT_THROW(ours.set_state(words, -1), minigrad::Error);
}

// random64: the first draw is the high word.
TEST(RandomEngine, Random64HighWordFirst) {
  mg::manual_seed(0);
  std::lock_guard<std::mutex> lock(gen().mutex);
  EXPECT_EQ(gen().random64(), (std::uint64_t{2357136044u} << 32) | 2546248239u);
}

TEST(RandomApi, SanityVectorsSeed0) {
  mg::manual_seed(0);
  mg::Tensor r = mg::rand({2});
  EXPECT_EQ(fbits(r.data_ptr<float>()[0]), fbits(0.49625659f));
  EXPECT_EQ(fbits(r.data_ptr<float>()[1]), fbits(0.76822180f));

  mg::manual_seed(0);
  mg::Tensor r64 = mg::rand({1}, mg::kFloat64);
  EXPECT_EQ(dbits(r64.data_ptr<double>()[0]), dbits(0.9700530018065531));

  // Small path: r*cos of the first pair, then the cached r*sin.
  mg::manual_seed(0);
  mg::Tensor n = mg::randn({2});
  EXPECT_EQ(fbits(n.data_ptr<float>()[0]), fbits(1.5409961f));
  EXPECT_EQ(fbits(n.data_ptr<float>()[1]), fbits(-0.2934289f));
}

// The consequence that matters to users: the same seed gives torch's tensor. Values printed by
// `torch.manual_seed(0); torch.randn(2, 5, 16)` (float32 fill path with the Cephes kernel).
TEST(RandomApi, Randn2x5x16MatchesTorch) {
  const float expected[160] = {
      -1.1258398f,  -1.1523602f,   -0.25057858f,  -0.4338788f,  0.84871036f,   0.69200915f,
      -0.31601277f, -2.1152194f,   0.32227492f,   -1.2633348f,  0.3499832f,    0.30813393f,
      0.11984151f,  1.2376579f,    1.1167772f,    -0.24727815f, -1.3526537f,   -1.6959312f,
      0.5666506f,   0.79350835f,   0.59883946f,   -1.5550951f,  -0.3413604f,   1.8530061f,
      0.7501895f,   -0.58549756f,  -0.17339675f,  0.18347794f,  1.3893661f,    1.5863342f,
      0.94629836f,  -0.84367675f,  -0.6135831f,   0.03159274f,  -0.49267697f,  0.24841475f,
      0.43969584f,  0.112411186f,  0.64079237f,   0.44115627f,  -0.10230965f,  0.792444f,
      -0.2896677f,  0.052507486f,  0.52286047f,   2.3022053f,   -1.4688939f,   -1.5866888f,
      -0.6730899f,  0.8728312f,    1.0553575f,    0.17784372f,  -0.23033547f,  -0.3917544f,
      0.5432947f,   -0.39515755f,  -0.44621718f,  0.7440207f,   1.5209795f,    3.4105027f,
      -1.5311843f,  -1.234135f,    1.8197253f,    -0.5515287f,  -0.5692481f,   0.9199714f,
      1.1108161f,   1.2898741f,    -1.478174f,    2.5672328f,   -0.4731198f,   0.33555076f,
      -1.629326f,   -0.54974365f,  -0.47983426f,  -0.49968153f, -1.0669804f,   1.1149396f,
      -0.14067143f, 0.8057536f,    -0.093348235f, 0.6870502f,   -0.83831537f,  0.00089182175f,
      0.8418941f,   -0.40003416f,  1.039462f,     0.3581531f,   -0.24600095f,  2.3025165f,
      -1.8816892f,  -0.049727023f, -1.0449786f,   -0.9565008f,  0.03353186f,   0.7100866f,
      1.645867f,    -1.3601689f,   0.34456542f,   0.5198677f,   -2.6133225f,   -1.6964744f,
      -0.22824179f, 0.279955f,     0.2469264f,    0.076887004f, 0.3380058f,    0.45440176f,
      0.45694014f,  -0.86537135f,  0.78130794f,   -0.9267894f,  -0.21883368f,  -2.4350653f,
      -0.07291476f, -0.03398641f,  0.9625183f,    0.34916824f,  -0.921462f,    -0.056194786f,
      -0.6226985f,  -0.46372217f,  1.9217824f,    -0.40254554f, 0.12390248f,   1.1647835f,
      0.9233735f,   1.3872952f,    -0.88337576f,  -0.41891348f, -0.8048265f,   0.56560963f,
      0.6103646f,   0.46688354f,   1.9506571f,    -1.0630985f,  -0.077325754f, 0.11639865f,
      -0.5939908f,  -1.2439282f,   -0.10209263f,  -1.0335484f,  -0.31263882f,  0.24578547f,
      -0.25964156f, 0.11833705f,   0.24395925f,   1.1646006f,   0.28857616f,   0.38659775f,
      -0.20106392f, -0.117926985f, 0.19219905f,   -0.7721569f,  -1.9003453f,   0.13067745f,
      -0.70429397f, 0.31472096f,   0.15739289f,   0.3853627f};
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({2, 5, 16});
  ASSERT_EQ(x.shape(), (mg::Shape{2, 5, 16}));
  EXPECT_EQ(std::memcmp(x.data_ptr<float>(), expected, sizeof(expected)), 0);
  for (int i = 0; i < 160; ++i) {
    EXPECT_EQ(fbits(x.data_ptr<float>()[i]), fbits(expected[i])) << "element " << i;
  }
}

// torch-rng-parity §5.1/§5.4: engine draws per call. The fill path (n >= 16) draws n uniforms
// plus 16 fresh ones when n % 16 != 0 (x2 for float64); the small path draws 4 per pair.
TEST(RandomApi, DrawCounts) {
  struct Count {
    mg::Shape shape;
    mg::Dtype dtype;
    int draws;
  };
  const Count counts[] = {
      {{3}, mg::kFloat32, 8},          {{15}, mg::kFloat32, 32},      {{16}, mg::kFloat32, 16},
      {{17}, mg::kFloat32, 33},        {{2, 5, 5}, mg::kFloat32, 66}, {{17}, mg::kFloat64, 66},
      {{16}, mg::kFloat64, 32},        {{1000}, mg::kFloat32, 1016},  {{3}, mg::kFloat64, 8},
      {{2, 5, 16}, mg::kFloat32, 160},
  };
  for (const Count& c : counts) {
    mg::manual_seed(0);
    mg::randn(c.shape, c.dtype);
    EXPECT_EQ(draws_used_since_seed(0), c.draws)
        << "randn numel " << numel_of(c.shape) << " " << mg::dtype_name(c.dtype);
  }
  mg::manual_seed(0);
  mg::rand({5}, mg::kFloat64);
  EXPECT_EQ(draws_used_since_seed(0), 10);
  mg::manual_seed(0);
  mg::randint(0, std::int64_t{1} << 33, {3});
  EXPECT_EQ(draws_used_since_seed(0), 6);
  mg::manual_seed(0);
  mg::randint(0, 100, {3});
  EXPECT_EQ(draws_used_since_seed(0), 3);
}

// randn(n) is not a prefix of randn(n + 1): the sizes straddling 16 use different algorithms,
// and 17 recomputes its last 16 slots from new uniforms.
TEST(RandomApi, RandnSizesAroundSixteen) {
  mg::manual_seed(0);
  const auto r15 = bits_of(mg::randn({15}));
  mg::manual_seed(0);
  const auto r16 = bits_of(mg::randn({16}));
  mg::manual_seed(0);
  const auto r17 = bits_of(mg::randn({17}));
  EXPECT_NE(r15[0], r16[0]);
  EXPECT_EQ(r16[0], r17[0]);  // slot 0 is outside the recomputed tail
  EXPECT_NE(r16[1], r17[1]);
  EXPECT_EQ(r16[0], fbits(-1.1258398f));
  EXPECT_EQ(r15[0], fbits(1.5409961f));
}

// The AVX2 normal kernel (kernels/normal_avx2.cpp) against the scalar emulation it replaces
// (random.cpp), over every uniform the generator can give (k * 2^-24 for every k < 2^24) in both
// roles, radius and angle, bit for bit; then a few means and deviations. The scalar emulation
// itself is what the golden cases check against torch's values.
TEST(RandomApi, NormalKernelMatchesTheScalarPathOnEveryUniform) {
  namespace simd = minigrad::detail::simd;
  const simd::NormalBlocks kernel = simd::normal_blocks_avx2();
  if (kernel == nullptr || simd::kernels_f32_at(simd::Level::kAvx2) == nullptr)
    GTEST_SKIP() << "no AVX2 on this CPU";
  constexpr std::int64_t kBlocks = 1 << 14;  // 2^17 uniforms a chunk, each in both lanes
  std::vector<float> ref(16 * kBlocks), got(16 * kBlocks);
  const struct {
    float mean, stddev;
    std::int64_t stride;  // every k, or a sample of them
  } affine[] = {{0.0f, 1.0f, 1}, {0.5f, 0.02f, 7}, {-3.0f, 2.5f, 7}};
  for (const auto& a : affine) {
    std::int64_t mismatches = 0;
    for (std::int64_t k0 = 0; k0 < (std::int64_t{1} << 24); k0 += 8 * kBlocks * a.stride) {
      for (std::int64_t b = 0; b < kBlocks; ++b)
        for (std::int64_t j = 0; j < 8; ++j) {
          const std::int64_t k = (k0 + (8 * b + j) * a.stride) & ((std::int64_t{1} << 24) - 1);
          const float u = static_cast<float>(k) * 0x1p-24f;
          ref[16 * b + j] = ref[16 * b + j + 8] = u;
        }
      got = ref;
      mg::detail::normal_blocks_scalar(ref.data(), kBlocks, a.mean, a.stddev);
      kernel(got.data(), kBlocks, a.mean, a.stddev);
      for (std::size_t i = 0; i < ref.size(); ++i) {
        if (std::bit_cast<std::uint32_t>(ref[i]) != std::bit_cast<std::uint32_t>(got[i]) &&
            ++mismatches <= 5) {
          ADD_FAILURE() << "mean " << a.mean << " std " << a.stddev << " slot " << i % 16
                        << ": scalar " << ref[i] << ", kernel " << got[i];
        }
      }
    }
    EXPECT_EQ(mismatches, 0) << "mean " << a.mean << " std " << a.stddev;
  }
}

// randn and normal_ through the public API give the same bits on every SIMD level this CPU has
// and the portable code, across the fill path's tail (n % 16 != 0).
TEST(RandomApi, RandnIsTheSameOnEveryLevel) {
  namespace simd = minigrad::detail::simd;
  struct Restore {
    ~Restore() { simd::set_max_level(simd::Level::kAvx512); }
  } restore;
  std::vector<std::vector<std::uint64_t>> results;
  for (const simd::Level level :
       {simd::Level::kPortable, simd::Level::kAvx2, simd::Level::kAvx512}) {
    if (level != simd::Level::kPortable && simd::kernels_f32_at(level) == nullptr) continue;
    simd::set_max_level(level);
    mg::manual_seed(7);
    auto bits = bits_of(mg::randn({100003}));
    const auto more = bits_of(mg::empty({33, 5}).normal_(2.0, 0.5));
    bits.insert(bits.end(), more.begin(), more.end());
    results.push_back(bits);
  }
  for (std::size_t r = 1; r < results.size(); ++r)
    EXPECT_EQ(results[r], results[0]) << "level " << r;
}

// torch-rng-parity §5.4: the spare sin value lives in the generator. It survives across calls
// and dtypes, the fill path leaves it alone, and manual_seed drops it.
TEST(RandomApi, SpareSurvivesCallsAndDtypes) {
  // Reference: one randn(4) draws two pairs: [c0, s0, c1, s1].
  mg::manual_seed(0);
  const mg::Tensor four = mg::randn({4}, mg::kFloat64);
  const double* ref = four.data_ptr<double>();

  // randn(1) f32 leaves s0 cached; a 32-element fill path call does not touch it; randn(1) f64
  // then returns s0 exactly (the cache is a double).
  mg::manual_seed(0);
  const mg::Tensor a = mg::randn({1}, mg::kFloat32);
  EXPECT_EQ(fbits(a.data_ptr<float>()[0]), fbits(static_cast<float>(ref[0])));
  mg::randn({32}, mg::kFloat32);
  const mg::Tensor b = mg::randn({1}, mg::kFloat64);
  EXPECT_EQ(dbits(b.data_ptr<double>()[0]), dbits(ref[1]));

  // Seeding clears the spare: randn(1) after reseeding starts a new pair (c0 again).
  mg::manual_seed(0);
  mg::randn({1});
  mg::manual_seed(0);
  const mg::Tensor c = mg::randn({1}, mg::kFloat64);
  EXPECT_EQ(dbits(c.data_ptr<double>()[0]), dbits(ref[0]));
}

// torch-rng-parity §1: only the low 32 bits of the seed reach the engine.
TEST(RandomApi, SeedUsesLow32Bits) {
  mg::manual_seed((std::uint64_t{1} << 32) + 5);
  const auto a = bits_of(mg::randn({3}));
  const auto a2 = bits_of(mg::rand({20}));
  mg::manual_seed(5);
  EXPECT_EQ(bits_of(mg::randn({3})), a);
  EXPECT_EQ(bits_of(mg::rand({20})), a2);
}

// torch-rng-parity §4: randint, 1 draw below 2^32 and random64 at or above it (wrapping sum).
TEST(RandomApi, Randint) {
  mg::manual_seed(0);
  const mg::Tensor small = mg::randint(0, 10, {4});
  const std::int64_t expected_small[4] = {2357136044 % 10, 2546248239 % 10, 3071714933 % 10,
                                          3626093760 % 10};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(small.data_ptr<std::int64_t>()[i], expected_small[i]);

  mg::manual_seed(0);
  const std::int64_t high = std::int64_t{1} << 40;
  const mg::Tensor big = mg::randint(-5, high, {2});
  const std::uint64_t v0 = (std::uint64_t{2357136044u} << 32) | 2546248239u;
  const std::uint64_t v1 = (std::uint64_t{3071714933u} << 32) | 3626093760u;
  const std::uint64_t range = static_cast<std::uint64_t>(high) + 5;
  EXPECT_EQ(big.data_ptr<std::int64_t>()[0], static_cast<std::int64_t>(v0 % range) - 5);
  EXPECT_EQ(big.data_ptr<std::int64_t>()[1], static_cast<std::int64_t>(v1 % range) - 5);

  // Floating dtypes draw the same integers.
  mg::manual_seed(0);
  const mg::Tensor f = mg::randint(10, {4}, mg::kFloat32);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f.data_ptr<float>()[i], static_cast<float>(expected_small[i]));
  }
}

// The *_like variants follow the tensor's shape and dtype and use the same stream.
TEST(RandomApi, LikeVariants) {
  const mg::Tensor proto = mg::zeros({2, 10}, mg::kFloat64);
  mg::manual_seed(3);
  const auto a = bits_of(mg::randn_like(proto));
  const auto b = bits_of(mg::rand_like(proto));
  mg::manual_seed(3);
  EXPECT_EQ(bits_of(mg::randn({2, 10}, mg::kFloat64)), a);
  EXPECT_EQ(bits_of(mg::rand({2, 10}, mg::kFloat64)), b);
}

// torch.randperm(n, generator=g) after g.manual_seed(seed), printed by PyTorch 1.13.
TEST(RandomApi, RandpermMatchesTorch) {
  mg::Generator g;
  g.manual_seed(0);
  EXPECT_EQ(mg::randperm(1, g).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0}));
  g.manual_seed(0);
  EXPECT_EQ(mg::randperm(2, g).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1}));
  g.manual_seed(1);
  EXPECT_EQ(mg::randperm(2, g).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0}));
  g.manual_seed(42);
  EXPECT_EQ(mg::randperm(10, g).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{2, 6, 1, 8, 4, 5, 0, 9, 3, 7}));
  g.manual_seed(7);
  const mg::Tensor p = mg::randperm(1000, g);
  ASSERT_EQ(p.dtype(), mg::kInt64);
  ASSERT_EQ(p.shape(), (mg::Shape{1000}));
  const std::vector<std::int64_t> v = p.to_vector<std::int64_t>();
  EXPECT_EQ(std::vector<std::int64_t>(v.begin(), v.begin() + 5),
            (std::vector<std::int64_t>{615, 284, 599, 580, 347}));
  EXPECT_EQ(std::vector<std::int64_t>(v.end() - 5, v.end()),
            (std::vector<std::int64_t>{482, 594, 570, 477, 409}));
  EXPECT_EQ(p.sum().item<std::int64_t>(), 499500);  // a permutation of 0..999
  // The default generator (torch.manual_seed(42); torch.randperm(10)).
  mg::manual_seed(42);
  EXPECT_EQ(mg::randperm(10).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{2, 6, 1, 8, 4, 5, 0, 9, 3, 7}));
  EXPECT_EQ(mg::randperm(0).numel(), 0);
  EXPECT_THROW(mg::randperm(-1), mg::Error);
}

// torch.multinomial after torch.manual_seed(seed), printed by PyTorch 1.13 (`.tolist()`); a
// torch.rand(2) after it checks that the same number of draws was used.
TEST(Multinomial, MatchesPyTorch) {
  using I = std::vector<std::int64_t>;
  // torch.manual_seed(0); torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4]), 2) -> [2, 1];
  // torch.rand(2) -> [0.455627977848053, 0.6323062777519226]
  mg::manual_seed(0);
  mg::Tensor a = mg::multinomial(mg::tensor({0.1, 0.2, 0.3, 0.4}), 2);
  EXPECT_EQ(a.shape(), (mg::Shape{2}));
  EXPECT_EQ(a.to_vector<std::int64_t>(), (I{2, 1}));
  EXPECT_EQ(mg::rand({2}).to_vector<float>(),
            (std::vector<float>{0.455627977848053f, 0.6323062777519226f}));
  // torch.manual_seed(1); torch.multinomial(torch.tensor([[0.5, 1., 2., 0., 1.5],
  //     [3., 1., 0.25, 0.25, 1.]], dtype=torch.float64), 6, True)
  //   -> [[0, 1, 1, 1, 2, 1], [0, 1, 1, 0, 0, 0]]; torch.rand(2) -> [0.3397757411003113,
  //   0.5239408016204834]
  mg::manual_seed(1);
  mg::Tensor b = mg::multinomial(
      mg::tensor({{0.5, 1.0, 2.0, 0.0, 1.5}, {3.0, 1.0, 0.25, 0.25, 1.0}}, mg::kFloat64), 6, true);
  EXPECT_EQ(b.shape(), (mg::Shape{2, 6}));
  EXPECT_EQ(b.to_vector<std::int64_t>(), (I{0, 1, 1, 1, 2, 1, 0, 1, 1, 0, 0, 0}));
  EXPECT_EQ(mg::rand({2}).to_vector<float>(),
            (std::vector<float>{0.3397757411003113f, 0.5239408016204834f}));
  // torch.manual_seed(2); torch.multinomial(torch.tensor([[1., 2., 3., 4.], [4., 0., 2., 1.]]), 1)
  //   -> [[1], [2]]
  mg::manual_seed(2);
  mg::Tensor c = mg::tensor({{1.0, 2.0, 3.0, 4.0}, {4.0, 0.0, 2.0, 1.0}}).multinomial(1);
  EXPECT_EQ(c.shape(), (mg::Shape{2, 1}));
  EXPECT_EQ(c.to_vector<std::int64_t>(), (I{1, 2}));
  // torch.manual_seed(3); torch.multinomial(torch.tensor([1., 2., 3., 4., 5., 6.]), 6)
  //   -> [0, 3, 5, 1, 4, 2]
  mg::Generator g;
  g.manual_seed(3);
  EXPECT_EQ(mg::multinomial(mg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}), 6, false, g)
                .to_vector<std::int64_t>(),
            (I{0, 3, 5, 1, 4, 2}));
  // torch.manual_seed(4); torch.multinomial(torch.arange(1, 101, dtype=torch.float32), 40, True)
  mg::manual_seed(4);
  EXPECT_EQ(mg::multinomial(mg::arange(1, 101, mg::kFloat32), 40, true).to_vector<std::int64_t>(),
            (I{68, 85, 23, 97, 97, 74, 63, 87, 32, 67, 41, 92, 63, 6,  73, 58, 63, 83, 66, 47,
               47, 70, 59, 39, 80, 70, 56, 7,  98, 70, 39, 37, 65, 76, 19, 75, 98, 90, 51, 89}));
  // torch.manual_seed(5); torch.multinomial(torch.arange(1, 101, dtype=torch.float64), 12)
  //   -> [78, 47, 63, 46, 75, 35, 22, 94, 86, 56, 51, 85]
  mg::manual_seed(5);
  EXPECT_EQ(mg::multinomial(mg::arange(1, 101, mg::kFloat64), 12).to_vector<std::int64_t>(),
            (I{78, 47, 63, 46, 75, 35, 22, 94, 86, 56, 51, 85}));
}

TEST(Multinomial, BadInput) {
  EXPECT_THROW(mg::multinomial(mg::ones({2, 2, 2}), 1), mg::Error);
  EXPECT_THROW(mg::multinomial(mg::ones({3}), 4), mg::Error);
  EXPECT_THROW(mg::multinomial(mg::ones({3}), 0), mg::Error);
  EXPECT_THROW(mg::multinomial(mg::tensor({1.0, -1.0}), 1), mg::Error);
  EXPECT_THROW(mg::multinomial(mg::zeros({2}), 1, true), mg::Error);
  EXPECT_THROW(mg::multinomial(mg::tensor({1, 2}), 1), mg::Error);
}

}  // namespace
