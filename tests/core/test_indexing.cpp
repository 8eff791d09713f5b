// Tensor::index / index_put_ as libtorch's, beyond the op table's gradchecks and values: which
// results are views, the writes without autograd, the error messages. Expected values come from
// PyTorch 1.13 (the Python line is in a comment).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <sstream>
#include <vector>

#include "core/test_util.h"

namespace mg = minigrad;
using minigrad::testing::error_of;
using namespace mg::indexing;

namespace {

mg::Tensor iota(const mg::Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return mg::arange(0.0, static_cast<double>(n), 1.0, mg::kFloat32).reshape(shape);
}

mg::Tensor longs(std::vector<std::int64_t> v) {
  return mg::tensor(std::vector<double>(v.begin(), v.end()), {static_cast<std::int64_t>(v.size())},
                    mg::kInt64);
}

}  // namespace

TEST(Indexing, BasicIndicesAreViewsWithPyTorchsStrides) {
  // x = torch.arange(24.).view(2, 3, 4); v = x[:, 1::2, ::3]
  // v.shape, v.stride(), v.storage_offset() -> (2, 1, 2) (12, 8, 3) 4
  mg::Tensor x = iota({2, 3, 4});
  mg::Tensor v = x.index({Slice(), Slice(1, None, 2), Slice(None, None, 3)});
  EXPECT_EQ(v.shape(), (mg::Shape{2, 1, 2}));
  EXPECT_EQ(v.strides(), (mg::Shape{12, 8, 3}));
  EXPECT_EQ(v.storage_offset(), 4);
  EXPECT_TRUE(v.is_alias_of(x));
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{4, 7, 16, 19}));
  // x[None, ..., 0].shape -> (1, 2, 3); x[..., None].shape -> (2, 3, 4, 1)
  EXPECT_EQ(x.index({None, Ellipsis, 0}).shape(), (mg::Shape{1, 2, 3}));
  EXPECT_EQ(x.index({"...", None}).shape(), (mg::Shape{2, 3, 4, 1}));
  // x[-5:10] clamps; x[:, 2:1] is empty
  EXPECT_EQ(x.index({Slice(), Slice(-5, 10)}).shape(), (mg::Shape{2, 3, 4}));
  EXPECT_EQ(x.index({Slice(), Slice(2, 1)}).shape(), (mg::Shape{2, 0, 4}));
  // x[...] is a new view (PyTorch's alias), not x itself.
  mg::Tensor a = x.index({Ellipsis});
  EXPECT_FALSE(a.is_same(x));
  EXPECT_TRUE(a.is_alias_of(x));
  // A write through a view reaches x.
  x.index({1, Slice(), 0}).fill_(-1.0);
  EXPECT_EQ(x.index({1, Slice(), 0}).to_vector<float>(), (std::vector<float>{-1, -1, -1}));
}

TEST(Indexing, AdvancedIndexingCopiesWithPyTorchsPlacement) {
  mg::Tensor x = iota({2, 3, 4});
  mg::Tensor i = longs({0, 1});
  // x[:, i, :][0] -> [[0, 1, 2, 3], [4, 5, 6, 7]]; x[i, :, i].shape -> (2, 3)
  // x[:, i, i].shape -> (2, 2); x[i, None, i].shape -> (2, 1, 4)
  mg::Tensor r = x.index({Slice(), i, Slice()});
  EXPECT_FALSE(r.is_alias_of(x));
  EXPECT_EQ(r.index({0}).to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(x.index({i, Slice(), i}).shape(), (mg::Shape{2, 3}));
  EXPECT_EQ(x.index({Slice(), i, i}).shape(), (mg::Shape{2, 2}));
  EXPECT_EQ(x.index({i, None, i}).shape(), (mg::Shape{2, 1, 4}));
  // x[True].shape -> (1, 2, 3, 4); x[False].shape -> (0, 2, 3, 4)
  EXPECT_EQ(x.index({true}).shape(), (mg::Shape{1, 2, 3, 4}));
  EXPECT_EQ(x.index({false}).shape(), (mg::Shape{0, 2, 3, 4}));
  // x[torch.tensor(1)].shape -> (3, 4) (a 0-dim int64 tensor selects);
  // x[torch.tensor(True)].shape -> (1, 2, 3, 4)
  EXPECT_EQ(x.index({mg::scalar_tensor(1, mg::kInt64)}).shape(), (mg::Shape{3, 4}));
  EXPECT_EQ(x.index({mg::scalar_tensor(true, mg::kBool)}).shape(), (mg::Shape{1, 2, 3, 4}));
  // m = [[T, F, T], [F, T, F]]; x[m].shape -> (3, 4); x[1:3, m[0]].shape -> (1, 2, 4)
  mg::Tensor m = mg::tensor({1.0, 0.0, 1.0, 0.0, 1.0, 0.0}, {2, 3}, mg::kBool);
  EXPECT_EQ(x.index({m}).shape(), (mg::Shape{3, 4}));
  EXPECT_EQ(x.index({m}).index({Slice(), 0}).to_vector<float>(), (std::vector<float>{0, 8, 16}));
  EXPECT_EQ(x.index({Slice(1, 3), m[0]}).shape(), (mg::Shape{1, 2, 4}));
}

TEST(Indexing, OperatorBracketsAsLibtorchs) {
  // w = torch.arange(6.).view(2, 3); w[1][2] -> 5; w[torch.tensor([1])].shape -> (1, 3)
  mg::Tensor w = iota({2, 3});
  EXPECT_EQ(w[1][2].item<float>(), 5.0f);
  EXPECT_EQ(w[-1].to_vector<float>(), (std::vector<float>{3, 4, 5}));
  EXPECT_EQ(w[longs({1})].shape(), (mg::Shape{1, 3}));
}

TEST(Indexing, IndexPutWritesAndAccumulates) {
  // y = torch.zeros(5); y[torch.tensor([1, 1, 3])] = torch.tensor([1., 2., 3.]) -> [0, 2, 0, 3, 0]
  mg::Tensor y = mg::zeros({5});
  y.index_put_({longs({1, 1, 3})}, mg::tensor({1.0, 2.0, 3.0}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 2, 0, 3, 0}));
  EXPECT_EQ(y._version(), 1);
  // y.index_put_((torch.tensor([1, 1, 3]),), torch.tensor([1., 2., 3.]), accumulate=True)
  //   on zeros -> [0, 3, 0, 3, 0]
  mg::Tensor z = mg::zeros({5});
  z.index_put_(std::vector<std::optional<mg::Tensor>>{longs({1, 1, 3})},
               mg::tensor({1.0, 2.0, 3.0}), /*accumulate=*/true);
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{0, 3, 0, 3, 0}));
  // z = torch.arange(6).view(2, 3); z[z > 2] = -1 -> [[0, 1, 2], [-1, -1, -1]]
  mg::Tensor n = mg::arange(6).reshape({2, 3});
  n.index_put_({n > mg::scalar_tensor(2, mg::kInt64)}, -1);
  EXPECT_EQ(n.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, -1, -1, -1}));
  // y = torch.zeros(2, 3); y[0] = torch.ones(1, 1, 3) (leading 1s dropped); y[:, 1] = 5.
  mg::Tensor t = mg::zeros({2, 3});
  t.index_put_({0}, mg::ones({1, 1, 3}));
  t.index_put_({Slice(), 1}, 5.0);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 5, 1, 0, 5, 0}));
  // Through a view: the base sees the write.
  mg::Tensor base = mg::zeros({3, 4});
  base.index({Slice(1, None)}).index_put_({Slice(), longs({0, 3})}, 7.0);
  EXPECT_EQ(base.to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 7, 0, 0, 7, 7, 0, 0, 7}));
  // Values from another region of the same storage, when the regions do not meet:
  // r = torch.arange(4.).view(2, 2); r[0][torch.tensor([1])] = r[1][:1] -> [[0, 2], [2, 3]]
  mg::Tensor r = iota({2, 2});
  r[0].index_put_({longs({1})}, r[1].index({Slice(None, 1)}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{0, 2, 2, 3}));
}

TEST(Indexing, IndexPutRecordsHistoryLikeAnInPlaceOp) {
  // x = torch.ones(4, requires_grad=True); y = x * 2; y[torch.tensor([0, 2])] = v (v = [5, 6],
  // requires grad); y.sum().backward() -> x.grad = [0, 2, 0, 2], v.grad = [1, 1]
  mg::Tensor x = mg::ones({4}).requires_grad_();
  mg::Tensor v = mg::tensor({5.0, 6.0}).requires_grad_();
  mg::Tensor y = x * 2.0;
  y.index_put_({longs({0, 2})}, v);
  EXPECT_EQ(y.grad_fn()->name(), "IndexPutBackward0");
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, 2, 6, 2}));
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0, 2, 0, 2}));
  EXPECT_EQ(v.grad().to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(Indexing, NonzeroAndMaskedSelect) {
  // torch.nonzero(torch.tensor([[0., 1., 0.], [2., 0., 3.]])) -> [[0, 1], [1, 0], [1, 2]]
  mg::Tensor nz = mg::tensor({{0.0, 1.0, 0.0}, {2.0, 0.0, 3.0}}).nonzero();
  EXPECT_EQ(nz.shape(), (mg::Shape{3, 2}));
  EXPECT_EQ(nz.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 1, 0, 1, 2}));
  EXPECT_EQ(mg::zeros({2, 0}).nonzero().shape(), (mg::Shape{0, 2}));
  // torch.arange(6.).view(2, 3).masked_select(torch.tensor([True, False, True])) -> [0, 2, 3, 5]
  mg::Tensor mask = mg::tensor({1.0, 0.0, 1.0}, {3}, mg::kBool);
  EXPECT_EQ(iota({2, 3}).masked_select(mask).to_vector<float>(), (std::vector<float>{0, 2, 3, 5}));
}

TEST(Indexing, PyTorchsErrors) {
  mg::Tensor x = iota({2, 3, 4});
  // "too many indices for tensor of dimension 3"
  EXPECT_EQ(error_of([&] {
              x.index({0, 0, 0, 0});
            }),
            "[index] too many indices for tensor of dimension 3 (got 4)");
  // "index 5 is out of bounds for dimension 0 with size 2"
  EXPECT_EQ(error_of([&] { x.index({5}); }),
            "[index] index 5 is out of bounds for dimension 0 with size 2");
  EXPECT_EQ(error_of([&] {
              x.index({Slice(), -4});
            }),
            "[index] index -4 is out of bounds for dimension 1 with size 3");
  EXPECT_EQ(error_of([&] { x.index({longs({5})}); }),
            "[index] index 5 is out of bounds for dimension 0 with size 2");
  // "The shape of the mask [2, 3] at index 1 does not match the shape of the indexed tensor
  //  [2, 2, 4] at index 1" (x[m, 1:3]: the slice applies to dim 1 first, as PyTorch)
  mg::Tensor m = mg::tensor({1.0, 0.0, 1.0, 0.0, 1.0, 0.0}, {2, 3}, mg::kBool);
  EXPECT_EQ(error_of([&] {
              x.index({m, Slice(1, 3)});
            }),
            "[index] the shape of the mask (2, 3) at index 1 does not match the shape of the "
            "indexed tensor (2, 2, 4) at index 1");
  // "slice step cannot be zero"; "step must be greater than zero"
  EXPECT_EQ(error_of([&] { x.index({Slice(None, None, 0)}); }),
            "[index] slice step cannot be zero");
  EXPECT_EQ(error_of([&] { x.index({Slice(None, None, -1)}); }),
            "[index] step must be greater than zero, got -1");
  // "tensors used as indices must be long, byte or bool tensors"
  EXPECT_EQ(error_of([&] { x.index({mg::ones({1})}); }),
            "[index] tensors used as indices must be int64 or bool tensors, but got float32");
  EXPECT_EQ(error_of([&] { mg::scalar_tensor(1.0).index({0}); }),
            "[index] invalid index of a 0-dim tensor; use item<T>() to convert a 0-dim tensor "
            "to a number");
  EXPECT_EQ(error_of([&] {
              x.index({Ellipsis, Ellipsis});
            }),
            "[index] an index can only have a single ellipsis ('...')");
  EXPECT_EQ(error_of([&] {
              x.index({"..", 0});
            }),
            "[index] expected \"...\" to stand for Ellipsis, but got the string \"..\"");
  EXPECT_EQ(error_of([&] {
              x.index({longs({0, 1}), longs({0, 1, 2})});
            }),
            "[index] shape mismatch: indexing tensors could not be broadcast together with shapes "
            "(2,) and (3,)");
  // "shape mismatch: value tensor of shape [2, 3] cannot be broadcast to indexing result of
  //  shape [1, 3]"
  mg::Tensor y = mg::zeros({2, 3});
  EXPECT_EQ(error_of([&] {
              y.index_put_({longs({0})}, mg::ones({2, 3}));
            }),
            "[index_put_] shape mismatch: value tensor of shape (2, 3) cannot be broadcast to "
            "indexing result of shape (1, 3)");
  // s[torch.tensor([2, 1, 0])] = s: "unsupported operation: some elements of the input tensor
  // and the written-to tensor refer to a single memory location. Please clone() the tensor ..."
  // (r[torch.tensor([0])] = r[1] too: r's range holds r[1].)
  mg::Tensor s = mg::tensor({1.0, 2.0, 3.0});
  EXPECT_EQ(error_of([&] {
              s.index_put_({longs({2, 1, 0})}, s);
            }),
            "[index_put_] unsupported operation: some elements of the input tensor and the "
            "written-to tensor refer to a single memory location; clone() the values first");
  mg::Tensor r = iota({2, 2});
  EXPECT_EQ(error_of([&] { r.index_put_({longs({0})}, r[1]); }),
            "[index_put_] unsupported operation: some elements of the input tensor and the "
            "written-to tensor refer to a single memory location; clone() the values first");
  // "Index put requires the source and destination dtypes match, got Float for the destination
  //  and Double for the source."
  EXPECT_EQ(error_of([&] { y.index_put_({longs({0})}, mg::ones({3}, mg::kFloat64)); }),
            "[index_put_] index put requires the source and destination dtypes match, got "
            "float32 for the destination and float64 for the source");
}

TEST(Indexing, TensorIndexPrintsAsPython) {
  std::ostringstream os;
  os << TensorIndex(Slice(1, None, 2)) << " " << TensorIndex(None) << " " << TensorIndex("...")
     << " " << TensorIndex(-1) << " " << TensorIndex(true);
  EXPECT_EQ(os.str(), "1:None:2 None ... -1 True");
}
