// The Transformer modules against PyTorch 1.13. tests/data/gen_transformer.py (run with
// /usr/bin/python3) builds each PyTorch module in float64 after a seed, and saves its state_dict,
// its inputs and masks, its output in eval mode, and the gradients of (output * w).sum() for every
// parameter into tests/data/transformer_<case>.safetensors. Here the same module is built in
// minigrad, the state_dict is loaded (which also checks PyTorch's parameter names), and the output
// and the gradients are compared.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <cmath>
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

struct Case {
  mg::SafetensorsFile file;
  mg::Tensor in(const std::string& name) const {
    return file.contains("in." + name) ? file.at("in." + name) : mg::Tensor();
  }
  std::string config(const std::string& key) const { return file.metadata.at(key); }
  std::int64_t num(const std::string& key) const { return std::stoll(config(key)); }
  bool flag(const std::string& key) const { return config(key) == "1"; }
};

Case load_case(const std::string& name) {
  return {
      mg::load_safetensors(MINIGRAD_SOURCE_DIR "/tests/data/transformer_" + name + ".safetensors")};
}

void expect_close(const mg::Tensor& got, const mg::Tensor& expected, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what << " is undefined";
  ASSERT_EQ(got.shape(), expected.shape()) << what;
  std::vector<double> g = got.to_vector<double>(), e = expected.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], e[i], 1e-10 + 1e-9 * std::fabs(e[i])) << what << " element " << i;
}

/// Loads the PyTorch state_dict into module (strict: every name must be PyTorch's), in the
/// state_dict's order; runs call in eval mode; compares the output and the parameters' gradients.
template <typename F>
void check_against_pytorch(nn::Module& module, const Case& c, F&& call) {
  nn::StateDict dict;
  for (const auto& [name, t] : c.file.tensors)
    if (name.rfind("param.", 0) == 0) dict.emplace_back(name.substr(6), t);
  std::vector<std::string> expected_keys, keys;
  for (const auto& kv : dict) expected_keys.push_back(kv.first);
  for (const auto& kv : module.state_dict()) keys.push_back(kv.first);
  EXPECT_EQ(keys, expected_keys) << "state_dict keys differ from PyTorch's";
  module.load_state_dict(dict);
  module.eval();
  mg::Tensor out = call();
  expect_close(out, c.file.at("out"), "output");
  (out * c.in("w")).sum().backward();
  for (const auto& [name, p] : module.named_parameters())
    expect_close(p.grad(), c.file.at("grad." + name), "gradient of " + name);
}

nn::TransformerEncoderLayerOptions layer_options(const Case& c) {
  auto o = nn::TransformerEncoderLayerOptions(c.num("d_model"), c.num("nhead"))
               .dim_feedforward(c.num("dim_feedforward"))
               .batch_first(c.flag("batch_first"))
               .norm_first(c.flag("norm_first"))
               .layer_norm_eps(std::stod(c.config("layer_norm_eps")))
               .dtype(mg::kFloat64);
  if (c.config("activation") == "tanh")
    o.activation([](const mg::Tensor& x) { return mg::tanh(x); });
  else
    o.activation(c.config("activation"));
  return o;
}

TEST(Transformer, EncoderLayerPostNormMasks) {
  Case c = load_case("encoder_layer");
  nn::TransformerEncoderLayer layer(layer_options(c));
  check_against_pytorch(*layer, c, [&] {
    return layer(c.in("src"), c.in("src_mask"), c.in("src_key_padding_mask"));
  });
}

TEST(Transformer, EncoderLayerNormFirstBatchFirstGeluFloatMask) {
  Case c = load_case("encoder_layer_norm_first");
  nn::TransformerEncoderLayer layer(layer_options(c).dropout(0.2));
  check_against_pytorch(*layer, c, [&] {
    return layer(c.in("src"), c.in("src_mask"), c.in("src_key_padding_mask"));
  });
}

TEST(Transformer, EncoderLayerUnbatched) {
  Case c = load_case("encoder_layer_unbatched");
  nn::TransformerEncoderLayer layer(layer_options(c));
  check_against_pytorch(*layer, c, [&] { return layer(c.in("src")); });
}

TEST(Transformer, DecoderLayerPostNormMasks) {
  Case c = load_case("decoder_layer");
  nn::TransformerDecoderLayer layer(layer_options(c));
  check_against_pytorch(*layer, c, [&] {
    return layer(c.in("tgt"), c.in("memory"), c.in("tgt_mask"), mg::Tensor(), mg::Tensor(),
                 c.in("memory_key_padding_mask"));
  });
}

TEST(Transformer, DecoderLayerNormFirstBatchFirstFunctionActivation) {
  Case c = load_case("decoder_layer_norm_first");
  nn::TransformerDecoderLayer layer(layer_options(c));
  check_against_pytorch(*layer, c, [&] {
    return layer(c.in("tgt"), c.in("memory"), mg::Tensor(), c.in("memory_mask"),
                 c.in("tgt_key_padding_mask"));
  });
}

TEST(Transformer, EncoderStackWithFinalNorm) {
  Case c = load_case("encoder");
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(c.num("d_model"), c.num("nhead"))
          .dim_feedforward(c.num("dim_feedforward"))
          .dtype(mg::kFloat64));
  nn::TransformerEncoder encoder(
      nn::TransformerEncoderOptions(layer, c.num("num_layers"))
          .norm(nn::LayerNorm(c.num("d_model"), 1e-5, true, mg::kFloat64)));
  check_against_pytorch(*encoder, c, [&] {
    return encoder(c.in("src"), mg::Tensor(), c.in("src_key_padding_mask"));
  });
}

TEST(Transformer, DecoderStackWithFinalNorm) {
  Case c = load_case("decoder");
  nn::TransformerDecoderLayer layer(
      nn::TransformerDecoderLayerOptions(c.num("d_model"), c.num("nhead"))
          .dim_feedforward(c.num("dim_feedforward"))
          .dtype(mg::kFloat64));
  // PyTorch's positional form.
  nn::TransformerDecoder decoder(layer, c.num("num_layers"),
                                 nn::LayerNorm(c.num("d_model"), 1e-5, true, mg::kFloat64));
  check_against_pytorch(*decoder, c,
                        [&] { return decoder(c.in("tgt"), c.in("memory"), c.in("tgt_mask")); });
}

nn::TransformerOptions transformer_options(const Case& c) {
  return nn::TransformerOptions(c.num("d_model"), c.num("nhead"), c.num("num_encoder_layers"),
                                c.num("num_decoder_layers"))
      .dim_feedforward(c.num("dim_feedforward"))
      .batch_first(c.flag("batch_first"))
      .norm_first(c.flag("norm_first"))
      .dtype(mg::kFloat64);
}

TEST(Transformer, FullModelBatchFirstAllMasks) {
  Case c = load_case("transformer");
  nn::Transformer model(transformer_options(c));
  check_against_pytorch(*model, c, [&] {
    return model(c.in("src"), c.in("tgt"), c.in("src_mask"), c.in("tgt_mask"), c.in("memory_mask"),
                 c.in("src_key_padding_mask"), c.in("tgt_key_padding_mask"),
                 c.in("memory_key_padding_mask"));
  });
}

TEST(Transformer, FullModelNormFirstGelu) {
  Case c = load_case("transformer_norm_first");
  nn::Transformer model(transformer_options(c).activation("gelu"));
  check_against_pytorch(*model, c, [&] { return model(c.in("src"), c.in("tgt")); });
}

TEST(Transformer, InitialValuesArePyTorchs) {
  // torch.manual_seed(0); nn.Transformer(8, 2, 1, 1, 16): same draws, same order.
  mg::SafetensorsFile f =
      mg::load_safetensors(MINIGRAD_SOURCE_DIR "/tests/data/transformer_init.safetensors");
  mg::manual_seed(0);
  nn::Transformer model(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16));
  nn::StateDict sd = model->state_dict();
  ASSERT_EQ(sd.size(), f.tensors.size());
  for (std::size_t i = 0; i < sd.size(); ++i) {
    EXPECT_EQ(sd[i].first, f.tensors[i].first);
    std::vector<double> got = sd[i].second.to_vector<double>();
    std::vector<double> expected = f.tensors[i].second.to_vector<double>();
    ASSERT_EQ(got.size(), expected.size()) << sd[i].first;
    for (std::size_t k = 0; k < got.size(); ++k)
      ASSERT_EQ(got[k], expected[k]) << sd[i].first << " element " << k;
  }
}

TEST(Transformer, GenerateSquareSubsequentMask) {
  // nn.Transformer.generate_square_subsequent_mask(3)
  mg::Tensor m = nn::Transformer::Impl::generate_square_subsequent_mask(3);
  EXPECT_EQ(m.shape(), (mg::Shape{3, 3}));
  EXPECT_EQ(m.dtype(), mg::kFloat32);
  const double inf = INFINITY;
  EXPECT_EQ(m.to_vector<double>(), (std::vector<double>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0}));
  expect_error([] { nn::TransformerImpl::generate_square_subsequent_mask(-1); },
               "[generate_square_subsequent_mask] sz must be non-negative, got -1");
}

TEST(Transformer, PrintsAsPyTorch) {
  // print(nn.TransformerEncoderLayer(4, 2, 6))
  std::ostringstream os;
  os << nn::TransformerEncoderLayer(4, 2, 6);
  EXPECT_EQ(os.str(),
            "TransformerEncoderLayer(\n"
            "  (self_attn): MultiheadAttention(\n"
            "    (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, "
            "bias=True)\n"
            "  )\n"
            "  (linear1): Linear(in_features=4, out_features=6, bias=True)\n"
            "  (dropout): Dropout(p=0.1, inplace=False)\n"
            "  (linear2): Linear(in_features=6, out_features=4, bias=True)\n"
            "  (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
            "  (norm2): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n"
            "  (dropout1): Dropout(p=0.1, inplace=False)\n"
            "  (dropout2): Dropout(p=0.1, inplace=False)\n"
            ")");
}

TEST(Transformer, DropoutOnlyInTraining) {
  mg::manual_seed(3);
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6));
  EXPECT_EQ(layer->self_attn->dropout, 0.1);
  mg::Tensor x = mg::randn({3, 2, 4});
  layer->eval();
  mg::Tensor a = layer(x), b = layer(x);
  EXPECT_TRUE(mg::equal(a, b));
  layer->train();
  EXPECT_FALSE(mg::equal(layer(x), a));
}

TEST(Transformer, CloneCopiesEveryLayer) {
  mg::manual_seed(4);
  nn::TransformerEncoder encoder(nn::TransformerEncoderLayer(4, 2, 6), 2);
  EXPECT_TRUE(encoder->norm.is_empty());
  auto copy = std::dynamic_pointer_cast<nn::TransformerEncoderImpl>(encoder->clone());
  ASSERT_NE(copy, nullptr);
  encoder->eval();
  copy->eval();
  mg::Tensor x = mg::randn({3, 1, 4});
  EXPECT_TRUE(mg::equal(copy->forward(x), encoder(x)));
  EXPECT_TRUE(copy->named_parameters().contains("layers.1.linear2.bias"));
}

TEST(Transformer, Errors) {
  expect_error([] { nn::TransformerEncoderLayerOptions(4, 2).activation("tanh"); },
               "[Transformer] activation should be \"relu\" or \"gelu\" (or a function), not "
               "\"tanh\"");
  expect_error([] { nn::TransformerEncoder(nn::TransformerEncoderLayer(4, 2, 6), 0); },
               "[TransformerEncoder] num_layers must be positive, got 0");
  nn::Transformer model(nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(6));
  expect_error(
      [&] {
        model(mg::zeros({3, 2, 4}), mg::zeros({2, 3, 4}));
      },
      "[Transformer] src has shape (3, 2, 4) and tgt has shape (2, 3, 4): the batch "
      "number of src and tgt must be equal (dim 1)");
  expect_error(
      [&] {
        model(mg::zeros({3, 2, 4}), mg::zeros({2, 2, 5}));
      },
      "[Transformer] src has shape (3, 2, 4) and tgt has shape (2, 2, 5): the feature "
      "number of src and tgt must be equal to d_model (4)");
  // A bad mask is MultiheadAttention's error.
  expect_error(
      [&] {
        model(mg::zeros({3, 2, 4}), mg::zeros({2, 2, 4}), mg::zeros({2, 2}));
      },
      "[MultiheadAttention] the 2-D attn_mask has shape (2, 2) but must be (L, S)");
}

}  // namespace
