// nn::MultiheadAttention against PyTorch 1.13: initial parameters bit for bit, forward outputs and
// attention weights (literal numbers printed by the Python below), printing, parameter names,
// float64 gradcheck and errors.
//
// Expected values come from /usr/bin/python3 (torch 1.13):
//
//   import math, torch
//   from torch import nn
//   def seq(shape, a, b):  # sin(a*k + b) over the row-major index, as float32
//       n = math.prod(shape)
//       return torch.tensor([math.sin(a * k + b) for k in range(n)]).reshape(shape)
//   def checksum(t):  # sum of (i + 1) * t[i] in double, in row-major order
//       s = 0.0
//       for i, v in enumerate(t.detach().flatten().tolist()): s += (i + 1) * v
//       return s
//   def arr(t): print(", ".join("%.9g" % x for x in t.detach().flatten().tolist()))
//   torch.manual_seed(0)
//   m = nn.MultiheadAttention(8, 2)
//   print(m); print([n for n, _ in m.named_parameters()])
//   arr(m.in_proj_weight.flatten()[:6]); arr(m.in_proj_weight.flatten()[-2:])
//   arr(m.out_proj.weight.flatten()[:6])
//   print("%.17g %.17g" % (checksum(m.in_proj_weight), checksum(m.out_proj.weight)))
//   q = seq((3, 2, 8), 0.37, 0.1); k = seq((4, 2, 8), 0.23, 1.3); v = seq((4, 2, 8), 0.19, -0.4)
//   kpm = torch.tensor([[False, False, False, True], [False, True, False, True]])
//   causal = torch.triu(torch.ones(3, 4, dtype=torch.bool), diagonal=1)
//   fmask = torch.tensor([[0.0, -1.0, 0.5, 0.0], [0.25, 0.0, -2.0, 1.0], [0.0, 0.0, 0.0, -0.5]])
//   m3 = torch.zeros(4, 3, 4, dtype=torch.bool)
//   m3[0, :, 0] = True; m3[1, 1, 2:] = True; m3[2, 0, 3] = True; m3[3, 2, 1] = True
//   for kw in [{}, dict(key_padding_mask=kpm), dict(attn_mask=causal),        # Base, Kpm, Causal
//              dict(key_padding_mask=kpm, attn_mask=fmask),                    # Float
//              dict(attn_mask=m3, average_attn_weights=False)]:                # Mask3
//       o, w = m(q, k, v, **kw); arr(o); arr(w)
//   o, w = m(q[:, 1], k[:, 1], v[:, 1]); arr(o); arr(w)                        # Unbatched
//   torch.manual_seed(0)
//   m2 = nn.MultiheadAttention(8, 2, bias=False)
//   print(m2); print([n for n, _ in m2.named_parameters()])
//   print("%.17g %.17g" % (checksum(m2.in_proj_weight), checksum(m2.out_proj.weight)))
//   torch.manual_seed(0)
//   mb = nn.MultiheadAttention(8, 2, batch_first=True)
//   x = q->transpose(0, 1).contiguous()
//   o, w = mb(x, k.transpose(0, 1).contiguous(), v.transpose(0, 1).contiguous())  # BatchFirst
//   arr(o); arr(w)
//   o, w = mb(x, x, x, key_padding_mask=torch.tensor([[False, False, True], [False] * 3]))  # Self
//   arr(o); arr(w)
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/testing.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

template <typename F>
void expect_error(F&& stmt, const std::string& expected_start) {
  try {
    stmt();
    ADD_FAILURE() << "expected minigrad::Error starting with " << expected_start;
  } catch (const mg::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(expected_start, 0), 0u) << e.what();
  }
}

/// sin(a * k + b) over the row-major index k, as float32 (the Python's seq()).
mg::Tensor seq(const mg::Shape& shape, double a, double b, mg::Dtype dtype = mg::kFloat32) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<double> values;
  for (std::int64_t k = 0; k < n; ++k)
    values.push_back(static_cast<float>(std::sin(a * static_cast<double>(k) + b)));
  return mg::tensor(values, shape, dtype);
}

double checksum(const mg::Tensor& t) {
  double s = 0.0;
  std::vector<float> v = t.to_vector<float>();
  for (std::size_t i = 0; i < v.size(); ++i) s += static_cast<double>(i + 1) * v[i];
  return s;
}

void expect_values(const mg::Tensor& t, const mg::Shape& shape, const std::vector<double>& expected,
                   double tol = 5e-7) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.shape(), shape);
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

template <typename M>
std::string str(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

struct Inputs {
  mg::Tensor q = seq({3, 2, 8}, 0.37, 0.1);  // [L, N, E]
  mg::Tensor k = seq({4, 2, 8}, 0.23, 1.3);  // [S, N, E]
  mg::Tensor v = seq({4, 2, 8}, 0.19, -0.4);
  mg::Tensor kpm = mg::tensor({{0, 0, 0, 1}, {0, 1, 0, 1}}, mg::kBool);
};

const std::vector<double> kBaseOut = {
    0.0262240991,   0.0292522795,    0.00658469927, 0.0491080247,   0.00821735058, 0.0307649393,
    -0.0365288556,  0.00523766642,   0.0427806862,  0.011683831,    0.0162797198,  0.0316883959,
    0.0605268925,   0.0480349213,    -0.0282687265, 0.00291027315,  0.0189147461,  0.0163619127,
    0.00769168045,  0.027451098,     0.0105551733,  0.0167062655,   -0.0248192474, 0.00749929575,
    0.0255860984,   0.00776097551,   0.00343262032, 0.00784508791,  0.0384872705,  0.0395222381,
    -0.0047702333,  -0.0125047704,   0.00937194657, 0.000904771092, 0.00847809855, 0.00214334205,
    0.0121817132,   -0.000332617055, -0.0104681998, 0.00985519588,  0.00486626802, 0.00167342031,
    -0.00918217935, -0.0195302721,   0.0121593839,  0.0241035856,   0.0199077819,  -0.025353808};
const std::vector<double> kBaseWeights = {
    0.275300086, 0.216405571, 0.262818843, 0.245475501, 0.248348951, 0.246816412,
    0.267576277, 0.237258375, 0.222325176, 0.279687345, 0.2687141,   0.229273349,
    0.248826683, 0.253367871, 0.263533831, 0.234271556, 0.224303216, 0.287147999,
    0.225289285, 0.26325953,  0.201755345, 0.31733191,  0.191645324, 0.289267421};
const std::vector<double> kKpmOut = {
    -0.0248448066, 0.0572517775,  -0.0539762005,  0.136795267,   -0.0915149748,  0.0673873872,
    -0.0134580173, -0.0565237179, 0.055017136,    -0.016850885,  0.0929986462,   0.0736453906,
    0.0800700262,  -0.0696027353, -0.12889871,    0.148333818,   -0.0233479738,  0.0456041917,
    -0.0461330041, 0.11102809,    -0.0779019594,  0.0540825538,  -0.00804291666, -0.0481558368,
    0.0545620956,  -0.0177338868, 0.0931145102,   0.0722423941,  0.0803015083,   -0.0705460459,
    -0.128166467,  0.148540601,   -0.0226559304,  0.0324162319,  -0.0380253345,  0.0827530399,
    -0.0639524832, 0.0389607921,  -0.00142156321, -0.0392932966, 0.0540234856,   -0.0186892319,
    0.0932002291,  0.0707587302,  0.080486536,    -0.0715623721, -0.127343625,   0.14872703};
const std::vector<double> kKpmWeights = {
    0.36744976,  0.286862791, 0.345687419, 0, 0.327045679, 0.323505521, 0.3494488,   0,
    0.288913608, 0.362753153, 0.34833324,  0, 0.483146369, 0,           0.516853631, 0,
    0.497887522, 0,           0.502112448, 0, 0.512923121, 0,           0.487076879, 0};
const std::vector<double> kCausalOut = {
    -0.0605591387,  0.128087461,   -0.11953105,    0.319728553,   -0.214752048,  0.141518459,
    -0.0379178599,  -0.117819883,  0.0609911345,   -0.031703461,  0.106604613,   0.0399578847,
    0.103234448,    -0.0867252797, -0.125591651,   0.162797064,   -0.0196321215, -0.0182127804,
    -0.00504357833, -0.01252943,   -0.0100240167,  -0.0194174014, 0.0170366392,  -0.000188838618,
    0.0355607681,   0.0160546508,  0.00344841182,  0.0205226131,  0.0471058115,  0.0569420382,
    -0.0113365594,  -0.0173412971, -0.0226559304,  0.0324162319,  -0.0380253345, 0.0827530399,
    -0.0639524832,  0.0389607921,  -0.00142156321, -0.0392932966, 0.0207650214,  0.00521028694,
    0.0129408333,   0.0242143124,  0.027312167,    0.0145859811,  -0.0235072132, 0.0128453439};
const std::vector<double> kCausalWeights = {
    1, 0, 0, 0, 0.501246274, 0.498753726, 0, 0, 0.288913608, 0.362753153, 0.34833324,  0,
    1, 0, 0, 0, 0.440433025, 0.559567034, 0, 0, 0.283696681, 0.446835637, 0.269467711, 0};
const std::vector<double> kFloatOut = {
    -0.0483003668, 0.108130664,   -0.10340032,    0.254396379,   -0.174927562,  0.126876384,
    -0.0224419292, -0.109020703,  0.0532065667,   -0.0136685763, 0.089629598,   0.0812560394,
    0.0743565485,  -0.0658851862, -0.129256517,   0.144807249,   -0.0264796317, 0.00878473744,
    -0.0261836611, 0.0467062742,  -0.0465004034,  0.0112080779,  0.00782150403, -0.0227984022,
    0.0598632842,  -0.0289538708, 0.104067072,    0.0462105162,  0.0989151746,  -0.0835534483,
    -0.126189381,  0.160101905,   -0.0226559304,  0.0324162319,  -0.0380253345, 0.0827530399,
    -0.0639524832, 0.0389607921,  -0.00142156321, -0.0392932966, 0.0540234856,  -0.0186892319,
    0.0932002291,  0.0707587302,  0.080486536,    -0.0715623721, -0.127343625,  0.14872703};
const std::vector<double> kFloatWeights = {
    0.353984863, 0.101289079, 0.544726074,  0, 0.529521585, 0.410243452, 0.0602349304, 0,
    0.288913608, 0.362753153, 0.34833324,   0, 0.36193645,  0,           0.63806355,   0,
    0.903885245, 0,           0.0961147547, 0, 0.512923121, 0,           0.487076879,  0};
const std::vector<double> kMask3Out = {
    0.120526016,    0.063235864,   0.0687457621,  0.0397103615,  0.106854454,   0.0564714782,
    -0.114597946,   0.0603813305,  0.0791750476,  0.023528181,   0.0322019793,  0.0873691291,
    0.109657526,    0.0897929445,  -0.0660890192, 0.0136410818,  0.0782737061,  0.0170567706,
    0.0594120175,   -0.021690391,  0.0924938321,  0.00759141333, -0.064093262,  0.0569562316,
    0.0255860984,   0.00776097551, 0.00343262032, 0.00784508791, 0.0384872705,  0.0395222381,
    -0.0047702333,  -0.0125047704, 0.0805939957,  0.0265919399,  0.0555581264,  -0.00592860952,
    0.0864961967,   0.0185593683,  -0.0693039671, 0.0516760908,  -0.0350791775, -0.0302399658,
    -0.00163278799, -0.0665406808, -0.0290836077, -0.0621842183, 0.0333658829,  0.0108387433};
const std::vector<double> kMask3Weights = {
    0,           0.290854424, 0.301458806, 0.40768674,  0,           0.320018411, 0.314750284,
    0.365231276, 0,           0.351035595, 0.328338385, 0.320625991, 0.255674154, 0.227737248,
    0.313086927, 0.203501657, 0.472466201, 0.52753377,  0,           0,           0.210569486,
    0.29050982,  0.285947561, 0.212973118, 0.377815872, 0.242400378, 0.37978372,  0,
    0.257118344, 0.241597608, 0.251381814, 0.249902263, 0.215080455, 0.298397154, 0.20512791,
    0.281394482, 0.201050863, 0.316440523, 0.228920311, 0.253588229, 0.191488087, 0.332698405,
    0.199196741, 0.276616782, 0.283894449, 0,           0.268425196, 0.447680324};
const std::vector<double> kUnbatchedOut = {
    0.0427806824,   0.011683831,   0.0162797198,  0.0316883996,  0.0605268888,  0.0480349213,
    -0.0282687228,  0.00291027268, 0.0255860947,  0.00776097365, 0.00343261729, 0.00784508418,
    0.0384872667,   0.0395222344,  -0.0047702291, -0.0125047714, 0.00486626802, 0.00167342031,
    -0.00918217935, -0.0195302721, 0.0121593839,  0.0241035856,  0.0199077819,  -0.025353808};
const std::vector<double> kUnbatchedWeights = {0.248826683, 0.253367871, 0.263533831, 0.234271556,
                                               0.224303216, 0.287147999, 0.225289285, 0.26325953,
                                               0.201755345, 0.31733191,  0.191645324, 0.289267421};
const std::vector<double> kBatchFirstOut = {
    0.0262240991,   0.0292522795,  0.00658469927, 0.0491080247,    0.00821735058, 0.0307649393,
    -0.0365288556,  0.00523766642, 0.0189147461,  0.0163619127,    0.00769168045, 0.027451098,
    0.0105551733,   0.0167062655,  -0.0248192474, 0.00749929575,   0.00937194657, 0.000904771092,
    0.00847809855,  0.00214334205, 0.0121817132,  -0.000332617055, -0.0104681998, 0.00985519588,
    0.0427806862,   0.011683831,   0.0162797198,  0.0316883959,    0.0605268925,  0.0480349213,
    -0.0282687265,  0.00291027315, 0.0255860984,  0.00776097551,   0.00343262032, 0.00784508791,
    0.0384872705,   0.0395222381,  -0.0047702333, -0.0125047704,   0.00486626802, 0.00167342031,
    -0.00918217935, -0.0195302721, 0.0121593839,  0.0241035856,    0.0199077819,  -0.025353808};
const std::vector<double> kBatchFirstWeights = {
    0.275300086, 0.216405571, 0.262818843, 0.245475501, 0.248348951, 0.246816412,
    0.267576277, 0.237258375, 0.222325176, 0.279687345, 0.2687141,   0.229273349,
    0.248826683, 0.253367871, 0.263533831, 0.234271556, 0.224303216, 0.287147999,
    0.225289285, 0.26325953,  0.201755345, 0.31733191,  0.191645324, 0.289267421};
const std::vector<double> kSelfOut = {
    -0.0465043001, 0.0810753256,  -0.137287587,  0.300311863,   0.00851122662, 0.137015134,
    -0.0305037126, -0.0482681319, -0.0462394021, 0.0818629637,  -0.137530863,  0.301608682,
    0.00807923451, 0.13795206,    -0.0309800096, -0.0486952141, -0.0457167178, 0.0829087496,
    -0.137719095,  0.303252757,   0.00777304126, 0.139198199,   -0.0317336209, -0.0491174906,
    0.076669991,   -0.147251546,  0.194219828,   -0.421166778,  0.124645412,   -0.211236745,
    0.0304258205,  0.133595049,   0.0779384524,  -0.148357511,  0.195643768,   -0.423176467,
    0.128394037,   -0.212299019,  0.0298333429,  0.135733992,   0.0788957179,  -0.149666548,
    0.196952507,   -0.425457001,  0.131859899,   -0.213641301,  0.0295327585,  0.137789771};
const std::vector<double> kSelfWeights = {
    0.511291564, 0.488708496, 0,           0.505557775, 0.494442225, 0,
    0.499095798, 0.500904202, 0,           0.345078766, 0.333048433, 0.32187283,
    0.333393872, 0.332044899, 0.334561169, 0.321802437, 0.330922782, 0.34727478};

}  // namespace

TEST(NnMha, InitialParametersAreBitIdenticalToPyTorch) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  ASSERT_EQ(m->in_proj_weight.shape(), (mg::Shape{24, 8}));
  std::vector<float> w = m->in_proj_weight.to_vector<float>();
  std::vector<float> first = {w[0], w[1], w[2], w[3], w[4], w[5]};
  EXPECT_EQ(first, (std::vector<float>{0.170178279f, 0.358772397f, 0.376810819f, 0.382071674f,
                                       0.0861758217f, -0.376540333f}));
  EXPECT_EQ(w[190], 0.229312122f);
  EXPECT_EQ(w[191], 0.332346708f);
  EXPECT_EQ(checksum(m->in_proj_weight), -392.59453468141146);

  ASSERT_EQ(m->out_proj->weight.shape(), (mg::Shape{8, 8}));
  std::vector<float> o = m->out_proj->weight.to_vector<float>();
  std::vector<float> o_first = {o[0], o[1], o[2], o[3], o[4], o[5]};
  EXPECT_EQ(o_first, (std::vector<float>{-0.00264699059f, 0.189661443f, -0.290990382f,
                                         -0.260193735f, -0.136172622f, 0.0948079452f}));
  EXPECT_EQ(checksum(m->out_proj->weight), -30.143546040169895);

  EXPECT_TRUE(mg::equal(m->in_proj_bias, mg::zeros({24})));
  EXPECT_TRUE(mg::equal(m->out_proj->bias, mg::zeros({8})));
  for (const auto& p : m->parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(m->head_dim, 4);

  // Without bias, out_proj draws no bias, so xavier_uniform_ starts earlier in the stream.
  mg::manual_seed(0);
  nn::MultiheadAttention nb(8, 2, /*bias=*/false);
  EXPECT_EQ(checksum(nb->in_proj_weight), -393.98644901975058);
  EXPECT_EQ(checksum(nb->out_proj->weight), -30.143546040169895);
  EXPECT_FALSE(nb->in_proj_bias.defined());
  EXPECT_FALSE(nb->out_proj->bias.defined());
}

TEST(NnMha, ResetParametersRedrawsOnlyInProjWeight) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  mg::Tensor out_w = m->out_proj->weight.clone();
  {
    mg::NoGradGuard no_grad;
    m->in_proj_weight.zero_();
    m->in_proj_bias.fill_(1.0);
    m->out_proj->bias.fill_(1.0);
  }
  // Put the stream where the constructor left it before xavier_uniform_: after Linear(8, 8).
  mg::manual_seed(0);
  nn::Linear skip(8, 8);
  m->reset_parameters();
  EXPECT_EQ(checksum(m->in_proj_weight), -392.59453468141146);
  EXPECT_TRUE(mg::equal(m->out_proj->weight, out_w));
  EXPECT_TRUE(mg::equal(m->in_proj_bias, mg::zeros({24})));
  EXPECT_TRUE(mg::equal(m->out_proj->bias, mg::zeros({8})));
}

TEST(NnMha, NonDynamicallyQuantizableLinearIsALinearWithAnotherName) {
  mg::manual_seed(0);
  nn::Linear l(3, 2);
  mg::manual_seed(0);
  nn::NonDynamicallyQuantizableLinear q(3, 2);
  EXPECT_TRUE(mg::equal(q->weight, l->weight));
  EXPECT_TRUE(mg::equal(q->bias, l->bias));
  mg::Tensor x = seq({4, 3}, 0.5, 0.0);
  EXPECT_TRUE(mg::equal(q(x), l(x)));
  EXPECT_EQ(str(q), "NonDynamicallyQuantizableLinear(in_features=3, out_features=2, bias=True)");
  std::vector<std::string> names;
  for (const auto& [n, p] : q->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"weight", "bias"}));
}

TEST(NnMha, NamedParametersInPyTorchOrder) {
  nn::MultiheadAttention m(8, 2);
  std::vector<std::string> names;
  for (const auto& [n, p] : m->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                             "out_proj.bias"}));
  nn::MultiheadAttention nb(8, 2, false);
  names.clear();
  for (const auto& [n, p] : nb->named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
  EXPECT_EQ(m->parameters().size(), 4u);
  EXPECT_TRUE(m->parameters()[2].is_same(m->out_proj->weight));
}

TEST(NnMha, PrintsLikePyTorch) {
  nn::MultiheadAttention m(8, 2);
  EXPECT_EQ(str(m),
            "MultiheadAttention(\n"
            "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)\n"
            ")");
  nn::MultiheadAttention nb(8, 2, false, true);
  EXPECT_EQ(str(nb),
            "MultiheadAttention(\n"
            "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=False)\n"
            ")");
}

TEST(NnMhaForward, MatchesPyTorch) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  auto [out, w] = m(in.q, in.k, in.v);
  expect_values(out, {3, 2, 8}, kBaseOut);
  expect_values(w, {2, 3, 4}, kBaseWeights);
  EXPECT_EQ(out.grad_fn() != nullptr, true);
}

TEST(NnMhaForward, KeyPaddingMask) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  auto [out, w] = m(in.q, in.k, in.v, in.kpm);
  expect_values(out, {3, 2, 8}, kKpmOut);
  expect_values(w, {2, 3, 4}, kKpmWeights);
  // A float mask is added: 0 / -inf gives the same result as the bool mask.
  mg::Tensor fkpm = mg::masked_fill(mg::zeros({2, 4}), in.kpm, -INFINITY);
  auto [out2, w2] = m(in.q, in.k, in.v, fkpm);
  expect_values(out2, {3, 2, 8}, kKpmOut);
  expect_values(w2, {2, 3, 4}, kKpmWeights);
}

TEST(NnMhaForward, CausalAttnMask) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  mg::Tensor causal = mg::ones({3, 4}, mg::kBool).triu(1);  // true = may not attend
  auto [out, w] = m->forward(in.q, in.k, in.v, {}, true, causal);
  expect_values(out, {3, 2, 8}, kCausalOut);
  expect_values(w, {2, 3, 4}, kCausalWeights);
}

TEST(NnMhaForward, FloatAttnMaskWithKeyPaddingMask) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  mg::Tensor fmask = mg::tensor({{0.0, -1.0, 0.5, 0.0}, {0.25, 0.0, -2.0, 1.0}, {0, 0, 0, -0.5}});
  auto [out, w] = m(in.q, in.k, in.v, in.kpm, true, fmask);
  expect_values(out, {3, 2, 8}, kFloatOut);
  expect_values(w, {2, 3, 4}, kFloatWeights);
}

TEST(NnMhaForward, PerHeadMaskAndWeights) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  // [N * num_heads, L, S]: row n * num_heads + h masks batch n, head h.
  std::vector<double> mask(4 * 3 * 4, 0.0);
  auto at = [&mask](int b, int l, int s) -> double& { return mask[(b * 3 + l) * 4 + s]; };
  for (int l = 0; l < 3; ++l) at(0, l, 0) = 1;
  at(1, 1, 2) = at(1, 1, 3) = 1;
  at(2, 0, 3) = 1;
  at(3, 2, 1) = 1;
  mg::Tensor m3 = mg::tensor(mask, {4, 3, 4}, mg::kBool);
  auto [out, w] = m->forward(in.q, in.k, in.v, {}, true, m3, /*average_attn_weights=*/false);
  expect_values(out, {3, 2, 8}, kMask3Out);
  expect_values(w, {2, 2, 3, 4}, kMask3Weights);
}

TEST(NnMhaForward, NeedWeightsFalse) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  auto [out, w] = m->forward(in.q, in.k, in.v, {}, /*need_weights=*/false);
  expect_values(out, {3, 2, 8}, kBaseOut);
  EXPECT_FALSE(w.defined());
}

TEST(NnMhaForward, Unbatched) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2, true, /*batch_first=*/true);  // ignored for unbatched input
  Inputs in;
  auto [out, w] = m(in.q.select(1, 1), in.k.select(1, 1), in.v.select(1, 1));
  expect_values(out, {3, 8}, kUnbatchedOut);
  expect_values(w, {3, 4}, kUnbatchedWeights);
  auto [out_h, w_h] = m->forward(in.q.select(1, 1), in.k.select(1, 1), in.v.select(1, 1),
                                 mg::tensor({0, 0, 0, 0}, mg::kBool), true, {}, false);
  EXPECT_EQ(out_h.shape(), (mg::Shape{3, 8}));
  EXPECT_EQ(w_h.shape(), (mg::Shape{2, 3, 4}));
  EXPECT_TRUE(mg::allclose(w_h.mean(0), w, 1e-5, 1e-7));
}

TEST(NnMhaForward, BatchFirst) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2, true, /*batch_first=*/true);
  Inputs in;
  mg::Tensor x = in.q.transpose(0, 1).contiguous();  // [N, L, E]
  auto [out, w] = m(x, in.k.transpose(0, 1).contiguous(), in.v.transpose(0, 1).contiguous());
  expect_values(out, {2, 3, 8}, kBatchFirstOut);
  expect_values(w, {2, 3, 4}, kBatchFirstWeights);
  // Self-attention (query, key and value the same tensor: one packed projection).
  mg::Tensor kpm = mg::tensor({{0, 0, 1}, {0, 0, 0}}, mg::kBool);
  auto [out_s, w_s] = m(x, x, x, kpm);
  expect_values(out_s, {2, 3, 8}, kSelfOut);
  expect_values(w_s, {2, 3, 3}, kSelfWeights);
}

// A batch-first input is projected as it lies (no copy of the transposed input) and the output
// is built batch-first (contiguous, no transposed view): the same values as the sequence-first
// module on the transposed input, forward bit for bit, with no more copies than it makes.
TEST(NnMhaForward, BatchFirstCopiesNoMoreThanSequenceFirst) {
  auto copies_of = [](const std::function<void()>& run) {
    mg::profiler::Profile prof;
    run();
    prof.stop();
    std::int64_t n = 0;
    for (const auto& e : prof.events()) n += e.name == "clone" || e.name == "contiguous";
    return n;
  };
  mg::manual_seed(0);
  nn::MultiheadAttention sf(8, 2), bf(8, 2, true, /*batch_first=*/true);
  bf->load_state_dict(sf->state_dict());
  mg::Tensor x = mg::randn({3, 5, 8}).requires_grad_();                        // [N, L, E]
  mg::Tensor x_sf = x.detach().transpose(0, 1).contiguous().requires_grad_();  // [L, N, E]
  mg::Tensor up = mg::randn({3, 5, 8});
  mg::Tensor out_bf, out_sf;
  const std::int64_t bf_copies = copies_of([&] {
    out_bf = bf(x, x, x).first;
    (out_bf * up).sum().backward();
  });
  const std::int64_t sf_copies = copies_of([&] {
    out_sf = sf(x_sf, x_sf, x_sf).first;
    (out_sf * up.transpose(0, 1)).sum().backward();
  });
  EXPECT_TRUE(out_bf.is_contiguous());
  EXPECT_EQ(out_bf.shape(), (mg::Shape{3, 5, 8}));
  EXPECT_EQ(out_bf.detach().to_vector<float>(),
            out_sf.detach().transpose(0, 1).contiguous().to_vector<float>());
  EXPECT_LE(bf_copies, sf_copies);
  EXPECT_TRUE(mg::allclose(x.grad(), x_sf.grad().transpose(0, 1), 1e-5, 1e-6));
  EXPECT_TRUE(mg::allclose(bf->in_proj_weight.grad(), sf->in_proj_weight.grad(), 1e-5, 1e-6));
}

TEST(NnMhaForward, PackedAndSeparateProjectionsAgree) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  auto [out_kv, w_kv] = m(in.q, in.k, in.k);            // key is value
  auto [out_sep, w_sep] = m(in.q, in.k, in.k.clone());  // three projections
  EXPECT_TRUE(mg::allclose(out_kv, out_sep, 1e-5, 1e-7));
  EXPECT_TRUE(mg::allclose(w_kv, w_sep, 1e-5, 1e-7));
}

TEST(NnMhaGrad, GradcheckFloat64) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  m->to(mg::kFloat64);
  ASSERT_EQ(m->out_proj->weight.dtype(), mg::kFloat64);
  mg::Tensor q = seq({3, 2, 8}, 0.37, 0.1, mg::kFloat64).requires_grad_();
  mg::Tensor k = seq({4, 2, 8}, 0.23, 1.3, mg::kFloat64).requires_grad_();
  mg::Tensor v = seq({4, 2, 8}, 0.19, -0.4, mg::kFloat64).requires_grad_();
  mg::Tensor kpm = mg::tensor({{0, 0, 0, 1}, {0, 1, 0, 0}}, mg::kBool);
  mg::Tensor causal = mg::ones({3, 4}, mg::kBool).triu(1);
  EXPECT_GRADCHECK([&](const std::vector<mg::Tensor>& x) { return m(x[0], x[1], x[2]).first; },
                   {q, k, v});
  EXPECT_GRADCHECK(
      [&](const std::vector<mg::Tensor>& x) {
        return m(x[0], x[1], x[2], kpm, false, causal).first;
      },
      {q, k, v});
  // The averaged weights are differentiable too.
  EXPECT_GRADCHECK([&](const std::vector<mg::Tensor>& x) { return m(x[0], x[1], x[2]).second; },
                   {q, k, v});
  // Self-attention, batch first: one input used three times.
  nn::MultiheadAttention mb(8, 2, true, true);
  mb->to(mg::kFloat64);
  mg::Tensor x = seq({2, 3, 8}, 0.31, 0.7, mg::kFloat64).requires_grad_();
  EXPECT_GRADCHECK([&](const std::vector<mg::Tensor>& in) { return mb(in[0], in[0], in[0]).first; },
                   {x});
}

TEST(NnMhaGrad, BackwardReachesEveryParameter) {
  mg::manual_seed(0);
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  m(in.q, in.k, in.v).first.sum().backward();
  for (const auto& [name, p] : m->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().shape(), p.shape()) << name;
  }
  // out_proj.bias gets sum over (L, N) of ones.
  EXPECT_TRUE(mg::equal(m->out_proj->bias.grad(), mg::full({8}, 6.0)));
}

TEST(NnMhaErrors, Construction) {
  expect_error([] { nn::MultiheadAttention m(10, 3); },
               "[MultiheadAttention] embed_dim 10 must be divisible by num_heads 3");
  expect_error([] { nn::MultiheadAttention m(8, 0); }, "[MultiheadAttention]");
  expect_error([] { nn::MultiheadAttention m(0, 2); }, "[MultiheadAttention]");
  expect_error([] { nn::MultiheadAttention m(8, 2, true, false, mg::kInt64); },
               "[MultiheadAttention]");
}

TEST(NnMhaErrors, BadInputs) {
  nn::MultiheadAttention m(8, 2);
  Inputs in;
  const std::string op = "[MultiheadAttention]";
  expect_error([&] { m(mg::Tensor(), in.k, in.v); }, op);
  expect_error([&] { m(mg::zeros({8}), in.k, in.v); }, op);           // 1-D query
  expect_error([&] { m(mg::zeros({1, 3, 2, 8}), in.k, in.v); }, op);  // 4-D query
  expect_error([&] { m(in.q, in.k.select(1, 0), in.v); }, op);        // 2-D key
  expect_error([&] { m(in.q, in.k, in.v.narrow(0, 0, 3)); }, op);     // S differs
  expect_error([&] { m(mg::zeros({3, 2, 6}), in.k, in.v); }, op);     // E != 8
  expect_error([&] { m(in.q, mg::zeros({4, 2, 6}), mg::zeros({4, 2, 6})); }, op);
  expect_error([&] { m(in.q, in.k.narrow(1, 0, 1), in.v.narrow(1, 0, 1)); }, op);  // N differs
  expect_error([&] { m(in.q.to(mg::kFloat64), in.k, in.v); }, op);                 // dtype
  // Masks.
  expect_error([&] { m(in.q, in.k, in.v, mg::zeros({2, 3}, mg::kBool)); }, op);
  expect_error([&] { m(in.q, in.k, in.v, mg::zeros({4}, mg::kBool)); }, op);
  expect_error([&] { m(in.q, in.k, in.v, mg::zeros({2, 4}, mg::kInt64)); }, op);
  expect_error([&] { m->forward(in.q, in.k, in.v, {}, true, mg::zeros({4, 3}, mg::kBool)); }, op);
  expect_error(
      [&] {
        m->forward(in.q, in.k, in.v, {}, true, mg::zeros({2, 3, 4}, mg::kBool));
      },
      op);
  expect_error(
      [&] {
        m->forward(in.q, in.k, in.v, {}, true, mg::zeros({1, 4, 3, 4}, mg::kBool));
      },
      op);
  expect_error([&] { m->forward(in.q, in.k, in.v, {}, true, mg::zeros({3, 4}, mg::kInt64)); }, op);
  expect_error([&] { m(in.q, in.k, in.v, mg::zeros({2, 4}), true, mg::zeros({3, 4})); }, op);
  // Unbatched: key_padding_mask [S], 3-D attn_mask [num_heads, L, S].
  mg::Tensor q2 = in.q.select(1, 0), k2 = in.k.select(1, 0), v2 = in.v.select(1, 0);
  expect_error([&] { m(q2, k2, v2, mg::zeros({1, 4}, mg::kBool)); }, op);
  expect_error([&] { m->forward(q2, k2, v2, {}, true, mg::zeros({4, 3, 4}, mg::kBool)); }, op);
  // Batch-first: the batch is dim 0 of query and key.
  nn::MultiheadAttention bf(8, 2, true, /*batch_first=*/true);
  mg::Tensor qb = in.q.transpose(0, 1), kb = in.k.transpose(0, 1);  // [2, 3, 8], [2, 4, 8]
  expect_error([&] { bf(qb, kb.narrow(0, 0, 1), kb.narrow(0, 0, 1)); },
               op + " query has shape (2, 3, 8) and key has shape (1, 4, 8): their batch sizes "
                    "(2 and 1) must match");
}
