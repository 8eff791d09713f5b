// The loss modules, as libtorch's (nn::MSELoss, nn::CrossEntropyLoss, ...): their options, the
// reduction tags mg::kNone / kMean / kSum, buffers, printing, clone, AnyModule and Sequential.
// Expected values are literal numbers from PyTorch 1.13 (/usr/bin/python3); the Python is in the
// comments, with
//   logits = torch.tensor([[-1.5, 0.25, 2.0], [0.5, -0.75, 3.0], [1.0, 0.0, -1.0],
//                          [0.3, 0.2, 0.1]], dtype=torch.float64)
//   target = torch.tensor([2, 0, 1, 0]); w = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
//   a = torch.tensor([[-1.5, 0.25, 2.0], [0.5, -0.75, 3.0]], dtype=torch.float64)
//   b = torch.tensor([[0.5, 0.5, 0.5], [1.0, -1.0, 2.5]], dtype=torch.float64)
//   p = torch.tensor([[0.1, 0.6, 0.9], [0.5, 0.25, 0.8]], dtype=torch.float64)
//   t = torch.tensor([[0., 1., 1.], [1., 0., 0.5]], dtype=torch.float64)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"
#include "module_test_helpers.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
using minigrad::testing::error_of;
using minigrad::testing::expect_near_all;
using minigrad::testing::repr;

namespace {

mg::Tensor logits() {
  return mg::tensor({-1.5, 0.25, 2.0, 0.5, -0.75, 3.0, 1.0, 0.0, -1.0, 0.3, 0.2, 0.1}, mg::kFloat64)
      .reshape({4, 3});
}
mg::Tensor target() { return mg::tensor({2, 0, 1, 0}, mg::kInt64); }
mg::Tensor class_weight() { return mg::tensor({0.5, 1.0, 2.0}, mg::kFloat64); }
mg::Tensor a() {
  return mg::tensor({-1.5, 0.25, 2.0, 0.5, -0.75, 3.0}, mg::kFloat64).reshape({2, 3});
}
mg::Tensor b() { return mg::tensor({0.5, 0.5, 0.5, 1.0, -1.0, 2.5}, mg::kFloat64).reshape({2, 3}); }
mg::Tensor p() { return mg::tensor({0.1, 0.6, 0.9, 0.5, 0.25, 0.8}, mg::kFloat64).reshape({2, 3}); }
mg::Tensor t() { return mg::tensor({0., 1., 1., 1., 0., 0.5}, mg::kFloat64).reshape({2, 3}); }

}  // namespace

TEST(LossModules, CrossEntropyWithEveryOption) {
  // ce = nn.CrossEntropyLoss(weight=w, ignore_index=1, label_smoothing=0.1)
  // l = ce(logits, target); l.backward(); l.item(), logits.grad
  mg::Tensor x = logits().requires_grad_();
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions()
                              .weight(class_weight())
                              .ignore_index(1)
                              .label_smoothing(0.1)
                              .reduction(mg::kMean));
  mg::Tensor l = ce(x, target());
  EXPECT_EQ(l.dim(), 0);
  EXPECT_NEAR(l.item<double>(), 0.8018126405749563, 1e-12);
  l.backward();
  expect_near_all(x.grad(),
                  {0.010468723687164063, 0.08110224910010629, -0.09157097278727032,
                   -0.1415315815179296, -0.0070931752782885105, 0.14862475679621812, 0.0, 0.0, 0.0,
                   -0.08620209090126965, 0.05164249877852113, 0.034559592122748485},
                  1e-12);
  // The weight is the buffer "weight", as PyTorch's: list(ce.named_buffers()) -> ['weight'].
  EXPECT_EQ(ce->named_buffers().keys(), std::vector<std::string>{"weight"});
  EXPECT_TRUE(ce->weight.defined());
  EXPECT_EQ(ce->options.ignore_index(), 1);
  EXPECT_DOUBLE_EQ(ce->options.label_smoothing(), 0.1);
  // nn.CrossEntropyLoss(reduction='sum')(logits, target).item()
  EXPECT_NEAR(
      nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().reduction(mg::kSum))(logits(), target())
          .item<double>(),
      5.195565000759477, 1e-12);
  // nn.CrossEntropyLoss(reduction='none', label_smoothing=0.2)(logits, target)
  mg::Tensor none = nn::CrossEntropyLoss(
      nn::CrossEntropyLossOptions().reduction(mg::kNone).label_smoothing(0.2))(logits(), target());
  EXPECT_EQ(none.shape(), (mg::Shape{4}));
  expect_near_all(none,
                  {0.5356255317133192, 2.5170573230391993, 1.4076059644443804, 1.0219428482292443},
                  1e-12);
  // Without a weight there is no buffer: list(nn.CrossEntropyLoss().named_buffers()) -> [].
  nn::CrossEntropyLoss plain;
  EXPECT_TRUE(plain->named_buffers().empty());
  EXPECT_FALSE(plain->weight.defined());
}

TEST(LossModules, NLLLoss) {
  // lp = torch.log_softmax(logits, 1); nn.NLLLoss(weight=w, ignore_index=0)(lp, target).item(),
  // nn.NLLLoss(reduction='none')(lp, target)
  mg::Tensor lp = mg::log_softmax(logits(), 1);
  nn::NLLLoss nll(nn::NLLLossOptions().weight(class_weight()).ignore_index(0));
  EXPECT_NEAR(nll(lp, target()).item<double>(), 0.5929523426236728, 1e-12);
  expect_near_all(nn::NLLLoss(nn::NLLLossOptions().reduction(mg::kNone))(lp, target()),
                  {0.1856255317133191, 2.6003906563725323, 1.4076059644443804, 1.0019428482292443},
                  1e-12);
}

TEST(LossModules, RegressionLosses) {
  // nn.MSELoss(reduction='sum')(a, b).item(), nn.MSELoss()(a, b).item()
  EXPECT_NEAR(nn::MSELoss(mg::kSum)(a(), b()).item<double>(), 6.875, 1e-12);
  EXPECT_NEAR(nn::MSELoss()(a(), b()).item<double>(), 1.1458333333333333, 1e-12);
  EXPECT_NEAR(nn::MSELoss(nn::MSELossOptions().reduction(mg::kSum))(a(), b()).item<double>(), 6.875,
              1e-12);
  // nn.L1Loss(reduction='none')(a, b), nn.L1Loss()(a, b).item()
  expect_near_all(nn::L1Loss(mg::kNone)(a(), b()), {2.0, 0.25, 1.5, 0.5, 0.25, 0.5}, 1e-12);
  EXPECT_NEAR(nn::L1Loss()(a(), b()).item<double>(), 0.8333333333333334, 1e-12);
  // nn.SmoothL1Loss(reduction='none', beta=0.5)(a, b), nn.SmoothL1Loss(beta=0.5)(a, b).item()
  expect_near_all(
      nn::SmoothL1Loss(nn::SmoothL1LossOptions().reduction(mg::kNone).beta(0.5))(a(), b()),
      {1.75, 0.0625, 1.25, 0.25, 0.0625, 0.25}, 1e-12);
  EXPECT_NEAR(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(a(), b()).item<double>(),
              0.6041666666666666, 1e-12);
  // nn.HuberLoss(reduction='none', delta=0.5)(a, b), nn.HuberLoss(reduction='sum', delta=0.5)
  expect_near_all(nn::HuberLoss(nn::HuberLossOptions(mg::kNone).delta(0.5))(a(), b()),
                  {0.875, 0.03125, 0.625, 0.125, 0.03125, 0.125}, 1e-12);
  EXPECT_NEAR(nn::HuberLoss(nn::HuberLossOptions(mg::kSum).delta(0.5))(a(), b()).item<double>(),
              1.8125, 1e-12);
}

TEST(LossModules, BinaryLosses) {
  // bw = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
  // nn.BCELoss(weight=bw, reduction='sum')(p, t).item(), nn.BCELoss()(p, t).item()
  mg::Tensor bw = mg::tensor({1.0, 2.0, 0.5}, mg::kFloat64);
  nn::BCELoss bce(nn::BCELossOptions().weight(bw).reduction(mg::kSum));
  EXPECT_NEAR(bce(p(), t()).item<double>(), 2.9063487124193057, 1e-12);
  EXPECT_EQ(bce->named_buffers().keys(), std::vector<std::string>{"weight"});
  EXPECT_NEAR(nn::BCELoss()(p(), t()).item<double>(), 0.43644443999458743, 1e-12);
  // pw = torch.tensor([2.0, 0.5, 1.0], dtype=torch.float64)
  // nn.BCEWithLogitsLoss(pos_weight=pw)(a, t).item(),
  // nn.BCEWithLogitsLoss(weight=bw, reduction='none')(a, t)
  nn::BCEWithLogitsLoss bcel(
      nn::BCEWithLogitsLossOptions().pos_weight(mg::tensor({2.0, 0.5, 1.0}, mg::kFloat64)));
  EXPECT_NEAR(bcel(a(), t()).item<double>(), 0.5833205541690004, 1e-12);
  // list(nn.BCEWithLogitsLoss(pos_weight=pw).state_dict()) -> ['pos_weight']
  EXPECT_EQ(bcel->named_buffers().keys(), std::vector<std::string>{"pos_weight"});
  EXPECT_FALSE(bcel->weight.defined());
  expect_near_all(nn::BCEWithLogitsLoss(
                      nn::BCEWithLogitsLossOptions().weight(bw).reduction(mg::kNone))(a(), t()),
                  {0.20141327798275246, 1.1518788397576873, 0.0634640055214863, 0.4740769841801067,
                   0.7737420122298, 0.774293675786871},
                  1e-12);
}

TEST(LossModules, ReductionTags) {
  EXPECT_EQ(nn::reduction_name(mg::kNone), "none");
  EXPECT_EQ(nn::reduction_name(mg::kMean), "mean");
  EXPECT_EQ(nn::reduction_name(mg::kSum), "sum");
  // The default is kMean, as libtorch's.
  EXPECT_TRUE(std::holds_alternative<mg::enumtype::kMean>(nn::MSELossOptions().reduction()));
  EXPECT_TRUE(std::holds_alternative<mg::enumtype::kSum>(nn::L1LossOptions(mg::kSum).reduction()));
  nn::CrossEntropyLossOptions::reduction_t r = mg::kNone;
  EXPECT_TRUE(std::holds_alternative<mg::enumtype::kNone>(r));
}

TEST(LossModules, PrintLikePyTorch) {
  // print(nn.CrossEntropyLoss(weight=torch.ones(3)), nn.MSELoss(reduction='sum'), ...)
  EXPECT_EQ(repr(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().weight(mg::ones({3})))),
            "CrossEntropyLoss()");
  EXPECT_EQ(repr(nn::MSELoss(mg::kSum)), "MSELoss()");
  EXPECT_EQ(repr(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))), "SmoothL1Loss()");
  EXPECT_EQ(repr(nn::HuberLoss()), "HuberLoss()");
  EXPECT_EQ(repr(nn::BCEWithLogitsLoss()), "BCEWithLogitsLoss()");
  EXPECT_EQ(repr(nn::L1Loss()), "L1Loss()");
  EXPECT_EQ(repr(nn::NLLLoss()), "NLLLoss()");
  EXPECT_EQ(repr(nn::BCELoss()), "BCELoss()");
}

TEST(LossModules, CloneCopiesOptionsAndBuffers) {
  nn::CrossEntropyLoss ce(
      nn::CrossEntropyLossOptions().weight(class_weight()).ignore_index(1).label_smoothing(0.1));
  auto copy = std::dynamic_pointer_cast<nn::CrossEntropyLossImpl>(ce->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->options.ignore_index(), 1);
  EXPECT_NEAR(copy->forward(logits(), target()).item<double>(), 0.8018126405749563, 1e-12);
  // The copy's weight is its own: changing the original's leaves it alone.
  ce->weight.fill_(1.0);
  expect_near_all(copy->weight, {0.5, 1.0, 2.0}, 0);
  auto huber = std::dynamic_pointer_cast<nn::HuberLossImpl>(
      nn::HuberLoss(nn::HuberLossOptions(mg::kSum).delta(0.5))->clone());
  ASSERT_NE(huber, nullptr);
  EXPECT_NEAR(huber->forward(a(), b()).item<double>(), 1.8125, 1e-12);
  auto bcel = std::dynamic_pointer_cast<nn::BCEWithLogitsLossImpl>(
      nn::BCEWithLogitsLoss(
          nn::BCEWithLogitsLossOptions().pos_weight(mg::tensor({2.0, 0.5, 1.0}, mg::kFloat64)))
          ->clone());
  ASSERT_NE(bcel, nullptr);
  EXPECT_NEAR(bcel->forward(a(), t()).item<double>(), 0.5833205541690004, 1e-12);
}

TEST(LossModules, InAnyModuleAndSequential) {
  nn::AnyModule any(nn::MSELoss(mg::kSum));
  EXPECT_NEAR(any.forward(a(), b()).item<double>(), 6.875, 1e-12);
  nn::Sequential seq{nn::CrossEntropyLoss()};
  // nn.CrossEntropyLoss(reduction='sum') above is 5.195565000759477 over 4 rows.
  EXPECT_NEAR(seq->forward(logits(), target()).item<double>(), 5.195565000759477 / 4, 1e-12);
  EXPECT_EQ(error_of([&] { any.forward(a()); }).rfind("[AnyModule] MSELoss's forward()", 0), 0u);
}

TEST(LossModules, ErrorsComeFromTheFunctionalForms) {
  // As PyTorch, bad options throw when the loss is computed.
  EXPECT_EQ(error_of([&] { nn::HuberLoss(nn::HuberLossOptions().delta(0))(a(), b()); }),
            "[huber_loss] delta must be positive, got 0");
  EXPECT_EQ(error_of([&] { nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(-1))(a(), b()); }),
            "[smooth_l1_loss] beta must be non-negative, got -1");
  EXPECT_EQ(error_of([&] {
              nn::CrossEntropyLoss()(logits(), mg::tensor({2, 0, 7, 0}, mg::kInt64));
            }),
            "[cross_entropy] target 7 is out of bounds for 3 classes");
  EXPECT_EQ(error_of([&] {
              nn::MSELoss()(a(), mg::ones({3, 2}, mg::kFloat64));
            }).rfind("[mse_loss]", 0),
            0u);
}
