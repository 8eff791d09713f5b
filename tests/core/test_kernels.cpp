// The kernels of core/src/kernels called directly, without Tensor or autograd: GEMM, reductions,
// layer_norm, embedding and the cross-entropy / nll loops, on small inputs, contiguous and
// strided (transposed operands, padded rows, stride-0 batches). Expected values are PyTorch
// 1.13's (the Python line above each test printed them, in float64). layer_norm's fused backward
// is also checked through Tensor, against the create_graph backward written with public ops.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/embedding.h"
#include "kernels/gemm.h"
#include "kernels/loss.h"
#include "kernels/norm.h"
#include "kernels/reduce.h"
#include "kernels/simd.h"
#include "parallel.h"

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

// x = torch.tensor([[1., 2, 4, 8, -1], [-3, 0.5, 2, 10, 0.25], [0.1, -0.2, 0.3, 0.7, 1.5]],
//                  dtype=torch.float64, requires_grad=True)
// w = torch.tensor([0.5, 1, -1, 2, 1.5], ...), b = torch.tensor([0, 0.1, 0.2, 0.3, -0.4], ...)
// g = torch.tensor([[1., -2, 3, 0.5, 0.25], [0.25, 1, -1, 2, -3], [2, 0.5, -0.5, 1, 1]], ...)
// F.layer_norm(x, (5,), w, b, 1e-5).backward(g): x.grad, w.grad, b.grad; and, on fresh leaves,
// F.layer_norm(x, (5,), eps=1e-5).backward(g): x.grad.
TEST(Kernels, LayerNormBackwardWithAndWithoutWeight) {
  const std::vector<double> x{1, 2, 4, 8, -1, -3, 0.5, 2, 10, 0.25, 0.1, -0.2, 0.3, 0.7, 1.5},
      w{0.5, 1, -1, 2, 1.5}, b{0, 0.1, 0.2, 0.3, -0.4},
      g{1, -2, 3, 0.5, 0.25, 0.25, 1, -1, 2, -3, 2, 0.5, -0.5, 1, 1};
  const std::vector<double> want_gx{
      0.37871764305919303, -0.44454364245229533, -0.7836260109727702, 0.49936955574003306,
      0.3500824546258392,  0.41121719625671155,  0.2893771419701003,  0.15081038016605194,
      0.10258441599418025, -0.9539891343870437,  0.26380148568135553, -0.24414889267914153,
      -0.8150732072939147, 1.2797022424023499,   -0.48428162811064823};
  const std::vector<double> want_gx_no_weight{
      0.2105732340182061,  -0.8052770352123784, 0.7584829832083326, -0.19974761277056363,
      0.03596843075640334, 0.31526442264230037, 0.3301749967579594, -0.19797987331427913,
      0.13215719557139272, -0.5796167416573733, 2.1272443092093134, -0.35635028578494365,
      -2.170560730700043,  0.2903937621629382,  0.10927294511273455};
  const std::vector<double> want_gw{-2.166069306910764, -0.3892523999476627, 1.318273796911375,
                                    4.931334291743705, 2.5988675861140753};
  const std::vector<double> want_gb{3.25, -0.5, 1.5, 3.5, -1.75};
  auto run = [&]<typename T>(double tol) {
    auto cast = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };
    auto back = [](const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); };
    std::vector<T> xt = cast(x), wt = cast(w), bt = cast(b), gt = cast(g), out(15);
    std::vector<double> mean(3), rstd(3);
    k::layer_norm_kernel<T>(xt.data(), 5, 1, wt.data(), bt.data(), 3, 5, 1e-5, out.data(),
                            mean.data(), rstd.data());
    std::vector<T> gx(15), gw(5), gb(5);
    k::layer_norm_backward_kernel<T>(gt.data(), xt.data(), mean.data(), rstd.data(), wt.data(), 3,
                                     5, gx.data(), gw.data(), gb.data());
    expect_near(back(gx), want_gx, tol);
    expect_near(back(gw), want_gw, tol);
    expect_near(back(gb), want_gb, tol);
    // No weight: g_hat is g. grad_w and grad_b do not depend on the weight.
    std::vector<T> gx2(15), gw2(5, T(7));
    k::layer_norm_backward_kernel<T>(gt.data(), xt.data(), mean.data(), rstd.data(), nullptr, 3, 5,
                                     gx2.data(), nullptr, nullptr);
    expect_near(back(gx2), want_gx_no_weight, tol);
    // Only grad_w (x and the bias need no gradient).
    k::layer_norm_backward_kernel<T>(gt.data(), xt.data(), mean.data(), rstd.data(), wt.data(), 3,
                                     5, nullptr, gw2.data(), nullptr);
    expect_near(back(gw2), want_gw, tol);
  };
  run.operator()<double>(1e-12);
  run.operator()<float>(2e-6);
}

// With no rows the sums over rows are empty: grad_w and grad_b are zeros (as PyTorch's for an
// input of shape [0, 2]).
TEST(Kernels, LayerNormBackwardEmptyRowsGiveZeroParameterGradients) {
  std::vector<float> gw{5, 5}, gb{5, 5};
  k::layer_norm_backward_kernel<float>(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 2, nullptr,
                                       gw.data(), gb.data());
  EXPECT_EQ(gw, (std::vector<float>{0, 0}));
  EXPECT_EQ(gb, (std::vector<float>{0, 0}));
}

namespace {

/// The bits of v, to compare results exactly.
template <typename T>
std::vector<unsigned char> bits(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

/// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = minigrad::get_num_threads();
  ~ThreadsGuard() { minigrad::set_num_threads(saved); }
};

}  // namespace

// More rows than one thread's chunk (Note [Layer norm kernels]): forward and backward split
// across 2 threads give the same bits as on 1, including the sums over rows.
TEST(Kernels, LayerNormSameBitsOnOneAndTwoThreads) {
  ThreadsGuard guard;
  const std::int64_t rows = 3001, n = 64;  // 3 chunks of rows of 64, and a short last one
  std::vector<float> x(static_cast<std::size_t>(rows * n)), g(x.size()), w(n), b(n);
  std::uint32_t state = 12345;
  auto next = [&state] {  // a small LCG in [-2, 2): no dependence on minigrad's generator
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
  };
  for (auto* v : {&x, &g, &w, &b})
    for (float& e : *v) e = next();
  std::vector<std::vector<unsigned char>> results[2];
  for (int threads : {1, 2}) {
    minigrad::set_num_threads(threads);
    const std::int64_t regions = k::parallel_regions_run();
    std::vector<float> out(x.size()), gx(x.size()), gw(n), gb(n);
    std::vector<double> mean(rows), rstd(rows);
    k::layer_norm_kernel<float>(x.data(), n, 1, w.data(), b.data(), rows, n, 1e-5, out.data(),
                                mean.data(), rstd.data());
    k::layer_norm_backward_kernel<float>(g.data(), x.data(), mean.data(), rstd.data(), w.data(),
                                         rows, n, gx.data(), gw.data(), gb.data());
    if (threads == 2) {
      EXPECT_EQ(k::parallel_regions_run(), regions + 2);  // both were split
    }
    results[threads - 1] = {bits(out), bits(mean), bits(rstd), bits(gx), bits(gw), bits(gb)};
  }
  for (std::size_t i = 0; i < results[0].size(); ++i)
    EXPECT_TRUE(results[0][i] == results[1][i]) << "result " << i << " differs";
}

// float32 rows run in AVX2 / AVX-512 double vectors when the CPU has them (norm_simd_impl.h):
// the same operations as the portable loops, in the same order, none fused, so the same bits, on
// every level this CPU has: rows of every length around the 8-wide groups, each affine case,
// every subset of backward outputs, values of very different sizes (and a row of 1e4 + small).
// mean and rstd are the doubles themselves; a float result would hide a last-bit difference in
// the double it is rounded from, unless it crosses a rounding boundary.
TEST(Kernels, LayerNormFloat32RowsHaveThePortableBitsOnEveryLevel) {
  namespace simd = minigrad::detail::simd;
  std::vector<simd::Level> levels;
  for (auto level : {simd::Level::kAvx2, simd::Level::kAvx512})
    if (simd::kernels_f32_at(level)) levels.push_back(level);
  if (levels.empty()) GTEST_SKIP() << "no AVX2 on this CPU";
  struct Restore {
    ~Restore() { simd::set_max_level(simd::Level::kAvx512); }
  } restore;
  std::uint32_t state = 777;
  auto next = [&state] {  // in [-2, 2), then spread over exponents -8 .. 8
    state = state * 1664525u + 1013904223u;
    const float u = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 4.0f - 2.0f;
    return std::ldexp(u, static_cast<int>(state % 17) - 8);
  };
  for (const std::int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 64, 100, 768, 1031}) {
    const std::int64_t rows = 5;
    std::vector<float> x(static_cast<std::size_t>(rows * n)), g(x.size()), w(n), b(n);
    for (auto* v : {&x, &g, &w, &b})
      for (float& e : *v) e = next();
    for (std::int64_t j = 0; j < n; ++j) x[static_cast<std::size_t>(n + j)] += 1e4f;  // row 1
    for (int affine = 0; affine < 4; ++affine) {
      const float* wp = affine & 1 ? w.data() : nullptr;
      const float* bp = affine & 2 ? b.data() : nullptr;
      // results[0]: portable; then one per level.
      std::vector<std::vector<std::vector<unsigned char>>> results;
      for (std::size_t li = 0; li <= levels.size(); ++li) {
        simd::set_max_level(li == 0 ? simd::Level::kPortable : levels[li - 1]);
        std::vector<float> out(x.size()), gx(x.size()), gx2(x.size()), gw(n), gb(n), gw2(n);
        std::vector<double> mean(rows), rstd(rows);
        k::layer_norm_kernel<float>(x.data(), n, 1, wp, bp, rows, n, 1e-5, out.data(), mean.data(),
                                    rstd.data());
        k::layer_norm_backward_kernel<float>(g.data(), x.data(), mean.data(), rstd.data(), wp, rows,
                                             n, gx.data(), gw.data(), gb.data());
        k::layer_norm_backward_kernel<float>(g.data(), x.data(), mean.data(), rstd.data(), wp, rows,
                                             n, gx2.data(), nullptr, nullptr);
        k::layer_norm_backward_kernel<float>(g.data(), x.data(), mean.data(), rstd.data(), wp, rows,
                                             n, nullptr, gw2.data(), nullptr);
        results.push_back({bits(out), bits(mean), bits(rstd), bits(gx), bits(gw), bits(gb),
                           bits(gx2), bits(gw2)});
      }
      for (std::size_t li = 1; li < results.size(); ++li)
        for (std::size_t i = 0; i < results[0].size(); ++i)
          EXPECT_TRUE(results[0][i] == results[li][i])
              << "n " << n << " affine " << affine << " level " << static_cast<int>(levels[li - 1])
              << ": result " << i << " differs from the portable loops'";
    }
  }
}

// Without create_graph, LayerNormFn's backward is the fused kernel; with create_graph it is
// written with public ops. Both must give the same gradients, shaped like x, weight and bias, for
// every subset of inputs that require grad, two normalised dims and a transposed input.
TEST(Kernels, LayerNormFusedBackwardMatchesCreateGraphBackward) {
  namespace mg = minigrad;
  // (dtype, offset): rows of 1e4 + randn only in float64, where the create_graph backward's
  // statistics (rebuilt in the input's dtype) are exact enough to compare with.
  for (auto [dt, offset] :
       {std::pair{mg::kFloat64, 0.0}, std::pair{mg::kFloat32, 0.0}, std::pair{mg::kFloat64, 1e4}}) {
    const double tol = dt == mg::kFloat32 ? 2e-5 : offset == 0 ? 1e-12 : 1e-9;
    mg::manual_seed(7);
    mg::Tensor x0 = (mg::randn({3, 6, 4}, dt) + offset).transpose(0, 2);  // [4, 6, 3], strided
    mg::Tensor w0 = mg::randn({6, 3}, dt), b0 = mg::randn({6, 3}, dt);
    mg::Tensor gout = mg::randn({4, 6, 3}, dt);
    // Which of x, weight, bias are passed (a weight / bias that is not passed is undefined) and
    // which of them require grad.
    struct Case {
      bool weight, bias, x_grad, w_grad, b_grad;
    };
    for (Case c : {Case{true, true, true, true, true}, Case{false, false, true, false, false},
                   Case{true, true, false, true, false}, Case{true, true, false, false, true},
                   Case{true, false, true, false, false}, Case{true, true, true, false, true}}) {
      std::vector<mg::Tensor> grads[2];
      for (bool create_graph : {false, true}) {
        mg::Tensor x = x0.detach().requires_grad_(c.x_grad);
        mg::Tensor w = c.weight ? w0.detach().requires_grad_(c.w_grad) : mg::Tensor();
        mg::Tensor b = c.bias ? b0.detach().requires_grad_(c.b_grad) : mg::Tensor();
        std::vector<mg::Tensor> inputs;
        if (c.x_grad) inputs.push_back(x);
        if (c.w_grad) inputs.push_back(w);
        if (c.b_grad) inputs.push_back(b);
        mg::Tensor y = mg::layer_norm(x, {6, 3}, w, b, 1e-5);
        grads[create_graph] = mg::autograd::grad({y}, inputs, {gout}, std::nullopt, create_graph);
        for (std::size_t i = 0; i < inputs.size(); ++i)
          EXPECT_EQ(grads[create_graph][i].shape(), inputs[i].shape());
      }
      ASSERT_EQ(grads[0].size(), grads[1].size());
      for (std::size_t i = 0; i < grads[0].size(); ++i) {
        std::vector<double> fused = grads[0][i].to_vector<double>(),
                            composed = grads[1][i].detach().to_vector<double>();
        expect_near(fused, composed, tol);
      }
    }
  }
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
