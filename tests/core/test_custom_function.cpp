// Custom Functions (minigrad/custom_function.h, Note [Custom Functions]): ops with a hand-written
// backward, as libtorch's torch::autograd::Function<T>. Each is gradchecked (and gradgradchecked:
// the backwards are written with minigrad ops) in one line.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <minigrad/testing.h>
#include "core/test_util.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace mg = minigrad;
using mg::Tensor;
using mg::autograd::AutogradContext;

namespace {

using minigrad::testing::error_of;
// The libtorch docs' example, with the output saved.
struct MyExp : mg::autograd::Function<MyExp> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->get_saved_variables()[0]};
  }
};

// A non-tensor argument, kept in saved_data; backward returns Tensor() for it.
struct MulConstant : mg::autograd::Function<MulConstant> {
  static Tensor forward(AutogradContext* ctx, const Tensor& x, double c) {
    ctx->saved_data["c"] = c;
    return x * c;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->saved_data["c"].toDouble(), Tensor()};
  }
};

// Two tensor inputs; each gradient only when needed.
struct MyMul : mg::autograd::Function<MyMul> {
  static Tensor forward(AutogradContext* ctx, const Tensor& a, const Tensor& b) {
    ctx->save_for_backward({a, b});
    return a * b;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto saved = ctx->get_saved_variables();
    return {ctx->needs_input_grad(0) ? grads[0] * saved[1] : Tensor(),
            ctx->needs_input_grad(1) ? grads[0] * saved[0] : Tensor()};
  }
};

// Two outputs: exp(x) and x^2.
struct ExpAndSquare : mg::autograd::Function<ExpAndSquare> {
  static std::vector<Tensor> forward(AutogradContext* ctx, const Tensor& x) {
    Tensor e = x.exp();
    ctx->save_for_backward({x, e});
    return {e, x * x};
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    auto s = ctx->get_saved_variables();
    return {grads[0] * s[1] + grads[1] * 2 * s[0]};
  }
};

// In place on its input, declared with mark_dirty.
struct ExpInPlace : mg::autograd::Function<ExpInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.exp_();
    ctx->mark_dirty({x});
    ctx->save_for_backward({x});
    return x;
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    return {grads[0] * ctx->get_saved_variables()[0]};
  }
};

// A differentiable max with its argmax as a second, non-differentiable output.
struct MaxWithIndex : mg::autograd::Function<MaxWithIndex> {
  static std::vector<Tensor> forward(AutogradContext* ctx, const Tensor& x) {
    Tensor idx = x.argmax();
    ctx->mark_non_differentiable({idx});
    ctx->save_for_backward({idx});
    ctx->saved_data["n"] = x.numel();
    return {x.max(), idx};
  }
  static std::vector<Tensor> backward(AutogradContext* ctx, std::vector<Tensor> grads) {
    Tensor idx = ctx->get_saved_variables()[0];
    Tensor onehot = mg::zeros({ctx->saved_data["n"].toInt()}, grads[0].dtype());
    onehot.select(0, idx.item<std::int64_t>()).fill_(1.0);
    return {onehot * grads[0]};
  }
};

struct WrongCount : mg::autograd::Function<WrongCount> {
  static Tensor forward(AutogradContext*, const Tensor& x, double) { return x * 2; }
  static std::vector<Tensor> backward(AutogradContext*, std::vector<Tensor> grads) {
    return {grads[0] * 2};
  }
};

Tensor arg(std::vector<double> v) {
  return mg::tensor(v, {static_cast<std::int64_t>(v.size())}, mg::kFloat64).requires_grad_();
}

}  // namespace

TEST(CustomFunction, ForwardBackwardAndItsNodeName) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = MyExp::apply(x);
  EXPECT_EQ(y.grad_fn()->name(), "MyExpBackward");
  y.sum().backward();
  auto g = x.grad().to_vector<float>();
  EXPECT_NEAR(g[0], 2.7182817f, 1e-6);
  EXPECT_NEAR(g[1], 7.3890561f, 1e-5);
}

TEST(CustomFunction, PassesGradcheckAndGradgradcheck) {
  auto exp_fn = [](const std::vector<Tensor>& in) { return MyExp::apply(in[0]); };
  EXPECT_GRADCHECK(exp_fn, {arg({0.5, -1.0, 2.0})});
  EXPECT_GRADGRADCHECK(exp_fn, {arg({0.5, -1.0, 2.0})});
  auto mul_fn = [](const std::vector<Tensor>& in) { return MyMul::apply(in[0], in[1]); };
  EXPECT_GRADCHECK(mul_fn, {arg({0.5, -1.0}), arg({3.0, 0.25})});
  EXPECT_GRADGRADCHECK(mul_fn, {arg({0.5, -1.0}), arg({3.0, 0.25})});
  auto two = [](const std::vector<Tensor>& in) {
    auto outs = ExpAndSquare::apply(in[0]);
    return outs[0] * 3 + outs[1];
  };
  EXPECT_GRADCHECK(two, {arg({0.5, -1.0, 2.0})});
  EXPECT_GRADGRADCHECK(two, {arg({0.5, -1.0, 2.0})});
  auto constant = [](const std::vector<Tensor>& in) { return MulConstant::apply(in[0], 2.5); };
  EXPECT_GRADCHECK(constant, {arg({0.5, -1.0})});
}

TEST(CustomFunction, SeveralOutputsEachGetTheirGradient) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto outs = ExpAndSquare::apply(x);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(outs[0].grad_fn() == outs[1].grad_fn());
  // Only the second output is used: the first one's gradient is materialized as zeros.
  outs[1].sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST(CustomFunction, NonTensorArgumentsAndNeedsInputGrad) {
  auto x = mg::tensor({1.0, -2.0}).requires_grad_();
  MulConstant::apply(x, 2.5).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2.5f, 2.5f}));
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({3.0, 4.0});  // needs no gradient: MyMul skips it
  MyMul::apply(a, b).sum().backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{3, 4}));
}

TEST(CustomFunction, MarkDirtyMakesTheInputTakeTheNode) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  Tensor h = x * 1;
  Tensor y = ExpInPlace::apply(h);
  EXPECT_TRUE(y.is_same(h));
  EXPECT_EQ(h.grad_fn()->name(), "ExpInPlaceBackward");
  h.sum().backward();
  auto g = x.grad().to_vector<float>();
  EXPECT_NEAR(g[0], 2.7182817f, 1e-6);
  EXPECT_NEAR(g[1], 7.3890561f, 1e-5);
}

TEST(CustomFunction, NonDifferentiableOutputs) {
  auto x = mg::tensor({1.0, 5.0, 2.0}).requires_grad_();
  auto outs = MaxWithIndex::apply(x);
  EXPECT_TRUE(outs[0].requires_grad());
  EXPECT_FALSE(outs[1].requires_grad());
  EXPECT_EQ(outs[1].item<std::int64_t>(), 1);
  (outs[0] * 2).backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 2, 0}));
}

TEST(CustomFunction, SavedTensorsAreVersionChecked) {
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({5.0, 7.0});
  auto y = MyMul::apply(a, b).sum();
  b.fill_(100.0);
  EXPECT_EQ(error_of([&] { y.backward(); }),
            "[MyMulBackward] a tensor saved for backward (shape (2,), float32) was modified in "
            "place: it is at version 1, expected version 0. Use clone() before the in-place op, "
            "or do it after backward.");
}

TEST(CustomFunction, SecondBackwardWithoutRetainGraphThrows) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto y = MyExp::apply(x).sum();
  y.backward();
  EXPECT_NE(error_of([&] { y.backward(); })
                .find("trying to backward through the graph a second "
                      "time (or to use saved tensors after they were "
                      "freed) at MyExpBackward"),
            std::string::npos);
}

TEST(CustomFunction, WrongNumberOfGradientsIsAnError) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto y = WrongCount::apply(x, 1.0).sum();
  EXPECT_EQ(error_of([&] { y.backward(); }),
            "[WrongCountBackward] backward returned 1 gradients but forward took 2 arguments "
            "(return one per argument, Tensor() for the non-tensor ones)");
}

TEST(CustomFunction, WithoutGradItRecordsNothing) {
  auto x = mg::tensor({1.0, 2.0});
  Tensor y = MyExp::apply(x);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(y.is_leaf());
  auto w = mg::tensor({1.0}).requires_grad_();
  mg::NoGradGuard no_grad;
  EXPECT_FALSE(MyExp::apply(w).requires_grad());
}

TEST(CustomFunction, HooksAndAnomalyModeWorkThroughIt) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto outs = ExpAndSquare::apply(x);
  int seen = 0;
  outs[1].register_hook([&](const Tensor& g) {
    ++seen;
    return g * 10;
  });
  outs[1].sum().backward();
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{20, 40}));

  struct NanBackward : mg::autograd::Function<NanBackward> {
    static Tensor forward(AutogradContext*, const Tensor& x) { return x * 1; }
    static std::vector<Tensor> backward(AutogradContext*, std::vector<Tensor> grads) {
      return {grads[0] * NAN};
    }
  };
  mg::autograd::DetectAnomalyGuard anomaly;
  auto z = mg::tensor({1.0}).requires_grad_();
  std::string msg = error_of([&] { NanBackward::apply(z).sum().backward(); });
  EXPECT_NE(msg.find("produced nan in backward: NanBackwardBackward's gradient for input 0"),
            std::string::npos)
      << msg;
}

TEST(CustomFunction, IValueNamesTheWrongKind) {
  mg::autograd::IValue v(2.5);
  EXPECT_EQ(error_of([&] { v.toInt(); }), "[IValue] expected an int but it holds a double (toInt)");
  EXPECT_DOUBLE_EQ(mg::autograd::IValue(3).toDouble(), 3.0);
}

// The engine sums two gradients for one input in place when one of them is its own (PyTorch's
// InputBuffer::accumulate), never into a tensor someone else still holds: here a Function's
// backward returns a tensor it also keeps, and the other branch's gradient is added to y's
// buffer; the kept tensor must not change, and the sum must be right either way round.
namespace {
Tensor g_kept;
struct KeepGrad : mg::autograd::Function<KeepGrad> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x * 1.0; }
  static std::vector<Tensor> backward(AutogradContext*, std::vector<Tensor> grads) {
    g_kept = grads[0] * 1.0;  // a fresh tensor, also held by g_kept
    return {g_kept};
  }
};
}  // namespace

TEST(CustomFunction, EngineNeverSumsIntoAGradientSomeoneHolds) {
  for (bool kept_first : {true, false}) {
    Tensor x = mg::ones({4}).requires_grad_();
    Tensor y = x * 1.0;
    // y's gradient: 2 through KeepGrad (kept by g_kept), 3 through b. The engine runs the later
    // node first, so the creation order decides which gradient reaches y's buffer first.
    Tensor a, b;
    if (kept_first) {
      b = y * 3.0;
      a = KeepGrad::apply(y) * 2.0;
    } else {
      a = KeepGrad::apply(y) * 2.0;
      b = y * 3.0;
    }
    Tensor loss = (a + b).sum();
    loss.backward();
    EXPECT_EQ(x.grad().to_vector<double>(), std::vector<double>(4, 5.0)) << kept_first;
    EXPECT_EQ(g_kept.to_vector<double>(), std::vector<double>(4, 2.0)) << kept_first;
    g_kept = Tensor();
  }
}
