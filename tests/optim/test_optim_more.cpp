// optim, issue 14: step(closure), param_groups()/state() as libtorch's, a user-defined optimizer,
// RMSprop, Adagrad, LBFGS, the schedulers LambdaLR, LinearLR, OneCycleLR, SequentialLR and
// ReduceLROnPlateau, and nn::utils gradient clipping, against PyTorch 1.13.
//
// The trajectories are test_optim.cpp's least-squares problem (optim_test_util.h). The LBFGS
// tests minimise it plus 0.1 * sum(w^4), through this closure, printing [w, b], the loss step()
// returned, and state[w]['func_evals'], state[w]['n_iter'] after each of 2 steps:
//
//   def closure():
//       opt.zero_grad(); loss = ((X @ w + b - y) ** 2).mean() + 0.1 * (w ** 4).sum()
//       loss.backward(); return loss
//   for _ in range(2): l = opt.step(closure); print(w.tolist() + b.tolist(), l.item(), ...)
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/nn/utils.h>
#include <minigrad/optim/optim.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "optim_test_util.h"

namespace mg = minigrad;
namespace optim = minigrad::optim;
namespace sched = minigrad::optim::lr_scheduler;

namespace {

using optim_test::expect_error;
using optim_test::expect_trajectory;
using optim_test::LeastSquares;
using optim_test::Rows;

void expect_params(const LeastSquares& p, const std::vector<double>& expected, double rtol = 1e-10,
                   double atol = 1e-12) {
  std::vector<double> got = p.w.to_vector<double>();
  got.push_back(p.b.item<double>());
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], atol + rtol * std::abs(expected[i])) << "element " << i;
  }
}

// ---------------------------------------------------------------- step(closure)

TEST(OptimClosure, ReturnsTheLossAndEnablesGrad) {
  // opt = SGD(p, lr=0.05); with torch.no_grad(): [opt.step(closure).item() for _ in range(3)],
  // then opt = Adam(p, lr=0.1) on the same parameters, 3 more steps:
  // SGD  ['14.495625', '8.216888426132812', '4.6972440208432715']
  // Adam ['2.710032954439883', '1.9068908643886875', '1.2551795534253363'],
  //      then [w, b] = [1.67624571138813, -0.33057784377865723, 0.7091489323151546,
  //      -0.302952473917923]
  LeastSquares p;
  optim::SGD sgd(p.params(), {.lr = 0.05});
  optim::Adam adam(p.params(), {.lr = 0.1});
  int calls = 0;
  auto closure_for = [&](optim::Optimizer& opt) {
    return [&] {
      ++calls;
      EXPECT_TRUE(mg::is_grad_enabled());
      opt.zero_grad();
      mg::Tensor loss = (p.X.matmul(p.w) + p.b - p.y).pow(2).mean();
      loss.backward();
      return loss;
    };
  };
  mg::NoGradGuard no_grad;  // step() re-enables grad for the closure, as torch.enable_grad()
  const std::vector<double> sgd_losses = {14.495625, 8.216888426132812, 4.6972440208432715};
  for (double expected : sgd_losses) {
    EXPECT_NEAR(sgd.step(closure_for(sgd)).item<double>(), expected, 1e-12);
  }
  const std::vector<double> adam_losses = {2.710032954439883, 1.9068908643886875,
                                           1.2551795534253363};
  for (double expected : adam_losses) {
    EXPECT_NEAR(adam.step(closure_for(adam)).item<double>(), expected, 1e-12);
  }
  EXPECT_EQ(calls, 6);
  EXPECT_FALSE(mg::is_grad_enabled());
  expect_params(p,
                {1.67624571138813, -0.33057784377865723, 0.7091489323151546, -0.302952473917923});
}

TEST(OptimClosure, WithoutClosureReturnsUndefined) {
  LeastSquares p;
  optim::RMSprop opt(p.params());
  p.backward();
  EXPECT_FALSE(opt.step().defined());
}

TEST(OptimClosure, ClosureThatReturnsNoLoss) {
  LeastSquares p;
  optim::SGD opt(p.params(), {.lr = 0.1});
  const mg::Tensor w0 = p.w.detach().clone();
  expect_error(
      [&] {
        opt.step([&] {
          p.backward();
          return mg::Tensor();
        });
      },
      "SGD.step", "the closure returned no loss (an undefined tensor)");
  EXPECT_TRUE(mg::equal(p.w, w0));  // nothing stepped
  optim::Adagrad adagrad(p.params());
  expect_error([&] { adagrad.step([] { return mg::Tensor(); }); }, "Adagrad.step",
               "the closure returned no loss");
}

// ---------------------------------------------------------------- param_groups(), state(), options

TEST(OptimParamGroups, OptionsByNameAndState) {
  LeastSquares p;
  optim::Adam opt(p.params(), {.lr = 0.1});
  ASSERT_TRUE(opt.option(0, "betas").has_value());
  EXPECT_EQ(std::get<std::vector<double>>(*opt.option(0, "betas")),
            (std::vector<double>{0.9, 0.999}));
  EXPECT_FALSE(opt.option(0, "momentum").has_value());
  opt.set_option(0, "betas", std::vector<double>{0.5, 0.9});
  EXPECT_EQ(opt.param_groups()[0].options.betas[0], 0.5);
  opt.set_option(0, "lr", 0.25);
  EXPECT_EQ(opt.lr(0), 0.25);
  expect_error([&] { opt.set_option(0, "momentum", 0.9); }, "Adam", "unknown option \"momentum\"");
  expect_error([&] { opt.set_option(0, "lr", true); }, "Adam", "option \"lr\" must be a number");
  expect_error([&] { opt.set_option(0, "lr", -1.0); }, "Adam", "invalid learning rate: -1");
  EXPECT_EQ(opt.lr(0), 0.25);

  EXPECT_TRUE(opt.state().empty());
  p.backward();
  opt.step();
  const auto& state = opt.state();  // libtorch: opt.state(), keyed by p.unsafeGetTensorImpl()
  ASSERT_EQ(state.size(), 2u);
  ASSERT_TRUE(state.contains(p.w.impl()));
  EXPECT_EQ(state.at(p.w.impl()).at("step").item<double>(), 1.0);
}

// A user-defined optimizer on the public base: p -= lr * sign(g), counting steps in its state.
struct SignSGDOptions {
  double lr = 1e-2;
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr);
  }
};

class SignSGD : public optim::OptimizerWithOptions<SignSGDOptions> {
 public:
  SignSGD(std::vector<mg::Tensor> params, const SignSGDOptions& options)
      : OptimizerWithOptions("SignSGD") {
    init(std::move(params), options);
  }
  mg::Tensor step(optim::LossClosure closure = nullptr) override {
    mg::Tensor loss = evaluate_closure(closure);
    check_gradients();
    mg::NoGradGuard no_grad;
    for (Group& group : param_groups()) {
      for (mg::Tensor& p : group.params) {
        if (!p.grad().defined()) continue;
        optim::ParamState& s = state(p);
        if (s.empty()) s["step"] = mg::scalar_tensor(0.0, mg::kFloat32);
        s["step"].fill_(s["step"].item<double>() + 1);
        p.copy_(p - mg::sign(p.grad()) * group.options.lr);
      }
    }
    return loss;
  }

 protected:
  void check_options(const SignSGDOptions& o) const override {
    MG_CHECK(o.lr >= 0, "SignSGD", "invalid learning rate: ", o.lr);
  }
  StateKeys state_keys() const override { return {{"step"}, {}}; }
};

TEST(OptimCustom, UserDefinedOptimizer) {
  // class SignSGD(torch.optim.Optimizer): step(): p.add_(p.grad.sign(), alpha=-group['lr'])
  // opt = SignSGD(p, lr=0.1)
  LeastSquares p;
  SignSGD opt(p.params(), {.lr = 0.1});
  optim::Optimizer& base = opt;
  expect_trajectory(base, p,
                    {{0.6, -0.9, 1.9, 0.0},
                     {0.7, -0.8, 1.7999999999999998, -0.1},
                     {0.7999999999999999, -0.7000000000000001, 1.6999999999999997, -0.2}});
  EXPECT_EQ(opt.state(p.b).at("step").item<double>(), 3.0);
  // state_dict, schedulers and set_option work on it as on the built-in ones.
  const mg::OptimizerStateDict dict = opt.state_dict();
  EXPECT_EQ(dict.optimizer, "SignSGD");
  EXPECT_EQ(dict.state.size(), 2u);
  sched::StepLR s(opt, /*step_size=*/1, /*gamma=*/0.5);
  s.step();
  EXPECT_EQ(opt.lr(0), 0.05);
  expect_error([&] { SignSGD({p.w}, {.lr = -1}); }, "SignSGD", "invalid learning rate: -1");
}

// ---------------------------------------------------------------- RMSprop, Adagrad

TEST(OptimRMSprop, Default) {
  LeastSquares p;
  optim::RMSprop opt(p.params(), {.lr = 0.01});  // RMSprop(p, lr=0.01)
  EXPECT_EQ(opt.param_groups()[0].options.alpha, 0.99);
  EXPECT_EQ(opt.param_groups()[0].options.eps, 1e-8);
  expect_trajectory(
      opt, p,
      {{0.5999999987150658, -0.9000000029133284, 1.9000000011869436, 1.5999997479698713e-08},
       {0.6684390916701042, -0.832365294201988, 1.8316817120506839, -0.06658563021420036},
       {0.7232018145657266, -0.7787174097796057, 1.7770682834707237, -0.11895546345234445},
       {0.7698883249180792, -0.733334433683083, 1.7305422408471463, -0.16297749753732677}});
  EXPECT_FALSE(opt.state(p.w).contains("momentum_buffer"));
  EXPECT_FALSE(opt.state(p.w).contains("grad_avg"));
}

TEST(OptimRMSprop, CenteredMomentumWeightDecay) {
  LeastSquares p;
  // RMSprop(p, lr=0.01, alpha=0.9, momentum=0.8, centered=True, weight_decay=0.1)
  optim::RMSprop opt(
      p.params(),
      {.lr = 0.01, .alpha = 0.9, .weight_decay = 0.1, .momentum = 0.8, .centered = true});
  expect_trajectory(
      opt, p,
      {{0.5333333331896397, -0.9666666669812063, 1.966666666795491, 0.06666666841644785},
       {0.5852125806631399, -0.9148673155302544, 1.9147913089080812, 0.01503497813824022},
       {0.6485347404966133, -0.8518102890147831, 1.8514811504249118, -0.04746856910062586},
       {0.7190900259774099, -0.7818221698274347, 1.780948851900613, -0.11628551961309612}});
  EXPECT_TRUE(opt.state(p.w).contains("momentum_buffer"));
  EXPECT_TRUE(opt.state(p.w).contains("grad_avg"));
}

TEST(OptimRMSprop, CenteredMaximize) {
  LeastSquares p;
  // RMSprop(p, lr=0.05, centered=True, maximize=True)
  optim::RMSprop opt(p.params(), {.lr = 0.05, .centered = true, .maximize = true});
  expect_trajectory(
      opt, p,
      {{-0.002518901140039498, -1.502518892915826, 2.502518901634941, 0.602518826821538},
       {-0.4070504253613447, -1.9173445131322429, 2.9087164575576576, 1.0283545887589414},
       {-0.7595904433663263, -2.2807208167279547, 3.2635176323306143, 1.4065442744387529},
       {-1.0779130115438171, -2.6089752794472125, 3.5842778077733746, 1.7504238949760824}});
}

TEST(OptimAdagrad, Default) {
  LeastSquares p;
  optim::Adagrad opt(p.params(), {.lr = 0.1});  // Adagrad(p, lr=0.1)
  EXPECT_EQ(opt.param_groups()[0].options.eps, 1e-10);
  expect_trajectory(
      opt, p,
      {{0.5999999999987151, -0.9000000000029134, 1.900000000001187, 1.600000687496106e-11},
       {0.6682560786476882, -0.832549862320419, 1.8318649678014893, -0.06639924654125547},
       {0.7227287992413847, -0.7791911677448907, 1.7775414346411307, -0.11848165399941345},
       {0.7690470494638616, -0.7341717571835062, 1.7313830982203142, -0.1621463124388705}});
  EXPECT_EQ(opt.state(p.w).at("step").item<double>(), 4.0);
}

TEST(OptimAdagrad, AllOptions) {
  LeastSquares p;
  // Adagrad(p, lr=0.5, lr_decay=0.1, weight_decay=0.2, initial_accumulator_value=0.3, eps=1e-6)
  optim::Adagrad opt(p.params(), {.lr = 0.5,
                                  .lr_decay = 0.1,
                                  .weight_decay = 0.2,
                                  .initial_accumulator_value = 0.3,
                                  .eps = 1e-6});
  expect_trajectory(
      opt, p,
      {{0.9987340208280859, -0.5055889603253052, 1.5009602954651142, -0.2811229599824664},
       {1.2423907798043268, -0.29653935573786977, 1.2467382293463831, -0.4939733496319634},
       {1.395108432383271, -0.18080442013567843, 1.0849070054284133, -0.5933818719271331},
       {1.4994377210575582, -0.11454917989624269, 0.9704998089329034, -0.651950887908307}});
}

// ---------------------------------------------------------------- LBFGS

struct LbfgsRow {
  std::vector<double> params;
  double loss;
  std::int64_t func_evals, n_iter;
};

void expect_lbfgs(const optim::LBFGSOptions& options, const std::vector<LbfgsRow>& expected,
                  double rtol = 1e-9) {
  LeastSquares p;
  optim::LBFGS opt(p.params(), options);
  auto closure = [&] {
    opt.zero_grad();
    mg::Tensor loss = (p.X.matmul(p.w) + p.b - p.y).pow(2).mean() + p.w.pow(4).sum() * 0.1;
    loss.backward();
    return loss;
  };
  for (std::size_t s = 0; s < expected.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    const mg::Tensor loss = opt.step(closure);
    EXPECT_NEAR(loss.item<double>(), expected[s].loss, 1e-12 + rtol * expected[s].loss);
    expect_params(p, expected[s].params, rtol, 1e-10);
    EXPECT_EQ(opt.state(p.w).at("func_evals").item<std::int64_t>(), expected[s].func_evals);
    EXPECT_EQ(opt.state(p.w).at("n_iter").item<std::int64_t>(), expected[s].n_iter);
  }
}

TEST(OptimLBFGS, Default) {
  // LBFGS(p)  (converges in the first step; the second stops at the optimality test)
  expect_lbfgs(
      {}, {{{0.8362361195666229, -0.15984534151766427, -0.7604325875931502, 0.7313187439235675},
            16.201875,
            12,
            12},
           {{0.8362361195666229, -0.15984534151766427, -0.7604325875931502, 0.7313187439235675},
            0.11535885404533436,
            13,
            13}});
}

TEST(OptimLBFGS, FixedStepsAndShortHistory) {
  // LBFGS(p, lr=0.5, max_iter=5)
  expect_lbfgs(
      {.lr = 0.5, .max_iter = 5},
      {{{1.4832344733353309, -0.31146398874527004, 0.2561990906182793, -0.19784568028590932},
        16.201875,
        5,
        5},
       {{0.919631293690617, -0.11354832177023358, -0.6678028298753269, 0.4409814621985294},
        0.7823004190072812,
        10,
        10}});
  // LBFGS(p, max_iter=4, history_size=2)
  expect_lbfgs(
      {.max_iter = 4, .history_size = 2},
      {{{1.3301208930296102, -0.10730736986300532, -0.18760037113553757, -0.13579443071513847},
        16.201875,
        4,
        4},
       {{0.805555573009471, -0.06679643122374108, -0.7408484329447925, 0.6310089287030912},
        0.38872429960864574,
        8,
        8}});
}

TEST(OptimLBFGS, StrongWolfe) {
  // LBFGS(p, lr=0.8, max_iter=6, line_search_fn='strong_wolfe')
  expect_lbfgs(
      {.lr = 0.8, .max_iter = 6, .line_search_fn = "strong_wolfe"},
      {{{1.1071830962831846, -0.01973944124027246, -0.4200110178358641, 0.06856833765422561},
        16.201875,
        7,
        6},
       {{0.835006763466015, -0.1595815281054428, -0.7612064526960414, 0.7322531562326038},
        0.24681538631180672,
        14,
        12}});
  // LBFGS(p, lr=5, max_iter=6, line_search_fn='strong_wolfe')  (the zoom phase)
  expect_lbfgs(
      {.lr = 5, .max_iter = 6, .line_search_fn = "strong_wolfe"},
      {{{0.9425903514341619, 0.10948357263035996, -0.504193581772174, 0.2779369727229988},
        16.201875,
        7,
        4},
       {{0.8476258769691268, -0.16292967444996406, -0.7607403491666594, 0.7291842150559095},
        0.21070501545548176,
        14,
        7}});
  // LBFGS(p, lr=0.1, max_iter=3, tolerance_change=1e-3, line_search_fn='strong_wolfe')
  expect_lbfgs(
      {.lr = 0.1, .max_iter = 3, .tolerance_change = 1e-3, .line_search_fn = "strong_wolfe"},
      {{{0.678742021834978, -0.9114091433970187, 1.7312801805584717, 0.08555269787948773},
        16.201875,
        3,
        1},
       {{1.6580528896901856, -0.4266387081939926, 0.6031230685239748, -0.03635955486026578},
        11.788467610766045,
        6,
        2}});
}

TEST(OptimLBFGS, DefaultsAndErrors) {
  LeastSquares p;
  optim::LBFGS opt(p.params());
  const optim::LBFGSOptions& o = opt.param_groups()[0].options;
  EXPECT_EQ(o.lr, 1);
  EXPECT_EQ(o.max_iter, 20);
  EXPECT_EQ(o.max_eval, 25);  // max_iter * 5 // 4
  EXPECT_EQ(o.tolerance_grad, 1e-7);
  EXPECT_EQ(o.tolerance_change, 1e-9);
  EXPECT_EQ(o.history_size, 100);
  EXPECT_EQ(o.line_search_fn, "");
  p.backward();
  expect_error([&] { opt.step(); }, "LBFGS.step", "LBFGS needs a closure");
  mg::Tensor c = mg::zeros({1}).requires_grad_();
  opt.add_param_group({{c}, o});
  expect_error([&] { opt.step([&] { return p.X.sum(); }); }, "LBFGS.step",
               "LBFGS doesn't support per-parameter options (parameter groups), got 2 groups");
  expect_error([&] { optim::LBFGS({c}, {.lr = -1}); }, "LBFGS", "invalid learning rate: -1");
  expect_error([&] { optim::LBFGS({c}, {.max_iter = 0}); }, "LBFGS", "invalid max_iter value: 0");
  expect_error([&] { optim::LBFGS({c}, {.line_search_fn = "backtracking"}); }, "LBFGS",
               "only 'strong_wolfe' is supported as line_search_fn, got \"backtracking\"");
  // Its state_dict holds the options, max_iter as a number.
  const mg::OptimizerStateDict dict = opt.state_dict();
  EXPECT_EQ(dict.optimizer, "LBFGS");
  EXPECT_EQ(std::get<double>(dict.param_groups[0].options[1].second), 20.0);
}

// ---------------------------------------------------------------- option errors

TEST(OptimErrors, RMSpropAdagradOptions) {
  mg::Tensor w = mg::zeros({2}).requires_grad_();
  expect_error([&] { optim::RMSprop({w}, {.lr = -0.1}); }, "RMSprop",
               "invalid learning rate: -0.1 (must be >= 0)");
  expect_error([&] { optim::RMSprop({w}, {.alpha = -1}); }, "RMSprop", "invalid alpha value: -1");
  expect_error([&] { optim::RMSprop({w}, {.eps = -1}); }, "RMSprop", "invalid epsilon value: -1");
  expect_error([&] { optim::RMSprop({w}, {.weight_decay = -1}); }, "RMSprop",
               "invalid weight_decay value: -1");
  expect_error([&] { optim::RMSprop({w}, {.momentum = -0.9}); }, "RMSprop",
               "invalid momentum value: -0.9");
  expect_error([&] { optim::Adagrad({w}, {.lr = -1}); }, "Adagrad", "invalid learning rate: -1");
  expect_error([&] { optim::Adagrad({w}, {.lr_decay = -1}); }, "Adagrad",
               "invalid lr_decay value: -1");
  expect_error([&] { optim::Adagrad({w}, {.initial_accumulator_value = -1}); }, "Adagrad",
               "invalid initial_accumulator_value value: -1");
  expect_error([&] { optim::Adagrad({w}, {.eps = -1}); }, "Adagrad", "invalid epsilon value: -1");
}

}  // namespace
