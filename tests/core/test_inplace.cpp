// In-place ops with autograd (Note [In-place ops], Note [In-place on views]): the result keeps its
// identity and gets the op's node; an in-place op on a view rewrites its base's history
// (CopySlices); PyTorch's errors where PyTorch raises. Expected values come from PyTorch 1.13
// (/usr/bin/python3; the Python is in a comment).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include "core/test_util.h"

#include <functional>
#include <string>
#include <vector>

namespace mg = minigrad;

namespace {

using minigrad::testing::error_of;
std::vector<float> values(const mg::Tensor& t) { return t.to_vector<float>(); }

}  // namespace

// x = torch.tensor([1., 2.], requires_grad=True); y = x * 2; y.add_(1); y.sum().backward()
// -> y.grad_fn: AddBackward0; x.grad: tensor([2., 2.])
TEST(InPlace, ResultKeepsItsIdentityAndGetsTheOpsNode) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto y = x * 2;
  const mg::TensorImpl* impl = y.impl();
  const float* data = y.data_ptr<float>();
  mg::Tensor& r = y.add_(1);
  EXPECT_EQ(&r, &y);
  EXPECT_EQ(y.impl(), impl);
  EXPECT_EQ(y.data_ptr<float>(), data);
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  EXPECT_EQ(y._version(), 1);
  EXPECT_EQ(values(y), (std::vector<float>{3, 5}));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{2, 2}));
}

// x = torch.tensor([1., 2.], requires_grad=True); y = x * 2; y += 1; y *= 3; y.sum().backward()
// -> x.grad: tensor([6., 6.])
TEST(InPlace, CompoundOperatorsWriteInPlaceAndRecordHistory) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto y = x * 2;
  auto alias = y;
  y += 1;
  y *= 3;
  EXPECT_TRUE(alias.is_same(y));
  EXPECT_EQ(values(alias), (std::vector<float>{9, 15}));
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{6, 6}));
}

// The PyTorch idiom for a hand-written SGD step: the parameter stays the registered leaf.
TEST(InPlace, ManualSgdStepKeepsTheRegisteredParameter) {
  mg::manual_seed(0);
  mg::nn::Linear lin(3, 2, /*bias=*/false);
  mg::Tensor w = lin->weight;
  std::vector<float> before = values(w);
  lin->forward(mg::ones({4, 3})).sum().backward();
  {
    mg::NoGradGuard no_grad;
    lin->weight -= 0.5 * lin->weight.grad();
  }
  EXPECT_TRUE(lin->weight.is_same(w));
  EXPECT_TRUE(lin->weight.is_leaf());
  EXPECT_TRUE(lin->weight.requires_grad());
  EXPECT_TRUE(lin->parameters()[0].is_same(w));
  // d sum(x W^T) / dW = 4 everywhere (four rows of ones): each weight moved by -2.
  std::vector<float> after = values(w);
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_FLOAT_EQ(after[i], before[i] - 2.0f);
  lin->zero_grad();
  lin->forward(mg::ones({4, 3})).sum().backward();  // and trains on
  EXPECT_TRUE(lin->weight.grad().defined());
}

// x = torch.tensor([1., 2.]); b = torch.tensor([3., 4.], requires_grad=True)
// y = x * 1; y.mul_(b); y.sum().backward() -> b.grad: tensor([1., 2.]) (self's old value)
// with x.requires_grad too: x.grad tensor([3., 4.]), b.grad tensor([1., 2.])
TEST(InPlace, AnOpThatReadsSelfKeepsItsOldValue) {
  auto b = mg::tensor({3.0, 4.0}).requires_grad_();
  auto y = mg::tensor({1.0, 2.0}) * 1;
  y.mul_(b);
  y.sum().backward();
  EXPECT_EQ(values(b.grad()), (std::vector<float>{1, 2}));

  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto c = mg::tensor({3.0, 4.0}).requires_grad_();
  auto z = x * 1;
  z.mul_(c);
  z.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{3, 4}));
  EXPECT_EQ(values(c.grad()), (std::vector<float>{1, 2}));
}

// y = x * 1 with x = [1., 2.]: y.exp_() -> x.grad [2.7183, 7.3891]; y.log_() -> [1., 0.5];
// y.pow_(2) -> [2., 4.]
TEST(InPlace, UnaryOpsGiveTheOutOfPlaceGradients) {
  auto grad_of = [](const std::function<void(mg::Tensor&)>& op) {
    auto x = mg::tensor({1.0, 2.0}).requires_grad_();
    auto y = x * 1;
    op(y);
    y.sum().backward();
    return values(x.grad());
  };
  auto e = grad_of([](mg::Tensor& y) { y.exp_(); });
  EXPECT_NEAR(e[0], 2.7182817f, 1e-6);
  EXPECT_NEAR(e[1], 7.3890561f, 1e-5);
  EXPECT_EQ(grad_of([](mg::Tensor& y) { y.log_(); }), (std::vector<float>{1.0f, 0.5f}));
  EXPECT_EQ(grad_of([](mg::Tensor& y) { y.pow_(2); }), (std::vector<float>{2, 4}));
  EXPECT_EQ(grad_of([](mg::Tensor& y) { y.fill_(3); }), (std::vector<float>{0, 0}));
  EXPECT_EQ(grad_of([](mg::Tensor& y) { y.zero_(); }), (std::vector<float>{0, 0}));
}

// x = torch.tensor([1., 2., 3.], requires_grad=True); y = x * 1
// y.masked_fill_(torch.tensor([True, False, True]), 5.); y.clamp_(0, 4.5); (y * y).sum().backward()
// -> x.grad: tensor([0., 4., 0.])
TEST(InPlace, MaskedFillAndClampChain) {
  auto x = mg::tensor({1.0, 2.0, 3.0}).requires_grad_();
  auto y = x * 1;
  y.masked_fill_(mg::tensor({true, false, true}, mg::kBool), 5.0);
  y.clamp_(0.0, 4.5);
  EXPECT_EQ(y.grad_fn()->name(), "ClampBackward1");
  (y * y).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{0, 4, 0}));
}

// Two saved outputs in a row: y.sigmoid_(); y.tanh_() overwrites what SigmoidBackward0 saved.
// PyTorch raises "... which is output 0 of TanhBackward0, is at version 3; expected version 2"
// (its count includes x * 1's write); so does minigrad.
TEST(InPlace, OverwritingASavedOutputIsCaught) {
  auto x = mg::tensor({1.0, 2.0, 3.0}).requires_grad_();
  auto y = x * 1;
  y.sigmoid_();
  y.tanh_();
  EXPECT_NE(error_of([&] { y.sum().backward(); })
                .find("[SigmoidBackward0] its output saved for backward (shape (3,), float32) was "
                      "modified in place: it is at version 2, expected version 1"),
            std::string::npos);
}

// x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True); h = x * 1
// h.select(0, 0).mul_(2); h.sum().backward() -> h.grad_fn: CopySlices;
// x.grad: tensor([[2., 2.], [1., 1.]])
TEST(InPlace, OnAViewRewritesTheBasesHistory) {
  auto x = mg::tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_();
  auto h = x * 1;
  auto v = h.select(0, 0);
  v.mul_(2);
  EXPECT_EQ(h.grad_fn()->name(), "CopySlices");
  EXPECT_EQ(v.grad_fn()->name(), "AsStridedBackward0");
  EXPECT_EQ(values(h), (std::vector<float>{2, 4, 3, 4}));
  h.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{2, 2, 1, 1}));
}

// h = x * 1; w = h[1]; v = h[0]; v.mul_(2); (w * 3).sum().backward()
// -> x.grad: tensor([[0., 0.], [3., 3.]]); w.grad_fn: AsStridedBackward0
TEST(InPlace, OtherViewsOfTheBaseFollowItsNewHistory) {
  auto x = mg::tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_();
  auto h = x * 1;
  auto w = h.select(0, 1);
  h.select(0, 0).mul_(2);
  EXPECT_EQ(w.grad_fn()->name(), "AsStridedBackward0");
  (w * 3).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{0, 0, 3, 3}));
}

// h = x * 1; v = h[0]; h.mul_(2); v.sum().backward() -> x.grad: tensor([[2., 2.], [0., 0.]])
TEST(InPlace, AViewSeesAnInPlaceOpOnItsBase) {
  auto x = mg::tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_();
  auto h = x * 1;
  auto v = h.select(0, 0);
  h.mul_(2);
  v.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{2, 2, 0, 0}));
}

// y = x.detach().clone(); v = y[0]; v.copy_(x[1] * 3); y.sum().backward()
// -> y.grad_fn: CopySlices, y.requires_grad: True; x.grad: tensor([[0., 0.], [3., 3.]])
TEST(InPlace, CopyIntoAViewOfAPlainTensorMakesItDifferentiable) {
  auto x = mg::tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_();
  auto y = x.detach().clone();
  auto v = y.select(0, 0);
  v.copy_(x.select(0, 1) * 3);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  y.sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{0, 0, 3, 3}));
}

// x = torch.tensor([[1., 2.], [3., 4.]], dtype=torch.float64, requires_grad=True)
// h = x * x; h[0].mul_(3); h[1].exp_(); g, = torch.autograd.grad((h * h).sum(), x,
// create_graph=True) gg, = torch.autograd.grad(g.sum(), x)
TEST(InPlace, CopySlicesIsDifferentiableTwice) {
  auto x = mg::tensor({{1.0, 2.0}, {3.0, 4.0}}, mg::kFloat64).requires_grad_();
  auto h = x * x;
  h.select(0, 0).mul_(3);
  h.select(0, 1).exp_();
  auto g = mg::autograd::grad({(h * h).sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  std::vector<double> want_g{36.0, 288.0, 787919629.6479661, 1263407362922891.0};
  std::vector<double> got_g = g.to_vector<double>();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(got_g[i], want_g[i], 1e-12 * want_g[i]);
  auto gg = mg::autograd::grad({g.sum()}, {x})[0].to_vector<double>();
  std::vector<double> want_gg{108.0, 432.0, 9717675432.324917, 2.0530369647496976e+16};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(gg[i], want_gg[i], 1e-12 * want_gg[i]);
}

TEST(InPlace, UnderNoGradALeafIsWrittenAndStaysALeaf) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  {
    mg::NoGradGuard no_grad;
    x.mul_(2);
  }
  EXPECT_TRUE(x.is_leaf());
  EXPECT_TRUE(x.requires_grad());
  EXPECT_EQ(values(x), (std::vector<float>{2, 4}));
  EXPECT_EQ(x._version(), 1);
}

// The messages PyTorch gives, in minigrad's form (each is a row of docs/errors.md):
// "a leaf Variable that requires grad is being used in an in-place operation."
// "a view of a leaf Variable that requires grad is being used in an in-place operation."
// "unsupported operation: more than one element of the written-to tensor refers to a single
//  memory location. Please clone() the tensor before performing the operation."
// "result type Float can't be cast to the desired output type Long"
// "output with shape [2] doesn't match the broadcast shape [2, 2]"
TEST(InPlace, PyTorchsErrors) {
  auto leaf = mg::tensor({1.0, 2.0}).requires_grad_();
  EXPECT_EQ(error_of([&] { leaf.add_(1); }),
            "[add_] a leaf tensor that requires grad cannot be modified in place; use it under "
            "NoGradGuard");
  EXPECT_EQ(error_of([&] { leaf += leaf; }),
            "[add_] a leaf tensor that requires grad cannot be modified in place; use it under "
            "NoGradGuard");
  EXPECT_EQ(error_of([&] { leaf.select(0, 0).mul_(2); }),
            "[mul_] a view of a leaf tensor that requires grad cannot be modified in place; use it "
            "under NoGradGuard");
  // b = torch.ones(3); w = b[:2]; w.requires_grad_(); w.mul_(2): "a view of a leaf Variable ..."
  auto w = mg::ones({3}).narrow(0, 0, 2);
  w.requires_grad_();
  EXPECT_TRUE(w.is_leaf());
  EXPECT_EQ(error_of([&] { w.mul_(2); }),
            "[mul_] a view of a leaf tensor that requires grad cannot be modified in place; use it "
            "under NoGradGuard");
  EXPECT_EQ(error_of([] { mg::zeros({1}).expand({3}).add_(1); }),
            "[add_] unsupported operation: more than one element of the written-to tensor refers "
            "to a single memory location (dim 0 of shape (3,) has stride 0); clone() the tensor "
            "first");
  EXPECT_EQ(error_of([] { mg::zeros({2}, mg::kInt64).add_(1.5); }),
            "[add_] result type float32 can't be cast to the desired output type int64");
  EXPECT_EQ(error_of([] { mg::zeros({2}, mg::kInt64).div_(2); }),
            "[div_] result type float32 can't be cast to the desired output type int64");
  EXPECT_EQ(error_of([] {
              mg::zeros({2}).add_(mg::zeros({2, 2}));
            }),
            "[add_] output with shape (2,) doesn't match the broadcast shape (2, 2)");
  // A failed in-place op changes nothing.
  auto t = mg::zeros({2}, mg::kInt64);
  error_of([&] { t.add_(1.5); });
  EXPECT_EQ(t._version(), 0);
}

// x = torch.ones(3, requires_grad=True)
// with torch.no_grad(): v = x[:2]
// v.requires_grad, v.is_leaf -> True True;  v.mul_(2) -> "A view was created in no_grad mode and
// is being modified inplace with grad mode enabled. ..."; under no_grad the write goes through.
TEST(InPlace, AViewMadeInNoGradRequiresGradAsALeafAndRefusesTrackedWrites) {
  auto x = mg::ones({3}).requires_grad_();
  mg::Tensor v;
  {
    mg::NoGradGuard no_grad;
    v = x.narrow(0, 0, 2);
  }
  EXPECT_TRUE(v.requires_grad());
  EXPECT_TRUE(v.is_leaf());
  EXPECT_EQ(error_of([&] { v.mul_(2); }),
            "[mul_] a view was created in no-grad mode and is being modified in place with grad "
            "mode enabled; do both under NoGradGuard (not tracked) or both outside it (tracked)");
  {
    mg::NoGradGuard no_grad;
    v.mul_(2);
  }
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 2, 1}));
  // Used in grad mode, its gradient goes nowhere: (v * 3.0).sum().backward() leaves v.grad and
  // x.grad None, and a hook on v does not run (PyTorch 1.13).
  bool hook_ran = false;
  v.register_hook([&](const mg::Tensor&) {
    hook_ran = true;
    return mg::Tensor();
  });
  (v * 3.0).sum().backward();
  EXPECT_FALSE(v.grad().defined());
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(hook_ran);
  // A view of it made in grad mode is not a leaf: ViewBackward0, is_leaf False.
  auto u = v.view({2, 1});
  EXPECT_TRUE(u.requires_grad());
  EXPECT_FALSE(u.is_leaf());
  EXPECT_NE(u.grad_fn(), nullptr);
}

// with torch.no_grad(): x.view(6), x[0], x.t(), x.narrow(0, 0, 1), x.reshape(6), x[0:1].expand(2,
// 3) each -> requires_grad True, is_leaf True, grad_fn None;  x.detach() -> requires_grad False.
TEST(InPlace, EveryViewMadeInNoGradOfATensorThatRequiresGradIsARequiresGradLeaf) {
  auto x = mg::randn({2, 3}).requires_grad_();
  mg::NoGradGuard no_grad;
  for (const mg::Tensor& v : {x.view({6}), x[0], x.t(), x.narrow(0, 0, 1), x.reshape({6}),
                              x.slice(0, 0, 1).expand({2, 3})}) {
    EXPECT_TRUE(v.requires_grad());
    EXPECT_TRUE(v.is_leaf());
    EXPECT_EQ(v.grad_fn(), nullptr);
  }
  EXPECT_FALSE(x.detach().requires_grad());
}

// ---------------------------------------------------------------- split's pieces
// Note [Split as one node]: one node for all pieces, PyTorch's name for it, its gradients and the
// in-place rules of a function that returns several views. From PyTorch 1.13:
//   x = torch.tensor([[1., 2., 3., 4.], [5., 6., 7., 8.]], requires_grad=True)
//   a, b = x.chunk(2, 1)        # a.grad_fn.name() 'SplitBackward0', a.grad_fn is b.grad_fn
//   x.split([1, 3], 1)[0]       # SplitWithSizesBackward0
//   g, = torch.autograd.grad((b * b).sum(), x, create_graph=True)
//       # [[0, 0, 6, 8], [0, 0, 14, 16]]; torch.autograd.grad(g.sum(), x): [[0, 0, 2, 2], ...]
//   y = x * 1; q = y.chunk(2, 1); q[1].register_hook(...); (q[1] * 3).sum().backward()
//       # the hook sees [[3, 3], [3, 3]]; x.grad [[0, 0, 3, 3], [0, 0, 3, 3]]
TEST(InPlace, SplitsPiecesShareOneNodeWithPyTorchsName) {
  auto x = mg::tensor({1.0f, 2, 3, 4, 5, 6, 7, 8}).view({2, 4}).detach().requires_grad_();
  auto ab = x.chunk(2, 1);
  ASSERT_NE(ab[0].grad_fn(), nullptr);
  EXPECT_EQ(ab[0].grad_fn()->name(), "SplitBackward0");
  EXPECT_EQ(ab[0].grad_fn(), ab[1].grad_fn());
  EXPECT_EQ(ab[0].grad_fn()->num_outputs(), 2u);
  EXPECT_EQ(x.split(mg::Shape{1, 3}, 1)[0].grad_fn()->name(), "SplitWithSizesBackward0");
  EXPECT_EQ(x.split(2, 1)[1].grad_fn()->name(), "SplitBackward0");

  auto g = mg::autograd::grad({(ab[1] * ab[1]).sum()}, {x}, {}, true, true)[0];
  EXPECT_EQ(values(g), (std::vector<float>{0, 0, 6, 8, 0, 0, 14, 16}));
  auto gg = mg::autograd::grad({g.sum()}, {x})[0];
  EXPECT_EQ(values(gg), (std::vector<float>{0, 0, 2, 2, 0, 0, 2, 2}));

  auto y = x * 1;
  auto q = y.chunk(2, 1);
  std::vector<float> seen;
  q[1].register_hook([&](const mg::Tensor& grad) {
    seen = values(grad);
    return mg::Tensor();
  });
  (q[1] * 3).sum().backward();
  EXPECT_EQ(seen, (std::vector<float>{3, 3, 3, 3}));
  EXPECT_EQ(values(x.grad()), (std::vector<float>{0, 0, 3, 3, 0, 0, 3, 3}));
  // Without grad mode, or of a tensor that needs no gradient, the pieces are plain views.
  EXPECT_EQ(mg::ones({4}).chunk(2)[0].grad_fn(), nullptr);
  mg::NoGradGuard no_grad;
  EXPECT_EQ(x.chunk(2, 1)[0].grad_fn(), nullptr);
}

// y = x * 1; q = y.chunk(2, 1); q[0].mul_(2) -> RuntimeError: Output 0 of SplitBackward0 is a view
// and is being modified inplace. This view is the output of a function that returns multiple
// views. ...; y.mul_(2); q[1].sum() -> RuntimeError: Output 1 of SplitBackward0 is a view and its
// base or another view of its base has been modified inplace. ... (PyTorch 1.13). Under no_grad
// the write is allowed.
TEST(InPlace, SplitsPiecesRefuseTrackedWritesAndAStaleBase) {
  auto x = mg::ones({2, 4}).requires_grad_();
  auto y = x * 1;
  auto q = y.chunk(2, 1);
  EXPECT_EQ(error_of([&] { q[0].mul_(2); }),
            "[mul_] output 0 of SplitBackward0 is a view and is being modified in place; split "
            "and chunk return several views, which may not be modified in place: use an "
            "out-of-place op (or clone() the piece)");
  {
    mg::NoGradGuard no_grad;
    q[0].mul_(2);
  }
  EXPECT_EQ(values(y), (std::vector<float>{2, 2, 1, 1, 2, 2, 1, 1}));
  y.mul_(2);
  const std::string stale =
      "[SplitBackward0] output 1 is a view and its base or another view of its base has been "
      "modified in place; split and chunk return several views, whose base may not be modified in "
      "place while they are used: use an out-of-place op (or clone() the pieces)";
  EXPECT_EQ(error_of([&] { q[1].sum(); }), stale);
  EXPECT_EQ(error_of([&] { q[1].grad_fn(); }), stale);
  EXPECT_TRUE(q[1].requires_grad());
  // The out-of-place way works: the gradient of y's new values reaches x.
  (y.chunk(2, 1)[1] * 1).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<float>{0, 0, 2, 2, 0, 0, 2, 2}));
}
