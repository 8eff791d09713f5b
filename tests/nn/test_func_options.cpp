// The functional losses called with libtorch's *FuncOptions (F::CrossEntropyFuncOptions, ...).
// Expected values are literal numbers from PyTorch 1.13 (/usr/bin/python3), printed by:
//   import torch, torch.nn.functional as F
//   D = torch.float64
//   x = torch.tensor([[1.0, 2.0, 0.5], [-1.0, 0.3, 2.2], [0.7, -0.4, 0.1], [2.5, 1.5, -3.0]],
//                    dtype=D)
//   t = torch.tensor([0, 2, 1, 2]); w = torch.tensor([0.2, 1.0, 3.0], dtype=D)
//   a = torch.tensor([[0.3, -1.2, 2.0], [0.5, 0.05, -0.7]], dtype=D)
//   b = torch.tensor([[0.1, 0.4, -1.0], [2.0, 0.0, -0.65]], dtype=D)
//   pr = torch.tensor([[0.2, 0.9, 0.5], [0.01, 0.7, 0.35]], dtype=D)
//   tg = torch.tensor([[0.0, 1.0, 0.3], [1.0, 0.5, 0.0]], dtype=D)
//   pw = torch.tensor([2.0, 0.5, 1.0], dtype=D)
//   <the call in the test's comment>.tolist()
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/nn/functional.h>
#include <minigrad/nn/loss.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace mg = minigrad;
namespace F = minigrad::nn::functional;

namespace {

void expect_values(const mg::Tensor& t, const std::vector<double>& expected) {
  ASSERT_TRUE(t.defined());
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-12 * std::max(1.0, std::fabs(expected[i]))) << "at " << i;
}

struct Inputs {
  mg::Tensor x = mg::tensor({{1.0, 2.0, 0.5}, {-1.0, 0.3, 2.2}, {0.7, -0.4, 0.1}, {2.5, 1.5, -3.0}},
                            mg::kFloat64);
  mg::Tensor t = mg::tensor({0, 2, 1, 2}, mg::kInt64);
  mg::Tensor w = mg::tensor({0.2, 1.0, 3.0}, mg::kFloat64);
  mg::Tensor a = mg::tensor({{0.3, -1.2, 2.0}, {0.5, 0.05, -0.7}}, mg::kFloat64);
  mg::Tensor b = mg::tensor({{0.1, 0.4, -1.0}, {2.0, 0.0, -0.65}}, mg::kFloat64);
  mg::Tensor pr = mg::tensor({{0.2, 0.9, 0.5}, {0.01, 0.7, 0.35}}, mg::kFloat64);
  mg::Tensor tg = mg::tensor({{0.0, 1.0, 0.3}, {1.0, 0.5, 0.0}}, mg::kFloat64);
  mg::Tensor pw = mg::tensor({2.0, 0.5, 1.0}, mg::kFloat64);
};

}  // namespace

TEST(NnFuncOptions, CrossEntropy) {
  Inputs in;
  // F.cross_entropy(x, t, reduction='sum', label_smoothing=0.1)
  expect_values(
      F::cross_entropy(in.x, in.t,
                       F::CrossEntropyFuncOptions().reduction(mg::kSum).label_smoothing(0.1)),
      {8.953678064805615});
  // F.cross_entropy(x, t, weight=w, ignore_index=2)
  expect_values(
      F::cross_entropy(in.x, in.t, F::CrossEntropyFuncOptions().weight(in.w).ignore_index(2)),
      {1.6875334975433207});
  // F.cross_entropy(x, t, reduction='none', label_smoothing=0.2)
  expect_values(
      F::cross_entropy(in.x, in.t,
                       F::CrossEntropyFuncOptions().reduction(mg::kNone).label_smoothing(0.2)),
      {1.4310354507746117, 0.5142312711777676, 1.625499773563729, 5.149578235956174});
}

TEST(NnFuncOptions, NllLoss) {
  Inputs in;
  // F.nll_loss(x, t, weight=w, reduction='sum')
  expect_values(F::nll_loss(in.x, in.t, F::NLLLossFuncOptions().weight(in.w).reduction(mg::kSum)),
                {2.5999999999999996});
  // F.nll_loss(x, t, ignore_index=0)
  expect_values(F::nll_loss(in.x, in.t, F::NLLLossFuncOptions().ignore_index(0)),
                {0.3999999999999999});
}

TEST(NnFuncOptions, RegressionLosses) {
  Inputs in;
  // F.mse_loss(a, b, reduction='sum')
  expect_values(F::mse_loss(in.a, in.b, F::MSELossFuncOptions(mg::kSum)), {13.855});
  // F.mse_loss(a, b, reduction='none')
  expect_values(F::mse_loss(in.a, in.b, F::MSELossFuncOptions().reduction(mg::kNone)),
                {0.039999999999999994, 2.5600000000000005, 9.0, 2.25, 0.0025000000000000005,
                 0.0024999999999999935});
  // F.l1_loss(a, b, reduction='sum')
  expect_values(F::l1_loss(in.a, in.b, F::L1LossFuncOptions(mg::kSum)), {6.4});
  // F.smooth_l1_loss(a, b, reduction='sum', beta=0.5)
  expect_values(
      F::smooth_l1_loss(in.a, in.b, F::SmoothL1LossFuncOptions().reduction(mg::kSum).beta(0.5)),
      {5.395});
  // F.huber_loss(a, b, reduction='none', delta=0.5)
  expect_values(
      F::huber_loss(in.a, in.b, F::HuberLossFuncOptions().reduction(mg::kNone).delta(0.5)),
      {0.019999999999999997, 0.675, 1.375, 0.625, 0.0012500000000000002, 0.0012499999999999968});
}

TEST(NnFuncOptions, BinaryCrossEntropy) {
  Inputs in;
  // F.binary_cross_entropy(pr, tg, weight=pw, reduction='sum')
  expect_values(
      F::binary_cross_entropy(in.pr, in.tg,
                              F::BinaryCrossEntropyFuncOptions().weight(in.pw).reduction(mg::kSum)),
      {11.223399766152081});
  // F.binary_cross_entropy_with_logits(a, tg, weight=w, pos_weight=pw, reduction='sum')
  expect_values(
      F::binary_cross_entropy_with_logits(
          in.a, in.tg,
          F::BinaryCrossEntropyWithLogitsFuncOptions().weight(in.w).pos_weight(in.pw).reduction(
              mg::kSum)),
      {7.408829992030021});
  // F.binary_cross_entropy_with_logits(a, tg, reduction='none')
  expect_values(F::binary_cross_entropy_with_logits(
                    in.a, in.tg, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(mg::kNone)),
                {0.854355244468527, 1.4632824673380314, 1.5269280110429726, 0.4740769841801067,
                 0.6934596480132863, 0.40318604888545784});
}

TEST(NnFuncOptions, BadOptionsThrowTheLossError) {
  Inputs in;
  // PyTorch: F.smooth_l1_loss(a, b, beta=-1.0) and F.huber_loss(a, b, delta=0.0) raise.
  EXPECT_THROW(F::smooth_l1_loss(in.a, in.b, F::SmoothL1LossFuncOptions().beta(-1.0)), mg::Error);
  EXPECT_THROW(F::huber_loss(in.a, in.b, F::HuberLossFuncOptions().delta(0.0)), mg::Error);
  EXPECT_THROW(F::cross_entropy(in.x, in.t, F::CrossEntropyFuncOptions().label_smoothing(1.5)),
               mg::Error);
}
