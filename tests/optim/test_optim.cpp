// optim: SGD, Adam, AdamW and the lr schedulers against PyTorch 1.13 (torch.optim, foreach=False).
//
// Every trajectory test runs 4 (or 5) steps on this least-squares problem; the expected values
// are the parameters [w0, w1, w2, b] after each step, printed by PyTorch with repr():
//
//   X = torch.tensor([[1., 2., 0.5], [-1., 0.5, 2.], [0.3, -0.7, 1.], [2., 1., -1.]], dtype=dt)
//   y = torch.tensor([1., -2., 0.5, 3.], dtype=dt)
//   w = torch.tensor([0.5, -1., 2.], dtype=dt, requires_grad=True)
//   b = torch.tensor([0.1], dtype=dt, requires_grad=True)
//   opt = make([w, b])   # the line quoted in each test
//   for _ in range(steps):
//       opt.zero_grad(); ((X @ w + b - y) ** 2).mean().backward(); opt.step()
//       print(w.tolist() + b.tolist())
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/optim/optim.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
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

// ---------------------------------------------------------------- SGD

TEST(OptimSGD, Plain) {
  LeastSquares p;
  optim::SGD opt(p.params(), optim::SGDOptions(0.05));  // SGD(p, lr=0.05)
  expect_trajectory(
      opt, p,
      {{0.889125, -0.828375, 1.5787499999999999, 0.06875},
       {1.1729864375, -0.70803684375, 1.25511625, 0.0325646875},
       {1.3799221132578126, -0.62335459115625, 1.0061182342968749, -0.004520687968749993},
       {1.5305992849388652, -0.5633812397401973, 0.814263731680332, -0.0401617089468164}});
}

TEST(OptimSGD, Momentum) {
  LeastSquares p;
  optim::SGD opt(p.params(),
                 optim::SGDOptions(0.05).momentum(0.9));  // SGD(p, lr=0.05, momentum=0.9)
  expect_trajectory(
      opt, p,
      {{0.889125, -0.828375, 1.5787499999999999, 0.06875},
       {1.5231989375000001, -0.5535743437499999, 0.8759912499999998, 0.004439687500000002},
       {2.2060639507578124, -0.2677296599062499, 0.08236498429687474, -0.09496675046875},
       {2.7475897776099587, -0.05621906304957223, -0.6103396732181057, -0.2256912820874414}});
  ASSERT_TRUE(opt.state(p.w).contains("momentum_buffer"));
  EXPECT_EQ(opt.state(p.w).at("momentum_buffer").shape(), mg::Shape{3});
}

TEST(OptimSGD, Dampening) {
  LeastSquares p;
  // SGD(p, lr=0.05, momentum=0.9, dampening=0.3)
  optim::SGD opt(p.params(), optim::SGDOptions(0.05).momentum(0.9).dampening(0.3));
  expect_trajectory(
      opt, p,
      {{0.889125, -0.828375, 1.5787499999999999, 0.06875},
       {1.4380405062500001, -0.589675790625, 0.9730813749999998, 0.015295281250000006},
       {2.0267578004963283, -0.3403918971665625, 0.2995057348054685, -0.06169396210468749},
       {2.539580219333312, -0.1332090083117627, -0.32648617598395896, -0.16091687818313302}});
}

TEST(OptimSGD, Nesterov) {
  LeastSquares p;
  // SGD(p, lr=0.05, momentum=0.9, nesterov=True)
  optim::SGD opt(p.params(), optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  expect_trajectory(
      opt, p,
      {{1.2393375000000002, -0.6739125, 1.199625, 0.040625},
       {1.9138647893750003, -0.3939542559375, 0.4104321624999999, -0.06187897812500003},
       {2.3624304731478363, -0.22467517977196877, -0.1906178022077345, -0.19249379971515634},
       {2.538996174976085, -0.17102047625160924, -0.5260445441984247, -0.32481009763450935}});
}

TEST(OptimSGD, WeightDecay) {
  LeastSquares p;
  // SGD(p, lr=0.05, momentum=0.5, weight_decay=0.1)
  optim::SGD opt(p.params(), optim::SGDOptions(0.05).momentum(0.5).weight_decay(0.1));
  expect_trajectory(
      opt, p,
      {{0.8866250000000001, -0.823375, 1.5687499999999999, 0.06825},
       {1.3585639375000003, -0.6110093437499999, 1.0230037499999998, 0.0163171875},
       {1.7408068073203127, -0.44339824318749993, 0.5474191311718748, -0.04814703015625003},
       {1.969967862009256, -0.34641476506785346, 0.21695470765064442, -0.11609591091400392}});
}

TEST(OptimSGD, Maximize) {
  LeastSquares p;
  // SGD(p, lr=0.01, momentum=0.9, maximize=True)
  optim::SGD opt(p.params(), optim::SGDOptions(0.01).momentum(0.9).maximize(true));
  expect_trajectory(
      opt, p,
      {{0.42217499999999997, -1.034325, 2.08425, 0.10625000000000001},
       {0.27009695749999996, -1.10159397375, 2.24822965, 0.11792758750000001},
       {0.042964443593937425, -1.20253537152075, 2.4915686641256247, 0.13408263800375},
       {-0.2640014067645667, -1.3398241196517093, 2.8176200964128757, 0.1536070404188101}});
}

TEST(OptimSGD, MomentumFloat32) {
  LeastSquares p(mg::kFloat32);
  // dt = torch.float32; SGD(p, lr=0.05, momentum=0.9); printed with "%.9g"
  optim::SGD opt(p.params(), optim::SGDOptions(0.05).momentum(0.9));
  expect_trajectory(opt, p,
                    {{0.88912499, -0.828374982, 1.57875001, 0.0687500164},
                     {1.52319896, -0.553574324, 0.875991285, 0.0044397153},
                     {2.20606399, -0.26772967, 0.0823650137, -0.0949667171},
                     {2.74758983, -0.056219127, -0.610339701, -0.225691244}},
                    1e-6, 1e-7);
  EXPECT_EQ(p.w.dtype(), mg::kFloat32);
  EXPECT_EQ(opt.state(p.w).at("momentum_buffer").dtype(), mg::kFloat32);
}

TEST(OptimSGD, ZeroGradientStillDecays) {
  // c = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
  // opt = SGD([c], lr=0.1, weight_decay=0.5); c.grad = torch.zeros_like(c); opt.step()  # [0.95]
  mg::Tensor c = mg::tensor({1.0}, mg::kFloat64).requires_grad_();
  optim::SGD opt({c}, optim::SGDOptions(0.1).weight_decay(0.5));
  c.set_grad(mg::zeros_like(c));
  opt.step();
  EXPECT_DOUBLE_EQ(c.item<double>(), 0.95);
}

// ---------------------------------------------------------------- Adam, AdamW

TEST(OptimAdam, Default) {
  LeastSquares p;
  optim::Adam opt(p.params(), optim::AdamOptions(0.1));  // Adam(p, lr=0.1)
  expect_trajectory(
      opt, p,
      {{0.5999999998715065, -0.9000000002913329, 1.9000000001186943, 1.5999999936067155e-09},
       {0.6997638050096047, -0.8003368143551445, 1.800250603628154, -0.09951577420012439},
       {0.7991081704689977, -0.7012867270774436, 1.7009475072936318, -0.19812627126891907},
       {0.8978283809483121, -0.6031722926363683, 1.6023100328383841, -0.2953240989987062}});
  const optim::ParamState& s = opt.state(p.w);
  EXPECT_EQ(s.at("step").item<double>(), 4.0);
  EXPECT_TRUE(s.contains("exp_avg"));
  EXPECT_TRUE(s.contains("exp_avg_sq"));
  EXPECT_FALSE(s.contains("max_exp_avg_sq"));
}

TEST(OptimAdam, WeightDecay) {
  LeastSquares p;
  optim::Adam opt(p.params(),
                  optim::AdamOptions(0.1).weight_decay(0.2));  // Adam(p, lr=0.1, weight_decay=0.2)
  expect_trajectory(
      opt, p,
      {{0.599999999869834, -0.9000000002752925, 1.9000000001133144, 1.5503875822053814e-09},
       {0.6997476558533012, -0.8003407960131976, 1.8002465313737683, -0.0993300024771445},
       {0.7990452143433948, -0.7013029400306076, 1.7009314810423568, -0.19736572833713184},
       {0.8976697978764187, -0.6032154972091932, 1.6022691088812668, -0.29332153027558006}});
}

TEST(OptimAdam, Amsgrad) {
  // Without amsgrad, step 2 gives [1.5194674070691299, 0.021659351471578825, ...]: the running
  // maximum of the second moment matters from step 2 on.
  LeastSquares p;
  // Adam(p, lr=0.5, betas=(0.9, 0.5), amsgrad=True), 5 steps
  optim::Adam opt(p.params(), optim::AdamOptions(0.5).betas({0.9, 0.5}).amsgrad(true));
  expect_trajectory(
      opt, p,
      {{0.9999999993575329, -0.5000000014566642, 1.500000000593472, -0.39999999200000014},
       {1.5059395019274913, -0.026829796854602517, 0.9990462575646246, -0.8318837085441652},
       {1.9319504415240725, 0.326913308056977, 0.5803086165537494, -1.1376814463282034},
       {2.2546984180847898, 0.5410353918889665, 0.2646555064294432, -1.323769419294954},
       {2.47570074376374, 0.6251777629256399, 0.04945333979572286, -1.4079055235444033}});
  EXPECT_TRUE(opt.state(p.b).contains("max_exp_avg_sq"));
}

TEST(OptimAdam, Float32) {
  LeastSquares p(mg::kFloat32);
  // dt = torch.float32; Adam(p, lr=0.1, weight_decay=0.2); printed with "%.9g"
  optim::Adam opt(p.params(), optim::AdamOptions(0.1).weight_decay(0.2));
  expect_trajectory(opt, p,
                    {{0.599999964, -0.899999976, 1.89999998, 7.4505806e-09},
                     {0.699747622, -0.800340772, 1.80024648, -0.0993299931},
                     {0.799045146, -0.701302886, 1.70093143, -0.197365731},
                     {0.897669733, -0.603215456, 1.60226905, -0.29332155}},
                    1e-6, 1e-7);
}

TEST(OptimAdamW, Default) {
  LeastSquares p;
  optim::AdamW opt(p.params(), optim::AdamWOptions(0.1));  // AdamW(p, lr=0.1)  (weight_decay=1e-2)
  EXPECT_EQ(static_cast<optim::AdamWOptions&>(opt.param_groups()[0].options()).weight_decay(),
            1e-2);
  expect_trajectory(
      opt, p,
      {{0.5994999998715066, -0.8990000002913329, 1.8980000001186943, -9.999840000000926e-05},
       {0.6986624039085602, -0.7984402986900496, 1.7963556424996867, -0.09959684281634953},
       {0.797303050498852, -0.6985985137873606, 1.6952644993578936, -0.198051393361237},
       {0.895216532197851, -0.5997983500183641, 1.5949476812692602, -0.29493312552993634}});
}

TEST(OptimAdamW, AmsgradWeightDecay) {
  LeastSquares p;
  // AdamW(p, lr=0.5, betas=(0.9, 0.5), weight_decay=0.5, amsgrad=True), 5 steps
  optim::AdamW opt(p.params(),
                   optim::AdamWOptions(0.5).betas({0.9, 0.5}).weight_decay(0.5).amsgrad(true));
  expect_trajectory(
      opt, p,
      {{0.8749999993575329, -0.25000000145666423, 1.000000000593472, -0.4249999920000001},
       {1.128980977828159, 0.2479353667376615, 0.30093006904862135, -0.5089077538221409},
       {1.2252572417975842, 0.477290468454359, -0.12483958283804591, -0.41513237786950374},
       {1.2054302170378735, 0.516136028863805, -0.35573924784143063, -0.2852395315001182}});
}

TEST(OptimAdamW, AmsgradFloat32) {
  LeastSquares p(mg::kFloat32);
  // dt = torch.float32; AdamW(p, lr=0.1, amsgrad=True); printed with "%.9g"
  optim::AdamW opt(p.params(), optim::AdamWOptions(0.1).amsgrad(true));
  expect_trajectory(opt, p,
                    {{0.5995, -0.898999989, 1.898, -9.99867916e-05},
                     {0.6986624, -0.798440278, 1.79635572, -0.0995968431},
                     {0.797303081, -0.698598504, 1.69526458, -0.198051423},
                     {0.895216584, -0.599798381, 1.59494781, -0.29493317}},
                    1e-6, 1e-7);
}

// ---------------------------------------------------------------- groups, zero_grad, skipping

TEST(OptimParamGroups, DifferentLearningRates) {
  LeastSquares p;
  // SGD([{'params': [w], 'lr': 0.1}, {'params': [b], 'lr': 0.01, 'momentum': 0.9}], lr=0.1)
  optim::SGD opt({{{p.w}, optim::SGDOptions(0.1)}, {{p.b}, optim::SGDOptions(0.01).momentum(0.9)}},
                 optim::SGDOptions(1));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.lr(1), 0.01);
  expect_trajectory(
      opt, p,
      {{1.27825, -0.65675, 1.1575, 0.09375},
       {1.6289770000000001, -0.526522375, 0.69843375, 0.078775875},
       {1.7797566085625, -0.48238229862500004, 0.438860374375, 0.05613130087499999},
       {1.8384351696784063, -0.4686498287662813, 0.2866968866228125, 0.027928954647593738}});
  EXPECT_FALSE(opt.state(p.w).contains("momentum_buffer"));
  EXPECT_TRUE(opt.state(p.b).contains("momentum_buffer"));
}

TEST(OptimParamGroups, AddParamGroupAndChangeOptions) {
  mg::Tensor a = mg::tensor({1.0}, mg::kFloat64).requires_grad_();
  mg::Tensor c = mg::tensor({2.0}, mg::kFloat64).requires_grad_();
  optim::SGD opt({a}, optim::SGDOptions(0.5));
  opt.add_param_group({{c}, optim::SGDOptions(0.25)});
  ASSERT_EQ(opt.num_param_groups(), 2u);
  static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).lr(0.125);
  a.set_grad(mg::ones_like(a));
  c.set_grad(mg::ones_like(c));
  opt.step();
  EXPECT_EQ(a.item<double>(), 1.0 - 0.125);
  EXPECT_EQ(c.item<double>(), 2.0 - 0.25);
}

TEST(OptimZeroGrad, SetToNoneByDefault) {
  LeastSquares p;
  optim::Adam opt(p.params());
  p.backward();
  ASSERT_TRUE(p.w.grad().defined());
  opt.zero_grad();
  EXPECT_FALSE(p.w.grad().defined());
  EXPECT_FALSE(p.b.grad().defined());
}

TEST(OptimZeroGrad, ZerosInPlace) {
  LeastSquares p;
  optim::SGD opt(p.params(), optim::SGDOptions(0.1));
  p.backward();
  mg::Tensor g = p.w.grad();
  const double* data = g.data_ptr<double>();
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(p.w.grad().defined());
  EXPECT_EQ(p.w.grad().data_ptr<double>(), data);  // the same buffer, zeroed
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{0.0, 0.0, 0.0}));
  EXPECT_EQ(p.b.grad().to_vector<double>(), (std::vector<double>{0.0}));
}

TEST(OptimZeroGrad, ParameterWithoutGradIsSkipped) {
  LeastSquares p;
  mg::Tensor unused = mg::tensor({3.0, 4.0}, mg::kFloat64).requires_grad_();
  optim::Adam adam({p.w, unused, p.b}, optim::AdamOptions(0.1));
  optim::SGD sgd({unused}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.5));
  p.backward();
  adam.step();
  sgd.step();
  EXPECT_EQ(unused.to_vector<double>(), (std::vector<double>{3.0, 4.0}));
  EXPECT_TRUE(adam.state(unused).empty());
  EXPECT_TRUE(sgd.state(unused).empty());
  EXPECT_FALSE(adam.state(p.w).empty());
  EXPECT_NEAR(p.w.to_vector<double>()[0], 0.5999999998715065, 1e-12);  // Adam(lr=0.1), step 1
}

// ---------------------------------------------------------------- parameters without a gradient
// Note [Parameters without a gradient] (optimizer.h): step() warns once per parameter that gets
// no gradient, names it, and throws instead in strict mode.

// Sets the process-wide switches for one test and restores the defaults (warn, not strict).
struct GradientChecks {
  explicit GradientChecks(bool strict, bool warn = true) {
    optim::set_strict_gradients(strict);
    optim::set_warn_no_gradient(warn);
  }
  ~GradientChecks() {
    optim::set_strict_gradients(false);
    optim::set_warn_no_gradient(true);
  }
  GradientChecks(const GradientChecks&) = delete;
  GradientChecks& operator=(const GradientChecks&) = delete;
};

// The lesson's projections, with the learner's bug: W_k's output is detached, so W_k never trains.
struct Projections : mg::nn::Module {
  mg::nn::Linear W_q{3, 3, false};
  mg::nn::Linear W_k{3, 3, false};
  mg::nn::Linear W_v{3, 3, false};
  bool detach_k = true;
  bool use_v = true;
  Projections() : mg::nn::Module("Projections") {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
    register_module("W_v", W_v);
  }
  mg::Tensor loss(const mg::Tensor& x) const {
    mg::Tensor k = detach_k ? W_k(x).detach() : W_k(x);
    mg::Tensor scores = mg::softmax(W_q(x).matmul(k.t()), -1);
    return use_v ? scores.matmul(W_v(x)).pow(2).mean() : scores.pow(2).mean();
  }
};

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(std::vector<mg::Tensor>)>;
struct NamedMaker {
  const char* name;
  MakeOptimizer make;
};
const std::vector<NamedMaker>& every_optimizer() {
  static const std::vector<NamedMaker> makers = {
      {"SGD",
       [](std::vector<mg::Tensor> ps) {
         return std::make_unique<optim::SGD>(std::move(ps), optim::SGDOptions(0.1));
       }},
      {"Adam",
       [](std::vector<mg::Tensor> ps) {
         return std::make_unique<optim::Adam>(std::move(ps), optim::AdamOptions(0.1));
       }},
      {"AdamW",
       [](std::vector<mg::Tensor> ps) {
         return std::make_unique<optim::AdamW>(std::move(ps), optim::AdamWOptions(0.1));
       }},
  };
  return makers;
}

// The message for W_k of Projections (W_q and W_v train), from the spec of the warning.
std::string wk_message(const std::string& optimizer) {
  return "[" + optimizer +
         ".step] parameter W_k.weight (shape (3, 3)) received no gradient in backward while 2 of "
         "the 3 trainable parameters did, so step() does not train it: it did not take part in "
         "the loss, or the graph was cut on its way there (detach(), NoGradGuard, item()); use it "
         "in the loss, or freeze it with requires_grad_(false)";
}

// Runs `steps` training steps (zero_grad, backward, step) and returns what stderr received.
std::string train_capturing_stderr(optim::Optimizer& opt, const Projections& m, const mg::Tensor& x,
                                   int steps) {
  testing::internal::CaptureStderr();
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    m.loss(x).backward();
    opt.step();
  }
  return testing::internal::GetCapturedStderr();
}

TEST(OptimNoGradient, DetachedWeightIsReportedOnceByNameByEveryOptimizer) {
  GradientChecks checks(/*strict=*/false);
  for (const NamedMaker& maker : every_optimizer()) {
    SCOPED_TRACE(maker.name);
    mg::manual_seed(0);
    Projections m;
    const mg::Tensor x = mg::randn({4, 3});
    const mg::Tensor wq0 = m.W_q->weight.detach().clone();
    const mg::Tensor wk0 = m.W_k->weight.detach().clone();
    auto opt = maker.make(m.parameters());
    const std::string err = train_capturing_stderr(*opt, m, x, /*steps=*/4);
    EXPECT_EQ(err, "minigrad warning: " + wk_message(maker.name) + "\n");
    EXPECT_TRUE(mg::equal(m.W_k->weight, wk0)) << "W_k got no gradient, so it must not change";
    EXPECT_FALSE(mg::equal(m.W_q->weight, wq0)) << "W_q has a gradient, so it trains";
    // A second optimizer over the same parameters reports them again (once per optimizer).
    auto other = maker.make(m.parameters());
    EXPECT_EQ(train_capturing_stderr(*other, m, x, /*steps=*/2),
              "minigrad warning: " + wk_message(maker.name) + "\n");
  }
}

TEST(OptimNoGradient, StrictModeThrowsTheMessageAtEveryStepBeforeChangingAnything) {
  GradientChecks checks(/*strict=*/true);
  for (const NamedMaker& maker : every_optimizer()) {
    SCOPED_TRACE(maker.name);
    mg::manual_seed(0);
    Projections m;
    const mg::Tensor x = mg::randn({4, 3});
    const mg::Tensor wq0 = m.W_q->weight.detach().clone();
    auto opt = maker.make(m.parameters());
    testing::internal::CaptureStderr();
    for (int i = 0; i < 2; ++i) {
      opt->zero_grad();
      m.loss(x).backward();
      try {
        opt->step();
        ADD_FAILURE() << "step " << i << ": strict mode did not throw";
      } catch (const mg::Error& e) {
        EXPECT_EQ(std::string(e.what()), wk_message(maker.name)) << "step " << i;
      }
    }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "strict mode throws, it does not warn";
    EXPECT_TRUE(mg::equal(m.W_q->weight, wq0)) << "a throwing step() must not update anything";
    EXPECT_TRUE(opt->state(m.W_q->weight).empty());
  }
}

TEST(OptimNoGradient, FrozenParametersAreNeverReported) {
  for (bool strict : {false, true}) {
    GradientChecks checks(strict);
    for (const NamedMaker& maker : every_optimizer()) {
      SCOPED_TRACE(std::string(maker.name) + (strict ? ", strict" : ", warning"));
      mg::manual_seed(0);
      Projections m;
      m.W_k->weight.requires_grad_(false);  // frozen on purpose: it gets no gradient, rightly
      const mg::Tensor x = mg::randn({4, 3});
      const mg::Tensor wq0 = m.W_q->weight.detach().clone();
      auto opt = maker.make(m.parameters());
      EXPECT_EQ(train_capturing_stderr(*opt, m, x, /*steps=*/3), "");
      EXPECT_FALSE(mg::equal(m.W_q->weight, wq0));
      // A group that is frozen as a whole: nothing is meant to train, nothing is reported.
      auto frozen = maker.make({m.W_k->weight});
      testing::internal::CaptureStderr();
      EXPECT_NO_THROW(frozen->step());
      EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    }
  }
}

TEST(OptimNoGradient, StepBeforeBackwardIsReportedOnce) {
  const std::string none =
      "[Adam.step] none of the 3 trainable parameters has a gradient, so step() changes nothing: "
      "call loss.backward() between zero_grad() and step(); if backward() did run, the loss does "
      "not depend on any of these parameters (was the optimizer given another model's "
      "parameters()?)";
  {
    GradientChecks checks(/*strict=*/false);
    mg::manual_seed(0);
    Projections m;
    m.detach_k = false;
    const mg::Tensor x = mg::randn({4, 3});
    optim::Adam opt(m.parameters(), optim::AdamOptions(0.1));
    testing::internal::CaptureStderr();
    for (int i = 0; i < 3; ++i) {
      opt.zero_grad();
      opt.step();  // the bug: backward() is missing
    }
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "minigrad warning: " + none + "\n");
    // Fixed: every parameter gets its gradient, and nothing more is reported.
    EXPECT_EQ(train_capturing_stderr(opt, m, x, /*steps=*/2), "");
  }
  {
    GradientChecks checks(/*strict=*/false);
    mg::Tensor w = mg::ones({2}).requires_grad_();
    optim::SGD opt({w}, optim::SGDOptions(0.1));
    testing::internal::CaptureStderr();
    opt.step();
    opt.step();
    EXPECT_EQ(testing::internal::GetCapturedStderr(),
              "minigrad warning: [SGD.step] the optimizer's one trainable parameter has no "
              "gradient, so step() changes nothing: call loss.backward() between zero_grad() and "
              "step(); if backward() did run, the loss does not depend on this parameter (was the "
              "optimizer given another model's parameters()?)\n");
  }
  {
    GradientChecks checks(/*strict=*/true);
    Projections m;
    optim::Adam opt(m.parameters(), optim::AdamOptions(0.1));
    for (int i = 0; i < 2; ++i) {
      try {
        opt.step();
        ADD_FAILURE() << "strict mode did not throw";
      } catch (const mg::Error& e) {
        EXPECT_EQ(std::string(e.what()), none);
      }
    }
  }
}

TEST(OptimNoGradient, UnnamedParameterIsReportedByItsPositionAndShape) {
  GradientChecks checks(/*strict=*/false);
  mg::Tensor a = mg::ones({3}).requires_grad_();
  mg::Tensor b = mg::ones({2}).requires_grad_();
  mg::Tensor c = mg::ones({2, 4}).requires_grad_();
  // Positions count through the groups, as in state_dict(): c is position 2.
  optim::SGD opt({{{a}, optim::SGDOptions(0.1)}, {{b, c}, optim::SGDOptions(0.01)}}, 1.0);
  testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    opt.zero_grad();
    ((a * 2.0).sum() + (b * 3.0).sum()).backward();
    opt.step();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "minigrad warning: [SGD.step] parameter at position 2 (shape (2, 4)) received no "
            "gradient in backward while 2 of the 3 trainable parameters did, so step() does not "
            "train it: it did not take part in the loss, or the graph was cut on its way there "
            "(detach(), NoGradGuard, item()); use it in the loss, or freeze it with "
            "requires_grad_(false)\n");
  EXPECT_EQ(opt.param_name(c), "");
}

TEST(OptimNoGradient, WarningsCanBeSilenced) {
  GradientChecks checks(/*strict=*/false, /*warn=*/false);
  mg::manual_seed(0);
  Projections m;
  const mg::Tensor x = mg::randn({4, 3});
  const mg::Tensor wq0 = m.W_q->weight.detach().clone();
  optim::AdamW opt(m.parameters(), optim::AdamWOptions(0.1));
  testing::internal::CaptureStderr();
  opt.step();  // before any backward
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(train_capturing_stderr(opt, m, x, /*steps=*/2), "");
  EXPECT_FALSE(mg::equal(m.W_q->weight, wq0));
  EXPECT_FALSE(optim::warn_no_gradient());
  EXPECT_FALSE(optim::strict_gradients());
}

TEST(OptimNoGradient, ParameterThatTrainedBeforeIsNotReported) {
  GradientChecks checks(/*strict=*/true);
  mg::manual_seed(0);
  Projections m;
  m.detach_k = false;
  const mg::Tensor x = mg::randn({4, 3});
  optim::SGD opt(m.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_EQ(train_capturing_stderr(opt, m, x, /*steps=*/1), "");
  // A batch that does not use W_v (a branch not taken): W_v trained before, so it is not a
  // parameter that never trains, even in strict mode.
  m.use_v = false;
  EXPECT_EQ(train_capturing_stderr(opt, m, x, /*steps=*/2), "");
  EXPECT_FALSE(m.W_v->weight.grad().defined());
  // zero_grad(set_to_none = false) keeps zero gradients: they count as gradients.
  m.use_v = true;
  m.detach_k = true;
  optim::SGD zeros(m.parameters(), optim::SGDOptions(0.1));
  opt.zero_grad(/*set_to_none=*/false);
  m.loss(x).backward();
  EXPECT_NO_THROW(zeros.step());
}

TEST(OptimNoGradient, OptimizerKeepsTheNamesItWasGiven) {
  Projections m;
  optim::SGD opt(m.parameters(), optim::SGDOptions(0.1));
  EXPECT_EQ(opt.param_name(m.W_q->weight), "W_q.weight");
  EXPECT_EQ(opt.param_name(m.W_k->weight), "W_k.weight");
  // Listing a submodule's parameters does not rename them to "weight"...
  optim::SGD sub(m.W_k->parameters(), optim::SGDOptions(0.1));
  EXPECT_EQ(sub.param_name(m.W_k->weight), "W_k.weight");
  // ...and a parameter listed only by its own module is named from there.
  mg::nn::Linear alone(2, 2);
  optim::SGD lone(alone->parameters(), optim::SGDOptions(0.1));
  EXPECT_EQ(lone.param_name(alone->weight), "weight");
  EXPECT_EQ(lone.param_name(alone->bias), "bias");
}

// ---------------------------------------------------------------- errors

TEST(OptimErrors, SGDOptions) {
  mg::Tensor w = mg::zeros({2}).requires_grad_();
  expect_error([&] { optim::SGD({w}, optim::SGDOptions(-0.1)); }, "SGD",
               "Invalid learning rate: -0.1 (must be >= 0)");
  expect_error([&] { optim::SGD({w}, optim::SGDOptions(0.1).momentum(-0.5)); }, "SGD",
               "Invalid momentum value: -0.5");
  expect_error([&] { optim::SGD({w}, optim::SGDOptions(0.1).weight_decay(-1)); }, "SGD",
               "Invalid weight_decay value: -1");
  expect_error([&] { optim::SGD({w}, optim::SGDOptions(0.1).nesterov(true)); }, "SGD",
               "Nesterov momentum requires a momentum and zero dampening");
  expect_error(
      [&] { optim::SGD({w}, optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true)); },
      "SGD", "dampening = 0.1");
}

TEST(OptimErrors, AdamOptions) {
  mg::Tensor w = mg::zeros({2}).requires_grad_();
  expect_error([&] { optim::Adam({w}, optim::AdamOptions(-1)); }, "Adam",
               "Invalid learning rate: -1");
  expect_error([&] { optim::Adam({w}, optim::AdamOptions().eps(-1e-8)); }, "Adam",
               "Invalid epsilon value: -1e-08");
  expect_error(
      [&] {
        optim::Adam({w}, optim::AdamOptions().betas({1.5, 0.999}));
      },
      "Adam", "Invalid beta parameter at index 0: 1.5");
  expect_error(
      [&] {
        optim::Adam({w}, optim::AdamOptions().betas({0.9, 1.0}));
      },
      "Adam", "Invalid beta parameter at index 1: 1");
  expect_error([&] { optim::Adam({w}, optim::AdamOptions().weight_decay(-0.1)); }, "Adam",
               "Invalid weight_decay value: -0.1");
  expect_error([&] { optim::AdamW({w}, optim::AdamWOptions(-1)); }, "AdamW",
               "Invalid learning rate: -1");
  expect_error(
      [&] {
        optim::AdamW({w}, optim::AdamWOptions().betas({0.9, -0.1}));
      },
      "AdamW", "Invalid beta parameter at index 1: -0.1");
  expect_error([&] { optim::AdamW({w}, optim::AdamWOptions().weight_decay(-1)); }, "AdamW",
               "Invalid weight_decay value: -1");
}

TEST(OptimErrors, Parameters) {
  mg::Tensor w = mg::zeros({2}).requires_grad_();
  expect_error([&] { optim::SGD(std::vector<mg::Tensor>{}, optim::SGDOptions(0.1)); }, "SGD",
               "empty parameter list");
  expect_error([&] { optim::Adam(std::vector<optim::OptimizerParamGroup>{}); }, "Adam",
               "empty parameter list");
  expect_error([&] { optim::AdamW({w * 2}); }, "AdamW", "can't optimize a non-leaf Tensor");
  expect_error([&] { optim::SGD({w, w}, optim::SGDOptions(0.1)); }, "SGD", "twice in one");
  expect_error([&] { optim::Adam({mg::Tensor()}); }, "Adam", "undefined tensor");
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  expect_error(
      [&] {
        opt.add_param_group({{w}, optim::SGDOptions(0.1)});
      },
      "SGD", "some parameters appear in more than one parameter group");  // libtorch's phrase
  mg::Tensor v = mg::zeros({2}).requires_grad_();
  expect_error(
      [&] {
        opt.add_param_group({{v}, optim::SGDOptions(-2)});
      },
      "SGD", "Invalid learning rate: -2");
  expect_error(
      [&] {
        opt.add_param_group({{v}, optim::AdamOptions(0.1)});
      },
      "SGD", "the parameter group's options are another optimizer's");
  EXPECT_EQ(opt.num_param_groups(), 1u);
  expect_error([&] { opt.set_lr(1, 0.1); }, "SGD", "parameter group 1 is out of range (1 groups)");
}

// ---------------------------------------------------------------- lr schedulers
// opt = SGD([{'params': [p]}, {'params': [q], 'lr': 0.02}], lr=0.1); s = <scheduler>(opt, ...)
// rows = [s.get_last_lr()]; then 7 or 12 times: opt.step(); s.step(); rows.append(s.get_last_lr())
// The comparison is exact: the recursive formulas are evaluated in PyTorch's order (the closed form
// would already differ in the last bits, e.g. 0.1 instead of 0.10000000000000003 at epoch 8).

TEST(LrSchedulerStepLR, HalvesEveryTwoEpochs) {
  mg::Tensor p = mg::zeros({1}).requires_grad_();
  mg::Tensor q = mg::zeros({1}).requires_grad_();
  optim::SGD opt({{{p}, optim::SGDOptions(0.1)}, {{q}, optim::SGDOptions(0.02)}}, 1.0);
  sched::StepLR s(opt, /*step_size=*/2, /*gamma=*/0.5);  // StepLR(opt, step_size=2, gamma=0.5)
  expect_lrs(s, opt,
             {{0.1, 0.02},
              {0.1, 0.02},
              {0.05, 0.01},
              {0.05, 0.01},
              {0.025, 0.005},
              {0.025, 0.005},
              {0.0125, 0.0025},
              {0.0125, 0.0025}});
  EXPECT_EQ(s.last_epoch(), 7);
}

TEST(LrSchedulerCosineAnnealingLR, RecursiveFormPastTMax) {
  mg::Tensor p = mg::zeros({1}).requires_grad_();
  mg::Tensor q = mg::zeros({1}).requires_grad_();
  optim::Adam opt({{{p}, optim::AdamOptions(0.1)}, {{q}, optim::AdamOptions(0.02)}});
  sched::CosineAnnealingLR s(opt, /*T_max=*/4, /*eta_min=*/0.001);  // (opt, T_max=4, eta_min=0.001)
  expect_lrs(s, opt,
             {{0.1, 0.02},
              {0.0855017856687341, 0.0172175144212722},
              {0.0505, 0.010499999999999999},
              {0.0154982143312659, 0.0037824855787277987},
              {0.001, 0.001},
              {0.015498214331265896, 0.003782485578727798},
              {0.05050000000000001, 0.010500000000000002},
              {0.08550178566873413, 0.017217514421272208},
              {0.10000000000000003, 0.020000000000000007},
              {0.08550178566873413, 0.017217514421272208},
              {0.05050000000000003, 0.010500000000000006},
              {0.015498214331265945, 0.0037824855787278074},
              {0.001, 0.001}});
}

TEST(LrSchedulerErrors, BadArguments) {
  mg::Tensor p = mg::zeros({1}).requires_grad_();
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  expect_error([&] { sched::StepLR(opt, 0); }, "StepLR", "step_size must be positive, got 0");
  expect_error([&] { sched::CosineAnnealingLR(opt, -1); }, "CosineAnnealingLR",
               "T_max must be positive, got -1");
  EXPECT_EQ(opt.lr(0), 0.1);
}

}  // namespace
