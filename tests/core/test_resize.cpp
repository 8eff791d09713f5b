// Tensor::resize_ against PyTorch 1.13 (/usr/bin/python3). Elements a growing resize_ adds are
// uninitialised in PyTorch, so only the kept prefix is compared. The Python is in each comment.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <functional>
#include <string>
#include <vector>

#include "core/test_util.h"

namespace mg = minigrad;
using minigrad::testing::error_of;

TEST(Resize, ShrinkKeepsTheStorageAndTheLeadingValues) {
  // x = torch.arange(6.); x.resize_(2, 2) -> [[0., 1.], [2., 3.]], stride (2, 1)
  mg::Tensor x = mg::arange(0.0, 6.0, 1.0, mg::kFloat64);
  mg::Tensor alias = x.detach();
  mg::Tensor& r = x.resize_({2, 2});
  EXPECT_EQ(&r, &x);
  EXPECT_EQ(x.shape(), (mg::Shape{2, 2}));
  EXPECT_EQ(x.strides(), (mg::Shape{2, 1}));
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 1, 2, 3}));
  // x.resize_(2) -> [0., 1.]; the storage keeps its 6 elements (x.storage().size() == 6)
  x.resize_({2});
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 1}));
  EXPECT_EQ(alias.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(Resize, SameSizesKeepTheStrides) {
  // x = torch.arange(6.).reshape(2, 3).t(); x.resize_(3, 2): stride (1, 3), values unchanged
  mg::Tensor x = mg::arange(0.0, 6.0, 1.0, mg::kFloat64).reshape({2, 3}).t();
  x.resize_({3, 2});
  EXPECT_EQ(x.strides(), (mg::Shape{1, 3}));
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // x = torch.arange(6.).reshape(2, 3).t(); x.resize_(2, 3): stride (3, 1), [[0, 1, 2], [3, 4, 5]]
  mg::Tensor y = mg::arange(0.0, 6.0, 1.0, mg::kFloat64).reshape({2, 3}).t();
  y.resize_({2, 3});
  EXPECT_EQ(y.strides(), (mg::Shape{3, 1}));
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

TEST(Resize, GrowingAViewGrowsTheSharedStorage) {
  // x = torch.arange(6.); y = x[2:]; y.resize_(2, 3): y.storage_offset() == 2,
  // x.storage().size() == 8, y.stride() == (3, 1), y.flatten()[:4] == [2., 3., 4., 5.]
  mg::Tensor x = mg::arange(0.0, 6.0, 1.0, mg::kFloat64);
  mg::Tensor y = x.narrow(0, 2, 4);
  y.resize_({2, 3});
  EXPECT_EQ(y.shape(), (mg::Shape{2, 3}));
  EXPECT_EQ(y.strides(), (mg::Shape{3, 1}));
  std::vector<double> got = y.to_vector<double>();
  EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + 4), (std::vector<double>{2, 3, 4, 5}));
  // x keeps its shape and values and still shares the (grown) storage with y.
  EXPECT_EQ(x.shape(), (mg::Shape{6}));
  y.index_put_({0, 0}, 20.0);
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{0, 1, 20, 3, 4, 5}));
}

TEST(Resize, GrowingABaseIsSeenByItsViews) {
  // x = torch.arange(4.); v = x.view(2, 2); x.resize_(8); x[6] = 7
  // v -> [[0., 1.], [2., 3.]]; x.storage().data_ptr() == v.storage().data_ptr()
  mg::Tensor x = mg::arange(0.0, 4.0, 1.0, mg::kFloat64);
  mg::Tensor v = x.view({2, 2});
  x.resize_({8});
  x.index_put_({6}, 7.0);
  EXPECT_EQ(v.to_vector<double>(), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(x.index({6}).item<double>(), 7.0);
  x.index_put_({1}, -1.0);
  EXPECT_EQ(v.to_vector<double>(), (std::vector<double>{0, -1, 2, 3}));
  // x = torch.arange(4.); v = x.view(2, 2); v.resize_(3) -> v [0., 1., 2.], x [0., 1., 2., 3.]
  mg::Tensor x2 = mg::arange(0.0, 4.0, 1.0, mg::kFloat64);
  mg::Tensor v2 = x2.view({2, 2});
  v2.resize_({3});
  EXPECT_EQ(v2.to_vector<double>(), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(x2.to_vector<double>(), (std::vector<double>{0, 1, 2, 3}));
}

TEST(Resize, ZeroDimsEmptyAndIntegers) {
  // x = torch.arange(4.); x.resize_(()) -> tensor(0.); x.resize_(0) -> shape (0,)
  mg::Tensor x = mg::arange(0.0, 4.0, 1.0, mg::kFloat64);
  x.resize_({});
  EXPECT_EQ(x.dim(), 0);
  EXPECT_EQ(x.item<double>(), 0.0);
  x.resize_({0});
  EXPECT_EQ(x.numel(), 0);
  // x = torch.arange(4); x.resize_(2, 1) -> int64 [[0], [1]]
  mg::Tensor i = mg::arange(4);
  i.resize_({2, 1});
  EXPECT_EQ(i.dtype(), mg::kInt64);
  EXPECT_EQ(i.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1}));
  // An expanded tensor (stride 0) becomes contiguous: torch.ones(3).expand(2, 3).resize_(4)[:3]
  // -> [1., 1., 1.]
  mg::Tensor e = mg::ones({3}, mg::kFloat64).expand({2, 3});
  e.resize_({4});
  EXPECT_EQ(e.strides(), (mg::Shape{1}));
  std::vector<double> got = e.to_vector<double>();
  EXPECT_EQ(std::vector<double>(got.begin(), got.begin() + 3), (std::vector<double>{1, 1, 1}));
}

TEST(Resize, ErrorsAsPyTorch) {
  // torch.ones(3, requires_grad=True).resize_(4): "cannot resize variables that require grad",
  // also under no_grad, and for a non-leaf.
  mg::Tensor w = mg::ones({3}).requires_grad_();
  EXPECT_EQ(error_of([&] { w.resize_({4}); }),
            "[resize_] cannot resize variables that require grad (a tensor of shape (3,)); resize "
            "a detach()ed alias instead");
  {
    mg::NoGradGuard no_grad;
    EXPECT_THROW(w.resize_({4}), mg::Error);
  }
  mg::Tensor y = w * 2;
  EXPECT_THROW(y.resize_({4}), mg::Error);
  // torch.ones(2, requires_grad=True).detach().resize_(4) works; the leaf keeps its shape.
  mg::Tensor d = w.detach();
  d.resize_({5});
  EXPECT_EQ(w.shape(), (mg::Shape{3}));
  EXPECT_EQ(error_of([] {
              mg::ones({3}).resize_({2, -3});
            }),
            "[resize_] sizes (2, -3) have a negative size -3");
  // torch.from_numpy(np.arange(4.)).resize_(8): "Trying to resize storage that is not resizable"
  std::vector<double> buffer{0, 1, 2, 3};
  mg::Tensor b = mg::from_blob(buffer.data(), {4}, mg::TensorOptions().dtype(mg::kFloat64));
  EXPECT_EQ(error_of([&] { b.resize_({8}); }),
            "[resize_] cannot grow a tensor over external memory (from_blob) from 32 to 64 bytes: "
            "trying to resize storage that is not resizable");
  b.resize_({2});  // shrinking needs no new memory
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{0, 1}));
  EXPECT_THROW(mg::Tensor().resize_({1}), mg::Error);
}

TEST(Resize, ASavedTensorResizedMakesBackwardThrow) {
  // minigrad bumps the version (Note [resize_]): backward refuses the changed saved tensor.
  mg::Tensor w = mg::ones({2}, mg::kFloat64).requires_grad_();
  mg::Tensor x = mg::ones({2}, mg::kFloat64);
  mg::Tensor loss = (w * x).sum();
  x.resize_({3});
  EXPECT_THROW(loss.backward(), mg::Error);
}
