// The math ops of minigrad/ops/math.h beyond the op table's float64 samples: edge values (NaN,
// inf, domain ends, halves), float32 and integer inputs, methods, in-place forms and the error
// messages of docs/errors.md. Every expected value was printed by PyTorch 1.13 (/usr/bin/python3).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

/// t's values against expected: NaN must be NaN, infinities equal, the rest within tol.
void expect_values(const mg::Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
    else if (std::isinf(expected[i]))
      EXPECT_EQ(got[i], expected[i]) << "element " << i;
    else
      EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
  }
}

mg::Tensor f32(const std::vector<double>& v) { return mg::tensor(v, mg::kFloat32); }

TEST(Math, DomainEdgesAsPyTorch) {
  mg::Tensor x = f32({-1, 1, 2, 0.5});
  expect_values(mg::atanh(x), {-kInf, kInf, kNan, 0.5493061542510986});
  expect_values(mg::acosh(x), {kNan, 0.0, 1.316957950592041, kNan});
  expect_values(mg::asin(x), {-1.5707963705062866, 1.5707963705062866, kNan, 0.5235987901687622});
  expect_values(mg::log1p(f32({-1, -2, 1e-10})), {-kInf, kNan, 1.000000013351432e-10}, 1e-16);
  expect_values(mg::log2(f32({0, -1, 8})), {-kInf, kNan, 3.0});
  expect_values(mg::expm1(f32({1e-10})), {1.000000013351432e-10}, 1e-16);
  expect_values(mg::exp2(f32({10, -1})), {1024.0, 0.5});
}

TEST(Math, Float32AndIntegerInputs) {
  mg::Tensor s = mg::sin(f32({1, 2, 3}));
  EXPECT_EQ(s.dtype(), mg::kFloat32);
  expect_values(s, {0.8414709568023682, 0.9092974066734314, 0.14112000167369843});
  // Integers and bools compute in the default dtype, as PyTorch.
  mg::Tensor i = mg::tensor({1.0, -2.0, 3.0}, mg::kInt64);
  EXPECT_EQ(mg::cos(i).dtype(), mg::kFloat32);
  expect_values(mg::cos(i), {0.5403023362159729, -0.416146844625473, -0.9899924993515015});
  expect_values(mg::reciprocal(mg::tensor({1.0, 0.0}, mg::kBool)), {1.0, kInf});
  // Rounding keeps an integer tensor; square keeps its dtype, bool gives int64.
  EXPECT_EQ(mg::floor(i).dtype(), mg::kInt64);
  expect_values(mg::round(i), {1, -2, 3});
  EXPECT_EQ(mg::square(i).dtype(), mg::kInt64);
  expect_values(mg::square(i), {1, 4, 9});
  EXPECT_EQ(mg::square(mg::tensor({1.0, 0.0}, mg::kBool)).dtype(), mg::kInt64);
}

TEST(Math, RoundsHalvesToEven) {
  expect_values(mg::round(f32({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998})),
                {0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0});
  EXPECT_TRUE(std::signbit(mg::round(f32({-0.5})).item<float>()));
  mg::Tensor d = mg::tensor({0.125, 1.25, 15.0, 25.0, 35.0}, mg::kFloat64);
  expect_values(mg::round(d, 1), {0.1, 1.2, 15.0, 25.0, 35.0}, 1e-12);
  expect_values(mg::round(mg::tensor({15.0, 25.0, 35.0}, mg::kFloat64), -1), {20.0, 20.0, 40.0});
  expect_values(mg::floor(f32({-1.5, 1.5})), {-2.0, 1.0});
  expect_values(mg::ceil(f32({-1.5, 1.5})), {-1.0, 2.0});
  expect_values(mg::trunc(f32({-1.5, 1.5})), {-1.0, 1.0});
  expect_values(mg::frac(f32({-1.5, 2.25})), {-0.5, 0.25});
}

TEST(Math, RemainderTakesTheDivisorsSignFmodTheDividends) {
  expect_values(mg::remainder(f32({-3, 3, -3.5}), 2), {1.0, 1.0, 0.5});
  expect_values(mg::fmod(f32({-3, 3, -3.5}), 2), {-1.0, 1.0, -1.5});
  mg::Tensor a = mg::tensor({-7.0, 7.0, -7.0, 7.0}, mg::kInt64);
  mg::Tensor b = mg::tensor({3.0, 3.0, -3.0, -3.0}, mg::kInt64);
  EXPECT_EQ(mg::remainder(a, b).dtype(), mg::kInt64);
  expect_values(mg::remainder(a, b), {2, 1, -1, -2});
  expect_values(mg::fmod(a, b), {-1, 1, -1, 1});
  // An int64 tensor and a float scalar compute in float32.
  mg::Tensor r = mg::remainder(mg::tensor({-7.0, 7.0}, mg::kInt64), 2.5);
  EXPECT_EQ(r.dtype(), mg::kFloat32);
  expect_values(r, {0.5, 2.0});
  // By zero: NaN for floats.
  expect_values(mg::remainder(f32({5, -5, 5}), f32({0, 3, -3})), {kNan, 1, -1});
  expect_values(mg::fmod(f32({5, -5, 5}), f32({0, 3, -3})), {kNan, -2, 2});
  // operator% is remainder, as libtorch's.
  expect_values(f32({5, -5}) % 3, {2, 1});
  expect_values(5 % f32({3, -3}), {2, -1});
  expect_values(mg::tensor({5.0, -5.0}, mg::kInt64) % 3, {2, 1});
}

TEST(Math, BinaryEdgeValues) {
  expect_values(mg::hypot(f32({3, 1e30f}), f32({4, 1e30f})), {5.0, 1.4142135130433894e+30}, 1e24);
  expect_values(mg::logaddexp(f32({kInf, -kInf, 1000, 0}), f32({kInf, -kInf, 1000, 0})),
                {kInf, -kInf, 1000.6931762695312, 0.6931471824645996}, 1e-4);
  expect_values(mg::xlogy(f32({0, 0, 2}), f32({0, kNan, 3})), {0.0, kNan, 2.1972246170043945});
  expect_values(mg::atan2(f32({0, 0, 1, -0.0}), f32({-1, 1, 0, -1})),
                {3.1415927410125732, 0.0, 1.5707963705062866, -3.1415927410125732});
  // xlogy of int64 tensors is float32.
  EXPECT_EQ(mg::xlogy(mg::tensor({1.0}, mg::kInt64), mg::tensor({2.0}, mg::kInt64)).dtype(),
            mg::kFloat32);
}

TEST(Math, MethodsAndInPlaceForms) {
  mg::Tensor x = f32({0.5, -1.5}).requires_grad_();
  mg::Tensor y = x.clone();
  y.sin_();
  EXPECT_EQ(y.grad_fn()->name(), "SinBackward0");
  y.sum().backward();
  expect_values(x.grad(), {0.8775825500488281, 0.07073719799518585});
  expect_values(x.detach().cos(), {0.8775825500488281, 0.0707372});

  // An in-place binary op whose other operand alone requires grad records history.
  mg::Tensor a = f32({2, 3});
  mg::Tensor b = f32({1.5, -1}).requires_grad_();
  mg::Tensor c = a.clone();
  c.atan2_(b);
  expect_values(c, {0.9272952079772949, 1.8925468921661377});
  c.sum().backward();
  expect_values(b.grad(), {-0.3199999928474426, -0.30000001192092896});

  mg::Tensor z = f32({2.5, -0.5});
  z.round_();
  expect_values(z, {2.0, -0.0});
  z = f32({1.25, 0.125});
  z.round_(1);
  expect_values(z, {1.2, 0.1});
  z = f32({-3, 3});
  z.remainder_(2);
  expect_values(z, {1, 1});
  EXPECT_THROW(mg::tensor({1.0, 2.0}, mg::kInt64).sin_(), mg::Error);
}

TEST(Math, ErrorsAreDocumented) {
  using minigrad_test::BadInput;
  minigrad_test::expect_documented_messages({
      {"math", "floor of a bool tensor",
       [] {
         mg::floor(mg::tensor({1.0, 0.0}, mg::kBool));
       },
       "[floor] not implemented for bool tensors"},
      {"math", "frac of an int64 tensor",
       [] {
         mg::frac(mg::tensor({1.0, 2.0}, mg::kInt64));
       },
       "[frac] expected a floating-point tensor but got int64"},
      {"math", "remainder of int64 tensors by zero",
       [] {
         mg::remainder(mg::tensor({1.0, 2.0}, mg::kInt64), 0);
       },
       "[remainder] integer division by zero (ZeroDivisionError)"},
      {"math", "hypot of int64 tensors",
       [] { mg::hypot(mg::tensor({1.0}, mg::kInt64), mg::tensor({2.0}, mg::kInt64)); },
       "[hypot] expected floating-point tensors but got int64 and int64"},
  });
}

}  // namespace
