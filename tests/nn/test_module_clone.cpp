// clone() through nn::Cloneable<Derived>::reset(), libtorch's scheme (Note [Cloning]): the copy
// is copy-constructed, reset() rebuilds its tensors and children, and the original's values,
// dtypes, requires_grad, buffers and training modes are copied in. Modelled on libtorch's
// test/cpp/api/module.cpp clone tests (Clone_CreatesDistinctParameters,
// CloneCopiesTheValuesOfVariablesOfSubmodules, Clone_PreservesSharedSubmodules' opposite here:
// minigrad's copies share nothing). The expected values are the original module's own.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

// A module of the user's with reset() and no clone(): a holder child, a container child made in
// reset(), a parameter and a buffer.
struct ResetNetImpl : nn::Cloneable<ResetNetImpl> {
  ResetNetImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(3, 4));
    seq = register_module("seq", nn::Sequential{nn::ReLU(), nn::Linear(4, 2)});
    w = register_parameter("w", mg::randn({2}));
    running = register_buffer("running", mg::zeros({2}));
  }
  mg::Tensor forward(const mg::Tensor& x) const { return seq(fc(x)) * w + running; }
  nn::Linear fc{nullptr};
  nn::Sequential seq{nullptr};
  mg::Tensor w, running;
};
MG_MODULE(ResetNet);

// Python's style: children held by value and registered by reference.
struct ByValueImpl : nn::Cloneable<ByValueImpl> {
  ByValueImpl() { reset(); }
  void reset() override {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
  }
  nn::LinearImpl W_q{3, 3, false};
  nn::LinearImpl W_k{3, 2};
};

// reset() registers a child it was given instead of making one: the copy would share it.
struct SharesImpl : nn::Cloneable<SharesImpl> {
  explicit SharesImpl(nn::Linear given) : Cloneable("Shares"), fc(std::move(given)) { reset(); }
  void reset() override { register_module("fc", fc); }
  nn::Linear fc;
};

// A module of the user's that is not an nn::Cloneable.
struct ScaleImpl : nn::Module {
  ScaleImpl() : nn::Module("Scale") {}
};

// A by-value child whose type has no reset(): it cannot be rebuilt in place.
struct ByValueScaleImpl : nn::Cloneable<ByValueScaleImpl> {
  ByValueScaleImpl() { reset(); }
  void reset() override { register_module("scale", scale); }
  ScaleImpl scale;
};

// Checks that copy is original's deep copy: the same type name, training mode and submodules
// (none shared), parameters and buffers equal in value, dtype and requires_grad but each its own
// tensor (writing the copy's leaves the original's as it was).
template <typename M>
void expect_deep_copy(const M& original, const M& copy) {
  const std::string what = original.type_name();
  EXPECT_EQ(copy.type_name(), what);
  EXPECT_NE(&copy, &original) << what;
  for (bool buffers : {false, true}) {
    auto a = buffers ? original.named_buffers() : original.named_parameters();
    auto b = buffers ? copy.named_buffers() : copy.named_parameters();
    ASSERT_EQ(a.keys(), b.keys()) << what;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const mg::Tensor& x = a[i].value();
      mg::Tensor y = b[i].value();
      const std::string name = what + " " + a[i].key();
      EXPECT_FALSE(x.is_same(y)) << name;
      EXPECT_EQ(x.dtype(), y.dtype()) << name;
      EXPECT_EQ(x.requires_grad(), y.requires_grad()) << name;
      ASSERT_TRUE(mg::equal(x, y)) << name;
      mg::NoGradGuard no_grad;
      const mg::Tensor before = x.detach().clone();
      y.fill_(7.0);
      EXPECT_TRUE(mg::equal(x, before)) << name << ": writing the copy's changed the original's";
      y.copy_(before);
    }
  }
  auto mine = original.named_modules(), theirs = copy.named_modules();
  ASSERT_EQ(mine.keys(), theirs.keys()) << what;
  for (std::size_t i = 0; i < mine.size(); ++i) {
    EXPECT_NE(mine[i].value().get(), theirs[i].value().get()) << what << " " << mine[i].key();
    EXPECT_EQ(mine[i].value()->type_name(), theirs[i].value()->type_name());
    EXPECT_EQ(mine[i].value()->is_training(), theirs[i].value()->is_training())
        << what << " " << mine[i].key();
  }
}

/// holder's module cloned: of the holder's type (else a test failure and nullptr), a deep copy.
template <typename H>
std::shared_ptr<typename H::ContainedType> deep_clone(const H& holder) {
  auto copy = std::dynamic_pointer_cast<typename H::ContainedType>(holder->clone());
  EXPECT_NE(copy, nullptr) << holder->type_name() << "'s clone is of another type";
  if (copy) expect_deep_copy(*holder, *copy);
  return copy;
}

/// A single-tensor module: its clone prints the same (options kept) and computes the same.
template <typename H>
void expect_unary_clone(const H& holder, const mg::Tensor& x) {
  auto copy = deep_clone(holder);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->extra_repr(), holder->extra_repr()) << holder->type_name();
  // Fresh inputs: an in-place module writes its input.
  EXPECT_TRUE(mg::equal((*copy)(x.clone()), holder(x.clone()))) << holder->type_name();
}

/// A loss: its clone computes the same loss.
template <typename H, typename... In>
void expect_loss_clone(const H& holder, const In&... inputs) {
  auto copy = deep_clone(holder);
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(mg::allclose(copy->forward(inputs...), holder->forward(inputs...)))
      << holder->type_name();
}

}  // namespace

TEST(ModuleCloneReset, AModuleWithResetClonesWithoutWritingClone) {
  mg::manual_seed(0);
  ResetNet net;
  net->seq->eval();
  net->w.requires_grad_(false);
  {
    mg::NoGradGuard no_grad;
    net->running.fill_(0.5);
  }
  net(mg::ones({2, 3})).sum().backward();
  mg::manual_seed(7);
  mg::Tensor expected_next = mg::randn({3});
  mg::manual_seed(7);
  auto copy = std::dynamic_pointer_cast<ResetNetImpl>(net->clone());
  // reset() drew new initial values, but the generator is where it was.
  EXPECT_TRUE(mg::equal(mg::randn({3}), expected_next));
  ASSERT_NE(copy, nullptr);
  auto a = net->named_parameters(), b = copy->named_parameters();
  ASSERT_EQ(a.keys(), b.keys());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(mg::equal(a[i].value(), b[i].value())) << a[i].key();
    EXPECT_FALSE(a[i].value().is_same(b[i].value())) << a[i].key();
    EXPECT_EQ(a[i].value().requires_grad(), b[i].value().requires_grad()) << a[i].key();
    EXPECT_EQ(a[i].value().grad().defined(), b[i].value().grad().defined()) << a[i].key();
  }
  EXPECT_FALSE(copy->w.requires_grad());
  EXPECT_TRUE(copy->fc->weight.requires_grad());
  // Buffers are copied: the copy's is 0.5 (its reset() made zeros), and its own tensor.
  EXPECT_TRUE(mg::equal(copy->running, mg::full({2}, 0.5)));
  EXPECT_FALSE(copy->running.is_same(net->running));
  EXPECT_TRUE(copy->named_buffers()["running"].is_same(copy->running));
  // The members are the copy's registered children, none of them the original's.
  EXPECT_EQ(copy->named_children()["fc"].get(), copy->fc.get());
  EXPECT_EQ(copy->named_children()["seq"].get(), copy->seq.get());
  auto mine = net->named_modules(), theirs = copy->named_modules();
  ASSERT_EQ(mine.keys(), theirs.keys());
  for (std::size_t i = 0; i < mine.size(); ++i)
    EXPECT_NE(mine[i].value().get(), theirs[i].value().get()) << mine[i].key();
  EXPECT_TRUE(copy->is_training());
  EXPECT_FALSE(copy->seq->is_training());
  mg::Tensor x = mg::randn({2, 3});
  EXPECT_TRUE(mg::equal(copy->forward(x), net->forward(x)));
  // Changing the copy leaves the original alone.
  {
    mg::NoGradGuard no_grad;
    copy->seq->ptr<nn::Linear>(1)->weight.fill_(0.0);
  }
  EXPECT_FALSE(mg::equal(net->seq->ptr<nn::Linear>(1)->weight, mg::zeros({2, 4})));
}

TEST(ModuleCloneReset, AMemberRegisteredByReferenceIsTheCopysOwn) {
  mg::manual_seed(0);
  ByValueImpl m;
  m.W_k.bias.requires_grad_(false);
  auto copy = std::dynamic_pointer_cast<ByValueImpl>(m.clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->named_children()["W_q"].get(), &copy->W_q);
  EXPECT_EQ(copy->named_children()["W_k"].get(), &copy->W_k);
  EXPECT_TRUE(copy->named_parameters()["W_q.weight"].is_same(copy->W_q.weight));
  EXPECT_FALSE(copy->W_q.weight.is_same(m.W_q.weight));
  EXPECT_TRUE(mg::equal(copy->W_q.weight, m.W_q.weight));
  EXPECT_TRUE(mg::equal(copy->W_k.bias, m.W_k.bias));
  EXPECT_FALSE(copy->W_k.bias.requires_grad());
  EXPECT_FALSE(copy->W_q.bias.defined());
  // The original's registry still names its own members.
  EXPECT_EQ(m.named_children()["W_q"].get(), &m.W_q);
  EXPECT_TRUE(m.named_parameters()["W_q.weight"].is_same(m.W_q.weight));
}

TEST(ModuleCloneReset, AModuleConvertedToFloat64ClonesAsFloat64) {
  mg::manual_seed(0);
  nn::Linear fc(3, 2);
  fc->to(mg::kFloat64);
  auto copy = std::dynamic_pointer_cast<nn::LinearImpl>(fc->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->weight.dtype(), mg::kFloat64);
  EXPECT_EQ(copy->bias.dtype(), mg::kFloat64);
  EXPECT_TRUE(mg::equal(copy->weight, fc->weight));
  ResetNet net;
  net->to(mg::kFloat64);
  auto net2 = std::dynamic_pointer_cast<ResetNetImpl>(net->clone());
  for (const auto& item : net2->named_parameters())
    EXPECT_EQ(item.value().dtype(), mg::kFloat64) << item.key();
  EXPECT_EQ(net2->running.dtype(), mg::kFloat64);
  mg::Tensor x = mg::randn({2, 3}, mg::kFloat64);
  EXPECT_TRUE(mg::equal(net2->forward(x), net->forward(x)));
}

TEST(ModuleCloneReset, ErrorsAreDocumented) {
  SharesImpl shares(nn::Linear(2, 2));
  ByValueScaleImpl by_value;
  minigrad_test::expect_documented_messages({
      {"clone() of a module whose reset() registers a child it was given", "Shares",
       [&] { (void)shares.clone(); },
       "[Module.clone] Shares: reset() registered the original's child \"fc\" instead of making "
       "a new one, so the copy would share it; make the child in reset() (fc = "
       "register_module(\"fc\", nn::Linear(...)))"},
      {"clone() with reset() of a module holding by value a child that has no reset()", "Scale",
       [&] { (void)by_value.clone(); },
       "[Module.clone] Scale is registered by reference (a member held by value) in a module "
       "cloned with reset(), so it is copied with its parent and must be rebuilt in place: derive "
       "it from nn::Cloneable<ScaleImpl> and define reset(), or hold it through a holder"},
  });
}

TEST(ModuleCloneReset, ACopyHasNoHooksAndSharesNoHookList) {
  mg::manual_seed(0);
  nn::MultiheadAttention mha(4, 2);
  mha->dropout = 0.25;  // set after construction: the copy constructor keeps it
  auto h1 = mha->register_attention_weights_hook(
      [](const nn::MultiheadAttentionImpl&, const mg::Tensor&) {});
  auto h2 = mha->out_proj->register_forward_hook(
      [](nn::Module&, const std::vector<mg::Tensor>&, const mg::Tensor&) {});
  auto copy = std::dynamic_pointer_cast<nn::MultiheadAttentionImpl>(mha->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->dropout, 0.25);
  EXPECT_EQ(copy->num_attention_weights_hooks(), 0u);
  EXPECT_FALSE(copy->out_proj->has_forward_hooks());
  EXPECT_NE(copy->out_proj.get(), mha->out_proj.get());
  EXPECT_EQ(copy->named_children()["out_proj"].get(), copy->out_proj.get());
  EXPECT_TRUE(mg::equal(copy->out_proj->weight, mha->out_proj->weight));
  EXPECT_FALSE(copy->out_proj->weight.is_same(mha->out_proj->weight));
  // A hook added to the copy is the copy's alone.
  auto h3 = copy->register_attention_weights_hook(
      [](const nn::MultiheadAttentionImpl&, const mg::Tensor&) {});
  EXPECT_EQ(mha->num_attention_weights_hooks(), 1u);
  EXPECT_EQ(copy->num_attention_weights_hooks(), 1u);
}

// ---- the built-in modules clone through nn::Cloneable (no clone() of their own)

TEST(ModuleCloneBuiltins, NormsAndEmbeddingCopyTheirTensors) {
  mg::manual_seed(0);
  nn::LayerNorm ln(mg::Shape{2, 3}, 1e-3);
  {
    mg::NoGradGuard no_grad;
    ln->weight.copy_(mg::randn({2, 3}));
    ln->bias.copy_(mg::randn({2, 3}));
  }
  ln->bias.requires_grad_(false);
  auto ln2 = deep_clone(ln);
  ASSERT_NE(ln2, nullptr);
  EXPECT_EQ(ln2->eps, 1e-3);
  EXPECT_TRUE(ln2->weight.is_same(ln2->named_parameters()["weight"]));
  const mg::Tensor x = mg::randn({4, 2, 3});
  EXPECT_TRUE(mg::equal(ln2->forward(x), ln->forward(x)));
  nn::LayerNorm plain(3, 1e-5, /*elementwise_affine=*/false);
  auto plain2 = deep_clone(plain);
  ASSERT_NE(plain2, nullptr);
  EXPECT_FALSE(plain2->weight.defined());
  EXPECT_TRUE(plain2->parameters().empty());

  // A module converted to float64 clones as float64.
  nn::RMSNorm rms(nn::RMSNormOptions({3}).eps(1e-6));
  rms->to(mg::kFloat64);
  {
    mg::NoGradGuard no_grad;
    rms->weight.copy_(mg::randn({3}, mg::kFloat64));
  }
  auto rms2 = deep_clone(rms);
  ASSERT_NE(rms2, nullptr);
  EXPECT_EQ(rms2->weight.dtype(), mg::kFloat64);
  EXPECT_EQ(rms2->extra_repr(), rms->extra_repr());
  const mg::Tensor x64 = mg::randn({2, 3}, mg::kFloat64);
  EXPECT_TRUE(mg::equal(rms2->forward(x64), rms->forward(x64)));

  nn::Embedding emb(
      nn::EmbeddingOptions(5, 3).padding_idx(1).max_norm(4.0).norm_type(1.0).scale_grad_by_freq(
          true));
  emb->eval();
  auto emb2 = deep_clone(emb);
  ASSERT_NE(emb2, nullptr);
  EXPECT_EQ(emb2->padding_idx, 1);
  EXPECT_EQ(emb2->max_norm, 4.0);
  EXPECT_EQ(emb2->norm_type, 1.0);
  EXPECT_TRUE(emb2->scale_grad_by_freq);
  EXPECT_FALSE(emb2->is_training());
  EXPECT_EQ(emb2->extra_repr(), emb->extra_repr());
  const mg::Tensor idx = mg::tensor({0, 1, 4, 1}).to(mg::kInt64);
  EXPECT_TRUE(mg::equal(emb2->forward(idx), emb->forward(idx)));
  // from_pretrained: a frozen table stays frozen, and is the copy's own.
  const mg::Tensor table = mg::randn({4, 2});
  auto frozen = deep_clone(nn::Embedding::from_pretrained(table));
  ASSERT_NE(frozen, nullptr);
  EXPECT_FALSE(frozen->weight.requires_grad());
  EXPECT_FALSE(frozen->weight.is_same(table));
}

TEST(ModuleCloneBuiltins, ActivationsKeepTheirOptions) {
  mg::manual_seed(0);
  const mg::Tensor x = mg::randn({3, 4});
  nn::ReLU relu;
  relu->inplace = true;  // set after construction: the copy constructor keeps it
  expect_unary_clone(relu, x);
  EXPECT_TRUE(std::dynamic_pointer_cast<nn::ReLUImpl>(relu->clone())->inplace);
  nn::Dropout dropout(0.5);
  dropout->p = 0.25;
  dropout->eval();
  expect_unary_clone(dropout, x);
  EXPECT_EQ(std::dynamic_pointer_cast<nn::DropoutImpl>(dropout->clone())->p, 0.25);
  expect_unary_clone(nn::GELU("tanh"), x);
  expect_unary_clone(nn::Tanh(), x);
  expect_unary_clone(nn::Sigmoid(), x);
  expect_unary_clone(nn::SiLU(true), x);
  expect_unary_clone(nn::Mish(), x);
  expect_unary_clone(nn::Softmax(0), x);
  expect_unary_clone(nn::LogSoftmax(1), x);
  expect_unary_clone(nn::Identity(), x);
  expect_unary_clone(nn::Flatten(nn::FlattenOptions().start_dim(0)), x);
  expect_unary_clone(nn::Unflatten(nn::UnflattenOptions(1, {2, 2})), x);
  expect_unary_clone(nn::ELU(nn::ELUOptions().alpha(0.5)), x);
  expect_unary_clone(nn::SELU(true), x);
  expect_unary_clone(nn::CELU(nn::CELUOptions().alpha(2.0)), x);
  expect_unary_clone(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)), x);
  expect_unary_clone(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5)), x);
  expect_unary_clone(nn::Softplus(nn::SoftplusOptions().beta(2.0).threshold(5.0)), x);
  expect_unary_clone(nn::Hardsigmoid(), x);
  expect_unary_clone(nn::Hardswish(true), x);
  expect_unary_clone(nn::LogSigmoid(), x);
  expect_unary_clone(nn::Softsign(), x);
  expect_unary_clone(nn::Softmin(1), x);
  expect_unary_clone(nn::Functional([](const mg::Tensor& t) { return t * 2.0; }), x);
}

TEST(ModuleCloneBuiltins, LossesCopyTheirWeights) {
  mg::manual_seed(0);
  const mg::Tensor logits = mg::randn({4, 3});
  const mg::Tensor probs = mg::sigmoid(logits);
  const mg::Tensor bits = (mg::rand({4, 3}) > 0.5).to(mg::kFloat32);
  const mg::Tensor classes = mg::tensor({0, 2, 1, 2}).to(mg::kInt64);
  const mg::Tensor w = mg::rand({3}) + 0.5;
  const mg::Tensor signs = mg::tensor({1.0, -1.0, 1.0, -1.0});
  expect_loss_clone(nn::L1Loss(nn::L1LossOptions().reduction(mg::kSum)), logits, probs);
  expect_loss_clone(nn::MSELoss(), logits, probs);
  expect_loss_clone(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5)), logits, probs);
  expect_loss_clone(nn::HuberLoss(nn::HuberLossOptions().delta(0.5)), logits, probs);
  nn::BCELoss bce(nn::BCELossOptions().weight(w).reduction(mg::kSum));
  expect_loss_clone(bce, probs, bits);
  auto bce2 = std::dynamic_pointer_cast<nn::BCELossImpl>(bce->clone());
  // The copy's options name its own weight, the buffer it registered.
  EXPECT_FALSE(bce2->options.weight().is_same(w));
  EXPECT_TRUE(bce2->options.weight().is_same(bce2->named_buffers()["weight"]));
  expect_loss_clone(nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().weight(w).pos_weight(w)),
                    logits, bits);
  expect_loss_clone(nn::NLLLoss(nn::NLLLossOptions().weight(w).ignore_index(1)),
                    mg::log_softmax(logits, 1), classes);
  expect_loss_clone(
      nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().weight(w).label_smoothing(0.1)), logits,
      classes);
  expect_loss_clone(nn::SoftMarginLoss(), signs, signs * 0.5);
  expect_loss_clone(nn::MultiLabelSoftMarginLoss(nn::MultiLabelSoftMarginLossOptions().weight(w)),
                    logits, bits);
  expect_loss_clone(nn::HingeEmbeddingLoss(nn::HingeEmbeddingLossOptions().margin(0.5)), logits,
                    mg::ones({4, 3}));
  expect_loss_clone(nn::MultiMarginLoss(nn::MultiMarginLossOptions().weight(w).margin(0.5)), logits,
                    classes);
  expect_loss_clone(nn::PoissonNLLLoss(), logits, probs);
  expect_loss_clone(nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.1)), signs,
                    signs * 0.5, signs);
  expect_loss_clone(nn::CosineEmbeddingLoss(), logits, probs, signs);
  expect_loss_clone(nn::TripletMarginLoss(nn::TripletMarginLossOptions().swap(true)), logits, probs,
                    probs * 2.0);
  expect_loss_clone(nn::PairwiseDistance(nn::PairwiseDistanceOptions().p(1.0)), logits, probs);
  auto ctc = deep_clone(nn::CTCLoss(nn::CTCLossOptions().blank(2).zero_infinity(true)));
  ASSERT_NE(ctc, nullptr);
  EXPECT_EQ(ctc->options.blank(), 2);
  EXPECT_TRUE(ctc->options.zero_infinity());
}

TEST(ModuleCloneBuiltins, ContainersCloneEachChild) {
  mg::manual_seed(0);
  nn::Sequential seq({{"fc", nn::Linear(3, 4)}, {"act", nn::ReLU()}, {"norm", nn::LayerNorm(4)}});
  seq[2]->eval();
  auto seq2 = deep_clone(seq);
  ASSERT_NE(seq2, nullptr);
  EXPECT_EQ(seq2->named_children().keys(), (std::vector<std::string>{"fc", "act", "norm"}));
  EXPECT_NE(seq2->ptr<nn::Linear>(0), nullptr);
  const mg::Tensor x = mg::randn({2, 3});
  EXPECT_TRUE(mg::equal(seq2->forward(x), seq->forward(x)));

  nn::ModuleList list{nn::Linear(3, 3), nn::Tanh()};
  auto list2 = deep_clone(list);
  ASSERT_NE(list2, nullptr);
  EXPECT_EQ(list2->size(), 2u);
  EXPECT_TRUE(
      mg::equal(list2->ptr<nn::Linear>(0)->forward(x), list->ptr<nn::Linear>(0)->forward(x)));

  nn::ModuleDict dict({{"fc", nn::Linear(3, 2)}, {"act", nn::GELU()}});
  auto dict2 = deep_clone(dict);
  ASSERT_NE(dict2, nullptr);
  EXPECT_EQ(dict2->keys(), dict->keys());
  EXPECT_TRUE(
      mg::equal(dict2->ptr<nn::Linear>("fc")->forward(x), dict->ptr<nn::Linear>("fc")->forward(x)));

  nn::ParameterList params(mg::randn({2, 3}), mg::randn({4}, mg::kFloat64));
  params[1].requires_grad_(false);
  auto params2 = deep_clone(params);
  ASSERT_NE(params2, nullptr);
  EXPECT_TRUE((*params2)[0].is_same(params2->named_parameters()["0"]));
  EXPECT_EQ((*params2)[1].dtype(), mg::kFloat64);

  nn::ParameterDict pd({{"alpha", mg::randn({2})}, {"beta", mg::randn({1})}});
  auto pd2 = deep_clone(pd);
  ASSERT_NE(pd2, nullptr);
  EXPECT_EQ(pd2->keys(), pd->keys());
  EXPECT_TRUE(pd2->get("alpha").is_same(pd2->named_parameters()["alpha"]));
}

TEST(ModuleCloneBuiltins, TransformerStacksClone) {
  mg::manual_seed(0);
  auto layer_options = nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).dropout(0.0);
  nn::TransformerEncoder encoder(
      nn::TransformerEncoderOptions(nn::TransformerEncoderLayer(layer_options), 2)
          .norm(nn::LayerNorm(4)));
  encoder->eval();
  auto encoder2 = deep_clone(encoder);
  ASSERT_NE(encoder2, nullptr);
  EXPECT_EQ(encoder2->named_children()["layers"].get(), encoder2->layers.get());
  EXPECT_EQ(encoder2->named_children()["norm"].get(), encoder2->norm.ptr().get());
  const mg::Tensor src = mg::randn({5, 2, 4});
  EXPECT_TRUE(mg::equal(encoder2->forward(src), encoder->forward(src)));

  nn::TransformerDecoder decoder(nn::TransformerDecoderOptions(
      nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(layer_options)), 1));
  auto decoder2 = deep_clone(decoder);
  ASSERT_NE(decoder2, nullptr);
  EXPECT_TRUE(decoder2->norm.is_empty());
  decoder->eval();
  decoder2->eval();
  const mg::Tensor tgt = mg::randn({3, 2, 4});
  EXPECT_TRUE(mg::equal(decoder2->forward(tgt, src), decoder->forward(tgt, src)));

  nn::Transformer model(nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(8).dropout(0.0));
  model->eval();
  auto model2 = deep_clone(model);
  ASSERT_NE(model2, nullptr);
  EXPECT_EQ(model2->named_children()["encoder"].get(), model2->encoder.ptr().get());
  EXPECT_TRUE(mg::equal(model2->forward(src, tgt), model->forward(src, tgt)));
}

namespace {
// A module of the user's holding built-ins by value (registered by reference) and by holder.
struct MixedImpl : nn::Cloneable<MixedImpl> {
  MixedImpl() { reset(); }
  void reset() override {
    register_module("emb", emb);
    register_module("norm", norm);
    register_module("seq", seq);
    register_module("loss", loss);
    head = register_module("head", nn::Linear(3, 2));
    list = register_module("list", nn::ModuleList{nn::Linear(3, 3), nn::GELU()});
  }
  mg::Tensor forward(const mg::Tensor& idx, const mg::Tensor& target) const {
    mg::Tensor h = seq.forward(norm.forward(emb.forward(idx)));
    h = list->at<nn::GELUImpl>(1).forward(list->at<nn::LinearImpl>(0).forward(h));
    return loss.forward(head(h), target);
  }
  nn::EmbeddingImpl emb{5, 3};
  nn::LayerNormImpl norm{3};
  nn::SequentialImpl seq{nn::Linear(3, 3), nn::Tanh()};
  nn::CrossEntropyLossImpl loss{nn::CrossEntropyLossOptions().weight(mg::tensor({1.0, 2.0}))};
  nn::Linear head{nullptr};
  nn::ModuleList list{nullptr};
};
}  // namespace

TEST(ModuleCloneBuiltins, AModuleHoldingBuiltInsByValueAndByHolderClones) {
  mg::manual_seed(0);
  MixedImpl net;
  net.seq.eval();
  auto copy = std::dynamic_pointer_cast<MixedImpl>(net.clone());
  ASSERT_NE(copy, nullptr);
  expect_deep_copy(net, *copy);
  EXPECT_EQ(copy->named_children()["emb"].get(), &copy->emb);
  EXPECT_EQ(copy->named_children()["seq"].get(), &copy->seq);
  EXPECT_NE(copy->seq.ptr(0).get(), net.seq.ptr(0).get());
  EXPECT_TRUE(copy->emb.weight.is_same(copy->named_parameters()["emb.weight"]));
  EXPECT_TRUE(copy->loss.weight.is_same(copy->named_buffers()["loss.weight"]));
  EXPECT_FALSE(copy->seq.is_training());
  const mg::Tensor idx = mg::tensor({0, 3, 4}).to(mg::kInt64);
  const mg::Tensor target = mg::tensor({1, 0, 1}).to(mg::kInt64);
  EXPECT_TRUE(mg::equal(copy->forward(idx, target), net.forward(idx, target)));
  // The original's own registry still names its own members.
  EXPECT_EQ(net.named_children()["seq"].get(), &net.seq);
}
