// nn layers: Embedding, LayerNorm, Dropout, activations, Sequential, ModuleList.
// Expected values are literal numbers from PyTorch 1.13 (the Python is in the comments), or exact
// counts stated by the test itself.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/testing.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;

namespace {

template <typename Fn>
std::string error_of(Fn&& stmt) {
  try {
    stmt();
  } catch (const mg::Error& e) {
    return e.what();
  }
  return "(no minigrad::Error thrown)";
}

template <typename Fn>
void expect_error(Fn&& stmt, const std::string& op) {
  std::string what = error_of(stmt);
  EXPECT_EQ(what.rfind("[" + op + "]", 0), 0u) << what;
}

template <typename M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

void expect_near_all(const mg::Tensor& t, const std::vector<double>& expected, double tol) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

template <typename Named>
std::vector<std::string> names(const Named& named) {
  std::vector<std::string> out;
  for (const auto& [n, t] : named) out.push_back(n);
  return out;
}

mg::Tensor f64(mg::Tensor t) { return t.to(mg::kFloat64).detach().requires_grad_(); }

}  // namespace

// ---------------------------------------------------------------- Embedding

TEST(NnLayersEmbedding, InitialWeightsAreBitIdenticalToPyTorch) {
  // torch.manual_seed(0); nn.Embedding(5, 3).weight.tolist()   (15 values: per-element path)
  mg::manual_seed(0);
  nn::Embedding small(5, 3);
  std::vector<float> expected_small = {
      1.5409960746765137f,  -0.293428897857666f,  -2.1787893772125244f, 0.5684312582015991f,
      -1.0845223665237427f, -1.3985954523086548f, 0.40334683656692505f, 0.8380263447761536f,
      -0.7192575931549072f, -0.40334352850914f,   -0.5966353416442871f, 0.18203648924827576f,
      -0.8566746115684509f, 1.1006041765213013f,  -1.0711873769760132f};
  EXPECT_EQ(bits(small->weight.to_vector<float>()), bits(expected_small));
  EXPECT_EQ(small->weight.shape(), (mg::Shape{5, 3}));
  EXPECT_TRUE(small->weight.requires_grad());

  // torch.manual_seed(0); nn.Embedding(10, 4).weight.tolist()   (40 values: 16-wide path)
  mg::manual_seed(0);
  nn::Embedding big(10, 4);
  std::vector<float> expected_big = {
      -1.1258398294448853f,  -1.152360200881958f,   -0.2505785822868347f,  -0.4338788092136383f,
      0.8487103581428528f,   0.6920091509819031f,   -0.31601276993751526f, -2.1152193546295166f,
      0.32227492332458496f,  -1.2633347511291504f,  0.34998318552970886f,  0.30813392996788025f,
      0.11984150856733322f,  1.237657904624939f,    1.1167771816253662f,   -0.2472781538963318f,
      -1.3526537418365479f,  -1.6959311962127686f,  0.5666506290435791f,   0.7935083508491516f,
      0.5988394618034363f,   -1.5550950765609741f,  -0.3413603901863098f,  1.85300612449646f,
      -0.21586325764656067f, -0.7425481677055359f,  0.5627213716506958f,   0.25962740182876587f,
      -0.17396099865436554f, -0.678746223449707f,   0.9382607340812683f,   0.4888698160648346f,
      1.203223705291748f,    0.08453469723463058f,  -1.2001394033432007f,  -0.004785737954080105f,
      -0.5180748105049133f,  -0.30670419335365295f, -1.580993890762329f,   1.7066433429718018f};
  EXPECT_EQ(bits(big->weight.to_vector<float>()), bits(expected_big));
}

TEST(NnLayersEmbedding, ForwardPicksRowsForAnyIndexShape) {
  // torch.manual_seed(0); e = nn.Embedding(10, 4); e(torch.tensor([[1, 9], [0, 1]])).tolist()
  mg::manual_seed(0);
  nn::Embedding e(10, 4);
  mg::Tensor idx = mg::tensor({{1, 9}, {0, 1}}, mg::kInt64);
  mg::Tensor y = e(idx);
  EXPECT_EQ(y.shape(), (mg::Shape{2, 2, 4}));
  std::vector<float> expected = {
      0.8487103581428528f,  0.6920091509819031f,   -0.31601276993751526f, -2.1152193546295166f,
      -0.5180748105049133f, -0.30670419335365295f, -1.580993890762329f,   1.7066433429718018f,
      -1.1258398294448853f, -1.152360200881958f,   -0.2505785822868347f,  -0.4338788092136383f,
      0.8487103581428528f,  0.6920091509819031f,   -0.31601276993751526f, -2.1152193546295166f};
  EXPECT_EQ(bits(y.to_vector<float>()), bits(expected));
  EXPECT_EQ(y.grad_fn()->name(), "EmbeddingBackward0");

  // A 0-dim index gives one row; a transposed (non-contiguous) index tensor works too.
  EXPECT_EQ(e(mg::scalar_tensor(9, mg::kInt64)).shape(), (mg::Shape{4}));
  mg::Tensor yt = e(idx.t());
  EXPECT_TRUE(mg::equal(yt.select(0, 0).select(0, 1), y.select(0, 1).select(0, 0)));
}

TEST(NnLayersEmbedding, GradientCountsEachUse) {
  // Index 1 is used twice and 0 once: d(sum)/dweight has rows 1, 2, 0, ... times ones.
  nn::Embedding e(4, 2);
  e(mg::tensor({1, 1, 0}, mg::kInt64)).sum().backward();
  EXPECT_EQ(e->weight.grad().to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 0, 0, 0, 0}));
}

TEST(NnLayersEmbedding, GradcheckWrtWeight) {
  mg::manual_seed(1);
  mg::Tensor w = mg::randn({5, 3}, mg::kFloat64).requires_grad_();
  mg::Tensor idx = mg::tensor({{4, 0, 4}, {2, 2, 1}}, mg::kInt64);
  auto f = [idx](const std::vector<mg::Tensor>& in) {
    return F::embedding(idx, in[0]) * F::embedding(idx, in[0]);
  };
  EXPECT_GRADCHECK(f, {w});
  EXPECT_GRADGRADCHECK(f, {w});
}

TEST(NnLayersEmbedding, ErrorsNameTheLayerAndTheValues) {
  nn::Embedding e(5, 3);
  EXPECT_EQ(error_of([&] {
              e(mg::tensor({0, 7}, mg::kInt64));
            }),
            "[Embedding] index 7 is out of range for 5 embeddings");
  EXPECT_EQ(error_of([&] { e(mg::tensor({-1}, mg::kInt64)); }),
            "[Embedding] index -1 is out of range for 5 embeddings");
  expect_error([&] { e(mg::tensor({0.0, 1.0})); }, "Embedding");
  expect_error([&] { F::embedding(mg::tensor({5}, mg::kInt64), e->weight); }, "embedding");
  expect_error([&] { F::embedding(mg::tensor({0}, mg::kInt64), mg::zeros({5})); }, "embedding");
  expect_error([] { nn::Embedding(-1, 3); }, "Embedding");
}

TEST(NnLayersEmbedding, PrintsAndNamesLikePyTorch) {
  // print(nn.Embedding(5, 3))
  nn::Embedding e(5, 3);
  EXPECT_EQ(repr(e), "Embedding(5, 3)");
  EXPECT_EQ(names(e->named_parameters()), (std::vector<std::string>{"weight"}));
}

// ---------------------------------------------------------------- LayerNorm

TEST(NnLayersLayerNorm, ForwardMatchesPyTorch) {
  // x = torch.tensor([[1., 2., 3., 4.], [-1., 0.5, 2., 10.]]); nn.LayerNorm(4)(x).tolist()
  mg::Tensor x = mg::tensor({{1., 2., 3., 4.}, {-1., 0.5, 2., 10.}});
  nn::LayerNorm ln(4);
  mg::Tensor y = ln(x);
  expect_near_all(
      y,
      {-1.3416354656219482, -0.4472118616104126, 0.4472118020057678, 1.3416354656219482,
       -0.9121591448783875, -0.5590652823448181, -0.20597141981124878, 1.6771957874298096},
      1e-6);
  EXPECT_EQ(y.grad_fn()->name(), "NativeLayerNormBackward0");

  // F.layer_norm(x, (4,), torch.tensor([0.5, 1., -1., 2.]),
  //              torch.tensor([0.1, 0.2, 0.3, 0.4])).tolist()
  mg::Tensor w = mg::tensor({0.5, 1., -1., 2.});
  mg::Tensor b = mg::tensor({0.1, 0.2, 0.3, 0.4});
  expect_near_all(
      F::layer_norm(x, {4}, w, b),
      {-0.5708177089691162, -0.24721185863018036, -0.14721179008483887, 3.083271026611328,
       -0.3560795783996582, -0.35906529426574707, 0.5059714317321777, 3.754391670227051},
      1e-6);
}

TEST(NnLayersLayerNorm, NormalisesOverSeveralTrailingDims) {
  // x3 = torch.arange(12, dtype=torch.float32).reshape(2, 2, 3) * 0.7 - 3
  // F.layer_norm(x3, (2, 3), eps=1e-3).tolist()
  mg::Tensor x = mg::arange(0.0, 12.0, 1.0, mg::kFloat32).reshape({2, 2, 3}) * 0.7 - 3;
  mg::Tensor y = F::layer_norm(x, {2, 3}, {}, {}, 1e-3);
  EXPECT_EQ(y.shape(), (mg::Shape{2, 2, 3}));
  expect_near_all(
      y,
      {-1.4633381366729736, -0.8780027627944946, -0.29266753792762756, 0.2926676869392395,
       0.8780030012130737, 1.4633383750915527, -1.4633383750915527, -0.8780027627944946,
       -0.29266759753227234, 0.29266756772994995, 0.8780031204223633, 1.4633382558822632},
      1e-6);
}

TEST(NnLayersLayerNorm, IsStableForLargeOffsets) {
  // xb = [[10000., 10001., 10002., 10003.], [1e4, 1e4+0.5, 1e4-0.5, 1e4]]
  // F.layer_norm(xb.double(), (4,)).tolist():
  //   [[-1.3416354199690126, -0.4472118066563946, 0.4472118066562234, 1.3416354199688414],
  //    [1.4281908988778014e-12, 1.4141569972259147, -1.4141569972230583, 1.4281908988778014e-12]]
  // F.layer_norm(xb.float(), (4,)).tolist():
  //   [[-1.3414888381958008, -0.44706517457962036, 0.44735848903656006, 1.3417820930480957],
  //    [-0.000396728515625, 1.4137601852416992, -1.4145536422729492, -0.000396728515625]]
  // PyTorch's float32 kernel computes x * rstd - mean * rstd and loses ~4e-4 to cancellation;
  // minigrad subtracts the mean in double, so its float32 result is within float32 rounding of the
  // float64 reference (and therefore also within 1e-3 of PyTorch's float32 result).
  std::vector<double> exact = {-1.3416354199690126,
                               -0.4472118066563946,
                               0.4472118066562234,
                               1.3416354199688414,
                               0.0,
                               1.4141569972259147,
                               -1.4141569972230583,
                               0.0};
  std::vector<double> torch_f32 = {-1.3414888381958008, -0.44706517457962036, 0.44735848903656006,
                                   1.3417820930480957,  -0.000396728515625,   1.4137601852416992,
                                   -1.4145536422729492, -0.000396728515625};
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    mg::Tensor xb =
        mg::tensor({{10000., 10001., 10002., 10003.}, {1e4, 1e4 + 0.5, 1e4 - 0.5, 1e4}}, dt);
    mg::Tensor y = F::layer_norm(xb, {4});
    expect_near_all(y, exact, dt == mg::kFloat32 ? 1e-6 : 1e-10);
    expect_near_all(y, torch_f32, 1e-3);
  }
}

TEST(NnLayersLayerNorm, GradientsMatchPyTorch) {
  // x = torch.tensor([[1., 2., 3., 4.], [-1., 0.5, 2., 10.]], requires_grad=True)
  // w = torch.tensor([0.5, 1., -1., 2.], requires_grad=True)
  // b = torch.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
  // (F.layer_norm(x, (4,), w, b) * torch.tensor([[1., -2., 3., 0.5], [0.25, 1., -1., 2.]])
  //  ).sum().backward()
  mg::Tensor x = mg::tensor({{1., 2., 3., 4.}, {-1., 0.5, 2., 10.}}).requires_grad_();
  mg::Tensor w = mg::tensor({0.5, 1., -1., 2.}).requires_grad_();
  mg::Tensor b = mg::tensor({0.1, 0.2, 0.3, 0.4}).requires_grad_();
  mg::Tensor g = mg::tensor({{1., -2., 3., 0.5}, {0.25, 1., -1., 2.}});
  (F::layer_norm(x, {4}, w, b) * g).sum().backward();
  expect_near_all(
      x.grad(),
      {1.2969138622283936, -0.9838661551475525, -1.9230105876922607, 1.6099631786346436,
       -0.01808788627386093, 0.06674639880657196, -0.05439072847366333, 0.005732297897338867},
      1e-5);
  expect_near_all(w.grad(),
                  {-1.5696752071380615, 0.3353584408760071, 1.5476069450378418, 4.025209426879883},
                  1e-5);
  expect_near_all(b.grad(), {1.25, -1.0, 2.0, 2.5}, 1e-6);
}

TEST(NnLayersLayerNorm, GradcheckWrtInputWeightAndBias) {
  mg::manual_seed(3);
  mg::Tensor x = mg::randn({3, 4}, mg::kFloat64).requires_grad_();
  mg::Tensor w = mg::randn({4}, mg::kFloat64).requires_grad_();
  mg::Tensor b = mg::randn({4}, mg::kFloat64).requires_grad_();
  auto f = [](const std::vector<mg::Tensor>& in) {
    return F::layer_norm(in[0], {4}, in[1], in[2]);
  };
  EXPECT_GRADCHECK(f, {x, w, b});

  // Two normalised dims, a transposed (non-contiguous) input and no affine parameters.
  mg::Tensor xt = f64(mg::randn({3, 2, 4}, mg::kFloat64));
  auto g = [](const std::vector<mg::Tensor>& in) {
    return F::layer_norm(in[0].transpose(0, 2), {2, 3}, {}, {}, 1e-3);
  };
  EXPECT_GRADCHECK(g, {xt});

  // Only the weight requires grad.
  mg::Tensor x_const = mg::randn({2, 4}, mg::kFloat64);
  auto h = [x_const](const std::vector<mg::Tensor>& in) {
    return F::layer_norm(x_const, {4}, in[0]);
  };
  EXPECT_GRADCHECK(h, {w});
}

TEST(NnLayersLayerNorm, GradgradcheckWrtInputWeightAndBias) {
  mg::manual_seed(4);
  mg::Tensor x = mg::randn({2, 5}, mg::kFloat64).requires_grad_();
  mg::Tensor w = mg::randn({5}, mg::kFloat64).requires_grad_();
  mg::Tensor b = mg::randn({5}, mg::kFloat64).requires_grad_();
  auto f = [](const std::vector<mg::Tensor>& in) {
    return F::layer_norm(in[0], {5}, in[1], in[2]);
  };
  EXPECT_GRADGRADCHECK(f, {x, w, b});
  auto no_affine = [](const std::vector<mg::Tensor>& in) { return F::layer_norm(in[0], {5}); };
  EXPECT_GRADGRADCHECK(no_affine, {x});
}

TEST(NnLayersLayerNorm, ModuleParametersAndPrinting) {
  nn::LayerNorm ln(4);
  EXPECT_EQ(ln->weight.to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(ln->bias.to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(names(ln->named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  // print(nn.LayerNorm(4)); print(nn.LayerNorm((2, 3), eps=1e-3, elementwise_affine=False))
  // print(nn.LayerNorm([5], eps=0.0001))
  EXPECT_EQ(repr(ln), "LayerNorm((4,), eps=1e-05, elementwise_affine=True)");
  nn::LayerNorm plain(mg::Shape{2, 3}, 1e-3, false);
  EXPECT_EQ(repr(plain), "LayerNorm((2, 3), eps=0.001, elementwise_affine=False)");
  EXPECT_TRUE(plain->parameters().empty());
  EXPECT_EQ(repr(nn::LayerNorm(mg::Shape{5}, 0.0001)),
            "LayerNorm((5,), eps=0.0001, elementwise_affine=True)");
  nn::LayerNorm ln64(3, 1e-5, true, mg::kFloat64);
  EXPECT_EQ(ln64->weight.dtype(), mg::kFloat64);
}

TEST(NnLayersLayerNorm, Errors) {
  nn::LayerNorm ln(4);
  expect_error([&] { ln(mg::zeros({2, 3})); }, "layer_norm");
  expect_error([&] { ln(mg::zeros({2, 4}, mg::kInt64)); }, "layer_norm");
  expect_error([&] { ln(mg::zeros({2, 4}, mg::kFloat64)); }, "layer_norm");  // weight is float32
  expect_error([] { F::layer_norm(mg::zeros({2, 4}), {4}, mg::ones({3})); }, "layer_norm");
  expect_error([] { F::layer_norm(mg::zeros({2, 4}), {}); }, "layer_norm");
  expect_error([] { F::layer_norm(mg::zeros({4}), {2, 4}); }, "layer_norm");
  expect_error([] { F::layer_norm(mg::Tensor(), {4}); }, "layer_norm");
  expect_error([] { nn::LayerNorm(mg::Shape{}); }, "LayerNorm");
  expect_error([] { nn::LayerNorm(-2); }, "LayerNorm");
}

// ---------------------------------------------------------------- Dropout

TEST(NnLayersDropout, TrainingKeepsOneMinusPAndScales) {
  mg::manual_seed(0);
  const std::int64_t n = 100000;
  for (double p : {0.5, 0.2}) {
    nn::Dropout d(p);
    mg::Tensor y = d(mg::ones({n}));
    std::int64_t kept = 0;
    // 1 / (1 - p) is exactly representable for both p (2 and 1.25).
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    for (float v : y.to_vector<float>()) {
      if (v != 0.0f) {
        ++kept;
        EXPECT_EQ(v, scale);
      }
    }
    // The kept fraction has standard deviation sqrt(p (1 - p) / n) < 0.0016: 0.01 is 6 sigma.
    EXPECT_NEAR(static_cast<double>(kept) / n, 1 - p, 0.01) << "p = " << p;
    // E[y] = 1.
    EXPECT_NEAR(y.mean().item<double>(), 1.0, 0.02);
  }
}

TEST(NnLayersDropout, GradientIsTheScaledMask) {
  mg::manual_seed(5);
  mg::Tensor x = mg::full({1000}, 3.0).requires_grad_();
  mg::Tensor y = F::dropout(x, 0.5, true);
  y.sum().backward();
  // y = x * mask * 2 with x = 3, so dy/dx = y / 3 exactly.
  EXPECT_EQ(x.grad().to_vector<float>(), (y.detach() / 3.0).to_vector<float>());
  std::vector<float> gv = x.grad().to_vector<float>();
  EXPECT_GT(std::count(gv.begin(), gv.end(), 0.0f), 0);
  EXPECT_GT(std::count(gv.begin(), gv.end(), 2.0f), 0);
}

TEST(NnLayersDropout, SameSeedSameMask) {
  mg::manual_seed(7);
  mg::Tensor a = F::dropout(mg::ones({64}), 0.3);
  mg::manual_seed(7);
  mg::Tensor b = F::dropout(mg::ones({64}), 0.3);
  EXPECT_TRUE(mg::equal(a, b));
}

// The fused dropout (Note [Fused dropout], core/src/random.cpp) against the composite it replaced:
// the same seed must give the same output, gradient and generator state, bit for bit.
namespace dropout_parity {

/// x * ((rand(shape) >= p).to(dtype) * (1 / (1 - p))): the composite of minigrad before the fusion.
mg::Tensor composite_mask(const mg::Tensor& x, double p) {
  return (mg::rand(x.shape(), x.dtype()) >= p).to(x.dtype()) * (1.0 / (1.0 - p));
}

/// The raw bytes of t's elements in row-major order (-0 differs from +0, NaN payloads count).
std::vector<std::uint8_t> bytes_of(const mg::Tensor& t) {
  mg::Tensor c = t.detach().contiguous();
  const bool f64 = c.dtype() == mg::kFloat64;
  const std::size_t size = static_cast<std::size_t>(c.numel()) * (f64 ? 8 : 4);
  std::vector<std::uint8_t> b(size);
  if (size > 0)
    std::memcpy(b.data(),
                f64 ? static_cast<const void*>(c.data_ptr<double>()) : c.data_ptr<float>(), size);
  return b;
}

/// randn of `shape` with the first elements replaced by specials (x * 0 keeps -0 and NaN).
mg::Tensor input(const mg::Shape& shape, mg::Dtype dtype) {
  mg::manual_seed(123);
  mg::Tensor x = mg::randn(shape, mg::kFloat64);
  std::vector<double> v = x.to_vector<double>();
  const double specials[] = {-0.0, 0.0, -1.5, INFINITY, -INFINITY, NAN};
  for (std::size_t i = 0; i < std::size(specials) && i < v.size(); ++i) v[i] = specials[i];
  return mg::tensor(v, shape, dtype);
}

}  // namespace dropout_parity

TEST(NnLayersDropout, FusedIsBitIdenticalToTheComposite) {
  using namespace dropout_parity;
  // Sizes around the kernel's 256-element block and the engine's 624-draw twist.
  const std::vector<mg::Shape> shapes = {{1}, {255}, {257}, {3, 7, 37}, {32, 24, 64}};
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    for (const mg::Shape& shape : shapes) {
      for (double p : {0.1, 0.3, 1.0 / 3.0, 0.5, 0.9}) {
        mg::Tensor x = input(shape, dt);
        SCOPED_TRACE(std::string(mg::dtype_name(dt)) + " p=" + std::to_string(p) +
                     " numel=" + std::to_string(x.numel()));
        mg::manual_seed(42);
        mg::Tensor y = F::dropout(x, p);
        std::vector<std::uint8_t> state = mg::get_rng_state();
        mg::manual_seed(42);
        mg::Tensor ref = x * composite_mask(x, p);
        EXPECT_EQ(bytes_of(y), bytes_of(ref));
        EXPECT_EQ(state, mg::get_rng_state());  // the same number of draws
        // inplace=true: mul_ by the same mask.
        mg::Tensor xi = x.clone();
        mg::manual_seed(42);
        F::dropout(xi, p, /*training=*/true, /*inplace=*/true);
        EXPECT_EQ(bytes_of(xi), bytes_of(ref));
      }
    }
  }
}

TEST(NnLayersDropout, FusedNonContiguousInputUsesRowMajorDraws) {
  using namespace dropout_parity;
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    mg::Tensor x = input({40, 30}, dt).transpose(0, 1);  // [30, 40], not contiguous
    ASSERT_FALSE(x.is_contiguous());
    mg::manual_seed(3);
    mg::Tensor y = F::dropout(x, 0.25);
    mg::manual_seed(3);
    EXPECT_EQ(bytes_of(y), bytes_of(x * composite_mask(x, 0.25)));
  }
}

TEST(NnLayersDropout, FusedBackwardIsGradTimesScaledMask) {
  using namespace dropout_parity;
  for (mg::Dtype dt : {mg::kFloat32, mg::kFloat64}) {
    mg::manual_seed(9);
    mg::Tensor x = mg::randn({4, 300}, dt).requires_grad_();
    mg::Tensor g = mg::randn({4, 300}, dt);
    mg::manual_seed(77);
    mg::Tensor y = F::dropout(x, 0.2);
    ASSERT_TRUE(y.grad_fn());
    EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");  // as PyTorch's CPU F.dropout
    y.backward(g);
    mg::manual_seed(77);
    mg::Tensor mask = composite_mask(x.detach(), 0.2);
    EXPECT_EQ(bytes_of(x.grad()), bytes_of(g * mask));
    // Double backward: d(sum(grad_x * v))/dg = mask * v, through the saved mask.
    mg::Tensor gg = g.clone().requires_grad_();
    mg::manual_seed(77);
    mg::Tensor y2 = F::dropout(x, 0.2);
    std::vector<mg::Tensor> gx = mg::autograd::grad({y2}, {x}, {gg}, /*retain_graph=*/true,
                                                    /*create_graph=*/true);
    mg::Tensor v = mg::randn({4, 300}, dt);
    std::vector<mg::Tensor> ggrad = mg::autograd::grad({(gx[0] * v).sum()}, {gg});
    EXPECT_EQ(bytes_of(ggrad[0]), bytes_of(mask * v));
  }
}

TEST(NnLayersDropout, EvalAndEdgeProbabilities) {
  mg::Tensor x = mg::tensor({1., -2., 3., 4.});
  nn::Dropout d(0.9);
  d->eval();
  EXPECT_FALSE(d->is_training());
  EXPECT_TRUE(d(x).is_same(x));  // identity, as PyTorch returns the input itself
  EXPECT_TRUE(F::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0, true).is_same(x));
  EXPECT_EQ(F::dropout(x, 1.0, true).to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  d->train();
  EXPECT_TRUE(d->is_training());
}

TEST(NnLayersDropout, ErrorsAndPrinting) {
  // print(nn.Dropout(), nn.Dropout(0.1), nn.Dropout(0.0))
  EXPECT_EQ(repr(nn::Dropout()), "Dropout(p=0.5, inplace=False)");
  EXPECT_EQ(repr(nn::Dropout(0.1)), "Dropout(p=0.1, inplace=False)");
  EXPECT_EQ(repr(nn::Dropout(0.0)), "Dropout(p=0.0, inplace=False)");
  EXPECT_EQ(error_of([] { nn::Dropout(1.5); }),
            "[Dropout] dropout probability has to be between 0 and 1, but got 1.5");
  expect_error([] { nn::Dropout(-0.1); }, "Dropout");
  expect_error([] { F::dropout(mg::ones({2}), 2.0); }, "dropout");
  expect_error([] { F::dropout(mg::ones({2}, mg::kInt64), 0.5); }, "dropout");
}

// ---------------------------------------------------------------- activations

TEST(NnLayersActivations, ForwardAndPrintingMatchPyTorch) {
  // x = torch.tensor([-2., -0.5, 0., 1.5])
  // for m in [nn.ReLU(), nn.GELU(), nn.GELU('tanh'), nn.Tanh(), nn.Sigmoid()]:
  //     print(m, m(x).tolist())
  mg::Tensor x = mg::tensor({-2., -0.5, 0., 1.5});
  nn::ReLU relu;
  nn::GELU gelu;
  nn::GELU gelu_tanh("tanh");
  nn::Tanh tanh_;
  nn::Sigmoid sigmoid;
  expect_near_all(relu(x), {0.0, 0.0, 0.0, 1.5}, 0);
  expect_near_all(gelu(x), {-0.045500099658966064, -0.1542687863111496, 0.0, 1.3997890949249268},
                  1e-6);
  expect_near_all(gelu_tanh(x),
                  {-0.04540228843688965, -0.1542859971523285, 0.0, 1.3995715379714966}, 1e-6);
  expect_near_all(tanh_(x), {-0.9640275835990906, -0.46211716532707214, 0.0, 0.9051482677459717},
                  1e-6);
  expect_near_all(sigmoid(x), {0.11920291930437088, 0.3775406777858734, 0.5, 0.8175744414329529},
                  1e-6);
  EXPECT_EQ(repr(relu), "ReLU()");
  EXPECT_EQ(repr(gelu), "GELU(approximate='none')");
  EXPECT_EQ(repr(gelu_tanh), "GELU(approximate='tanh')");
  EXPECT_EQ(repr(tanh_), "Tanh()");
  EXPECT_EQ(repr(sigmoid), "Sigmoid()");
  expect_error([] { nn::GELU("fast"); }, "GELU");
}

// ---------------------------------------------------------------- Sequential

TEST(NnLayersSequential, SeededOutputMatchesPyTorch) {
  // torch.manual_seed(0)
  // s = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
  // s(torch.tensor([[1., -2., 0.5], [0.3, 0.2, -0.1]])).tolist()
  mg::manual_seed(0);
  nn::Sequential s{std::make_shared<nn::LinearImpl>(3, 4), std::make_shared<nn::ReLUImpl>(),
                   std::make_shared<nn::LinearImpl>(4, 2)};
  mg::Tensor y = s(mg::tensor({{1., -2., 0.5}, {0.3, 0.2, -0.1}}));
  expect_near_all(
      y, {-0.18213798105716705, 0.22740711271762848, -0.09010033309459686, 0.06924699991941452},
      1e-6);
  EXPECT_EQ(s->size(), 3u);
  EXPECT_EQ(names(s->named_parameters()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  y.sum().backward();
  EXPECT_TRUE(s->ptr<nn::Linear>(0)->weight.grad().defined());
  EXPECT_TRUE(s->ptr<nn::Linear>(-1)->bias.grad().defined());
}

TEST(NnLayersSequential, PrintsLikePyTorch) {
  // print(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)))
  nn::Sequential s{std::make_shared<nn::LinearImpl>(3, 4), std::make_shared<nn::ReLUImpl>(),
                   std::make_shared<nn::LinearImpl>(4, 2)};
  EXPECT_EQ(repr(s),
            "Sequential(\n"
            "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
            "  (1): ReLU()\n"
            "  (2): Linear(in_features=4, out_features=2, bias=True)\n"
            ")");
  // print(nn.Sequential(nn.Linear(2,2), nn.Sequential(nn.ReLU(), nn.Dropout(0.2)),
  //                     nn.LayerNorm(2)))
  nn::Sequential nested;
  nested->push_back(std::make_shared<nn::LinearImpl>(2, 2));
  nested->push_back(
      nn::Sequential{std::make_shared<nn::ReLUImpl>(), std::make_shared<nn::DropoutImpl>(0.2)});
  nested->push_back(std::make_shared<nn::LayerNormImpl>(2));
  EXPECT_EQ(repr(nested),
            "Sequential(\n"
            "  (0): Linear(in_features=2, out_features=2, bias=True)\n"
            "  (1): Sequential(\n"
            "    (0): ReLU()\n"
            "    (1): Dropout(p=0.2, inplace=False)\n"
            "  )\n"
            "  (2): LayerNorm((2,), eps=1e-05, elementwise_affine=True)\n"
            ")");
  // print(nn.Sequential())
  EXPECT_EQ(repr(nn::Sequential()), "Sequential()");
}

TEST(NnLayersSequential, EvalReachesNestedDropoutAndEmptyIsIdentity) {
  auto inner = std::make_shared<nn::SequentialImpl>(std::make_shared<nn::DropoutImpl>(0.99));
  nn::Sequential s{inner, std::make_shared<nn::TanhImpl>()};
  // torch.tanh(torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)).tolist()
  mg::Tensor x = mg::tensor({0.5, -1.0, 2.0});
  s->eval();
  EXPECT_FALSE(inner->ptr<nn::Dropout>(0)->is_training());
  expect_near_all(s(x), {0.46211715726000974, -0.7615941559557649, 0.9640275800758169}, 1e-6);
  nn::Sequential empty;
  EXPECT_TRUE(empty(x).is_same(x));
}

TEST(NnLayersSequential, Errors) {
  nn::Sequential s{std::make_shared<nn::ReLUImpl>()};
  expect_error([&] { s[1]; }, "Sequential");
  expect_error([&] { s[-2]; }, "Sequential");
  expect_error([&] { s->ptr<nn::Linear>(0); }, "Sequential");
  expect_error([&] { s->push_back(std::shared_ptr<nn::ReLUImpl>()); }, "AnyModule");
}

// ---------------------------------------------------------------- ModuleList

TEST(NnLayersModuleList, IndexingNamesAndPrinting) {
  nn::ModuleList list;
  EXPECT_EQ(repr(list), "ModuleList()");
  list->push_back(std::make_shared<nn::LinearImpl>(2, 2));
  list->push_back(std::make_shared<nn::TanhImpl>());
  EXPECT_EQ(list->size(), 2u);
  EXPECT_EQ(list[1]->type_name(), "Tanh");
  EXPECT_EQ(list[-1]->type_name(), "Tanh");
  EXPECT_EQ(list->ptr<nn::Linear>(0)->in_features, 2);
  // ml = nn.ModuleList([nn.Linear(2, 2), nn.Tanh()]); print(ml)
  // [n for n, _ in ml.named_parameters()]
  EXPECT_EQ(names(list->named_parameters()), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(repr(list),
            "ModuleList(\n"
            "  (0): Linear(in_features=2, out_features=2, bias=True)\n"
            "  (1): Tanh()\n"
            ")");
  int count = 0;
  for (const auto& m : *list) count += m != nullptr;
  EXPECT_EQ(count, 2);
  nn::ModuleList from_list{std::make_shared<nn::ReLUImpl>(), std::make_shared<nn::SigmoidImpl>()};
  EXPECT_EQ(from_list->size(), 2u);
}

TEST(NnLayersModuleList, Errors) {
  nn::ModuleList list{std::make_shared<nn::ReLUImpl>()};
  EXPECT_EQ(error_of([&] { list[3]; }), "[ModuleList] index 3 is out of range for 1 modules");
  expect_error([&] { list->ptr<nn::Linear>(0); }, "ModuleList");
  expect_error([&] { list->push_back(nullptr); }, "ModuleList");
}
