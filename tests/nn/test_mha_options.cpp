// nn::MultiheadAttention's kdim / vdim, add_bias_kv and add_zero_attn, and
// F::multi_head_attention_forward, against PyTorch 1.13 (issue 37 item 3). The parameters are set
// explicitly (fill below) so that the values do not depend on the generator, except in the
// initialisation test, which checks PyTorch's draws. Checksums are sum((i + 1) * t[i]).
//
// Expected values come from /usr/bin/python3 (torch 1.13):
//
//   import math, torch
//   from torch import nn
//   import torch.nn.functional as F
//   def seq(shape, a, b):
//       n = math.prod(shape)
//       return torch.tensor([math.sin(a * k + b) for k in range(n)]).reshape(shape)
//   def checksum(t):
//       s = 0.0
//       for i, v in enumerate(t.detach().flatten().tolist()): s += (i + 1) * v
//       return s
//   def arr(name, t): print(name, "{" + ", ".join("%.8g" % x for x in
//   t.detach().flatten().tolist()) + "}") def cs(name, t): print(name, "%.10g" % checksum(t)) def
//   fill(m):  # parameter i (named_parameters order) = 0.5 * seq(shape, 0.1 + 0.07 i, 0.3 i)
//       with torch.no_grad():
//           for i, (n, p) in enumerate(m.named_parameters()):
//               p.copy_(0.5 * seq(p.shape, 0.1 + 0.07 * i, 0.3 * i))
//   # Init: PyTorch's draws.
//   torch.manual_seed(0)
//   m = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True)
//   print([n for n, _ in m.named_parameters()]); print(m)
//   for n, p in m.named_parameters(): cs("init " + n, p)
//   torch.manual_seed(0)
//   m = nn.MultiheadAttention(8, 2, add_bias_kv=True, bias=False)
//   print([n for n, _ in m.named_parameters()])
//   for n, p in m.named_parameters(): cs("init2 " + n, p)
//   # Case 1: kdim/vdim, bias_kv, zero_attn, bool kpm + bool attn_mask.
//   m = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True); fill(m)
//   q = seq((3, 2, 8), 0.37, 0.1).requires_grad_(); k = seq((4, 2, 5), 0.23, 1.3).requires_grad_()
//   v = seq((4, 2, 3), 0.19, -0.4).requires_grad_()
//   kpm = torch.tensor([[False, False, False, True], [False, True, False, True]])
//   causal = torch.triu(torch.ones(3, 4, dtype=torch.bool), diagonal=1)
//   o, w = m(q, k, v, key_padding_mask=kpm, attn_mask=causal)
//   arr("c1_out", o); arr("c1_w", w)
//   (o * seq(o.shape, 0.11, 0.5)).sum().backward()
//   for n, t in [("q", q), ("k", k), ("v", v)]: cs("c1_grad_" + n, t.grad)
//   for n, p in m.named_parameters(): cs("c1_grad_" + n, p.grad)
//   # Case 2: same dims, bias_kv only, batch_first self-attention, 3-D float mask, per-head
//   weights. m = nn.MultiheadAttention(8, 2, add_bias_kv=True, batch_first=True); fill(m) x =
//   seq((2, 3, 8), 0.31, 0.7).requires_grad_() fm = seq((4, 3, 3), 0.5, 0.2) o, w = m(x, x, x,
//   key_padding_mask=torch.tensor([[False, False, True], [False] * 3]), attn_mask=fm,
//            average_attn_weights=False)
//   arr("c2_out", o); arr("c2_w", w)
//   (o * seq(o.shape, 0.13, -0.2)).sum().backward()
//   cs("c2_grad_x", x.grad)
//   for n, p in m.named_parameters(): cs("c2_grad_" + n, p.grad)
//   # Case 3: zero_attn only, kdim only, unbatched, need_weights=False; then with weights.
//   m = nn.MultiheadAttention(8, 4, kdim=6, add_zero_attn=True, bias=False); fill(m)
//   print([n for n, _ in m.named_parameters()])
//   q3 = seq((3, 8), 0.41, 0.3); k3 = seq((5, 6), 0.29, -1.1); v3 = seq((5, 8), 0.17, 0.9)
//   o, w = m(q3, k3, v3, need_weights=False); arr("c3_out", o); print(w)
//   o, w = m(q3, k3, v3, key_padding_mask=torch.tensor([True, False, False, True, False]));
//   arr("c3_w", w) # Case 4: the functional, packed weights, static_k / static_v, eval (dropout
//   ignored). W = 0.5 * seq((24, 8), 0.21, 0.4); B = 0.1 * seq((24,), 0.3, 0.0) OW = 0.5 * seq((8,
//   8), 0.15, 1.0); OB = 0.1 * seq((8,), 0.7, 0.2) sk = seq((4, 5, 4), 0.33, 0.6); sv = seq((4, 5,
//   4), 0.27, -0.5) q4 = seq((3, 2, 8), 0.37, 0.1); k4 = seq((4, 2, 8), 0.23, 1.3) o, w =
//   F.multi_head_attention_forward(q4, k4, k4, 8, 2, W, B, None, None, True, 0.5, OW, OB,
//       training=False, static_k=sk, static_v=sv, average_attn_weights=False)
//   arr("c4_out", o); cs("c4_w", w); print(w.shape)
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/testing.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "documented_errors.h"
#include "nn/module_test_helpers.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;
using mg::testing::error_of;
using mg::testing::expect_near_all;
using mg::testing::repr;

namespace {

/// sin(a * k + b) over the row-major index k, as float32 (the Python's seq()).
mg::Tensor seq(const mg::Shape& shape, double a, double b) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> values;
  for (std::int64_t k = 0; k < n; ++k)
    values.push_back(static_cast<float>(std::sin(a * static_cast<double>(k) + b)));
  return mg::tensor(values, shape, mg::kFloat32);
}

double checksum(const mg::Tensor& t) {
  double s = 0.0;
  std::vector<double> v = t.to_vector<double>();
  for (std::size_t i = 0; i < v.size(); ++i) s += static_cast<double>(i + 1) * v[i];
  return s;
}

void expect_checksum(const mg::Tensor& t, double expected, const std::string& what) {
  ASSERT_TRUE(t.defined()) << what;
  EXPECT_NEAR(checksum(t), expected, 2e-4 * std::max(1.0, std::abs(expected))) << what;
}

/// Parameter i (named_parameters order) = 0.5 * seq(shape, 0.1 + 0.07 i, 0.3 i): the Python's.
void fill(nn::Module& m) {
  mg::NoGradGuard no_grad;
  int i = 0;
  for (const auto& [name, p] : m.named_parameters()) {
    mg::Tensor t = p;
    t.copy_(seq(p.shape(), 0.1 + 0.07 * i, 0.3 * i) * 0.5);
    ++i;
  }
}

std::vector<std::string> names(const nn::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, p] : m.named_parameters()) out.push_back(name);
  return out;
}

const std::vector<double> kC1Out = {
    -1.0319061,  0.86148041,   0.7194401,   -1.8035283,   0.27082279, 0.2066009,   -1.7667732,
    0.83447462,  0.86922622,   0.26184064,  -0.55240345,  0.13084102, -0.48734751, -0.93211055,
    0.18641192,  -0.076573819, -1.0153842,  0.85631847,   0.70833522, -1.7867124,  0.26428035,
    0.19665104,  -1.7497888,   0.82660049,  0.89150023,   0.26095176, -0.57374471, 0.15412632,
    -0.49044293, -0.95214731,  0.21053493,  -0.081852734, -0.8012864, 0.76262194,  0.59256685,
    -1.5715232,  0.15421972,   0.096964478, -1.5351126,   0.70099622, 0.93234557,  0.2850315,
    -0.63986027, 0.19943124,   -0.47187236, -1.0169411,   0.25996178, -0.068929762};
const std::vector<double> kC1W = {0.97349489,  0,
                                  0,           0,
                                  0.021615922, 0.0048891963,
                                  0.96587098,  0.00064225937,
                                  0,           0,
                                  0.026016161, 0.007470591,
                                  0.89373159,  0.0030338578,
                                  0.035704654, 0,
                                  0.046706114, 0.020823717,
                                  0.18567856,  0,
                                  0,           0,
                                  0.3138088,   0.5005126,
                                  0.18558556,  0,
                                  0,           0,
                                  0.34247041,  0.471944,
                                  0.18085468,  0,
                                  0.039631672, 0,
                                  0.37111974,  0.40839386};
const std::vector<double> kC2Out = {
    4.1571951,   -2.790386,  3.1554513,   -2.2077773, 1.7821912,  -1.6372005, 0.39205125,
    -0.79474914, -2.5297172, 3.2518592,   -2.1798196, 2.365499,   -1.9819317, 1.2789516,
    -1.6460582,  0.3443003,  4.1330881,   -2.7883718, 3.1755495,  -2.2497814, 1.8456672,
    -1.7214942,  0.49629399, -0.91786504, 3.0072751,  -1.9834237, 2.6997678,  -2.108072,
    2.0394921,   -2.2488544, 1.351751,    -2.0925977, -2.3157918, 3.1048274,  -2.1011972,
    2.3560975,   -2.041847,  1.4075664,   -1.8420461, 0.60564053, 4.1695914,  -2.7932603,
    3.1487737,   -2.1916168, 1.7567143,   -1.6026701, 0.34882358, -0.74326968};
const std::vector<double> kC2W = {0.99994314,
                                  3.0462481e-08,
                                  0,
                                  5.6832909e-05,
                                  2.2232491e-06,
                                  0.99901032,
                                  0,
                                  0.00098738365,
                                  0.99358255,
                                  4.6254903e-05,
                                  0,
                                  0.006371059,
                                  0.99802458,
                                  3.4938944e-06,
                                  0,
                                  0.0019720232,
                                  7.0272748e-09,
                                  0.99974555,
                                  0,
                                  0.00025439978,
                                  0.95521539,
                                  0.010800096,
                                  0,
                                  0.033984601,
                                  0.29716739,
                                  0.0082424423,
                                  0.59713691,
                                  0.097453222,
                                  0.0031271691,
                                  0.9613409,
                                  5.6913792e-05,
                                  0.035474859,
                                  0.00021237598,
                                  2.0047631e-08,
                                  0.99976164,
                                  2.59438e-05,
                                  0.35461819,
                                  0.30938274,
                                  0.22058555,
                                  0.11541355,
                                  0.00029523522,
                                  0.99658477,
                                  2.2136747e-07,
                                  0.003119773,
                                  0.0044746632,
                                  3.8499434e-06,
                                  0.99425346,
                                  0.0012680213};
const std::vector<double> kC3Out = {0.45368066, 0.49330255, -1.2321266, 1.4510297,   -1.0576409,
                                    0.21795891, 0.71369529, -1.3441911, -0.61888134, -0.32641402,
                                    1.1339723,  -1.4630277, 1.1747286,  -0.39072871, -0.55814725,
                                    1.2715014,  0.44526833, 0.4867447,  -1.2133659,  1.4279823,
                                    -1.0400325, 0.21321952, 0.70356578, -1.323467};
const std::vector<double> kC3W = {0, 0.50604945, 0.2696833,  0, 0.069783047, 0.15448415,
                                  0, 0.27603656, 0.18855765, 0, 0.24621619,  0.28918961,
                                  0, 0.46765399, 0.2833665,  0, 0.08222159,  0.1667579};
const std::vector<double> kC4Out = {
    0.87201732,   0.57231033,   -0.39419985,  -0.77753049,  -0.10926165, 0.70970666,   0.58094686,
    -0.36528644,  0.67264122,   0.44374785,   -0.28799492,  -0.57199967, -0.06651514,  0.53515494,
    0.41169992,   -0.31339049,  0.71720374,   0.49428561,   -0.29593182, -0.62828946,  -0.099372327,
    0.56763244,   0.46809426,   -0.30499834,  0.4010936,    0.33518699,  -0.095123023, -0.32366157,
    -0.079412557, 0.27746975,   0.23784903,   -0.18169788,  0.50823015,  0.37715018,   -0.17184819,
    -0.42122871,  -0.073395804, 0.3793973,    0.30570075,   -0.23445225, 0.066164263,  0.19026899,
    0.13478199,   -0.012127817, -0.083544262, -0.037058305, 0.014037386, -0.029369608};
}  // namespace

TEST(NnMhaOptions, ParametersInPyTorchOrderAndInitialisation) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3).add_bias_kv(true));
  EXPECT_EQ(names(*m), (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                 "in_proj_bias", "bias_k", "bias_v",
                                                 "out_proj.weight", "out_proj.bias"}));
  EXPECT_FALSE(m->_qkv_same_embed_dim);
  EXPECT_FALSE(m->in_proj_weight.defined());
  EXPECT_EQ(m->k_proj_weight.shape(), (mg::Shape{8, 5}));
  EXPECT_EQ(m->v_proj_weight.shape(), (mg::Shape{8, 3}));
  EXPECT_EQ(m->bias_k.shape(), (mg::Shape{1, 1, 8}));
  EXPECT_TRUE(m->bias_v.requires_grad());
  EXPECT_EQ(repr(m),
            "MultiheadAttention(\n"
            "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)\n)");
  // PyTorch's draws: out_proj's Linear, then xavier_uniform_ on q, k, v, then xavier_normal_ on
  // bias_k and bias_v; the biases zero.
  expect_checksum(m->q_proj_weight, -148.3946243, "q_proj_weight");
  expect_checksum(m->k_proj_weight, -65.86306631, "k_proj_weight");
  expect_checksum(m->v_proj_weight, -20.27479217, "v_proj_weight");
  EXPECT_TRUE(mg::equal(m->in_proj_bias, mg::zeros({24})));
  expect_checksum(m->bias_k, -9.340923801, "bias_k");
  expect_checksum(m->bias_v, -4.308935575, "bias_v");
  expect_checksum(m->out_proj->weight, -30.14354604, "out_proj.weight");

  mg::manual_seed(0);
  nn::MultiheadAttention m2(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true).bias(false));
  EXPECT_EQ(names(*m2),
            (std::vector<std::string>{"in_proj_weight", "bias_k", "bias_v", "out_proj.weight"}));
  EXPECT_TRUE(m2->_qkv_same_embed_dim);
  expect_checksum(m2->in_proj_weight, -393.986449, "in_proj_weight");
  expect_checksum(m2->bias_k, -1.765186012, "bias_k");
  expect_checksum(m2->bias_v, -0.920845598, "bias_v");
  // The options are kept, as libtorch's `options`.
  EXPECT_EQ(m->options.kdim(), 5);
  EXPECT_TRUE(m->options.add_bias_kv());
  EXPECT_EQ(nn::MultiheadAttentionOptions(6, 3).vdim(), 6);  // kdim / vdim default to embed_dim
}

// kdim != vdim != embed_dim, bias_k/bias_v and a zero key, with a key padding mask and a causal
// attn_mask (both padded with a zero column per added key): outputs, weights and gradients.
TEST(NnMhaOptions, KdimVdimBiasKvZeroAttnWithMasks) {
  nn::MultiheadAttention m(
      nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3).add_bias_kv(true).add_zero_attn(true));
  fill(*m);
  mg::Tensor q = seq({3, 2, 8}, 0.37, 0.1).requires_grad_();
  mg::Tensor k = seq({4, 2, 5}, 0.23, 1.3).requires_grad_();
  mg::Tensor v = seq({4, 2, 3}, 0.19, -0.4).requires_grad_();
  mg::Tensor kpm = mg::tensor({{0, 0, 0, 1}, {0, 1, 0, 1}}, mg::kBool);
  mg::Tensor causal = mg::ones({3, 4}, mg::kBool).triu(1);
  auto [out, w] = m(q, k, v, kpm, true, causal);
  ASSERT_EQ(out.shape(), (mg::Shape{3, 2, 8}));
  ASSERT_EQ(w.shape(), (mg::Shape{2, 3, 6}));  // S + bias_k + zero key
  expect_near_all(out, kC1Out, 2e-6);
  expect_near_all(w, kC1W, 2e-6);
  (out * seq(out.shape(), 0.11, 0.5)).sum().backward();
  expect_checksum(q.grad(), 9.231972477, "q");
  expect_checksum(k.grad(), -3.064716552, "k");
  expect_checksum(v.grad(), -0.2121571365, "v");
  expect_checksum(m->q_proj_weight.grad(), -0.8974008711, "q_proj_weight");
  expect_checksum(m->k_proj_weight.grad(), -4.369836073, "k_proj_weight");
  expect_checksum(m->v_proj_weight.grad(), 4.790618489, "v_proj_weight");
  expect_checksum(m->in_proj_bias.grad(), -4.332208187, "in_proj_bias");
  expect_checksum(m->bias_k.grad(), 0.8621870223, "bias_k");
  expect_checksum(m->bias_v.grad(), -0.8029211371, "bias_v");
  expect_checksum(m->out_proj->weight.grad(), 170.7815754, "out_proj.weight");
  expect_checksum(m->out_proj->bias.grad(), -2.884156123, "out_proj.bias");
}

// bias_k / bias_v on the packed in_proj_weight, batch first, self-attention, a 3-D float
// attn_mask with a bool key_padding_mask, per-head weights.
TEST(NnMhaOptions, BiasKvBatchFirstSelfAttentionPerHeadWeights) {
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true).batch_first(true));
  fill(*m);
  mg::Tensor x = seq({2, 3, 8}, 0.31, 0.7).requires_grad_();
  mg::Tensor kpm = mg::tensor({{0, 0, 1}, {0, 0, 0}}, mg::kBool);
  auto [out, w] = m(x, x, x, kpm, true, seq({4, 3, 3}, 0.5, 0.2), /*average_attn_weights=*/false);
  ASSERT_EQ(out.shape(), (mg::Shape{2, 3, 8}));
  ASSERT_EQ(w.shape(), (mg::Shape{2, 2, 3, 4}));
  expect_near_all(out, kC2Out, 5e-6);
  expect_near_all(w, kC2W, 2e-6);
  (out * seq(out.shape(), 0.13, -0.2)).sum().backward();
  expect_checksum(x.grad(), -83.0016811, "x");
  expect_checksum(m->in_proj_weight.grad(), -215.5234902, "in_proj_weight");
  expect_checksum(m->in_proj_bias.grad(), 8.355321436, "in_proj_bias");
  expect_checksum(m->bias_k.grad(), -0.2792333637, "bias_k");
  expect_checksum(m->bias_v.grad(), 0.3535013674, "bias_v");
  expect_checksum(m->out_proj->weight.grad(), -523.0798918, "out_proj.weight");
  expect_checksum(m->out_proj->bias.grad(), 0.2011431456, "out_proj.bias");
}

// add_zero_attn with kdim only (vdim = embed_dim), no bias, unbatched; need_weights false.
TEST(NnMhaOptions, ZeroAttnUnbatched) {
  nn::MultiheadAttention m(
      nn::MultiheadAttentionOptions(8, 4).kdim(6).add_zero_attn(true).bias(false));
  fill(*m);
  EXPECT_EQ(names(*m), (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                 "out_proj.weight"}));
  mg::Tensor q = seq({3, 8}, 0.41, 0.3), k = seq({5, 6}, 0.29, -1.1), v = seq({5, 8}, 0.17, 0.9);
  auto [out, none] = m(q, k, v, mg::Tensor(), /*need_weights=*/false);
  EXPECT_FALSE(none.defined());
  ASSERT_EQ(out.shape(), (mg::Shape{3, 8}));
  expect_near_all(out, kC3Out, 2e-6);
  auto [out2, w] = m(q, k, v, mg::tensor({1, 0, 0, 1, 0}, mg::kBool));
  ASSERT_EQ(w.shape(), (mg::Shape{3, 6}));
  expect_near_all(w, kC3W, 2e-6);
}

// The functional form, libtorch's options and positional forms: packed weights, static_k and
// static_v, dropout ignored out of training, per-head weights.
TEST(NnMhaFunctional, StaticKeysAndValuesMatchPyTorch) {
  mg::Tensor W = seq({24, 8}, 0.21, 0.4) * 0.5, B = seq({24}, 0.3, 0.0) * 0.1;
  mg::Tensor OW = seq({8, 8}, 0.15, 1.0) * 0.5, OB = seq({8}, 0.7, 0.2) * 0.1;
  mg::Tensor sk = seq({4, 5, 4}, 0.33, 0.6), sv = seq({4, 5, 4}, 0.27, -0.5);
  mg::Tensor q = seq({3, 2, 8}, 0.37, 0.1), k = seq({4, 2, 8}, 0.23, 1.3);
  auto [out, w] =
      F::multi_head_attention_forward(q, k, k,
                                      F::MultiheadAttentionForwardFuncOptions(
                                          8, 2, W, B, {}, {}, /*add_zero_attn=*/true, 0.5, OW, OB)
                                          .training(false)
                                          .static_k(sk)
                                          .static_v(sv)
                                          .average_attn_weights(false));
  ASSERT_EQ(out.shape(), (mg::Shape{3, 2, 8}));
  ASSERT_EQ(w.shape(), (mg::Shape{2, 2, 3, 6}));
  expect_near_all(out, kC4Out, 2e-6);
  expect_checksum(w, 437.4365542, "weights");
  auto [out2, w2] =
      F::detail::multi_head_attention_forward(q, k, k, 8, 2, W, B, {}, {}, true, 0.5, OW, OB, false,
                                              {}, true, {}, false, {}, {}, {}, sk, sv, false);
  EXPECT_TRUE(mg::equal(out, out2));
  EXPECT_TRUE(mg::equal(w, w2));
}

// The module's forward is the functional's: the same call with the module's parameters gives
// the same tensors (separate projection weights, bias_k/bias_v, zero key, masks).
TEST(NnMhaFunctional, ModuleForwardIsTheFunctional) {
  nn::MultiheadAttention m(
      nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3).add_bias_kv(true).add_zero_attn(true));
  fill(*m);
  mg::Tensor q = seq({3, 2, 8}, 0.37, 0.1), k = seq({4, 2, 5}, 0.23, 1.3);
  mg::Tensor v = seq({4, 2, 3}, 0.19, -0.4);
  mg::Tensor kpm = mg::tensor({{0, 0, 0, 1}, {0, 1, 0, 1}}, mg::kBool);
  auto [out, w] = m(q, k, v, kpm);
  auto [fout, fw] = F::multi_head_attention_forward(
      q, k, v,
      F::MultiheadAttentionForwardFuncOptions(8, 2, {}, m->in_proj_bias, m->bias_k, m->bias_v, true,
                                              0.0, m->out_proj->weight, m->out_proj->bias)
          .key_padding_mask(kpm)
          .use_separate_proj_weight(true)
          .q_proj_weight(m->q_proj_weight)
          .k_proj_weight(m->k_proj_weight)
          .v_proj_weight(m->v_proj_weight));
  EXPECT_TRUE(mg::equal(out, fout));
  EXPECT_TRUE(mg::equal(w, fw));
}

TEST(NnMhaOptions, GradcheckFloat64) {
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(4, 2)
                               .kdim(3)
                               .vdim(2)
                               .add_bias_kv(true)
                               .add_zero_attn(true)
                               .dtype(mg::kFloat64));
  mg::Tensor q = seq({2, 2, 4}, 0.37, 0.1).to(mg::kFloat64).requires_grad_();
  mg::Tensor k = seq({3, 2, 3}, 0.23, 1.3).to(mg::kFloat64).requires_grad_();
  mg::Tensor v = seq({3, 2, 2}, 0.19, -0.4).to(mg::kFloat64).requires_grad_();
  mg::Tensor bk = m->bias_k, bv = m->bias_v;
  EXPECT_GRADCHECK([&](const std::vector<mg::Tensor>& x) { return m(x[0], x[1], x[2]).first; },
                   {q, k, v});
  EXPECT_GRADCHECK(
      [&](const std::vector<mg::Tensor>& x) {
        return std::get<0>(F::multi_head_attention_forward(
            q, k, v,
            F::MultiheadAttentionForwardFuncOptions(4, 2, {}, m->in_proj_bias, x[0], x[1], true,
                                                    0.0, m->out_proj->weight, m->out_proj->bias)
                .use_separate_proj_weight(true)
                .q_proj_weight(m->q_proj_weight)
                .k_proj_weight(m->k_proj_weight)
                .v_proj_weight(m->v_proj_weight)));
      },
      {bk, bv});
}

// Errors not listed in docs/errors.md (those are in ErrorsGiveTheirDocumentedMessages).
TEST(NnMhaOptions, Errors) {
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3));
  mg::Tensor q = mg::zeros({3, 2, 8}), k = mg::zeros({4, 2, 5}), v = mg::zeros({4, 2, 3});
  EXPECT_EQ(error_of([&] {
              m(q, k, mg::zeros({3, 2, 3}));
            }),
            "[MultiheadAttention] key has shape (4, 2, 5) and value has shape (3, 2, 3): all but "
            "their last dims must be equal");
  EXPECT_EQ(error_of([&] {
              m(mg::zeros({3, 2, 6}), k, v);
            }),
            "[MultiheadAttention] query has shape (3, 2, 6): its last dim must be embed_dim (8)");
  nn::MultiheadAttention z(nn::MultiheadAttentionOptions(8, 2).add_zero_attn(true));
  EXPECT_EQ(error_of([&] {
              z(q, q, q, mg::zeros({2, 4}, mg::kBool));
            }),
            "[MultiheadAttention] key_padding_mask has shape (2, 4) but must be (N, S) = (2, 3)");
  // The functional.
  mg::Tensor W = mg::zeros({24, 8}), OW = mg::zeros({8, 8});
  auto opts = [&] {
    return F::MultiheadAttentionForwardFuncOptions(8, 2, W, {}, {}, {}, false, 0.0, OW, {});
  };
  EXPECT_EQ(error_of([&] {
              F::multi_head_attention_forward(mg::zeros({3, 2, 6}), q, q, opts());
            }),
            "[multi_head_attention_forward] query has shape (3, 2, 6) and key has shape "
            "(3, 2, 8): their last dim must be embed_dim (8)");
  EXPECT_EQ(
      error_of([&] {
        F::multi_head_attention_forward(q, q, q, opts().bias_k(mg::zeros({1, 1, 8})));
      }),
      "[multi_head_attention_forward] bias_k and bias_v must be both given or both undefined");
  EXPECT_EQ(error_of([&] {
              F::multi_head_attention_forward(q, q, q,
                                              opts()
                                                  .bias_k(mg::zeros({1, 1, 8}))
                                                  .bias_v(mg::zeros({1, 1, 8}))
                                                  .static_k(mg::zeros({4, 3, 4})));
            }),
            "[multi_head_attention_forward] bias cannot be added to static key.");
  EXPECT_EQ(error_of([&] {
              F::multi_head_attention_forward(q, k, v, opts().use_separate_proj_weight(true));
            }),
            "[multi_head_attention_forward] use_separate_proj_weight is true but q_proj_weight is "
            "undefined");
  EXPECT_EQ(error_of([&] {
              F::multi_head_attention_forward(q, k, v,
                                              opts()
                                                  .use_separate_proj_weight(true)
                                                  .q_proj_weight(OW)
                                                  .k_proj_weight(mg::zeros({8, 4}))
                                                  .v_proj_weight(mg::zeros({8, 3})));
            }),
            "[multi_head_attention_forward] key has shape (4, 2, 5) and k_proj_weight has shape "
            "(8, 4): k_proj_weight must be (embed_dim, kdim) = (8, 5)");
  EXPECT_EQ(error_of([&] {
              F::multi_head_attention_forward(q, q, q, opts().static_k(mg::zeros({4, 3, 2})));
            }),
            "[multi_head_attention_forward] static_k has shape (4, 3, 2) but must be "
            "(N * num_heads, S, head_dim) = (4, S, 4)");
}

TEST(NnMhaOptions, ErrorsGiveTheirDocumentedMessages) {
  const mg::Tensor q = mg::zeros({3, 2, 8}), k = mg::zeros({4, 2, 5}), v = mg::zeros({4, 2, 3});
  auto opts = [] {
    return F::MultiheadAttentionForwardFuncOptions(8, 2, mg::zeros({24, 8}), {}, {}, {}, false, 0.0,
                                                   mg::zeros({8, 8}), {});
  };
  minigrad_test::expect_documented_messages({
      {"modules", "MultiheadAttention with kdim(0)",
       [] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).kdim(0)); },
       "[MultiheadAttention] kdim (0) and vdim (8) must be positive"},
      {"modules", "MultiheadAttention with kdim(5), key of 8 features",
       [&] {
         const mg::Tensor k8 = mg::zeros({4, 2, 8});
         nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).kdim(5))(q, k8, k8);
       },
       "[MultiheadAttention] key has shape (4, 2, 8): its last dim must be kdim (5)"},
      {"modules", "MultiheadAttention with vdim(3), value of 5 features",
       [&] {
         nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(3))(
             q, k, mg::zeros({4, 2, 5}));
       },
       "[MultiheadAttention] value has shape (4, 2, 5): its last dim must be vdim (3)"},
      {"modules", "F::multi_head_attention_forward without q_proj_weight",
       [&] { F::multi_head_attention_forward(q, k, v, opts().use_separate_proj_weight(true)); },
       "[multi_head_attention_forward] use_separate_proj_weight is true but q_proj_weight is "
       "undefined"},
      {"modules", "F::multi_head_attention_forward with bias_k and static_k",
       [&] {
         F::multi_head_attention_forward(q, q, q,
                                         opts()
                                             .bias_k(mg::zeros({1, 1, 8}))
                                             .bias_v(mg::zeros({1, 1, 8}))
                                             .static_k(mg::zeros({4, 3, 4})));
       },
       "[multi_head_attention_forward] bias cannot be added to static key."},
  });
}
