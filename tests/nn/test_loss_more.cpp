// The modules of nn/loss_more.h as libtorch's, and the edges of ctc_loss. The functional forms'
// values, gradients, second derivatives and errors are in the op table
// (tests/core/op_table_loss_more.cpp); values here were printed by PyTorch 1.13 (the Python is
// next to each; make as in tests/parity/compare.py).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "minigrad/minigrad.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;

namespace {

/// op_table.h's make(): deterministic values in (-2, 2), float64.
mg::Tensor make(const mg::Shape& shape, std::int64_t seed) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    double t = static_cast<double>(i + 1) * 0.6180339887498949 +
               static_cast<double>(seed) * 0.4142135623730951;
    t -= std::floor(t);
    v[static_cast<std::size_t>(i)] = t < 0.5 ? 3.6 * t - 2.0 : 3.6 * t - 1.6;
  }
  return mg::tensor(v, shape, mg::kFloat64);
}

mg::Tensor longs(std::vector<std::int64_t> v, const mg::Shape& shape) {
  return mg::tensor(v, mg::TensorOptions().dtype(mg::kInt64)).reshape(shape);
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
    } else {
      EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
    }
  }
}

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

}  // namespace

TEST(LossMore, ModulesAreLibtorchsAndPrintAsPyTorch) {
  // F.margin_ranking_loss(make((3,), 1), make((3,), 2), make((3,), 3).sign(), margin=0.1,
  //                       reduction='sum') -> 4.200000000000001
  nn::MarginRankingLoss ranking(nn::MarginRankingLossOptions().margin(0.1).reduction(mg::kSum));
  EXPECT_NEAR(ranking(make({3}, 1), make({3}, 2), mg::sign(make({3}, 3))).item<double>(), 4.2,
              1e-12);
  // F.pairwise_distance(make((2, 3), 1), make((2, 3), 2), p=1.5) -> [4.130756313289947, ...]
  nn::PairwiseDistance distance(nn::PairwiseDistanceOptions().p(1.5));
  expect_near(distance(make({2, 3}, 1), make({2, 3}, 2)).to_vector<double>(),
              {4.130756313289947, 4.130756313289945}, 1e-12);
  // A reduction tag makes the options, as libtorch's TORCH_OPTIONS_CTOR_VARIANT_ARG3.
  nn::SoftMarginLoss soft(mg::kSum);
  EXPECT_TRUE(std::holds_alternative<mg::enumtype::kSum>(soft->options.reduction()));
  const mg::Tensor x = make({2, 3}, 1), y = mg::sign(make({2, 3}, 2));
  EXPECT_DOUBLE_EQ(soft(x, y).item<double>(), F::soft_margin_loss(x, y, "sum").item<double>());
  // print(torch.nn.MultiMarginLoss(weight=torch.ones(3)), torch.nn.CTCLoss(),
  //       torch.nn.TripletMarginLoss(), torch.nn.PairwiseDistance())
  nn::MultiMarginLoss multi(nn::MultiMarginLossOptions().weight(mg::ones({3})));
  EXPECT_EQ(printed(*multi), "MultiMarginLoss()");
  EXPECT_EQ(printed(*nn::CTCLoss()), "CTCLoss()");
  EXPECT_EQ(printed(*nn::TripletMarginLoss()), "TripletMarginLoss()");
  EXPECT_EQ(printed(*nn::PairwiseDistance()), "PairwiseDistance()");
}

TEST(LossMore, AWeightIsABufferAndACloneOwnsItsCopy) {
  nn::MultiMarginLoss loss(nn::MultiMarginLossOptions().weight(mg::ones({3})));
  ASSERT_EQ(loss->named_buffers().size(), 1u);
  EXPECT_TRUE(loss->named_buffers().contains("weight"));
  auto copy = std::dynamic_pointer_cast<nn::MultiMarginLossImpl>(loss->clone());
  ASSERT_TRUE(copy);
  copy->options.weight().mul_(2.0);
  EXPECT_DOUBLE_EQ(loss->options.weight().sum().item<double>(), 3.0);
  nn::MultiLabelSoftMarginLoss soft;
  EXPECT_EQ(soft->named_buffers().size(), 0u);
}

TEST(LossMore, CtcLossModuleMatchesPyTorchsValueAndGradient) {
  // x = make((4, 1, 3), 1).requires_grad_()
  // l = F.ctc_loss(x.log_softmax(2), idx([1, 2], (1, 2)), idx([4], (1,)), idx([2], (1,)))
  // l.backward(); l -> 0.19484667848763898, x.grad -> below
  mg::Tensor x = make({4, 1, 3}, 1).requires_grad_();
  nn::CTCLoss ctc;
  mg::Tensor l =
      ctc(mg::log_softmax(x, 2), longs({1, 2}, {1, 2}), longs({4}, {1}), longs({2}, {1}));
  EXPECT_NEAR(l.item<double>(), 0.19484667848763898, 1e-12);
  l.backward();
  expect_near(
      x.grad().to_vector<double>(),
      {0.020897312641086, -0.08912670009067193, 0.06822938744958593, 0.006544456046791435,
       -0.009009160569483046, 0.002464704522691611, 0.0300897662110832, 0.019073584191662732,
       -0.049163350402745935, 0.026354610564616004, 0.024149640808989726, -0.05050425137360573},
      1e-12);
}

TEST(LossMore, CtcImpossibleAlignmentIsInfWithNanGradientOrZeroWithZeroInfinity) {
  // for zi in (False, True):
  //   x = make((2, 2, 3), 2).requires_grad_()
  //   l = F.ctc_loss(x.log_softmax(2), idx([1,1,1,2,0,0], (2, 3)), idx([2, 2], (2,)),
  //                  idx([3, 1], (2,)), reduction='sum', zero_infinity=zi); l.backward()
  // Sample 0 (target 1 1 1 in 2 frames) cannot be aligned.
  const std::vector<double> sample1 = {-0.11251381901940195, 0.7545658700706662,
                                       -0.6420520510512643,  -0.19106763578914399,
                                       0.8052076497207681,   -0.6141400139316241};
  for (bool zero_infinity : {false, true}) {
    mg::Tensor x = make({2, 2, 3}, 2).requires_grad_();
    mg::Tensor l = F::ctc_loss(mg::log_softmax(x, 2), longs({1, 1, 1, 2, 0, 0}, {2, 3}),
                               longs({2, 2}, {2}), longs({3, 1}, {2}), 0, "sum", zero_infinity);
    if (zero_infinity) {
      EXPECT_NEAR(l.item<double>(), 3.1095753970889666, 1e-12);
    } else {
      EXPECT_TRUE(std::isinf(l.item<double>()) && l.item<double>() > 0);
    }
    l.backward();
    const double s0 = zero_infinity ? 0.0 : std::nan("");
    // x.grad is [T=2, N=2, C=3]: sample 0 is x[:, 0], sample 1 is x[:, 1].
    expect_near(x.grad().to_vector<double>(),
                {s0, s0, s0, sample1[0], sample1[1], sample1[2], s0, s0, s0, sample1[3], sample1[4],
                 sample1[5]},
                1e-12);
  }
}

TEST(LossMore, FunctionalOptionsOverloadsAreLibtorchs) {
  const mg::Tensor a = make({3, 4}, 1), p = make({3, 4}, 2), n = make({3, 4}, 3);
  EXPECT_DOUBLE_EQ(
      F::triplet_margin_loss(a, p, n, F::TripletMarginLossFuncOptions().margin(2.0).swap(true))
          .item<double>(),
      F::triplet_margin_loss(a, p, n, 2.0, 2.0, 1e-6, true).item<double>());
  EXPECT_DOUBLE_EQ(
      F::poisson_nll_loss(a, p.abs(), F::PoissonNLLLossFuncOptions().full(true)).item<double>(),
      F::poisson_nll_loss(a, p.abs(), true, true).item<double>());
  EXPECT_DOUBLE_EQ(
      F::multilabel_margin_loss(a, longs({3, 0, -1, 1, 1, -1, 0, 0, 2, -1, 0, 0}, {3, 4}),
                                F::MultilabelMarginLossFuncOptions(mg::kSum))
          .item<double>(),
      F::multilabel_margin_loss(a, longs({3, 0, -1, 1, 1, -1, 0, 0, 2, -1, 0, 0}, {3, 4}), "sum")
          .item<double>());
}
