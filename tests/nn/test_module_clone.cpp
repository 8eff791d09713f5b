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

// A by-value child whose type has no reset(): it cannot be rebuilt in place.
struct ByValueGeluImpl : nn::Cloneable<ByValueGeluImpl> {
  ByValueGeluImpl() { reset(); }
  void reset() override { register_module("act", act); }
  nn::GELUImpl act{"tanh"};
};

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
  ByValueGeluImpl gelu;
  minigrad_test::expect_documented_messages({
      {"clone() of a module whose reset() registers a child it was given", "Shares",
       [&] { (void)shares.clone(); },
       "[Module.clone] Shares: reset() registered the original's child \"fc\" instead of making "
       "a new one, so the copy would share it; make the child in reset() (fc = "
       "register_module(\"fc\", nn::Linear(...)))"},
      {"clone() with reset() of a module holding by value a child that has no reset()", "GELU",
       [&] { (void)gelu.clone(); },
       "[Module.clone] GELU is registered by reference (a member held by value) in a module "
       "cloned with reset(), so it is copied with its parent and must be rebuilt in place: derive "
       "it from nn::Cloneable<GELUImpl> and define reset(), or hold it through a holder"},
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
