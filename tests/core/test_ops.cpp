// Forward tests the op table cannot express: dtype promotion, comparisons, integer reductions,
// indices, numerically extreme inputs, allclose/equal and creation values; and the gradients at
// ties and kinks, which the table avoids. Every expected value
// is PyTorch 1.13's (the comment above it is the Python expression that produced it, run with
// /usr/bin/python3 after `import torch`).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <tuple>
#include <vector>

#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Checks dtype, shape and values; floating values within 1e-6 relative (float32 rounding),
/// NaN matching NaN, integers and bools exactly.
void expect_tensor(const mg::Tensor& t, mg::Dtype dtype, const mg::Shape& shape,
                   const std::vector<double>& expected) {
  ASSERT_EQ(t.dtype(), dtype) << "got " << mg::dtype_name(t.dtype()) << ", expected "
                              << mg::dtype_name(dtype);
  ASSERT_EQ(t.shape(), shape);
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
    } else if (std::isinf(expected[i]) || !mg::is_floating_point(dtype)) {
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], expected[i], 1e-6 * std::max(1.0, std::fabs(expected[i])))
          << "element " << i;
    }
  }
}

mg::Tensor x23() {
  // torch.tensor([[1., 5., 3.], [7., 2., 7.]])
  return mg::tensor({{1.0, 5.0, 3.0}, {7.0, 2.0, 7.0}});
}

// ---------------------------------------------------------------- dtype promotion

TEST(Promotion, Int64PlusFloatScalarIsFloat32) {
  // torch.tensor([1, 2, 3]) + 0.5  -> float32 [1.5, 2.5, 3.5]
  expect_tensor(mg::tensor({1, 2, 3}, mg::kInt64) + 0.5, mg::kFloat32, {3}, {1.5, 2.5, 3.5});
  // torch.tensor([1, 2, 3]) * 2.5  -> float32 [2.5, 5.0, 7.5]
  expect_tensor(mg::tensor({1, 2, 3}, mg::kInt64) * 2.5, mg::kFloat32, {3}, {2.5, 5.0, 7.5});
}

TEST(Promotion, Int64PlusIntScalarStaysInt64) {
  // torch.tensor([1, 2, 3]) + 2  -> int64 [3, 4, 5]
  expect_tensor(mg::tensor({1, 2, 3}, mg::kInt64) + 2, mg::kInt64, {3}, {3, 4, 5});
  // torch.tensor([True, False]) + 1  -> int64 [2, 1]
  expect_tensor(mg::tensor({1, 0}, mg::kBool) + 1, mg::kInt64, {2}, {2, 1});
}

TEST(Promotion, Float32TensorPlusFloat64ZeroDimIsFloat32) {
  // torch.tensor([1., 2.]) + torch.tensor(0.1, dtype=torch.float64)
  //   -> float32 [1.100000023841858, 2.0999999046325684]
  expect_tensor(mg::tensor({1.0, 2.0}) + mg::scalar_tensor(0.1, mg::kFloat64), mg::kFloat32, {2},
                {1.100000023841858, 2.0999999046325684});
  // torch.tensor([1., 2.]) + torch.tensor([0.1], dtype=torch.float64)  -> float64 [1.1, 2.1]
  mg::Tensor r = mg::tensor({1.0, 2.0}) + mg::tensor({0.1}, mg::kFloat64);
  ASSERT_EQ(r.dtype(), mg::kFloat64);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{1.1, 2.1}));
  // torch.tensor(1.5) + torch.tensor([1, 2])  -> float32 [2.5, 3.5] (category beats dimension)
  expect_tensor(mg::scalar_tensor(1.5) + mg::tensor({1, 2}, mg::kInt64), mg::kFloat32, {2},
                {2.5, 3.5});
}

TEST(Promotion, TrueDivisionOfIntegersIsFloat32) {
  // torch.tensor([1, 2, 3]) / torch.tensor([2])  -> float32 [0.5, 1.0, 1.5]
  expect_tensor(mg::tensor({1, 2, 3}, mg::kInt64) / mg::tensor({2}, mg::kInt64), mg::kFloat32, {3},
                {0.5, 1.0, 1.5});
  // torch.tensor([1., -1., 0.]) / 0  -> float32 [inf, -inf, nan]
  expect_tensor(mg::tensor({1.0, -1.0, 0.0}) / 0, mg::kFloat32, {3}, {kInf, -kInf, kNaN});
}

TEST(Promotion, IntegerOpsStayInteger) {
  // torch.tensor([2, 3]) ** 2  -> int64 [4, 9]
  expect_tensor(mg::pow(mg::tensor({2, 3}, mg::kInt64), 2), mg::kInt64, {2}, {4, 9});
  // torch.clamp(torch.tensor([1, 5, 9]), 2, 6)  -> int64 [2, 5, 6]
  expect_tensor(mg::clamp(mg::tensor({1, 5, 9}, mg::kInt64), 2.0, 6.0), mg::kInt64, {3}, {2, 5, 6});
  // torch.tensor([[1, 2], [3, 4]]) @ torch.tensor([[5], [6]])  -> int64 [[17], [39]]
  expect_tensor(
      mg::matmul(mg::tensor({{1, 2}, {3, 4}}, mg::kInt64), mg::tensor({5, 6}, {2, 1}, mg::kInt64)),
      mg::kInt64, {2, 1}, {17, 39});
  // torch.tensor([1.7, -1.7]).to(torch.int64)  -> [1, -1]
  expect_tensor(mg::tensor({1.7, -1.7}).to(mg::kInt64), mg::kInt64, {2}, {1, -1});
}

TEST(Promotion, WhereWithFloatScalarPromotes) {
  // torch.where(torch.tensor([True, False]), torch.tensor([1, 2]), 2.5)  -> float32 [1.0, 2.5]
  expect_tensor(mg::where(mg::tensor({1, 0}, mg::kBool), mg::tensor({1, 2}, mg::kInt64), 2.5),
                mg::kFloat32, {2}, {1.0, 2.5});
}

TEST(Promotion, ClampWithMinAboveMaxGivesMax) {
  // torch.clamp(torch.tensor([1., 2., 3.]), min=2.5, max=1.5)  -> [1.5, 1.5, 1.5]
  expect_tensor(mg::clamp(mg::tensor({1.0, 2.0, 3.0}), 2.5, 1.5), mg::kFloat32, {3},
                {1.5, 1.5, 1.5});
}

// ---------------------------------------------------------------- gradients at ties and kinks
// The op table avoids these points (finite differences are meaningless there); PyTorch's choices:

/// The gradient of sum(f(x)) (or f(x) when it is a scalar) for x = values, as float64.
std::vector<double> grad_of(const std::function<mg::Tensor(const mg::Tensor&)>& f,
                            const std::vector<double>& values) {
  mg::Tensor x =
      mg::tensor(values, {static_cast<std::int64_t>(values.size())}, mg::kFloat64).requires_grad_();
  mg::sum(f(x)).backward();
  return x.grad().to_vector<double>();
}

TEST(TieGradient, MatchesPyTorch) {
  using Vd = std::vector<double>;
  // x = torch.tensor(values, requires_grad=True); f(x).backward(); x.grad.tolist()
  // torch.amax(x), x = [1., 3., 3.]  -> [0.0, 0.5, 0.5]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return mg::amax(x); }, {1, 3, 3}), (Vd{0, 0.5, 0.5}));
  // torch.max(x), x = [1., 3., 3.]  -> [0.0, 0.5, 0.5]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return mg::max(x); }, {1, 3, 3}), (Vd{0, 0.5, 0.5}));
  // torch.max(x, 0).values, x = [1., 3., 3.]  -> [0.0, 1.0, 0.0]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return std::get<0>(mg::max(x, 0)); }, {1, 3, 3}),
            (Vd{0, 1, 0}));
  // torch.maximum(x, torch.tensor([3., 3., 0.])).sum(), x = [1., 3., 3.]  -> [0.0, 0.5, 1.0]
  EXPECT_EQ(grad_of(
                [](const mg::Tensor& x) {
                  return mg::maximum(x, mg::tensor({3.0, 3.0, 0.0}, mg::kFloat64));
                },
                {1, 3, 3}),
            (Vd{0, 0.5, 1}));
  // torch.norm(x, float('inf')), x = [1., -3., 3.]  -> [0.0, -0.5, 0.5]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return mg::norm(x, INFINITY); }, {1, -3, 3}),
            (Vd{0, -0.5, 0.5}));
  // torch.relu(x).sum(), x = [-1., 0., 2.]  -> [0.0, 0.0, 1.0]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return mg::relu(x); }, {-1, 0, 2}), (Vd{0, 0, 1}));
  // torch.abs(x).sum(), x = [-1., 0., 2.]  -> [-1.0, 0.0, 1.0]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return mg::abs(x); }, {-1, 0, 2}), (Vd{-1, 0, 1}));
  // torch.clamp(x, 0., 1.).sum(), x = [-1., 0., 1., 2.]  -> [0.0, 1.0, 1.0, 0.0]
  EXPECT_EQ(grad_of([](const mg::Tensor& x) { return mg::clamp(x, 0.0, 1.0); }, {-1, 0, 1, 2}),
            (Vd{0, 1, 1, 0}));
}

// ---------------------------------------------------------------- comparisons and logic

TEST(Comparison, ReturnsBool) {
  // torch.tensor([1., 2., 3.]) < 2.0  -> [True, False, False]
  expect_tensor(mg::tensor({1.0, 2.0, 3.0}) < 2.0, mg::kBool, {3}, {1, 0, 0});
  // torch.tensor([1, 2, 3]) == torch.tensor([1.0, 2.5, 3.0])  -> [True, False, True]
  expect_tensor(mg::tensor({1, 2, 3}, mg::kInt64) == mg::tensor({1.0, 2.5, 3.0}), mg::kBool, {3},
                {1, 0, 1});
  // torch.tensor([1., 2., 3.]) >= torch.tensor([[2.], [1.]])
  //   -> [[False, True, True], [True, True, True]]
  expect_tensor(mg::tensor({1.0, 2.0, 3.0}) >= mg::tensor({2.0, 1.0}, {2, 1}), mg::kBool, {2, 3},
                {0, 1, 1, 1, 1, 1});
}

TEST(Comparison, LogicalOps) {
  mg::Tensor a = mg::tensor({1, 1, 0}, mg::kBool), b = mg::tensor({1, 0, 0}, mg::kBool);
  // torch.logical_and(torch.tensor([True, True, False]), torch.tensor([True, False, False]))
  expect_tensor(mg::logical_and(a, b), mg::kBool, {3}, {1, 0, 0});
  // torch.logical_or(torch.tensor([True, True, False]), torch.tensor([True, False, False]))
  expect_tensor(a | b, mg::kBool, {3}, {1, 1, 0});
  // torch.logical_not(torch.tensor([0., 2., -1.]))  -> [True, False, False]
  expect_tensor(~mg::tensor({0.0, 2.0, -1.0}), mg::kBool, {3}, {1, 0, 0});
}

// ---------------------------------------------------------------- integer reductions

TEST(Reduction, IntegerSumsAreInt64) {
  // torch.tensor([[1, 2, 3], [4, 5, 6]]).sum(1)  -> int64 [6, 15]
  expect_tensor(mg::tensor({{1, 2, 3}, {4, 5, 6}}, mg::kInt64).sum(1), mg::kInt64, {2}, {6, 15});
  // torch.tensor([True, False, True]).sum()  -> int64 2
  expect_tensor(mg::tensor({1, 0, 1}, mg::kBool).sum(), mg::kInt64, {}, {2});
  // torch.tensor([2**53, 1, 1]).sum()  -> 9007199254740994 (a double accumulator gives ...992)
  mg::Tensor big = mg::tensor({9007199254740992.0, 1.0, 1.0}, mg::kInt64).sum();
  ASSERT_EQ(big.dtype(), mg::kInt64);
  EXPECT_EQ(big.item<std::int64_t>(), INT64_C(9007199254740994));
}

// A contiguous tensor summed over its leading dims takes a row-by-row loop (sum_leading_dims in
// reduce.cpp); it must give exactly what the generic loop gives for the same values in a
// non-contiguous layout (same additions in the same order), and PyTorch's values.
TEST(Reduction, LeadingDimSumsMatchTheGenericLoopBitForBit) {
  mg::manual_seed(0);
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    mg::Tensor x = mg::randn({7, 5, 33}).to(dt) * 1000.0;
    mg::Tensor strided = x.transpose(0, 2).contiguous().transpose(0, 2);  // same values
    ASSERT_FALSE(strided.is_contiguous());
    for (const mg::Shape& dims : {mg::Shape{0}, mg::Shape{0, 1}, mg::Shape{1, 0}}) {
      mg::Tensor fast = x.sum(dims), generic = strided.sum(dims);
      ASSERT_EQ(fast.shape(), generic.shape());
      EXPECT_EQ(fast.to_vector<double>(), generic.to_vector<double>());
    }
  }
  // torch.arange(24.).reshape(2, 3, 4).sum((0, 1)) = [60., 66., 72., 78.]
  mg::Tensor a = mg::arange(24.0).reshape({2, 3, 4});
  EXPECT_EQ(a.sum({0, 1}).to_vector<double>(), (std::vector<double>{60, 66, 72, 78}));
}

TEST(Reduction, ArgmaxArgmin) {
  // torch.tensor([[1., 5., 3.], [7., 2., 7.]]).argmax(1)  -> [1, 0] (the first of tied 7s)
  expect_tensor(x23().argmax(1), mg::kInt64, {2}, {1, 0});
  // torch.tensor([[1., 5., 3.], [7., 2., 7.]]).argmax()  -> 3
  expect_tensor(x23().argmax(), mg::kInt64, {}, {3});
  // torch.tensor([[1., 5., 3.], [7., 2., 7.]]).argmin(0)  -> [0, 1, 0]
  expect_tensor(x23().argmin(0), mg::kInt64, {3}, {0, 1, 0});
  // torch.tensor([[1., 5., 3.], [7., 2., 7.]]).argmax(1, keepdim=True)  -> [[1], [0]]
  expect_tensor(x23().argmax(1, true), mg::kInt64, {2, 1}, {1, 0});
}

TEST(Reduction, MaxMinWithIndices) {
  // torch.max(torch.tensor([[1., 5., 3.], [7., 2., 7.]]), 1)
  //   -> values=tensor([5., 7.]), indices=tensor([1, 0])
  auto [v, i] = mg::max(x23(), 1);
  expect_tensor(v, mg::kFloat32, {2}, {5, 7});
  expect_tensor(i, mg::kInt64, {2}, {1, 0});
  // torch.min(torch.tensor([[1., 5., 3.], [7., 2., 7.]]), 0, keepdim=True)
  //   -> values=tensor([[1., 2., 3.]]), indices=tensor([[0, 1, 0]])
  auto [vm, im] = mg::min(x23(), 0, true);
  expect_tensor(vm, mg::kFloat32, {1, 3}, {1, 2, 3});
  expect_tensor(im, mg::kInt64, {1, 3}, {0, 1, 0});
}

TEST(Reduction, Float32VarAndNorm) {
  // torch.tensor([1., 2., 3., 4.]).var()  -> 1.6666666269302368
  expect_tensor(mg::tensor({1.0, 2.0, 3.0, 4.0}).var(), mg::kFloat32, {}, {1.6666666269302368});
  // torch.tensor([3., 4.]).norm()  -> 5.0
  expect_tensor(mg::tensor({3.0, 4.0}).norm(), mg::kFloat32, {}, {5.0});
}

TEST(Reduction, TwoNormOfALongTensorSumsItsChunks) {
  // The 2-norm of a whole contiguous tensor runs in chunks of 65536 squares (sum_of_squares in
  // kernels/reduce.cpp). 0, 1, ..., n - 1: the sum of squares is n (n - 1) (2n - 1) / 6, and in
  // float64 every square and partial sum is an exact integer (below 2^53).
  const std::int64_t n = 200003;
  const double exact = std::sqrt(static_cast<double>(n) * (n - 1) * (2 * n - 1) / 6);
  EXPECT_EQ(mg::arange(0, n, 1, mg::kFloat64).norm().item<double>(), exact);
  // float32: each square is rounded to float (relative 6e-8) before it is added in double.
  EXPECT_NEAR(mg::arange(0, n, 1, mg::kFloat32).norm().item<double>(), exact, 1e-7 * exact);
  // A strided view takes the general path and agrees.
  mg::Tensor m = mg::arange(0, n - 3, 1, mg::kFloat64).reshape({2, -1}).t();
  EXPECT_NEAR(m.norm().item<double>(),
              std::sqrt(static_cast<double>(n - 3) * (n - 4) * (2 * n - 7) / 6), 1e-9);
}

// ---------------------------------------------------------------- numerically extreme inputs

// exp of a contiguous float32 tensor runs the kernel table's exp (kernels/unary.cpp), other
// tensors the xtensor / std::exp path: both within 2 ulp of exp in double, with the IEEE special
// values exact. torch.exp(torch.tensor([-inf, -104., 0., 88.72, 89., inf, nan]))
//   -> [0.0, 0.0, 1.0, 3.3931806003874245e+38, inf, inf, nan]
TEST(Stability, ExpOfFloat32OnEveryPath) {
  const std::vector<double> xs = {-INFINITY, -104.0, -87.3, -1.5,  -0.0, 0.0,      1e-3,
                                  0.7,       1.0,    20.0,  88.72, 89.0, INFINITY, NAN};
  const mg::Tensor x = mg::tensor(xs, {static_cast<std::int64_t>(xs.size())}, mg::kFloat32);
  const mg::Tensor strided = mg::stack({x, x}, 1).select(1, 0);  // the same values, stride 2
  ASSERT_FALSE(strided.is_contiguous());
  for (const mg::Tensor& in : {x, strided}) {
    const std::vector<float> got = mg::exp(in).to_vector<float>();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double want = std::exp(static_cast<double>(static_cast<float>(xs[i])));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << xs[i];
      } else if (std::isinf(want) || want == 0 || want > 3.4028234e38) {
        EXPECT_EQ(got[i], static_cast<float>(want)) << xs[i];
      } else if (want < 1.2e-38) {  // below float32's normal range
        EXPECT_NEAR(got[i], want, 1.5e-45) << xs[i];
      } else {
        EXPECT_NEAR(got[i], want, 2.5e-7 * want) << xs[i];  // 2 ulp of float32
      }
    }
  }
}

// tanh and sigmoid of a contiguous float32 tensor run the kernel table's (Note [Vectorised tanh
// and sigmoid]), other tensors the xtensor / scalar path: both within 3 ulp of double precision,
// the special values exact. From torch 1.13, x = [-inf, -100, -20, -1e-30, -0, 0, 0.3, 0.625, 3,
// 20, inf, nan]: torch.tanh(x) -> [-1.0, -1.0, -1.0, -1e-30, -0.0, 0.0, 0.29131263494491577,
// 0.5545997023582458, 0.9950547814369202, 1.0, 1.0, nan]; torch.sigmoid(x) -> [0.0, 0.0,
// 2.06115369216775e-09, 0.5, 0.5, 0.5, 0.5744425058364868, 0.6513549089431763,
// 0.9525741338729858, 1.0, 1.0, nan], except that sigmoid(-100) is 3.7e-44 here (a denormal,
// exp(-100) / (1 + exp(-100))), where PyTorch's exp(100) overflows and gives 0.
TEST(Stability, TanhAndSigmoidOfFloat32OnEveryPath) {
  const std::vector<double> xs = {-INFINITY, -100.0, -20.0, -1e-30, -0.0,     0.0,
                                  0.3,       0.625,  3.0,   20.0,   INFINITY, NAN};
  const std::vector<double> tanh_want = {-1.0,
                                         -1.0,
                                         -1.0,
                                         -1e-30,
                                         -0.0,
                                         0.0,
                                         0.29131263494491577,
                                         0.5545997023582458,
                                         0.9950547814369202,
                                         1.0,
                                         1.0,
                                         NAN};
  const std::vector<double> sigmoid_want = {0.0,
                                            3.7200759760208361e-44,
                                            2.06115369216775e-09,
                                            0.5,
                                            0.5,
                                            0.5,
                                            0.5744425058364868,
                                            0.6513549089431763,
                                            0.9525741338729858,
                                            1.0,
                                            1.0,
                                            NAN};
  const mg::Tensor x = mg::tensor(xs, {static_cast<std::int64_t>(xs.size())}, mg::kFloat32);
  const mg::Tensor strided = mg::stack({x, x}, 1).select(1, 0);  // the same values, stride 2
  ASSERT_FALSE(strided.is_contiguous());
  for (const mg::Tensor& in : {x, strided}) {
    const std::vector<float> t = mg::tanh(in).to_vector<float>();
    const std::vector<float> s = mg::sigmoid(in).to_vector<float>();
    for (std::size_t i = 0; i < xs.size(); ++i) {
      if (std::isnan(xs[i])) {
        EXPECT_TRUE(std::isnan(t[i]) && std::isnan(s[i]));
        continue;
      }
      EXPECT_NEAR(t[i], tanh_want[i], 3.6e-7 * std::fabs(tanh_want[i])) << xs[i];
      EXPECT_EQ(std::signbit(t[i]), std::signbit(tanh_want[i])) << xs[i];
      EXPECT_NEAR(s[i], sigmoid_want[i], 3.6e-7 * sigmoid_want[i] + 1.5e-45) << xs[i];
    }
  }
}

TEST(Stability, SoftmaxOfLargeLogitsHasNoInfOrNaN) {
  // torch.softmax(torch.tensor([1e4, 0., -1e4]), 0)  -> [1.0, 0.0, 0.0]
  expect_tensor(mg::softmax(mg::tensor({1e4, 0.0, -1e4}), 0), mg::kFloat32, {3}, {1, 0, 0});
  // torch.softmax(torch.tensor([1e4, 1e4]), 0)  -> [0.5, 0.5]
  expect_tensor(mg::softmax(mg::tensor({1e4, 1e4}), 0), mg::kFloat32, {2}, {0.5, 0.5});
  // torch.log_softmax(torch.tensor([1e4, 0.]), 0)  -> [0.0, -10000.0]
  expect_tensor(mg::log_softmax(mg::tensor({1e4, 0.0}), 0), mg::kFloat32, {2}, {0.0, -10000.0});
  // torch.logsumexp(torch.tensor([1e4, 1e4]), 0)  -> 10000.693359375
  expect_tensor(mg::logsumexp(mg::tensor({1e4, 1e4}), {0}), mg::kFloat32, {}, {10000.693359375});
  // torch.sigmoid(torch.tensor([-1000., 1000.]))  -> [0.0, 1.0]
  expect_tensor(mg::sigmoid(mg::tensor({-1000.0, 1000.0})), mg::kFloat32, {2}, {0.0, 1.0});
}

TEST(Stability, SoftmaxOfMaskedRows) {
  // torch.softmax(torch.tensor([[float('-inf'), 0., 0.], [1., float('-inf'), 2.]]), 1)
  //   -> [[0.0, 0.5, 0.5], [0.2689414322376251, 0.0, 0.7310585975646973]]
  expect_tensor(mg::softmax(mg::tensor({{-kInf, 0.0, 0.0}, {1.0, -kInf, 2.0}}), 1), mg::kFloat32,
                {2, 3}, {0.0, 0.5, 0.5, 0.2689414322376251, 0.0, 0.7310585975646973});
  // A fully masked row is NaN in PyTorch too:
  // torch.softmax(torch.tensor([float('-inf'), float('-inf')]), 0)  -> [nan, nan]
  expect_tensor(mg::softmax(mg::tensor({-kInf, -kInf}), 0), mg::kFloat32, {2}, {kNaN, kNaN});
  // torch.logsumexp(torch.tensor([float('-inf'), float('-inf')]), 0)  -> -inf
  expect_tensor(mg::logsumexp(mg::tensor({-kInf, -kInf}), {0}), mg::kFloat32, {}, {-kInf});
}

TEST(Stability, SoftmaxOverAnEmptyDimReadsNothing) {
  // Fuzz finding F7: (2, 0, 3) has outer 2 and inner 3 but no rows; the kernel read row[0].
  // torch.softmax / torch.log_softmax of torch.zeros(2, 0, 3) over dim 1 or 2 (and their
  // backward) -> empty tensors of shape (2, 0, 3).
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    for (std::int64_t dim : {1, 2}) {
      for (bool log : {false, true}) {
        mg::Tensor x = mg::zeros({2, 0, 3}, dt).requires_grad_();
        mg::Tensor y = log ? mg::log_softmax(x, dim) : mg::softmax(x, dim);
        EXPECT_EQ(y.shape(), mg::Shape({2, 0, 3}));
        y.sum().backward();
        EXPECT_EQ(x.grad().shape(), mg::Shape({2, 0, 3}));
      }
    }
  }
}

TEST(Stability, Float32Exp) {
  // torch.exp(torch.tensor([1.0]))  -> 2.7182817459106445 (float32)
  mg::Tensor e = mg::exp(mg::tensor({1.0}));
  ASSERT_EQ(e.dtype(), mg::kFloat32);
  EXPECT_EQ(e.item<double>(), 2.7182817459106445);
}

// ---------------------------------------------------------------- allclose, equal

TEST(Compare, AllcloseAndEqual) {
  // torch.allclose(torch.tensor([1., 2.]), torch.tensor([1. + 1e-6, 2.]))  -> True
  EXPECT_TRUE(mg::allclose(mg::tensor({1.0, 2.0}), mg::tensor({1.0 + 1e-6, 2.0})));
  // torch.allclose(torch.tensor([1.]), torch.tensor([1.1]))  -> False
  EXPECT_FALSE(mg::allclose(mg::tensor({1.0}), mg::tensor({1.1})));
  // torch.allclose(torch.tensor([float('nan')]), torch.tensor([float('nan')]))  -> False
  EXPECT_FALSE(mg::allclose(mg::tensor({kNaN}), mg::tensor({kNaN})));
  // torch.equal(torch.tensor([1., 2.]), torch.tensor([1., 2.]))  -> True
  EXPECT_TRUE(mg::equal(mg::tensor({1.0, 2.0}), mg::tensor({1.0, 2.0})));
  // torch.equal(torch.tensor([1., 2.]), torch.tensor([1., 2.5]))  -> False
  EXPECT_FALSE(mg::equal(mg::tensor({1.0, 2.0}), mg::tensor({1.0, 2.5})));
  EXPECT_FALSE(mg::equal(mg::tensor({1.0, 2.0}), mg::tensor({{1.0, 2.0}})));
}

// ---------------------------------------------------------------- creation

TEST(Creation, Arange) {
  // torch.arange(5)  -> int64 [0, 1, 2, 3, 4]
  expect_tensor(mg::arange(5), mg::kInt64, {5}, {0, 1, 2, 3, 4});
  // torch.arange(1, 2.5, 0.5)  -> float32 [1.0, 1.5, 2.0]
  expect_tensor(mg::arange(1, 2.5, 0.5), mg::kFloat32, {3}, {1.0, 1.5, 2.0});
  // torch.arange(0, 1, 0.1)  -> float32, 10 values (0.9 is the last, 1.0 is excluded)
  expect_tensor(
      mg::arange(0, 1, 0.1), mg::kFloat32, {10},
      {0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
       0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421});
  // torch.arange(10, 0, -3)  -> int64 [10, 7, 4, 1]
  expect_tensor(mg::arange(10, 0, -3), mg::kInt64, {4}, {10, 7, 4, 1});
}

TEST(Creation, LinspaceAndEye) {
  // torch.linspace(0, 1, 5)  -> [0.0, 0.25, 0.5, 0.75, 1.0]
  expect_tensor(mg::linspace(0, 1, 5), mg::kFloat32, {5}, {0.0, 0.25, 0.5, 0.75, 1.0});
  // torch.linspace(-1, 1, 4)  -> [-1.0, -0.3333333134651184, 0.3333333134651184, 1.0]
  expect_tensor(mg::linspace(-1, 1, 4), mg::kFloat32, {4},
                {-1.0, -0.3333333134651184, 0.3333333134651184, 1.0});
  // torch.eye(2, 3)  -> [[1., 0., 0.], [0., 1., 0.]]
  expect_tensor(mg::eye(2, 3), mg::kFloat32, {2, 3}, {1, 0, 0, 0, 1, 0});
}

// x = torch.tensor([[1., 0., float('nan')], [float('inf'), -2., 0.]])
mg::Tensor special_values() { return mg::tensor({1.0, 0.0, kNaN, kInf, -2.0, 0.0}, {2, 3}); }

TEST(Logical, AllAny) {
  mg::Tensor x = special_values();
  // x.all().item(), x.any().item()  -> False, True
  expect_tensor(x.all(), mg::kBool, {}, {0});
  expect_tensor(mg::any(x), mg::kBool, {}, {1});
  // x.all(1).tolist()  -> [False, False]
  expect_tensor(x.all(1), mg::kBool, {2}, {0, 0});
  // x.any(0, keepdim=True).tolist()  -> [[True, True, True]]
  expect_tensor(x.any(0, true), mg::kBool, {1, 3}, {1, 1, 1});
  // torch.zeros(0).all().item(), torch.zeros(0).any().item()  -> True, False
  expect_tensor(mg::zeros({0}).all(), mg::kBool, {}, {1});
  expect_tensor(mg::zeros({0}).any(), mg::kBool, {}, {0});
  EXPECT_FALSE(x.requires_grad());
}

TEST(Logical, IsnanIsinfIsfinite) {
  mg::Tensor x = special_values();
  // x.isnan().tolist()  -> [[False, False, True], [False, False, False]]
  expect_tensor(x.isnan(), mg::kBool, {2, 3}, {0, 0, 1, 0, 0, 0});
  // x.isinf().tolist()  -> [[False, False, False], [True, False, False]]
  expect_tensor(mg::isinf(x), mg::kBool, {2, 3}, {0, 0, 0, 1, 0, 0});
  // x.isfinite().tolist()  -> [[True, True, False], [False, True, True]]
  expect_tensor(x.isfinite(), mg::kBool, {2, 3}, {1, 1, 0, 0, 1, 1});
  // torch.tensor([1, 2]).isfinite().tolist()  -> [True, True]
  expect_tensor(mg::tensor({1, 2}).isfinite(), mg::kBool, {2}, {1, 1});
  // an input that requires grad gives a bool result outside the graph
  EXPECT_FALSE(mg::isnan(mg::ones({2}).requires_grad_()).requires_grad());
}

TEST(Sorting, IndicesAndNaN) {
  // y = torch.tensor([[3., 1., 2., float('nan')], [0.5, -1., 4., 2.5]])
  mg::Tensor y = mg::tensor({3.0, 1.0, 2.0, kNaN, 0.5, -1.0, 4.0, 2.5}, {2, 4});
  // torch.argsort(y, 1).tolist()  -> [[1, 2, 0, 3], [1, 0, 3, 2]]
  expect_tensor(mg::argsort(y, 1), mg::kInt64, {2, 4}, {1, 2, 0, 3, 1, 0, 3, 2});
  // torch.argsort(y, 1, descending=True).tolist()  -> [[3, 0, 2, 1], [2, 3, 0, 1]]
  expect_tensor(y.argsort(1, true), mg::kInt64, {2, 4}, {3, 0, 2, 1, 2, 3, 0, 1});
  // torch.sort(y, stable=True, dim=0)[1].tolist()  -> [[1, 1, 0, 1], [0, 0, 1, 0]]
  expect_tensor(std::get<1>(mg::sort(y, 0)), mg::kInt64, {2, 4}, {1, 1, 0, 1, 0, 0, 1, 0});
  // v, i = torch.topk(y, 2, 1)  -> [[nan, 3.0], [4.0, 2.5]], [[3, 0], [2, 3]]
  auto [v, i] = y.topk(2, 1);
  expect_tensor(v, mg::kFloat32, {2, 2}, {kNaN, 3.0, 4.0, 2.5});
  expect_tensor(i, mg::kInt64, {2, 2}, {3, 0, 2, 3});
  // torch.sort(torch.tensor([2, 1, 2, 1, 0]), stable=True)[1].tolist()  -> [4, 1, 3, 0, 2]
  expect_tensor(std::get<1>(mg::tensor({2, 1, 2, 1, 0}).sort()), mg::kInt64, {5}, {4, 1, 3, 0, 2});
}

TEST(Cumsum, IntegerAndBoolGiveInt64) {
  // torch.tensor([[1, 2], [3, 4]]).cumsum(0).tolist()  -> [[1, 2], [4, 6]]
  expect_tensor(mg::tensor({{1, 2}, {3, 4}}).cumsum(0), mg::kInt64, {2, 2}, {1, 2, 4, 6});
  // torch.tensor([True, True, False]).cumsum(0).tolist()  -> [1, 2, 2]
  expect_tensor(mg::cumsum(mg::tensor({true, true, false}), 0), mg::kInt64, {3}, {1, 2, 2});
}

// scatter_reduce's gradients at ties, at zeros (prod) and integer means, which the op table avoids.
TEST(ScatterReduce, TiesShareTheGradient) {
  // x = torch.tensor([[3., 1., 2.]], dtype=torch.float64, requires_grad=True)
  // s = torch.tensor([[3., 3., 5., -1.]], dtype=torch.float64, requires_grad=True)
  // out = torch.scatter_reduce(x, 1, torch.tensor([[0, 0, 1, 2]]), s, "amax", include_self=inc)
  // (out * torch.tensor([[1., 2., 3.]])).sum().backward(); out, x.grad, s.grad
  struct Row {
    bool include_self;
    std::vector<double> out, gx, gs;
  };
  const double third = 1.0 / 3.0;
  for (const Row& r : {Row{true, {3, 5, 2}, {third, 0, 3}, {third, third, 2, 0}},
                       Row{false, {3, 5, -1}, {0, 0, 0}, {third, third, 2, 3}}}) {
    mg::Tensor x = mg::tensor({3.0, 1.0, 2.0}, {1, 3}, mg::kFloat64).requires_grad_();
    mg::Tensor s = mg::tensor({3.0, 3.0, 5.0, -1.0}, {1, 4}, mg::kFloat64).requires_grad_();
    mg::Tensor out = x.scatter_reduce(1, mg::tensor({{0, 0, 1, 2}}), s, "amax", r.include_self);
    (out * mg::tensor({1.0, 2.0, 3.0}, mg::kFloat64)).sum().backward();
    expect_tensor(out, mg::kFloat64, {1, 3}, r.out);
    expect_tensor(x.grad(), mg::kFloat64, {1, 3}, r.gx);
    expect_tensor(s.grad(), mg::kFloat64, {1, 4}, r.gs);
  }
  // The same with "amin" and s = [[3., 3., 5., 2.]]: PyTorch 1.13 counts self's tie at position
  // 0 even without include_self (its grad is then zeroed).
  for (const Row& r : {Row{true, {3, 1, 2}, {third, 2, 1.5}, {third, third, 0, 1.5}},
                       Row{false, {3, 5, 2}, {0, 0, 0}, {third, third, 2, 1.5}}}) {
    mg::Tensor x = mg::tensor({3.0, 1.0, 2.0}, {1, 3}, mg::kFloat64).requires_grad_();
    mg::Tensor s = mg::tensor({3.0, 3.0, 5.0, 2.0}, {1, 4}, mg::kFloat64).requires_grad_();
    mg::Tensor out = x.scatter_reduce(1, mg::tensor({{0, 0, 1, 2}}), s, "amin", r.include_self);
    (out * mg::tensor({1.0, 2.0, 3.0}, mg::kFloat64)).sum().backward();
    expect_tensor(out, mg::kFloat64, {1, 3}, r.out);
    expect_tensor(x.grad(), mg::kFloat64, {1, 3}, r.gx);
    expect_tensor(s.grad(), mg::kFloat64, {1, 4}, r.gs);
  }
}

TEST(ScatterReduce, ProdWithZeros) {
  // x = torch.tensor([2., 0., 3.], dtype=torch.float64, requires_grad=True)
  // s = torch.tensor([0., 4., 5., 0., 0.], dtype=torch.float64, requires_grad=True)
  // out = torch.scatter_reduce(x, 0, torch.tensor([0, 1, 1, 2, 2]), s, "prod", include_self=inc)
  // out.backward(torch.tensor([1., 2., 3.])); out, x.grad, s.grad
  struct Row {
    bool include_self;
    std::vector<double> out, gx, gs;
  };
  for (const Row& r : {Row{true, {0, 0, 0}, {0, 40, 0}, {2, 0, 0, 0, 0}},
                       Row{false, {0, 20, 0}, {0, 0, 0}, {1, 10, 8, 0, 0}}}) {
    mg::Tensor x = mg::tensor({2.0, 0.0, 3.0}, mg::kFloat64).requires_grad_();
    mg::Tensor s = mg::tensor({0.0, 4.0, 5.0, 0.0, 0.0}, mg::kFloat64).requires_grad_();
    mg::Tensor out =
        mg::scatter_reduce(x, 0, mg::tensor({0, 1, 1, 2, 2}), s, "prod", r.include_self);
    out.backward(mg::tensor({1.0, 2.0, 3.0}, mg::kFloat64));
    expect_tensor(out, mg::kFloat64, {3}, r.out);
    expect_tensor(x.grad(), mg::kFloat64, {3}, r.gx);
    expect_tensor(s.grad(), mg::kFloat64, {5}, r.gs);
  }
  // Two zeros of src at position 2: the second derivative is PyTorch's error, raised when it is
  // computed: gx, gs = torch.autograd.grad(out.sum(), (x, s), create_graph=True);
  // torch.autograd.grad(gs.sum(), (x, s)) -> RuntimeError: scatter_reduce(): Double backward is
  // unsupported for src when >1 zeros in src are scattered to the same position in self
  mg::Tensor x = mg::tensor({2.0, 0.0, 3.0}, mg::kFloat64).requires_grad_();
  mg::Tensor s = mg::tensor({0.0, 4.0, 5.0, 0.0, 0.0}, mg::kFloat64).requires_grad_();
  mg::Tensor out = mg::scatter_reduce(x, 0, mg::tensor({0, 1, 1, 2, 2}), s, "prod");
  std::vector<mg::Tensor> g = mg::autograd::grad({out.sum()}, {x, s}, {}, true, true);
  try {
    mg::autograd::grad({g[1].sum()}, {x, s});
    ADD_FAILURE() << "no error";
  } catch (const mg::Error& e) {
    EXPECT_STREQ(e.what(),
                 "[scatter_reduce] double backward is unsupported for src when more than one zero "
                 "in src is scattered to the same position (as PyTorch)");
  }
}

TEST(ScatterReduce, IntegerMeanRoundsDown) {
  // torch.scatter_reduce(torch.tensor([5, -7, 2]), 0, torch.tensor([0, 1, 1]),
  //                      torch.tensor([2, -2, 0]), "mean").tolist()  -> [3, -3, 2]
  expect_tensor(mg::scatter_reduce(mg::tensor({5, -7, 2}), 0, mg::tensor({0, 1, 1}),
                                   mg::tensor({2, -2, 0}), "mean"),
                mg::kInt64, {3}, {3, -3, 2});
  // ... src torch.tensor([2, -2, 1]), include_self=False  -> [2, -1, 2]
  expect_tensor(mg::scatter_reduce(mg::tensor({5, -7, 2}), 0, mg::tensor({0, 1, 1}),
                                   mg::tensor({2, -2, 1}), "mean", false),
                mg::kInt64, {3}, {2, -1, 2});
}

}  // namespace
