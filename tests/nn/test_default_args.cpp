// AnyModule over a forward with default arguments (MG_FORWARD_HAS_DEFAULT_ARGS, libtorch's
// FORWARD_HAS_DEFAULT_ARGS), and nn::Transformer's custom_encoder / custom_decoder and AnyModule
// norms (libtorch's TransformerOptions). The Transformer's expected values are literal numbers
// from PyTorch 1.13 (/usr/bin/python3); the Python is in the test's comment.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/nn/containers.h>
#include <minigrad/nn/transformer.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../core/test_util.h"

namespace mg = minigrad;
using minigrad::testing::error_of;
namespace nn = minigrad::nn;

namespace {

// x * factor (+ shift): two trailing arguments with defaults, declared in a protected part as
// libtorch code does.
struct AffineImpl : nn::Module {
  AffineImpl() : nn::Module("Affine") {}
  mg::Tensor forward(const mg::Tensor& x, double factor = 2.0,
                     const mg::Tensor& shift = mg::Tensor()) const {
    return shift.defined() ? x * factor + shift : x * factor;
  }

 protected:
  MG_FORWARD_HAS_DEFAULT_ARGS({1, nn::AnyValue(2.0)}, {2, nn::AnyValue(mg::Tensor())})
};
MG_MODULE(Affine);

/// sin (or cos) of i * step + phase, times scale, for i in [0, n): torch.sin(torch.arange(n) *
/// step + phase) * scale in float64 (minigrad has no sin op).
mg::Tensor waves(std::int64_t n, double step, double phase, double scale, bool cosine) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    double a = static_cast<double>(i) * step + phase;
    v[static_cast<std::size_t>(i)] = (cosine ? std::cos(a) : std::sin(a)) * scale;
  }
  return mg::tensor(v, mg::kFloat64);
}

}  // namespace

TEST(AnyModuleDefaults, FewerArgumentsTakeTheDefaults) {
  nn::AnyModule any(Affine{});
  mg::Tensor x = mg::tensor({1.5, -2.0}, mg::kFloat64);
  EXPECT_EQ(any.forward(x).to_vector<double>(), (std::vector<double>{3.0, -4.0}));
  EXPECT_EQ(any.forward(x, 3.0).to_vector<double>(), (std::vector<double>{4.5, -6.0}));
  EXPECT_EQ(any.forward(x, 3.0, mg::tensor({1.0, 1.0}, mg::kFloat64)).to_vector<double>(),
            (std::vector<double>{5.5, -5.0}));
  EXPECT_EQ(error_of([&] { any.forward(); }),
            "[AnyModule] Affine's forward() takes at least 1 argument(s) (the last 2 have "
            "defaults), got 0");
  EXPECT_EQ(error_of([&] { any.forward(x, 3.0, mg::Tensor(), 1.0); }),
            "[AnyModule] Affine's forward() takes 3 arguments, but 4 were given");
}

TEST(AnyModuleDefaults, SequentialCallsAForwardWithDefaults) {
  nn::Sequential seq{Affine{}, nn::ReLU(), Affine{}};
  mg::Tensor x = mg::tensor({1.5, -2.0}, mg::kFloat64);
  EXPECT_EQ(seq->forward(x).to_vector<double>(), (std::vector<double>{6.0, 0.0}));
}

TEST(AnyModuleDefaults, TransformerLayersThroughAnyModule) {
  mg::manual_seed(0);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0));
  nn::AnyModule any(layer);
  mg::Tensor src = mg::randn({3, 2, 4});
  EXPECT_TRUE(mg::equal(any.forward(src), layer(src)));
  nn::TransformerDecoderLayer dec(
      nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0));
  mg::Tensor tgt = mg::randn({2, 2, 4});
  EXPECT_TRUE(mg::equal(nn::AnyModule(dec).forward(tgt, src), dec(tgt, src)));
}

// PyTorch:
//   enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0), 1,
//                               norm=nn.LayerNorm(4))
//   dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0), 1)
//   m = nn.Transformer(d_model=4, nhead=2, custom_encoder=enc, custom_decoder=dec,
//                      dropout=0.0).double(); m.eval()
//   with torch.no_grad():
//     for k, (n, p) in enumerate(sorted(m.named_parameters())):
//       p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float64) * 0.37 + k)
//               .reshape(p.shape) * 0.5)
//   src = torch.sin(torch.arange(24, dtype=torch.float64) * 0.91).reshape(3, 2, 4)
//   tgt = torch.cos(torch.arange(16, dtype=torch.float64) * 0.53).reshape(2, 2, 4)
//   [n for n, _ in m.named_parameters()]; m(src, tgt).flatten().tolist()
TEST(TransformerCustom, CustomEncoderAndDecoderMatchPyTorch) {
  nn::TransformerEncoder enc(
      nn::TransformerEncoderOptions(
          nn::TransformerEncoderLayer(
              nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).dtype(
                  mg::kFloat64)),
          1)
          .norm(nn::AnyModule(nn::LayerNorm(4, 1e-5, true, mg::kFloat64))));
  nn::TransformerDecoder dec(nn::TransformerDecoderOptions(
      nn::TransformerDecoderLayer(
          nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(6).dropout(0.0).dtype(
              mg::kFloat64)),
      1));
  nn::Transformer model(nn::TransformerOptions(4, 2)
                            .dropout(0.0)
                            .dtype(mg::kFloat64)
                            .custom_encoder(nn::AnyModule(enc))
                            .custom_decoder(nn::AnyModule(dec)));
  model->eval();
  auto params = model->named_parameters();
  const std::vector<std::string> torch_names = {"encoder.layers.0.self_attn.in_proj_weight",
                                                "encoder.layers.0.self_attn.in_proj_bias",
                                                "encoder.layers.0.self_attn.out_proj.weight",
                                                "encoder.layers.0.self_attn.out_proj.bias",
                                                "encoder.layers.0.linear1.weight",
                                                "encoder.layers.0.linear1.bias",
                                                "encoder.layers.0.linear2.weight",
                                                "encoder.layers.0.linear2.bias",
                                                "encoder.layers.0.norm1.weight",
                                                "encoder.layers.0.norm1.bias",
                                                "encoder.layers.0.norm2.weight",
                                                "encoder.layers.0.norm2.bias",
                                                "encoder.norm.weight",
                                                "encoder.norm.bias",
                                                "decoder.layers.0.self_attn.in_proj_weight",
                                                "decoder.layers.0.self_attn.in_proj_bias",
                                                "decoder.layers.0.self_attn.out_proj.weight",
                                                "decoder.layers.0.self_attn.out_proj.bias",
                                                "decoder.layers.0.multihead_attn.in_proj_weight",
                                                "decoder.layers.0.multihead_attn.in_proj_bias",
                                                "decoder.layers.0.multihead_attn.out_proj.weight",
                                                "decoder.layers.0.multihead_attn.out_proj.bias",
                                                "decoder.layers.0.linear1.weight",
                                                "decoder.layers.0.linear1.bias",
                                                "decoder.layers.0.linear2.weight",
                                                "decoder.layers.0.linear2.bias",
                                                "decoder.layers.0.norm1.weight",
                                                "decoder.layers.0.norm1.bias",
                                                "decoder.layers.0.norm2.weight",
                                                "decoder.layers.0.norm2.bias",
                                                "decoder.layers.0.norm3.weight",
                                                "decoder.layers.0.norm3.bias"};
  std::vector<std::string> names = params.keys();
  ASSERT_EQ(names, torch_names);
  std::vector<std::string> sorted_names = names;
  std::sort(sorted_names.begin(), sorted_names.end());
  {
    mg::NoGradGuard no_grad;
    for (std::size_t k = 0; k < sorted_names.size(); ++k) {
      mg::Tensor p = params[sorted_names[k]];
      mg::Tensor values = waves(p.numel(), 0.37, static_cast<double>(k), 0.5, false);
      p.copy_(values.reshape(p.shape()));
    }
  }
  mg::Tensor src = waves(24, 0.91, 0.0, 1.0, false).reshape({3, 2, 4});
  mg::Tensor tgt = waves(16, 0.53, 0.0, 1.0, true).reshape({2, 2, 4});
  std::vector<double> got = model(src, tgt).to_vector<double>();
  const std::vector<double> expected = {
      -0.44033169993791427, -0.09103858131571999, 0.8364893407676993, -0.15423582685182582,
      -0.44141533393687543, -0.09444069294674652, 0.8379717597713793, -0.14854048092653516,
      -0.43537895472299887, -0.11975335442757556, 0.8483153507824572, -0.1389649898588043,
      -0.4405901506699967,  -0.09316768307062553, 0.8374232236931959, -0.1516767903090083};
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-10) << i;
  // The members are AnyModules holding clones of the custom modules, as libtorch's.
  EXPECT_EQ(model->encoder.type_info(), typeid(nn::TransformerEncoderImpl));
  EXPECT_NE(model->encoder.ptr().get(), enc.ptr().get());
  EXPECT_TRUE(model->encoder.get<nn::TransformerEncoder>()->norm.ptr() != nullptr);
  EXPECT_TRUE(model->decoder.get<nn::TransformerDecoder>()->norm.is_empty());
}

TEST(TransformerCustom, DefaultTransformerHasFinalNormsOfLayerNormEps) {
  // PyTorch: nn.Transformer(d_model=4, nhead=2, layer_norm_eps=1e-3).encoder.norm.eps == 1e-3
  nn::Transformer model(nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(6).layer_norm_eps(1e-3));
  auto norm = model->encoder.get<nn::TransformerEncoder>()->norm.get<nn::LayerNorm>();
  EXPECT_EQ(norm->eps, 1e-3);
  EXPECT_TRUE(model->named_parameters().contains("decoder.norm.weight"));
  mg::Tensor src = mg::randn({3, 2, 4});
  mg::Tensor tgt = mg::randn({2, 2, 4});
  EXPECT_EQ(model(src, tgt).shape(), (mg::Shape{2, 2, 4}));
}
