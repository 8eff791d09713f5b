// The engine and the autograd API: what the op table can't say. Expected values are worked out
// by hand (d(x*x)/dx = 2x) or come from PyTorch 1.13 (the Python line is in a comment).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/testing.h>

#include <cmath>
#include <sstream>
#include <string>
#include <thread>

namespace mg = minigrad;

namespace {

/// Expects `stmt` to throw minigrad::Error whose message starts with "[op]" and contains `part`.
template <typename F>
void expect_error(F&& stmt, const std::string& op, const std::string& part) {
  try {
    stmt();
    ADD_FAILURE() << "expected minigrad::Error from [" << op << "]";
  } catch (const mg::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[" + op + "]", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

}  // namespace

TEST(Autograd, ReuseAccumulatesThroughBothPaths) {
  mg::Tensor x = mg::tensor({3.0}).requires_grad_();
  mg::Tensor y = (x * x).sum();  // dy/dx = 2x = 6
  y.backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 6.0f);
}

TEST(Autograd, GradientsAccumulateAcrossBackwardCalls) {
  mg::Tensor x = mg::tensor({1.0, 2.0}).requires_grad_();
  (x * 3.0).sum().backward();
  (x * 3.0).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6.0f, 6.0f}));
}

// w = torch.ones(3, requires_grad=True); (w * 2).sum().backward(); g0 = w.grad
// (w * 3).sum().backward(); w.grad is g0, g0  -> True, tensor([5., 5., 5.])
// (w * 4).sum().backward(create_graph=True); w.grad is g0, w.grad  -> False, [9., 9., 9.]
TEST(Autograd, ASecondGradientIsAddedInPlaceOutsideCreateGraph) {
  mg::Tensor w = mg::ones({3}).requires_grad_();
  (w * 2.0).sum().backward();
  const mg::Tensor g0 = w.grad();
  (w * 3.0).sum().backward();
  EXPECT_TRUE(w.grad().is_same(g0));
  EXPECT_EQ(g0.to_vector<float>(), (std::vector<float>{5.0f, 5.0f, 5.0f}));
  (w * 4.0).sum().backward(mg::Tensor(), false, /*create_graph=*/true);
  EXPECT_FALSE(w.grad().is_same(g0));
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{9.0f, 9.0f, 9.0f}));
  EXPECT_EQ(g0.to_vector<float>(), (std::vector<float>{5.0f, 5.0f, 5.0f}));
}

// A .grad made by a create_graph backward holds the graph that saved its leaf (the cycle PyTorch
// warns about). A later plain backward replaces it with a detached sum, so that graph is freed:
// under LeakSanitizer (CI's ASan step) this test leaks if it is not. d(w * w)/dw = 2w, twice.
TEST(Autograd, APlainBackwardAfterCreateGraphDetachesTheGradient) {
  mg::Tensor w = mg::tensor({1.0, 2.0}).requires_grad_();
  mg::Tensor y = (w * w).sum();
  y.backward(mg::Tensor(), /*retain_graph=*/true, /*create_graph=*/true);
  EXPECT_TRUE(w.grad().requires_grad());
  y.backward();
  EXPECT_FALSE(w.grad().requires_grad());
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{4.0f, 8.0f}));
}

TEST(Autograd, GradIsUndefinedUntilFirstBackward) {
  mg::Tensor x = mg::tensor({1.0}).requires_grad_();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_TRUE(x.is_leaf());
  mg::Tensor y = x * 2.0;
  EXPECT_FALSE(y.is_leaf());
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
}

TEST(Autograd, SoftmaxPrintsItsGradFn) {
  // torch.softmax(torch.tensor([[0., 2.]], requires_grad=True), -1)
  //   -> tensor([[0.1192, 0.8808]], grad_fn=<SoftmaxBackward0>)
  mg::Tensor s = mg::softmax(mg::tensor({{0.0, 2.0}}).requires_grad_(), -1);
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "tensor([[0.1192, 0.8808]], grad_fn=<SoftmaxBackward0>)");
}

TEST(Autograd, BroadcastGradientIsReducedToInputShape) {
  // a (2, 3) + b (3,): b.grad = column sums of the upstream gradient = 2 each.
  mg::Tensor a = mg::ones({2, 3}).requires_grad_();
  mg::Tensor b = mg::ones({3}).requires_grad_();
  (a + b).sum().backward();
  EXPECT_EQ(b.grad().shape(), (mg::Shape{3}));
  EXPECT_EQ(b.grad().to_vector<float>(), (std::vector<float>{2, 2, 2}));
  EXPECT_EQ(a.grad().shape(), (mg::Shape{2, 3}));
}

TEST(Autograd, ChainOf100000OpsBackpropagatesWithoutRecursion) {
  mg::Tensor x = mg::tensor({1.0}, mg::kFloat64).requires_grad_();
  mg::Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  y = y * 2.0;
  y.sum().backward();
  EXPECT_DOUBLE_EQ(x.grad().item<double>(), 2.0);
  // Dropping the last handle destroys the 100,001 nodes iteratively (no stack overflow).
  y = mg::Tensor();
}

TEST(Autograd, SecondBackwardThroughFreedGraphThrows) {
  mg::Tensor x = mg::tensor({2.0}).requires_grad_();
  mg::Tensor y = (x * x).sum();
  y.backward();
  expect_error([&] { y.backward(); }, "backward", "retain_graph");
}

TEST(Autograd, RetainGraphAllowsASecondBackward) {
  mg::Tensor x = mg::tensor({2.0}).requires_grad_();
  mg::Tensor y = (x * x).sum();
  y.backward({}, /*retain_graph=*/true);
  y.backward();
  EXPECT_FLOAT_EQ(x.grad().item<float>(), 8.0f);  // 2 * (2x) at x = 2
}

TEST(Autograd, NonScalarBackwardNeedsAGradient) {
  mg::Tensor x = mg::ones({2, 2}).requires_grad_();
  mg::Tensor y = x * 2.0;
  expect_error([&] { y.backward(); }, "backward", "call backward(gradient)");
  y.backward(mg::full({2, 2}, 0.5));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
}

TEST(Autograd, BackwardWhenNothingRequiresGradThrows) {
  mg::Tensor x = mg::ones({2});
  expect_error([&] { x.sum().backward(); }, "backward", "does not require grad");
}

TEST(Autograd, GradientOfWrongShapeThrows) {
  mg::Tensor x = mg::ones({2}).requires_grad_();
  expect_error([&] { (x * 2.0).backward(mg::ones({3})); }, "backward", "(3,)");
}

TEST(Autograd, RequiresGradOnIntegerTensorThrows) {
  mg::Tensor i = mg::tensor({1.0, 2.0}, {2}, mg::kInt64);
  expect_error([&] { i.requires_grad_(); }, "requires_grad_", "int64");
}

TEST(Autograd, NoGradGuardRecordsNothingAndIsThreadLocal) {
  mg::Tensor x = mg::ones({2}).requires_grad_();
  {
    mg::NoGradGuard no_grad;
    mg::Tensor y = x * 2.0;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FALSE(y.grad_fn());
    bool other_thread_enabled = false;
    std::thread t([&] { other_thread_enabled = mg::is_grad_enabled(); });
    t.join();
    EXPECT_TRUE(other_thread_enabled);
  }
  EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(Autograd, DetachCutsTheGraphButSharesData) {
  mg::Tensor x = mg::ones({2}).requires_grad_();
  mg::Tensor d = (x * 2.0).detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_leaf());
}

TEST(Autograd, RetainGradKeepsNonLeafGradient) {
  mg::Tensor x = mg::tensor({1.0, 2.0}).requires_grad_();
  mg::Tensor h = x * 3.0;
  h.retain_grad();
  (h * h).sum().backward();  // d/dh = 2h = [6, 12]; d/dx = 3 * 2h = [18, 36]
  EXPECT_EQ(h.grad().to_vector<float>(), (std::vector<float>{6, 12}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{18, 36}));
}

TEST(Autograd, HooksSeeAndReplaceGradients) {
  mg::Tensor x = mg::tensor({1.0, 2.0}).requires_grad_();
  std::vector<float> seen;
  x.register_hook([&](const mg::Tensor& g) {
    seen = g.to_vector<float>();
    return g * 10.0;
  });
  mg::Tensor h = x * 2.0;
  h.register_hook([](const mg::Tensor& g) { return g + 1.0; });
  h.sum().backward();
  // h's hook turns the ones into twos, MulBackward doubles them, x's hook scales by 10.
  EXPECT_EQ(seen, (std::vector<float>{4, 4}));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{40, 40}));
}

TEST(Autograd, LeafHookRegisteredWhileAGraphIsAliveRunsInEveryLaterBackward) {
  // x = torch.ones(2, requires_grad=True); y = (x * 3).sum(); x.register_hook(...);
  // three backward passes (the first through y): PyTorch calls the hook 3 times.
  mg::Tensor x = mg::ones({2}).requires_grad_();
  mg::Tensor y = (x * 3.0).sum();
  int calls = 0;
  x.register_hook([&](const mg::Tensor&) {
    ++calls;
    return mg::Tensor();
  });
  y.backward();
  (x * 3.0).sum().backward();
  (x * 3.0).sum().backward();
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{9, 9}));
}

TEST(Autograd, PostAccumulateGradHookSeesTheAccumulatedGradient) {
  // x = torch.ones(2, requires_grad=True)
  // x.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))  (PyTorch 2.1)
  // (x * 3).sum().backward(); (x * x).sum().backward()  -> seen == [[3, 3], [5, 5]]
  mg::Tensor x = mg::ones({2}).requires_grad_();
  std::vector<std::vector<float>> seen;
  x.register_post_accumulate_grad_hook([&](const mg::Tensor& p) {
    EXPECT_TRUE(p.is_alias_of(x));
    seen.push_back(p.grad().to_vector<float>());
  });
  (x * 3.0).sum().backward();
  (x * x).sum().backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], (std::vector<float>{3, 3}));
  EXPECT_EQ(seen[1], (std::vector<float>{5, 5}));
  // autograd::grad does not accumulate, so the hook does not run.
  mg::autograd::grad({(x * 2.0).sum()}, {x});
  EXPECT_EQ(seen.size(), 2u);
  mg::Tensor y = x * 2.0;
  expect_error([&] { y.register_post_accumulate_grad_hook([](const mg::Tensor&) {}); },
               "register_post_accumulate_grad_hook",
               "post accumulate grad hooks cannot be registered on non-leaf tensors");
  expect_error([&] { mg::ones({2}).register_post_accumulate_grad_hook([](const mg::Tensor&) {}); },
               "register_post_accumulate_grad_hook", "doesn't require gradient");
}

TEST(Autograd, FunctionalGradDoesNotTouchDotGrad) {
  mg::Tensor x = mg::tensor({2.0}, mg::kFloat64).requires_grad_();
  mg::Tensor y = (x * x * x).sum();  // dy/dx = 3x^2 = 12
  auto g = mg::autograd::grad({y}, {x});
  EXPECT_DOUBLE_EQ(g[0].item<double>(), 12.0);
  EXPECT_FALSE(x.grad().defined());
}

TEST(Autograd, CreateGraphGivesSecondDerivative) {
  mg::Tensor x = mg::tensor({2.0}, mg::kFloat64).requires_grad_();
  mg::Tensor y = (x * x * x).sum();
  auto g = mg::autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_TRUE(g[0].requires_grad());
  auto gg = mg::autograd::grad({g[0].sum()}, {x});  // d2y/dx2 = 6x = 12
  EXPECT_DOUBLE_EQ(gg[0].item<double>(), 12.0);
}

TEST(Autograd, BackwardWithCreateGraphThroughSoftmax) {
  // torch: x = torch.tensor([0., 2.], dtype=torch.float64, requires_grad=True)
  //        s = torch.softmax(x, 0)[1]; g, = torch.autograd.grad(s, x, create_graph=True)
  //        g -> [-0.104993585403507, 0.104993585403507]
  //        torch.autograd.grad(g[1], x)[0] -> [0.07996250105615302, -0.07996250105615312]
  mg::Tensor x = mg::tensor({0.0, 2.0}, mg::kFloat64).requires_grad_();
  mg::Tensor s = mg::softmax(x, 0).select(0, 1);
  auto g = mg::autograd::grad({s}, {x}, {}, std::nullopt, true);
  auto gv = g[0].to_vector<double>();
  EXPECT_NEAR(gv[0], -0.104993585403507, 1e-12);
  EXPECT_NEAR(gv[1], 0.104993585403507, 1e-12);
  auto gg = mg::autograd::grad({g[0].select(0, 1)}, {x})[0].to_vector<double>();
  EXPECT_NEAR(gg[0], 0.07996250105615302, 1e-12);
  EXPECT_NEAR(gg[1], -0.07996250105615312, 1e-12);
}

TEST(Autograd, UnusedInputNeedsAllowUnused) {
  mg::Tensor x = mg::ones({1}).requires_grad_();
  mg::Tensor z = mg::ones({1}).requires_grad_();
  mg::Tensor y = (x * 2.0).sum();
  expect_error([&] { mg::autograd::grad({y}, {z}, {}, true); }, "grad", "allow_unused");
  auto g = mg::autograd::grad({y}, {z}, {}, true, false, /*allow_unused=*/true);
  EXPECT_FALSE(g[0].defined());
}

TEST(Autograd, SavedOutputsDoNotKeepTheirOwnGraphAlive) {
  // exp saves its output; the output must not own its grad_fn through that saved copy.
  std::weak_ptr<mg::Node> node;
  {
    mg::Tensor x = mg::ones({3}).requires_grad_();
    mg::Tensor y = mg::exp(x);
    node = y.grad_fn();
    EXPECT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());
}

TEST(Autograd, ViewsShareStorageAndBackpropagate) {
  mg::Tensor x = mg::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}).requires_grad_();
  mg::Tensor t = x.transpose(0, 1);
  EXPECT_EQ(t.data_ptr<float>(), x.data_ptr<float>());
  EXPECT_FALSE(t.is_contiguous());
  (t.narrow(0, 1, 2) * 2.0).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 2, 2, 0, 2, 2}));
}

TEST(Autograd, GradcheckReportsTheMismatch) {
  // A function whose "backward" is wrong: detach() hides half of y = x * x from autograd.
  mg::Tensor x = mg::tensor({1.0, 2.0}, mg::kFloat64).requires_grad_();
  auto wrong = [](const std::vector<mg::Tensor>& in) { return in[0] * in[0].detach(); };
  auto r = mg::autograd::gradcheck_report(wrong, {x});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.message.find("input 0"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("analytic 1"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("numeric 2"), std::string::npos) << r.message;
  auto right = [](const std::vector<mg::Tensor>& in) { return in[0] * in[0]; };
  EXPECT_TRUE(mg::autograd::gradcheck(right, {x}));
  EXPECT_GRADCHECK(right, {x});
}

TEST(Autograd, GradcheckNeedsFloat64) {
  mg::Tensor x = mg::ones({2}).requires_grad_();
  auto f = [](const std::vector<mg::Tensor>& in) { return in[0] * 2.0; };
  expect_error([&] { mg::autograd::gradcheck(f, {x}); }, "gradcheck", "float64");
}

TEST(Autograd, AttentionStepGradchecks) {
  // The lesson's attention with projections, in float64: softmax(q k^T / sqrt(d)) v.
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({2, 4, 3}, mg::kFloat64);
  mg::Tensor wq = mg::randn({3, 3}, mg::kFloat64).requires_grad_();
  mg::Tensor wk = mg::randn({3, 3}, mg::kFloat64).requires_grad_();
  mg::Tensor wv = mg::randn({3, 2}, mg::kFloat64).requires_grad_();
  auto attention = [x](const std::vector<mg::Tensor>& w) {
    mg::Tensor q = mg::matmul(x, w[0]), k = mg::matmul(x, w[1]), v = mg::matmul(x, w[2]);
    mg::Tensor scores = mg::matmul(q, k.transpose(-2, -1)) / std::sqrt(3.0);
    return mg::matmul(mg::softmax(scores, -1), v);
  };
  EXPECT_GRADCHECK(attention, {wq, wk, wv});
  EXPECT_GRADGRADCHECK(attention, {wq, wk, wv});
}

// A hook that registers more hooks on its own tensor: the engine must not iterate the hook list by
// reference while it grows (a heap-use-after-free under ASan before). The new hooks run from the
// next backward on.
TEST(Autograd, AHookThatRegistersHooksOnItsTensorIsSafe) {
  auto x = mg::tensor({1.0, 2.0}).requires_grad_();
  auto y = x * 2;
  int calls = 0;
  y.register_hook([&](const mg::Tensor&) {
    ++calls;
    for (int i = 0; i < 16; ++i)
      y.register_hook([&](const mg::Tensor&) {
        ++calls;
        return mg::Tensor();
      });
    return mg::Tensor();
  });
  y.sum().backward(mg::Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}

// A tied embedding (the weight also used as a head, as GPT-2's): its gradient is the head's plus
// the embedding's (embedding_dense_backward's, Note [Embedding's backward] in ops/nn.cpp), summed
// by the engine, with the same bits as the two gradients computed apart and added (rows of a
// repeated index summed first), and hooks see the sum once. Each dtype, with and without
// padding_idx.
TEST(Autograd, TiedEmbeddingGetsTheSumOfBothGradients) {
  mg::manual_seed(3);
  const std::int64_t num = 50, dim = 8;
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    for (std::optional<std::int64_t> pad : {std::optional<std::int64_t>{}, {3}}) {
      mg::Tensor w = mg::randn({num, dim}).to(dt).requires_grad_();
      mg::Tensor idx = mg::tensor({3.0, 7.0, 3.0, 0.0, 49.0, 3.0, 7.0}).to(mg::kInt64);
      mg::Tensor a = mg::randn({7, dim}).to(dt), x = mg::randn({5, dim}).to(dt);
      mg::Tensor b = mg::randn({5, num}).to(dt);
      auto emb_term = [&] { return (mg::embedding(idx, w, pad) * a).sum(); };
      auto head_term = [&] { return (mg::matmul(x, w.t()) * b).sum(); };
      // Apart: each term's gradient alone (the embedding's into zeros), then head + embedding.
      mg::Tensor apart =
          mg::autograd::grad({head_term()}, {w})[0] + mg::autograd::grad({emb_term()}, {w})[0];
      // Tied: one backward through both. The embedding is recorded first, as in a model, so the
      // head's nodes (later) run first and its gradient is in the buffer when the embedding's runs.
      int hook_calls = 0;
      w.register_hook([&](const mg::Tensor& g) {
        ++hook_calls;
        return g;
      });
      mg::Tensor emb = emb_term();
      (emb + head_term()).backward();
      EXPECT_EQ(hook_calls, 1);
      const auto got = w.grad().to(mg::kFloat64).to_vector<double>();
      const auto want = apart.to(mg::kFloat64).to_vector<double>();
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << mg::dtype_name(dt) << " element " << i;
    }
  }
}
