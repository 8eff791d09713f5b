// mg::Generator against PyTorch 1.13: get_state() gives torch.get_rng_state()'s bytes, and a state
// taken from PyTorch continues with PyTorch's numbers. Golden data:
// tests/data/torch_generator_states.txt (made by tests/data/gen_generator_states.py with
// /usr/bin/python3).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

std::map<std::string, std::string> golden() {
  std::ifstream in(MINIGRAD_SOURCE_DIR "/tests/data/torch_generator_states.txt");
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

}  // namespace
