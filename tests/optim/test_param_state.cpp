// The typed parameter states (Note [Typed parameter state], optimizer.h): libtorch's
// `static_cast<AdamParamState&>(*opt.state().at(key))`. Expected values are literal numbers from
// PyTorch 1.13 (/usr/bin/python3), the same steps as tests/port (where libtorch prints them too):
//   w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True); v, u = copies of w
//   adam = torch.optim.Adam([w], lr=0.1, amsgrad=True)
//   adamw = torch.optim.AdamW([v], lr=0.1, weight_decay=0.1)
//   sgd = torch.optim.SGD([u], lr=0.1, momentum=0.9)
//   3 times: zero_grad(); (p * p * p).sum().backward(); step()
//   adam.state[w]['exp_avg'].tolist(), ...
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/optim/optim.h>

#include <memory>
#include <string>
#include <vector>

namespace mg = minigrad;
namespace optim = minigrad::optim;

namespace {

void expect_floats(const mg::Tensor& t, const std::vector<double>& expected) {
  ASSERT_TRUE(t.defined());
  std::vector<double> got = t.to(mg::kFloat64).to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 2e-6) << i;
}

template <typename Opt>
void three_steps(Opt& opt, const mg::Tensor& p) {
  for (int i = 0; i < 3; ++i) {
    opt.zero_grad();
    (p * p * p).sum().backward();
    opt.step();
  }
}

mg::Tensor start() { return mg::tensor({0.5f, -1.0f, 2.0f}).requires_grad_(); }

}  // namespace

TEST(OptimParamState, AdamAsLibtorch) {
  mg::Tensor w = start();
  optim::Adam adam(std::vector<mg::Tensor>{w}, optim::AdamOptions(0.1).amsgrad(true));
  EXPECT_TRUE(adam.state().empty());
  three_steps(adam, w);
  // libtorch's key, and the pointer itself.
  const std::string key = mg::guts::to_string(w.unsafeGetTensorImpl());
  ASSERT_TRUE(adam.state().contains(key));
  ASSERT_TRUE(adam.state().contains(w.unsafeGetTensorImpl()));
  auto& s = static_cast<optim::AdamParamState&>(*adam.state().at(key));
  EXPECT_NE(dynamic_cast<optim::AdamParamState*>(adam.state().at(key).get()), nullptr);
  EXPECT_EQ(s.step(), 3);
  expect_floats(s.exp_avg(), {0.13157346844673157, 1.0017322301864624, 2.9191298484802246});
  expect_floats(s.exp_avg_sq(), {0.0008678507292643189, 0.04081091657280922, 0.3554457128047943});
  expect_floats(s.max_exp_avg_sq(),
                {0.0008678507292643189, 0.04081091657280922, 0.3554457128047943});
  expect_floats(w, {0.21322035789489746, -1.3002147674560547, 1.70148766040802});
  // The accessors and the dict name the same tensors: a write through one is seen by the other.
  s.exp_avg().mul_(2);
  expect_floats(adam.state(w)["exp_avg"],
                {2 * 0.13157346844673157, 2 * 1.0017322301864624, 2 * 2.9191298484802246});
  s.step(7);
  EXPECT_EQ(adam.state(w)["step"].item<double>(), 7.0);
  // clone() keeps the type and aliases the tensors.
  std::unique_ptr<optim::OptimizerParamState> copy = s.clone();
  EXPECT_NE(dynamic_cast<optim::AdamParamState*>(copy.get()), nullptr);
  EXPECT_EQ(static_cast<optim::AdamParamState&>(*copy).step(), 7);
}

TEST(OptimParamState, AdamWithoutAmsgradHasNoMaxExpAvgSq) {
  mg::Tensor w = start();
  optim::Adam adam(std::vector<mg::Tensor>{w}, optim::AdamOptions(0.1));
  three_steps(adam, w);
  auto& s = static_cast<optim::AdamParamState&>(*adam.state().at(w.unsafeGetTensorImpl()));
  EXPECT_FALSE(s.max_exp_avg_sq().defined());  // libtorch: an undefined tensor
  EXPECT_EQ(s.step(), 3);
}

TEST(OptimParamState, AdamWAsLibtorch) {
  mg::Tensor v = start();
  optim::AdamW adamw(std::vector<mg::Tensor>{v}, optim::AdamWOptions(0.1).weight_decay(0.1));
  three_steps(adamw, v);
  auto& s = static_cast<optim::AdamWParamState&>(
      *adamw.state().at(mg::guts::to_string(v.unsafeGetTensorImpl())));
  EXPECT_EQ(s.step(), 3);
  expect_floats(s.exp_avg(), {0.12894916534423828, 0.9809260368347168, 2.85737681388855});
  expect_floats(s.exp_avg_sq(), {0.0008482277626171708, 0.03907403349876404, 0.3427202105522156});
  expect_floats(v, {0.2024126946926117, -1.267633080482483, 1.6454960107803345});
}

TEST(OptimParamState, SgdMomentumBufferAsLibtorch) {
  mg::Tensor u = start();
  optim::SGD sgd(std::vector<mg::Tensor>{u}, optim::SGDOptions(0.1).momentum(0.9));
  three_steps(sgd, u);
  auto& s = static_cast<optim::SGDParamState&>(*sgd.state().at(u.unsafeGetTensorImpl()));
  expect_floats(s.momentum_buffer(), {1.371182918548584, 19.934785842895508, 12.116351127624512});
  expect_floats(u, {0.16619421541690826, -4.070478439331055, -1.6836351156234741});
}

TEST(OptimParamState, LoadedStateIsTyped) {
  mg::Tensor w = start();
  optim::Adam adam(std::vector<mg::Tensor>{w}, optim::AdamOptions(0.1).amsgrad(true));
  three_steps(adam, w);
  mg::Tensor w2 = start();
  optim::Adam resumed(std::vector<mg::Tensor>{w2}, optim::AdamOptions(0.1).amsgrad(true));
  resumed.load_state_dict(adam.state_dict());
  auto* s =
      dynamic_cast<optim::AdamParamState*>(resumed.state().at(w2.unsafeGetTensorImpl()).get());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->step(), 3);
  expect_floats(s->exp_avg(), {0.13157346844673157, 1.0017322301864624, 2.9191298484802246});
  // A key that is not a parameter's: std::out_of_range, as libtorch's map.
  mg::Tensor other = start();
  EXPECT_THROW(resumed.state().at(other.unsafeGetTensorImpl()), std::out_of_range);
}
