// libtorch's smaller calls that a ported program reaches for (issue 37, item 6): the
// single-tensor and brace-list clip_grad_norm_ / clip_grad_value_, the ATen-level
// binary_cross_entropy and embedding with at::Reduction, libtorch 1.13's
// F::smooth_l1_loss(input, target, options, beta), and the samplers' save / load through
// archives under libtorch's keys. Expected values come from PyTorch 1.13 (/usr/bin/python3); the
// Python is beside each.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "documented_errors.h"
#include "minigrad/minigrad.h"
#include "nn/module_test_helpers.h"

namespace mg = minigrad;
namespace F = minigrad::nn::functional;
namespace samplers = minigrad::data::samplers;
using minigrad::testing::error_of;

namespace {

void expect_values(const mg::Tensor& t, const std::vector<double>& expected, double tol = 1e-6) {
  ASSERT_TRUE(t.defined());
  const std::vector<double> got = t.to(mg::kFloat64).contiguous().to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], tol) << i;
}

mg::Tensor with_grad(std::vector<float> value, std::vector<float> grad) {
  mg::Tensor p = mg::tensor(value).requires_grad_();
  p.set_grad(mg::tensor(grad));
  return p;
}

}  // namespace

// p = torch.tensor([3., -4.], requires_grad=True); p.grad = torch.tensor([3., -4.])
// torch.nn.utils.clip_grad_norm_(p, 1.0) -> 5.0, p.grad [0.5999999046325684, -0.7999998331069946]
// (norm_type=inf, max_norm 2.0) -> 4.0, [1.4999996423721313, -1.9999995231628418]
TEST(LibtorchSurface, ClipGradNormOfOneTensor) {
  mg::Tensor p = with_grad({3.f, -4.f}, {3.f, -4.f});
  mg::Tensor norm = mg::nn::utils::clip_grad_norm_(p, 1.0);
  EXPECT_NEAR(norm.item<double>(), 5.0, 1e-6);
  expect_values(p.grad(), {0.5999999046325684, -0.7999998331069946});
  mg::Tensor q = with_grad({3.f, -4.f}, {3.f, -4.f});
  norm = mg::nn::utils::clip_grad_norm_(q, 2.0, INFINITY);
  EXPECT_NEAR(norm.item<double>(), 4.0, 1e-6);
  expect_values(q.grad(), {1.4999996423721313, -1.9999995231628418});
  // error_if_nonfinite reaches the vector form.
  mg::Tensor r = with_grad({1.f}, {NAN});
  EXPECT_NE(error_of([&] { mg::nn::utils::clip_grad_norm_(r, 1.0, 2.0, true); }).find("non-finite"),
            std::string::npos);
}

// a.grad = [1., 2.], b.grad = [2.]; clip_grad_norm_([a, b], 1.5) -> 3.0,
// a.grad [0.4999998211860657, 0.9999996423721313], b.grad [0.9999996423721313]
// then a.grad = [1., -2.], b.grad = [2.]; clip_grad_value_([a, b], 1.5) -> [1.0, -1.5] [1.5]
// q.grad = [0.5, -2.5]; clip_grad_value_(q, 1.0) -> [0.5, -1.0]
TEST(LibtorchSurface, ClipGradBraceListsAndValue) {
  mg::Tensor a = with_grad({0.f, 0.f}, {1.f, 2.f});
  mg::Tensor b = with_grad({0.f}, {2.f});
  EXPECT_NEAR(mg::nn::utils::clip_grad_norm_({a, b}, 1.5).item<double>(), 3.0, 1e-6);
  expect_values(a.grad(), {0.4999998211860657, 0.9999996423721313});
  expect_values(b.grad(), {0.9999996423721313});
  a.set_grad(mg::tensor({1.f, -2.f}));
  b.set_grad(mg::tensor({2.f}));
  mg::nn::utils::clip_grad_value_({a, b}, 1.5);
  expect_values(a.grad(), {1.0, -1.5});
  expect_values(b.grad(), {1.5});
  mg::Tensor q = with_grad({1.f, 2.f}, {0.5f, -2.5f});
  mg::nn::utils::clip_grad_value_(q, 1.0);
  expect_values(q.grad(), {0.5, -1.0});
}

// x = torch.tensor([0.2, 0.7, 0.9], dtype=torch.float64, requires_grad=True)
// t = torch.tensor([0., 1., 1.], dtype=torch.float64); w = torch.tensor([1., 2., 0.5], ...)
// torch.ops.aten.binary_cross_entropy(x, t, w, r) for r = 0, 1, 2:
//   [0.2231435513142097, 0.7133498878774649, 0.05268025782891314], 0.32972456567352926,
//   0.9891736970205878; backward of r = 2: x.grad [1.25, -2.857142857142857, -0.5555555555555556]
// torch.ops.aten.binary_cross_entropy(x, t) -> 0.22839300363692283
TEST(LibtorchSurface, AtenBinaryCrossEntropy) {
  EXPECT_EQ(mg::Reduction::None, 0);
  EXPECT_EQ(mg::Reduction::Mean, 1);
  EXPECT_EQ(mg::Reduction::Sum, 2);
  // libtorch's torch::enumtype::reduction_get_enum(torch::kSum) == at::Reduction::Sum, and the
  // name the functional losses take.
  EXPECT_EQ(mg::enumtype::reduction_get_enum(mg::kNone), mg::Reduction::None);
  EXPECT_EQ(mg::enumtype::reduction_get_enum(mg::kMean), mg::Reduction::Mean);
  EXPECT_EQ(mg::enumtype::reduction_get_enum(mg::kSum), mg::Reduction::Sum);
  EXPECT_EQ(mg::nn::reduction_name(mg::kSum), "sum");
  mg::Tensor x = mg::tensor({0.2, 0.7, 0.9}, mg::kFloat64).requires_grad_();
  mg::Tensor t = mg::tensor({0., 1., 1.}, mg::kFloat64);
  mg::Tensor w = mg::tensor({1., 2., 0.5}, mg::kFloat64);
  expect_values(mg::binary_cross_entropy(x, t, w, mg::Reduction::None),
                {0.2231435513142097, 0.7133498878774649, 0.05268025782891314}, 1e-12);
  expect_values(mg::binary_cross_entropy(x, t, w, mg::Reduction::Mean), {0.32972456567352926},
                1e-12);
  mg::Tensor sum = mg::binary_cross_entropy(x, t, w, mg::Reduction::Sum);
  expect_values(sum, {0.9891736970205878}, 1e-12);
  sum.backward();
  expect_values(x.grad(), {1.25, -2.857142857142857, -0.5555555555555556}, 1e-12);
  expect_values(mg::binary_cross_entropy(x, t), {0.22839300363692283}, 1e-12);
  const std::string e = error_of([&] { mg::binary_cross_entropy(x, t, w, 3); });
  EXPECT_NE(e.find("[binary_cross_entropy]"), std::string::npos) << e;
  EXPECT_NE(e.find("3 is not a valid value for reduction"), std::string::npos) << e;
}

// W = torch.tensor([[1., 2.], [3., 4.], [5., 6.], [7., 8.]], requires_grad=True)
// out = torch.embedding(W, torch.tensor([[0, 2], [2, 3]]), 2, True, False)
//   -> [[[1, 2], [5, 6]], [[5, 6], [7, 8]]]
// (out * torch.tensor([1., 2.])).sum().backward(); W.grad -> [[1, 2], [0, 0], [0, 0], [1, 2]]
// torch.embedding(W, torch.tensor([0, 0, 1, 0]), -1, True, False), the same backward:
//   W.grad -> [[1, 2], [1, 2], [0, 0], [0, 0]]; with scale_grad_by_freq False: [[3, 6], [1, 2],
//   ...]
TEST(LibtorchSurface, AtenEmbedding) {
  auto table = [] { return mg::tensor({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}, {7.f, 8.f}}); };
  mg::Tensor W = table().requires_grad_();
  mg::Tensor idx = mg::tensor(std::vector<std::int64_t>{0, 2, 2, 3}).reshape({2, 2});
  mg::Tensor out = mg::embedding(W, idx, 2, true, false);
  expect_values(out, {1, 2, 5, 6, 5, 6, 7, 8});
  (out * mg::tensor({1.f, 2.f})).sum().backward();
  expect_values(W.grad(), {1, 2, 0, 0, 0, 0, 1, 2});

  mg::Tensor flat = mg::tensor(std::vector<std::int64_t>{0, 0, 1, 0});
  mg::Tensor V = table().requires_grad_();
  (mg::embedding(V, flat, -1, true) * mg::tensor({1.f, 2.f})).sum().backward();
  expect_values(V.grad(), {1, 2, 1, 2, 0, 0, 0, 0});
  mg::Tensor U = table().requires_grad_();
  (mg::embedding(U, flat, -1, false) * mg::tensor({1.f, 2.f})).sum().backward();
  expect_values(U.grad(), {3, 6, 1, 2, 0, 0, 0, 0});

  std::string e = error_of([&] { mg::embedding(W, idx, -1, false, /*sparse=*/true); });
  EXPECT_NE(e.find("[embedding] sparse=true is not supported"), std::string::npos) << e;
  EXPECT_NE(e.find("/*sparse=*/false"), std::string::npos) << e;
  e = error_of([&] { mg::embedding(W, idx, -2, false); });
  EXPECT_NE(e.find("padding_idx -2"), std::string::npos) << e;
  // F.embedding's order is unchanged: mg::embedding(indices, weight[, padding_idx]).
  expect_values(mg::embedding(idx, table(), 0), {1, 2, 5, 6, 5, 6, 7, 8});
}

// a = torch.tensor([0., 1., 3.]); b = torch.tensor([0.2, 2., 0.])
// F.smooth_l1_loss(a, b, reduction='sum', beta=0.5) -> 3.5399999618530273
TEST(LibtorchSurface, SmoothL1LossWithBetaApart) {
  mg::Tensor a = mg::tensor({0.f, 1.f, 3.f});
  mg::Tensor b = mg::tensor({0.2f, 2.f, 0.f});
  expect_values(F::smooth_l1_loss(a, b, F::SmoothL1LossFuncOptions(mg::kSum), 0.5),
                {3.5399999618530273});
  expect_values(F::smooth_l1_loss(a, b, F::SmoothL1LossFuncOptions(mg::kNone), 0.5),
                {0.04000000283122063, 0.75, 2.75});
  // The same beta in both places is accepted; two different ones are refused, not one ignored.
  expect_values(F::smooth_l1_loss(a, b, F::SmoothL1LossFuncOptions(mg::kSum).beta(0.5), 0.5),
                {3.5399999618530273});
  const std::string e =
      error_of([&] { F::smooth_l1_loss(a, b, F::SmoothL1LossFuncOptions().beta(0.3), 0.5); });
  EXPECT_NE(e.find("[smooth_l1_loss] expected beta not to be provided in 'options', but got 0.3"),
            std::string::npos)
      << e;
}

namespace {

std::vector<std::size_t> drain(samplers::Sampler& s, std::size_t batch) {
  std::vector<std::size_t> out;
  while (auto b = s.next(batch)) out.insert(out.end(), b->begin(), b->end());
  return out;
}

// What reading back the bytes out saves gives.
mg::serialize::InputArchive reread(const mg::serialize::OutputArchive& out) {
  std::stringstream bytes;
  out.save_to(bytes);
  mg::serialize::InputArchive in;
  in.load_from(bytes);
  return in;
}

// An archive holding one tensor under key.
mg::serialize::InputArchive archive_with(const char* key, const mg::Tensor& value) {
  mg::serialize::OutputArchive out;
  out.write(key, value);
  return reread(out);
}

template <typename Sampler>
mg::serialize::InputArchive round_trip(const Sampler& s,
                                       const std::vector<std::string>& expected_keys) {
  mg::serialize::OutputArchive out;
  out << s;
  EXPECT_EQ(out.keys(), expected_keys);
  return reread(out);
}

}  // namespace

// libtorch 1.13 torch/csrc/api/src/data/samplers/*.cpp write these keys (is_buffer), each an
// int64 tensor; libtorch's DataTest.SaveAndLoad* cases check that a loaded sampler continues.
TEST(LibtorchSurface, SamplersThroughArchives) {
  samplers::SequentialSampler seq(10);
  seq.next(3);
  auto in = round_trip(seq, {"index"});
  samplers::SequentialSampler seq2(10);
  in >> seq2;
  EXPECT_EQ(seq2.index(), 3u);
  EXPECT_EQ(drain(seq2, 4), (std::vector<std::size_t>{3, 4, 5, 6, 7, 8, 9}));

  mg::manual_seed(0);
  samplers::RandomSampler rnd(7);
  rnd.next(2);
  in = round_trip(rnd, {"index", "indices"});
  mg::manual_seed(1);
  samplers::RandomSampler rnd2(7);
  in >> rnd2;
  EXPECT_EQ(rnd2.index(), 2u);
  EXPECT_EQ(drain(rnd2, 3), drain(rnd, 3));

  samplers::DistributedRandomSampler dr(10, 2, 1);
  dr.set_epoch(3);
  dr.reset();
  dr.next(2);
  in = round_trip(dr, {"sample_index_", "epoch_"});
  samplers::DistributedRandomSampler dr2(10, 2, 1);
  in >> dr2;
  EXPECT_EQ(dr2.epoch(), 3u);
  EXPECT_EQ(dr2.index(), dr.index());
  EXPECT_EQ(drain(dr2, 2), drain(dr, 2));

  samplers::DistributedSequentialSampler ds(10, 2, 1);
  ds.next(4);
  in = round_trip(ds, {"sample_index_"});
  samplers::DistributedSequentialSampler ds2(10, 2, 1);
  in >> ds2;
  EXPECT_EQ(ds2.index(), 9u);
  EXPECT_EQ(drain(ds2, 5), (std::vector<std::size_t>{9}));

  samplers::StreamSampler st(10);
  st.next(4);
  in = round_trip(st, {"examples_retrieved_so_far"});
  samplers::StreamSampler st2(10);
  in >> st2;
  EXPECT_EQ(st2.index(), 4u);
  EXPECT_EQ(st2.next(100)->size(), 6u);
}

TEST(LibtorchSurface, SamplerArchivesAreChecked) {
  // A missing key names it in libtorch's words.
  mg::serialize::InputArchive in = archive_with("other", mg::tensor({1.0}));
  samplers::SequentialSampler seq(5);
  std::string e = error_of([&] { in >> seq; });
  EXPECT_NE(e.find("No such serialized tensor 'index'"), std::string::npos) << e;
  // A position past the sampler's end, and a float "index", are refused.
  samplers::SequentialSampler big(10);
  big.next(8);
  mg::serialize::InputArchive in2 = round_trip(big, {"index"});
  e = error_of([&] { in2 >> seq; });
  EXPECT_NE(e.find("the saved index 8 does not fit a sampler of 5 indices"), std::string::npos)
      << e;
  mg::serialize::InputArchive in3 = archive_with("index", mg::tensor({1.5}));
  e = error_of([&] { in3 >> seq; });
  EXPECT_NE(e.find("\"index\" must be one integer"), std::string::npos) << e;
  // mg::save / mg::load of a sampler, as torch::save / torch::load.
  std::stringstream file;
  mg::save(big, file);
  samplers::SequentialSampler loaded(10);
  mg::load(loaded, file);
  EXPECT_EQ(loaded.index(), 8u);
  // A sampler without archive support says so.
  samplers::TorchRandomSampler torch_random(3);
  mg::serialize::OutputArchive unused;
  e = error_of([&] { unused << torch_random; });
  EXPECT_NE(e.find("cannot be saved"), std::string::npos) << e;
}

// The rows of docs/errors.md these calls own, verbatim.
TEST(LibtorchSurface, DocumentedErrors) {
  minigrad_test::expect_documented_messages({
      {"losses", "smooth_l1_loss with beta in both places",
       [] {
         F::smooth_l1_loss(mg::ones({2}), mg::zeros({2}), F::SmoothL1LossFuncOptions().beta(0.3),
                           0.5);
       },
       "[smooth_l1_loss] expected beta not to be provided in 'options', but got 0.3 (and beta 0.5 "
       "as an argument): give beta once, in the options or as the argument"},
      {"losses", "ATen binary_cross_entropy with reduction 3",
       [] { mg::binary_cross_entropy(mg::full({2}, 0.5), mg::ones({2}), {}, 3); },
       "[binary_cross_entropy] 3 is not a valid value for reduction (expected Reduction::None (0), "
       "Reduction::Mean (1) or Reduction::Sum (2))"},
      {"losses", "ATen embedding with sparse=true",
       [] {
         mg::embedding(mg::ones({3, 2}), mg::zeros({2}, mg::kInt64), -1, false, true);
       },
       "[embedding] sparse=true is not supported (minigrad has no sparse tensors): call "
       "embedding(weight, indices, padding_idx, scale_grad_by_freq, /*sparse=*/false), whose "
       "dense gradient has the values of the sparse one's to_dense()"},
      {"data", "SequentialSampler(5) loaded at index 8",
       [] {
         samplers::SequentialSampler s(5);
         mg::serialize::InputArchive in = archive_with("index", mg::scalar_tensor(8, mg::kInt64));
         s.load(in);
       },
       "[SequentialSampler] the saved index 8 does not fit a sampler of 5 indices"},
      {"data", "a float \"index\"",
       [] {
         samplers::SequentialSampler s(5);
         mg::serialize::InputArchive in = archive_with("index", mg::tensor({1.5f}));
         s.load(in);
       },
       "[SequentialSampler] the archive's \"index\" must be one integer, got shape (1,) "
       "float32"},
  });
}
