// Small modules with libtorch-style options: Identity, Flatten, Unflatten, Softmax, LogSoftmax,
// SiLU, Mish, RMSNorm, Embedding's padding_idx and from_pretrained, and the inplace options.
// Expected values are literal numbers from PyTorch 1.13 (RMSNorm: PyTorch 2.4's formula computed
// in PyTorch 1.13); the Python is in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"
#include "module_test_helpers.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
using minigrad::testing::error_of;
using minigrad::testing::expect_near_all;
using minigrad::testing::repr;

namespace {

// x = torch.tensor([[-1.5, 0.25, 2.0], [0.5, -0.75, 3.0]])
mg::Tensor sample() { return mg::tensor({-1.5, 0.25, 2.0, 0.5, -0.75, 3.0}).reshape({2, 3}); }

}  // namespace

TEST(SmallModules, ReprAsPyTorch) {
  EXPECT_EQ(repr(nn::Identity()), "Identity()");
  EXPECT_EQ(repr(nn::Flatten()), "Flatten(start_dim=1, end_dim=-1)");
  EXPECT_EQ(repr(nn::Flatten(0, 1)), "Flatten(start_dim=0, end_dim=1)");
  EXPECT_EQ(repr(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(1))),
            "Flatten(start_dim=0, end_dim=1)");
  EXPECT_EQ(repr(nn::Unflatten(1, mg::Shape{2, 3})), "Unflatten(dim=1, unflattened_size=(2, 3))");
  EXPECT_EQ(repr(nn::Softmax(1)), "Softmax(dim=1)");
  EXPECT_EQ(repr(nn::LogSoftmax(nn::LogSoftmaxOptions(-1))), "LogSoftmax(dim=-1)");
  EXPECT_EQ(repr(nn::SiLU()), "SiLU()");
  EXPECT_EQ(repr(nn::Mish()), "Mish()");
  EXPECT_EQ(repr(nn::ReLU()), "ReLU()");
  EXPECT_EQ(repr(nn::ReLU(nn::ReLUOptions().inplace(true))), "ReLU(inplace=True)");
  EXPECT_EQ(repr(nn::Dropout(0.5, /*inplace=*/true)), "Dropout(p=0.5, inplace=True)");
  EXPECT_EQ(repr(nn::Dropout(nn::DropoutOptions().p(0.2))), "Dropout(p=0.2, inplace=False)");
  EXPECT_EQ(repr(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(0))),
            "Embedding(10, 3, padding_idx=0)");
  // nn.Embedding(10, 3, padding_idx=-1)
  EXPECT_EQ(repr(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(-1))),
            "Embedding(10, 3, padding_idx=9)");
  // torch.nn.RMSNorm (PyTorch 2.4): extra_repr '{normalized_shape}, eps={eps},
  // elementwise_affine={elementwise_affine}'
  EXPECT_EQ(repr(nn::RMSNorm(mg::Shape{4})), "RMSNorm((4,), eps=None, elementwise_affine=True)");
  EXPECT_EQ(repr(nn::RMSNorm(nn::RMSNormOptions({2, 3}).eps(1e-5).elementwise_affine(false))),
            "RMSNorm((2, 3), eps=1e-05, elementwise_affine=False)");
}

TEST(SmallModules, ActivationValues) {
  mg::Tensor x = sample();
  // nn.SiLU()(x).flatten().tolist()
  expect_near_all(nn::SiLU()(x),
                  {-0.2736382782459259, 0.140544131398201, 1.7615940570831299, 0.3112296760082245,
                   -0.24061596393585205, 2.857722520828247},
                  1e-6);
  // nn.Mish()(x).flatten().tolist()
  expect_near_all(nn::Mish()(x),
                  {-0.2980997562408447, 0.1695723980665207, 1.9439589977264404, 0.37524524331092834,
                   -0.27649474143981934, 2.98653507232666},
                  1e-6);
  // nn.Softmax(dim=1)(x).flatten().tolist()
  expect_near_all(nn::Softmax(1)(x),
                  {0.02508147992193699, 0.14433394372463226, 0.8305845260620117,
                   0.07424457371234894, 0.02127142623066902, 0.9044840335845947},
                  1e-6);
  // nn.LogSoftmax(dim=0)(x).flatten().tolist()
  expect_near_all(nn::LogSoftmax(0)(x),
                  {-2.1269280910491943, -0.31326165795326233, -1.31326162815094,
                   -0.12692804634571075, -1.31326162815094, -0.31326165795326233},
                  1e-6);
  EXPECT_TRUE(nn::Identity()(x).is_same(x));
  EXPECT_EQ(nn::functional::silu(x).shape(), x.shape());
}

TEST(SmallModules, FlattenAndUnflattenShapes) {
  mg::Tensor x = mg::zeros({2, 3, 4, 5});
  // nn.Flatten()(x).shape, nn.Flatten(0, 1)(x).shape, nn.Flatten(-2, -1)(x).shape
  EXPECT_EQ(nn::Flatten()(x).shape(), (mg::Shape{2, 60}));
  EXPECT_EQ(nn::Flatten(0, 1)(x).shape(), (mg::Shape{6, 4, 5}));
  EXPECT_EQ(nn::Flatten(nn::FlattenOptions().start_dim(-2))(x).shape(), (mg::Shape{2, 3, 20}));
  // nn.Unflatten(1, (2, -1))(torch.zeros(2, 6, 5)).shape; nn.Unflatten(-1, (5, 1))(...).shape
  mg::Tensor y = mg::arange(60).reshape({2, 6, 5});
  EXPECT_EQ(nn::Unflatten(1, mg::Shape{2, -1})(y).shape(), (mg::Shape{2, 2, 3, 5}));
  EXPECT_EQ(nn::Unflatten(nn::UnflattenOptions(-1, {5, 1}))(y).shape(), (mg::Shape{2, 6, 5, 1}));
  EXPECT_TRUE(mg::equal(nn::Unflatten(1, mg::Shape{2, 3})(y).flatten(), y.flatten()));
  // nn.Unflatten(1, (4, 2))(torch.zeros(2, 6)): "unflatten: Provided sizes [4, 2] don't multiply
  // up to the size of dim 1 (6) in the input tensor"
  EXPECT_EQ(error_of([] {
              nn::Unflatten(1, mg::Shape{4, 2})(mg::zeros({2, 6}));
            }),
            "[Unflatten] sizes (4, 2) do not multiply to the size of dim 1 (6) of the input of "
            "shape (2, 6)");
}

TEST(SmallModules, InplaceReLUAndDropout) {
  // a = torch.tensor([-1., 2., -3.], requires_grad=True); b = a * 2
  // r = nn.ReLU(inplace=True)(b); b.tolist(), r is b
  // (r * torch.tensor([1., 2., 3.])).sum().backward(); a.grad.tolist()  -> [0.0, 4.0, 0.0]
  mg::Tensor a = mg::tensor({-1.0, 2.0, -3.0}).requires_grad_();
  mg::Tensor b = a * 2;
  mg::Tensor r = nn::ReLU(true)(b);
  EXPECT_TRUE(r.is_same(b));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0.0f, 4.0f, 0.0f}));
  (r * mg::tensor({1.0, 2.0, 3.0})).sum().backward();
  EXPECT_EQ(a.grad().to_vector<float>(), (std::vector<float>{0.0f, 4.0f, 0.0f}));
  // c = torch.ones(3); d = nn.Dropout(1.0, inplace=True)(c); c.tolist(), d is c
  mg::Tensor c = mg::ones({3});
  mg::Tensor d = nn::Dropout(nn::DropoutOptions(1.0).inplace(true))(c);
  EXPECT_TRUE(d.is_same(c));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0.0f, 0.0f, 0.0f}));
  // In eval mode, or in place with p = 0.5: half the elements kept, doubled, in c itself.
  nn::Dropout half(0.5, true);
  mg::manual_seed(0);
  mg::Tensor e = mg::ones({1000});
  half(e);
  double kept = (e == 2.0).sum().item<double>();
  EXPECT_EQ((e == 0.0).sum().item<double>() + kept, 1000.0);
  EXPECT_GT(kept, 400.0);
  EXPECT_LT(kept, 600.0);
  half->eval();
  mg::Tensor f = mg::ones({2});
  EXPECT_TRUE(half(f).is_same(f));
}

TEST(SmallModules, InplaceSiLUAndMish) {
  // for M in (nn.SiLU, nn.Mish):
  //   a = torch.tensor([-1., 2., -3.], requires_grad=True); b = a * 2
  //   r = M(inplace=True)(b); r.sum().backward(); b.tolist(), a.grad.tolist()
  EXPECT_EQ(repr(nn::SiLU(true)), "SiLU(inplace=True)");
  EXPECT_EQ(repr(nn::Mish(true)), "Mish(inplace=True)");
  struct Expected {
    std::vector<double> out, grad;
  };
  auto check = [](const auto& module, const Expected& expected) {
    mg::Tensor a = mg::tensor({-1.0, 2.0, -3.0}).requires_grad_();
    mg::Tensor b = a * 2;
    mg::Tensor r = module(b);
    EXPECT_TRUE(r.is_same(b));
    expect_near_all(b, expected.out, 1e-6);
    r.sum().backward();
    expect_near_all(a.grad(), expected.grad, 1e-6);
  };
  check(nn::SiLU(true), {{-0.23840583860874176, 3.9280550479888916, -0.014835738576948643},
                         {-0.18156850337982178, 2.1053292751312256, -0.024652862921357155}});
  check(nn::Mish(true), {{-0.2525014579296112, 3.997412919998169, -0.014854080975055695},
                         {-0.21671020984649658, 2.0088653564453125, -0.024719933047890663}});
}

TEST(SmallModules, EmbeddingPaddingIdx) {
  // torch.manual_seed(0); e = nn.Embedding(4, 2, padding_idx=1); e.weight.flatten().tolist()
  mg::manual_seed(0);
  nn::Embedding e(nn::EmbeddingOptions(4, 2).padding_idx(1));
  EXPECT_EQ(e->weight.to_vector<float>(),
            (std::vector<float>{1.5409960746765137f, -0.293428897857666f, 0.0f, 0.0f,
                                -1.0845223665237427f, -1.3985954523086548f, 0.40334683656692505f,
                                0.8380263447761536f}));
  // idx = torch.tensor([[1, 2], [1, 3]])
  // (e(idx) * torch.arange(8.).reshape(2, 2, 2)).sum().backward(); e.weight.grad.flatten()
  mg::Tensor idx = mg::tensor({1.0, 2.0, 1.0, 3.0}, {2, 2}, mg::kInt64);
  (e(idx) * mg::arange(8).to(mg::kFloat32).reshape({2, 2, 2})).sum().backward();
  EXPECT_EQ(e->weight.grad().to_vector<float>(),
            (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 2.0f, 3.0f, 6.0f, 7.0f}));
  EXPECT_EQ(error_of([] { nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)); }),
            "[Embedding] padding_idx 4 is out of range for 4 embeddings (expected a value in "
            "[-4, 4))");
  // A clone keeps padding_idx.
  auto copy = std::dynamic_pointer_cast<nn::EmbeddingImpl>(e->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->padding_idx, 1);
  EXPECT_TRUE(mg::equal(copy->weight, e->weight));
}

TEST(SmallModules, EmbeddingFromPretrained) {
  // w = torch.tensor([[1., 2.], [3., 4.], [5., 6.]]); fp = nn.Embedding.from_pretrained(w)
  // fp.weight.requires_grad, fp, fp.weight.data_ptr() == w.data_ptr()  -> False, Embedding(3, 2),
  // True
  mg::Tensor w = mg::tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).reshape({3, 2});
  mg::manual_seed(3);
  mg::Tensor next = mg::randn({2});
  mg::manual_seed(3);
  nn::Embedding fp = nn::Embedding::from_pretrained(w);
  EXPECT_TRUE(mg::equal(mg::randn({2}), next));  // nothing drawn
  EXPECT_FALSE(fp->weight.requires_grad());
  EXPECT_EQ(repr(fp), "Embedding(3, 2)");
  EXPECT_EQ(fp->weight.data_ptr<float>(), w.data_ptr<float>());
  // fp2 = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=0)
  // (fp2(torch.tensor([0, 2, 0])) * torch.tensor([[1., 2.], [3., 4.], [5., 6.]])).sum().backward()
  // fp2.weight.grad.flatten().tolist(), fp2  -> [0, 0, 0, 0, 3, 4], Embedding(3, 2, padding_idx=0)
  nn::Embedding fp2 = nn::Embedding::from_pretrained(w.clone(), /*freeze=*/false, 0);
  EXPECT_TRUE(fp2->weight.requires_grad());
  EXPECT_EQ(fp2->weight.to_vector<float>(), w.to_vector<float>());  // the row is not zeroed
  mg::Tensor idx = mg::tensor({0.0, 2.0, 0.0}, {3}, mg::kInt64);
  (fp2(idx) * w).sum().backward();
  EXPECT_EQ(fp2->weight.grad().to_vector<float>(),
            (std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 3.0f, 4.0f}));
  EXPECT_EQ(repr(fp2), "Embedding(3, 2, padding_idx=0)");
  nn::Embedding fp3 = nn::Embedding::from_pretrained(
      w, nn::EmbeddingFromPretrainedOptions().freeze(false).padding_idx(-1));
  EXPECT_EQ(fp3->padding_idx, 2);
  EXPECT_EQ(error_of([] { nn::Embedding::from_pretrained(mg::ones({3})); }),
            "[Embedding.from_pretrained] embeddings must be 2-D [num_embeddings, embedding_dim], "
            "got (3,)");
}

TEST(SmallModules, RMSNormValuesAndGradients) {
  // PyTorch 2.4's RMSNorm formula, in PyTorch 1.13:
  // x = torch.tensor([[1., -2., 3., 0.5], [0.1, 0.2, -0.3, 0.4]], dtype=torch.float64,
  //                  requires_grad=True)
  // w = torch.tensor([1., 0.5, 2., -1.], dtype=torch.float64, requires_grad=True)
  // y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch.finfo(torch.float64).eps) * w
  // (y * torch.arange(8., dtype=torch.float64).reshape(2, 4)).sum().backward()
  nn::RMSNorm norm(nn::RMSNormOptions({4}), mg::kFloat64);
  {
    mg::NoGradGuard no_grad;
    norm->weight.copy_(mg::tensor({1.0, 0.5, 2.0, -1.0}, mg::kFloat64));
  }
  mg::Tensor x =
      mg::tensor({1.0, -2.0, 3.0, 0.5, 0.1, 0.2, -0.3, 0.4}, {2, 4}, mg::kFloat64).requires_grad_();
  mg::Tensor y = norm(x);
  expect_near_all(
      y,
      {0.5298129428260175, -0.5298129428260175, 3.1788776569561055, -0.26490647141300877,
       0.3651483716701102, 0.3651483716701102, -2.190890230020661, -1.4605934866804409},
      1e-12);
  (y * mg::arange(8).to(mg::kFloat64).reshape({2, 4})).sum().backward();
  expect_near_all(x.grad(),
                  {-0.3532086285506784, 0.9713237285143657, 1.0596258856520349, -1.766043142753392,
                   21.300321680756408, 22.517482919656754, 23.734644158557227, 1.2171612389002853},
                  1e-10);
  expect_near_all(norm->weight.grad(),
                  {1.4605934866804409, 2.591857831049067, -3.3937930331058777, 11.018873821002112},
                  1e-10);
  // float32, eps None -> finfo(float32).eps, and eps 1e-3:
  // x32 = torch.tensor([[1e-4, -2e-4]]); x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + e)
  mg::Tensor x32 = mg::tensor({1e-4, -2e-4}).reshape({1, 2});
  nn::RMSNorm plain(nn::RMSNormOptions({2}).elementwise_affine(false));
  EXPECT_FALSE(plain->weight.defined());
  EXPECT_TRUE(plain->parameters().empty());
  expect_near_all(plain(x32), {0.2633318603038788, -0.5266637206077576}, 1e-6);
  expect_near_all(nn::functional::rms_norm(x32, {2}, mg::Tensor(), 1e-3),
                  {0.0031622378155589104, -0.006324475631117821}, 1e-8);
  EXPECT_EQ(error_of([&] {
              norm(mg::ones({2, 3}, mg::kFloat64));
            }),
            "[rms_norm] normalized_shape is (4,) but the input has shape (2, 3): its last 1 dims "
            "must equal it");
}

TEST(SmallModules, ClonesKeepTheirOptions) {
  auto flat = std::dynamic_pointer_cast<nn::FlattenImpl>(nn::Flatten(0, 2)->clone());
  ASSERT_NE(flat, nullptr);
  EXPECT_EQ(flat->options.end_dim(), 2);
  auto sm = std::dynamic_pointer_cast<nn::SoftmaxImpl>(nn::Softmax(0)->clone());
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(sm->options.dim(), 0);
  auto relu = std::dynamic_pointer_cast<nn::ReLUImpl>(nn::ReLU(true)->clone());
  ASSERT_NE(relu, nullptr);
  EXPECT_TRUE(relu->inplace);
  auto norm = std::dynamic_pointer_cast<nn::RMSNormImpl>(
      nn::RMSNorm(nn::RMSNormOptions({3}).eps(0.5))->clone());
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->options.eps(), 0.5);
}
