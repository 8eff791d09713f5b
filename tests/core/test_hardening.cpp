// Hardening: deep and wide graphs, nothing left alive after backward, flat memory over many
// training steps, numerical edge cases against PyTorch, and threads.
//
// Expected values are PyTorch 1.13's (/usr/bin/python3), quoted next to each check.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/test_util.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

constexpr bool kSanitized = minigrad::testing::kUnderAsan;
constexpr bool kThreadSanitized = minigrad::testing::kUnderTsan;

/// Resident memory of this process in KiB (VmRSS), or -1 where /proc is missing.
long resident_kib(const char* field = "VmRSS:") {
  std::ifstream in("/proc/self/status");
  std::string key;
  long value = -1;
  while (in >> key) {
    if (key == field) {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- deep and wide graphs

// A 1,000,000-op chain: backward (iterative engine) and destruction (iterative, Note [Iterative
// graph destruction]) run under the default 8 MB stack. Prints the time and memory per node.
TEST(DeepGraph, MillionOpChain) {
  constexpr int kOps = 1000000;
  const std::int64_t nodes_before = mg::autograd::live_node_count();
  const long rss_before = resident_kib();
  auto t0 = std::chrono::steady_clock::now();
  mg::Tensor x = mg::tensor({1.0}).requires_grad_();
  mg::Tensor y = x;
  for (int i = 0; i < kOps; ++i) y = y * 1.0;
  const double build_s = seconds_since(t0);
  const long rss_built = resident_kib();
  // One node per op, plus the leaf's AccumulateGrad (created at its first use, as PyTorch).
  EXPECT_EQ(mg::autograd::live_node_count() - nodes_before, kOps + 1);
  t0 = std::chrono::steady_clock::now();
  y.sum().backward();
  const double backward_s = seconds_since(t0);
  EXPECT_DOUBLE_EQ(x.grad().item<double>(), 1.0);
  t0 = std::chrono::steady_clock::now();
  y = mg::Tensor();
  const double free_s = seconds_since(t0);
  EXPECT_EQ(mg::autograd::live_node_count(), nodes_before);
  std::printf(
      "1,000,000-op chain: build %.2f s, backward %.2f s, free %.2f s; %.0f bytes of resident "
      "memory per op (node + output tensor)%s\n",
      build_s, backward_s, free_s,
      rss_before > 0 ? static_cast<double>(rss_built - rss_before) * 1024.0 / kOps : 0.0,
      kSanitized ? " (under ASan: sizes include its redzones)" : "");
}

// Dropping a long graph that never ran backward frees it iteratively too.
TEST(DeepGraph, DroppingAnUnusedChainDoesNotRecurse) {
  const std::int64_t nodes_before = mg::autograd::live_node_count();
  {
    mg::Tensor x = mg::zeros({2}).requires_grad_();
    mg::Tensor y = x;
    for (int i = 0; i < 300000; ++i) y = y + 1.0;
  }
  EXPECT_EQ(mg::autograd::live_node_count(), nodes_before);
}

// One leaf used by 100,000 ops that all meet in one stack: the leaf's AccumulateGrad receives
// 100,000 gradients.
TEST(DeepGraph, HundredThousandWayFanIn) {
  constexpr int kWays = 100000;
  mg::Tensor x = mg::tensor({1.0, 2.0}).requires_grad_();
  std::vector<mg::Tensor> uses;
  uses.reserve(kWays);
  for (int i = 0; i < kWays; ++i) uses.push_back(x * static_cast<double>(i % 3));
  mg::Tensor total = mg::stack(uses).sum();
  total.backward();
  // d total / d x_j = sum_i (i % 3) = 33333 * (0 + 1 + 2) + (99999 % 3 == 0 ? 0 : ...) = 99999.
  double expected = 0;
  for (int i = 0; i < kWays; ++i) expected += i % 3;
  std::vector<float> g = x.grad().to_vector<float>();
  EXPECT_FLOAT_EQ(g[0], static_cast<float>(expected));
  EXPECT_FLOAT_EQ(g[1], static_cast<float>(expected));
}

// ---------------------------------------------------------------- nothing stays alive

struct TwoLayer : nn::Module {
  nn::Linear fc1{4, 8}, fc2{8, 2};
  TwoLayer() : nn::Module("TwoLayer") {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::tanh(fc1(x))); }
};

TEST(Memory, BackwardFreesEveryNodeAndSavedTensor) {
  mg::manual_seed(0);
  TwoLayer model;
  mg::Tensor x = mg::randn({16, 4}), target = mg::randn({16, 2});
  mg::optim::SGD opt(model.parameters(), mg::optim::SGDOptions(0.1));
  // A first step creates the grads that then stay (as in PyTorch, set_to_none frees them).
  auto step = [&] {
    opt.zero_grad();
    mg::Tensor loss = nn::functional::mse_loss(model(x), target);
    loss.backward();
    opt.step();
  };
  step();
  const std::int64_t nodes = mg::autograd::live_node_count();
  const std::int64_t storages = mg::live_storage_count();
  for (int i = 0; i < 5; ++i) step();
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
  EXPECT_EQ(mg::live_storage_count(), storages);

  // With retain_graph the graph and its saved tensors stay until the last handle goes.
  {
    mg::Tensor loss = nn::functional::mse_loss(model(x), target);
    loss.backward({}, /*retain_graph=*/true);
    EXPECT_GT(mg::autograd::live_node_count(), nodes);
    EXPECT_GT(mg::live_storage_count(), storages);
    loss.backward();  // a second backward through the retained graph works
  }
  opt.zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
  EXPECT_EQ(mg::live_storage_count(), storages);
}

TEST(Memory, SavedTensorsAreReleasedByBackwardEvenWhileTheOutputLives) {
  mg::Tensor x = mg::randn({64, 64}).requires_grad_();
  mg::Tensor y = mg::exp(x).sum();  // exp saves its output
  const std::int64_t storages = mg::live_storage_count();
  y.backward();
  // The saved exp(x) and the gradient buffers of the intermediate are gone; x.grad is new.
  EXPECT_LE(mg::live_storage_count(), storages);
  EXPECT_THROW(y.backward(), mg::Error);  // freed graph: a clear error, not a crash
}

// 10,000 steps of the learn_projections training keep resident memory flat.
TEST(Memory, TenThousandTrainingStepsKeepMemoryFlat) {
  struct Attention : nn::Module {
    nn::Linear W_q{3, 3, false}, W_k{3, 3, false};
    Attention() : nn::Module("Attention") {
      register_module("W_q", W_q);
      register_module("W_k", W_k);
    }
  };
  mg::manual_seed(0);
  Attention model;
  mg::Tensor X = mg::tensor({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}, {0.0, 1.0, 0.0}});
  mg::Tensor target = mg::tensor({{0.0, 0.5, 0.0, 0.5},
                                  {0.25, 0.25, 0.25, 0.25},
                                  {0.25, 0.25, 0.25, 0.25},
                                  {0.25, 0.25, 0.25, 0.25}});
  mg::optim::Adam opt(model.parameters(), mg::optim::AdamOptions(0.01));
  long rss_1000 = 0, rss_10000 = 0;
  std::int64_t nodes_1000 = 0, storages_1000 = 0;
  for (int step = 1; step <= 10000; ++step) {
    {
      mg::Tensor scores = mg::matmul(model.W_q(X), model.W_k(X).transpose(-2, -1));
      mg::Tensor loss = -(target * mg::log_softmax(scores, -1)).sum(-1).mean();
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    if (step == 1000) {
      rss_1000 = resident_kib();
      nodes_1000 = mg::autograd::live_node_count();
      storages_1000 = mg::live_storage_count();
    }
  }
  rss_10000 = resident_kib();
  EXPECT_EQ(mg::autograd::live_node_count(), nodes_1000);
  EXPECT_EQ(mg::live_storage_count(), storages_1000);
  std::printf(
      "learn_projections training: resident memory %ld KiB at step 1,000, %ld KiB at "
      "step 10,000\n",
      rss_1000, rss_10000);
  if (!kSanitized && rss_1000 > 0) {
    EXPECT_LE(rss_10000 - rss_1000, 1024) << "grew by more than 1 MiB";
  }
}

// ---------------------------------------------------------------- numerical edge cases

std::vector<float> values(const mg::Tensor& t) { return t.to_vector<float>(); }

void expect_same(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " is " << got[i] << ", want nan";
    else if (std::isinf(want[i]))
      EXPECT_EQ(got[i], static_cast<float>(want[i])) << "element " << i;
    else
      EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, std::fabs(want[i]))) << "element " << i;
  }
}

TEST(Numerics, HugeLogits) {
  // x = torch.tensor([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]], requires_grad=True)
  mg::Tensor x = mg::tensor({{1e4, -1e4, 0.0}, {-1e4, -1e4, -1e4}}).requires_grad_();
  // torch.softmax(x, -1)
  expect_same(values(mg::softmax(x, -1)),
              {1.0, 0.0, 0.0, 0.3333333432674408, 0.3333333432674408, 0.3333333432674408});
  // torch.log_softmax(x, -1)
  expect_same(values(mg::log_softmax(x, -1)), {0.0, -20000.0, -10000.0, -1.0986123085021973,
                                               -1.0986123085021973, -1.0986123085021973});
  // torch.logsumexp(x, -1)
  expect_same(values(mg::logsumexp(x, {-1})), {10000.0, -9998.9013671875});
  // l = F.cross_entropy(x, torch.tensor([1, 2])); l.backward()
  mg::Tensor l = nn::functional::cross_entropy(x, mg::tensor({1, 2}, mg::kInt64));
  l.backward();
  expect_same(values(l), {10000.548828125});
  expect_same(values(x.grad()),
              {0.5, -0.5, 0.0, 0.1666666567325592, 0.1666666567325592, -0.3333333432674408});
}

TEST(Numerics, MinusInfinityMasksAndFullyMaskedRows) {
  // m = torch.tensor([[0.0, -inf, 1.0], [-inf, -inf, -inf]])
  mg::Tensor m = mg::tensor({{0.0, -kInf, 1.0}, {-kInf, -kInf, -kInf}});
  // A fully masked row is NaN in PyTorch too (0 / 0): documented in docs/errors.md.
  expect_same(values(mg::softmax(m, -1)),
              {0.2689414322376251, 0.0, 0.7310585975646973, NAN, NAN, NAN});
  expect_same(values(mg::log_softmax(m, -1)),
              {-1.31326162815094, -kInf, -0.31326165795326233, NAN, NAN, NAN});
  expect_same(values(mg::logsumexp(m, {-1})), {1.31326162815094, -kInf});
  // m3 = torch.tensor([[0.0, -inf, 1.0]], requires_grad=True)
  // (torch.softmax(m3, -1) * torch.tensor([[1., 2., 3.]])).sum().backward()
  mg::Tensor m3 = mg::tensor({{0.0, -kInf, 1.0}}).requires_grad_();
  (mg::softmax(m3, -1) * mg::tensor({{1.0, 2.0, 3.0}})).sum().backward();
  expect_same(values(m3.grad()), {-0.3932238817214966, 0.0, 0.3932238519191742});
}

TEST(Numerics, Float32OverflowGivesInfinity) {
  // torch.exp(torch.tensor([89.0, 100.0, -200.0]))
  expect_same(values(mg::exp(mg::tensor({89.0, 100.0, -200.0}))), {kInf, kInf, 0.0});
}

TEST(Numerics, GradientsAtZero) {
  // z = torch.tensor([0.0, 4.0], requires_grad=True); torch.sqrt(z).sum().backward()
  mg::Tensor z = mg::tensor({0.0, 4.0}).requires_grad_();
  mg::sqrt(z).sum().backward();
  expect_same(values(z.grad()), {kInf, 0.25});
  // torch.log(z).sum().backward(); torch.log(torch.tensor([0.0]))
  mg::Tensor w = mg::tensor({0.0, 4.0}).requires_grad_();
  mg::Tensor lw = mg::log(w);
  expect_same(values(lw), {-kInf, 1.3862943611198906});
  lw.sum().backward();
  expect_same(values(w.grad()), {kInf, 0.25});
  // (torch.sqrt(z) * 0).sum().backward() gives nan: 0 * inf
  mg::Tensor u = mg::tensor({0.0}).requires_grad_();
  (mg::sqrt(u) * 0.0).sum().backward();
  expect_same(values(u.grad()), {NAN});
}

TEST(Numerics, Int64ArithmeticWrapsAroundAsPyTorch) {
  // Fuzz finding F1: int64 overflow was signed overflow (undefined behaviour); PyTorch wraps.
  // Expected values from PyTorch 1.13: a = torch.tensor([2**63 - 1, -2**63, 3]); a + 1, a - 2,
  // a * 2, -a, a.abs(), a.sum(), torch.tensor([3, -7]) ** 40, torch.tensor([1, -1]) ** 2**62,
  // torch.tensor([[M, M]]) @ torch.tensor([[2], [3]]), zeros(2).scatter_add(0, [0, 0], [M, 5]).
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  mg::Tensor a = mg::tensor({kMax, kMin, std::int64_t{3}}, mg::kInt64);
  auto v = [](const mg::Tensor& t) { return t.to_vector<std::int64_t>(); };
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(v(a), (V{kMax, kMin, 3}));  // tensor() keeps int64 values exact
  EXPECT_EQ(v(a + 1), (V{kMin, -9223372036854775807, 4}));
  EXPECT_EQ(v(a - 2), (V{9223372036854775805, 9223372036854775806, 1}));
  EXPECT_EQ(v(a * 2), (V{-2, 0, 6}));
  EXPECT_EQ(v(-a), (V{-9223372036854775807, kMin, -3}));
  EXPECT_EQ(v(mg::abs(a)), (V{kMax, kMin, 3}));
  EXPECT_EQ(a.sum().item<std::int64_t>(), 2);
  EXPECT_EQ(v(mg::pow(mg::tensor({std::int64_t{3}, std::int64_t{-7}}, mg::kInt64), 40)),
            (V{-6289078614652622815, -6212923193149656639}));
  // A huge exponent takes log2(exponent) steps (it used to loop 2^62 times).
  EXPECT_EQ(v(mg::pow(mg::tensor({std::int64_t{1}, std::int64_t{-1}}, mg::kInt64),
                      mg::Scalar(std::int64_t{1} << 62))),
            (V{1, 1}));
  mg::Tensor m = mg::tensor({kMax, kMax}, mg::kInt64).reshape({1, 2});
  mg::Tensor c = mg::tensor({std::int64_t{2}, std::int64_t{3}}, mg::kInt64).reshape({2, 1});
  EXPECT_EQ(v(mg::matmul(m, c)), (V{9223372036854775803}));
  mg::Tensor sa = mg::scatter_add(mg::zeros({2}, mg::kInt64), 0,
                                  mg::tensor({std::int64_t{0}, std::int64_t{0}}, mg::kInt64),
                                  mg::tensor({kMax, std::int64_t{5}}, mg::kInt64));
  EXPECT_EQ(v(sa), (V{-9223372036854775804, 0}));
}

// ---------------------------------------------------------------- threads

TEST(Threads, GradModeIsPerThread) {
  mg::Tensor x = mg::ones({2}).requires_grad_();
  mg::NoGradGuard no_grad;
  bool other_thread_records = false;
  std::thread t([&] { other_thread_records = (x * 2.0).requires_grad(); });
  t.join();
  EXPECT_TRUE(other_thread_records);
  EXPECT_FALSE((x * 2.0).requires_grad());
}

/// Trains a small model from its current weights for `steps` and returns the losses.
std::vector<double> train(TwoLayer& model, const mg::Tensor& x, const mg::Tensor& target,
                          int steps) {
  mg::optim::Adam opt(model.parameters(), mg::optim::AdamOptions(0.01));
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    mg::Tensor loss = nn::functional::mse_loss(model(x), target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

// Live counts are kept per thread (Note [Live counts]): a graph built on one thread and freed on
// another, and two threads building and freeing graphs at once, leave both counts where they were.
TEST(Threads, LiveCountsSurviveCrossThreadFreesAndConcurrentGraphs) {
  const std::int64_t nodes = mg::autograd::live_node_count();
  const std::int64_t storages = mg::live_storage_count();
  mg::Tensor y;
  std::thread maker([&] {
    mg::Tensor x = mg::ones({3}).requires_grad_();
    y = (x * 2.0).exp().sum();
  });
  maker.join();
  EXPECT_EQ(mg::autograd::live_node_count() - nodes, 4);  // exp, mul, sum, x's AccumulateGrad
  y = mg::Tensor();                                       // freed on this thread
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
  EXPECT_EQ(mg::live_storage_count(), storages);

  auto churn = [] {
    mg::Tensor w = mg::ones({4, 4}).requires_grad_();
    for (int i = 0; i < 20000; ++i) (w.matmul(w) + 1.0).sum().backward();
  };
  std::thread ta(churn), tb(churn);
  ta.join();
  tb.join();
  EXPECT_EQ(mg::autograd::live_node_count(), nodes);
  EXPECT_EQ(mg::live_storage_count(), storages);
}

TEST(Threads, TwoModelsTrainedAtOnceMatchSequentialTraining) {
  // The models and data are drawn on this thread (the default generator is shared: see
  // ThreadRules below); the training itself draws nothing.
  auto make = [](std::uint64_t seed, std::unique_ptr<TwoLayer>& m, mg::Tensor& x, mg::Tensor& y) {
    mg::manual_seed(seed);
    m = std::make_unique<TwoLayer>();
    x = mg::randn({32, 4});
    y = mg::randn({32, 2});
  };
  std::unique_ptr<TwoLayer> a, b, a2, b2;
  mg::Tensor xa, ya, xb, yb;
  make(1, a, xa, ya);
  make(2, b, xb, yb);
  std::vector<double> seq_a = train(*a, xa, ya, 300), seq_b = train(*b, xb, yb, 300);

  make(1, a2, xa, ya);
  make(2, b2, xb, yb);
  std::vector<double> par_a, par_b;
  std::thread ta([&] { par_a = train(*a2, xa, ya, 300); });
  std::thread tb([&] { par_b = train(*b2, xb, yb, 300); });
  ta.join();
  tb.join();
  EXPECT_EQ(par_a, seq_a);  // bit for bit
  EXPECT_EQ(par_b, seq_b);
  EXPECT_EQ(a2->fc1->weight.to_vector<float>(), a->fc1->weight.to_vector<float>());
}

// The default generator is one stream shared by all threads, each draw taken under a lock: draws
// from two threads interleave in an unspecified order, but each tensor is one contiguous piece
// of the stream, and nothing is lost or drawn twice.
TEST(Threads, DefaultGeneratorDrawsAreAtomic) {
  constexpr int kDraws = 2000;
  mg::manual_seed(7);
  std::multiset<std::vector<float>> sequential;
  for (int i = 0; i < 2 * kDraws; ++i) sequential.insert(mg::rand({20}).to_vector<float>());

  mg::manual_seed(7);
  std::vector<std::vector<float>> from_a, from_b;
  auto draw = [](std::vector<std::vector<float>>& out) {
    for (int i = 0; i < kDraws; ++i) out.push_back(mg::rand({20}).to_vector<float>());
  };
  std::thread ta(draw, std::ref(from_a)), tb(draw, std::ref(from_b));
  ta.join();
  tb.join();
  std::multiset<std::vector<float>> parallel(from_a.begin(), from_a.end());
  parallel.insert(from_b.begin(), from_b.end());
  EXPECT_EQ(parallel, sequential);
}

}  // namespace

// ---------------------------------------------------------------- second pass (issue 18)
// Expected values from PyTorch 1.13 (/usr/bin/python3), the Python in a comment.

using minigrad::testing::error_of;

// torch.relu(torch.tensor([1., nan, -1.])) -> [1., nan, 0.]; its gradient -> [1., 1., 0.]
TEST(HardeningNaN, ReluKeepsNaNAndPassesItsGradient) {
  namespace mg = minigrad;
  auto x = mg::tensor({1.0, std::nan(""), -1.0}).requires_grad_();
  auto y = x.relu();
  auto v = y.to_vector<float>();
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 0.0f);
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 1, 0}));
}

// x = torch.tensor([1., nan, 3.], requires_grad=True); x.max().backward() -> x.grad [0., 1., 0.]
TEST(HardeningNaN, MaxSendsItsGradientToTheNaN) {
  namespace mg = minigrad;
  auto x = mg::tensor({1.0, std::nan(""), 3.0}).requires_grad_();
  x.max().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 1, 0}));
  auto y = mg::tensor({1.0, std::nan(""), 3.0}).requires_grad_();
  y.min().backward();
  EXPECT_EQ(y.grad().to_vector<float>(), (std::vector<float>{0, 1, 0}));
}

TEST(HardeningMemory, PrintingSurvivesHugeEdgeitemsAndManyDims) {
  namespace mg = minigrad;
  mg::PrintOptions saved = mg::get_printoptions();
  mg::PrintOptions opts = saved;
  opts.threshold = 0;
  opts.edgeitems = std::int64_t{1} << 62;
  mg::set_printoptions(opts);
  std::ostringstream a;
  a << mg::tensor({1.0, 2.0, 3.0, 4.0, 5.0});
  mg::set_printoptions(saved);
  EXPECT_EQ(a.str(), "tensor([1., 2., 3., 4., 5.])");
  // 100 dims: more than the printer recurses into.
  mg::Shape many(100, 1);
  std::ostringstream b;
  b << mg::ones({1}).reshape(many);
  EXPECT_EQ(b.str(), "tensor([... 100 dims, more than the 64 the printer shows ...])");
}

TEST(HardeningMemory, DeeplyNestedModulesThrowInsteadOfOverflowingTheStack) {
  namespace mg = minigrad;
  // 100,000 deep, as in issue 18: destroying the tree at the end must not overflow the stack
  // either (Module's destructor is iterative; it used to recurse once per level and crash).
  auto root = std::make_shared<mg::nn::SequentialImpl>();
  auto cur = root;
  for (int i = 0; i < 100000; ++i) {
    auto next = std::make_shared<mg::nn::SequentialImpl>();
    cur->push_back(mg::nn::AnyModule(next));
    cur = next;
  }
  EXPECT_EQ(error_of([&] { root->parameters(); }),
            "[named_parameters] Sequential: modules are nested more than 1000 levels deep");
}

// a = torch.tensor([1., 2.], requires_grad=True); b = ...; (a +
// b).sum().backward(create_graph=True)
// -> a.grad is b.grad: False
// Note [Out of memory]: a graph built under a memory cap (RLIMIT_AS, in a forked child: the cap
// is the process's) ends in minigrad::Error, never std::bad_alloc. The case: a 1e7-node
// chain; with 256 MiB above what the process maps now it stops after a few hundred thousand.
TEST(HardeningMemory, RunningOutOfMemoryWhileBuildingAGraphIsAnError) {
  if (kSanitized || kThreadSanitized)
    GTEST_SKIP() << "the sanitizers' shadow memory does not fit under an address-space cap";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    std::string result = "no error";
    long mapped_pages = 0;
    std::ifstream("/proc/self/statm") >> mapped_pages;
    const rlim_t cap = static_cast<rlim_t>(mapped_pages) * static_cast<rlim_t>(getpagesize()) +
                       (rlim_t{256} << 20);
    const rlimit limit{cap, cap};
    if (setrlimit(RLIMIT_AS, &limit) != 0) result = "setrlimit failed";
    try {
      mg::Tensor y = mg::ones({1}).requires_grad_();
      for (int i = 0; i < 10'000'000; ++i) y = y * 1.0001;
    } catch (const mg::Error& e) {
      result = e.what();
    } catch (const std::bad_alloc&) {
      result = "std::bad_alloc";
    }
    [[maybe_unused]] const ssize_t n = write(fds[1], result.data(), result.size());
    _exit(0);
  }
  close(fds[1]);
  std::string result;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) result.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(result.rfind("[alloc] out of memory", 0), 0u) << result;
  EXPECT_NE(result.find(" autograd graph nodes alive (a graph kept across steps grows until "
                        "memory runs out: call backward() on it, detach() what you keep, or build "
                        "it under NoGradGuard)"),
            std::string::npos)
      << result;
}

TEST(HardeningAutograd, CreateGraphGradientsAreNotShared) {
  namespace mg = minigrad;
  auto a = mg::tensor({1.0, 2.0}).requires_grad_();
  auto b = mg::tensor({3.0, 4.0}).requires_grad_();
  (a + b).sum().backward(mg::Tensor(), false, /*create_graph=*/true);
  EXPECT_FALSE(a.grad().is_alias_of(b.grad()));
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{1, 1}));
}

// torch.zeros(2, 0, 4).is_contiguous() -> True; torch.tensor([True, False]).dtype -> torch.bool
TEST(HardeningParity, EmptyTensorsAreContiguousAndBoolListsAreBool) {
  namespace mg = minigrad;
  EXPECT_TRUE(mg::zeros({2, 0, 4}).is_contiguous());
  EXPECT_TRUE(mg::zeros({2, 0, 4}).transpose(0, 2).is_contiguous());
  EXPECT_EQ(mg::tensor({true, false}).dtype(), mg::kBool);
}

// torch.clamp(torch.tensor([1, 2, 3]), 0.5, 2.5) -> tensor([1.0000, 2.0000, 2.5000]) (float32);
// torch.clamp(torch.tensor([1., 2.]), float('nan'), 2.) -> tensor([nan, nan])
TEST(HardeningNaN, ClampPromotesFractionalBoundsAndPropagatesANaNBound) {
  namespace mg = minigrad;
  auto c = mg::clamp(mg::tensor({1, 2, 3}, mg::kInt64), 0.5, 2.5);
  EXPECT_EQ(c.dtype(), mg::kFloat32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1.0f, 2.0f, 2.5f}));
  EXPECT_EQ(mg::clamp(mg::tensor({1, 2, 3}, mg::kInt64), 0.0, 2.0).dtype(), mg::kInt64);
  for (float v : mg::clamp(mg::tensor({1.0, 2.0}), std::nan(""), 2.0).to_vector<float>())
    EXPECT_TRUE(std::isnan(v));
}

namespace minigrad::detail {
// Internal (core/src/live_count.h), declared here to check that slots are reused.
enum class LiveKind;
std::int64_t live_slot_count(LiveKind kind) noexcept;
}  // namespace minigrad::detail

// A thread-per-request server: 200 threads, one after the other, each making and freeing tensors.
// Their live-count slots are reused, so the slot count does not grow with every thread (issue 18).
TEST(HardeningThreads, LiveCountSlotsAreReusedAcrossThreads) {
  namespace mg = minigrad;
  auto run_thread = [] {
    std::thread t([] {
      auto x = mg::ones({4}).requires_grad_();
      (x * 2).sum().backward();
    });
    t.join();
  };
  run_thread();
  const auto kind = static_cast<mg::detail::LiveKind>(1);  // storages
  const std::int64_t slots = mg::detail::live_slot_count(kind);
  const std::int64_t storages = mg::live_storage_count();
  for (int i = 0; i < 200; ++i) run_thread();
  EXPECT_LE(mg::detail::live_slot_count(kind), slots + 1);
  EXPECT_EQ(mg::live_storage_count(), storages);
}

// Two threads run backward at once through graphs that share one leaf (a shared parameter, as in
// data-parallel threads): the accumulation is locked, so no update is lost (issue 18; run under
// ThreadSanitizer by scripts/run_tsan.sh).
TEST(Threads, ConcurrentBackwardsIntoOneLeafAreLocked) {
  namespace mg = minigrad;
  auto w = mg::ones({8}).requires_grad_();
  constexpr int kRounds = 200;
  auto work = [&w] {
    for (int i = 0; i < kRounds; ++i) (w * 2.0).sum().backward();
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  for (float g : w.grad().to_vector<float>()) EXPECT_EQ(g, 2.0f * 2 * kRounds);
}
