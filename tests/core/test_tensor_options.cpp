// TensorOptions, Device, the default dtype and the ways to make a tensor from C++ values, as
// libtorch's (torch::TensorOptions, torch::Device, torch::set_default_dtype, torch::tensor,
// torch::from_blob). Expected dtypes and messages are PyTorch 1.13's (Python lines in comments).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <vector>

#include "core/test_util.h"

namespace mg = minigrad;
using minigrad::testing::error_of;

namespace {
/// Restores float32 as the default dtype when a test ends, whatever it did.
struct DefaultDtype {
  explicit DefaultDtype(mg::Dtype d) { mg::set_default_dtype(d); }
  ~DefaultDtype() { mg::set_default_dtype(mg::kFloat32); }
  DefaultDtype(const DefaultDtype&) = delete;
  DefaultDtype& operator=(const DefaultDtype&) = delete;
};
}  // namespace

TEST(TensorOptions, CreationFunctionsTakeThem) {
  mg::Tensor a = mg::zeros({2, 3}, mg::TensorOptions().dtype(mg::kFloat64).requires_grad(true));
  EXPECT_EQ(a.dtype(), mg::kFloat64);
  EXPECT_TRUE(a.requires_grad());
  EXPECT_TRUE(a.is_leaf());
  EXPECT_EQ(mg::ones({2}, mg::dtype(mg::kInt64)).dtype(), mg::kInt64);
  EXPECT_EQ(mg::randn({2}, mg::dtype(mg::kFloat64)).dtype(), mg::kFloat64);
  EXPECT_TRUE(mg::rand({2}, mg::requires_grad(true)).requires_grad());
  EXPECT_EQ(mg::randint(0, 5, {3}, mg::TensorOptions()).dtype(), mg::kInt64);
  EXPECT_EQ(mg::full({1}, 1.5, mg::dtype(mg::kFloat64)).item<double>(), 1.5);
  EXPECT_EQ(mg::arange(5, mg::kFloat64).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::arange(5, mg::kFloat64).to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(mg::eye(2, mg::dtype(mg::kFloat64)).to_vector<double>(),
            (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(mg::linspace(0, 1, 3, mg::dtype(mg::kFloat64)).to_vector<double>(),
            (std::vector<double>{0, 0.5, 1}));
  // zeros_like(x, dtype): the options' dtype wins; without one, x's.
  mg::Tensor i = mg::zeros({2}, mg::kInt64);
  EXPECT_EQ(mg::zeros_like(i, mg::dtype(mg::kFloat64)).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::ones_like(i, mg::requires_grad(false)).dtype(), mg::kInt64);
  EXPECT_EQ(mg::tensor({1.0, 2.0}, mg::dtype(mg::kFloat64).requires_grad(true)).requires_grad(),
            true);
  EXPECT_EQ(mg::scalar_tensor(2, mg::dtype(mg::kFloat64)).dtype(), mg::kFloat64);
}

TEST(TensorOptions, TheDtypeFollowsTheCppValues) {
  // torch.tensor([1, 2]).dtype -> int64; torch.tensor(3.5) -> float32, tensor(3) -> int64,
  // tensor(True) -> bool
  EXPECT_EQ(mg::tensor({1, 2}).dtype(), mg::kInt64);
  EXPECT_EQ(mg::tensor({1.0, 2.0}).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor(3.5).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor(3.5).dim(), 0);
  EXPECT_EQ(mg::tensor(3).dtype(), mg::kInt64);
  EXPECT_EQ(mg::tensor(3).item<std::int64_t>(), 3);
  EXPECT_EQ(mg::tensor(true).dtype(), mg::kBool);
  EXPECT_TRUE(mg::tensor(2.0, mg::requires_grad(true)).requires_grad());
  // libtorch 1.13: a std::vector of float or double gets the default dtype (TensorDataContainer's
  // compute_desired_dtype; torch::tensor(std::vector<double>{1.5, 2.5}).dtype() prints "float").
  EXPECT_EQ(mg::tensor(std::vector<float>{1.5f, 2.5f}).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor(std::vector<double>{1.5, 2.5}).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor(std::vector<std::int64_t>{1, -2}).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, -2}));
  EXPECT_EQ(mg::tensor(std::vector<int>{7}).dtype(), mg::kInt64);
  EXPECT_EQ(mg::tensor(std::vector<double>{1.5}, mg::kFloat32).dtype(), mg::kFloat32);
}

TEST(TensorOptions, NestedListsUpToSixDims) {
  // torch.tensor([[[[1., 2.], [3., 4.]]]]).shape -> (1, 1, 2, 2)
  mg::Tensor t4 = mg::tensor({{{{1.0, 2.0}, {3.0, 4.0}}}});
  EXPECT_EQ(t4.shape(), (mg::Shape{1, 1, 2, 2}));
  EXPECT_EQ(t4.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  mg::Tensor t6 = mg::tensor({{{{{{1.0}, {2.0}}}}}}, mg::kFloat64);
  EXPECT_EQ(t6.shape(), (mg::Shape{1, 1, 1, 1, 2, 1}));
  EXPECT_EQ(t6.dtype(), mg::kFloat64);
  // torch.tensor([[1, 2]]) -> int64; [[True, False]] -> bool; [[1, 2.5]] -> float32;
  // [[1], [2]] -> shape (2, 1)
  EXPECT_EQ(mg::tensor({{1, 2}}).dtype(), mg::kInt64);
  EXPECT_EQ(mg::tensor({{true, false}}).dtype(), mg::kBool);
  EXPECT_EQ(mg::tensor({{1, 2.5}}).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor({{1.0}, {2.0}}).shape(), (mg::Shape{2, 1}));
  EXPECT_EQ(mg::tensor({{INT64_MAX}}).item<std::int64_t>(), INT64_MAX);
  // torch.tensor([[1., 2.], [3.]]): "expected sequence of length 2 at dim 1 (got 1)"
  EXPECT_EQ(error_of([] {
              mg::tensor({{1.0, 2.0}, {3.0}});
            }),
            "[tensor] nested lists must be rectangular: a list at depth 1 has 1 values, expected "
            "2");
}

TEST(TensorOptions, DefaultDtype) {
  // torch.set_default_dtype(torch.float64): tensor([1.5]), zeros(2), tensor([1, 2]) * 0.5,
  // arange(0.5, 2), rand(1), tensor([1, 2]) / 2 are float64; tensor([1, 2], dtype=float32) not.
  EXPECT_EQ(mg::get_default_dtype(), mg::kFloat32);
  DefaultDtype f64(mg::kFloat64);
  EXPECT_EQ(mg::tensor({1.5}).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::zeros({2}).dtype(), mg::kFloat64);
  EXPECT_EQ((mg::tensor({1, 2}) * 0.5).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::arange(0.5, 2).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::rand({1}).dtype(), mg::kFloat64);
  EXPECT_EQ((mg::tensor({1, 2}) / mg::tensor({2, 2})).dtype(), mg::kFloat64);
  EXPECT_EQ(mg::tensor({1.0, 2.0}, mg::kFloat32).dtype(), mg::kFloat32);
  // "only floating-point types are supported as the default type"
  EXPECT_EQ(error_of([] { mg::set_default_dtype(mg::kInt64); }),
            "[set_default_dtype] only floating-point types are supported as the default type, "
            "got int64");
}

TEST(TensorOptions, FromBlobViewsTheCallersMemory) {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  mg::Tensor t = mg::from_blob(data.data(), {2, 3}, mg::kFloat32);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  t.mul_(2.0);  // writes the caller's memory
  EXPECT_EQ(data[5], 12.0f);
  // Strided: every other element.
  mg::Tensor s = mg::from_blob(data.data(), {3}, {2}, mg::kFloat32);
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{2, 6, 10}));
  // A deleter runs when the last tensor over the memory goes.
  int deleted = 0;
  double* heap = new double[2]{1.5, 2.5};
  {
    mg::Tensor h = mg::from_blob(
        heap, {2},
        [&](void* p) {
          ++deleted;
          delete[] static_cast<double*>(p);
        },
        mg::kFloat64);
    mg::Tensor view = h.narrow(0, 1, 1);
    h = mg::Tensor();
    EXPECT_EQ(deleted, 0);
    EXPECT_EQ(view.item<double>(), 2.5);
  }
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(error_of([] { mg::from_blob(nullptr, {2}, mg::kFloat32); }),
            "[from_blob] data is null");
}

TEST(TensorOptions, DevicesAreTheCpu) {
  mg::Device device(mg::cuda::is_available() ? mg::kCUDA : mg::kCPU);
  EXPECT_TRUE(device.is_cpu());
  EXPECT_EQ(mg::Device("cpu").str(), "cpu");
  EXPECT_EQ(mg::Device("cuda:1").str(), "cuda:1");
  EXPECT_EQ(mg::zeros({2}, mg::TensorOptions().device(device)).numel(), 2);
  EXPECT_EQ(error_of([] { mg::zeros({2}, mg::TensorOptions().device(mg::kCUDA)); }),
            "[zeros] CUDA is not available: minigrad runs on the CPU (asked for cuda); pick the "
            "device with mg::cuda::is_available(), which is false");
  EXPECT_EQ(error_of([] { mg::Device("gpu"); }),
            "[Device] expected a device string such as \"cpu\" or \"cuda:0\", got \"gpu\"");
}

TEST(TensorOptions, TensorsMoveToTheCpuOnly) {
  mg::Tensor x = mg::ones({2});
  EXPECT_TRUE(x.to(mg::kCPU).is_same(x));
  EXPECT_EQ(x.to(mg::Device("cpu"), mg::kFloat64).dtype(), mg::kFloat64);
  EXPECT_TRUE(x.device().is_cpu());
  EXPECT_FALSE(x.is_cuda());
  EXPECT_EQ(mg::zeros({3}, x.to(mg::kFloat64).options()).dtype(), mg::kFloat64);
  EXPECT_EQ(error_of([&] { x.to(mg::kCUDA); }),
            "[to] CUDA is not available: minigrad runs on the CPU (asked for cuda); pick the "
            "device with mg::cuda::is_available(), which is false");
}
