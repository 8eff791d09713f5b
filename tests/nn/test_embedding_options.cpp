// nn::Embedding's max_norm, norm_type and scale_grad_by_freq, against PyTorch 1.13 (the Python
// that printed each expected value is in the comments).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {

void expect_near(const mg::Tensor& t, const std::vector<double>& expected) {
  const std::vector<double> got = t.contiguous().to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << i;
}

// w = torch.tensor([[3., 4.], [0.3, 0.4], [1., -2.], [6., 8.]])
// idx = torch.tensor([[0, 1], [0, 2]])
mg::Tensor table() { return mg::tensor({3.0, 4.0, 0.3, 0.4, 1.0, -2.0, 6.0, 8.0}, {4, 2}); }
mg::Tensor batch() { return mg::tensor({0.0, 1.0, 0.0, 2.0}, {2, 2}, mg::kInt64); }

std::string repr(const nn::Embedding& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

// e = torch.nn.Embedding.from_pretrained(w.clone(), freeze=False, max_norm=2.0); out = e(idx)
// out -> [1.2, 1.6, 0.3, 0.4, 1.2, 1.6, 0.8944271206855774, -1.7888542413711548]
// e.weight -> [1.2, 1.6, 0.3, 0.4, 0.8944271206855774, -1.7888542413711548, 6.0, 8.0]
// (row 3 is not looked up: it keeps its norm 10); print(e) -> Embedding(4, 2, max_norm=2.0)
TEST(EmbeddingOptions, MaxNormRenormalisesLookedUpRowsInPlace) {
  auto e = nn::Embedding::from_pretrained(
      table(), nn::EmbeddingFromPretrainedOptions().freeze(false).max_norm(2.0));
  expect_near(e(batch()), {1.2, 1.6, 0.3, 0.4, 1.2, 1.6, 0.8944271206855774, -1.7888542413711548});
  expect_near(e->weight, {1.2, 1.6, 0.3, 0.4, 0.8944271206855774, -1.7888542413711548, 6.0, 8.0});
  EXPECT_EQ(repr(e), "Embedding(4, 2, max_norm=2.0)");
}

// e2 = torch.nn.Embedding.from_pretrained(w.clone(), freeze=False, max_norm=1.5, norm_type=1.0)
// e2(idx) -> [0.6428571343421936, 0.8571428656578064, 0.3, 0.4, 0.6428571343421936,
//             0.8571428656578064, 0.4999999701976776, -0.9999999403953552]
// print(e2) -> Embedding(4, 2, max_norm=1.5, norm_type=1.0)
TEST(EmbeddingOptions, NormType) {
  nn::Embedding e(nn::EmbeddingOptions(4, 2)._weight(table()).max_norm(1.5).norm_type(1.0));
  expect_near(e(batch()), {0.6428571343421936, 0.8571428656578064, 0.3, 0.4, 0.6428571343421936,
                           0.8571428656578064, 0.4999999701976776, -0.9999999403953552});
  EXPECT_EQ(repr(e), "Embedding(4, 2, max_norm=1.5, norm_type=1.0)");
}

// e3 = torch.nn.Embedding.from_pretrained(w.clone(), freeze=False, scale_grad_by_freq=True)
// (e3(idx) * torch.arange(8.).reshape(2, 2, 2)).sum().backward(); e3.weight.grad
// -> [2.0, 3.0, 2.0, 3.0, 6.0, 7.0, 0.0, 0.0]; print(e3) -> Embedding(4, 2,
// scale_grad_by_freq=True)
TEST(EmbeddingOptions, ScaleGradByFreq) {
  nn::Embedding e(nn::EmbeddingOptions(4, 2)._weight(table()).scale_grad_by_freq(true));
  (e(batch()) * mg::arange(0.0, 8.0, 1.0).reshape({2, 2, 2})).sum().backward();
  expect_near(e->weight.grad(), {2.0, 3.0, 2.0, 3.0, 6.0, 7.0, 0.0, 0.0});
  EXPECT_EQ(repr(e), "Embedding(4, 2, scale_grad_by_freq=True)");
  // The clone keeps the options.
  auto copy = std::dynamic_pointer_cast<nn::EmbeddingImpl>(e->clone());
  EXPECT_TRUE(copy->scale_grad_by_freq);
}

// PyTorch 1.13 accepts a negative max_norm and flips every looked-up row (Embedding(4, 2,
// max_norm=-1.0)(torch.tensor([0])) has norm 1, pointing the other way): refused here.
TEST(EmbeddingOptions, NegativeMaxNormGivesItsDocumentedMessage) {
  minigrad_test::expect_documented_messages({
      {"modules", "Embedding with a negative max_norm",
       [] { nn::Embedding(nn::EmbeddingOptions(4, 2).max_norm(-1.0)); },
       "[Embedding] max_norm must be non-negative, got -1.0"},
  });
}

}  // namespace
