// The kernels of core/src/kernels called directly, without Tensor or autograd: GEMM, reductions,
// layer_norm, embedding and the cross-entropy / nll loops, on small inputs, contiguous and
// strided (transposed operands, padded rows, stride-0 batches). Expected values are PyTorch
// 1.13's (the Python line above each test printed them, in float64).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/embedding.h"
#include "kernels/gemm.h"
#include "kernels/loss.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"

namespace k = minigrad::detail;
using minigrad::Shape;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

/// a[i, j] = i + j and b[i, j] = i - j, 9 x 9 row-major (9 * 9 * 9 multiply-adds: OpenBLAS).
std::vector<double> square(double (*f)(int, int)) {
  std::vector<double> m(81);
  for (int i = 0; i < 9; ++i)
    for (int j = 0; j < 9; ++j) m[static_cast<std::size_t>(i * 9 + j)] = f(i, j);
  return m;
}

}  // namespace

// a = [[i + j]], b = [[i - j]] (9 x 9); (a @ b)[0], (a @ b)[8], (a2.t() @ b.t())[1] with
// a2 = [[2 i + 0.5 j]]
TEST(Kernels, GemmThroughBlasAndWithTransposeFlags) {
  auto a = square([](int i, int j) { return static_cast<double>(i + j); });
  auto b = square([](int i, int j) { return static_cast<double>(i - j); });
  auto a2 = square([](int i, int j) { return 2.0 * i + 0.5 * j; });
  std::vector<double> c(81);
  k::gemm<double>(false, false, 9, 9, 9, a.data(), 9, b.data(), 9, c.data(), 9);
  expect_near({c.begin(), c.begin() + 9}, {204, 168, 132, 96, 60, 24, -12, -48, -84});
  expect_near({c.begin() + 72, c.end()}, {492, 384, 276, 168, 60, -48, -156, -264, -372});
  // a2^T b^T: both stored row-major, read transposed (no copy).
  k::gemm_threaded<double>(true, true, 9, 9, 9, a2.data(), 9, b.data(), 9, c.data(), 9);
  expect_near({c.begin() + 9, c.begin() + 18},
              {-426, -349.5, -273, -196.5, -120, -43.5, 33, 109.5, 186});
}

// torch.tensor([[1., 2, 3], [4, 5, 6]]) @ torch.tensor([[7., 8], [9, 10], [11, 12]])
TEST(Kernels, GemmLoopWithPaddedRowsAndInt64) {
  // a's rows are 4 apart (a [2, 3] inside a [2, 4] buffer), c's rows 3 apart.
  std::vector<float> a{1, 2, 3, -1, 4, 5, 6, -1}, b{7, 8, 9, 10, 11, 12}, c(6, -1);
  k::gemm<float>(false, false, 2, 2, 3, a.data(), 4, b.data(), 2, c.data(), 3);
  EXPECT_EQ(c, (std::vector<float>{58, 64, -1, 139, 154, -1}));
  std::vector<std::int64_t> ai{1, 2, 3, 4, 5, 6}, bi{7, 8, 9, 10, 11, 12}, ci(4);
  k::gemm<std::int64_t>(false, false, 2, 2, 3, ai.data(), 3, bi.data(), 2, ci.data(), 2);
  EXPECT_EQ(ci, (std::vector<std::int64_t>{58, 64, 139, 154}));
}

// torch.arange(12.).reshape(2, 2, 3) @ torch.tensor([[7., 8], [9, 10], [11, 12]])
TEST(Kernels, GemmBatchedBroadcastsAStrideZeroOperand) {
  std::vector<double> a(12), b{7, 8, 9, 10, 11, 12}, c(8);
  for (int i = 0; i < 12; ++i) a[static_cast<std::size_t>(i)] = i;
  auto la = k::blas_layout(2, 3, 3, 1), lb = k::blas_layout(3, 2, 2, 1);
  ASSERT_TRUE(la.ok && !la.trans && la.ld == 3);
  k::gemm_batched<double>(Shape{2}, 2, 2, 3, a.data(), Shape{6}, la, b.data(), Shape{0}, lb,
                          c.data());
  expect_near(c, {31, 34, 112, 124, 193, 214, 274, 304});
  // A transposed view [[1, 2], [3, 4]]^T (strides (1, 2)) goes in as Trans; stride 0 inside a
  // matrix goes nowhere.
  auto lt = k::blas_layout(2, 2, 1, 2);
  EXPECT_TRUE(lt.ok && lt.trans && lt.ld == 2);
  EXPECT_FALSE(k::blas_layout(2, 2, 0, 1).ok);
  // K == 0: zeros.
  std::vector<double> z(4, 5);
  k::gemm_batched<double>(Shape{}, 2, 2, 0, a.data(), Shape{}, la, b.data(), Shape{}, lb, z.data());
  expect_near(z, {0, 0, 0, 0});
}

// t = torch.tensor([[1.5, -2., 3.25], [4., 0.5, -6.]]): t.sum(0), t.sum(1), t.t().sum(1)
TEST(Kernels, SumOverStridedDims) {
  std::vector<double> t{1.5, -2, 3.25, 4, 0.5, -6}, out(3);
  k::sum_kernel<double, double>(t.data(), k::reduce_layout({2, 3}, {3, 1}, {true, false}),
                                out.data());
  expect_near(out, {5.5, -1.5, -2.75});
  k::sum_kernel<double, double>(t.data(), k::reduce_layout({2, 3}, {3, 1}, {false, true}),
                                out.data());
  expect_near({out[0], out[1]}, {2.75, -1.5});
  // t.t() is [3, 2] with strides (1, 3).
  k::sum_kernel<double, double>(t.data(), k::reduce_layout({3, 2}, {1, 3}, {false, true}),
                                out.data());
  expect_near(out, {5.5, -1.5, -2.75});
  k::sum_leading_rows<double>(t.data(), 2, 3, out.data());
  expect_near(out, {5.5, -1.5, -2.75});
  // (torch.arange(12.).reshape(3, 4) * 0.25).sum(0)
  std::vector<float> t2(12), lead(4);
  for (int i = 0; i < 12; ++i) t2[static_cast<std::size_t>(i)] = 0.25f * static_cast<float>(i);
  k::sum_leading_rows<float>(t2.data(), 3, 4, lead.data());
  EXPECT_EQ(lead, (std::vector<float>{3, 3.75, 4.5, 5.25}));
  // torch.tensor([[True, True], [False, True]]).sum(1) and all elements of an int64 [2, 2]
  bool flags[4] = {true, true, false, true};
  std::int64_t counts[2];
  k::sum_kernel<bool, std::int64_t>(flags, k::reduce_layout({2, 2}, {2, 1}, {false, true}), counts);
  EXPECT_EQ(counts[0], 2);
  EXPECT_EQ(counts[1], 1);
  std::int64_t ints[4] = {1, 2, 3, 4}, total = 0;
  k::sum_kernel<std::int64_t, std::int64_t>(ints, k::reduce_layout({2, 2}, {2, 1}, {true, true}),
                                            &total);
  EXPECT_EQ(total, 10);
}

// torch.max(n, 1) and torch.min(n, 1) for n = torch.tensor([[1., nan, 3.], [2., 5., 5.]]):
// values (nan, 5), indices (1, 1); values (nan, 2), indices (1, 0)
TEST(Kernels, ExtremePropagatesNaNAndKeepsTheFirstTie) {
  std::vector<float> n{1, std::numeric_limits<float>::quiet_NaN(), 3, 2, 5, 5}, v(2);
  std::vector<std::int64_t> idx(2);
  auto l = k::reduce_layout({2, 3}, {3, 1}, {false, true});
  k::extreme_kernel<true, float>(n.data(), l, v.data(), idx.data());
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 5);
  EXPECT_EQ(idx, (std::vector<std::int64_t>{1, 1}));
  k::extreme_kernel<false, float>(n.data(), l, v.data(), idx.data());
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 2);
  EXPECT_EQ(idx, (std::vector<std::int64_t>{1, 0}));
  // Over dim 0 of the same buffer (strided by 3), values only: max((1, 2)), max((nan, 5)), ...
  std::vector<float> v3(3);
  k::extreme_kernel<true, float>(n.data(), k::reduce_layout({2, 3}, {3, 1}, {true, false}),
                                 v3.data(), nullptr);
  EXPECT_EQ(v3[0], 2);
  EXPECT_TRUE(std::isnan(v3[1]));
  EXPECT_EQ(v3[2], 5);
}

// torch.tensor([[0., 1], [2, 3]]).all(1), torch.tensor([[0., 0], [0, 3]]).any(1),
// torch.cumsum(t, 1), torch.cumsum(torch.tensor([[1, 2], [3, 4]]), 0)
TEST(Kernels, AllAnyAndCumsum) {
  std::vector<double> a{0, 1, 2, 3}, b{0, 0, 0, 3};
  bool out[2];
  auto l = k::reduce_layout({2, 2}, {2, 1}, {false, true});
  k::all_any_kernel<true, double>(a.data(), l, out);
  EXPECT_FALSE(out[0]);
  EXPECT_TRUE(out[1]);
  k::all_any_kernel<false, double>(b.data(), l, out);
  EXPECT_FALSE(out[0]);
  EXPECT_TRUE(out[1]);
  std::vector<double> t{1.5, -2, 3.25, 4, 0.5, -6}, cs(6);
  k::cumsum_kernel<double, double>(t.data(), 2, 3, 1, cs.data());
  expect_near(cs, {1.5, -0.5, 2.75, 4.0, 4.5, -1.5});
  std::int64_t ints[4] = {1, 2, 3, 4}, ci[4];
  k::cumsum_kernel<std::int64_t, std::int64_t>(ints, 1, 2, 2, ci);  // along dim 0 of [2, 2]
  EXPECT_EQ(std::vector<std::int64_t>(ci, ci + 4), (std::vector<std::int64_t>{1, 2, 4, 6}));
}

// x = torch.tensor([[1., 2, 4, 8], [-3, 0.5, 2, 10]], dtype=torch.float64),
// w = [0.5, 1, -1, 2], b = [0, 0.1, 0.2, 0.3]:
// F.layer_norm(x, (4,), w, b, 1e-5), F.layer_norm(x, (4,), eps=1e-5), torch.var_mean(x, 1,
// unbiased=False), F.layer_norm(x[:, ::2], (2,), eps=1e-5)
TEST(Kernels, LayerNormRowsWithAndWithoutAffineAndStrided) {
  std::vector<double> x{1, 2, 4, 8, -3, 0.5, 2, 10}, w{0.5, 1, -1, 2}, b{0, 0.1, 0.2, 0.3};
  std::vector<double> out(8), mean(2), rstd(2);
  k::layer_norm_kernel<double>(x.data(), 4, 1, w.data(), b.data(), 2, 4, 1e-5, out.data(),
                               mean.data(), rstd.data());
  expect_near(out,
              {-0.5128772877480966, -0.5527529116793957, 0.10674958404580065, 3.4705141424427786,
               -0.5644229417219419, -0.2937834477129827, 0.2787566895425965, 3.5027720413989254});
  expect_near(mean, {3.75, 2.375});
  expect_near(rstd, {0.3730016638167975, 0.21001783878025743});
  k::layer_norm_kernel<double>(x.data(), 4, 1, nullptr, nullptr, 2, 4, 1e-5, out.data(),
                               mean.data(), rstd.data());
  expect_near(out,
              {-1.0257545754961932, -0.6527529116793956, 0.09325041595419936, 1.5852570712213894,
               -1.1288458834438837, -0.3937834477129827, -0.07875668954259651, 1.6013860206994628});
  // Columns 0 and 2 of each row: elements 2 apart, rows 4 apart.
  std::vector<double> out2(4);
  k::layer_norm_kernel<double>(x.data(), 4, 2, nullptr, nullptr, 2, 2, 1e-5, out2.data(),
                               mean.data(), rstd.data());
  expect_near(out2, {-0.9999977777851851, 0.9999977777851852, -0.99999920000096, 0.99999920000096});
  // float32 in, statistics in double.
  std::vector<float> xf{1, 2, 4, 8}, of(4);
  k::layer_norm_kernel<float>(xf.data(), 4, 1, nullptr, nullptr, 1, 4, 1e-5, of.data(), mean.data(),
                              rstd.data());
  expect_near({of[0], of[1], of[2], of[3]},
              {-1.0257545754961932, -0.6527529116793956, 0.09325041595419936, 1.5852570712213894},
              1e-6);
}

// F.embedding(torch.tensor([2, 0, 2, 3]), torch.arange(12.).reshape(4, 3) * 0.5)
TEST(Kernels, EmbeddingGathersRowsOfAPaddedTable) {
  // Row k of the table starts at 5 k (two unused values after each row).
  std::vector<double> table(20, -1);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) table[static_cast<std::size_t>(r * 5 + c)] = 0.5 * (r * 3 + c);
  std::int64_t idx[4] = {2, 0, 2, 3};
  std::vector<double> out(12);
  k::embedding_kernel<double>(table.data(), 5, 3, idx, 4, out.data());
  expect_near(out, {3.0, 3.5, 4.0, 0.0, 0.5, 1.0, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5});
  // F.embedding(torch.tensor([1, 1, 0]), torch.tensor([[7, 8], [9, 10]])): int64 rows too.
  std::int64_t itable[4] = {7, 8, 9, 10}, iidx[3] = {1, 1, 0}, iout[6];
  k::embedding_kernel<std::int64_t>(itable, 2, 2, iidx, 3, iout);
  EXPECT_EQ(std::vector<std::int64_t>(iout, iout + 6),
            (std::vector<std::int64_t>{9, 10, 9, 10, 7, 8}));
}

namespace {

// x = torch.tensor([[1., 2, 0.5], [-1, 0, 3], [0.2, 0.2, 0.2], [5, -2, 1]], dtype=torch.float64)
const std::vector<double> kLogits{1, 2, 0.5, -1, 0, 3, 0.2, 0.2, 0.2, 5, -2, 1};
// target torch.tensor([1, 2, -100, 0]) (-100 ignored: class -1 for the kernels)
const std::int64_t kClasses[4] = {1, 2, -1, 0};

}  // namespace

// F.cross_entropy(x, t, reduction='none');
// F.cross_entropy(x, t, weight=torch.tensor([0.5, 1., 2.]), label_smoothing=0.2,
//                 reduction='none')
TEST(Kernels, CrossEntropyWithClassIndicesContiguousAndTransposed) {
  k::ClassStrides l{4, 3, 1, 3, 1, 1};
  const double ones[4] = {1, 1, 0, 1};
  std::vector<double> loss(4);
  double total = k::cross_entropy_index_kernel<double>(kLogits.data(), l, kClasses, ones, nullptr,
                                                       0.0, loss.data());
  std::vector<double> want{0.4643687841079449, 0.06588390375742911, 0.0, 0.019045007879257447};
  expect_near(loss, want);
  EXPECT_NEAR(total, want[0] + want[1] + want[3], 1e-12);
  // The same logits stored transposed, [C, N]: class c of row n at c * 4 + n.
  std::vector<double> xt(12);
  for (int n = 0; n < 4; ++n)
    for (int c = 0; c < 3; ++c)
      xt[static_cast<std::size_t>(c * 4 + n)] = kLogits[static_cast<std::size_t>(n * 3 + c)];
  k::ClassStrides lt{4, 3, 1, 1, 4, 1};
  k::cross_entropy_index_kernel<double>(xt.data(), lt, kClasses, ones, nullptr, 0.0, loss.data());
  expect_near(loss, want);
  const double class_w[3] = {0.5, 1, 2};
  const double w[4] = {1, 2, 0, 0.5};  // class_w of each target, 0 where ignored
  k::cross_entropy_index_kernel<double>(kLogits.data(), l, kClasses, w, class_w, 0.2, loss.data());
  expect_near(loss, {0.7131810769115431, 0.4541204902219534, 0.0, 1.0120618383235298});
  // No per-position output (a reduced loss): only the sum.
  EXPECT_NEAR(k::cross_entropy_index_kernel<float>(
                  std::vector<float>(kLogits.begin(), kLogits.end()).data(), l, kClasses, ones,
                  nullptr, 0.0, nullptr),
              want[0] + want[1] + want[3], 1e-6);
}

// q = torch.softmax(torch.tensor([[0., 1, 2], [1, 1, 0], [3, 0, 0], [0, 0, 0]]), 1);
// F.cross_entropy(x, q, reduction='none')
TEST(Kernels, CrossEntropyWithProbabilities) {
  const std::vector<double> q{0.09003057317038045, 0.2447284710547976,   0.6652409557748218,
                              0.4223187982515182,  0.4223187982515182,   0.15536240349696362,
                              0.909442998512742,   0.045278500743629074, 0.045278500743629074,
                              0.3333333333333333,  0.3333333333333333,   0.3333333333333333};
  std::vector<double> loss(4);
  k::cross_entropy_prob_kernel<double>(kLogits.data(), q.data(), {4, 3, 1, 3, 1, 1}, loss.data());
  expect_near(loss, {1.552260790940558, 3.022115491518057, 1.0986122886681098, 3.6857116745459235});
}

// F.nll_loss(torch.log_softmax(x, 1), t, weight=torch.tensor([0.5, 1., 2.]), reduction='none');
// torch.logsumexp(torch.tensor([1., 2, 3]), 0) and of three -inf
TEST(Kernels, NllLossAndRowLogsumexp) {
  const std::vector<double> lp{-1.464368784107945,    -0.4643687841079449, -1.964368784107945,
                               -4.065883903757429,    -3.0658839037574293, -0.06588390375742911,
                               -1.0986122886681098,   -1.0986122886681098, -1.0986122886681098,
                               -0.019045007879257447, -7.0190450078792574, -4.0190450078792574};
  const double w[4] = {1, 2, 0, 0.5};
  std::vector<double> loss(4);
  k::nll_loss_kernel<double>(lp.data(), {4, 3, 1, 3, 1, 1}, kClasses, w, loss.data());
  expect_near(loss, {0.4643687841079449, 0.13176780751485823, 0.0, 0.009522503939628724});
  // Every other element of {1, x, 2, x, 3}.
  const double row[5] = {1, kNaN, 2, kNaN, 3};
  EXPECT_NEAR(k::row_logsumexp(row, 3, 2), 3.4076059644443806, 1e-12);
  const double ninf[3] = {-INFINITY, -INFINITY, -INFINITY};
  EXPECT_EQ(k::row_logsumexp(ninf, 3, 1), -INFINITY);
}
