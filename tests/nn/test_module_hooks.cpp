// Forward hooks as PyTorch's register_forward_pre_hook / register_forward_hook (Note [Forward
// hooks]): order, replacement of inputs and outputs, removal, which calls run them. Expected
// values are PyTorch 1.13's (the Python is in the comments).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

std::vector<double> values(const mg::Tensor& t) { return t.contiguous().to_vector<double>(); }

// fc = torch.nn.Linear(2, 2); weight [[1, 2], [3, 4]], bias [0.5, -1]; x = [[1, -1]]
nn::Linear make_fc() {
  nn::Linear fc(2, 2);
  mg::NoGradGuard no_grad;
  fc->weight.copy_(mg::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}));
  fc->bias.copy_(mg::tensor({0.5, -1.0}, {2}));
  return fc;
}

// log = []
// h1 = fc.register_forward_pre_hook(lambda m, i: log.append("pre1"))
// h2 = fc.register_forward_pre_hook(lambda m, i: (i[0] * 2,))
// h3 = fc.register_forward_hook(lambda m, i, o: log.append(("post1", i[0].tolist(), o.tolist())))
// h4 = fc.register_forward_hook(lambda m, i, o: o + 1)
// h5 = fc.register_forward_hook(lambda m, i, o: log.append(("post3", o.tolist())))
// fc(x) -> [[-0.5, -2.0]], log: pre1, (post1, [[2, -2]], [[-1.5, -3]]), (post3, [[-0.5, -2]])
// fc.forward(x) -> [[-0.5, -2.0]] and log stays empty (forward skips the hooks)
// after h2.remove(); h4.remove(); h4.remove(): fc(x) -> [[-0.5, -2.0]],
//   log: pre1, (post1, [[1, -1]], [[-0.5, -2]]), (post3, [[-0.5, -2]])
// h1.id < h2.id < h3.id
TEST(ForwardHooks, OrderReplacementAndRemovalAsPyTorch) {
  nn::Linear fc = make_fc();
  const mg::Tensor x = mg::tensor({1.0, -1.0}, {1, 2});
  std::vector<std::string> log;
  std::vector<std::vector<double>> seen_in, seen_out;
  auto h1 = fc->register_forward_pre_hook(
      [&](nn::Module&, const std::vector<mg::Tensor>&) { log.push_back("pre1"); });
  auto h2 = fc->register_forward_pre_hook(
      [](nn::Module&, const std::vector<mg::Tensor>& in) { return in[0] * 2.0; });
  auto h3 = fc->register_forward_hook(
      [&](nn::Module&, const std::vector<mg::Tensor>& in, const mg::Tensor& out) {
        log.push_back("post1");
        seen_in.push_back(values(in[0]));
        seen_out.push_back(values(out));
      });
  auto h4 = fc->register_forward_hook(
      [](nn::Module&, const std::vector<mg::Tensor>&, const mg::Tensor& out) { return out + 1.0; });
  auto h5 = fc->register_forward_hook(
      [&](nn::Module&, const std::vector<mg::Tensor>&, const mg::Tensor& out) {
        log.push_back("post3");
        seen_out.push_back(values(out));
      });
  EXPECT_EQ(fc->num_forward_pre_hooks(), 2u);
  EXPECT_EQ(fc->num_forward_hooks(), 3u);
  EXPECT_LT(h1.id(), h2.id());
  EXPECT_LT(h2.id(), h3.id());

  EXPECT_EQ(values(fc(x)), (std::vector<double>{-0.5, -2.0}));
  EXPECT_EQ(log, (std::vector<std::string>{"pre1", "post1", "post3"}));
  EXPECT_EQ(seen_in, (std::vector<std::vector<double>>{{2.0, -2.0}}));
  EXPECT_EQ(seen_out, (std::vector<std::vector<double>>{{-1.5, -3.0}, {-0.5, -2.0}}));

  log.clear();
  EXPECT_EQ(values(fc->forward(x)), (std::vector<double>{-0.5, -2.0}));
  EXPECT_TRUE(log.empty()) << "forward() called directly runs no hooks, as PyTorch's";

  h2.remove();
  h4.remove();
  h4.remove();  // twice: nothing more
  log.clear();
  seen_in.clear();
  seen_out.clear();
  EXPECT_EQ(values(fc(x)), (std::vector<double>{-0.5, -2.0}));
  EXPECT_EQ(log, (std::vector<std::string>{"pre1", "post1", "post3"}));
  EXPECT_EQ(seen_in, (std::vector<std::vector<double>>{{1.0, -1.0}}));
  EXPECT_EQ(seen_out, (std::vector<std::vector<double>>{{-0.5, -2.0}, {-0.5, -2.0}}));
  h1.remove();
  h3.remove();
  h5.remove();
  EXPECT_FALSE(fc->has_forward_hooks());
}

// x = torch.tensor([[1., -1.]], requires_grad=True)
// fc.register_forward_hook(lambda m, i, o: o * 3); fc(x).sum().backward()
// x.grad -> [[12., 18.]]; fc.weight.grad -> [[3., -3.], [3., -3.]]
TEST(ForwardHooks, ReplacedOutputCarriesGradients) {
  nn::Linear fc = make_fc();
  mg::Tensor x = mg::tensor({1.0, -1.0}, {1, 2}).requires_grad_();
  auto h = fc->register_forward_hook(
      [](nn::Module&, const std::vector<mg::Tensor>&, const mg::Tensor& out) { return out * 3.0; });
  fc(x).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{12.0, 18.0}));
  EXPECT_EQ(values(fc->weight.grad()), (std::vector<double>{3.0, -3.0, 3.0, -3.0}));
  h.remove();
}

// A hook on a child runs when the parent's forward calls it (Sequential, a holder member), and a
// handle outliving its module does nothing on remove().
TEST(ForwardHooks, RunForChildrenCalledByTheirParents) {
  nn::Sequential seq{nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 1)};
  std::vector<std::string> calls;
  auto record = [&calls](nn::Module& m, const std::vector<mg::Tensor>&, const mg::Tensor&) {
    calls.push_back(m.type_name());
  };
  std::vector<nn::RemovableHandle> handles;
  for (const auto& m : seq->modules()) handles.push_back(m->register_forward_hook(record));
  seq(mg::ones({4, 2}));
  // PyTorch: the children's hooks first, the Sequential's after its forward returns.
  EXPECT_EQ(calls, (std::vector<std::string>{"Linear", "ReLU", "Linear", "Sequential"}));
  calls.clear();
  seq->forward(mg::ones({4, 2}));  // the Sequential's own hook is skipped, its children's run
  EXPECT_EQ(calls, (std::vector<std::string>{"Linear", "ReLU", "Linear"}));

  nn::RemovableHandle orphan;
  {
    nn::Linear fc(2, 2);
    orphan = fc->register_forward_hook(record);
  }
  orphan.remove();  // the module is gone: nothing happens
}

// A module of yours derived from nn::Cloneable<Net> is called as net(x), through its hooks.
struct TwiceImpl : nn::Cloneable<TwiceImpl> {
  TwiceImpl() : Cloneable("Twice") {}
  mg::Tensor forward(const mg::Tensor& x) const { return x * 2.0; }
};

TEST(ForwardHooks, PlainSubclassCallOperator) {
  TwiceImpl net;
  EXPECT_EQ(values(net(mg::tensor({1.0, 2.0}, {2}))), (std::vector<double>{2.0, 4.0}));
  auto h = net.register_forward_pre_hook(
      [](nn::Module&, const std::vector<mg::Tensor>& in) { return std::vector{in[0] + 1.0}; });
  EXPECT_EQ(values(net(mg::tensor({1.0, 2.0}, {2}))), (std::vector<double>{4.0, 6.0}));
  EXPECT_EQ(values(net.forward(mg::tensor({1.0, 2.0}, {2}))), (std::vector<double>{2.0, 4.0}));
  h.remove();
}

// MultiheadAttention returns (output, weights): its hooks take the outputs as a vector, and its
// flags pass through (need_weights = false gives an undefined weights tensor to the hook).
TEST(ForwardHooks, MultipleOutputsAndNonTensorArguments) {
  mg::manual_seed(0);
  nn::MultiheadAttention mha(4, 2, true, true);
  const mg::Tensor x = mg::randn({1, 3, 4});
  std::vector<std::size_t> n_inputs;
  std::vector<bool> weights_defined;
  auto h = mha->register_forward_hook(
      [&](nn::Module&, const std::vector<mg::Tensor>& in, const std::vector<mg::Tensor>& out) {
        n_inputs.push_back(in.size());
        weights_defined.push_back(out[1].defined());
        return std::vector<mg::Tensor>{out[0] * 0.0, out[1]};
      });
  auto [out, weights] = mha(x, x, x);
  EXPECT_EQ(values(out), std::vector<double>(12, 0.0));
  mha(x, x, x, mg::Tensor(), /*need_weights=*/false);
  // The Tensor arguments given to the call, as PyTorch's positional inputs: (q, k, v), then
  // (q, k, v, key_padding_mask).
  EXPECT_EQ(n_inputs, (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(weights_defined, (std::vector<bool>{true, false}));
  h.remove();
}

// ---------------------------------------------------------------- AttentionRecorder

// m = torch.nn.MultiheadAttention(4, 2, batch_first=True)
// m.in_proj_weight = torch.arange(48.).reshape(12, 4).sin() * 0.5
// m.in_proj_bias = torch.arange(12.).cos() * 0.1
// m.out_proj.weight = torch.arange(16.).reshape(4, 4).cos() * 0.5; m.out_proj.bias = 0
// x = torch.arange(12.).reshape(1, 3, 4).sin(); mask = torch.ones(3, 3, dtype=bool).triu(1)
nn::MultiheadAttention make_mha() {
  nn::MultiheadAttention mha(4, 2, true, /*batch_first=*/true);
  mg::NoGradGuard no_grad;
  mha->in_proj_weight.copy_(mg::sin(mg::arange(0.0, 48.0, 1.0).reshape({12, 4})) * 0.5);
  mha->in_proj_bias.copy_(mg::cos(mg::arange(0.0, 12.0, 1.0)) * 0.1);
  mha->out_proj->weight.copy_(mg::cos(mg::arange(0.0, 16.0, 1.0).reshape({4, 4})) * 0.5);
  mha->out_proj->bias.zero_();
  return mha;
}

// o, w = m(x, x, x, attn_mask=mask, average_attn_weights=False); w.flatten()
TEST(AttentionRecorder, RecordsEveryHeadAsNeedWeightsWouldReturnIt) {
  nn::MultiheadAttention mha = make_mha();
  const mg::Tensor x = mg::sin(mg::arange(0.0, 12.0, 1.0).reshape({1, 3, 4}));
  const mg::Tensor mask = mg::ones({3, 3}, mg::kBool).triu(1);
  const std::vector<double> torch_weights = {
      1.0, 0.0, 0.0, 0.79817033, 0.20182969, 0.0, 0.27768153, 0.54190165, 0.18041678,
      1.0, 0.0, 0.0, 0.54281288, 0.45718712, 0.0, 0.55277896, 0.37419626, 0.07302478};
  const auto [plain_out, per_head] = mha(x, x, x, mg::Tensor(), true, mask, /*average=*/false);

  nn::AttentionRecorder rec(mha);
  EXPECT_EQ(rec.modules(), (std::vector<std::string>{""}));
  // The model asks for no weights; the recorder still gets every head's.
  const auto [out, none] = mha(x, x, x, mg::Tensor(), /*need_weights=*/false, mask);
  EXPECT_FALSE(none.defined());
  EXPECT_EQ(values(out), values(plain_out));
  ASSERT_EQ(rec.records().size(), 1u);
  const mg::Tensor w = rec.weights("");
  EXPECT_EQ(w.shape(), (mg::Shape{1, 2, 3, 3}));
  EXPECT_EQ(values(w), values(per_head));
  const std::vector<double> got = values(w);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], torch_weights[i], 1e-6) << i;

  // averaged weights asked for: returned averaged, recorded per head
  const auto [out2, averaged] = mha(x, x, x, mg::Tensor(), true, mask);
  EXPECT_EQ(averaged.shape(), (mg::Shape{1, 3, 3}));
  EXPECT_EQ(values(rec.weights()[1]), values(per_head));

  rec.remove();
  EXPECT_EQ(mha->num_attention_weights_hooks(), 0u);
  mha(x, x, x);
  EXPECT_EQ(rec.records().size(), 2u);  // nothing recorded after remove(); the records stay
}

// Recording changes no gradient.
TEST(AttentionRecorder, GradientsUnchanged) {
  nn::MultiheadAttention mha = make_mha();
  const mg::Tensor mask = mg::ones({3, 3}, mg::kBool).triu(1);
  auto grad_of_x = [&](bool record) {
    mg::Tensor x = mg::sin(mg::arange(0.0, 12.0, 1.0).reshape({1, 3, 4})).requires_grad_();
    std::vector<nn::AttentionRecord> maps;
    if (record)
      maps = nn::capture_attention(
          mha, [&] { mha(x, x, x, mg::Tensor(), false, mask).first.sum().backward(); });
    else
      mha(x, x, x, mg::Tensor(), false, mask).first.sum().backward();
    EXPECT_EQ(maps.size(), record ? 1u : 0u);
    return values(x.grad());
  };
  EXPECT_EQ(grad_of_x(true), grad_of_x(false));
}

nn::Transformer make_transformer() {
  mg::manual_seed(0);
  return nn::Transformer(nn::TransformerOptions()
                             .d_model(4)
                             .nhead(2)
                             .num_encoder_layers(1)
                             .num_decoder_layers(1)
                             .dim_feedforward(8));
}

// t = torch.nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
//                          dim_feedforward=8)
// forward hooks on its MultiheadAttention modules run in this order:
// ['encoder.layers.0.self_attn', 'decoder.layers.0.self_attn', 'decoder.layers.0.multihead_attn']
TEST(AttentionRecorder, TransformerCallsInOrderAndNoHooksLeft) {
  nn::Transformer t = make_transformer();
  t->eval();
  const mg::Tensor src = mg::randn({3, 1, 4}), tgt = mg::randn({2, 1, 4});
  const mg::Tensor plain = t(src, tgt);
  std::vector<nn::AttentionRecord> maps;
  {
    nn::AttentionRecorder rec(t);
    EXPECT_EQ(values(t(src, tgt)), values(plain));
    maps = rec.records();
  }
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].name, "encoder.layers.0.self_attn");
  EXPECT_EQ(maps[1].name, "decoder.layers.0.self_attn");
  EXPECT_EQ(maps[2].name, "decoder.layers.0.multihead_attn");
  EXPECT_EQ(maps[0].weights.shape(), (mg::Shape{1, 2, 3, 3}));  // (batch, heads, T, S)
  EXPECT_EQ(maps[2].weights.shape(), (mg::Shape{1, 2, 2, 3}));
  for (const auto& m : t->modules()) {
    if (auto* mha = m->as<nn::MultiheadAttention>()) {
      EXPECT_EQ(mha->num_attention_weights_hooks(), 0u);
    }
  }

  // The encoder layer's recorded weights are its self_attn's need_weights output on its input.
  nn::TransformerEncoderLayer layer(
      t->encoder.get<nn::TransformerEncoder>()->layers->ptr<nn::TransformerEncoderLayer>(0));
  auto captured = nn::capture_attention(layer, [&] { layer(src); });
  ASSERT_EQ(captured.size(), 1u);
  EXPECT_EQ(
      values(captured[0].weights),
      values(layer->self_attn(src, src, src, mg::Tensor(), true, mg::Tensor(), false).second));
}

// A module whose forward returns no Tensor: calls work, hooks on it cannot see the output.
struct CountImpl : nn::Cloneable<CountImpl> {
  CountImpl() : Cloneable("Count") {}
  std::int64_t forward(const mg::Tensor& x) const { return x.numel(); }
};
MG_MODULE(Count);

TEST(ForwardHooks, BadHooksGiveTheirDocumentedMessages) {
  const auto x = mg::ones({1, 2});
  const auto drop = [](nn::Module&, const std::vector<mg::Tensor>&, const mg::Tensor&) {};
  minigrad_test::expect_documented_messages({
      {"hooks", "a pre-hook that adds an input",
       [&] {
         nn::Linear fc = make_fc();
         fc->register_forward_pre_hook([](nn::Module&, const std::vector<mg::Tensor>& in) {
           return std::vector<mg::Tensor>{in[0], in[0]};
         });
         fc(x);
       },
       "[register_forward_pre_hook] Linear: a forward pre-hook returned 2 input(s) for a call "
       "with 1 Tensor argument(s): it may replace them, not add or drop any"},
      {"hooks", "a hook that adds an output",
       [&] {
         nn::Linear fc = make_fc();
         fc->register_forward_hook(
             [](nn::Module&, const std::vector<mg::Tensor>&, const std::vector<mg::Tensor>& out) {
               return std::vector<mg::Tensor>{out[0], out[0]};
             });
         fc(x);
       },
       "[register_forward_hook] Linear: a forward hook returned 2 output(s) for a forward that "
       "returns 1: it may replace them, not add or drop any"},
      {"hooks", "a one-Tensor hook on MultiheadAttention",
       [&] {
         nn::MultiheadAttention mha = make_mha();
         mha->register_forward_hook(drop);
         const auto q = mg::ones({1, 2, 4});
         mha(q, q, q);
       },
       "[register_forward_hook] MultiheadAttention's forward returned 2 tensors, and the hook "
       "takes one (const Tensor& output): take const std::vector<Tensor>& outputs instead"},
      {"hooks", "a hook on a forward that returns an int64_t",
       [&] {
         Count count;
         EXPECT_EQ(count(x), 2);  // no hooks: the plain call
         count->register_forward_hook(drop);
         count(x);
       },
       "[register_forward_hook] Count's forward returns long, and a module with forward hooks "
       "must return Tensors (a Tensor, or a pair, tuple or vector of them) by value"},
      {"hooks", "AttentionRecorder::weights of an unrecorded name",
       [&] {
         nn::Transformer t = make_transformer();
         nn::AttentionRecorder rec(t);
         t(mg::randn({3, 1, 4}), mg::randn({2, 1, 4}));
         rec.weights("encoder.layers.0");
       },
       "[AttentionRecorder] no call of a MultiheadAttention named \"encoder.layers.0\" was "
       "recorded (it watches \"encoder.layers.0.self_attn\", \"decoder.layers.0.self_attn\", "
       "\"decoder.layers.0.multihead_attn\"; 3 call(s) recorded)"},
  });
}

}  // namespace
