// operator== on optimizer options and parameter states, as libtorch 1.13's (torch/optim/*.cpp:
// options field by field; states step by step and tensor by tensor with torch::equal, an
// optional tensor such as max_exp_avg_sq equal when undefined on both sides). libtorch's own
// test (test/cpp/api/optim.cpp, OptimTest.OptimizerAccessors / the serialize tests) compares
// state()s and param_groups()' options this way after a save/load round trip.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/optim/optim.h>

#include <memory>
#include <vector>

namespace mg = minigrad;
namespace optim = minigrad::optim;

TEST(OptimEqual, OptionsFieldByField) {
  EXPECT_TRUE(optim::SGDOptions(0.1) == optim::SGDOptions(0.1));
  EXPECT_FALSE(optim::SGDOptions(0.1) == optim::SGDOptions(0.2));
  EXPECT_TRUE(optim::SGDOptions(0.1).momentum(0.9) != optim::SGDOptions(0.1));
  EXPECT_FALSE(optim::SGDOptions(0.1).nesterov(true).momentum(0.9) ==
               optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_TRUE(optim::AdamOptions() == optim::AdamOptions(1e-3));
  EXPECT_FALSE(optim::AdamOptions().betas({0.9, 0.99}) == optim::AdamOptions());
  EXPECT_FALSE(optim::AdamOptions().amsgrad(true) == optim::AdamOptions());
  EXPECT_FALSE(optim::AdamOptions().maximize(true) == optim::AdamOptions());
  EXPECT_TRUE(optim::AdamWOptions().weight_decay(0.01) == optim::AdamWOptions());
  EXPECT_FALSE(optim::AdamWOptions().eps(1e-6) == optim::AdamWOptions());
  EXPECT_TRUE(optim::AdagradOptions(0.5) == optim::AdagradOptions(0.5));
  EXPECT_FALSE(optim::AdagradOptions().lr_decay(0.1) == optim::AdagradOptions());
  EXPECT_FALSE(optim::AdagradOptions().initial_accumulator_value(1) == optim::AdagradOptions());
  EXPECT_TRUE(optim::RMSpropOptions() == optim::RMSpropOptions());
  EXPECT_FALSE(optim::RMSpropOptions().centered(true) == optim::RMSpropOptions());
  EXPECT_FALSE(optim::RMSpropOptions().alpha(0.9) == optim::RMSpropOptions());
  EXPECT_TRUE(optim::LBFGSOptions(1).max_iter(5) == optim::LBFGSOptions(1).max_iter(5));
  EXPECT_FALSE(optim::LBFGSOptions().history_size(10) == optim::LBFGSOptions());
  // line_search_fn is not among the state_dict's fields but is compared, as libtorch's.
  EXPECT_FALSE(optim::LBFGSOptions().line_search_fn("strong_wolfe") == optim::LBFGSOptions());
  // A group's options, read back through param_groups(), compare to what was given.
  mg::Tensor w = mg::tensor({1.0, 2.0}).requires_grad_();
  optim::Adam adam(std::vector<mg::Tensor>{w}, optim::AdamOptions(0.1).amsgrad(true));
  EXPECT_TRUE(static_cast<const optim::AdamOptions&>(adam.param_groups()[0].options()) ==
              optim::AdamOptions(0.1).amsgrad(true));
}

namespace {

// Two optimizers of type Opt over equal parameters, stepped n times on sum(p^3).
template <typename Opt, typename Options>
std::pair<std::unique_ptr<Opt>, mg::Tensor> stepped(const Options& options, int n) {
  mg::Tensor p = mg::tensor({0.5, -1.0, 2.0}).requires_grad_();
  auto opt = std::make_unique<Opt>(std::vector<mg::Tensor>{p}, options);
  for (int i = 0; i < n; ++i) {
    opt->zero_grad();
    (p * p * p).sum().backward();
    opt->step();
  }
  return {std::move(opt), p};
}

template <typename State, typename Opt, typename Options>
void expect_states_compare(const Options& options) {
  auto [a, pa] = stepped<Opt>(options, 2);
  auto [b, pb] = stepped<Opt>(options, 2);
  auto [c, pc] = stepped<Opt>(options, 3);
  const State& sa = static_cast<const State&>(*a->state().at(pa.unsafeGetTensorImpl()));
  const State& sb = static_cast<const State&>(*b->state().at(pb.unsafeGetTensorImpl()));
  const State& sc = static_cast<const State&>(*c->state().at(pc.unsafeGetTensorImpl()));
  EXPECT_TRUE(sa == sb);
  EXPECT_FALSE(sa == sc);
  EXPECT_TRUE(sa != sc);
  // Through the base class, as a loop over state() compares them.
  EXPECT_TRUE(*a->state().at(pa.unsafeGetTensorImpl()) == *b->state().at(pb.unsafeGetTensorImpl()));
  EXPECT_FALSE(*a->state().at(pa.unsafeGetTensorImpl()) ==
               *c->state().at(pc.unsafeGetTensorImpl()));
  // A clone aliases the tensors and compares equal; a changed tensor makes it differ.
  std::unique_ptr<optim::OptimizerParamState> copy = sa.clone();
  EXPECT_TRUE(static_cast<const State&>(*copy) == sa);
  State changed = sb;
  for (auto& [key, t] : changed)
    if (key != "step") t = t.clone().add_(1.0);
  EXPECT_FALSE(changed == sa);
}

}  // namespace

TEST(OptimEqual, ParamStatesTensorByTensor) {
  expect_states_compare<optim::SGDParamState, optim::SGD>(optim::SGDOptions(0.1).momentum(0.9));
  expect_states_compare<optim::AdamParamState, optim::Adam>(optim::AdamOptions(0.1));
  expect_states_compare<optim::AdamParamState, optim::Adam>(optim::AdamOptions(0.1).amsgrad(true));
  expect_states_compare<optim::AdamWParamState, optim::AdamW>(optim::AdamWOptions(0.1));
  expect_states_compare<optim::AdagradParamState, optim::Adagrad>(optim::AdagradOptions(0.1));
  expect_states_compare<optim::RMSpropParamState, optim::RMSprop>(
      optim::RMSpropOptions(0.01).momentum(0.9).centered(true));
}

TEST(OptimEqual, StepAndOptionalTensors) {
  optim::AdamParamState a, b;
  EXPECT_TRUE(a == b);  // both empty: step 0, no tensors
  a.step(2);
  EXPECT_FALSE(a == b);
  b.step(2);
  EXPECT_TRUE(a == b);
  a.exp_avg(mg::tensor({1.0, 2.0}));
  b.exp_avg(mg::tensor({1.0, 2.0}));
  EXPECT_TRUE(a == b);
  // max_exp_avg_sq defined on one side only (amsgrad on one of them): unequal.
  a.max_exp_avg_sq(mg::tensor({1.0, 2.0}));
  EXPECT_FALSE(a == b);
  EXPECT_FALSE(b == a);
  b.max_exp_avg_sq(mg::tensor({1.0, 2.0}));
  EXPECT_TRUE(a == b);
  b.exp_avg(mg::tensor({1.0, 2.0, 3.0}));  // another shape
  EXPECT_FALSE(a == b);
}

TEST(OptimEqual, LBFGSState) {
  mg::Tensor p = mg::tensor({0.5, -1.0}).requires_grad_();
  optim::LBFGS opt(std::vector<mg::Tensor>{p}, optim::LBFGSOptions(0.1).max_iter(3));
  auto closure = [&] {
    opt.zero_grad();
    mg::Tensor loss = (p * p).sum();
    loss.backward();
    return loss;
  };
  opt.step(closure);
  auto& s = static_cast<optim::LBFGSParamState&>(*opt.state().at(p.unsafeGetTensorImpl()));
  // PyTorch 1.13: p = torch.tensor([0.5, -1.0], requires_grad=True);
  // opt = torch.optim.LBFGS([p], lr=0.1, max_iter=3); opt.step(closure)
  // opt.state[p]['func_evals'], opt.state[p]["n_iter"] -> 3 2
  EXPECT_EQ(s.func_evals(), 3);
  EXPECT_EQ(s.n_iter(), 2);
  optim::LBFGSParamState other;
  other.func_evals(3).n_iter(2);
  EXPECT_TRUE(s == other);
  other.n_iter(1);
  EXPECT_FALSE(s == other);
}
