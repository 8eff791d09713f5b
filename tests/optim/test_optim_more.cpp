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
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "optim_test_util.h"

namespace mg = minigrad;
namespace optim = minigrad::optim;
namespace sched = minigrad::optim::lr_scheduler;

namespace {

using optim_test::expect_error;
using optim_test::expect_lrs;
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
  optim::SGD sgd(p.params(), optim::SGDOptions(0.05));
  optim::Adam adam(p.params(), optim::AdamOptions(0.1));
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
  optim::SGD opt(p.params(), optim::SGDOptions(0.1));
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
  optim::Adam opt(p.params(), optim::AdamOptions(0.1));
  ASSERT_TRUE(opt.option(0, "betas").has_value());
  EXPECT_EQ(std::get<std::vector<double>>(*opt.option(0, "betas")),
            (std::vector<double>{0.9, 0.999}));
  EXPECT_FALSE(opt.option(0, "momentum").has_value());
  opt.set_option(0, "betas", std::vector<double>{0.5, 0.9});
  EXPECT_EQ(std::get<0>(static_cast<optim::AdamOptions&>(opt.param_groups()[0].options()).betas()),
            0.5);
  opt.set_option(0, "lr", 0.25);
  EXPECT_EQ(opt.lr(0), 0.25);
  expect_error([&] { opt.set_option(0, "momentum", 0.9); }, "Adam", "unknown option \"momentum\"");
  expect_error([&] { opt.set_option(0, "lr", true); }, "Adam", "option \"lr\" must be a number");
  expect_error([&] { opt.set_option(0, "lr", -1.0); }, "Adam", "Invalid learning rate: -1");
  EXPECT_EQ(opt.lr(0), 0.25);

  EXPECT_TRUE(opt.state().empty());
  p.backward();
  opt.step();
  const auto& state = opt.state();  // libtorch: opt.state(), keyed by p.unsafeGetTensorImpl()
  ASSERT_EQ(state.size(), 2u);
  ASSERT_TRUE(state.contains(p.w.impl()));
  EXPECT_EQ(state.at(p.w.impl())->at("step").item<double>(), 1.0);
}

// ---------------------------------------------------------------- libtorch's options API

TEST(OptimOptions, ChainedSettersAndGetters) {
  // libtorch: SGDOptions(0.1).momentum(0.9).nesterov(true); AdamOptions(1e-3).betas({0.9, 0.999})
  const optim::SGDOptions sgd = optim::SGDOptions(0.1).momentum(0.9).nesterov(true);
  EXPECT_EQ(sgd.lr(), 0.1);
  EXPECT_EQ(sgd.momentum(), 0.9);
  EXPECT_TRUE(sgd.nesterov());
  EXPECT_EQ(sgd.dampening(), 0.0);  // torch.optim.SGD's defaults
  EXPECT_EQ(sgd.weight_decay(), 0.0);
  const optim::AdamOptions adam = optim::AdamOptions(1e-3).betas({0.9, 0.98}).weight_decay(0.01);
  EXPECT_EQ(std::get<0>(adam.betas()), 0.9);
  EXPECT_EQ(std::get<1>(adam.betas()), 0.98);
  EXPECT_EQ(adam.weight_decay(), 0.01);
  EXPECT_EQ(adam.eps(), 1e-8);
  EXPECT_EQ(optim::AdamWOptions().weight_decay(), 1e-2);
  EXPECT_EQ(optim::AdamWOptions().lr(), 1e-3);
  EXPECT_EQ(optim::RMSpropOptions().alpha(), 0.99);
  EXPECT_EQ(optim::AdagradOptions().lr(), 1e-2);
  EXPECT_EQ(optim::LBFGSOptions().line_search_fn("strong_wolfe").line_search_fn(), "strong_wolfe");
  EXPECT_EQ(sched::OneCycleLROptions().total_steps(100).pct_start(0.25).pct_start(), 0.25);
  EXPECT_EQ(sched::ReduceLROnPlateauOptions().mode("max").mode(), "max");
  // The base class gives the lr without a cast, and a copy of the whole options.
  optim::SGDOptions changed = sgd;
  optim::OptimizerOptions& base = changed;
  base.set_lr(0.5);
  EXPECT_EQ(changed.lr(), 0.5);
  EXPECT_EQ(static_cast<optim::SGDOptions&>(*base.clone()).momentum(), 0.9);
}

TEST(OptimOptions, ChangesThroughParamGroupsTakeEffectAtTheNextStep) {
  // opt = SGD(p, lr=0.05, momentum=0.9); a step; then
  // opt.param_groups[0]['lr'] = 0.01; opt.param_groups[0]['momentum'] = 0.5; two more steps
  LeastSquares p;
  optim::SGD opt(p.params(), optim::SGDOptions(0.05).momentum(0.9));
  expect_trajectory(opt, p, {{0.889125, -0.828375, 1.5787499999999999, 0.06875}});
  for (optim::OptimizerParamGroup& group : opt.param_groups()) {  // libtorch's way
    static_cast<optim::SGDOptions&>(group.options()).lr(0.01).momentum(0.5);
  }
  EXPECT_EQ(opt.lr(0), 0.01);
  expect_trajectory(
      opt, p,
      {{0.9848097875, -0.78714486875, 1.47189825, 0.05838793750000001},
       {1.0842421670303126, -0.74491414489625, 1.3586833793718749, 0.045835134981250004}});
}

TEST(OptimOptions, AdamBetasThroughParamGroups) {
  // opt = Adam(p, lr=0.1, betas=(0.8, 0.9), weight_decay=0.01); two steps; then
  // opt.param_groups[0]['betas'] = (0.5, 0.99); one more step
  LeastSquares p;
  optim::Adam opt(p.params(), optim::AdamOptions(0.1).betas({0.8, 0.9}).weight_decay(0.01));
  expect_trajectory(
      opt, p,
      {{0.5999999998714239, -0.9000000002904865, 1.9000000001184132, 1.597444079792787e-09},
       {0.6997408869548893, -0.8003664843063307, 1.8002735442055036, -0.09946708288748093}});
  static_cast<optim::AdamOptions&>(opt.param_groups()[0].options()).betas({0.5, 0.99});
  expect_trajectory(
      opt, p,
      {{0.7277029096059237, -0.7730984480893923, 1.7724077595862802, -0.12578943291459677}});
}

TEST(OptimOptions, GroupsWithoutOptionsTakeTheDefaults) {
  // libtorch: SGD({OptimizerParamGroup({w}, SGDOptions(0.1)), OptimizerParamGroup({b})},
  //               SGDOptions(0.5).momentum(0.9)): w's group has momentum 0 (its options are
  // complete), b's is a copy of the defaults. PyTorch 1.13, the same groups spelled out:
  // SGD([{'params': [w], 'lr': 0.1, 'momentum': 0.0}, {'params': [b]}], lr=0.5, momentum=0.9)
  LeastSquares p;
  optim::SGD opt({optim::OptimizerParamGroup({p.w}, optim::SGDOptions(0.1)),
                  optim::OptimizerParamGroup({p.b})},
                 optim::SGDOptions(0.5).momentum(0.9));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).momentum(), 0.0);
  EXPECT_EQ(static_cast<optim::SGDOptions&>(opt.param_groups()[1].options()).momentum(), 0.9);
  EXPECT_EQ(opt.param_groups()[1].options().get_lr(), 0.5);
  EXPECT_EQ(opt.defaults().get_lr(), 0.5);
  expect_trajectory(opt, p,
                    {{1.27825, -0.65675, 1.1575, -0.2125},
                     {1.66419575, -0.48364737499999993, 0.736715, -0.6549562500000001}});
  // The groups own copies: changing the defaults later changes no group.
  static_cast<optim::SGDOptions&>(opt.defaults()).lr(7);
  EXPECT_EQ(opt.lr(1), 0.5);
  // add_param_group without options: a copy of the defaults, as libtorch.
  mg::Tensor v = mg::zeros({2}).requires_grad_();
  opt.add_param_group({{v}});
  EXPECT_EQ(opt.lr(2), 7.0);
  EXPECT_EQ(opt.size(), 3u);
  EXPECT_EQ(opt.parameters().size(), 1u);  // the first group's, as libtorch's parameters()
}

TEST(OptimOptions, OptionsOfTheWrongTypeOrMissing) {
  LeastSquares p;
  optim::Adam opt(p.params());
  const mg::Tensor w0 = p.w.detach().clone();
  opt.param_groups()[0].set_options(optim::SGDOptions(0.1).clone());  // bypasses the checks
  p.backward();
  expect_error([&] { opt.step(); }, "Adam",
               "the parameter group's options are another optimizer's");
  EXPECT_TRUE(mg::equal(p.w, w0));
  const optim::OptimizerParamGroup bare({p.w});
  EXPECT_FALSE(bare.has_options());
  expect_error([&] { bare.options(); }, "OptimizerParamGroup", "the group has no options");
  // Copies of a group copy its options.
  optim::OptimizerParamGroup group({p.w}, optim::SGDOptions(0.1));
  optim::OptimizerParamGroup copy = group;
  group.options().set_lr(0.2);
  EXPECT_EQ(copy.options().get_lr(), 0.1);
}

// A user-defined optimizer on the public base, written as libtorch's: p -= lr * sign(g), counting
// steps in its state.
struct SignSGDOptions : optim::OptimizerCloneableOptions<SignSGDOptions> {
  SignSGDOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  MG_ARG(double, lr);

 public:
  template <typename Self, typename F>
  static void fields(Self& o, F&& f) {
    f("lr", o.lr());
  }
};

class SignSGD : public optim::OptimizerWithOptions<SignSGDOptions> {
 public:
  SignSGD(std::vector<mg::Tensor> params, const SignSGDOptions& defaults)
      : OptimizerWithOptions("SignSGD", defaults) {
    init(std::move(params));
  }
  mg::Tensor step(optim::LossClosure closure = nullptr) override {
    mg::Tensor loss = evaluate_closure(closure);
    check_gradients();
    mg::NoGradGuard no_grad;
    for (optim::OptimizerParamGroup& group : param_groups()) {
      const double lr = static_cast<SignSGDOptions&>(group.options()).lr();
      for (mg::Tensor& p : group.params()) {
        if (!p.grad().defined()) continue;
        optim::ParamState& s = state(p);
        if (s.empty()) s["step"] = mg::scalar_tensor(0.0, mg::kFloat32);
        s["step"].fill_(s["step"].item<double>() + 1);
        p.copy_(p - mg::sign(p.grad()) * lr);
      }
    }
    return loss;
  }

 protected:
  void check_options(const SignSGDOptions& o) const override {
    MG_CHECK(o.lr() >= 0, "SignSGD", "Invalid learning rate: ", o.lr());
  }
  StateKeys state_keys() const override { return {{"step"}, {}}; }
};

TEST(OptimCustom, UserDefinedOptimizer) {
  // class SignSGD(torch.optim.Optimizer): step(): p.add_(p.grad.sign(), alpha=-group['lr'])
  // opt = SignSGD(p, lr=0.1)
  LeastSquares p;
  SignSGD opt(p.params(), SignSGDOptions(0.1));
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
  expect_error([&] { SignSGD({p.w}, SignSGDOptions(-1)); }, "SignSGD", "Invalid learning rate: -1");
}

// ---------------------------------------------------------------- RMSprop, Adagrad

TEST(OptimRMSprop, Default) {
  LeastSquares p;
  optim::RMSprop opt(p.params(), optim::RMSpropOptions(0.01));  // RMSprop(p, lr=0.01)
  EXPECT_EQ(static_cast<optim::RMSpropOptions&>(opt.param_groups()[0].options()).alpha(), 0.99);
  EXPECT_EQ(static_cast<optim::RMSpropOptions&>(opt.param_groups()[0].options()).eps(), 1e-8);
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
      optim::RMSpropOptions(0.01).alpha(0.9).weight_decay(0.1).momentum(0.8).centered(true));
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
  optim::RMSprop opt(p.params(), optim::RMSpropOptions(0.05).centered(true).maximize(true));
  expect_trajectory(
      opt, p,
      {{-0.002518901140039498, -1.502518892915826, 2.502518901634941, 0.602518826821538},
       {-0.4070504253613447, -1.9173445131322429, 2.9087164575576576, 1.0283545887589414},
       {-0.7595904433663263, -2.2807208167279547, 3.2635176323306143, 1.4065442744387529},
       {-1.0779130115438171, -2.6089752794472125, 3.5842778077733746, 1.7504238949760824}});
}

TEST(OptimAdagrad, Default) {
  LeastSquares p;
  optim::Adagrad opt(p.params(), optim::AdagradOptions(0.1));  // Adagrad(p, lr=0.1)
  EXPECT_EQ(static_cast<optim::AdagradOptions&>(opt.param_groups()[0].options()).eps(), 1e-10);
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
  optim::Adagrad opt(
      p.params(),
      optim::AdagradOptions(0.5).lr_decay(0.1).weight_decay(0.2).initial_accumulator_value(0.3).eps(
          1e-6));
  expect_trajectory(
      opt, p,
      {{0.9987340208280859, -0.5055889603253052, 1.5009602954651142, -0.2811229599824664},
       {1.2423907798043268, -0.29653935573786977, 1.2467382293463831, -0.4939733496319634},
       {1.395108432383271, -0.18080442013567843, 1.0849070054284133, -0.5933818719271331},
       {1.4994377210575582, -0.11454917989624269, 0.9704998089329034, -0.651950887908307}});
}

TEST(OptimRMSpropAdagrad, Float32) {
  {
    LeastSquares p(mg::kFloat32);
    // dt = torch.float32; RMSprop(p, lr=0.01, momentum=0.5, centered=True); printed with "%.9g"
    optim::RMSprop opt(p.params(), optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
    expect_trajectory(opt, p,
                      {{0.600503802, -0.899496198, 1.8994962, -0.000503765186},
                       {0.719872177, -0.78094548, 1.78025067, -0.117987685},
                       {0.833640456, -0.669267416, 1.66677535, -0.227095202},
                       {0.935284019, -0.571125925, 1.56558001, -0.321298152}},
                      1e-6, 1e-7);
    EXPECT_EQ(opt.state(p.w).at("square_avg").dtype(), mg::kFloat32);
  }
  LeastSquares p(mg::kFloat32);
  // dt = torch.float32; Adagrad(p, lr=0.1, lr_decay=0.01); printed with "%.9g"
  optim::Adagrad opt(p.params(), optim::AdagradOptions(0.1).lr_decay(0.01));
  expect_trajectory(opt, p,
                    {{0.600000024, -0.899999976, 1.89999998, 0},
                     {0.667580307, -0.83321768, 1.83253956, -0.0657418445},
                     {0.72100383, -0.780879617, 1.77926147, -0.116835564},
                     {0.766014993, -0.737113893, 1.73440385, -0.159299254}},
                    1e-6, 1e-7);
  EXPECT_EQ(opt.state(p.w).at("sum").dtype(), mg::kFloat32);
}

// ---------------------------------------------------------------- LBFGS

struct LbfgsRow {
  std::vector<double> params;
  double loss;
  std::int64_t func_evals, n_iter;
};

void expect_lbfgs(const optim::LBFGSOptions& options, const std::vector<LbfgsRow>& expected,
                  double rtol = 1e-9, mg::Dtype dtype = mg::kFloat64) {
  LeastSquares p(dtype);
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
    expect_params(p, expected[s].params, rtol, rtol / 10);
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
      optim::LBFGSOptions(0.5).max_iter(5),
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
      optim::LBFGSOptions().max_iter(4).history_size(2),
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
      optim::LBFGSOptions(0.8).max_iter(6).line_search_fn("strong_wolfe"),
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
      optim::LBFGSOptions(5).max_iter(6).line_search_fn("strong_wolfe"),
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
      optim::LBFGSOptions(0.1).max_iter(3).tolerance_change(1e-3).line_search_fn("strong_wolfe"),
      {{{0.678742021834978, -0.9114091433970187, 1.7312801805584717, 0.08555269787948773},
        16.201875,
        3,
        1},
       {{1.6580528896901856, -0.4266387081939926, 0.6031230685239748, -0.03635955486026578},
        11.788467610766045,
        6,
        2}});
}

TEST(OptimLBFGS, Float32) {
  // dt = torch.float32; printed with "%.9g". PyTorch keeps the scalars (ys, H_diag, t, gtd, ...)
  // as float32 tensors, minigrad as doubles: the same iterations and evaluations, the parameters
  // equal to about 1e-5 after 10 iterations (float32 rounding, amplified by the history).
  // LBFGS(p, lr=0.8, max_iter=6, line_search_fn='strong_wolfe')
  expect_lbfgs(
      optim::LBFGSOptions(0.8).max_iter(6).line_search_fn("strong_wolfe"),
      {{{1.1071831, -0.0197394397, -0.420011073, 0.0685682222}, 16.201873779296875, 7, 6},
       {{0.835006773, -0.159581557, -0.761206448, 0.732253075}, 0.24681544303894043, 14, 12}},
      1e-4, mg::kFloat32);
  // LBFGS(p, lr=0.5, max_iter=5)
  expect_lbfgs(optim::LBFGSOptions(0.5).max_iter(5),
               {{{1.48323452, -0.311463982, 0.256199062, -0.197845727}, 16.201873779296875, 5, 5},
                {{0.9196347, -0.113545865, -0.667798877, 0.44098115}, 0.7823004126548767, 10, 10}},
               1e-4, mg::kFloat32);
}

TEST(OptimLBFGS, DefaultsAndErrors) {
  LeastSquares p;
  optim::LBFGS opt(p.params());
  const auto& o = static_cast<const optim::LBFGSOptions&>(opt.param_groups()[0].options());
  EXPECT_EQ(o.lr(), 1);
  EXPECT_EQ(o.max_iter(), 20);
  EXPECT_EQ(o.max_eval(), 25);  // max_iter * 5 // 4
  EXPECT_EQ(o.tolerance_grad(), 1e-7);
  EXPECT_EQ(o.tolerance_change(), 1e-9);
  EXPECT_EQ(o.history_size(), 100);
  EXPECT_EQ(o.line_search_fn(), "");
  p.backward();
  expect_error([&] { opt.step(); }, "LBFGS.step", "LBFGS needs a closure");
  mg::Tensor c = mg::zeros({1}).requires_grad_();
  opt.add_param_group({{c}, o});
  expect_error([&] { opt.step([&] { return p.X.sum(); }); }, "LBFGS.step",
               "LBFGS doesn't support per-parameter options (parameter groups), got 2 groups");
  expect_error([&] { optim::LBFGS({c}, optim::LBFGSOptions(-1)); }, "LBFGS",
               "Invalid learning rate: -1");
  expect_error([&] { optim::LBFGS({c}, optim::LBFGSOptions().max_iter(0)); }, "LBFGS",
               "invalid max_iter value: 0");
  expect_error([&] { optim::LBFGS({c}, optim::LBFGSOptions().line_search_fn("backtracking")); },
               "LBFGS", "only 'strong_wolfe' is supported as line_search_fn, got \"backtracking\"");
  // Its state_dict holds the options, max_iter as a number.
  const mg::OptimizerStateDict dict = opt.state_dict();
  EXPECT_EQ(dict.optimizer, "LBFGS");
  EXPECT_EQ(std::get<double>(dict.param_groups[0].options[1].second), 20.0);
}

TEST(OptimLBFGS, StateDictRoundTrip) {
  LeastSquares p;
  optim::LBFGS opt(p.params(), optim::LBFGSOptions().max_iter(3));
  auto closure = [&] {
    opt.zero_grad();
    mg::Tensor loss = (p.X.matmul(p.w) + p.b - p.y).pow(2).mean();
    loss.backward();
    return loss;
  };
  // opt = LBFGS([w, b], max_iter=3); opt.step(closure)  (the pure least squares)
  // print(opt.state[w]['func_evals'], opt.state[w]['n_iter'], w.tolist() + b.tolist())
  // 3 2 [1.9562393936669984, -0.4327800359714255, 0.17121243745449677, -0.22373243833595796]
  opt.step(closure);
  expect_params(
      p, {1.9562393936669984, -0.4327800359714255, 0.17121243745449677, -0.22373243833595796});
  const mg::OptimizerStateDict dict = opt.state_dict();
  ASSERT_EQ(dict.state.size(), 1u);  // the counters, in the first parameter's state
  EXPECT_EQ(dict.state.at(0).at("func_evals").item<std::int64_t>(), 3);
  EXPECT_EQ(dict.state.at(0).at("n_iter").item<std::int64_t>(), 2);
  optim::LBFGS resumed(p.params(), optim::LBFGSOptions().max_iter(3));
  resumed.load_state_dict(dict);
  EXPECT_EQ(resumed.state(p.w).at("func_evals").item<std::int64_t>(), 3);
  const double before = closure().item<double>();
  resumed.step(closure);  // a new history, counting on from the loaded counters
  EXPECT_LT(closure().item<double>(), before);
  EXPECT_GT(resumed.state(p.w).at("n_iter").item<std::int64_t>(), 2);
}

// optim::save / optim::load of the new optimizers: a resumed run continues bit for bit.
template <typename Opt, typename Options>
void expect_resume_bit_for_bit(const Options& options) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("minigrad_optim_more_" + std::to_string(::getpid()) + ".safetensors"))
                               .string();
  LeastSquares a, b;
  Opt opt_a(a.params(), options);
  for (int s = 0; s < 2; ++s) {
    opt_a.zero_grad();
    a.backward();
    opt_a.step();
  }
  optim::save(opt_a, path);
  {
    mg::NoGradGuard no_grad;
    b.w.copy_(a.w);
    b.b.copy_(a.b);
  }
  Opt opt_b(b.params(), Options{});
  optim::load(opt_b, path);
  std::filesystem::remove(path);
  for (int s = 0; s < 2; ++s) {
    for (auto [opt, p] : {std::pair<Opt*, LeastSquares*>{&opt_a, &a}, {&opt_b, &b}}) {
      opt->zero_grad();
      p->backward();
      opt->step();
    }
  }
  EXPECT_TRUE(mg::equal(a.w, b.w));
  EXPECT_TRUE(mg::equal(a.b, b.b));
}

TEST(OptimCheckpoint, RMSpropAndAdagradResumeBitForBit) {
  expect_resume_bit_for_bit<optim::RMSprop>(
      optim::RMSpropOptions(0.01).momentum(0.5).centered(true));
  expect_resume_bit_for_bit<optim::Adagrad>(
      optim::AdagradOptions(0.1).lr_decay(0.01).initial_accumulator_value(0.1));
}

// ---------------------------------------------------------------- option errors

TEST(OptimErrors, RMSpropAdagradOptions) {
  mg::Tensor w = mg::zeros({2}).requires_grad_();
  expect_error([&] { optim::RMSprop({w}, optim::RMSpropOptions(-0.1)); }, "RMSprop",
               "Invalid learning rate: -0.1 (must be >= 0)");
  expect_error([&] { optim::RMSprop({w}, optim::RMSpropOptions().alpha(-1)); }, "RMSprop",
               "Invalid alpha value: -1");
  expect_error([&] { optim::RMSprop({w}, optim::RMSpropOptions().eps(-1)); }, "RMSprop",
               "Invalid epsilon value: -1");
  expect_error([&] { optim::RMSprop({w}, optim::RMSpropOptions().weight_decay(-1)); }, "RMSprop",
               "Invalid weight_decay value: -1");
  expect_error([&] { optim::RMSprop({w}, optim::RMSpropOptions().momentum(-0.9)); }, "RMSprop",
               "Invalid momentum value: -0.9");
  expect_error([&] { optim::Adagrad({w}, optim::AdagradOptions(-1)); }, "Adagrad",
               "Invalid learning rate: -1");
  expect_error([&] { optim::Adagrad({w}, optim::AdagradOptions().lr_decay(-1)); }, "Adagrad",
               "Invalid lr_decay value: -1");
  expect_error([&] { optim::Adagrad({w}, optim::AdagradOptions().initial_accumulator_value(-1)); },
               "Adagrad", "Invalid initial_accumulator_value value: -1");
  expect_error([&] { optim::Adagrad({w}, optim::AdagradOptions().eps(-1)); }, "Adagrad",
               "Invalid epsilon value: -1");
}

// ---------------------------------------------------------------- lr schedulers
// As test_optim.cpp: opt = SGD([{'params': [p]}, {'params': [q], 'lr': 0.02}], lr=0.1);
// s = <scheduler>(opt, ...); rows = [s.get_last_lr()]; then n times: opt.step(); s.step();
// rows.append(s.get_last_lr()). Compared exactly (PyTorch's order of operations).

struct TwoGroups {
  mg::Tensor p = mg::zeros({1}).requires_grad_();
  mg::Tensor q = mg::zeros({1}).requires_grad_();
  optim::SGD sgd{{{{p}, optim::SGDOptions(0.1)}, {{q}, optim::SGDOptions(0.02)}}, 1.0};
};

TEST(LrSchedulerLambdaLR, OneAndPerGroupLambdas) {
  {
    TwoGroups t;
    // LambdaLR(opt, lambda e: 0.9 ** e + 0.01 * e)
    sched::LambdaLR s(t.sgd, [](std::int64_t e) {
      return std::pow(0.9, static_cast<double>(e)) + 0.01 * static_cast<double>(e);
    });
    expect_lrs(s, t.sgd,
               {{0.1, 0.02},
                {0.09100000000000001, 0.0182},
                {0.08300000000000002, 0.0166},
                {0.07590000000000002, 0.015180000000000003},
                {0.06961, 0.013922000000000002},
                {0.06404900000000001, 0.012809800000000003},
                {0.05914410000000001, 0.011828820000000002},
                {0.054829690000000014, 0.010965938000000001}});
  }
  TwoGroups t;
  // LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.5 * e])
  sched::LambdaLR s(t.sgd, {[](std::int64_t e) { return 1.0 / static_cast<double>(e + 1); },
                            [](std::int64_t e) { return 0.5 * static_cast<double>(e); }});
  expect_lrs(s, t.sgd,
             {{0.1, 0.0},
              {0.05, 0.01},
              {0.03333333333333333, 0.02},
              {0.025, 0.03},
              {0.020000000000000004, 0.04}});
  EXPECT_EQ(s.base_lrs(), (std::vector<double>{0.1, 0.02}));
}

TEST(LrSchedulerLinearLR, DefaultsAndFactors) {
  {
    TwoGroups t;
    sched::LinearLR s(t.sgd);  // LinearLR(opt)  (start_factor=1/3, end_factor=1, total_iters=5)
    expect_lrs(s, t.sgd,
               {{0.03333333333333333, 0.006666666666666666},
                {0.04666666666666667, 0.009333333333333334},
                {0.060000000000000005, 0.012000000000000002},
                {0.07333333333333335, 0.01466666666666667},
                {0.08666666666666668, 0.01733333333333334},
                {0.1, 0.020000000000000004},
                {0.1, 0.020000000000000004},
                {0.1, 0.020000000000000004}});
  }
  TwoGroups t;
  // LinearLR(opt, start_factor=0.25, end_factor=0.75, total_iters=4)
  sched::LinearLR s(t.sgd, 0.25, 0.75, 4);
  expect_lrs(s, t.sgd,
             {{0.025, 0.005},
              {0.037500000000000006, 0.0075},
              {0.05, 0.009999999999999998},
              {0.0625, 0.012499999999999997},
              {0.075, 0.014999999999999996},
              {0.075, 0.014999999999999996},
              {0.075, 0.014999999999999996},
              {0.075, 0.014999999999999996}});
}

// The momentum (SGD) or beta1 (Adam) of both groups, compared with PyTorch's after each step.
void expect_momenta(const optim::Optimizer& opt, const char* name, double expected,
                    std::size_t epoch) {
  for (std::size_t g = 0; g < 2; ++g) {
    const mg::OptionValue v = *opt.option(g, name);
    const double got = std::holds_alternative<double>(v) ? std::get<double>(v)
                                                         : std::get<std::vector<double>>(v)[0];
    EXPECT_NEAR(got, expected, 1e-15) << "epoch " << epoch << ", group " << g;
  }
}

TEST(LrSchedulerOneCycleLR, CosineDefaults) {
  TwoGroups t;
  // OneCycleLR(opt, max_lr=1.0, total_steps=10); moms = [g['momentum'] for g in param_groups]
  sched::OneCycleLR s(t.sgd, 1.0, sched::OneCycleLROptions().total_steps(10));
  const Rows lrs = {{0.040000000000000036, 0.040000000000000036},
                    {0.52, 0.52},
                    {1.0, 1.0},
                    {0.9504846320134737, 0.9504846320134737},
                    {0.8117456539497631, 0.8117456539497631},
                    {0.6112620219362893, 0.6112620219362893},
                    {0.38874197806371075, 0.38874197806371075},
                    {0.18825834605023697, 0.18825834605023697},
                    {0.049519367986526286, 0.049519367986526286},
                    {4e-06, 4e-06}};
  const std::vector<double> momenta = {0.95,
                                       0.8999999999999999,
                                       0.85,
                                       0.854951556604879,
                                       0.8688255099070633,
                                       0.8888739533021842,
                                       0.9111260466978157,
                                       0.9311744900929366,
                                       0.945048443395121,
                                       0.95};
  for (std::size_t e = 0; e < lrs.size(); ++e) {
    if (e > 0) s.step();
    for (std::size_t g = 0; g < 2; ++g) EXPECT_NEAR(t.sgd.lr(g), lrs[e][g], 1e-15) << e;
    expect_momenta(t.sgd, "momentum", momenta[e], e);
  }
  EXPECT_EQ(s.base_lrs(), (std::vector<double>{0.04, 0.04}));
  s.step();  // step 11 of 10: PyTorch lets the last epoch through...
  expect_error([&] { s.step(); }, "OneCycleLR",
               "tried to step 12 times. The specified number of total steps is 10");
}

TEST(LrSchedulerOneCycleLR, ThreePhaseLinearAdam) {
  mg::Tensor p = mg::zeros({1}).requires_grad_();
  mg::Tensor q = mg::zeros({1}).requires_grad_();
  optim::Adam adam({{{p}, optim::AdamOptions(0.1)}, {{q}, optim::AdamOptions(0.02)}});
  // OneCycleLR(opt, max_lr=[0.5, 0.05], epochs=2, steps_per_epoch=4, pct_start=0.25,
  //            anneal_strategy='linear', three_phase=True, div_factor=10, final_div_factor=100,
  //            base_momentum=0.8, max_momentum=0.9); moms = [g['betas'][0] ...]
  sched::OneCycleLR s(adam, {0.5, 0.05},
                      sched::OneCycleLROptions()
                          .epochs(2)
                          .steps_per_epoch(4)
                          .pct_start(0.25)
                          .anneal_strategy("linear")
                          .base_momentum(0.8)
                          .max_momentum(0.9)
                          .div_factor(10)
                          .final_div_factor(100)
                          .three_phase(true));
  EXPECT_EQ(s.total_steps(), 8);
  const Rows lrs = {{0.05, 0.005},
                    {0.5, 0.05},
                    {0.04999999999999999, 0.0049999999999999975},
                    {0.040100000000000004, 0.00401},
                    {0.0302, 0.0030199999999999997},
                    {0.020300000000000002, 0.00203},
                    {0.0104, 0.0010399999999999993},
                    {0.0005000000000000004, 4.99999999999997e-05}};
  const std::vector<double> momenta = {0.9, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9};
  for (std::size_t e = 0; e < lrs.size(); ++e) {
    if (e > 0) s.step();
    for (std::size_t g = 0; g < 2; ++g) EXPECT_NEAR(adam.lr(g), lrs[e][g], 1e-15) << e;
    expect_momenta(adam, "betas", momenta[e], e);
  }
  EXPECT_EQ(std::get<1>(static_cast<optim::AdamOptions&>(adam.param_groups()[0].options()).betas()),
            0.999);
}

TEST(LrSchedulerSequentialLR, WarmupThenCosine) {
  TwoGroups t;
  // SequentialLR(opt, [LinearLR(opt, start_factor=0.1, total_iters=3),
  //                    CosineAnnealingLR(opt, T_max=4, eta_min=0.001)], milestones=[3])
  auto warmup = std::make_shared<sched::LinearLR>(t.sgd, 0.1, 1.0, 3);
  auto cosine = std::make_shared<sched::CosineAnnealingLR>(t.sgd, 4, 0.001);
  sched::SequentialLR s(t.sgd, {warmup, cosine}, {3});
  expect_lrs(s, t.sgd,
             {{0.010000000000000002, 0.002},
              {0.04, 0.007999999999999998},
              {0.07, 0.013999999999999997},
              {0.1, 0.02},
              {0.0855017856687341, 0.0172175144212722},
              {0.0505, 0.010499999999999999},
              {0.0154982143312659, 0.0037824855787277987},
              {0.001, 0.001},
              {0.015498214331265896, 0.003782485578727798},
              {0.05050000000000001, 0.010500000000000002}});
  EXPECT_EQ(cosine->base_lrs(), (std::vector<double>{0.1, 0.02}));  // the groups' initial_lr
}

TEST(LrSchedulerSequentialLR, ThreeSchedulers) {
  TwoGroups t;
  // SequentialLR(opt, [LambdaLR(opt, lambda e: (e + 1) / 2), StepLR(opt, step_size=2,
  //              gamma=0.5), LinearLR(opt, start_factor=0.5, total_iters=2)], milestones=[2, 5])
  sched::SequentialLR s(t.sgd,
                        {std::make_shared<sched::LambdaLR>(
                             t.sgd, [](std::int64_t e) { return static_cast<double>(e + 1) / 2; }),
                         std::make_shared<sched::StepLR>(t.sgd, 2, 0.5),
                         std::make_shared<sched::LinearLR>(t.sgd, 0.5, 1.0, 2)},
                        {2, 5});
  expect_lrs(s, t.sgd,
             {{0.05, 0.01},
              {0.1, 0.02},
              {0.1, 0.02},
              {0.1, 0.02},
              {0.05, 0.01},
              {0.05, 0.01},
              {0.07500000000000001, 0.015},
              {0.1, 0.019999999999999997},
              {0.1, 0.019999999999999997}});
}

// s = ReduceLROnPlateau(opt, **kw); for m in metrics: s.step(m); rows.append(s._last_lr);
// then print(s.best, s.num_bad_epochs, s.cooldown_counter, s.last_epoch)
void expect_plateau(sched::ReduceLROnPlateau& s, const std::vector<double>& metrics,
                    const Rows& expected) {
  ASSERT_EQ(metrics.size(), expected.size());
  for (std::size_t e = 0; e < metrics.size(); ++e) {
    s.step(metrics[e]);
    EXPECT_EQ(s.get_last_lr(), expected[e]) << "epoch " << e + 1;
  }
}

TEST(LrSchedulerReduceLROnPlateau, MinRel) {
  TwoGroups t;
  sched::ReduceLROnPlateau s(
      t.sgd, sched::ReduceLROnPlateauOptions().patience(2));  // ReduceLROnPlateau(opt, patience=2)
  EXPECT_EQ(s.get_last_lr(), (std::vector<double>{0.1, 0.02}));
  expect_plateau(s, {1.0, 0.9, 0.95, 0.9, 0.91, 0.8, 0.85, 0.86, 0.87, 0.88},
                 {{0.1, 0.02},
                  {0.1, 0.02},
                  {0.1, 0.02},
                  {0.1, 0.02},
                  {0.010000000000000002, 0.002},
                  {0.010000000000000002, 0.002},
                  {0.010000000000000002, 0.002},
                  {0.010000000000000002, 0.002},
                  {0.0010000000000000002, 0.0002},
                  {0.0010000000000000002, 0.0002}});
  EXPECT_EQ(s.best(), 0.8);  // 0.8 1 0 10
  EXPECT_EQ(s.num_bad_epochs(), 1);
  EXPECT_FALSE(s.in_cooldown());
  EXPECT_EQ(s.last_epoch(), 10);
}

TEST(LrSchedulerReduceLROnPlateau, MaxAbsCooldownMinLr) {
  TwoGroups t;
  // ReduceLROnPlateau(opt, mode='max', factor=0.5, patience=1, threshold=0.1,
  //                   threshold_mode='abs', cooldown=2, min_lr=[0.02, 0.004])
  sched::ReduceLROnPlateau s(t.sgd, sched::ReduceLROnPlateauOptions()
                                        .mode("max")
                                        .factor(0.5)
                                        .patience(1)
                                        .threshold(0.1)
                                        .threshold_mode("abs")
                                        .cooldown(2)
                                        .min_lrs({0.02, 0.004}));
  expect_plateau(s, {0.5, 0.55, 0.58, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7},
                 {{0.1, 0.02},
                  {0.1, 0.02},
                  {0.05, 0.01},
                  {0.05, 0.01},
                  {0.05, 0.01},
                  {0.05, 0.01},
                  {0.025, 0.005},
                  {0.025, 0.005},
                  {0.025, 0.005},
                  {0.025, 0.005},
                  {0.02, 0.004},
                  {0.02, 0.004}});
  EXPECT_EQ(s.best(), 0.7);  // 0.7 0 1 12
  EXPECT_EQ(s.num_bad_epochs(), 0);
  EXPECT_TRUE(s.in_cooldown());
  EXPECT_EQ(s.last_epoch(), 12);
}

TEST(LrSchedulerReduceLROnPlateau, NoPatience) {
  TwoGroups t;
  // ReduceLROnPlateau(opt, factor=0.5, patience=0, threshold=0.1)
  sched::ReduceLROnPlateau s(
      t.sgd, sched::ReduceLROnPlateauOptions().factor(0.5).patience(0).threshold(0.1));
  expect_plateau(s, {1.0, 0.95, 0.8, 0.75, 0.7},
                 {{0.1, 0.02}, {0.05, 0.01}, {0.05, 0.01}, {0.025, 0.005}, {0.025, 0.005}});
  EXPECT_EQ(s.best(), 0.7);
}

TEST(LrSchedulerErrors, NewSchedulers) {
  TwoGroups t;
  expect_error(
      [&] {
        sched::LambdaLR(t.sgd, std::vector<sched::LrLambda>{[](std::int64_t) { return 1.0; }});
      },
      "LambdaLR", "expected 2 lr_lambdas (one per parameter group), but got 1");
  expect_error([&] { sched::LinearLR(t.sgd, 1.5); }, "LinearLR",
               "start_factor expected to be between 0 and 1, got 1.5");
  expect_error([&] { sched::LinearLR(t.sgd, 0.5, -1); }, "LinearLR",
               "end_factor expected to be between 0 and 1, got -1");
  expect_error([&] { sched::LinearLR(t.sgd, 0.5, 1, 0); }, "LinearLR",
               "total_iters must be positive, got 0");
  expect_error([&] { sched::OneCycleLR(t.sgd, 0.1); }, "OneCycleLR",
               "you must define either total_steps OR (epochs AND steps_per_epoch)");
  expect_error([&] { sched::OneCycleLR(t.sgd, 0.1, sched::OneCycleLROptions().total_steps(-5)); },
               "OneCycleLR", "expected a positive total_steps, but got -5");
  expect_error([&] { sched::OneCycleLR(t.sgd, 0.1, sched::OneCycleLROptions().epochs(3)); },
               "OneCycleLR", "expected a positive steps_per_epoch, but got 0");
  expect_error(
      [&] {
        sched::OneCycleLR(t.sgd, 0.1, sched::OneCycleLROptions().total_steps(5).pct_start(1.5));
      },
      "OneCycleLR", "expected pct_start between 0 and 1, but got 1.5");
  expect_error(
      [&] {
        sched::OneCycleLR(t.sgd, 0.1,
                          sched::OneCycleLROptions().total_steps(5).anneal_strategy("exp"));
      },
      "OneCycleLR", "anneal_strategy must be one of 'cos' or 'linear', instead got 'exp'");
  expect_error(
      [&] {
        sched::OneCycleLR(t.sgd, std::vector<double>{0.1},
                          sched::OneCycleLROptions().total_steps(5));
      },
      "OneCycleLR", "expected 2 values for max_lr, got 1");
  optim::Adagrad adagrad({t.p});
  expect_error([&] { sched::OneCycleLR(adagrad, 0.1, sched::OneCycleLROptions().total_steps(5)); },
               "OneCycleLR",
               "optimizer must support momentum with cycle_momentum enabled (Adagrad");
  EXPECT_NO_THROW(sched::OneCycleLR(
      adagrad, 0.1, sched::OneCycleLROptions().total_steps(5).cycle_momentum(false)));
  auto warmup = std::make_shared<sched::LinearLR>(t.sgd);
  expect_error([&] { sched::SequentialLR(t.sgd, {warmup}, {3}); }, "SequentialLR",
               "but got number of schedulers 1 and the number of milestones to be equal to 1");
  expect_error([&] { sched::SequentialLR(adagrad, {warmup}, {}); }, "SequentialLR",
               "got scheduler at index 0 to be different than the optimizer passed in");
  expect_error(
      [&] { sched::ReduceLROnPlateau(t.sgd, sched::ReduceLROnPlateauOptions().factor(1.0)); },
      "ReduceLROnPlateau", "factor should be < 1.0, got 1");
  expect_error(
      [&] { sched::ReduceLROnPlateau(t.sgd, sched::ReduceLROnPlateauOptions().mode("lowest")); },
      "ReduceLROnPlateau", "mode 'lowest' is unknown (expected 'min' or 'max')");
  expect_error(
      [&] {
        sched::ReduceLROnPlateau(t.sgd, sched::ReduceLROnPlateauOptions().threshold_mode("pct"));
      },
      "ReduceLROnPlateau", "threshold mode 'pct' is unknown (expected 'rel' or 'abs')");
  expect_error(
      [&] { sched::ReduceLROnPlateau(t.sgd, sched::ReduceLROnPlateauOptions().min_lrs({0.1})); },
      "ReduceLROnPlateau", "expected 2 min_lrs, got 1");
}

// ---------------------------------------------------------------- gradient clipping
// a = torch.zeros(3, dtype=torch.float64, requires_grad=True); b = torch.zeros(2, 2, ...)
// a.grad = torch.tensor([3., -4., 1.]); b.grad = torch.tensor([[0.5, -2.], [6., 0.]])
// print(clip_grad_norm_([a, b], ...).item(), a.grad.tolist(), b.grad.tolist())

struct Grads {
  Grads() {
    a.set_grad(mg::tensor({3., -4., 1.}, mg::kFloat64));
    b.set_grad(mg::tensor({{0.5, -2.}, {6., 0.}}, mg::kFloat64));
  }
  void expect(const std::vector<double>& ga, const std::vector<double>& gb) const {
    const std::vector<double> got_a = a.grad().to_vector<double>();
    const std::vector<double> got_b = b.grad().to_vector<double>();
    for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(got_a[i], ga[i], 1e-15) << "a " << i;
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(got_b[i], gb[i], 1e-15) << "b " << i;
  }
  mg::Tensor a = mg::zeros({3}, mg::kFloat64).requires_grad_();
  mg::Tensor b = mg::zeros({2, 2}, mg::kFloat64).requires_grad_();
};

TEST(ClipGrad, NormTypes) {
  namespace utils = mg::nn::utils;
  {
    Grads g;  // clip_grad_norm_([a, b], 2.0)
    EXPECT_NEAR(utils::clip_grad_norm_({g.a, g.b}, 2.0).item<double>(), 8.139410298049853, 1e-14);
    g.expect({0.7371540496347149, -0.9828720661796199, 0.24571801654490497},
             {0.12285900827245248, -0.49143603308980993, 1.4743080992694297, 0.0});
  }
  {
    Grads g;  // clip_grad_norm_([a, b], 1.5, norm_type=float('inf'))
    EXPECT_EQ(utils::clip_grad_norm_({g.a, g.b}, 1.5, INFINITY).item<double>(), 6.0);
    g.expect({0.7499998750000207, -0.9999998333333611, 0.24999995833334027},
             {0.12499997916667013, -0.49999991666668053, 1.4999997500000415, 0.0});
  }
  {
    Grads g;  // clip_grad_norm_([a, b], 3.0, norm_type=1)
    EXPECT_NEAR(utils::clip_grad_norm_({g.a, g.b}, 3.0, 1).item<double>(), 16.5, 1e-14);
    g.expect({0.5454545123966962, -0.7272726831955949, 0.18181817079889873},
             {0.09090908539944936, -0.36363634159779745, 1.0909090247933924, 0.0});
  }
  {
    Grads g;  // clip_grad_norm_([a, b], 100.0): below max_norm, unchanged
    EXPECT_NEAR(utils::clip_grad_norm_({g.a, g.b}, 100.0).item<double>(), 8.139410298049853, 1e-14);
    g.expect({3.0, -4.0, 1.0}, {0.5, -2.0, 6.0, 0.0});
  }
}

TEST(ClipGrad, ScalesTheGradientsInPlace) {
  // held = a.grad; clip_grad_norm_([a, b], 2.0); held is a.grad  -> True, and held is scaled
  Grads g;
  mg::Tensor held = g.a.grad();
  mg::nn::utils::clip_grad_norm_({g.a, g.b}, 2.0);
  EXPECT_TRUE(held.is_same(g.a.grad()));
  const std::vector<double> v = held.to_vector<double>();
  EXPECT_NEAR(v[0], 0.7371540496347149, 1e-15);
  EXPECT_NEAR(v[1], -0.9828720661796199, 1e-15);
}

TEST(ClipGrad, Value) {
  Grads g;  // clip_grad_value_([a, b], 2.5)
  mg::nn::utils::clip_grad_value_({g.a, g.b}, 2.5);
  g.expect({2.5, -2.5, 1.0}, {0.5, -2.0, 2.5, 0.0});
}

TEST(ClipGrad, NonFinite) {
  namespace utils = mg::nn::utils;
  Grads g;
  g.a.set_grad(mg::tensor({INFINITY, -4., 1.}, mg::kFloat64));
  // clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True): RuntimeError: The total norm of
  // order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. ...
  expect_error(
      [&] {
        utils::clip_grad_norm_({g.a, g.b}, 1.0, 2.0, true);
      },
      "clip_grad_norm_",
      "the total norm of order 2 for gradients from parameters is non-finite (inf), so "
      "it cannot be clipped");
  EXPECT_EQ(g.b.grad().to_vector<double>()[2], 6.0);  // unchanged
  // a.grad[0] = nan; clip_grad_norm_([a, b], 1.0) -> tensor(nan), every gradient nan
  Grads h;
  h.a.set_grad(mg::tensor({NAN, -4., 1.}, mg::kFloat64));
  EXPECT_TRUE(std::isnan(utils::clip_grad_norm_({h.a, h.b}, 1.0).item<double>()));
  for (double v : h.b.grad().to_vector<double>()) EXPECT_TRUE(std::isnan(v));
}

}  // namespace

// ---------------------------------------------------------------- fused Adam / AdamW, bit for bit

// Note [Fused Adam] (core/src/kernels/optim.h): the float32 step is PyTorch's arithmetic element
// for element, so 3 steps over 37 values (a full AVX-512 vector, two AVX2 ones and a tail) give
// PyTorch's bits exactly. Inputs are exact in float32:
//   n = 37; p0 = [((i*7) % 13 - 6) / 8 for i in range(n)]
//   grad at step s = [((i*5 + s*3) % 11 - 5) / 16 for i in range(n)], s = 0, 1, 2
// printed with "%.9g" after opt.step() x3 (foreach=False; foreach=True printed the same values).
namespace {
std::vector<float> fused_p0() {
  std::vector<float> p;
  for (int i = 0; i < 37; ++i) p.push_back(static_cast<float>((i * 7) % 13 - 6) / 8.0f);
  return p;
}
mg::Tensor fused_grad(int s) {
  std::vector<float> g;
  for (int i = 0; i < 37; ++i) g.push_back(static_cast<float>((i * 5 + s * 3) % 11 - 5) / 16.0f);
  return mg::tensor(g);
}
void expect_bits(const mg::Tensor& t, const std::vector<float>& expected, const char* what) {
  const std::vector<float> got = t.to_vector<float>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], expected[i]) << what << "[" << i << "]";
}
}  // namespace

TEST(OptimFused, AdamWFloat32BitsOfPyTorch) {
  for (int threads : {1, 2}) {
    mg::set_num_threads(threads);
    mg::Tensor p = mg::tensor(fused_p0()).requires_grad_();
    // AdamW([p], lr=0.1, betas=(0.9, 0.95), weight_decay=0.1)
    optim::AdamW opt({p}, optim::AdamWOptions(0.1).betas({0.9, 0.95}).weight_decay(0.1));
    for (int s = 0; s < 3; ++s) {
      p.set_grad(fused_grad(s));
      opt.step();
    }
    expect_bits(p, {-0.482150018f,   0.0732734874f, -0.738602161f,  0.23611334f,   -0.562636852f,
                    0.443358421f,    -0.390629619f, 0.641760707f,   -0.465027392f, 0.817891777f,
                    -0.310405642f,   0.97329849f,   -0.0480138883f, -0.859889567f, 0.114825979f,
                    -0.683924198f,   0.322071046f,  -0.511916935f,  0.520473301f,  -0.586314797f,
                    0.69660449f,     -0.431692988f, 0.852011085f,   -0.169301271f, 0.595558941f,
                    -0.00646139681f, -0.805211604f, 0.200783685f,   -0.633204281f, 0.399185985f,
                    -0.707602203f,   0.575317085f,  -0.552980423f,  0.730723739f,  -0.290588647f,
                    0.474271566f,    -0.127748773f},
                "p");
    expect_bits(opt.state(p).at("exp_avg_sq"),
                {0.00534423813f, 0.00655273441f, 0.00607666047f, 0.00580126978f, 0.00598437432f,
                 0.00401562499f, 0.00700634765f, 0.00334423827f, 0.00710156281f, 0.0037871094f,
                 0.00627001934f, 0.00534423813f, 0.00655273441f, 0.00607666047f, 0.00580126978f,
                 0.00598437432f, 0.00401562499f, 0.00700634765f, 0.00334423827f, 0.00710156281f,
                 0.0037871094f,  0.00627001934f, 0.00534423813f, 0.00655273441f, 0.00607666047f,
                 0.00580126978f, 0.00598437432f, 0.00401562499f, 0.00700634765f, 0.00334423827f,
                 0.00710156281f, 0.0037871094f,  0.00627001934f, 0.00534423813f, 0.00655273441f,
                 0.00607666047f, 0.00580126978f},
                "exp_avg_sq");
  }
  mg::set_num_threads(1);
}

TEST(OptimFused, AdamAmsgradMaximizeFloat32BitsOfPyTorch) {
  mg::Tensor p = mg::tensor(fused_p0()).requires_grad_();
  // Adam([p], lr=0.05, betas=(0.8, 0.9), weight_decay=0.2, amsgrad=True, maximize=True)
  optim::Adam opt(
      {p},
      optim::AdamOptions(0.05).betas({0.8, 0.9}).weight_decay(0.2).amsgrad(true).maximize(true));
  for (int s = 0; s < 3; ++s) {
    p.set_grad(fused_grad(s));
    opt.step();
  }
  expect_bits(p, {-0.803663313f,  0.0893322676f, -0.525103688f, 0.228626668f,   -0.426459014f,
                  0.301754028f,   -0.337658137f, 0.390078515f,  -0.131714195f,  0.498230994f,
                  -0.0265787113f, 0.614658296f,  0.022616649f,  -0.644661367f,  0.12030232f,
                  -0.542334437f,  0.189569429f,  -0.451979071f, 0.273985445f,   -0.252515167f,
                  0.376802057f,   -0.145123392f, 0.491640806f,  -0.0451334156f, 0.749785602f,
                  0.00955402292f, -0.659533203f, 0.0784303844f, -0.566433609f,  0.159241363f,
                  -0.37448597f,   0.256153017f,  -0.264270961f, 0.36895293f,    -0.162280053f,
                  0.632720768f,   -0.104580633f},
              "p");
  expect_bits(opt.state(p).at("exp_avg_sq"),
              {0.0074010063f,  0.0138981091f,  0.0171901099f,  0.00911633391f, 0.0122890323f,
               0.00689714635f, 0.0114447195f,  0.00854825322f, 0.016134223f,   0.0142630395f,
               0.0129056266f,  0.0241092369f,  0.013414165f,   0.0193428043f,  0.0104280207f,
               0.0132727362f,  0.00715478137f, 0.0112743629f,  0.00766526628f, 0.0178143624f,
               0.0122097293f,  0.0134085324f,  0.0208734609f,  0.0130960383f,  0.0154286884f,
               0.012074491f,   0.0145889269f,  0.00772336824f, 0.0114331041f,  0.00711280201f,
               0.0198323186f,  0.0104933223f,  0.0142464647f,  0.0179758575f,  0.0127743576f,
               0.0139351645f,  0.0140751014f},
              "exp_avg_sq");
  expect_bits(opt.state(p).at("max_exp_avg_sq"),
              {0.0074010063f,  0.0138981091f,  0.0191406254f,  0.00911633391f, 0.0135849994f,
               0.00689714635f, 0.0123271868f,  0.00854825322f, 0.016134223f,   0.0158068743f,
               0.0129056266f,  0.0262740627f,  0.013414165f,   0.0213906262f,  0.0104280207f,
               0.0144787505f,  0.00715478137f, 0.0123896869f,  0.00766526628f, 0.0178506263f,
               0.0133506246f,  0.0134085324f,  0.0229865611f,  0.0130960383f,  0.0154286884f,
               0.012074491f,   0.0160000008f,  0.00772336824f, 0.0126896882f,  0.00711280201f,
               0.0207568742f,  0.0111318734f,  0.0142464647f,  0.0199365616f,  0.0127743576f,
               0.0139351645f,  0.0140751014f},
              "max_exp_avg_sq");
}
