// Stepping through backward (minigrad/backward_steps.h): the nodes in the engine's order, the
// gradient each receives and passes on (values from PyTorch 1.13: x.grad and b.grad of the same
// program), the .grad() written as backward() writes it, and bad input.
#include <gtest/gtest.h>

#include <minigrad/minigrad.h>
#include <set>
#include <sstream>

#include "documented_errors.h"

namespace mg = minigrad;

namespace {

// loss = tanh(x + b).sum(), x (2, 2), b (2,) broadcast over the rows. PyTorch 1.13 (float64):
// x.grad = [[0.1807066389, 0.1807066389], [0.0036408847, 0.0036408847]],
// b.grad = [0.1843475236, 0.1843475236]; loss.grad_fn is SumBackward0 -> TanhBackward0 ->
// AddBackward0.
struct Program {
  mg::Tensor x = mg::tensor({{1.0, 2.0}, {3.0, 4.0}}, mg::kFloat64).requires_grad_();
  mg::Tensor b = mg::tensor({0.5, -0.5}, mg::kFloat64).requires_grad_();
  mg::Tensor loss = mg::tanh(x + b).sum();
};

// Made in the test, not at static initialisation (a tensor made before main() outlives the
// allocator's caches, which LeakSanitizer reports).
mg::Tensor x_grad() {
  return mg::tensor({{0.1807066389, 0.1807066389}, {0.0036408847, 0.0036408847}}, mg::kFloat64);
}
mg::Tensor b_grad() { return mg::tensor({0.1843475236, 0.1843475236}, mg::kFloat64); }

}  // namespace

TEST(BackwardSteps, NodesInTheEnginesOrderWithTheirGradients) {
  Program p;
  mg::record_parameter_names({{"x", p.x}, {"b", p.b}});
  const auto steps = mg::autograd::backward_steps(p.loss);
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps[0].node, "SumBackward0");
  EXPECT_EQ(steps[1].node, "TanhBackward0");
  EXPECT_EQ(steps[2].node, "AddBackward0");
  EXPECT_EQ((std::set<std::string>{steps[3].leaf, steps[4].leaf}),
            (std::set<std::string>{"x", "b"}));
  EXPECT_EQ(steps[3].node, "AccumulateGrad");
  // The seed, then what each node passes on.
  ASSERT_EQ(steps[0].received.size(), 1u);
  EXPECT_EQ(steps[0].received[0].item<double>(), 1.0);
  ASSERT_EQ(steps[0].passed.size(), 1u);
  EXPECT_EQ(steps[0].passed[0].to, "TanhBackward0");
  EXPECT_TRUE(mg::equal(steps[0].passed[0].grad, mg::ones({2, 2}, mg::kFloat64)));
  EXPECT_TRUE(mg::equal(steps[1].received[0], steps[0].passed[0].grad));
  ASSERT_EQ(steps[2].passed.size(), 2u);
  EXPECT_EQ(steps[2].passed[0].to, "AccumulateGrad (x)");
  EXPECT_EQ(steps[2].passed[1].to, "AccumulateGrad (b)");
  EXPECT_TRUE(mg::allclose(steps[2].passed[0].grad, x_grad(), 0, 1e-10));
  // What b receives is reduced over the broadcast rows, as backward() reduces it.
  EXPECT_EQ(steps[2].passed[1].grad.shape(), (mg::Shape{2}));
  EXPECT_TRUE(mg::allclose(steps[2].passed[1].grad, b_grad(), 0, 1e-10));
  for (int i : {3, 4}) {
    EXPECT_TRUE(steps[i].passed.empty());
    EXPECT_TRUE(mg::equal(steps[i].received[0], steps[i].leaf == "x" ? p.x.grad() : p.b.grad()));
  }
  // It ran backward: the gradients are in .grad(), as PyTorch's.
  EXPECT_TRUE(mg::allclose(p.x.grad(), x_grad(), 0, 1e-10));
  EXPECT_TRUE(mg::allclose(p.b.grad(), b_grad(), 0, 1e-10));
}

TEST(BackwardSteps, FormatsOneBlockPerNode) {
  mg::Tensor w = mg::tensor({1.0, 2.0, 3.0}).requires_grad_();
  mg::Tensor x = mg::tensor({4.0, 5.0, 6.0});
  mg::record_parameter_names({{"w", w}});
  std::ostringstream os;
  mg::autograd::print_backward((w * x).sum(), os);
  EXPECT_EQ(os.str(),
            "1. SumBackward0\n"
            "     receives tensor(1.)\n"
            "     passes to MulBackward0: tensor([1., 1., 1.])\n"
            "2. MulBackward0\n"
            "     receives tensor([1., 1., 1.])\n"
            "     passes to AccumulateGrad (w): tensor([4., 5., 6.])\n"
            "     input 1 needs no gradient\n"
            "3. AccumulateGrad (w)\n"
            "     receives tensor([4., 5., 6.])\n"
            "     and adds it into w.grad()\n");
}

TEST(BackwardSteps, DocumentedErrors) {
  using minigrad_test::BadInput;
  minigrad_test::expect_documented_messages({
      BadInput{"backward_steps", "a loss that does not require grad",
               [] { (void)mg::autograd::backward_steps(mg::ones({})); },
               "[backward_steps] the loss does not require grad: nothing to step through (did you "
               "forget requires_grad_(), or run the forward under NoGradGuard?)"},
      BadInput{"backward_steps", "a loss that is not a scalar",
               [] {
                 (void)mg::autograd::backward_steps(mg::ones({2, 3}).requires_grad_());
               },
               "[backward_steps] the loss must be a scalar, but it has shape (2, 3) (reduce it "
               "first, e.g. .sum() or .mean())"},
      BadInput{"backward_steps", "an undefined loss",
               [] { (void)mg::autograd::backward_steps(mg::Tensor()); },
               "[backward_steps] the loss is an undefined tensor"},
  });
}
