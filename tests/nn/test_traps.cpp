// Issue 35, "Nothing silent": code brought from PyTorch and libtorch does what it does there, or
// fails loudly. One TEST per trap, one section per item; the expected numbers come from PyTorch
// 1.13 (the Python is next to them). What must not compile is checked by
// tests/compile_fail/check.cmake (ctest nn_compile_errors) on tests/compile_fail/traps.cpp.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/data/dataloader.h"
#include "minigrad/data/dataset.h"
#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"
#include "minigrad/nn/transformer.h"
#include "minigrad/optim/sgd.h"
#include "module_test_helpers.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;
using minigrad::testing::error_of;
using minigrad::testing::expect_near_all;

namespace {

// ---------------------------------------------------------------- 1. set_default_dtype governs
// modules. PyTorch: every module's factory_kwargs default to torch.get_default_dtype(), so
// after torch.set_default_dtype(torch.float64) nn.Linear(3, 2).weight.dtype is torch.float64
// (minigrad's modules used to say kFloat32).

/// Sets the default dtype for a scope and restores the previous one.
struct DefaultDtype {
  explicit DefaultDtype(mg::Dtype dtype) : saved(mg::get_default_dtype()) {
    mg::set_default_dtype(dtype);
  }
  ~DefaultDtype() { mg::set_default_dtype(saved); }
  DefaultDtype(const DefaultDtype&) = delete;
  DefaultDtype& operator=(const DefaultDtype&) = delete;
  mg::Dtype saved;
};

void expect_all_float64(const nn::Module& m, const std::string& what) {
  const auto params = m.named_parameters();
  EXPECT_FALSE(params.is_empty()) << what;
  for (const auto& item : params)
    EXPECT_EQ(item.value().dtype(), mg::kFloat64) << what << ": " << item.key();
}

TEST(TrapDefaultDtype, ModulesTakeTheDefaultDtype) {
  // Restored after the test (DefaultDtype's destructor), as the other tests expect float32.
  DefaultDtype float64(mg::kFloat64);
  // torch.set_default_dtype(torch.float64); torch.manual_seed(0); l = nn.Linear(3, 2)
  // l.weight.tolist(), l.bias.tolist() (float64 draws: the same as minigrad's)
  mg::manual_seed(0);
  nn::Linear linear(3, 2);
  expect_all_float64(*linear, "Linear");
  expect_near_all(linear->weight,
                  {0.5427704542528101, 0.23996970930833816, -0.046900537438113156,
                   0.48583757737745076, 0.16745942958373372, 0.3361886278485809},
                  1e-15);
  expect_near_all(linear->bias, {-0.3711136225274598, -0.17192610627289664}, 1e-15);
  EXPECT_EQ(linear(mg::ones({4, 3})).dtype(), mg::kFloat64);

  nn::LayerNorm layer_norm(4);
  nn::RMSNorm rms_norm(nn::RMSNormOptions({4}));
  nn::Embedding embedding(5, 4);
  nn::Embedding embedding_options(nn::EmbeddingOptions(5, 4).padding_idx(0));
  nn::MultiheadAttention mha(4, 2);
  nn::TransformerEncoderLayer encoder_layer(nn::TransformerEncoderLayerOptions(4, 2));
  nn::TransformerDecoderLayer decoder_layer(nn::TransformerDecoderLayerOptions(4, 2));
  nn::Transformer transformer(nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(8));
  expect_all_float64(*layer_norm, "LayerNorm");
  expect_all_float64(*rms_norm, "RMSNorm");
  expect_all_float64(*embedding, "Embedding");
  expect_all_float64(*embedding_options, "Embedding(EmbeddingOptions)");
  expect_all_float64(*mha, "MultiheadAttention");
  expect_all_float64(*encoder_layer, "TransformerEncoderLayer");
  expect_all_float64(*decoder_layer, "TransformerDecoderLayer");
  expect_all_float64(*transformer, "Transformer");

  // Forward on inputs of the default dtype works (it threw "query ... must have the parameters'
  // dtype" when the parameters stayed float32).
  mg::Tensor x = mg::randn({3, 2, 4});
  EXPECT_EQ(layer_norm(x).dtype(), mg::kFloat64);
  EXPECT_EQ(rms_norm(x).dtype(), mg::kFloat64);
  EXPECT_EQ(embedding(mg::tensor({1, 4}, mg::kInt64)).dtype(), mg::kFloat64);
  EXPECT_EQ(mha(x, x, x).first.dtype(), mg::kFloat64);
  EXPECT_EQ(encoder_layer(x).dtype(), mg::kFloat64);
  EXPECT_EQ(decoder_layer(x, x).dtype(), mg::kFloat64);
  // nn.Transformer.generate_square_subsequent_mask(3).dtype: torch.float64
  mg::Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(3);
  EXPECT_EQ(mask.dtype(), mg::kFloat64);
  EXPECT_EQ(transformer(x, x, mg::Tensor(), mask).dtype(), mg::kFloat64);
  // torch.tensor([0.5, 1.5]).dtype is the default dtype too (libtorch's rule for a list of
  // doubles, now minigrad's): the modules and the data they are fed agree.
  EXPECT_EQ(mg::tensor(std::vector<double>{0.5, 1.5}).dtype(), mg::kFloat64);
  // An explicit dtype still wins.
  EXPECT_EQ(nn::Linear(2, 2, true, mg::kFloat32)->weight.dtype(), mg::kFloat32);
  EXPECT_EQ(nn::TransformerImpl::generate_square_subsequent_mask(2, mg::kFloat32).dtype(),
            mg::kFloat32);
}

// ---------------------------------------------------------------- 2. Sequential and ModuleList
// in braces. nn::Sequential(a(), b(), c()) builds its arguments in an unspecified order (g++:
// right to left); it no longer compiles (tests/compile_fail/traps.cpp), and braces build left to
// right, so the weights are PyTorch's:
//   torch.manual_seed(0); s = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
//   [v.flatten().tolist() for v in s.state_dict().values()]
TEST(TrapBraces, BracesBuildLeftToRightAndParenthesesTakeBuiltModules) {
  mg::manual_seed(0);
  nn::Sequential seq{nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2)};
  const auto p = seq->named_parameters();
  expect_near_all(
      p["0.weight"],
      {-0.004322517663240433, 0.3097158372402191, -0.4751853346824646, -0.4248946011066437,
       -0.2223689705133438, 0.15482072532176971, -0.011439144611358643, 0.45777493715286255,
       -0.05123639851808548, 0.1527741253376007, -0.1744827926158905, -0.11348707973957062},
      1e-7);
  expect_near_all(
      p["0.bias"],
      {-0.55157071352005, -0.3823687434196472, -0.2379971146583557, 0.021387115120887756}, 1e-7);
  expect_near_all(
      p["2.weight"],
      {0.19766759872436523, 0.30001139640808105, -0.3389705419540405, -0.21773141622543335,
       0.18160855770111084, 0.41519397497177124, -0.10290008783340454, 0.3741558790206909},
      1e-7);
  expect_near_all(p["2.bias"], {-0.08059167861938477, 0.05290704965591431}, 1e-7);

  // Named modules (lvalues) and a single module have no construction order to get wrong.
  nn::Linear fc1(3, 4), fc2(4, 2);
  nn::ReLU act;
  nn::Sequential built(fc1, act, fc2);
  EXPECT_EQ(built->size(), 3u);
  EXPECT_EQ(built->ptr<nn::Linear>(0).get(), fc1.get());
  EXPECT_EQ(nn::Sequential(nn::Linear(1, 1))->size(), 1u);
  nn::ModuleList list(fc1, fc2);
  EXPECT_EQ(list->size(), 2u);
  // libtorch: torch::nn::ModuleList(torch::nn::ModuleList(...), x) is a list of two modules, the
  // first a list (a single ModuleList argument stays a copy of the holder). It did not compile.
  nn::ModuleList nested(nn::ModuleList{nn::Linear(2, 2), nn::Tanh()}, fc1);
  ASSERT_EQ(nested->size(), 2u);
  EXPECT_EQ(nested->ptr<nn::ModuleList>(0)->size(), 2u);
  EXPECT_EQ(nested->ptr(1).get(), fc1.get());
  nn::ModuleList copy(nested);
  EXPECT_EQ(copy.get(), nested.get());
  // named_parameters() through the nested list: "0.0.weight", ... "1.weight".
  EXPECT_TRUE(nested->named_parameters().contains("0.0.weight"));
  EXPECT_TRUE(nested->named_parameters().contains("1.weight"));
}

// ---------------------------------------------------------------- 3. scaled_dot_product_attention
// takes PyTorch 2's arguments (q, k, v, attn_mask, dropout_p, is_causal, scale); the old order's
// (q, k, v, {}, true) does not compile (tests/compile_fail/traps.cpp). dropout_p drops the
// weights as PyTorch 2's math path (torch.dropout(softmax(...), p, train=True)), with torch
// 1.13's CPU draws for the seed (Note [SDPA dropout]):
//   def sdpa(q, k, v, dropout_p=0.0, is_causal=False):
//       L, S = q.size(-2), k.size(-2)
//       bias = torch.zeros(L, S, dtype=q.dtype)
//       if is_causal:
//           bias = bias.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
//       w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + bias, -1)
//       return F.dropout(w, dropout_p, training=True) @ v
//   for dt in (torch.float64, torch.float32):
//       q = (torch.arange(24, dtype=dt) * 0.37 - 4).tanh().reshape(2, 3, 4)
//       k = (torch.arange(32, dtype=dt) * 0.23 - 3.5).tanh().reshape(2, 4, 4)
//       v = (torch.arange(16, dtype=dt) * 0.5 - 3).reshape(2, 4, 2)
//       torch.manual_seed(0); out = sdpa(q, k, v, dropout_p=0.3)
//       after = torch.rand(2, dtype=torch.float64)
//       torch.manual_seed(0); causal = sdpa(q, k[:, :3], v[:, :3], dropout_p=0.5, is_causal=True)
struct Qkv {
  mg::Tensor q, k, v;
};
Qkv qkv(mg::Dtype dtype) {
  return {(mg::arange(0, 24, 1, dtype) * 0.37 - 4).tanh().reshape({2, 3, 4}),
          (mg::arange(0, 32, 1, dtype) * 0.23 - 3.5).tanh().reshape({2, 4, 4}),
          (mg::arange(0, 16, 1, dtype) * 0.5 - 3).reshape({2, 4, 2})};
}

TEST(TrapSdpa, DropoutPDropsTheWeightsWithPyTorchsDraws) {
  const std::vector<double> expected = {
      -0.35844868855749906, -0.17922434427874953, -1.7767076298447844, -1.2892073422391659,
      -2.3381752665606603,  -1.6238895522749461,  3.91296298753216,    4.627248701817874,
      2.2242740977476325,   2.709501652039081,    4.065644153036645,   4.779929867322361};
  const std::vector<double> expected_causal = {0.0,
                                               0.0,
                                               0.0,
                                               0.0,
                                               -3.410621768428981,
                                               -2.7292010759816074,
                                               2.0,
                                               3.0,
                                               0.6077983794670212,
                                               0.9116975692005318,
                                               4.595182414171373,
                                               5.595182414171372};
  for (mg::Dtype dtype : {mg::kFloat64, mg::kFloat32}) {
    SCOPED_TRACE(mg::dtype_name(dtype));
    const double tol = dtype == mg::kFloat64 ? 1e-12 : 2e-6;
    Qkv t = qkv(dtype);
    mg::manual_seed(0);
    mg::Tensor out = F::scaled_dot_product_attention(t.q, t.k, t.v, {}, /*dropout_p=*/0.3);
    EXPECT_EQ(out.dtype(), dtype);
    expect_near_all(out, expected, tol);
    // As many draws as PyTorch's: the generator is where PyTorch's is afterwards.
    expect_near_all(mg::rand({2}, mg::kFloat64), {0.22602020293839054, 0.5582430753802258}, 0.0);
    mg::manual_seed(0);
    mg::Tensor causal =
        F::scaled_dot_product_attention(t.q, t.k.narrow(1, 0, 3), t.v.narrow(1, 0, 3), {},
                                        /*dropout_p=*/0.5, /*is_causal=*/true);
    expect_near_all(causal, expected_causal, tol);
  }
}

TEST(TrapSdpa, DropoutPZeroDrawsNothingAndOneZeroesAndOthersThrow) {
  Qkv t = qkv(mg::kFloat64);
  mg::manual_seed(0);
  mg::Tensor plain = F::scaled_dot_product_attention(t.q, t.k, t.v);
  // dropout_p = 0 draws nothing: torch.manual_seed(0); torch.rand(2, dtype=torch.float64)
  //   [0.9700530018065531, 0.707819864399788]
  expect_near_all(mg::rand({2}, mg::kFloat64), {0.9700530018065531, 0.707819864399788}, 1e-15);
  EXPECT_TRUE(mg::allclose(F::scaled_dot_product_attention(t.q, t.k, t.v, {}, 0.0), plain));
  // dropout_p = 1: every weight dropped (torch's _dropout: input * 0).
  EXPECT_EQ(F::scaled_dot_product_attention(t.q, t.k, t.v, {}, 1.0).abs().sum().item<double>(),
            0.0);
  minigrad_test::expect_documented_messages(
      {{"modules", "scaled_dot_product_attention with dropout_p 1.5",
        [&] { F::scaled_dot_product_attention(t.q, t.k, t.v, {}, 1.5); },
        "[scaled_dot_product_attention] dropout_p must be in [0, 1], got 1.5 (PyTorch's order is "
        "(q, k, v, attn_mask, dropout_p, is_causal, scale))"}});
  EXPECT_NE(error_of([&] { F::scaled_dot_product_attention(t.q, t.k, t.v, {}, -0.1); }),
            "(no error)");
}

// ---------------------------------------------------------------- 4. Weight tying.
// nanoGPT's `self.transformer.wte.weight = self.lm_head.weight` is
// `wte->weight = wte->replace_parameter("weight", lm_head->weight)`; parameters() lists the
// shared tensor once (PyTorch's named_parameters memo), state_dict() under both names.
//   class GPT(nn.Module):
//       def __init__(s, tie):
//           super().__init__()
//           s.transformer = nn.ModuleDict(dict(wte=nn.Embedding(11, 6), wpe=nn.Embedding(4, 6),
//                                              h=nn.Linear(6, 6), ln_f=nn.LayerNorm(6)))
//           s.lm_head = nn.Linear(6, 11, bias=False)
//           if tie: s.transformer.wte.weight = s.lm_head.weight
//       def forward(s, idx, targets):
//           t = s.transformer
//           x = t.wte(idx) + t.wpe(torch.arange(idx.size(1)))
//           x = t.ln_f(torch.tanh(t.h(x)) + x)
//           return F.cross_entropy(s.lm_head(x).view(-1, 11), targets.view(-1))
//   idx = torch.tensor([[1, 5, 9, 2], [3, 3, 10, 0]])
//   tgt = torch.tensor([[5, 9, 2, 7], [3, 10, 0, 4]])
//   torch.manual_seed(0); m = GPT(tie); opt = torch.optim.SGD(m.parameters(), lr=0.5)
//   len(list(m.parameters())), sum(p.numel() for p in m.parameters()): 6, 144 (untied: 7, 210)
//   three steps of opt.zero_grad(); loss = m(idx, tgt); loss.backward(); opt.step()
struct TinyGptImpl : nn::Module {
  explicit TinyGptImpl(bool tie) : nn::Module("TinyGpt") {
    transformer = register_module("transformer", nn::ModuleDict({{"wte", nn::Embedding(11, 6)},
                                                                 {"wpe", nn::Embedding(4, 6)},
                                                                 {"h", nn::Linear(6, 6)},
                                                                 {"ln_f", nn::LayerNorm(6)}}));
    lm_head = register_module("lm_head", nn::Linear(6, 11, false));
    wte = transformer->ptr<nn::Embedding>("wte");
    wpe = transformer->ptr<nn::Embedding>("wpe");
    h = transformer->ptr<nn::Linear>("h");
    ln_f = transformer->ptr<nn::LayerNorm>("ln_f");
    if (tie) wte->weight = wte->replace_parameter("weight", lm_head->weight);
  }
  mg::Tensor forward(const mg::Tensor& idx, const mg::Tensor& targets) {
    mg::Tensor x = wte(idx) + wpe(mg::arange(idx.size(1)));
    x = ln_f(h(x).tanh() + x);
    return F::cross_entropy(lm_head(x).view({-1, 11}), targets.view({-1}));
  }
  nn::ModuleDict transformer{nullptr};
  nn::Embedding wte{nullptr}, wpe{nullptr};
  nn::Linear h{nullptr}, lm_head{nullptr};
  nn::LayerNorm ln_f{nullptr};
};
MG_MODULE(TinyGpt);

void expect_training_like_pytorch(bool tie, const std::vector<double>& losses) {
  mg::manual_seed(0);
  TinyGpt model(tie);
  mg::Tensor idx = mg::tensor({{1, 5, 9, 2}, {3, 3, 10, 0}}, mg::kInt64);
  mg::Tensor tgt = mg::tensor({{5, 9, 2, 7}, {3, 10, 0, 4}}, mg::kInt64);
  mg::optim::SGD opt(model->parameters(), mg::optim::SGDOptions(0.5));
  testing::internal::CaptureStderr();
  for (double expected : losses) {
    opt.zero_grad();
    mg::Tensor loss = model(idx, tgt);
    loss.backward();
    opt.step();
    EXPECT_NEAR(loss.item<double>(), expected, 2e-6);
  }
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_EQ(warnings.find("received no gradient"), std::string::npos) << warnings;
}

TEST(TrapWeightTying, TiedParametersAreListedOnceAndTrainAsPyTorchs) {
  mg::manual_seed(0);
  TinyGpt model(true);
  EXPECT_EQ(model->wte->weight.impl(), model->lm_head->weight.impl());
  EXPECT_EQ(model->parameters().size(), 6u);
  EXPECT_EQ(model->num_parameters(), 144);
  EXPECT_EQ(model->named_parameters().keys(),
            (std::vector<std::string>{"transformer.wte.weight", "transformer.wpe.weight",
                                      "transformer.h.weight", "transformer.h.bias",
                                      "transformer.ln_f.weight", "transformer.ln_f.bias"}));
  EXPECT_EQ(mg::nn::parameter_name(model->lm_head->weight), "transformer.wte.weight");
  // list(m.state_dict().keys()): both names, as PyTorch.
  std::vector<std::string> state_keys;
  for (const auto& [name, t] : model->state_dict()) state_keys.push_back(name);
  EXPECT_EQ(state_keys, (std::vector<std::string>{"transformer.wte.weight",
                                                  "transformer.wpe.weight", "transformer.h.weight",
                                                  "transformer.h.bias", "transformer.ln_f.weight",
                                                  "transformer.ln_f.bias", "lm_head.weight"}));
  // A checkpoint of the tied model loads back (both keys write the one tensor).
  mg::Tensor before = model->lm_head->weight.detach().clone();
  EXPECT_TRUE(model->load_state_dict(model->state_dict()).missing_keys.empty());
  EXPECT_TRUE(mg::equal(model->wte->weight, before));

  // loss of each step: 2.612464666366577, 2.219287633895874, 1.926835060119629
  expect_training_like_pytorch(true, {2.612464666366577, 2.219287633895874, 1.926835060119629});
  // untied: 2.626009225845337, 2.19442081451416, 1.8938653469085693
  expect_training_like_pytorch(false, {2.626009225845337, 2.19442081451416, 1.8938653469085693});
}

TEST(TrapWeightTying, ReplaceParameterIsPublicAndChecksTheName) {
  nn::Linear a(2, 3), b(2, 3);
  a->weight = a->replace_parameter("weight", b->weight);
  EXPECT_EQ(a->named_parameters()["weight"].impl(), b->weight.impl());
  // Shared across two registered children: listed once, under the first name.
  nn::Sequential seq(a, b);
  EXPECT_EQ(seq->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "1.bias"}));
  EXPECT_EQ(seq->num_parameters(), 12);
  minigrad_test::expect_documented_messages(
      {{"modules", "replace_parameter of a name that is not a parameter",
        [&] { a->replace_parameter("weights", b->weight); },
        "[replace_parameter] Linear has no parameter \"weights\""}});
}

// ---------------------------------------------------------------- 5. DataLoader iterators.
// libtorch (torch/data/iterator.h) throws "Attempted to increment iterator past the end",
// "Attempted to dereference iterator that was past the end" for an exhausted iterator and
// "Incrementing/Dereferencing the DataLoader's past-the-end iterator is not allowed" for end();
// an iterator equals itself. minigrad segfaulted, read a stale batch, or said it != it.
mg::data::DataLoader<mg::data::TensorDataset> loader_of(std::size_t n, std::size_t batch) {
  return mg::data::DataLoader(
      mg::data::TensorDataset({mg::arange(0, static_cast<double>(n), 1, mg::kFloat32)}),
      mg::data::DataLoaderOptions(batch));
}

TEST(TrapDataLoader, TheEndIteratorThrows) {
  auto loader = loader_of(4, 2);
  minigrad_test::expect_documented_messages(
      {{"data", "++ on a DataLoader's end()",
        [&] {
          auto end = loader.end();
          ++end;
        },
        "[DataLoader] Incrementing the DataLoader's past-the-end iterator is not allowed "
        "(compare an iterator with loader.end() instead)"},
       {"data", "* on a DataLoader's end()",
        [&] {
          auto end = loader.end();
          (void)*end;
        },
        "[DataLoader] Dereferencing the DataLoader's past-the-end iterator is not allowed "
        "(compare an iterator with loader.end() instead)"}});
}

TEST(TrapDataLoader, AnExhaustedIteratorThrows) {
  auto loader = loader_of(4, 2);
  auto it = loader.begin();
  ++it;
  ++it;  // past the second and last batch
  EXPECT_TRUE(it == loader.end());
  minigrad_test::expect_documented_messages(
      {{"data", "++ on a DataLoader iterator past the last batch", [&] { ++it; },
        "[DataLoader] Attempted to increment iterator past the end (the epoch has ended; compare "
        "with loader.end() first, or call begin() for the next epoch)"},
       {"data", "* on a DataLoader iterator past the last batch", [&] { (void)*it; },
        "[DataLoader] Attempted to dereference iterator that was past the end (the epoch has "
        "ended; compare with loader.end() first, or call begin() for the next epoch)"}});
  EXPECT_NE(error_of([&] { (void)it->size(); }), "(no error)");
}

TEST(TrapDataLoader, AnIteratorEqualsItselfAndItsCopies) {
  // libtorch: a ValidIterator equals itself (copies share it: advancing one advances all), and
  // equals the sentinel once exhausted.
  auto loader = loader_of(6, 2);
  auto it = loader.begin();
  EXPECT_TRUE(it == it);
  EXPECT_FALSE(it != it);
  EXPECT_TRUE(it != loader.end());
  EXPECT_TRUE(loader.end() == loader.end());
  auto copy = it;
  EXPECT_TRUE(copy == it);
  ++copy;
  EXPECT_TRUE(copy == it);
  EXPECT_EQ((*it)[0].to_vector<float>(), (std::vector<float>{2, 3}));
  // Another epoch's iterator is another iterator.
  auto other = loader_of(6, 2).begin();
  EXPECT_FALSE(other == it);
  std::size_t batches = 0;
  for (auto b = loader.begin(); b != loader.end(); ++b) ++batches;
  EXPECT_EQ(batches, 3u);
}

TEST(TrapDataLoader, SizeWithAHugeBatchSizeDoesNotOverflow) {
  // len(DataLoader(range(10), batch_size=2**63)) == 1 (math.ceil); (n + b - 1) / b wrapped to 0.
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  auto loader = loader_of(10, huge);
  EXPECT_EQ(loader.size(), 1u);
  std::size_t batches = 0;
  for (const auto& batch : loader) {
    EXPECT_EQ(batch[0].size(0), 10);
    ++batches;
  }
  EXPECT_EQ(batches, 1u);
  EXPECT_EQ(loader_of(10, 3).size(), 4u);
}

}  // namespace
