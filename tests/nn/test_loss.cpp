// Losses: cross_entropy, nll_loss, kl_div, binary_cross_entropy_with_logits. Expected values are
// literal numbers from PyTorch 1.13 (/usr/bin/python3); the Python that printed them is in the
// comments (x, t, w, ... are defined in the comment of the test's fixture or the test itself).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/nn/loss.h>
#include <minigrad/testing.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace mg = minigrad;
namespace F = minigrad::nn::functional;

namespace {

template <typename Fn>
void expect_error(Fn&& stmt, const std::string& op) {
  try {
    stmt();
    ADD_FAILURE() << "expected minigrad::Error from [" << op << "]";
  } catch (const mg::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  }
}

void expect_values(const mg::Tensor& t, const std::vector<double>& expected, double tol = 1e-10) {
  ASSERT_TRUE(t.defined());
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::fabs(expected[i]))) << "at " << i;
}

/// d(loss.sum()) / d(inputs), leaving the inputs' .grad() untouched.
std::vector<mg::Tensor> grads_of(const mg::Tensor& loss, const std::vector<mg::Tensor>& inputs) {
  return mg::autograd::grad({loss.sum()}, inputs);
}

// Python for the shared inputs:
//   import torch, torch.nn.functional as F
//   D = torch.float64
//   x = torch.tensor([[1.0, 2.0, 0.5], [-1.0, 0.3, 2.2], [0.7, -0.4, 0.1], [2.5, 1.5, -3.0]],
//                    dtype=D, requires_grad=True)
//   t = torch.tensor([0, 2, 1, 2]); ti = torch.tensor([0, -100, 1, 2])
//   w = torch.tensor([0.2, 1.0, 3.0], dtype=D)
//   p = torch.tensor([[0.1, 0.6, 0.3], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0], [0.2, 0.2, 0.6]],
//                    dtype=D, requires_grad=True)
//   xk = torch.tensor([[[0.2, -1.0], [1.3, 0.4], [-0.6, 2.0]], [[1.1, 0.0], [-0.3, 0.9],
//                      [0.5, -1.2]]], dtype=D, requires_grad=True)
//   tk = torch.tensor([[2, 0], [-100, 1]])
//   l = <the call in the test>; l.tolist(); torch.autograd.grad(l.sum(), inputs)
struct Inputs {
  mg::Tensor x = mg::tensor({{1.0, 2.0, 0.5}, {-1.0, 0.3, 2.2}, {0.7, -0.4, 0.1}, {2.5, 1.5, -3.0}},
                            mg::kFloat64)
                     .requires_grad_();
  mg::Tensor t = mg::tensor({0, 2, 1, 2}, mg::kInt64);
  mg::Tensor ti = mg::tensor({0, -100, 1, 2}, mg::kInt64);
  mg::Tensor w = mg::tensor({0.2, 1.0, 3.0}, mg::kFloat64);
  mg::Tensor p =
      mg::tensor({{0.1, 0.6, 0.3}, {0.0, 0.5, 0.5}, {1.0, 0.0, 0.0}, {0.2, 0.2, 0.6}}, mg::kFloat64)
          .requires_grad_();
  mg::Tensor xk =
      mg::tensor({{{0.2, -1.0}, {1.3, 0.4}, {-0.6, 2.0}}, {{1.1, 0.0}, {-0.3, 0.9}, {0.5, -1.2}}},
                 mg::kFloat64)
          .requires_grad_();
  mg::Tensor tk = mg::tensor({2, 0, -100, 1}, {2, 2}, mg::kInt64);
};

}  // namespace

// ---------------------------------------------------------------- cross_entropy, class indices

TEST(NnLossCrossEntropy, MeanMatchesPyTorch) {
  Inputs in;
  // F.cross_entropy(x, t)
  mg::Tensor l = F::cross_entropy(in.x, in.t);
  EXPECT_EQ(l.shape(), mg::Shape{});
  expect_values(l, {2.296752849534737});
  expect_values(
      grads_of(l, {in.x})[0],
      {-0.19219402559446275, 0.1571329298029406, 0.03506109579152212, 0.008561108219635474,
       0.03141324586143617, -0.03997435408107164, 0.13285980541268974, -0.205774812592362,
       0.07291500717967225, 0.18222023086444838, 0.06703507670054447, -0.24925530756499284});
}

TEST(NnLossCrossEntropy, WeightsAndIgnoreIndexMatchPyTorch) {
  Inputs in;
  // F.cross_entropy(x, ti, weight=w)  (mean divides by w[0] + w[1] + w[2], the non-ignored ones)
  mg::Tensor l = F::cross_entropy(in.x, in.ti, in.w);
  expect_values(l, {4.6366130726001185});
  expect_values(grads_of(l, {in.x})[0],
                {-0.03660838582751671, 0.02993008186722678, 0.0066783039602899275, 0.0, 0.0, 0.0,
                 0.12653314801208546, -0.19597601199272568, 0.06944286398064024, 0.520629231041281,
                 0.19152879057298416, -0.7121580216142652});
  // F.cross_entropy(x, ti, weight=w, reduction="sum") and reduction="none": same gradient
  std::vector<double> g_sum = {-0.1537552204755702,
                               0.1257063438423525,
                               0.028048876633217697,
                               0.0,
                               0.0,
                               0.0,
                               0.531439221650759,
                               -0.823099250369448,
                               0.291660028718689,
                               2.1866427703733806,
                               0.8044209204065336,
                               -2.991063690779914};
  mg::Tensor s = F::cross_entropy(in.x, in.ti, in.w, -100, "sum");
  expect_values(s, {19.4737749049205});
  expect_values(grads_of(s, {in.x})[0], g_sum);
  mg::Tensor n = F::cross_entropy(in.x, in.ti, in.w, -100, "none");
  EXPECT_EQ(n.shape(), (mg::Shape{4}));
  expect_values(n, {0.292873756821589, 0.0, 1.7321664402303956, 17.448734707868518});
  expect_values(grads_of(n, {in.x})[0], g_sum);
}

TEST(NnLossCrossEntropy, IgnoreIndexInsideTheClassRange) {
  Inputs in;
  // F.cross_entropy(x, t, ignore_index=1)
  mg::Tensor l = F::cross_entropy(in.x, in.t, {}, 1);
  expect_values(l, {2.4849483193028505});
  expect_values(grads_of(l, {in.x})[0],
                {-0.256258700792617, 0.20951057307058746, 0.04674812772202949, 0.011414810959513966,
                 0.04188432781524823, -0.05329913877476218, 0.0, 0.0, 0.0, 0.2429603078192645,
                 0.08938010226739262, -0.3323404100866571});
}

TEST(NnLossCrossEntropy, LabelSmoothingMatchesPyTorch) {
  Inputs in;
  // F.cross_entropy(x, ti, label_smoothing=0.1)
  mg::Tensor l = F::cross_entropy(in.x, in.ti, {}, -100, "mean", 0.1);
  expect_values(l, {2.8698155978759488});
  expect_values(grads_of(l, {in.x})[0],
                {-0.23403647857039475, 0.1983994619594764, 0.035637016610918386, 0.0, 0.0, 0.0,
                 0.16603529610580856, -0.25214419456759374, 0.08610889846178524,
                 0.23184919670815338, 0.07826899115628151, -0.3101181878644349});
  // F.cross_entropy(x, ti, weight=w, label_smoothing=0.1)
  mg::Tensor lw = F::cross_entropy(in.x, in.ti, in.w, -100, "mean", 0.1);
  expect_values(lw, {4.419250785445162});
  expect_values(grads_of(lw, {in.x})[0],
                {-0.026827385577994994, 0.03995162305105492, -0.013124237473059923, 0.0, 0.0, 0.0,
                 0.1300071723452673, -0.17841822707560934, 0.04841105473034204, 0.4912750371317778,
                 0.1733774138059171, -0.6646524509376949});
  // F.cross_entropy(x, ti, weight=w, label_smoothing=0.1, reduction="none")
  mg::Tensor n = F::cross_entropy(in.x, in.ti, in.w, -100, "none", 0.1);
  expect_values(n, {0.48526467758120906, 0.0, 1.744119764506278, 16.331468856782198});
  expect_values(grads_of(n, {in.x})[0],
                {-0.11267501942757899, 0.16779681681443065, -0.05512179738685169, 0.0, 0.0, 0.0,
                 0.5460301238501227, -0.7493565537175592, 0.20332642986743657, 2.063355155953467,
                 0.728185137984852, -2.791540293938319});
}

TEST(NnLossCrossEntropy, KDimInputMatchesPyTorch) {
  Inputs in;
  // F.cross_entropy(xk, tk, weight=w)
  mg::Tensor l = F::cross_entropy(in.xk, in.tk, in.w);
  expect_values(l, {1.8929991493468108});
  expect_values(grads_of(l, {in.xk})[0],
                {0.16038767668991585, -0.045724948499068066, 0.4818312089715506,
                 0.00768095068854159, -0.6422188856614665, 0.038043997810526475, 0.0,
                 0.06330977652923098, 0.0, -0.08237831477729035, 0.0, 0.019068538248059347});
  // F.cross_entropy(xk, tk, label_smoothing=0.1, reduction="none")
  mg::Tensor n = F::cross_entropy(in.xk, in.tk, {}, -100, "none", 0.1);
  EXPECT_EQ(n.shape(), (mg::Shape{2, 2}));
  expect_values(n, {2.2036891784964636, 3.0778228475229956, 0.0, 0.5246309889292832});
  expect_values(grads_of(n, {in.xk})[0],
                {0.1912094140325489, -0.8935572518137629, 0.6412303592268376, 0.12796663112604006,
                 -0.8324397732593865, 0.7655906206877228, 0.0, 0.23256772808943676, 0.0,
                 -0.27932225539795286, 0.0, 0.04675452730851593});
}

TEST(NnLossCrossEntropy, OneDimInputWithScalarTarget) {
  // x1 = torch.tensor([0.5, -0.2, 1.7], dtype=D, requires_grad=True)
  // F.cross_entropy(x1, torch.tensor(1))
  mg::Tensor x1 = mg::tensor({0.5, -0.2, 1.7}, mg::kFloat64).requires_grad_();
  mg::Tensor l = F::cross_entropy(x1, mg::scalar_tensor(1, mg::kInt64));
  expect_values(l, {2.2720895085332438});
  expect_values(grads_of(l, {x1})[0],
                {0.20761092402443035, -0.8969034662229131, 0.6892925421984828});
  EXPECT_EQ(F::cross_entropy(x1, mg::scalar_tensor(1, mg::kInt64), {}, -100, "none").shape(),
            mg::Shape{});
}

TEST(NnLossCrossEntropy, LogitsOf1e4AreFiniteInFloat32) {
  // xb = torch.tensor([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [1e4, 1e4, -1e4]], requires_grad=True)
  // tb = torch.tensor([1, 2, 0])
  // F.cross_entropy(xb, tb, reduction="none"); F.cross_entropy(xb, tb, label_smoothing=0.1)
  mg::Tensor xb =
      mg::tensor({{1e4, -1e4, 0.0}, {-1e4, -1e4, 1e4}, {1e4, 1e4, -1e4}}).requires_grad_();
  mg::Tensor tb = mg::tensor({1, 2, 0}, mg::kInt64);
  mg::Tensor n = F::cross_entropy(xb, tb, {}, -100, "none");
  EXPECT_EQ(n.dtype(), mg::kFloat32);
  expect_values(n, {20000.0, 0.0, 0.6931471824645996}, 1e-6);
  expect_values(grads_of(n, {xb})[0], {1.0, -1.0, 0.0, 0.0, 0.0, 0.0, -0.5, 0.5, 0.0}, 1e-6);
  mg::Tensor l = F::cross_entropy(xb, tb, {}, -100, "mean", 0.1);
  expect_values(l, {7000.2314453125}, 1e-6);
  expect_values(grads_of(l, {xb})[0],
                {0.32222220301628113, -0.31111109256744385, -0.011111111380159855,
                 -0.011111111380159855, -0.011111111380159855, 0.02222222089767456,
                 -0.14444443583488464, 0.15555554628372192, -0.011111111380159855},
                1e-6);
}

// Rows of GPT-2's vocabulary (50257 classes, float32): the logsumexp of a long contiguous row runs
// in the SIMD kernels' max and exp-sum, split across threads by rows, and the backward's rows too.
// Values from /usr/bin/python3, torch 1.13:
//   i = torch.arange(3 * C, dtype=torch.float64).reshape(3, C); x = (torch.sin(i * 0.001) * 10)
//   .float(); x[1, 5] = -inf; x[2, C - 1] = 30 (the row's max, in the SIMD tail);
//   t = torch.tensor([5, 17, C - 1]); F.cross_entropy(x, t, ...)
TEST(NnLossCrossEntropy, RowsOfAVocabularyMatchPyTorch) {
  const std::int64_t C = 50257;
  std::vector<double> v(static_cast<std::size_t>(3 * C));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(static_cast<float>(std::sin(static_cast<double>(i) * 0.001) * 10));
  v[static_cast<std::size_t>(C + 5)] = -std::numeric_limits<double>::infinity();
  v[static_cast<std::size_t>(3 * C - 1)] = 30.0;
  mg::Tensor x = mg::tensor(v, {3, C}, mg::kFloat32).requires_grad_();
  mg::Tensor t = mg::tensor({5, 17, static_cast<int>(C - 1)}, mg::kInt64);
  const int before = mg::get_num_threads();
  for (int threads : {1, 2}) {
    mg::set_num_threads(threads);
    expect_values(F::cross_entropy(x, t, {}, -100, "none"),
                  {18.718042373657227, 18.68286895751953, 1.3351351299206726e-05}, 1e-6);
    mg::Tensor l = F::cross_entropy(x, t);
    expect_values(l, {12.466975212097168}, 1e-6);
    mg::Tensor g = mg::autograd::grad({l}, {x})[0];
    EXPECT_NEAR(g.index({0, 5}).item<double>(), -0.3333333432674408, 1e-7);
    // (softmax - 1) / 3 at a softmax of 1 - 1.3e-5: float32's spacing below 1 is 6e-8.
    EXPECT_NEAR(g.index({2, C - 1}).item<double>(), -4.450480446394067e-06, 1e-7);
    EXPECT_EQ(g.index({1, 5}).item<double>(), 0.0);
    EXPECT_NEAR(g.index({0, 0}).item<double>(), 2.3551631755935887e-09, 1e-14);
  }
  mg::set_num_threads(before);
}

TEST(NnLossCrossEntropy, AllTargetsIgnoredGivesNaNAndZeroGradient) {
  // F.cross_entropy(x, torch.full((4,), -100)) is nan; its gradient is all zeros.
  Inputs in;
  mg::Tensor all_ignored = mg::full({4}, -100, mg::kInt64);
  for (double ls : {0.0, 0.1}) {
    mg::Tensor l = F::cross_entropy(in.x, all_ignored, in.w, -100, "mean", ls);
    EXPECT_TRUE(std::isnan(l.item<double>()));
    for (double g : grads_of(l, {in.x})[0].to_vector<double>()) EXPECT_EQ(g, 0.0);
  }
  EXPECT_EQ(F::cross_entropy(in.x, all_ignored, {}, -100, "sum").item<double>(), 0.0);
}

// ---------------------------------------------------------------- cross_entropy, probabilities

TEST(NnLossCrossEntropy, ProbabilityTargetsMatchPyTorch) {
  Inputs in;
  // F.cross_entropy(x, p); gradients w.r.t. x and p
  mg::Tensor l = F::cross_entropy(in.x, in.p);
  expect_values(l, {1.646752849534737});
  auto g = grads_of(l, {in.x, in.p});
  expect_values(
      g[0], {0.03280597440553726, 0.007132929802940613, -0.03993890420847788, 0.008561108219635474,
             -0.09358675413856382, 0.08502564591892836, -0.11714019458731026, 0.04422518740763801,
             0.07291500717967225, 0.1322202308644484, 0.017035076700544466, -0.14925530756499283});
  expect_values(g[1],
                {0.3660921960269862, 0.11609219602698623, 0.4910921960269862, 0.8435578177944419,
                 0.5185578177944419, 0.0435578177944419, 0.1580416100575989, 0.4330416100575989,
                 0.3080416100575989, 0.07906122565571, 0.32906122565571, 1.45406122565571});
  // F.cross_entropy(x, p, weight=w, label_smoothing=0.1)
  mg::Tensor lw = F::cross_entropy(in.x, in.p, in.w, -100, "mean", 0.1);
  expect_values(lw, {3.49120082857736});
  auto gw = grads_of(lw, {in.x, in.p});
  expect_values(gw[0], {0.08100474273688352, 0.0936231248095011, -0.17462786754638465,
                        0.014941883279426154, -0.059891636362147165, 0.04494975308272102,
                        -0.004151528934605951, 0.005818726637110831, -0.0016671977025048798,
                        0.3494005095214834, 0.07912797822694255, -0.4285284877484259});
  expect_values(gw[1],
                {0.06589659528485753, 0.10448297642428761, 1.3259489292728628, 0.15184040720299954,
                 0.4667020360149977, 0.11760610804499314, 0.028447489810367804, 0.389737449051839,
                 0.831712347155517, 0.0142310206180278, 0.296155103090139, 3.9259653092704165});
  // F.cross_entropy(x, p, reduction="none")
  mg::Tensor n = F::cross_entropy(in.x, in.p, {}, -100, "none");
  expect_values(n, {1.014368784107945, 1.1242312711777676, 0.6321664402303956, 3.8162449026228398});
  auto gn = grads_of(n, {in.x, in.p});
  expect_values(
      gn[0], {0.13122389762214903, 0.028531719211762452, -0.1597556168339115, 0.0342444328785419,
              -0.3743470165542553, 0.34010258367571344, -0.46856077834924104, 0.17690074963055205,
              0.291660028718689, 0.5288809234577936, 0.06814030680217786, -0.5970212302599713});
  expect_values(gn[1],
                {1.464368784107945, 0.4643687841079449, 1.964368784107945, 3.3742312711777678,
                 2.0742312711777675, 0.1742312711777676, 0.6321664402303956, 1.7321664402303956,
                 1.2321664402303956, 0.31624490262284, 1.31624490262284, 5.81624490262284});
}

TEST(NnLossCrossEntropy, EmptyBatchMeanIsNaN) {
  // F.cross_entropy(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long)) and probabilities: nan
  EXPECT_TRUE(
      std::isnan(F::cross_entropy(mg::zeros({0, 3}), mg::zeros({0}, mg::kInt64)).item<float>()));
  EXPECT_TRUE(std::isnan(F::cross_entropy(mg::zeros({0, 3}), mg::zeros({0, 3})).item<float>()));
}

// ---------------------------------------------------------------- nll_loss

TEST(NnLossNll, MatchesPyTorch) {
  // lp = torch.tensor([[-0.5, -1.2, -2.0], [-0.1, -3.0, -2.5], [-1.0, -0.7, -1.9],
  //                    [-2.2, -0.3, -1.4]], dtype=D, requires_grad=True)
  Inputs in;
  mg::Tensor lp =
      mg::tensor({{-0.5, -1.2, -2.0}, {-0.1, -3.0, -2.5}, {-1.0, -0.7, -1.9}, {-2.2, -0.3, -1.4}},
                 mg::kFloat64)
          .requires_grad_();
  // F.nll_loss(lp, t)
  mg::Tensor l = F::nll_loss(lp, in.t);
  expect_values(l, {1.275});
  expect_values(grads_of(l, {lp})[0],
                {-0.25, 0.0, 0.0, 0.0, 0.0, -0.25, 0.0, -0.25, 0.0, 0.0, 0.0, -0.25});
  // F.nll_loss(lp, ti, weight=w)
  mg::Tensor lw = F::nll_loss(lp, in.ti, in.w);
  expect_values(lw, {1.1904761904761902});
  expect_values(grads_of(lw, {lp})[0], {-0.047619047619047616, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                        -0.23809523809523808, 0.0, 0.0, 0.0, -0.7142857142857142});
  // F.nll_loss(lp, ti, weight=w, reduction="none")
  mg::Tensor n = F::nll_loss(lp, in.ti, in.w, -100, "none");
  expect_values(n, {0.1, 0.0, 0.7, 4.199999999999999});
  expect_values(grads_of(n, {lp})[0],
                {-0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -3.0});
  // F.nll_loss(lp, ti, reduction="sum")
  mg::Tensor s = F::nll_loss(lp, in.ti, {}, -100, "sum");
  expect_values(s, {2.5999999999999996});
  expect_values(grads_of(s, {lp})[0],
                {-1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, -1.0});
  // F.nll_loss(xk, tk)
  mg::Tensor k = F::nll_loss(in.xk, in.tk);
  expect_values(k, {0.2333333333333333});
  expect_values(grads_of(k, {in.xk})[0], {0.0, -0.3333333333333333, 0.0, 0.0, -0.3333333333333333,
                                          0.0, 0.0, 0.0, 0.0, -0.3333333333333333, 0.0, 0.0});
  // F.nll_loss(lp, torch.full((4,), -100)) is nan
  EXPECT_TRUE(std::isnan(F::nll_loss(lp, mg::full({4}, -100, mg::kInt64)).item<double>()));
}

TEST(NnLossNll, CrossEntropyIsNllOfLogSoftmax) {
  Inputs in;
  mg::Tensor a = F::cross_entropy(in.xk, in.tk, in.w, -100, "none");
  mg::Tensor b = F::nll_loss(mg::log_softmax(in.xk, 1), in.tk, in.w, -100, "none");
  EXPECT_TRUE(mg::allclose(a, b, 1e-12, 1e-12));
}

// ---------------------------------------------------------------- kl_div

TEST(NnLossKlDiv, MatchesPyTorch) {
  // ki = torch.tensor([[-1.2, -0.5, -2.0], [-0.3, -1.6, -2.4]], dtype=D, requires_grad=True)
  // kt = torch.tensor([[0.2, 0.5, 0.3], [0.0, 0.7, 0.3]], dtype=D, requires_grad=True)
  mg::Tensor ki =
      mg::tensor({{-1.2, -0.5, -2.0}, {-0.3, -1.6, -2.4}}, mg::kFloat64).requires_grad_();
  mg::Tensor kt = mg::tensor({{0.2, 0.5, 0.3}, {0.0, 0.7, 0.3}}, mg::kFloat64).requires_grad_();
  // F.kl_div(ki, kt): "mean" averages over all 6 elements
  mg::Tensor m = F::kl_div(ki, kt);
  expect_values(m, {0.21491378064675545});
  auto gm = grads_of(m, {ki, kt});
  expect_values(gm[0], {-0.03333333333333333, -0.08333333333333333, -0.049999999999999996, 0.0,
                        -0.11666666666666665, -0.049999999999999996});
  // NOTE: PyTorch's gradient w.r.t. a target of exactly 0 is nan (xlogy's 0 / 0); element 3 is
  // not compared.
  std::vector<double> gt = gm[1].to_vector<double>();
  std::vector<double> expected_gt = {0.09842701459431663, 0.13447546990667578,
                                     0.2993378659456773,  0.0,
                                     0.3738875093435446,  0.36600453261234395};
  for (std::size_t i : {0u, 1u, 2u, 4u, 5u}) EXPECT_NEAR(gt[i], expected_gt[i], 1e-12);
  // F.kl_div(ki, kt, reduction="batchmean")
  mg::Tensor bm = F::kl_div(ki, kt, "batchmean");
  expect_values(bm, {0.6447413419402663});
  expect_values(grads_of(bm, {ki})[0], {-0.1, -0.25, -0.15, 0.0, -0.35, -0.15});
  // F.kl_div(ki, kt, reduction="sum")
  expect_values(F::kl_div(ki, kt, "sum"), {1.2894826838805327});
  // F.kl_div(ki, kt, reduction="none")
  mg::Tensor n = F::kl_div(ki, kt, "none");
  EXPECT_EQ(n.shape(), (mg::Shape{2, 3}));
  expect_values(n, {-0.0818875824868201, -0.09657359027997264, 0.23880815870221916, 0.0,
                    0.8703275392428872, 0.35880815870221916});
  // klt = torch.tensor([[-1.0, -0.4, -2.2], [-0.9, -0.8, -1.5]], dtype=D, requires_grad=True)
  // F.kl_div(ki, klt, reduction="batchmean", log_target=True)
  mg::Tensor klt =
      mg::tensor({{-1.0, -0.4, -2.2}, {-0.9, -0.8, -1.5}}, mg::kFloat64).requires_grad_();
  mg::Tensor lt = F::kl_div(ki, klt, "batchmean", true);
  expect_values(lt, {0.21739289037419518});
  auto glt = grads_of(lt, {ki, klt});
  expect_values(glt[0], {-0.18393972058572117, -0.3351600230178196, -0.05540157918116693,
                         -0.20328482987029955, -0.22466448205861078, -0.11156508007421491});
  expect_values(glt[1], {0.2207276647028654, 0.3686760253196016, 0.04432126334493353,
                         0.0813139319481198, 0.4043960677054994, 0.21197365214100833});
}

// ---------------------------------------------------------------- binary_cross_entropy_with_logits

TEST(NnLossBceWithLogits, MatchesPyTorch) {
  // bx = torch.tensor([[0.0, 1.5, -2.0], [3.0, -0.5, 0.8]], dtype=D, requires_grad=True)
  // bt = torch.tensor([[1.0, 0.0, 0.3], [1.0, 0.6, 0.0]], dtype=D, requires_grad=True)
  // bw = torch.tensor([[0.5], [2.0]], dtype=D); bpw = torch.tensor([1.0, 2.0, 0.5], dtype=D)
  mg::Tensor bx = mg::tensor({{0.0, 1.5, -2.0}, {3.0, -0.5, 0.8}}, mg::kFloat64).requires_grad_();
  mg::Tensor bt = mg::tensor({{1.0, 0.0, 0.3}, {1.0, 0.6, 0.0}}, mg::kFloat64).requires_grad_();
  mg::Tensor bw = mg::tensor({0.5, 2.0}, {2, 1}, mg::kFloat64);
  mg::Tensor bpw = mg::tensor({1.0, 2.0, 0.5}, mg::kFloat64);
  // F.binary_cross_entropy_with_logits(bx, bt)  (element 0 is at x = 0: gradient sigmoid(0) - 1)
  mg::Tensor l = F::binary_cross_entropy_with_logits(bx, bt);
  expect_values(l, {0.8525422452145496});
  auto g = grads_of(l, {bx, bt});
  expect_values(g[0], {-0.08333333333333333, 0.1362624126989406, -0.030132846329647075,
                       -0.007904312196261106, -0.03707655520030909, 0.11499574685460208});
  expect_values(g[1],
                {0.0, -0.25, 0.3333333333333333, -0.5, 0.08333333333333333, -0.13333333333333333});
  // F.binary_cross_entropy_with_logits(bx, bt, weight=bw, reduction="sum")
  mg::Tensor s = F::binary_cross_entropy_with_logits(bx, bt, bw, "sum");
  expect_values(s, {5.548274238196088});
  auto gs = grads_of(s, {bx, bt});
  expect_values(gs[0], {-0.25, 0.4087872380968218, -0.09039853898894122, -0.09485174635513327,
                        -0.44491866240370914, 1.379948962255225});
  expect_values(gs[1], {0.0, -0.75, 1.0, -6.0, 1.0, -1.6});
  // F.binary_cross_entropy_with_logits(bx, bt, pos_weight=bpw, reduction="none")
  mg::Tensor n = F::binary_cross_entropy_with_logits(bx, bt, {}, "none", bpw);
  expect_values(n, {0.6931471805599453, 1.7014132779827524, 0.4078888093865267,
                    0.048587351573741965, 1.3585231746881707, 1.1711006659477778});
  auto gn = grads_of(n, {bx, bt});
  expect_values(gn[0], {-0.5, 0.8175744761936437, -0.048677516281200095, -0.047425873177566635,
                        -0.5959349299229673, 0.6899744811276125});
  expect_values(gn[1], {0.0, -1.2985867220172476, 0.9365359944785139, -3.0, 1.4740769841801067,
                        -0.985550332973889});
  // F.binary_cross_entropy_with_logits(bx, bt, weight=bw, pos_weight=bpw)
  mg::Tensor wp = F::binary_cross_entropy_with_logits(bx, bt, bw, "mean", bpw);
  expect_values(wp, {1.0929411697306655});
  auto gwp = grads_of(wp, {bx, bt});
  expect_values(gwp[0], {-0.041666666666666664, 0.0681312063494703, -0.004056459690100008,
                         -0.015808624392522213, -0.1986449766409891, 0.22999149370920416});
  expect_values(gwp[1], {0.0, -0.10821556016810396, 0.07804466620654282, -1.0, 0.49135899472670225,
                         -0.328516777657963});
}

TEST(NnLossBceWithLogits, LogitsOf1e4AreFinite) {
  // bb = torch.tensor([1e4, -1e4, 1e4, -1e4], requires_grad=True)
  // F.binary_cross_entropy_with_logits(bb, torch.tensor([1.0, 0.0, 0.0, 1.0]), reduction="none")
  mg::Tensor bb = mg::tensor({1e4, -1e4, 1e4, -1e4}).requires_grad_();
  mg::Tensor n =
      F::binary_cross_entropy_with_logits(bb, mg::tensor({1.0, 0.0, 0.0, 1.0}), {}, "none");
  expect_values(n, {0.0, 0.0, 10000.0, 10000.0}, 1e-6);
  expect_values(grads_of(n, {bb})[0], {0.0, 0.0, 1.0, -1.0}, 1e-6);
}

// ---------------------------------------------------------------- gradcheck (float64)

TEST(NnLossGradcheck, CrossEntropy) {
  Inputs in;
  for (const char* red : {"mean", "sum", "none"}) {
    for (double ls : {0.0, 0.1}) {
      auto f = [&](const std::vector<mg::Tensor>& v) {
        return F::cross_entropy(v[0], in.ti, in.w, -100, red, ls);
      };
      EXPECT_GRADCHECK(f, {in.x}) << red << " " << ls;
      auto fk = [&](const std::vector<mg::Tensor>& v) {
        return F::cross_entropy(v[0], in.tk, {}, -100, red, ls);
      };
      EXPECT_GRADCHECK(fk, {in.xk}) << red << " " << ls;
      auto fp = [&](const std::vector<mg::Tensor>& v) {
        return F::cross_entropy(v[0], v[1], in.w, -100, red, ls);
      };
      EXPECT_GRADCHECK(fp, {in.x, in.p}) << red << " " << ls;
    }
  }
  // A transposed (non-contiguous) input.
  mg::Tensor xt = mg::tensor({{0.3, -0.2, 1.1, 0.4}, {0.9, 0.0, -0.7, 1.6}, {-1.3, 0.8, 0.2, 0.5}},
                             mg::kFloat64)
                      .requires_grad_();
  auto ft = [&](const std::vector<mg::Tensor>& v) {
    return F::cross_entropy(v[0].t(), in.t, {}, -100, "mean", 0.2);
  };
  EXPECT_GRADCHECK(ft, {xt});
}

TEST(NnLossGradcheck, CrossEntropySecondOrder) {
  Inputs in;
  auto f = [&](const std::vector<mg::Tensor>& v) {
    return F::cross_entropy(v[0], in.ti, in.w, -100, "mean", 0.1);
  };
  EXPECT_GRADGRADCHECK(f, {in.x});
  auto fk = [&](const std::vector<mg::Tensor>& v) {
    return F::cross_entropy(v[0], in.tk, in.w, -100, "none");
  };
  EXPECT_GRADGRADCHECK(fk, {in.xk});
  auto fp = [&](const std::vector<mg::Tensor>& v) {
    return F::cross_entropy(v[0], v[1], in.w, -100, "mean", 0.1);
  };
  EXPECT_GRADGRADCHECK(fp, {in.x, in.p});
}

TEST(NnLossGradcheck, NllKlDivAndBce) {
  Inputs in;
  for (const char* red : {"mean", "sum", "none"}) {
    auto f = [&](const std::vector<mg::Tensor>& v) {
      return F::nll_loss(v[0], in.ti, in.w, -100, red);
    };
    EXPECT_GRADCHECK(f, {in.x}) << red;
    auto fk = [&](const std::vector<mg::Tensor>& v) {
      return F::nll_loss(v[0], in.tk, {}, -100, red);
    };
    EXPECT_GRADCHECK(fk, {in.xk}) << red;
  }
  mg::Tensor ki =
      mg::tensor({{-1.2, -0.5, -2.0}, {-0.3, -1.6, -2.4}}, mg::kFloat64).requires_grad_();
  mg::Tensor kt = mg::tensor({{0.2, 0.5, 0.3}, {0.1, 0.6, 0.3}}, mg::kFloat64).requires_grad_();
  for (const char* red : {"mean", "batchmean", "sum", "none"}) {
    for (bool log_target : {false, true}) {
      auto f = [&](const std::vector<mg::Tensor>& v) {
        return F::kl_div(v[0], v[1], red, log_target);
      };
      EXPECT_GRADCHECK(f, {ki, kt}) << red << " " << log_target;
    }
  }
  mg::Tensor bx = mg::tensor({{0.0, 1.5, -2.0}, {3.0, -0.5, 0.8}}, mg::kFloat64).requires_grad_();
  mg::Tensor bt = mg::tensor({{1.0, 0.0, 0.3}, {1.0, 0.6, 0.2}}, mg::kFloat64).requires_grad_();
  mg::Tensor bw = mg::tensor({0.5, 2.0}, {2, 1}, mg::kFloat64).requires_grad_();
  mg::Tensor bpw = mg::tensor({1.0, 2.0, 0.5}, mg::kFloat64).requires_grad_();
  for (const char* red : {"mean", "sum", "none"}) {
    auto f = [&](const std::vector<mg::Tensor>& v) {
      return F::binary_cross_entropy_with_logits(v[0], v[1], v[2], red, v[3]);
    };
    EXPECT_GRADCHECK(f, {bx, bt, bw, bpw}) << red;
  }
}

// ---------------------------------------------------------------- errors

TEST(NnLossErrors, CrossEntropy) {
  mg::Tensor x = mg::zeros({2, 5});
  try {
    F::cross_entropy(x, mg::tensor({1, 7}, mg::kInt64));
    ADD_FAILURE() << "expected an error";
  } catch (const mg::Error& e) {
    EXPECT_STREQ(e.what(), "[cross_entropy] target 7 is out of bounds for 5 classes");
  }
  auto ce = [](auto... args) { return [=] { F::cross_entropy(args...); }; };
  mg::Tensor t = mg::tensor({1, 2}, mg::kInt64);
  expect_error(ce(x, mg::tensor({-1, 2}, mg::kInt64)), "cross_entropy");    // negative class
  expect_error(ce(x, mg::tensor({1.0, 2.0})), "cross_entropy");             // float indices
  expect_error(ce(x, mg::zeros({2, 5}, mg::kInt64)), "cross_entropy");      // int probabilities
  expect_error(ce(x, mg::tensor({1, 2, 3}, mg::kInt64)), "cross_entropy");  // batch mismatch
  expect_error(ce(mg::zeros({2, 5, 3}), mg::zeros({2, 4}, mg::kInt64)), "cross_entropy");
  expect_error(ce(mg::zeros({2, 5}, mg::kInt64), t), "cross_entropy");  // integer logits
  expect_error(ce(mg::scalar_tensor(1.0), mg::scalar_tensor(0, mg::kInt64)), "cross_entropy");
  expect_error(ce(x, t, mg::ones({3})), "cross_entropy");                // weight size
  expect_error(ce(x, t, mg::ones({5}, mg::kFloat64)), "cross_entropy");  // weight dtype
  expect_error(ce(x, t, mg::Tensor(), -100, "batchmean"), "cross_entropy");
  expect_error(ce(x, t, mg::Tensor(), -100, "mean", 1.5), "cross_entropy");
  expect_error(ce(x, t, mg::Tensor(), -100, "mean", -0.1), "cross_entropy");
  expect_error(ce(x, mg::zeros({2, 5}), mg::Tensor(), 1), "cross_entropy");  // ignore_index, probs
  expect_error(ce(x, mg::Tensor()), "cross_entropy");
}

TEST(NnLossErrors, NllLoss) {
  mg::Tensor x = mg::zeros({2, 5});
  auto nll = [](auto... args) { return [=] { F::nll_loss(args...); }; };
  expect_error(nll(x, mg::tensor({1, 5}, mg::kInt64)), "nll_loss");
  expect_error(nll(x, mg::tensor({1.0, 2.0})), "nll_loss");
  expect_error(nll(x, mg::tensor({1}, mg::kInt64)), "nll_loss");
  expect_error(nll(mg::scalar_tensor(1.0), mg::scalar_tensor(0, mg::kInt64)), "nll_loss");
  expect_error(nll(x, mg::tensor({1, 2}, mg::kInt64), mg::ones({2, 5})), "nll_loss");
  expect_error(nll(x, mg::tensor({1, 2}, mg::kInt64), mg::Tensor(), -100, "batchmean"), "nll_loss");
}

TEST(NnLossErrors, KlDivAndBce) {
  mg::Tensor x = mg::zeros({4, 3});
  expect_error([&] { F::kl_div(x, mg::zeros({2})); }, "kl_div");
  expect_error([&] { F::kl_div(x, x, "average"); }, "kl_div");
  expect_error([&] { F::kl_div(x, mg::zeros({4, 3}, mg::kInt64)); }, "kl_div");
  const std::string bce = "binary_cross_entropy_with_logits";
  expect_error([&] { F::binary_cross_entropy_with_logits(x, mg::zeros({4, 1})); }, bce);
  expect_error([&] { F::binary_cross_entropy_with_logits(x, mg::zeros({4, 3}, mg::kInt64)); }, bce);
  expect_error([&] { F::binary_cross_entropy_with_logits(x, x, mg::ones({2})); }, bce);
  expect_error([&] { F::binary_cross_entropy_with_logits(x, x, {}, "mean", mg::ones({2})); }, bce);
  expect_error([&] { F::binary_cross_entropy_with_logits(x, x, mg::ones({4, 3, 1})); }, bce);
  expect_error([&] { F::binary_cross_entropy_with_logits(x, x, {}, "batchmean"); }, bce);
}

// Without create_graph, the class-index gradient of rows [N, C] (no class weights, no label
// smoothing) is one pass over softmax(x) (CrossEntropyIndexFn::plain_backward); under
// create_graph it is the composed form. Both must give the same bits: every reduction, an
// ignored row, a gradient other than 1 for "none", float32 (C above and below the SIMD exp's 16)
// and float64, a 1-D input.
TEST(NnLossCrossEntropy, FusedGradientEqualsTheComposedOneBitForBit) {
  mg::manual_seed(11);
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    for (std::int64_t C : {5, 37}) {
      for (const char* red : {"mean", "sum", "none"}) {
        mg::Tensor x = (mg::randn({6, C}) * 3.0).to(dt).requires_grad_();
        mg::Tensor t = mg::randint(0, C, {6}, mg::kInt64);
        t.index_put_({2}, mg::scalar_tensor(-100, mg::kInt64));  // ignored
        mg::Tensor up = mg::randn({6}).to(dt);
        auto loss = [&] {
          mg::Tensor l = F::cross_entropy(x, t, {}, -100, red);
          return std::string(red) == "none" ? (l * up).sum() : l * 1.5;
        };
        mg::Tensor fused = mg::autograd::grad({loss()}, {x})[0];
        mg::Tensor composed = mg::autograd::grad({loss()}, {x}, {}, true, true)[0];
        EXPECT_EQ(fused.to_vector<double>(), composed.detach().to_vector<double>())
            << mg::dtype_name(dt) << " C " << C << " " << red;
      }
    }
  }
  mg::Tensor x1 = mg::randn({7}).requires_grad_();
  mg::Tensor t1 = mg::scalar_tensor(3, mg::kInt64);
  mg::Tensor f1 = mg::autograd::grad({F::cross_entropy(x1, t1)}, {x1})[0];
  mg::Tensor c1 = mg::autograd::grad({F::cross_entropy(x1, t1)}, {x1}, {}, true, true)[0];
  EXPECT_EQ(f1.to_vector<double>(), c1.detach().to_vector<double>());
}
