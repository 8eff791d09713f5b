// nn: Module registration and printing, Linear (PyTorch's initial values, bit for bit), functional,
// init and clip_grad_norm_. Expected values come from PyTorch 1.13 (the Python is in comments).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/testing.h>

#include <cmath>
#include <memory>
#include <sstream>

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;
namespace optim = minigrad::optim;

namespace {

template <typename F>
void expect_error(F&& stmt, const std::string& op) {
  try {
    stmt();
    ADD_FAILURE() << "expected minigrad::Error from [" << op << "]";
  } catch (const mg::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  }
}

struct Attention : nn::Module {
  nn::Linear W_q{3, 3, false};
  nn::Linear W_k{3, 3, false};
  Attention() : nn::Module("A") {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
  }
};

}  // namespace

TEST(NnLinear, InitialWeightsAreBitIdenticalToPyTorch) {
  // torch.manual_seed(0); nn.Linear(3, 2).weight.tolist(), .bias.tolist()
  mg::manual_seed(0);
  nn::Linear l(3, 2);
  std::vector<float> w = l->weight.to_vector<float>();
  std::vector<float> expected_w = {-0.004322517663240433f, 0.3097158372402191f,
                                   -0.4751853346824646f,   -0.4248946011066437f,
                                   -0.2223689705133438f,   0.15482072532176971f};
  std::vector<float> expected_b = {-0.011439144611358643f, 0.45777493715286255f};
  EXPECT_EQ(w, expected_w);
  EXPECT_EQ(l->bias.to_vector<float>(), expected_b);
  EXPECT_EQ(l->weight.shape(), (mg::Shape{2, 3}));
  EXPECT_TRUE(l->weight.requires_grad());
}

TEST(NnLinear, WeightsStayInsidePyTorchBounds) {
  mg::manual_seed(123);
  nn::Linear l(16, 8);
  // kaiming_uniform_(a = sqrt(5)) gives bound 1/sqrt(in); the bias has the same bound.
  double bound = 1.0 / std::sqrt(16.0);
  for (float v : l->weight.to_vector<float>()) EXPECT_LE(std::fabs(v), bound);
  for (float v : l->bias.to_vector<float>()) EXPECT_LE(std::fabs(v), bound);
}

TEST(NnLinear, ForwardMatchesPyTorch) {
  // torch.manual_seed(0); l = nn.Linear(3, 2); l(torch.tensor([[1.,2.,3.],[4.,5.,6.]]))
  mg::manual_seed(0);
  nn::Linear l(3, 2);
  mg::Tensor y = l(mg::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}));
  std::vector<float> expected = {-0.8218860030174255f, 0.0526045560836792f, -1.3312621116638184f,
                                 -1.4247241020202637f};
  auto got = y.to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6);
  EXPECT_EQ(y.grad_fn()->name(), "AddmmBackward0");
}

TEST(NnLinear, AnyNumberOfLeadingDims) {
  nn::Linear l(4, 2, false);
  EXPECT_EQ(l(mg::ones({2, 3, 5, 4})).shape(), (mg::Shape{2, 3, 5, 2}));
  EXPECT_EQ(l(mg::ones({4})).shape(), (mg::Shape{2}));
  expect_error([&] { l(mg::ones({3, 5})); }, "Linear");
  EXPECT_FALSE(l->bias.defined());
}

TEST(NnModule, NamedParametersAndPrinting) {
  Attention a;
  auto named = a.named_parameters();
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].first, "W_q.weight");
  EXPECT_EQ(named[1].first, "W_k.weight");
  EXPECT_TRUE(named[0].second.is_same(a.W_q->weight));
  EXPECT_EQ(a.parameters().size(), 2u);
  EXPECT_EQ(a.children().size(), 2u);
  std::ostringstream os;
  os << a;
  // print(A()) in PyTorch for the same class named A:
  EXPECT_EQ(os.str(),
            "A(\n"
            "  (W_q): Linear(in_features=3, out_features=3, bias=False)\n"
            "  (W_k): Linear(in_features=3, out_features=3, bias=False)\n"
            ")");
  std::ostringstream one;
  one << nn::Linear(3, 2);
  EXPECT_EQ(one.str(), "Linear(in_features=3, out_features=2, bias=True)");
}

TEST(NnModule, ZeroGradTrainEvalToAndApply) {
  Attention a;
  mg::Tensor x = mg::eye(3);
  (a.W_q(x) * a.W_k(x)).sum().backward();
  EXPECT_TRUE(a.W_q->weight.grad().defined());
  a.zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(a.W_q->weight.grad().sum().item<float>(), 0.0f);
  a.zero_grad();
  EXPECT_FALSE(a.W_q->weight.grad().defined());
  a.eval();
  EXPECT_FALSE(a.W_k->is_training());
  a.train();
  EXPECT_TRUE(a.W_k->is_training());
  mg::Tensor handle = a.W_q->weight;
  a.to(mg::kFloat64);
  EXPECT_EQ(handle.dtype(), mg::kFloat64);  // the member handle sees the conversion
  EXPECT_EQ(a.W_q(mg::eye(3, std::nullopt, mg::kFloat64)).dtype(), mg::kFloat64);
  int visited = 0;
  a.apply([&](nn::Module&) { ++visited; });
  EXPECT_EQ(visited, 3);
  expect_error([&] { a.register_parameter("W_q.weight", mg::ones({1})); }, "register_parameter");
}

TEST(NnModule, ParameterNamesAreRecordedWithoutKeepingTensorsAlive) {
  const std::int64_t storages0 = mg::live_storage_count();
  {
    Attention a;
    EXPECT_EQ(nn::parameter_name(a.W_q->weight), "") << "not listed by any module yet";
    a.parameters();
    EXPECT_EQ(nn::parameter_name(a.W_q->weight), "W_q.weight");
    EXPECT_EQ(nn::parameter_name(a.W_k->weight), "W_k.weight");
    // Listing a child's parameters keeps the fuller name its parent gave.
    a.W_k->named_parameters();
    EXPECT_EQ(nn::parameter_name(a.W_k->weight), "W_k.weight");
    nn::Linear alone(2, 2);
    alone->named_parameters();
    EXPECT_EQ(nn::parameter_name(alone->weight), "weight");
    EXPECT_EQ(nn::parameter_name(alone->bias), "bias");
    EXPECT_EQ(nn::parameter_name(mg::ones({2})), "");
    EXPECT_EQ(nn::parameter_name(mg::Tensor()), "");
  }
  // The record holds no tensor: every storage is gone with the modules.
  EXPECT_EQ(mg::live_storage_count(), storages0);
  // A new tensor that reuses a dead parameter's memory is not given the dead one's name.
  for (int i = 0; i < 50; ++i) {
    {
      nn::Linear l(2, 2);
      l->parameters();
    }
    EXPECT_EQ(nn::parameter_name(mg::ones({2, 2}).requires_grad_()), "") << i;
  }
}

// A tree with every kind of child: members, a Sequential and a ModuleList owning theirs through
// shared_ptr, and an attention layer.
struct HookedBlock : nn::Module {
  nn::MultiheadAttention attn{4, 2, /*bias=*/true, /*batch_first=*/true};
  nn::LayerNorm norm{4};
  nn::Sequential mlp{nullptr};
  nn::ModuleList heads{nullptr};
  HookedBlock() : nn::Module("HookedBlock") {
    register_module("attn", attn);
    register_module("norm", norm);
    mlp = register_module("mlp", nn::Sequential{std::make_shared<nn::LinearImpl>(4, 8),
                                                std::make_shared<nn::GELUImpl>(),
                                                std::make_shared<nn::LinearImpl>(8, 4)}
                                     .ptr());
    heads = register_module("heads", std::make_shared<nn::ModuleListImpl>());
    heads->push_back(std::make_shared<nn::LinearImpl>(4, 1));
    heads->push_back(std::make_shared<nn::LinearImpl>(4, 1));
  }
};

TEST(NnMemory, ModuleTreeWithHooksHasNoReferenceCycles) {
  const std::int64_t nodes0 = mg::autograd::live_node_count();
  const std::int64_t storages0 = mg::live_storage_count();
  int param_hook_calls = 0, activation_hook_calls = 0;
  std::size_t num_params = 0;
  {
    auto block = std::make_shared<HookedBlock>();
    const std::vector<mg::Tensor> params = block->parameters();
    num_params = params.size();
    ASSERT_EQ(num_params, 14u);  // attn 4, norm 2, mlp 2 x 2, heads 2 x 2
    // Parameter hooks that hold a tensor by value and the module by reference (a hook holding its
    // own module or tensor by value would be a cycle of the user's making, as in libtorch).
    const mg::Tensor half = mg::full({1}, 0.5);
    for (const mg::Tensor& p : params) {
      p.register_hook([&param_hook_calls, half, &self = *block](const mg::Tensor& g) {
        ++param_hook_calls;
        EXPECT_EQ(self.heads->size(), 2u);
        return g * half * 2.0;  // an equal gradient, through ops recorded in no graph
      });
    }
    optim::AdamW opt(params, optim::AdamWOptions(1e-2));
    for (int step = 0; step < 2; ++step) {
      {
        mg::manual_seed(step);
        const mg::Tensor x = mg::randn({2, 3, 4}).requires_grad_();
        const auto attended = block->attn(x, x, x);
        const mg::Tensor a = attended.first;
        const mg::Tensor weights = attended.second;
        // Hooks on intermediates: one holds the input leaf, one the attention weights (an
        // intermediate with its own graph), and a retained gradient.
        a.register_hook([&activation_hook_calls, x](const mg::Tensor& g) {
          ++activation_hook_calls;
          EXPECT_EQ(g.shape(), x.shape());
          return mg::Tensor();
        });
        a.retain_grad();
        const mg::Tensor h = block->norm(x + a);
        h.register_hook([&activation_hook_calls, weights](const mg::Tensor& g) {
          ++activation_hook_calls;
          EXPECT_EQ(weights.shape(), (mg::Shape{2, 3, 3}));
          return g;
        });
        const mg::Tensor y = block->mlp->forward(h) + h;
        const mg::Tensor loss = block->heads->ptr<nn::Linear>(0)->forward(y).pow(2).mean() +
                                block->heads->ptr<nn::Linear>(1)->forward(y).mean();
        opt.zero_grad();
        loss.backward();
        opt.step();
        EXPECT_TRUE(a.grad().defined());
        EXPECT_TRUE(x.grad().defined());
      }
      // Between steps only the model and the optimizer's state are alive: no graph node.
      EXPECT_EQ(mg::autograd::live_node_count(), nodes0) << "after step " << step;
    }
    // A backward with retain_graph keeps its graph until the last handle is dropped.
    {
      const mg::Tensor x = mg::randn({2, 3, 4});
      const mg::Tensor out = block->mlp->forward(block->attn(x, x, x).first).sum();
      out.backward(mg::Tensor(), /*retain_graph=*/true);
      EXPECT_GT(mg::autograd::live_node_count(), nodes0);
    }
    EXPECT_EQ(mg::autograd::live_node_count(), nodes0);
  }
  // Two training steps reach all 14 parameters; the retained backward reaches attn's 4 and mlp's 4.
  EXPECT_EQ(param_hook_calls, 2 * 14 + 8);
  EXPECT_EQ(activation_hook_calls, 4);
  // Everything is destroyed: no node and no storage outlives the module tree.
  EXPECT_EQ(mg::autograd::live_node_count(), nodes0);
  EXPECT_EQ(mg::live_storage_count(), storages0);
}

TEST(NnFunctional, MseLoss) {
  // F.mse_loss(torch.tensor([1.,2.,3.]), torch.tensor([1.5,2.,5.])) -> 1.4167 (= 4.25 / 3)
  mg::Tensor l = F::mse_loss(mg::tensor({1.0, 2.0, 3.0}), mg::tensor({1.5, 2.0, 5.0}));
  EXPECT_NEAR(l.item<double>(), 4.25 / 3, 1e-6);
  EXPECT_NEAR(F::mse_loss(mg::tensor({1.0, 2.0}), mg::tensor({0.0, 0.0}), "sum").item<double>(),
              5.0, 0);
  expect_error([] { F::mse_loss(mg::ones({2}), mg::ones({3})); }, "mse_loss");
}

TEST(NnFunctional, CausalScaledDotProductAttention) {
  // q = k = [[1,0],[0,1],[1,1]], v = [[1,2],[3,4],[5,6]]; softmax(masked(q k^T / sqrt(2))) v
  mg::Tensor q = mg::tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}});
  mg::Tensor v = mg::tensor({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  mg::Tensor out =
      F::scaled_dot_product_attention(q, q, v, {}, /*dropout_p=*/0.0, /*is_causal=*/true);
  std::vector<float> expected = {
      1.0f, 2.0f, 2.3395230770111084f, 3.3395230770111084f, 3.510469675064087f, 4.510469436645508f};
  auto got = out.to_vector<float>();
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6);
  // The same with an explicit bool mask.
  mg::Tensor mask = mg::ones({3, 3}, mg::kBool).tril();
  EXPECT_TRUE(mg::allclose(F::scaled_dot_product_attention(q, q, v, mask), out));
  expect_error(
      [&] {
        F::scaled_dot_product_attention(q, mg::ones({3, 4}), v);
      },
      "scaled_dot_product_attention");
}

TEST(NnFunctional, GradcheckLinearMseAndAttention) {
  mg::manual_seed(1);
  mg::Tensor x = mg::randn({2, 3, 4}, mg::kFloat64).requires_grad_();
  mg::Tensor w = mg::randn({5, 4}, mg::kFloat64).requires_grad_();
  mg::Tensor b = mg::randn({5}, mg::kFloat64).requires_grad_();
  mg::Tensor t = mg::randn({2, 3, 5}, mg::kFloat64);
  EXPECT_GRADCHECK(
      [t](const std::vector<mg::Tensor>& in) {
        return F::mse_loss(F::linear(in[0], in[1], in[2]), t);
      },
      {x, w, b});
  mg::Tensor q = mg::randn({2, 4, 3}, mg::kFloat64).requires_grad_();
  mg::Tensor k = mg::randn({2, 4, 3}, mg::kFloat64).requires_grad_();
  mg::Tensor v = mg::randn({2, 4, 2}, mg::kFloat64).requires_grad_();
  auto sdpa = [](const std::vector<mg::Tensor>& in) {
    return F::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, true);
  };
  EXPECT_GRADCHECK(sdpa, {q, k, v});
  EXPECT_GRADGRADCHECK(sdpa, {q, k, v});
}

TEST(NnUtils, ClipGradNorm) {
  // p1.grad = [3, 4], p2.grad = [12]: total norm 13; clipped to 1 -> [3/13, 4/13], [12/13]
  mg::Tensor p1 = mg::tensor({3.0, 4.0}).requires_grad_();
  mg::Tensor p2 = mg::tensor({1.0}).requires_grad_();
  p1.set_grad(mg::tensor({3.0, 4.0}));
  p2.set_grad(mg::tensor({12.0}));
  mg::Tensor total = nn::utils::clip_grad_norm_({p1, p2}, 1.0);
  EXPECT_NEAR(total.item<double>(), 13.0, 1e-5);
  EXPECT_NEAR(p1.grad().to_vector<float>()[0], 0.23076921701431274, 1e-6);
  EXPECT_NEAR(p1.grad().to_vector<float>()[1], 0.307692289352417, 1e-6);
  EXPECT_NEAR(p2.grad().to_vector<float>()[0], 0.923076868057251, 1e-6);
}

TEST(NnInit, FansGainsAndErrors) {
  auto [fan_in, fan_out] = nn::init::calculate_fan_in_and_fan_out(mg::empty({8, 16}));
  EXPECT_EQ(fan_in, 16);
  EXPECT_EQ(fan_out, 8);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("tanh"), 5.0 / 3);
  expect_error([] { nn::init::calculate_fan_in_and_fan_out(mg::empty({3})); },
               "calculate_fan_in_and_fan_out");
  expect_error([] { nn::init::uniform_(mg::empty({3}, mg::kInt64)); }, "uniform_");
  mg::Tensor z = nn::init::zeros_(mg::ones({2, 2}));
  EXPECT_EQ(z.sum().item<float>(), 0.0f);
}

TEST(NnLesson, BatchedQkvMatchesPyTorchScript) {
  // The lesson's batched Q/K/V script run by PyTorch 1.13:
  //   torch.manual_seed(0); x = torch.randn(2, 5, 16); W_q, W_k, W_v = nn.Linear(16, 8, bias=False)
  //   x3 out[0, 0] -> [-0.0350, -0.0014, 0.1600, -0.2461, 0.0553, 0.3443, -0.1172, 0.2469]
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({2, 5, 16});
  nn::Linear W_q(16, 8, false), W_k(16, 8, false), W_v(16, 8, false);
  mg::Tensor q = W_q(x), k = W_k(x), v = W_v(x);
  mg::Tensor weights = mg::softmax(mg::matmul(q, k.transpose(-2, -1)), -1);
  mg::Tensor out = mg::matmul(weights, v);
  std::vector<double> expected = {-0.0350, -0.0014, 0.1600,  -0.2461,
                                  0.0553,  0.3443,  -0.1172, 0.2469};
  auto got = out.select(0, 0).select(0, 0).to_vector<double>();
  for (std::size_t i = 0; i < 8; ++i) EXPECT_NEAR(got[i], expected[i], 5e-5) << i;
}
