// The activation modules of nn/activation.h and their functional forms: values, gradients at the
// kinks, printing, options and inplace, against PyTorch 1.13 (every expected value printed by
// /usr/bin/python3 with torch.nn; the op table gradchecks the ops themselves).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;

namespace {

void expect_values(const mg::Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

mg::Tensor input() { return mg::tensor({-3.0, -1.0, 0.0, 0.5, 3.0}, mg::kFloat32); }

TEST(Activation, ModulesComputeAndPrintAsPyTorch) {
  nn::ELU elu;
  EXPECT_EQ(repr(*elu), "ELU(alpha=1.0)");
  expect_values(elu(input()), {-0.9502129554748535, -0.6321205496788025, 0.0, 0.5, 3.0});
  nn::ELU elu_half(nn::ELUOptions().alpha(0.5));
  EXPECT_EQ(repr(*elu_half), "ELU(alpha=0.5)");
  expect_values(elu_half(input()), {-0.47510647773742676, -0.31606027483940125, 0.0, 0.5, 3.0});
  nn::SELU selu;
  EXPECT_EQ(repr(*selu), "SELU()");
  expect_values(selu(input()), {-1.6705687046051025, -1.1113307476043701, 0.0, 0.5253505110740662,
                                3.1521029472351074});
  nn::CELU celu(nn::CELUOptions().alpha(2.0));
  EXPECT_EQ(repr(*celu), "CELU(alpha=2.0)");
  expect_values(celu(input()), {-1.5537396669387817, -0.7869386672973633, 0.0, 0.5, 3.0});
  nn::LeakyReLU leaky(nn::LeakyReLUOptions().negative_slope(0.2));
  EXPECT_EQ(repr(*leaky), "LeakyReLU(negative_slope=0.2)");
  EXPECT_EQ(repr(*nn::LeakyReLU()), "LeakyReLU(negative_slope=0.01)");
  expect_values(leaky(input()), {-0.6000000238418579, -0.20000000298023224, 0.0, 0.5, 3.0});
  nn::Hardtanh hardtanh(nn::HardtanhOptions().min_val(-2.0).max_val(2.0));
  EXPECT_EQ(repr(*hardtanh), "Hardtanh(min_val=-2.0, max_val=2.0)");
  EXPECT_EQ(repr(*nn::Hardtanh()), "Hardtanh(min_val=-1.0, max_val=1.0)");
  expect_values(hardtanh(input()), {-2.0, -1.0, 0.0, 0.5, 2.0});
  EXPECT_EQ(repr(*nn::Softplus()), "Softplus(beta=1, threshold=20)");
  nn::Softplus softplus(nn::SoftplusOptions().beta(2.0).threshold(1.0));
  expect_values(softplus(input()), {0.0012378426035866141, 0.06346400082111359, 0.3465735912322998,
                                    0.65663081407547, 3.0});
  nn::Hardsigmoid hardsigmoid;
  EXPECT_EQ(repr(*hardsigmoid), "Hardsigmoid()");
  expect_values(hardsigmoid(input()), {0.0, 0.3333333432674408, 0.5, 0.5833333134651184, 1.0});
  nn::Hardswish hardswish;
  EXPECT_EQ(repr(*hardswish), "Hardswish()");
  expect_values(hardswish(input()), {-0.0, -0.3333333432674408, 0.0, 0.2916666567325592, 3.0});
  nn::LogSigmoid logsigmoid;
  EXPECT_EQ(repr(*logsigmoid), "LogSigmoid()");
  expect_values(logsigmoid(input()), {-3.0485873222351074, -1.3132617473602295, -0.6931471824645996,
                                      -0.4740769863128662, -0.04858735203742981});
  nn::Softsign softsign;
  EXPECT_EQ(repr(*softsign), "Softsign()");
  expect_values(softsign(input()), {-0.75, -0.5, 0.0, 0.3333333432674408, 0.75});
  nn::Softmin softmin(0);
  EXPECT_EQ(repr(*softmin), "Softmin(dim=0)");
  expect_values(softmin(input()), {0.8211539387702942, 0.11113110184669495, 0.04088284447789192,
                                   0.024796700105071068, 0.0020354371517896652});
}

TEST(Activation, InplaceOptionsWriteTheInputAndPrint) {
  nn::ELU elu(nn::ELUOptions().alpha(0.5).inplace(true));
  EXPECT_EQ(repr(*elu), "ELU(alpha=0.5, inplace=True)");
  mg::Tensor x = input();
  mg::Tensor y = elu(x);
  EXPECT_TRUE(y.is_same(x));
  expect_values(x, {-0.47510647773742676, -0.31606027483940125, 0.0, 0.5, 3.0});
  EXPECT_EQ(repr(*nn::SELU(nn::SELUOptions().inplace(true))), "SELU(inplace=True)");
  EXPECT_EQ(repr(*nn::CELU(nn::CELUOptions().alpha(2.0).inplace(true))),
            "CELU(alpha=2.0, inplace=True)");
  EXPECT_EQ(repr(*nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true))),
            "LeakyReLU(negative_slope=0.2, inplace=True)");
  EXPECT_EQ(repr(*nn::Hardtanh(nn::HardtanhOptions().inplace(true))),
            "Hardtanh(min_val=-1.0, max_val=1.0, inplace=True)");
  // Hardsigmoid and Hardswish do not print inplace, as PyTorch.
  EXPECT_EQ(repr(*nn::Hardswish(true)), "Hardswish()");
  mg::Tensor z = input();
  nn::Hardswish(true)(z);
  expect_values(z, {-0.0, -0.3333333432674408, 0.0, 0.2916666567325592, 3.0});
  z = input();
  F::leaky_relu(z, F::LeakyReLUFuncOptions().negative_slope(0.2).inplace(true));
  expect_values(z, {-0.6000000238418579, -0.20000000298023224, 0.0, 0.5, 3.0});
  z = input();
  F::hardtanh(z, F::HardtanhFuncOptions().inplace(true));
  expect_values(z, {-1.0, -1.0, 0.0, 0.5, 1.0});
  // In place on a non-leaf records the op's node, as PyTorch.
  mg::Tensor leaf = input().requires_grad_();
  mg::Tensor h = leaf * 1;
  F::elu(h, F::ELUFuncOptions().inplace(true));
  EXPECT_EQ(h.grad_fn()->name(), "EluBackward0");
}

TEST(Activation, GradientsAtTheKinksAsPyTorch) {
  mg::Tensor x = mg::tensor({-3.0, -1.0, 0.0, 1.0, 3.0}, mg::kFloat64);
  auto grad = [&](auto f) {
    mg::Tensor xs = x.detach().requires_grad_();
    f(xs).sum().backward();
    return xs.grad();
  };
  expect_values(grad([](const mg::Tensor& t) { return F::elu(t); }),
                {0.049787068367863944, 0.36787944117144233, 1.0, 1.0, 1.0}, 1e-12);
  expect_values(grad([](const mg::Tensor& t) { return F::selu(t); }),
                {0.08753061208026487, 0.646768603034814, 1.7580993408473766, 1.0507009873554805,
                 1.0507009873554805},
                1e-12);
  expect_values(grad([](const mg::Tensor& t) { return F::celu(t, F::CELUFuncOptions().alpha(2)); }),
                {0.22313016014842982, 0.6065306597126334, 1.0, 1.0, 1.0}, 1e-12);
  expect_values(grad([](const mg::Tensor& t) { return F::leaky_relu(t); }),
                {0.01, 0.01, 0.01, 1.0, 1.0}, 1e-12);
  expect_values(grad([](const mg::Tensor& t) { return F::hardtanh(t); }), {0, 0, 1, 0, 0}, 1e-12);
  // 1/6 rounded to float32 (0.1666666716337204) also in float64, as PyTorch's kernel.
  expect_values(grad([](const mg::Tensor& t) { return F::hardsigmoid(t); }),
                {0.0, 0.1666666716337204, 0.1666666716337204, 0.1666666716337204, 0.0}, 1e-15);
  expect_values(grad([](const mg::Tensor& t) { return F::hardswish(t); }),
                {-0.5, 0.16666666666666669, 0.5, 0.8333333333333333, 1.5}, 1e-12);
  expect_values(grad([](const mg::Tensor& t) {
                  return F::softplus(t, F::SoftplusFuncOptions().beta(2).threshold(1));
                }),
                {0.0024726231566347748, 0.11920292202211755, 0.5, 1.0, 1.0}, 1e-12);
}

TEST(Activation, LargeInputsDoNotOverflow) {
  expect_values(F::softplus(mg::tensor({100.0}, mg::kFloat32)), {100.0});
  expect_values(F::logsigmoid(mg::tensor({-100.0, 100.0}, mg::kFloat32)), {-100.0, 0.0});
  expect_values(F::elu(mg::tensor({-100.0}, mg::kFloat32)), {-1.0});
}

TEST(Activation, BadInputsGiveTheirDocumentedMessages) {
  minigrad_test::expect_documented_messages({
      {"activation", "Hardtanh with max_val <= min_val",
       [] { nn::Hardtanh(nn::HardtanhOptions().min_val(1).max_val(-1)); },
       "[Hardtanh] max_val must be greater than min_val, got min_val=1.0 and max_val=-1.0"},
      {"activation", "F::celu with alpha 0",
       [] { F::celu(input(), F::CELUFuncOptions().alpha(0)); },
       "[celu] alpha cannot be 0 (ZeroDivisionError)"},
      {"activation", "hardtanh of a bool tensor",
       [] {
         mg::hardtanh(mg::tensor({1.0, 0.0}, mg::kBool));
       },
       "[hardtanh] bool inputs not supported for hardtanh"},
  });
  EXPECT_THROW(F::elu(mg::tensor({1.0}, mg::kInt64)), mg::Error);
}

TEST(Activation, ClonesKeepTheirOptions) {
  nn::ELU elu(nn::ELUOptions().alpha(0.5).inplace(true));
  auto copy = std::dynamic_pointer_cast<nn::ELUImpl>(elu->clone());
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->options.alpha(), 0.5);
  EXPECT_TRUE(copy->options.inplace());
  nn::Sequential seq{nn::Linear(3, 4), nn::LeakyReLU(), nn::Softplus(), nn::Softmin(1)};
  EXPECT_EQ(seq->forward(mg::ones({2, 3})).shape(), (mg::Shape{2, 4}));
}

}  // namespace
