// out= variants (minigrad/ops/out.h), against PyTorch 1.13's torch.*(..., out=...) (the Python
// that gave each value and message in a comment; a = [1., 2.], b = [3., 4.]).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <string>
#include <vector>

#include "core/test_util.h"
#include "documented_errors.h"

namespace mg = minigrad;
using minigrad::testing::error_of;

namespace {
std::vector<float> values(const mg::Tensor& t) { return t.to_vector<float>(); }

/// Counts warnings while alive.
struct CountWarnings : mg::WarningHandler {
  int count = 0;
  std::string last;
  mg::WarningHandlerGuard guard{this};
  using mg::WarningHandler::process;
  void process(const mg::Warning& w) override {
    ++count;
    last = w.msg();
  }
};
}  // namespace

TEST(OutVariants, WriteIntoOutAndReturnIt) {
  mg::Tensor a = mg::tensor({1.0, 2.0}), b = mg::tensor({3.0, 4.0});
  CountWarnings warnings;
  mg::Tensor out = mg::empty({0});
  // torch.add(a, b, alpha=2, out=torch.empty(0)) -> tensor([ 7., 10.])
  mg::Tensor& r = mg::add_out(out, a, b, 2);
  EXPECT_EQ(&r, &out);
  EXPECT_EQ(values(out), (std::vector<float>{7, 10}));
  // torch.sub(a, b, alpha=2, out=...) -> tensor([-5., -6.]); torch.add(a, 3, alpha=2) -> [7., 8.]
  EXPECT_EQ(values(mg::sub_out(out, a, b, 2)), (std::vector<float>{-5, -6}));
  EXPECT_EQ(values(mg::add_out(out, a, 3, 2)), (std::vector<float>{7, 8}));
  // torch.div(a, b, out=...) -> tensor([0.33333334, 0.50000000])
  EXPECT_EQ(values(mg::div_out(out, a, b)), (std::vector<float>{0.33333334f, 0.5f}));
  // torch.sqrt(torch.tensor([4., 2.]), out=...) -> tensor([2.00000000, 1.41421354])
  EXPECT_EQ(values(mg::sqrt_out(out, mg::tensor({4.0, 2.0}))),
            (std::vector<float>{2.0f, 1.41421354f}));
  // torch.exp(torch.tensor([1, 2]), out=torch.empty(0)) -> tensor([2.71828175, 7.38905621])
  mg::exp_out(out, mg::tensor({1, 2}));
  EXPECT_EQ(out.dtype(), mg::kFloat32);
  EXPECT_TRUE(out.allclose(mg::tensor({2.71828175, 7.38905621}), 1e-6, 0));
  // An empty out is resized without a warning.
  EXPECT_EQ(warnings.count, 0);
}

TEST(OutVariants, MatrixProductsReductionsAndJoins) {
  CountWarnings quiet;  // out is reused with other shapes: ATen's resize warning each time
  mg::Tensor out = mg::empty({0});
  // torch.mm([[1., 2.], [3., 4.]], [[5.], [6.]], out=...) -> tensor([[17.], [39.]])
  mg::mm_out(out, mg::tensor({{1.0, 2.0}, {3.0, 4.0}}), mg::tensor({{5.0}, {6.0}}));
  EXPECT_EQ(out.shape(), (mg::Shape{2, 1}));
  EXPECT_EQ(values(out), (std::vector<float>{17, 39}));
  // torch.matmul([1., 2.], [[1., 2.], [3., 4.]], out=...) -> tensor([ 7., 10.])
  mg::matmul_out(out, mg::tensor({1.0, 2.0}), mg::tensor({{1.0, 2.0}, {3.0, 4.0}}));
  EXPECT_EQ(values(out), (std::vector<float>{7, 10}));
  // torch.bmm(torch.arange(4.).view(1, 2, 2), same, out=...) -> [[[2., 3.], [6., 11.]]]
  mg::Tensor m = mg::arange(4.0).view({1, 2, 2});
  mg::bmm_out(out, m, m);
  EXPECT_EQ(values(out), (std::vector<float>{2, 3, 6, 11}));
  // torch.sum([[1., 2.], [3., 4.]], 1, out=...) -> tensor([3., 7.])
  mg::sum_out(out, mg::tensor({{1.0, 2.0}, {3.0, 4.0}}), 1);
  EXPECT_EQ(values(out), (std::vector<float>{3, 7}));
  // torch.sum(torch.tensor([1.5, 2.5, -1.7]), 0, out=torch.empty((), dtype=torch.int64))
  //   -> tensor(2): the input is converted to out's dtype first
  mg::Tensor long_out = mg::empty({}, mg::kInt64);
  mg::sum_out(long_out, mg::tensor({1.5, 2.5, -1.7}), 0);
  EXPECT_EQ(long_out.item<std::int64_t>(), 2);
  // torch.cat([a, b], out=torch.empty(0, dtype=torch.float64)) -> float64 [1., 2., 3., 4.]
  mg::Tensor a = mg::tensor({1.0, 2.0}), b = mg::tensor({3.0, 4.0});
  mg::Tensor d = mg::empty({0}, mg::kFloat64);
  mg::cat_out(d, {a, b});
  EXPECT_EQ(d.dtype(), mg::kFloat64);
  EXPECT_EQ(values(d), (std::vector<float>{1, 2, 3, 4}));
  // torch.stack([a, b], 1, out=...) -> tensor([[1., 3.], [2., 4.]])
  mg::stack_out(out, {a, b}, 1);
  EXPECT_EQ(values(out), (std::vector<float>{1, 3, 2, 4}));
}

// o = torch.empty(2, 2).t(); torch.mul([[1.], [2.]], [3., 4.], out=o): o keeps its strides
// (1, 2) and holds [[3., 4.], [6., 8.]]; torch.add(x, b, out=x) bumps x._version by 1.
TEST(OutVariants, KeepOutsGeometryAndMayAliasAnInput) {
  mg::Tensor o = mg::empty({2, 2}).t();
  mg::mul_out(o, mg::tensor({{1.0}, {2.0}}), mg::tensor({3.0, 4.0}));
  EXPECT_EQ(o.strides(), (mg::Shape{1, 2}));
  EXPECT_EQ(values(o), (std::vector<float>{3, 4, 6, 8}));
  mg::Tensor x = mg::tensor({1.0, 2.0});
  const std::int64_t v = x._version();
  mg::add_out(x, x, mg::tensor({3.0, 4.0}));
  EXPECT_EQ(values(x), (std::vector<float>{4, 6}));
  EXPECT_EQ(x._version(), v + 1);
}

// torch.mean([[1., 2.], [3., 4.]], [0, 1], out=torch.empty(5)) -> tensor(2.5000), with the
// UserWarning "An output with one or more elements was resized since it had shape [5], ...".
TEST(OutVariants, ANonEmptyOutOfAnotherShapeIsResizedWithATorchWarning) {
  CountWarnings warnings;
  mg::Tensor out = mg::empty({5});
  mg::mean_out(out, mg::tensor({{1.0, 2.0}, {3.0, 4.0}}), mg::Shape{0, 1});
  EXPECT_EQ(out.dim(), 0);
  EXPECT_EQ(out.item<float>(), 2.5f);
  EXPECT_EQ(warnings.count, 1);
  EXPECT_EQ(warnings.last,
            "[mean_out] An output with one or more elements was resized since it had shape [5], "
            "which does not match the required output shape []. This behavior is deprecated, and "
            "in a future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
            "elements with t.resize_(0).");
}

// with torch.no_grad(): torch.add(a.requires_grad_(), b, out=o) runs.
TEST(OutVariants, RunUnderNoGradWithInputsThatRequireGrad) {
  mg::Tensor a = mg::tensor({1.0, 2.0}).requires_grad_();
  mg::Tensor out = mg::empty({2});
  {
    mg::NoGradGuard no_grad;
    mg::add_out(out, a, mg::tensor({3.0, 4.0}));
  }
  EXPECT_EQ(values(out), (std::vector<float>{4, 6}));
  EXPECT_FALSE(out.requires_grad());
}

TEST(OutVariants, Errors) {
  mg::Tensor a = mg::tensor({1.0, 2.0}), b = mg::tensor({3.0, 4.0});
  mg::Tensor ar = mg::tensor({1.0, 2.0}).requires_grad_();
  mg::Tensor long_out = mg::empty({2}, mg::kInt64);
  mg::Tensor double_out = mg::empty({1, 1}, mg::kFloat64);
  mg::Tensor f = mg::empty({2});
  mg::Tensor grad_out = mg::empty({2}).requires_grad_();
  minigrad_test::expect_documented_messages({
      // torch.add(a, b, out=torch.empty(2, dtype=torch.int64)) -> RuntimeError: result type
      // Float can't be cast to the desired output type Long
      {"out=", "add_out into an int64 out", [&] { mg::add_out(long_out, a, b); },
       "[add_out] result type Float can't be cast to the desired output type Long"},
      // torch.mm(a.view(1, 2), b.view(2, 1), out=torch.empty(1, 1, dtype=torch.float64)) ->
      // Expected out tensor to have dtype float, but got double instead
      {"out=", "mm_out into a float64 out for float32 inputs",
       [&] {
         mg::mm_out(double_out, a.view({1, 2}), b.view({2, 1}));
       },
       "[mm_out] Expected out tensor to have dtype float, but got double instead"},
      // torch.cat([a, b], out=torch.empty(4, dtype=torch.int64)) -> torch.cat(): input types
      // can't be cast to the desired output type Long
      {"out=", "cat_out into an int64 out",
       [&] {
         mg::cat_out(long_out, {a, b});
       },
       "[cat_out] torch.cat(): input types can't be cast to the desired output type Long"},
      // torch.add(a.requires_grad_(), b, out=torch.empty(2)) and
      // torch.add(a, b, out=torch.empty(2).requires_grad_()) -> add(): functions with out=...
      // arguments don't support automatic differentiation, but one of the arguments requires
      // grad.
      {"out=", "add_out with an input that requires grad", [&] { mg::add_out(f, ar, b); },
       "[add_out] add(): functions with out=... arguments don't support automatic "
       "differentiation, but one of the arguments requires grad (compute without out=, or under "
       "NoGradGuard)"},
  });
  EXPECT_NE(error_of([&] { mg::add_out(grad_out, a, b); }).find("don't support automatic"),
            std::string::npos);
  mg::Tensor undefined;
  EXPECT_EQ(error_of([&] { mg::exp_out(undefined, a); }), "[exp_out] out is an undefined tensor");
}
