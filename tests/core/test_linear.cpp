// Linear's bias in the GEMM and addmm as one fused op (Note [Fused addmm],
// core/src/ops/linalg.cpp): the node names PyTorch gives, values and gradients equal to the
// composed form, beta 0 ignoring NaN, and the same bits on one and two threads for a Linear large
// enough to be split.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../../core/src/parallel.h"
#include "minigrad/minigrad.h"
#include "minigrad/nn/functional.h"
#include "minigrad/profiler.h"

namespace mg = minigrad;
namespace F = minigrad::nn::functional;

namespace {

std::vector<double> values(const mg::Tensor& t) { return t.detach().to_vector<double>(); }

void expect_close(const mg::Tensor& got, const mg::Tensor& want, double tol, const char* what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = values(got), w = values(want);
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol) << what << " at " << i;
}

/// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = mg::get_num_threads();
  ~ThreadsGuard() { mg::set_num_threads(saved); }
};

}  // namespace

// torch 1.13: F.linear(x2d, w, b).grad_fn is AddmmBackward0; a 3-D contiguous input is viewed to
// 2-D and back (ViewBackward0 over AddmmBackward0); 1-D input: AddBackward0; no bias: MmBackward0.
TEST(FusedLinear, NodeNamesAsPyTorch) {
  mg::Tensor w = mg::randn({4, 3}).requires_grad_(), b = mg::randn({4}).requires_grad_();
  EXPECT_EQ(F::linear(mg::randn({2, 3}), w, b).grad_fn()->name(), "AddmmBackward0");
  mg::Tensor y3 = F::linear(mg::randn({2, 5, 3}), w, b);
  EXPECT_EQ(y3.shape(), (mg::Shape{2, 5, 4}));
  EXPECT_EQ(y3.grad_fn()->name(), "ViewBackward0");
  EXPECT_EQ(y3.grad_fn()->next_edges()[0].fn->name(), "AddmmBackward0");
  EXPECT_EQ(F::linear(mg::randn({3}), w, b).grad_fn()->name(), "AddBackward0");
  EXPECT_EQ(F::linear(mg::randn({2, 3}), w).grad_fn()->name(), "MmBackward0");
  EXPECT_EQ(mg::addmm(b, mg::randn({2, 3}), w.t()).grad_fn()->name(), "AddmmBackward0");
}

// Values and gradients of the fused addmm equal mm, mul and add's, for every input shape that
// broadcasts, beta and alpha, small (the loop) and large (BLAS) products, strided operands.
TEST(FusedAddmm, MatchesTheComposedForm) {
  mg::manual_seed(3);
  for (std::int64_t n : {2, 40}) {
    const std::int64_t k = n == 2 ? 3 : 30, p = n == 2 ? 4 : 50;
    for (const mg::Shape& in_shape :
         {mg::Shape{p}, mg::Shape{1, p}, mg::Shape{n, 1}, mg::Shape{n, p}, mg::Shape{}}) {
      for (auto [beta, alpha] : {std::pair{1.0, 1.0}, {0.5, 2.0}, {0.0, 1.5}, {-1.0, 0.25}}) {
        mg::Tensor in = mg::randn(in_shape, mg::kFloat64).requires_grad_();
        mg::Tensor m1 = mg::randn({k, n}, mg::kFloat64).t().requires_grad_();  // column-major
        mg::Tensor m2 = mg::randn({k, p}, mg::kFloat64).requires_grad_();
        mg::Tensor up = mg::randn({n, p}, mg::kFloat64);
        mg::Tensor y = mg::addmm(in, m1, m2, beta, alpha);
        (y * up).sum().backward();
        std::vector<mg::Tensor> fused{y, m1.grad(), m2.grad()};
        if (beta != 0) fused.push_back(in.grad());
        for (const auto& t : {in, m1, m2}) t.set_grad(mg::Tensor());
        mg::Tensor want = mg::matmul(m1, m2) * alpha + in * beta;
        (want * up).sum().backward();
        std::vector<mg::Tensor> composed{want, m1.grad(), m2.grad(), in.grad()};
        for (std::size_t i = 0; i < fused.size(); ++i)
          expect_close(fused[i], composed[i], 1e-12, "addmm");
      }
    }
  }
}

// beta 0 does not read input: a NaN there stays out of the result, in the loop and in BLAS.
TEST(FusedAddmm, BetaZeroIgnoresNaNInInput) {
  for (std::int64_t n : {2, 64}) {
    mg::Tensor in = mg::full({n, n}, NAN);
    mg::Tensor y = mg::addmm(in, mg::ones({n, n}), mg::ones({n, n}), 0, 1);
    for (double v : values(y)) EXPECT_EQ(v, static_cast<double>(n));
  }
}

// An empty product (k 0) leaves beta input; empty rows give an empty output.
TEST(FusedAddmm, EmptyOperands) {
  mg::Tensor in = mg::tensor({1.0, 2.0, 3.0}).requires_grad_();
  mg::Tensor y = mg::addmm(in, mg::zeros({2, 0}), mg::zeros({0, 3}), 2, 1);
  EXPECT_EQ(values(y), (std::vector<double>{2, 4, 6, 2, 4, 6}));
  y.sum().backward();
  EXPECT_EQ(values(in.grad()), (std::vector<double>{4, 4, 4}));
  EXPECT_EQ(mg::addmm(in, mg::zeros({0, 2}), mg::zeros({2, 3})).shape(), (mg::Shape{0, 3}));
}

// The bias's gradient is the column sums of the output's gradient, whatever its layout (an
// expanded one from sum(), a strided one from a transpose), and double backward goes through.
TEST(FusedLinear, BiasGradientAndDoubleBackward) {
  mg::manual_seed(5);
  mg::Tensor x = mg::randn({3, 5, 6}, mg::kFloat64).requires_grad_();
  mg::Tensor w = mg::randn({4, 6}, mg::kFloat64).requires_grad_();
  mg::Tensor b = mg::randn({4}, mg::kFloat64).requires_grad_();
  F::linear(x, w, b).sum().backward();
  EXPECT_EQ(values(b.grad()), (std::vector<double>(4, 15.0)));
  b.set_grad(mg::Tensor());
  mg::Tensor up = mg::randn({4, 5, 3}, mg::kFloat64);
  (F::linear(x, w, b) * up.permute({2, 1, 0})).sum().backward();
  expect_close(b.grad(), up.sum({1, 2}), 1e-12, "bias gradient");
  // d/dx of sum((linear(x) )^2) via create_graph, then differentiated again w.r.t. b.
  mg::Tensor y = F::linear(x, w, b);
  mg::Tensor gx = mg::autograd::grad({(y * y).sum()}, {x}, {}, true, true)[0];
  mg::Tensor gb = mg::autograd::grad({gx.sum()}, {b})[0];
  // gx = 2 y W, so d(sum gx)/db_o = 2 * rows * sum_i W[o, i].
  expect_close(gb, w.sum(1) * 30.0, 1e-12, "second derivative");
}

// A Linear large enough for its GEMMs to be split across threads (kGemmChunkMNK multiply-adds a
// chunk) gives the same bits on one and on two threads: output and every gradient. Its GEMMs
// split by rows (Note [GEMM on threads]); the weight's gradient [out, in] is (g^T x) (Note
// [Gradients in the operand's layout]), split by columns only when out_features <= 48 and
// < in_features, which agrees to rounding only: not tested.
TEST(FusedLinear, SameResultsOnOneAndTwoThreads) {
  ThreadsGuard guard;
  mg::manual_seed(7);
  for (const mg::Shape& shape : {mg::Shape{32, 24, 128}, mg::Shape{32, 24, 256}}) {
    const std::int64_t in = shape.back(), out = 320 - in;
    mg::Tensor x = mg::randn(shape).requires_grad_();
    mg::Tensor w = mg::randn({out, in}).requires_grad_(), b = mg::randn({out}).requires_grad_();
    mg::Tensor up = mg::randn({32, 24, out});
    std::vector<std::vector<double>> results[2];
    for (int threads : {1, 2}) {
      mg::set_num_threads(threads);
      for (const auto& t : {x, w, b}) t.set_grad(mg::Tensor());
      mg::Tensor y = F::linear(x, w, b);
      (y * up).sum().backward();
      results[threads - 1] = {values(y), values(x.grad()), values(w.grad()), values(b.grad())};
    }
    // Bit for bit on this machine's OpenBLAS (0.3.21, Haswell kernels): row blocks of 48
    // (kGemmRowAlign). Another CPU's or version's sgemm may round a block differently from the
    // whole product, so the test asks for float32 rounding only.
    for (std::size_t i = 0; i < 4; ++i) {
      ASSERT_EQ(results[0][i].size(), results[1][i].size());
      for (std::size_t j = 0; j < results[0][i].size(); ++j)
        ASSERT_NEAR(results[0][i][j], results[1][i][j], 1e-5 * (1 + std::fabs(results[0][i][j])))
            << "result " << i << ", element " << j;
    }
  }
}

// Note [Two gradients at once] (core/src/ops/linalg.cpp): outside create_graph, the two gradients
// of mm and addmm run as one parallel region of two whole products. They have the bits of the
// recorded mm ops that create_graph runs, in every layout of the operands (row- or column-major,
// each computed in its own layout), float32 and float64; small enough that nothing else splits, so
// the backward runs exactly one region on 2 threads and none with create_graph.
TEST(FusedLinear, TwoGradientsAtOnceHaveTheBitsOfTheRecordedProducts) {
  ThreadsGuard guard;
  mg::manual_seed(5);
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    for (int layout = 0; layout < 8; ++layout) {
      const bool cols1 = layout & 1, cols2 = layout & 2, bias = layout & 4;
      mg::Tensor p1 = (cols1 ? mg::randn({30, 20}) : mg::randn({20, 30})).to(dt).requires_grad_();
      mg::Tensor p2 = (cols2 ? mg::randn({40, 30}) : mg::randn({30, 40})).to(dt).requires_grad_();
      mg::Tensor c = mg::randn({40}).to(dt), up = mg::randn({20, 40}).to(dt);
      std::vector<double> got[2];  // [0]: create_graph (mm ops, 1 thread); [1]: two tasks
      for (int tasks : {0, 1}) {
        mg::set_num_threads(tasks ? 2 : 1);
        p1.set_grad(mg::Tensor());
        p2.set_grad(mg::Tensor());
        mg::Tensor m1 = cols1 ? p1.t() : p1, m2 = cols2 ? p2.t() : p2;
        mg::Tensor y = bias ? mg::addmm(c, m1, m2) : mg::mm(m1, m2);
        const std::int64_t regions = mg::detail::parallel_regions_run();
        (y * up).sum().backward(mg::Tensor(), false, /*create_graph=*/tasks == 0);
        EXPECT_EQ(mg::detail::parallel_regions_run() - regions, tasks) << "layout " << layout;
        got[tasks] = values(p1.grad());
        for (double v : values(p2.grad())) got[tasks].push_back(v);
      }
      EXPECT_EQ(got[0], got[1]) << dtype_name(dt) << ", layout " << layout;
    }
  }
}

// Note [Gradients in the operand's layout]: a Linear's weight gradient is computed as (g^T x)^T,
// so it reaches AccumulateGrad already in the weight's [out, in] layout, and AccumulateGrad takes
// that buffer as it is (the view and its base are its only owners): no copy in backward. The
// values are those of x^T g, checked against a float64 reference.
TEST(FusedLinear, WeightGradientInItsOwnLayoutWithoutACopy) {
  mg::manual_seed(3);
  for (bool with_bias : {true, false}) {
    mg::Tensor x = mg::randn({4, 5, 6});
    mg::Tensor w = mg::randn({3, 6}).requires_grad_();
    mg::Tensor b = with_bias ? mg::randn({3}).requires_grad_() : mg::Tensor();
    mg::Tensor up = mg::randn({4, 5, 3});
    mg::Tensor y = F::linear(x, w, b);
    std::int64_t clones = 0;
    {
      mg::profiler::Profile prof;
      (y * up).sum().backward();
      prof.stop();
      for (const auto& e : prof.events()) clones += e.name == "clone";
    }
    EXPECT_EQ(clones, 0) << "bias " << with_bias;
    ASSERT_TRUE(w.grad().defined());
    EXPECT_TRUE(w.grad().is_contiguous());
    // dL/dW [out, in] = sum over rows of up^T x.
    mg::Tensor want =
        mg::matmul(up.reshape({-1, 3}).to(mg::kFloat64).t(), x.reshape({-1, 6}).to(mg::kFloat64));
    expect_close(w.grad(), want, 1e-5, "weight gradient");
  }
}

// The same for a batched operand: attention's scores = q k^T with k = W_k(x) [B, T, d_k] and
// k^T a transposed view. k's gradient is computed as (g^T q)^T, so it reaches k contiguous and
// the view back to the Linear's rows takes it without a clone. Values against float64.
TEST(FusedLinear, BatchedTransposedOperandGetsItsGradientWithoutACopy) {
  mg::manual_seed(4);
  mg::Tensor x = mg::randn({3, 5, 6});
  mg::Tensor wq = mg::randn({4, 6}).requires_grad_(), wk = mg::randn({4, 6}).requires_grad_();
  mg::Tensor up = mg::randn({3, 5, 5});
  mg::Tensor q = F::linear(x, wq), k = F::linear(x, wk);
  mg::Tensor kt = k.transpose(-2, -1);
  mg::Tensor scores = mg::matmul(q, kt);
  std::int64_t clones = 0;
  {
    mg::profiler::Profile prof;
    (scores * up).sum().backward();
    prof.stop();
    for (const auto& e : prof.events()) clones += e.name == "clone";
  }
  EXPECT_EQ(clones, 0);
  // dL/dk [B, T, d_k] = up^T q per batch; dL/dW_k = sum over rows of dk^T x; the same for q.
  mg::Tensor xd = x.to(mg::kFloat64), upd = up.to(mg::kFloat64);
  mg::Tensor qd = q.detach().to(mg::kFloat64), kd = k.detach().to(mg::kFloat64);
  mg::Tensor dk = mg::matmul(upd.transpose(-2, -1), qd), dq = mg::matmul(upd, kd);
  expect_close(wk.grad(), mg::matmul(dk.reshape({-1, 4}).t(), xd.reshape({-1, 6})), 1e-5, "W_k");
  expect_close(wq.grad(), mg::matmul(dq.reshape({-1, 4}).t(), xd.reshape({-1, 6})), 1e-5, "W_q");
}

// The counterpart: a gradient that is a view of a tensor the user still holds is copied, not
// taken, so writing the user's tensor afterwards leaves .grad alone.
TEST(FusedLinear, AViewOfTheUsersGradientIsCopied) {
  mg::Tensor a = mg::randn({2, 3}).requires_grad_();
  mg::Tensor g = mg::ones({6});
  a.reshape({6}).backward(g);  // ViewBackward0 hands a a view of g
  g.add_(1.0);
  EXPECT_EQ(values(a.grad()), std::vector<double>(6, 1.0));
}
