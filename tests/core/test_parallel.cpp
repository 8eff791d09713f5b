// Intra-op parallelism (Note [Intra-op parallelism], core/src/parallel.h): every op that splits
// its work across threads gives exactly the bits it gives on one thread, small ops never leave
// the calling thread, and a chunk's exception reaches the caller.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../../core/src/parallel.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

/// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = mg::get_num_threads();
  ~ThreadsGuard() { mg::set_num_threads(saved); }
};

std::vector<double> values(const mg::Tensor& t) { return t.detach().to_vector<double>(); }

/// f's outputs (and its inputs' gradients, when they require grad) on 1 and on 2 threads: equal,
/// or within rtol (relative to the largest magnitude) when rtol > 0.
void expect_same_on_one_and_two_threads(const std::function<mg::Tensor()>& f,
                                        const std::vector<mg::Tensor>& inputs, const char* what,
                                        double rtol = 0) {
  ThreadsGuard guard;
  std::vector<std::vector<double>> results[2];
  for (int threads : {1, 2}) {
    mg::set_num_threads(threads);
    for (const auto& x : inputs) x.set_grad(mg::Tensor());
    const std::int64_t regions = mg::detail::parallel_regions_run();
    mg::Tensor y = f();
    if (threads == 2) {
      EXPECT_GT(mg::detail::parallel_regions_run(), regions) << what << ": nothing was split";
    }
    results[threads - 1].push_back(values(y));
    if (y.requires_grad()) {
      (y * mg::arange(static_cast<double>(y.numel())).reshape(y.shape()).to(y.dtype()))
          .sum()
          .backward();
      for (const auto& x : inputs) results[threads - 1].push_back(values(x.grad()));
    }
  }
  if (rtol == 0) {
    EXPECT_EQ(results[0], results[1]) << what;
    return;
  }
  ASSERT_EQ(results[0].size(), results[1].size()) << what;
  for (std::size_t i = 0; i < results[0].size(); ++i) {
    ASSERT_EQ(results[0][i].size(), results[1][i].size()) << what;
    double scale = 0, worst = 0;
    for (double v : results[0][i]) scale = std::max(scale, std::abs(v));
    for (std::size_t j = 0; j < results[0][i].size(); ++j)
      worst = std::max(worst, std::abs(results[0][i][j] - results[1][i][j]));
    EXPECT_LE(worst, rtol * scale) << what << ", result " << i;
  }
}

TEST(Parallel, SetAndGetNumThreads) {
  ThreadsGuard guard;
  mg::set_num_threads(3);
  EXPECT_EQ(mg::get_num_threads(), 3);
  mg::set_num_threads(1);
  EXPECT_EQ(mg::get_num_threads(), 1);
  EXPECT_THROW(mg::set_num_threads(0), mg::Error);
  EXPECT_EQ(mg::get_num_threads(), 1);
}

TEST(Parallel, LargeOpsGiveTheSameBitsOnOneAndTwoThreads) {
  mg::manual_seed(0);
  // Sizes above the grains (kGrainSize = 32768 elements; 1M multiply-adds per GEMM chunk), with
  // odd lengths so that chunks end mid-row.
  mg::Tensor a = mg::randn({601, 257}).requires_grad_();
  mg::Tensor b = mg::randn({257}).requires_grad_();
  mg::Tensor s = mg::randn({64, 65, 47}).requires_grad_();
  mg::Tensor q = mg::randn({1024, 24, 16}).requires_grad_();
  mg::Tensor k = mg::randn({1024, 16, 24}).requires_grad_();
  mg::Tensor d = mg::randn({400, 401}, mg::kFloat64).requires_grad_();
  expect_same_on_one_and_two_threads([&] { return a * b + 1.5; }, {a, b}, "broadcast mul, add");
  expect_same_on_one_and_two_threads([&] { return a.t() - a.t().exp(); }, {a}, "strided exp");
  expect_same_on_one_and_two_threads([&] { return a.exp().tanh(); }, {a}, "contiguous exp, tanh");
  // gelu's grain is 2 * kGrainSize (kernels/unary.cpp).
  mg::Tensor big = mg::randn({1100, 501}).requires_grad_();
  expect_same_on_one_and_two_threads([&] { return mg::gelu(big); }, {big}, "gelu");
  expect_same_on_one_and_two_threads([&] { return mg::gelu(big, "tanh"); }, {big}, "gelu tanh");
  expect_same_on_one_and_two_threads([&] { return big.norm(); }, {big}, "norm of all");
  // Dropout's draws stay on the calling thread; its select and multiply split.
  expect_same_on_one_and_two_threads(
      [&] {
        mg::manual_seed(1);
        auto [out, mask] = mg::detail::dropout_with_mask(big.detach(), 0.3);
        return mg::cat({out.reshape({-1}), mask.reshape({-1})}, 0);
      },
      {}, "dropout");
  expect_same_on_one_and_two_threads([&] { return a.sum(0); }, {a}, "sum over rows");
  expect_same_on_one_and_two_threads([&] { return a.sum(1); }, {a}, "sum over columns");
  expect_same_on_one_and_two_threads([&] { return s.sum({0, 2}); }, {s}, "sum over (0, 2)");
  expect_same_on_one_and_two_threads([&] { return s.amax({1}); }, {s}, "amax");
  expect_same_on_one_and_two_threads([&] { return mg::softmax(s, -1); }, {s}, "softmax(-1)");
  expect_same_on_one_and_two_threads([&] { return mg::softmax(s, 1); }, {s}, "softmax(1)");
  expect_same_on_one_and_two_threads([&] { return mg::log_softmax(s, -1); }, {s}, "log_softmax");
  expect_same_on_one_and_two_threads([&] { return mg::matmul(q, k); }, {q, k}, "bmm");
  // Single large products, split by rows of the output and, when it is wide, by columns. OpenBLAS
  // blocks a part of a product differently from the whole, so these agree to rounding only (as
  // libtorch's products on different thread counts).
  mg::Tensor tall = mg::randn({300, 200}).requires_grad_(), w = mg::randn({200, 501});
  mg::Tensor wide = mg::randn({20, 300}).requires_grad_(), w2 = mg::randn({300, 4001});
  expect_same_on_one_and_two_threads([&] { return mg::matmul(tall, w); }, {tall}, "tall mm", 1e-6);
  expect_same_on_one_and_two_threads([&] { return mg::matmul(wide, w2); }, {wide}, "wide mm", 1e-6);
  expect_same_on_one_and_two_threads([&] { return mg::matmul(tall.t(), tall); }, {tall}, "a^T a",
                                     1e-6);
  expect_same_on_one_and_two_threads([&] { return (d * d).sum(0).sqrt(); }, {d}, "float64");
  expect_same_on_one_and_two_threads([&] { return mg::where(a > 0, a, b); }, {a, b}, "where");
}

TEST(Parallel, SmallRangesRunOnTheCallingThread) {
  ThreadsGuard guard;
  mg::set_num_threads(2);
  std::set<std::thread::id> seen;
  mg::detail::parallel_for(
      0, mg::detail::kGrainSize, mg::detail::kGrainSize,
      [&](std::int64_t, std::int64_t) { seen.insert(std::this_thread::get_id()); });
  EXPECT_EQ(seen, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST(Parallel, RangesAreCoveredOnceAndNestedRegionsRunInline) {
  ThreadsGuard guard;
  mg::set_num_threads(2);
  const std::int64_t n = 1000003;
  std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
  std::atomic<int> nested_inline{0};
  mg::detail::parallel_for(0, n, 1000, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)]++;
    auto me = std::this_thread::get_id();
    mg::detail::parallel_for(0, 100000, 10, [&](std::int64_t, std::int64_t) {
      if (std::this_thread::get_id() == me) nested_inline++;
    });
  });
  std::int64_t wrong = 0;
  for (auto& h : hits) wrong += h.load() != 1;
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(nested_inline.load(), 2);  // one nested call per chunk, each run whole, inline
}

TEST(Parallel, AChunksExceptionReachesTheCaller) {
  ThreadsGuard guard;
  mg::set_num_threads(2);
  auto throw_high = [](std::int64_t, std::int64_t e) {
    if (e == 200000) throw std::runtime_error("chunk failed");
  };
  EXPECT_THROW(mg::detail::parallel_for(0, 200000, 1000, throw_high), std::runtime_error);
  // The pool still works afterwards.
  std::atomic<std::int64_t> total{0};
  mg::detail::parallel_for(0, 200000, 1000,
                           [&](std::int64_t b, std::int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 200000);
}

}  // namespace
