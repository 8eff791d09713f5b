// Saved tensors and version counters (Note [Saved tensors], Note [Version counters]): backward
// refuses a tensor that was written in place after it was saved, each op keeps only what the
// gradients that are needed read, and every in-place write bumps the shared counter. Expected
// values come from PyTorch 1.13 (the Python is in a comment) or are worked out by hand.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include "core/test_util.h"

#include <memory>
#include <string>

namespace mg = minigrad;

using minigrad::testing::error_of;

// a = torch.tensor([1., 2.], requires_grad=True); b = torch.tensor([5., 7.])
// y = (a * b).sum(); b.fill_(100.); y.backward()
// -> RuntimeError: ... [torch.FloatTensor [2]] is at version 1; expected version 0 instead.
TEST(SavedTensors, WriteToASavedInputIsCaughtInBackward) {
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({5.0, 7.0});
  auto y = (a * b).sum();
  b.fill_(100.0);
  EXPECT_EQ(error_of([&] { y.backward(); }),
            "[MulBackward0] a tensor saved for backward (shape (2,), float32) was modified in "
            "place: it is at version 1, expected version 0. Use clone() before the in-place op, "
            "or do it after backward.");
  EXPECT_FALSE(a.grad().defined());
}

// The fix the message gives: y = (a * b.clone()).sum(); b.fill_(100.); y.backward()
// -> a.grad == tensor([5., 7.])
TEST(SavedTensors, CloneBeforeTheWriteGivesPyTorchsGradient) {
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({5.0, 7.0});
  auto y = (a * b.clone()).sum();
  b.fill_(100.0);
  y.backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{5.0f, 7.0f}));
}

// x = torch.tensor([1., 2.], requires_grad=True); y = x.exp(); y.zero_(); y.sum().backward()
// -> RuntimeError: ... which is output 0 of ExpBackward0, is at version 1; expected version 0
TEST(SavedTensors, WriteToASavedOutputIsCaughtInBackward) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto y = x.exp();
  auto s = y.sum();
  {
    mg::NoGradGuard no_grad;  // until in-place ops record history, write under no_grad
    y.zero_();
  }
  EXPECT_EQ(error_of([&] { s.backward(); }),
            "[ExpBackward0] its output saved for backward (shape (2,), float32) was modified in "
            "place: it is at version 1, expected version 0. Use clone() before the in-place op, "
            "or do it after backward.");
}

// A view shares the counter: writing through b[0] is a write to b.
TEST(SavedTensors, WriteThroughAViewIsCaught) {
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({5.0, 7.0});
  auto y = (a * b).sum();
  b.select(0, 1).fill_(0.0);
  EXPECT_NE(error_of([&] { y.backward(); }).find("it is at version 1, expected version 0"),
            std::string::npos);
}

// An optimizer step between forward and backward: the second layer's weight is saved for the
// first layer's gradient, and SGD wrote it.
TEST(SavedTensors, OptimizerStepBetweenForwardAndBackwardIsCaught) {
  mg::manual_seed(0);
  mg::nn::Linear l1(3, 4), l2(4, 2);
  std::vector<mg::Tensor> params = l1->parameters();
  for (const auto& p : l2->parameters()) params.push_back(p);
  mg::optim::SGD opt(params, mg::optim::SGDOptions(0.1));
  auto x = mg::ones({5, 3});
  auto loss = l2->forward(l1->forward(x).relu()).sum();
  for (auto& p : params) p.set_grad(mg::ones_like(p));
  opt.step();
  // l2's weight.t() (4, 2) is saved for l1's gradient; it was at version 1 (its init's uniform_).
  EXPECT_EQ(error_of([&] { loss.backward(); }),
            "[AddmmBackward0] a tensor saved for backward (shape (4, 2), float32) was modified in "
            "place: it is at version 2, expected version 1. Use clone() before the in-place op, "
            "or do it after backward.");
}

// Reading a saved tensor after its write is fine once backward is done.
TEST(SavedTensors, WritesAfterBackwardAreFine) {
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({5.0, 7.0});
  (a * b).sum().backward();
  b.fill_(100.0);
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{5.0f, 7.0f}));
}

// b = torch.tensor([5., 7.]); b._version -> 0; b.fill_(100) -> 1; b[0].fill_(1) -> 2 (the view
// reads 2 too); b.detach().zero_() -> 3; uniform_ -> 4; copy_ -> 5; normal_ -> 6; random_ -> 7
TEST(Versions, EveryInPlaceWriteBumpsTheSharedCounter) {
  auto b = mg::tensor({5.0, 7.0});
  EXPECT_EQ(b._version(), 0);
  b.fill_(100.0);
  EXPECT_EQ(b._version(), 1);
  auto v = b.select(0, 0);
  v.fill_(1.0);
  EXPECT_EQ(b._version(), 2);
  EXPECT_EQ(v._version(), 2);
  b.detach().zero_();
  EXPECT_EQ(b._version(), 3);
  b.uniform_();
  EXPECT_EQ(b._version(), 4);
  b.copy_(mg::ones({2}));
  EXPECT_EQ(b._version(), 5);
  b.normal_();
  EXPECT_EQ(b._version(), 6);
  b.random_(0, 5);
  EXPECT_EQ(b._version(), 7);
  mg::autograd::increment_version(b);
  EXPECT_EQ(b._version(), 8);
  // A new tensor from an op starts at 0; a clone does not share the counter.
  EXPECT_EQ((b + 1)._version(), 0);
  EXPECT_EQ(b.clone()._version(), 0);
}

TEST(Versions, OptimizerStepAndLoadStateDictBumpTheParameters) {
  mg::manual_seed(0);
  mg::nn::Linear lin(3, 2);
  mg::optim::SGD opt(lin->parameters(), mg::optim::SGDOptions(0.1));
  lin->forward(mg::ones({4, 3})).sum().backward();
  std::int64_t before = lin->weight._version();
  opt.step();
  EXPECT_GT(lin->weight._version(), before);
  before = lin->weight._version();
  lin->load_state_dict(lin->state_dict());
  EXPECT_GT(lin->weight._version(), before);
}

// (w + 1) * m: MulBackward0 keeps m for w's gradient and w + 1 only for m's (derivatives.yaml:
// self: grad * other, other: grad * self). In PyTorch, y.grad_fn._saved_self is None when m
// does not require grad.
TEST(SavedTensors, EachOpKeepsOnlyWhatTheNeededGradientsRead) {
  auto storages_kept = [](bool w_grad, bool m_grad) {
    auto w = mg::tensor({1.0, 2.0, 3.0, 4.0});
    auto m = mg::tensor({4.0, 3.0, 2.0, 1.0});
    w.requires_grad_(w_grad);
    m.requires_grad_(m_grad);
    std::int64_t before = mg::live_storage_count();
    auto y = (w + 1) * m;
    return mg::live_storage_count() - before;  // y, and w + 1 when MulBackward0 kept it
  };
  EXPECT_EQ(storages_kept(true, false), 1);  // only m is read: w + 1 is freed
  EXPECT_EQ(storages_kept(false, true), 2);  // m's gradient reads w + 1
  EXPECT_EQ(storages_kept(true, true), 2);
}

// exp saves its output, not its input: x can be freed once exp(x) is computed.
TEST(SavedTensors, SavedOutputIsItsDataNotACopy) {
  std::int64_t before = mg::live_storage_count();
  mg::Tensor y;
  {
    auto x = mg::tensor({1.0, 2.0}).requires_grad_();
    y = (x * 2).exp();
  }
  // The graph holds x (its AccumulateGrad); MulBackward0 keeps the number 2 itself, not a tensor
  // (as libtorch's MulBackward1); x * 2 is freed, since ExpBackward0 reads y's own data.
  EXPECT_EQ(mg::live_storage_count() - before, 2);  // x, y
  y.sum().backward();
}

// A tensor and a number (x * 2, 2 * x, x / 4, x + 3, x - 1, 5 - x): the node keeps the number,
// not a 0-dim tensor holding it, so a chain of them holds no storage but its ends. PyTorch 1.13:
//   x = torch.tensor([1., 2.], requires_grad=True)
//   y = ((((x * 2) / 4) + 3) - 1); y = 5 - y; y = 3 * y; y = 1 + y
//   y -> [8.5, 7.0], AddBackward0; torch.autograd.grad(y.sum(), x) -> [-1.5, -1.5]
TEST(SavedTensors, TensorAndNumberOpsKeepTheNumberNotATensor) {
  std::int64_t before = mg::live_storage_count();
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  mg::Tensor y = ((((x * 2) / 4) + 3) - 1);
  y = 5 - y;
  y = 3 * y;
  y = 1 + y;
  EXPECT_EQ(mg::live_storage_count() - before, 2);  // x, y
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{8.5, 7.0}));
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  mg::Tensor g = mg::autograd::grad({y.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{-1.5, -1.5}));
}

// Fuzz finding F8 (Note [Saved inputs are snapshots]): b = a * x saves a; then a *= b gives a a
// history through b's node, which held a itself: a -> MulBackward0 -> b's MulBackward0 -> a, a
// reference cycle that nothing freed (LeakSanitizer). PyTorch 1.13 leaks there too; it refuses
// the backward, as minigrad must:
//   x = torch.tensor([1., 2.], requires_grad=True); a = torch.tensor([3., 4.])
//   b = a * x; a.mul_(b)  -> a == tensor([9., 32.]), grad_fn MulBackward0, a._version == 1
//   (a + a).sum().backward() -> RuntimeError: ... [torch.FloatTensor [2]], which is output 0 of
//   MulBackward0, is at version 1; expected version 0 instead.
TEST(SavedTensors, InPlaceOnASavedTensorWithoutGradLeavesNoReferenceCycle) {
  const std::int64_t nodes = mg::autograd::live_node_count();
  const std::int64_t storages = mg::live_storage_count();
  std::weak_ptr<mg::TensorImpl> a_impl, b_impl;
  {
    auto x = mg::tensor({1.0, 2.0}).requires_grad_();
    auto a = mg::tensor({3.0, 4.0});
    auto b = a * x;
    a *= b;
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{9.0f, 32.0f}));
    ASSERT_NE(a.grad_fn(), nullptr);
    EXPECT_EQ(a.grad_fn()->name(), "MulBackward0");
    EXPECT_EQ(a._version(), 1);
    a_impl = a.impl_ptr();
    b_impl = b.impl_ptr();
    auto r = a;
    for (int i = 0; i < 6; ++i) r = r + r;  // the fuzz input's add(a, a) six times
    EXPECT_EQ(error_of([&] { r.sum().backward(); }),
              "[MulBackward0] a tensor saved for backward (shape (2,), float32) was modified in "
              "place: it is at version 1, expected version 0. Use clone() before the in-place op, "
              "or do it after backward.");
  }
  EXPECT_TRUE(a_impl.expired());
  EXPECT_TRUE(b_impl.expired());
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
  EXPECT_EQ(mg::live_storage_count(), storages);
}

// The same cycle through a tensor that requires grad (a non-leaf), and with no backward at all:
//   w = torch.tensor([1., 2.], requires_grad=True); x = torch.tensor([5., 6.], requires_grad=True)
//   a = w * 2; b = a * x; a.add_(b)  -> a == tensor([12., 28.])
//   a.sum().backward() -> RuntimeError: ... which is output 0 of AddBackward0, is at version 1;
//   expected version 0 instead.
TEST(SavedTensors, InPlaceOnASavedNonLeafLeavesNoReferenceCycle) {
  const std::int64_t nodes = mg::autograd::live_node_count();
  const std::int64_t storages = mg::live_storage_count();
  std::weak_ptr<mg::TensorImpl> a_impl;
  {
    auto w = mg::tensor({1.0, 2.0}).requires_grad_();
    auto x = mg::tensor({5.0, 6.0}).requires_grad_();
    auto a = w * 2;
    auto b = a * x;
    a += b;
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{12.0f, 28.0f}));
    a_impl = a.impl_ptr();
    EXPECT_NE(error_of([&] {
                a.sum().backward();
              }).find("was modified in place: it is at version 1, expected version 0"),
              std::string::npos);
  }
  EXPECT_TRUE(a_impl.expired());
  {
    auto w = mg::tensor({1.0, 2.0}).requires_grad_();
    auto a = mg::tensor({3.0, 4.0});
    auto b = a * w;
    a /= b;
    a_impl = a.impl_ptr();
  }
  EXPECT_TRUE(a_impl.expired());
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
  EXPECT_EQ(mg::live_storage_count(), storages);
}
