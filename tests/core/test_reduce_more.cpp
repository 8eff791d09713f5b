// The ops of minigrad/ops/reduce_more.h and minigrad/ops/matrix.h beyond the op table's float64
// samples (integer and float32 inputs, gradients with zeros and ties, the non-differentiable
// count_nonzero, unique and bincount), Tensor::random_ against PyTorch's generator, detach_,
// is_view, output_nr, and the error messages of docs/errors.md. Every expected value was printed
// by PyTorch 1.13 (/usr/bin/python3).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();

/// t's shape and values against expected (NaN must be NaN).
void expect_values(const mg::Tensor& t, const mg::Shape& shape, const std::vector<double>& expected,
                   double tol = 1e-6) {
  EXPECT_EQ(t.shape(), shape);
  std::vector<double> got = t.to(mg::kFloat64).to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i];
    else
      EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
  }
}

mg::Tensor i64(const std::vector<double>& v, const mg::Shape& shape) {
  return mg::tensor(v, shape, mg::kInt64);
}
mg::Tensor f64(const std::vector<double>& v, const mg::Shape& shape) {
  return mg::tensor(v, shape, mg::kFloat64);
}

TEST(ReduceMore, ProdAndCumprodDtypes) {
  mg::Tensor p = mg::prod(mg::tensor({2.0, 3.0, 4.0}, {3}, mg::kInt64));
  EXPECT_EQ(p.dtype(), mg::kInt64);
  expect_values(p, {}, {24});
  expect_values(mg::prod(mg::tensor({1.0, 0.0}, {2}, mg::kBool)), {}, {0});
  mg::Tensor f = mg::tensor({1.5, 2, 3, 4}, {2, 2}, mg::kFloat32).prod(1);
  EXPECT_EQ(f.dtype(), mg::kFloat32);
  expect_values(f, {2}, {3, 12});
  mg::Tensor c = mg::cumprod(i64({1, 2, 3, 4}, {2, 2}), 1);
  EXPECT_EQ(c.dtype(), mg::kInt64);
  expect_values(c, {2, 2}, {1, 2, 3, 12});
  expect_values(mg::tensor({1.0, 1.0, 0.0}, {3}, mg::kBool).cumprod(0), {3}, {1, 1, 0});
}

TEST(ReduceMore, ProdGradientWithZerosAsPyTorch) {
  mg::Tensor a = f64({2, 0, 3, 0, 0, 5, 1, 2, 3}, {3, 3}).requires_grad_();
  mg::prod(a, 1).backward(f64({1, 2, 3}, {3}));
  expect_values(a.grad(), {3, 3}, {0, 6, 0, 0, 0, 0, 18, 9, 6});
  mg::Tensor b = f64({2, 0, 3, 0.5}, {4}).requires_grad_();
  mg::prod(b).backward();
  expect_values(b.grad(), {4}, {0, 3, 0, 0});
}

TEST(ReduceMore, CumprodGradientWithZerosAsPyTorch) {
  mg::Tensor a = f64({2, 0, 3, 0.5}, {4}).requires_grad_();
  mg::cumprod(a, 0).backward(f64({1, 2, 3, 4}, {4}));
  expect_values(a.grad(), {4}, {1, 34, 0, 0});
  mg::Tensor b = f64({0, 0, 3, 0.5}, {4}).requires_grad_();
  mg::cumprod(b, 0).backward(f64({1, 2, 3, 4}, {4}));
  expect_values(b.grad(), {4}, {1, 0, 0, 0});
}

TEST(ReduceMore, Median) {
  mg::Tensor x = i64({3, 1, 2, 4, 5, 6, 8, 7}, {2, 4});
  // The lower of the two middle values.
  expect_values(mg::median(x), {}, {4});
  auto [v, i] = x.median(1);
  expect_values(v, {2}, {2, 6});
  expect_values(i, {2}, {2, 1});
  EXPECT_EQ(i.dtype(), mg::kInt64);
  auto [vk, ik] = mg::median(f64({3, 1, 2, 5, 6, 4}, {2, 3}), 0, true);
  expect_values(vk, {1, 3}, {3, 1, 2});
  expect_values(ik, {1, 3}, {0, 0, 0});
  // NaN: the median is NaN, and along a dim the index is the first NaN's.
  expect_values(mg::median(f64({1, kNan, 2}, {3})), {}, {kNan});
  auto [vn, in] = mg::median(f64({1, kNan, 2, kNan}, {1, 4}), 1);
  expect_values(vn, {1}, {kNan});
  expect_values(in, {1}, {1});
  expect_values(mg::median(mg::zeros({0})), {}, {kNan});
}

TEST(ReduceMore, MedianGradientSharedAmongTies) {
  mg::Tensor a = f64({1, 2, 2, 3}, {4}).requires_grad_();
  mg::median(a).backward();
  expect_values(a.grad(), {4}, {0, 0.5, 0.5, 0});
  mg::Tensor b = f64({1, kNan, 2}, {3}).requires_grad_();
  mg::median(b).backward();
  expect_values(b.grad(), {3}, {0, 1, 0});
}

TEST(ReduceMore, NansumAndCountNonzero) {
  expect_values(mg::nansum(f64({1, kNan, kNan, kNan}, {2, 2})), {}, {1});
  expect_values(mg::nansum(f64({1, kNan, 2, kNan}, {2, 2}), {0}), {2}, {3, 0});
  mg::Tensor n = mg::nansum(mg::tensor({1.0, 2.0, 3.0}, {3}, mg::kInt64));
  EXPECT_EQ(n.dtype(), mg::kInt64);
  expect_values(n, {}, {6});
  mg::Tensor f = mg::tensor({1.0, kNan, 2.0, kNan}, {2, 2}, mg::kFloat32).nansum(1, true);
  EXPECT_EQ(f.dtype(), mg::kFloat32);
  expect_values(f, {2, 1}, {1, 2});

  mg::Tensor x = f64({0, 1, 2, 0, 0, 3}, {2, 3});
  mg::Tensor c = mg::count_nonzero(x);
  EXPECT_EQ(c.dtype(), mg::kInt64);
  EXPECT_FALSE(c.requires_grad());
  expect_values(c, {}, {3});
  expect_values(mg::count_nonzero(x, 0), {3}, {0, 1, 2});
  expect_values(x.count_nonzero(mg::Shape{0, 1}), {}, {3});
  expect_values(x.count_nonzero(-1), {2}, {2, 1});
  expect_values(mg::count_nonzero(mg::tensor({1.0, 0.0, 1.0}, {3}, mg::kBool)), {}, {2});
  EXPECT_FALSE(mg::count_nonzero(x.requires_grad_()).requires_grad());
}

TEST(Counting, UniqueAsAtUnique2) {
  auto [u, inv, cnt] = mg::_unique2(f64({2, 1, 2, 3, 1}, {5}), true, true, true);
  expect_values(u, {3}, {1, 2, 3});
  expect_values(inv, {5}, {1, 0, 1, 2, 0});
  expect_values(cnt, {3}, {2, 2, 1});
  auto [u2, inv2, cnt2] = mg::_unique2(i64({4, 1, 4, 0}, {2, 2}), true, true, true);
  EXPECT_EQ(u2.dtype(), mg::kInt64);
  expect_values(u2, {3}, {0, 1, 4});
  expect_values(inv2, {2, 2}, {2, 1, 2, 0});
  expect_values(cnt2, {3}, {1, 1, 2});
  // What is not asked comes back empty, as at::_unique2.
  auto [u3, inv3, cnt3] = mg::_unique2(i64({3, 1, 2, 1, 3}, {5}));
  expect_values(u3, {3}, {1, 2, 3});
  expect_values(inv3, {0}, {});
  expect_values(cnt3, {0}, {});
  auto [u4, inv4] = mg::_unique(i64({3, 1, 2, 1, 3}, {5}), true, true);
  expect_values(u4, {3}, {1, 2, 3});
  expect_values(inv4, {5}, {2, 0, 1, 0, 2});
}

TEST(Counting, UniqueDim) {
  auto [u, inv, cnt] = mg::unique_dim(i64({1, 2, 0, 5, 1, 2, 0, 4}, {4, 2}), 0, true, true, true);
  expect_values(u, {3, 2}, {0, 4, 0, 5, 1, 2});
  expect_values(inv, {4}, {2, 1, 2, 0});
  expect_values(cnt, {3}, {1, 1, 2});
  auto [u1, inv1, cnt1] = mg::unique_dim(i64({1, 2, 1, 0, 5, 0, 1, 2, 1}, {3, 3}), 1);
  expect_values(u1, {3, 2}, {1, 2, 0, 5, 1, 2});
  expect_values(inv1, {3}, {0, 1, 0});
  expect_values(cnt1, {2}, {2, 1});
}

TEST(Counting, Bincount) {
  mg::Tensor b = mg::bincount(i64({1, 1, 3}, {3}));
  EXPECT_EQ(b.dtype(), mg::kInt64);
  expect_values(b, {4}, {0, 2, 0, 1});
  expect_values(i64({1, 1, 3}, {3}).bincount(std::nullopt, 6), {6}, {0, 2, 0, 1, 0, 0});
  mg::Tensor w = mg::bincount(i64({1, 1, 3}, {3}), mg::tensor({0.5, 1.0, 2.0}, {3}, mg::kFloat32));
  EXPECT_EQ(w.dtype(), mg::kFloat32);
  expect_values(w, {4}, {0, 1.5, 0, 2});
  mg::Tensor wi = mg::bincount(mg::tensor({0.0, 2.0}, {2}, mg::kInt64), i64({1, 2}, {2}));
  EXPECT_EQ(wi.dtype(), mg::kFloat64);
  expect_values(wi, {3}, {1, 0, 2});
  expect_values(mg::bincount(i64({}, {0}), std::nullopt, 3), {3}, {0, 0, 0});
}

TEST(Matrix, IntegerInputs) {
  expect_values(mg::outer(i64({1, 2}, {2}), i64({3, 4, 5}, {3})), {2, 3}, {3, 4, 5, 6, 8, 10});
  expect_values(mg::cross(i64({1, 0, 0}, {1, 3}), i64({0, 1, 0}, {1, 3}), 1), {1, 3}, {0, 0, 1});
  expect_values(mg::diag(i64({1, 2}, {2}), -1), {3, 3}, {0, 0, 0, 1, 0, 0, 0, 2, 0});
  mg::Tensor tr = mg::trace(i64({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(tr.dtype(), mg::kInt64);
  expect_values(tr, {}, {5});
  EXPECT_EQ(mg::ones({2, 2}).trace().dtype(), mg::kFloat32);
}

TEST(TensorApi, RandomMatchesPyTorch) {
  // torch.manual_seed(s); torch.empty(n, dtype=...).random_(...)
  mg::manual_seed(0);
  expect_values(mg::empty({5}, mg::kInt64).random_(10), {5}, {4, 9, 3, 0, 3});
  mg::manual_seed(0);
  expect_values(mg::empty({4}).random_(-5, 7), {4}, {3, -2, 0, -5});
  mg::manual_seed(0);
  expect_values(mg::empty({3}, mg::kFloat64).random_(), {3},
                {8737460674930124.0, 6375474555111176.0, 4137753702977065.0}, 0);
  mg::manual_seed(0);
  mg::Tensor r = mg::empty({3}, mg::kInt64).random_();
  EXPECT_EQ(
      r.to_vector<std::int64_t>(),
      (std::vector<std::int64_t>{900450186894289455, 3969543146641149120, 1895649597198586619}));
  mg::manual_seed(0);
  expect_values(mg::empty({4}).random_(), {4}, {8325664.0, 12888472.0, 1484222.0, 2214888.0}, 0);
  mg::manual_seed(3);
  expect_values(mg::empty({2, 3}, mg::kInt64).random_(100), {2, 3}, {86, 48, 37, 67, 60, 80});
}

TEST(TensorApi, DetachInPlaceIsViewOutputNr) {
  mg::Tensor x = mg::ones({3}).requires_grad_();
  mg::Tensor y = x.narrow(0, 1, 2);
  EXPECT_TRUE(y.is_view());
  EXPECT_FALSE(x.is_view());
  EXPECT_FALSE(x.detach().is_view());
  EXPECT_TRUE(mg::ones({3}).narrow(0, 1, 2).is_view());
  EXPECT_TRUE(mg::ones({2, 3}).t().is_view());
  mg::Tensor z = x * 2;
  EXPECT_EQ(z.output_nr(), 0);
  EXPECT_EQ(x.output_nr(), 0);
  EXPECT_EQ(mg::ones({4}).requires_grad_().split(2)[1].output_nr(), 1);
  z.detach_();
  EXPECT_FALSE(z.requires_grad());
  EXPECT_TRUE(z.is_leaf());
  EXPECT_EQ(z.grad_fn(), nullptr);
}

TEST(ReduceMore, ErrorsAreDocumented) {
  minigrad_test::expect_documented_messages({
      {"reduce_more", "median over a zero-size dim",
       [] {
         mg::median(mg::zeros({0, 3}), 0);
       },
       "[median] expected reduction dim 0 to have non-zero size (input shape (0, 3))"},
      {"reduce_more", "median of an empty int64 tensor",
       [] { mg::median(mg::zeros({0}, mg::kInt64)); },
       "[median] cannot compute the median of an empty int64 tensor"},
      {"reduce_more", "median of a bool tensor", [] { mg::median(mg::zeros({2}, mg::kBool)); },
       "[median] not implemented for bool tensors"},
      {"reduce_more", "nansum with a repeated dim",
       [] {
         mg::nansum(mg::zeros({2, 3}), {0, 0});
       },
       "[nansum] dim 0 appears multiple times in the list of dims (0, 0)"},
  });
}

TEST(Matrix, ErrorsAreDocumented) {
  minigrad_test::expect_documented_messages({
      {"matrix", "outer of a 2-D tensor",
       [] {
         mg::outer(mg::ones({2, 2}), mg::ones({2}));
       },
       "[outer] expected 1-D argument self, but got 2-D"},
      {"matrix", "outer with a 2-D vec2",
       [] {
         mg::outer(mg::ones({2}), mg::ones({2, 2}));
       },
       "[outer] expected 1-D argument vec2, but got 2-D"},
      {"matrix", "cross along a dim of size 2",
       [] {
         mg::cross(mg::ones({2, 3}), mg::ones({2, 3}), 0);
       },
       "[cross] inputs dimension 0 must have length 3. Got 2 and 2"},
      {"matrix", "cross without dim and no dim of size 3",
       [] {
         mg::cross(mg::ones({2, 2}), mg::ones({2, 2}));
       },
       "[cross] no dimension of size 3 in input of shape (2, 2)"},
      {"matrix", "cross of a 2-D and a 1-D tensor",
       [] {
         mg::linalg_cross(mg::ones({2, 3}), mg::ones({3}));
       },
       "[linalg_cross] inputs must have the same number of dimensions, got 2 and 1"},
      {"matrix", "diag of a 3-D tensor",
       [] {
         mg::diag(mg::ones({2, 2, 2}));
       },
       "[diag] expected a matrix or a vector (1 or 2 dims), got a tensor of 3 dims"},
      {"matrix", "trace of a 1-D tensor", [] { mg::trace(mg::ones({3})); },
       "[trace] expected a matrix, but got a tensor with dim 1"},
  });
}

TEST(Counting, ErrorsAreDocumented) {
  minigrad_test::expect_documented_messages({
      {"counting", "unique_dim of a 0-dim tensor", [] { mg::unique_dim(mg::zeros({}), 0); },
       "[unique_dim] expected a tensor of at least 1 dim, got a 0-dim tensor"},
      {"counting", "bincount of a float tensor", [] { mg::bincount(mg::zeros({2})); },
       "[bincount] only supports 1-d non-negative integral inputs: got a float32 tensor of shape "
       "(2,)"},
      {"counting", "bincount of a negative value",
       [] {
         mg::bincount(i64({1, -1}, {2}));
       },
       "[bincount] only supports 1-d non-negative integral inputs: got the value -1"},
      {"counting", "bincount with weights of another length",
       [] {
         mg::bincount(i64({1, 2}, {2}), mg::ones({3}));
       },
       "[bincount] weights should be 1-d and have the same length as input: got weights of shape "
       "(3,) for an input of shape (2,)"},
      {"counting", "bincount with a negative minlength",
       [] { mg::bincount(i64({1}, {1}), std::nullopt, -1); },
       "[bincount] minlength should be >= 0, got -1"},
  });
}

TEST(TensorApi, ErrorsAreDocumented) {
  minigrad_test::expect_documented_messages({
      {"tensor", "detach_ of a view", [] { mg::ones({3}).narrow(0, 1, 2).detach_(); },
       "[detach_] can't detach views in-place: use detach() instead (this tensor is a view of "
       "another)"},
  });
}

}  // namespace
