// mg::Generator against PyTorch 1.13: get_state() gives torch.get_rng_state()'s bytes, and a state
// taken from PyTorch continues with PyTorch's numbers. Golden data:
// tests/data/torch_generator_states.txt (made by tests/data/gen_generator_states.py with
// /usr/bin/python3). The in-place fills Tensor::uniform_/normal_/random_ against
// tests/data/torch_inplace_random.txt (made by tests/data/gen_inplace_random.py).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

std::map<std::string, std::string> golden(const char* file = MINIGRAD_SOURCE_DIR
                                          "/tests/data/torch_generator_states.txt") {
  std::ifstream in(file);
  std::map<std::string, std::string> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto space = line.find(' ');
    rows[line.substr(0, space)] = line.substr(space + 1);
  }
  return rows;
}

std::vector<std::uint8_t> bytes(const std::string& hex) {
  std::vector<std::uint8_t> b;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    b.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return b;
}

TEST(Generator, StateBytesMatchPyTorch) {
  auto g = golden();
  ASSERT_EQ(g.size(), 6u) << "tests/data/torch_generator_states.txt is missing or incomplete";
  mg::manual_seed(5);
  EXPECT_EQ(mg::get_rng_state(), bytes(g["seed5"]));
  mg::manual_seed(5);
  mg::rand({1});
  EXPECT_EQ(mg::get_rng_state(), bytes(g["seed5_rand1"]));
  mg::manual_seed(5);
  mg::randn({1});  // leaves a cached Box-Muller value: normal_is_valid and normal_y
  EXPECT_EQ(mg::get_rng_state(), bytes(g["seed5_randn1"]));
  mg::manual_seed(5);
  mg::randn({20}, mg::kFloat64);
  EXPECT_EQ(mg::get_rng_state(), bytes(g["seed5_randn20_f64"]));
  mg::Generator fresh;
  EXPECT_EQ(fresh.get_state(), bytes(g["new_generator"]));
  EXPECT_EQ(fresh.initial_seed(), 67280421310721u);
}

TEST(Generator, StateFromPyTorchContinuesWithPyTorchsNumbers) {
  auto g = golden();
  mg::Generator gen;
  gen.set_state(bytes(g["seed5_randn1"]));
  std::vector<double> got = mg::randn({3}, gen, mg::kFloat64).to_vector<double>();
  for (double v : mg::rand({2}, gen, mg::kFloat64).to_vector<double>()) got.push_back(v);
  // torch.manual_seed(5); torch.randn(1); torch.randn(3, dtype=torch.float64),
  // torch.rand(2, dtype=torch.float64)
  std::vector<double> want;
  std::istringstream is(g["after_seed5_randn1"]);
  for (double v; is >> v;) want.push_back(v);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(got, want);
}

TEST(Generator, SaveAndRestoreRepeatsTheStream) {
  mg::Generator gen;
  gen.manual_seed(42);
  mg::randn({3}, gen);  // leaves a spare
  auto state = gen.get_state();
  std::vector<float> a = mg::randn({40}, gen).to_vector<float>();
  std::vector<std::int64_t> ai = mg::randint(0, 100, {7}, gen).to_vector<std::int64_t>();
  gen.set_state(state);
  EXPECT_EQ(mg::randn({40}, gen).to_vector<float>(), a);
  EXPECT_EQ(mg::randint(0, 100, {7}, gen).to_vector<std::int64_t>(), ai);
  EXPECT_EQ(gen.initial_seed(), 42u);
}

TEST(Generator, IsIndependentOfTheDefaultGenerator) {
  mg::manual_seed(1);
  std::vector<float> from_default = mg::randn({5}).to_vector<float>();
  mg::Generator gen;
  gen.manual_seed(1);
  mg::manual_seed(1);
  mg::randn({100}, gen);  // draws from gen leave the default stream alone
  EXPECT_EQ(mg::randn({5}).to_vector<float>(), from_default);
  // manual_seed(1) on a Generator gives the default generator's numbers for seed 1.
  mg::Generator gen2;
  gen2.manual_seed(1);
  EXPECT_EQ(mg::randn({5}, gen2).to_vector<float>(), from_default);
}

TEST(Generator, BadStatesAreRejectedAndLeaveTheGeneratorUnchanged) {
  mg::Generator gen;
  gen.manual_seed(3);
  auto good = gen.get_state();
  auto expect_error = [&](std::vector<std::uint8_t> state, const std::string& part) {
    try {
      gen.set_state(state);
      ADD_FAILURE() << "no error for " << part;
    } catch (const mg::Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
    EXPECT_EQ(gen.get_state(), good);
  };
  expect_error(std::vector<std::uint8_t>(100, 0), "[set_state] expected a state of 5056 bytes");
  auto bad_left = good;
  bad_left[8] = 0;  // left = 0
  expect_error(bad_left, "[set_state] left is 0");
  auto bad_word = good;
  bad_word[24 + 4] = 1;  // a state word above 32 bits
  expect_error(bad_word, "[set_state] state word 0");
}

// ---------------------------------------------------------------- in-place fills

std::string hex_of(const mg::Tensor& t) {
  mg::Tensor c = t.contiguous();
  std::size_t item = c.dtype() == mg::kFloat32 ? 4 : (c.dtype() == mg::kBool ? 1 : 8);
  const auto* p =
      c.dtype() == mg::kFloat32   ? reinterpret_cast<const std::uint8_t*>(c.data_ptr<float>())
      : c.dtype() == mg::kFloat64 ? reinterpret_cast<const std::uint8_t*>(c.data_ptr<double>())
      : c.dtype() == mg::kInt64 ? reinterpret_cast<const std::uint8_t*>(c.data_ptr<std::int64_t>())
                                : reinterpret_cast<const std::uint8_t*>(c.data_ptr<bool>());
  std::string out;
  char buf[3];
  for (std::size_t i = 0; i < item * static_cast<std::size_t>(c.numel()); ++i) {
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    out += buf;
  }
  return out;
}

// Each case mirrors one case of tests/data/gen_inplace_random.py: manual_seed(seed), then the
// fills in order on the same generator.
TEST(InplaceRandom, FillsMatchPyTorchBitForBit) {
  auto g = golden(MINIGRAD_SOURCE_DIR "/tests/data/torch_inplace_random.txt");
  ASSERT_EQ(g.size(), 28u) << "tests/data/torch_inplace_random.txt is missing or incomplete";
  const auto f64 = mg::kFloat64, i64 = mg::kInt64;
  auto check = [&](const std::string& name, std::uint64_t seed,
                   const std::vector<std::function<mg::Tensor()>>& ops) {
    mg::manual_seed(seed);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const std::string key = name + "." + std::to_string(i);
      ASSERT_TRUE(g.count(key)) << key;
      mg::Tensor t = ops[i]();
      EXPECT_EQ(hex_of(t), g[key]) << key << ": " << t;
    }
  };
  check("uniform_contiguous", 0,
        {[&] {
           return mg::empty({3, 7}).uniform_(-0.37, 0.41);
         },
         [&] { return mg::empty({5}, f64).uniform_(-0.37, 0.41); }});
  // A transposed view is filled in memory order.
  check("uniform_transposed", 1, {[&] { return mg::empty({5, 4}).t().uniform_(-1, 2); }});
  check("uniform_permuted_f64", 2, {[&] {
          return mg::empty({2, 3, 4}, f64).permute({2, 0, 1}).uniform_(0.5, 3);
        }});
  check("uniform_narrow_f64", 11, {[&] {
          return mg::empty({4, 5}, f64).narrow(1, 1, 2).uniform_(0.5, 3);
        }});
  check("uniform_default", 3, {[&] { return mg::empty({6}).uniform_(); }});
  check("normal_fill", 4,
        {[&] { return mg::empty({40}).normal_(0.3, 1.7); },
         [&] { return mg::empty({17}, f64).normal_(-1, 0.5); }});
  // Small and non-contiguous tensors take the per-element path and share its cached spare.
  check("normal_small_then_strided", 5,
        {[&] { return mg::empty({5}).normal_(0.3, 1.7); },
         [&] {
           return mg::empty({8, 6}).t().normal_();
         },
         [&] {
           return mg::empty({6, 8}, f64).t().normal_(2, 3);
         },
         [&] {
           return mg::empty({6, 8}, f64).narrow(1, 2, 5).normal_();
         },
         [&] { return mg::empty({3}).normal_(); }});
  check("random_full_range", 6,
        {[&] { return mg::empty({6}).random_(); }, [&] { return mg::empty({4}, f64).random_(); },
         [&] { return mg::empty({4}, i64).random_(); },
         [&] { return mg::empty({9}, mg::kBool).random_(); }});
  check("random_to", 7,
        {[&] { return mg::empty({10}, i64).random_(10); },
         [&] {
           return mg::empty({3, 4}).random_(100);
         },
         [&] {
           return mg::empty({2, 3}, i64).t().random_(1000);
         }});
  check("random_from_to", 8,
        {[&] { return mg::empty({7}).random_(-5, 7); },
         [&] { return mg::empty({5}, i64).random_(-3, std::int64_t{1} << 40); },
         [&] { return mg::empty({5}, f64).random_(-3, std::int64_t{1} << 40); },
         [&] { return mg::empty({4}, mg::kBool).random_(0, 2); }});
  mg::Generator gen;
  gen.manual_seed(9);
  check("generator", 10,
        {[&] { return mg::empty({20}).normal_(0, 1, gen); },
         [&] { return mg::empty({3}).uniform_(1, 2, gen); },
         [&] { return mg::empty({4}, i64).random_(0, 50, gen); },
         [&] { return mg::empty({4}).uniform_(); }});
}

TEST(InplaceRandom, FillsTheViewsStorage) {
  mg::manual_seed(0);
  mg::Tensor base = mg::zeros({4, 3});
  mg::Tensor view = base.t();
  view.uniform_(1, 2);
  EXPECT_TRUE(mg::equal(view.t(), base));
  EXPECT_GE(base.min().item<float>(), 1.0f);
}

TEST(InplaceRandom, BadArgumentsAreErrorsAndLeaveTheTensorUnchanged) {
  auto expect_error = [](const std::function<void(mg::Tensor&)>& fill, mg::Tensor t,
                         const std::string& part) {
    mg::Tensor before = t.detach().clone();
    try {
      fill(t);
      ADD_FAILURE() << "no error for " << part;
    } catch (const mg::Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
    EXPECT_TRUE(mg::equal(t.detach(), before)) << part;
  };
  const auto i64 = mg::kInt64;
  expect_error([](mg::Tensor& t) { t.uniform_(2, 1); }, mg::zeros({3}),
               "[uniform_] expects to return a [from, to) range, but found from=2 > to=1");
  expect_error([](mg::Tensor& t) { t.uniform_(0, INFINITY); }, mg::zeros({3}),
               "[uniform_] from=0 and to=inf must be finite and within float32's range");
  expect_error([](mg::Tensor& t) { t.uniform_(-3e38, 3e38); }, mg::zeros({3}),
               "[uniform_] expects to - from <= the largest float32");
  expect_error([](mg::Tensor& t) { t.uniform_(); }, mg::zeros({3}, i64),
               "[uniform_] expected a floating-point tensor, got int64");
  expect_error([](mg::Tensor& t) { t.normal_(0, -1); }, mg::zeros({3}),
               "[normal_] expects std >= 0.0, but found std -1");
  expect_error([](mg::Tensor& t) { t.normal_(NAN, 1); }, mg::zeros({3}),
               "[normal_] mean=nan and std=1 must be finite");
  expect_error([](mg::Tensor& t) { t.random_(5, 3); }, mg::zeros({3}),
               "[random_] expects 'from' to be less than 'to', but got from=5 >= to=3");
  expect_error(
      [](mg::Tensor& t) { t.random_(0, (1 << 24) + 2); }, mg::zeros({3}),
      "[random_] from=0 and to - 1=16777217 must lie in [-16777216, 16777216] for float32");
  expect_error([](mg::Tensor& t) { t.random_(0, 3); }, mg::zeros({3}, mg::kBool),
               "must lie in [0, 1] for bool");
  expect_error([](mg::Tensor& t) { t.uniform_(); }, mg::zeros({1}).expand({3}),
               "[uniform_] more than one element of the written-to tensor refers to a single "
               "memory location (dim 0 of shape (3,) has stride 0)");
  expect_error([](mg::Tensor& t) { t.normal_(); }, mg::zeros({3}).requires_grad_(),
               "[normal_] a tensor that requires grad cannot be filled in place");
  // Under NoGradGuard the same fill is allowed, as in nn::init.
  mg::Tensor w = mg::zeros({3}).requires_grad_();
  {
    mg::NoGradGuard no_grad;
    w.normal_();
  }
  EXPECT_TRUE(w.requires_grad());
  EXPECT_FALSE(mg::equal(w.detach(), mg::zeros({3})));
}

}  // namespace
