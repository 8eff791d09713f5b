// Tensor basics: printing (operator<< against PyTorch 1.13's repr), creation, metadata, views,
// data access, conversions, in-place fills and copies, and the errors of each.
//
// Every expected string and value is a literal taken from PyTorch 1.13; the Python expression
// that produced it sits in the comment next to it.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace mg = minigrad;

namespace {

std::string str(const mg::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

/// {0/d, 1/d, ..., (n-1)/d} as Python's [i / d for i in range(n)].
std::vector<double> seq_div(int n, double d) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<double>(i) / d);
  return v;
}

/// Expects fn to throw minigrad::Error whose message starts with "[op]".
void expect_error(const std::function<void()>& fn, const std::string& op) {
  const std::string prefix = "[" + op + "]";
  try {
    fn();
    ADD_FAILURE() << "expected a minigrad::Error starting with " << prefix;
  } catch (const mg::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u)
        << "message \"" << e.what() << "\" does not start with " << prefix;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a minigrad::Error starting with " << prefix << ", got another "
                  << "exception: " << e.what();
  }
}

/// Element pointer arithmetic for "is this a view of that storage" checks.
template <typename T>
const T* base_ptr(const mg::Tensor& t) {
  return t.data_ptr<T>() - t.storage_offset();
}

}  // namespace

// =============================================================================== printing

TEST(Print, FixedMode) {
  // torch.tensor([1.5, -2.25, 3.0])
  EXPECT_EQ(str(mg::tensor({1.5, -2.25, 3.0})), "tensor([ 1.5000, -2.2500,  3.0000])");
  // torch.tensor([[1.0, 2.5], [-3.25, 4.0]])
  EXPECT_EQ(str(mg::tensor({{1.0, 2.5}, {-3.25, 4.0}})),
            "tensor([[ 1.0000,  2.5000],\n        [-3.2500,  4.0000]])");
  // torch.tensor([0.1, 0.2, 0.3])
  EXPECT_EQ(str(mg::tensor({0.1, 0.2, 0.3})), "tensor([0.1000, 0.2000, 0.3000])");
}

TEST(Print, IntegerValuedFloats) {
  // torch.tensor([1., -2., 300.])
  EXPECT_EQ(str(mg::tensor({1., -2., 300.})), "tensor([  1.,  -2., 300.])");
  // torch.tensor([0., 0.])
  EXPECT_EQ(str(mg::tensor({0., 0.})), "tensor([0., 0.])");
  // torch.tensor([-0., 1.])
  EXPECT_EQ(str(mg::tensor({-0., 1.})), "tensor([-0., 1.])");
  // torch.arange(24.).reshape(2, 3, 4)
  EXPECT_EQ(str(mg::arange(24.0).reshape({2, 3, 4})),
            "tensor([[[ 0.,  1.,  2.,  3.],\n         [ 4.,  5.,  6.,  7.],\n         [ 8.,  9., "
            "10., 11.]],\n\n        [[12., 13., 14., 15.],\n         [16., 17., 18., 19.],\n     "
            "    [20., 21., 22., 23.]]])");
}

TEST(Print, ScientificMode) {
  // torch.tensor([1e-5, 1.0])
  EXPECT_EQ(str(mg::tensor({1e-5, 1.0})), "tensor([1.0000e-05, 1.0000e+00])");
  // torch.tensor([1e9, 1.0])
  EXPECT_EQ(str(mg::tensor({1e9, 1.0})), "tensor([1.0000e+09, 1.0000e+00])");
  // torch.tensor([1., 2000.])
  EXPECT_EQ(str(mg::tensor({1., 2000.})), "tensor([1.0000e+00, 2.0000e+03])");
  // torch.tensor([123456789.0, 1.0])
  EXPECT_EQ(str(mg::tensor({123456789.0, 1.0})), "tensor([1.2346e+08, 1.0000e+00])");
  // torch.tensor([1e20, -1e-20])
  EXPECT_EQ(str(mg::tensor({1e20, -1e-20})), "tensor([ 1.0000e+20, -1.0000e-20])");
  // torch.tensor([-1e-3, 5.5])
  EXPECT_EQ(str(mg::tensor({-1e-3, 5.5})), "tensor([-1.0000e-03,  5.5000e+00])");
}

TEST(Print, ZeroDim) {
  // torch.tensor(3.5)
  EXPECT_EQ(str(mg::scalar_tensor(3.5)), "tensor(3.5000)");
  // torch.tensor(3.)
  EXPECT_EQ(str(mg::scalar_tensor(3.0)), "tensor(3.)");
  // torch.tensor(-7)
  EXPECT_EQ(str(mg::scalar_tensor(-7, mg::kInt64)), "tensor(-7)");
  // torch.tensor(True)
  EXPECT_EQ(str(mg::scalar_tensor(true, mg::kBool)), "tensor(True)");
  // torch.tensor(1e-10)
  EXPECT_EQ(str(mg::scalar_tensor(1e-10)), "tensor(1.0000e-10)");
  // torch.tensor(2.5, dtype=torch.float64)
  EXPECT_EQ(str(mg::scalar_tensor(2.5, mg::kFloat64)), "tensor(2.5000, dtype=torch.float64)");
}

TEST(Print, Empty) {
  // torch.zeros(0)
  EXPECT_EQ(str(mg::zeros({0})), "tensor([])");
  // torch.zeros(0, 3)
  EXPECT_EQ(str(mg::zeros({0, 3})), "tensor([], size=(0, 3))");
  // torch.zeros(0, dtype=torch.int64)
  EXPECT_EQ(str(mg::zeros({0}, mg::kInt64)), "tensor([], dtype=torch.int64)");
  // torch.zeros(0, dtype=torch.bool)
  EXPECT_EQ(str(mg::zeros({0}, mg::kBool)), "tensor([], dtype=torch.bool)");
  // torch.zeros(2, 0, dtype=torch.float64)
  EXPECT_EQ(str(mg::zeros({2, 0}, mg::kFloat64)), "tensor([], size=(2, 0), dtype=torch.float64)");
  // torch.zeros(0, dtype=torch.float64)
  EXPECT_EQ(str(mg::zeros({0}, mg::kFloat64)), "tensor([], dtype=torch.float64)");
  // torch.zeros(0, 3, requires_grad=True)
  mg::Tensor x = mg::zeros({0, 3});
  x.requires_grad_();
  EXPECT_EQ(str(x), "tensor([], size=(0, 3), requires_grad=True)");
}

TEST(Print, DtypeSuffix) {
  // torch.tensor([1.5, 2.0], dtype=torch.float64)
  EXPECT_EQ(str(mg::tensor({1.5, 2.0}, mg::kFloat64)),
            "tensor([1.5000, 2.0000], dtype=torch.float64)");
  // torch.tensor([1, -20, 300])
  EXPECT_EQ(str(mg::tensor({1, -20, 300}, mg::kInt64)), "tensor([  1, -20, 300])");
  // torch.tensor([True, False])
  EXPECT_EQ(str(mg::tensor({1, 0}, mg::kBool)), "tensor([ True, False])");
  // torch.tensor([[True, False], [False, True]])
  EXPECT_EQ(str(mg::tensor({{1, 0}, {0, 1}}, mg::kBool)),
            "tensor([[ True, False],\n        [False,  True]])");
}

TEST(Print, Int64IsPrintedExactly) {
  // torch.full((2,), 2**62 + 1)
  EXPECT_EQ(str(mg::full({2}, 4611686018427387905LL, mg::kInt64)),
            "tensor([4611686018427387905, 4611686018427387905])");
}

TEST(Print, NanAndInf) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // torch.tensor([nan, 1.5, inf, -inf])
  EXPECT_EQ(str(mg::tensor({nan, 1.5, inf, -inf})), "tensor([   nan, 1.5000,    inf,   -inf])");
  // torch.tensor([1., inf])
  EXPECT_EQ(str(mg::tensor({1., inf})), "tensor([1., inf])");
  // torch.tensor([1., nan, -inf])
  EXPECT_EQ(str(mg::tensor({1., nan, -inf})), "tensor([1., nan, -inf])");
  // torch.tensor([nan])
  EXPECT_EQ(str(mg::tensor({nan})), "tensor([nan])");
  // torch.tensor([-nan]) prints as nan too
  EXPECT_EQ(str(mg::tensor({-nan})), "tensor([nan])");
}

TEST(Print, WrapsLongRows) {
  // torch.tensor([i / 7 for i in range(30)])
  EXPECT_EQ(str(mg::tensor(seq_div(30, 7), {30})),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n  "
            "      1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n      "
            "  2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n        "
            "3.8571, 4.0000, 4.1429])");
  // torch.arange(100)
  EXPECT_EQ(str(mg::arange(100)),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n     "
            "   18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n        "
            "36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53,\n        54, "
            "55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,\n        72, 73, "
            "74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89,\n        90, 91, 92, "
            "93, 94, 95, 96, 97, 98, 99])");
  // torch.tensor([i / 3 for i in range(40)]).reshape(2, 20)
  EXPECT_EQ(str(mg::tensor(seq_div(40, 3), {2, 20})),
            "tensor([[ 0.0000,  0.3333,  0.6667,  1.0000,  1.3333,  1.6667,  2.0000,  2.3333,\n  "
            "        2.6667,  3.0000,  3.3333,  3.6667,  4.0000,  4.3333,  4.6667,  5.0000,\n      "
            "    5.3333,  5.6667,  6.0000,  6.3333],\n        [ 6.6667,  7.0000,  7.3333,  "
            "7.6667,  8.0000,  8.3333,  8.6667,  9.0000,\n          9.3333,  9.6667, 10.0000, "
            "10.3333, 10.6667, 11.0000, 11.3333, 11.6667,\n         12.0000, 12.3333, 12.6667, "
            "13.0000]])");
}

TEST(Print, Summarizes) {
  // torch.arange(2000)
  EXPECT_EQ(str(mg::arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  // torch.arange(2000.)
  EXPECT_EQ(str(mg::arange(2000.0)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n        "
            "1.9990e+03])");
  // torch.arange(2000.).reshape(40, 50)
  EXPECT_EQ(str(mg::arange(2000.0).reshape({40, 50})),
            "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n         "
            "4.9000e+01],\n        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, "
            "9.8000e+01,\n         9.9000e+01],\n        [1.0000e+02, 1.0100e+02, 1.0200e+02,  "
            "..., 1.4700e+02, 1.4800e+02,\n         1.4900e+02],\n        ...,\n        "
            "[1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n         "
            "1.8990e+03],\n        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, "
            "1.9480e+03,\n         1.9490e+03],\n        [1.9500e+03, 1.9510e+03, 1.9520e+03,  "
            "..., 1.9970e+03, 1.9980e+03,\n         1.9990e+03]])");
  // torch.arange(1200.).reshape(2, 3, 200)
  EXPECT_EQ(str(mg::arange(1200.0).reshape({2, 3, 200})),
            "tensor([[[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9700e+02,\n          "
            "1.9800e+02, 1.9900e+02],\n         [2.0000e+02, 2.0100e+02, 2.0200e+02,  ..., "
            "3.9700e+02,\n          3.9800e+02, 3.9900e+02],\n         [4.0000e+02, 4.0100e+02, "
            "4.0200e+02,  ..., 5.9700e+02,\n          5.9800e+02, 5.9900e+02]],\n\n        "
            "[[6.0000e+02, 6.0100e+02, 6.0200e+02,  ..., 7.9700e+02,\n          7.9800e+02, "
            "7.9900e+02],\n         [8.0000e+02, 8.0100e+02, 8.0200e+02,  ..., 9.9700e+02,\n     "
            "     9.9800e+02, 9.9900e+02],\n         [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., "
            "1.1970e+03,\n          1.1980e+03, 1.1990e+03]]])");
}

TEST(Print, SummaryFormatsOnlyTheShownValues) {
  // torch.ones(2000).index_fill_(0, torch.tensor([1000]), 1e-9): the hidden 1e-9 does not
  // switch the formatter to scientific mode.
  mg::Tensor x = mg::ones({2000});
  x.narrow(0, 1000, 1).fill_(1e-9);
  EXPECT_EQ(str(x), "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
}

TEST(Print, NonContiguous) {
  // torch.arange(6.).reshape(2, 3).t()
  EXPECT_EQ(str(mg::arange(6.0).reshape({2, 3}).t()),
            "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])");
  // torch.tensor([1.5, -2.0]).expand(3, 2)
  EXPECT_EQ(str(mg::tensor({1.5, -2.0}).expand({3, 2})),
            "tensor([[ 1.5000, -2.0000],\n        [ 1.5000, -2.0000],\n        [ 1.5000, "
            "-2.0000]])");
  // torch.arange(10).narrow(0, 7, 3)
  EXPECT_EQ(str(mg::arange(10).narrow(0, 7, 3)), "tensor([7, 8, 9])");
}

TEST(Print, GradSuffixes) {
  // torch.tensor([1.5, 2.0], requires_grad=True)
  mg::Tensor x = mg::tensor({1.5, 2.0});
  x.requires_grad_();
  EXPECT_EQ(str(x), "tensor([1.5000, 2.0000], requires_grad=True)");
  // torch.tensor([1.5, 2.0], requires_grad=True) * 2
  EXPECT_EQ(str(x * 2), "tensor([3., 4.], grad_fn=<MulBackward0>)");
  // torch.tensor([1.5, 2.0], dtype=torch.float64, requires_grad=True)
  mg::Tensor d = mg::tensor({1.5, 2.0}, mg::kFloat64);
  d.requires_grad_();
  EXPECT_EQ(str(d), "tensor([1.5000, 2.0000], dtype=torch.float64, requires_grad=True)");
  // torch.tensor(2.5, requires_grad=True)
  mg::Tensor s = mg::scalar_tensor(2.5);
  s.requires_grad_();
  EXPECT_EQ(str(s), "tensor(2.5000, requires_grad=True)");
  // A detached tensor has neither suffix: torch.tensor([1.5, 2.0], requires_grad=True).detach()
  EXPECT_EQ(str(x.detach()), "tensor([1.5000, 2.0000])");
}

TEST(Print, SuffixesWrapOntoANewLine) {
  // torch.tensor([i / 7 for i in range(6)], requires_grad=True)
  mg::Tensor six = mg::tensor(seq_div(6, 7), {6});
  six.requires_grad_();
  EXPECT_EQ(str(six),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143], requires_grad=True)");
  // torch.tensor([i / 7 for i in range(7)], requires_grad=True)
  mg::Tensor seven = mg::tensor(seq_div(7, 7), {7});
  seven.requires_grad_();
  EXPECT_EQ(str(seven),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571],\n       "
            "requires_grad=True)");
  // torch.tensor([i / 7 for i in range(7)], dtype=torch.float64)
  EXPECT_EQ(str(mg::tensor(seq_div(7, 7), {7}, mg::kFloat64)),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571],\n       "
            "dtype=torch.float64)");
  // torch.tensor([i / 7 for i in range(13)], requires_grad=True)
  mg::Tensor thirteen = mg::tensor(seq_div(13, 7), {13});
  thirteen.requires_grad_();
  EXPECT_EQ(str(thirteen),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n  "
            "      1.2857, 1.4286, 1.5714, 1.7143], requires_grad=True)");
  // torch.tensor([i / 7 for i in range(14)], dtype=torch.float64, requires_grad=True)
  mg::Tensor fourteen = mg::tensor(seq_div(14, 7), {14}, mg::kFloat64);
  fourteen.requires_grad_();
  EXPECT_EQ(str(fourteen),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n  "
            "      1.2857, 1.4286, 1.5714, 1.7143, 1.8571], dtype=torch.float64,\n       "
            "requires_grad=True)");
  // torch.tensor([i / 7 for i in range(16)], dtype=torch.float64).reshape(2, 8).requires_grad_()
  mg::Tensor m = mg::tensor(seq_div(16, 7), {2, 8}, mg::kFloat64);
  m.requires_grad_();
  EXPECT_EQ(str(m),
            "tensor([[0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000],\n        "
            "[1.1429, 1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429]],\n       "
            "dtype=torch.float64, requires_grad=True)");
  // torch.tensor([i / 7 for i in range(7)], requires_grad=True) * 1
  EXPECT_EQ(str(seven * 1),
            "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571],\n       "
            "grad_fn=<MulBackward0>)");
}

TEST(Print, UndefinedTensor) { EXPECT_EQ(str(mg::Tensor()), "[ Tensor (undefined) ]"); }

/// Restores the default print options after each test.
class PrintOptionsTest : public ::testing::Test {
 protected:
  void TearDown() override { mg::set_printoptions(mg::PrintOptions{}); }
  static void set(int precision, std::int64_t threshold, std::int64_t edgeitems, int linewidth) {
    mg::PrintOptions o;
    o.precision = precision;
    o.threshold = threshold;
    o.edgeitems = edgeitems;
    o.linewidth = linewidth;
    mg::set_printoptions(o);
  }
};

TEST_F(PrintOptionsTest, Defaults) {
  const mg::PrintOptions& o = mg::get_printoptions();
  // torch._tensor_str.PRINT_OPTS: precision 4, threshold 1000, edgeitems 3, linewidth 80
  EXPECT_EQ(o.precision, 4);
  EXPECT_EQ(o.threshold, 1000);
  EXPECT_EQ(o.edgeitems, 3);
  EXPECT_EQ(o.linewidth, 80);
}

TEST_F(PrintOptionsTest, Precision) {
  set(2, 1000, 3, 80);
  // torch.set_printoptions(precision=2); torch.tensor([1.12345, 2.5])
  EXPECT_EQ(str(mg::tensor({1.12345, 2.5})), "tensor([1.12, 2.50])");
  // torch.set_printoptions(precision=2); torch.tensor([1e-5, 1.0])
  EXPECT_EQ(str(mg::tensor({1e-5, 1.0})), "tensor([1.00e-05, 1.00e+00])");
  // torch.set_printoptions(precision=2); torch.tensor([0.125, 0.375, 2.675]): float32 values,
  // widened to double, rounded half to even on the exact binary value.
  EXPECT_EQ(str(mg::tensor({0.125, 0.375, 2.675})), "tensor([0.12, 0.38, 2.67])");
  set(6, 1000, 3, 80);
  // torch.set_printoptions(precision=6); torch.tensor([1/3, 2.0])
  EXPECT_EQ(str(mg::tensor({1.0 / 3.0, 2.0})), "tensor([0.333333, 2.000000])");
  set(10, 1000, 3, 80);
  // torch.set_printoptions(precision=10); torch.tensor([0.1, 0.2])
  EXPECT_EQ(str(mg::tensor({0.1, 0.2})), "tensor([0.1000000015, 0.2000000030])");
}

TEST_F(PrintOptionsTest, Threshold) {
  set(4, 5, 3, 80);
  // torch.set_printoptions(threshold=5); torch.arange(10)
  EXPECT_EQ(str(mg::arange(10)), "tensor([0, 1, 2,  ..., 7, 8, 9])");
  // torch.set_printoptions(threshold=5); torch.arange(5)
  EXPECT_EQ(str(mg::arange(5)), "tensor([0, 1, 2, 3, 4])");
  // torch.set_printoptions(threshold=5); torch.arange(16.).reshape(4, 4)
  EXPECT_EQ(str(mg::arange(16.0).reshape({4, 4})),
            "tensor([[ 0.,  1.,  2.,  3.],\n        [ 4.,  5.,  6.,  7.],\n        [ 8.,  9., "
            "10., 11.],\n        [12., 13., 14., 15.]])");
}

TEST_F(PrintOptionsTest, EdgeItems) {
  set(4, 5, 1, 80);
  // torch.set_printoptions(threshold=5, edgeitems=1); torch.arange(10)
  EXPECT_EQ(str(mg::arange(10)), "tensor([0,  ..., 9])");
  // torch.set_printoptions(threshold=5, edgeitems=1); torch.arange(27.).reshape(3, 3, 3)
  EXPECT_EQ(str(mg::arange(27.0).reshape({3, 3, 3})),
            "tensor([[[ 0.,  ...,  2.],\n         ...,\n         [ 6.,  ...,  8.]],\n\n        "
            "...,\n\n        [[18.,  ..., 20.],\n         ...,\n         [24.,  ..., 26.]]])");
  set(4, 5, 0, 80);
  // torch.set_printoptions(threshold=5, edgeitems=0); torch.arange(10)
  EXPECT_EQ(str(mg::arange(10)), "tensor([ ..., 0, 1, 2, 3, 4, 5, 6, 7, 8, 9])");
}

TEST_F(PrintOptionsTest, Linewidth) {
  set(4, 1000, 3, 40);
  // torch.set_printoptions(linewidth=40); torch.arange(20)
  EXPECT_EQ(str(mg::arange(20)),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,\n         8,  9, 10, 11, 12, 13, 14, 15,\n  "
            "      16, 17, 18, 19])");
  // torch.set_printoptions(linewidth=40); torch.tensor([i / 3 for i in range(20)]).reshape(2, 10)
  EXPECT_EQ(str(mg::tensor(seq_div(20, 3), {2, 10})),
            "tensor([[0.0000, 0.3333, 0.6667, 1.0000,\n         1.3333, 1.6667, 2.0000, 2.3333,\n "
            "        2.6667, 3.0000],\n        [3.3333, 3.6667, 4.0000, 4.3333,\n         4.6667, "
            "5.0000, 5.3333, 5.6667,\n         6.0000, 6.3333]])");
  // torch.set_printoptions(linewidth=40)
  // torch.tensor([i / 3 for i in range(5)], requires_grad=True)
  mg::Tensor x = mg::tensor(seq_div(5, 3), {5});
  x.requires_grad_();
  EXPECT_EQ(str(x),
            "tensor([0.0000, 0.3333, 0.6667, 1.0000,\n        1.3333], requires_grad=True)");
  set(4, 1000, 3, 5);
  // torch.set_printoptions(linewidth=5); torch.arange(4)
  EXPECT_EQ(str(mg::arange(4)), "tensor([0,\n        1,\n        2,\n        3])");
}

TEST_F(PrintOptionsTest, RejectsInvalidOptions) {
  expect_error([] { set(-1, 1000, 3, 80); }, "set_printoptions");
  expect_error([] { set(4, 1000, -1, 80); }, "set_printoptions");
  expect_error([] { set(4, 1000, 3, 0); }, "set_printoptions");
  EXPECT_EQ(mg::get_printoptions().precision, 4);
}

// =============================================================================== creation

TEST(Creation, TensorFromValues) {
  // torch.tensor([1.5, 2.0, -3.0])
  mg::Tensor a = mg::tensor({1.5, 2.0, -3.0});
  EXPECT_EQ(a.shape(), (mg::Shape{3}));
  EXPECT_EQ(a.dtype(), mg::kFloat32);
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{1.5, 2.0, -3.0}));
  // torch.tensor([0.1, 1/3]).tolist()
  EXPECT_EQ(mg::tensor({0.1, 1.0 / 3.0}).to_vector<double>(),
            (std::vector<double>{0.10000000149011612, 0.3333333432674408}));
  // torch.tensor([[1., 2., 3.], [4., 5., 6.]]).shape == (2, 3)
  mg::Tensor b = mg::tensor({{1., 2., 3.}, {4., 5., 6.}});
  EXPECT_EQ(b.shape(), (mg::Shape{2, 3}));
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // torch.tensor([[[1., 2.]], [[3., 4.]], [[5., 6.]]]).shape == (3, 1, 2)
  mg::Tensor c = mg::tensor({{{1., 2.}}, {{3., 4.}}, {{5., 6.}}});
  EXPECT_EQ(c.shape(), (mg::Shape{3, 1, 2}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  // torch.tensor([1., 2., 3., 4., 5., 6.]).reshape(3, 2)
  mg::Tensor d = mg::tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}, mg::kFloat64);
  EXPECT_EQ(d.shape(), (mg::Shape{3, 2}));
  EXPECT_EQ(d.dtype(), mg::kFloat64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // torch.tensor([5.]).reshape(()) is 0-dim with one element
  mg::Tensor s = mg::tensor(std::vector<double>{5.0}, {});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<float>(), 5.0f);
}

TEST(Creation, TensorConvertsToDtype) {
  // torch.tensor([0.5, -1.7, 2.9], dtype=torch.int64).tolist() == [0, -1, 2]
  EXPECT_EQ(mg::tensor({0.5, -1.7, 2.9}, mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, -1, 2}));
  // torch.tensor([0.5, 0.0, -2.0], dtype=torch.bool).tolist() == [True, False, True]
  EXPECT_EQ(mg::tensor({0.5, 0.0, -2.0}, mg::kBool).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
}

TEST(Creation, Fills) {
  // torch.zeros(2, 3)
  mg::Tensor z = mg::zeros({2, 3});
  EXPECT_EQ(z.shape(), (mg::Shape{2, 3}));
  EXPECT_EQ(z.dtype(), mg::kFloat32);
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>(6, 0.0f)));
  // torch.ones(4, dtype=torch.int64)
  EXPECT_EQ(mg::ones({4}, mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 1, 1, 1}));
  // torch.full((2, 2), 7, dtype=torch.int64).tolist() == [[7, 7], [7, 7]]
  mg::Tensor f = mg::full({2, 2}, 7, mg::kInt64);
  EXPECT_EQ(f.dtype(), mg::kInt64);
  EXPECT_EQ(f.to_vector<std::int64_t>(), (std::vector<std::int64_t>{7, 7, 7, 7}));
  // torch.full((3,), 2.5, dtype=torch.float64)
  EXPECT_EQ(mg::full({3}, 2.5, mg::kFloat64).to_vector<double>(),
            (std::vector<double>{2.5, 2.5, 2.5}));
  // torch.full((2,), True)
  EXPECT_EQ(mg::full({2}, true, mg::kBool).to_vector<bool>(), (std::vector<bool>{true, true}));
  // torch.empty(2, 5).shape
  mg::Tensor e = mg::empty({2, 5}, mg::kFloat64);
  EXPECT_EQ(e.shape(), (mg::Shape{2, 5}));
  EXPECT_EQ(e.dtype(), mg::kFloat64);
  // torch.zeros(()) is 0-dim
  EXPECT_EQ(mg::zeros({}).dim(), 0);
  EXPECT_EQ(mg::zeros({}).numel(), 1);
}

TEST(Creation, Like) {
  mg::Tensor src = mg::tensor({{1., 2., 3.}, {4., 5., 6.}}, mg::kFloat64).t();
  // torch.zeros_like(x): same shape and dtype, contiguous
  mg::Tensor z = mg::zeros_like(src);
  EXPECT_EQ(z.shape(), (mg::Shape{3, 2}));
  EXPECT_EQ(z.dtype(), mg::kFloat64);
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>(6, 0.0)));
  EXPECT_NE(base_ptr<double>(z), base_ptr<double>(src));
  // torch.ones_like(torch.arange(3)).tolist() == [1, 1, 1]
  EXPECT_EQ(mg::ones_like(mg::arange(3)).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 1, 1}));
  // torch.full_like(torch.zeros(2), 3.5)
  EXPECT_EQ(mg::full_like(mg::zeros({2}), 3.5).to_vector<float>(),
            (std::vector<float>{3.5f, 3.5f}));
  mg::Tensor e = mg::empty_like(mg::zeros({4, 1}, mg::kBool));
  EXPECT_EQ(e.shape(), (mg::Shape{4, 1}));
  EXPECT_EQ(e.dtype(), mg::kBool);
}

TEST(Creation, ArangeInt) {
  // torch.arange(5)
  mg::Tensor a = mg::arange(5);
  EXPECT_EQ(a.dtype(), mg::kInt64);
  EXPECT_EQ(a.to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  // torch.arange(1, 10, 3)
  EXPECT_EQ(mg::arange(1, 10, 3).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 4, 7}));
  // torch.arange(10, 0, -3)
  EXPECT_EQ(mg::arange(10, 0, -3).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{10, 7, 4, 1}));
  // torch.arange(3, 3).numel() == 0
  EXPECT_EQ(mg::arange(3, 3).numel(), 0);
  // torch.arange(-1.5, 3.7, 1.25, dtype=torch.int64).tolist() == [-1, 0, 1, 2]
  EXPECT_EQ(mg::arange(-1.5, 3.7, 1.25, mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-1, 0, 1, 2}));
}

TEST(Creation, ArangeFloat) {
  // torch.arange(0., 1., 0.25)
  mg::Tensor a = mg::arange(0., 1., 0.25);
  EXPECT_EQ(a.dtype(), mg::kFloat32);
  EXPECT_EQ(a.to_vector<double>(), (std::vector<double>{0.0, 0.25, 0.5, 0.75}));
  // torch.arange(1.0, -1.0, -0.5)
  EXPECT_EQ(mg::arange(1.0, -1.0, -0.5).to_vector<double>(),
            (std::vector<double>{1.0, 0.5, 0.0, -0.5}));
  // torch.arange(0, 1, 0.1).tolist()
  EXPECT_EQ(mg::arange(0, 1, 0.1).to_vector<double>(),
            (std::vector<double>{0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896,
                                 0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071,
                                 0.800000011920929, 0.8999999761581421}));
  // torch.arange(0, 1, 0.1, dtype=torch.float64).tolist()
  EXPECT_EQ(mg::arange(0, 1, 0.1, mg::kFloat64).to_vector<double>(),
            (std::vector<double>{0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001,
                                 0.7000000000000001, 0.8, 0.9}));
}

// NOTE: from 16 float32 (8 float64) steps on, PyTorch's vectorised kernel rounds the last bit
// differently (and CPU-dependently); these cases stay below that.
TEST(Creation, Linspace) {
  // torch.linspace(0, 1, 5)
  EXPECT_EQ(mg::linspace(0, 1, 5).to_vector<double>(),
            (std::vector<double>{0.0, 0.25, 0.5, 0.75, 1.0}));
  // torch.linspace(-1, 1, 7).tolist()
  EXPECT_EQ(
      mg::linspace(-1, 1, 7).to_vector<double>(),
      (std::vector<double>{-1.0, -0.6666666269302368, -0.3333333134651184, -2.9802322387695312e-08,
                           0.3333333134651184, 0.6666666269302368, 1.0}));
  // torch.linspace(-2.5, 7.1, 9).tolist()
  EXPECT_EQ(mg::linspace(-2.5, 7.1, 9).to_vector<double>(),
            (std::vector<double>{-2.5, -1.2999999523162842, -0.09999990463256836,
                                 1.1000001430511475, 2.299999713897705, 3.499999761581421,
                                 4.699999809265137, 5.899999618530273, 7.099999904632568}));
  // torch.linspace(-2.5, 7.1, 7, dtype=torch.float64).tolist()
  EXPECT_EQ(
      mg::linspace(-2.5, 7.1, 7, mg::kFloat64).to_vector<double>(),
      (std::vector<double>{-2.5, -0.9000000000000001, 0.6999999999999997, 2.3, 3.9, 5.5, 7.1}));
  // torch.linspace(0, 1, 7, dtype=torch.float64).tolist()
  EXPECT_EQ(mg::linspace(0, 1, 7, mg::kFloat64).to_vector<double>(),
            (std::vector<double>{0.0, 0.16666666666666666, 0.3333333333333333, 0.5,
                                 0.6666666666666667, 0.8333333333333334, 1.0}));
  // torch.linspace(2, 5, 1).tolist() == [2.0]
  EXPECT_EQ(mg::linspace(2, 5, 1).to_vector<double>(), (std::vector<double>{2.0}));
  // torch.linspace(0, 1, 0).shape == (0,)
  EXPECT_EQ(mg::linspace(0, 1, 0).shape(), (mg::Shape{0}));
  // torch.linspace(0.5, 10.7, 4, dtype=torch.int64).tolist() == [0, 3, 6, 10]
  EXPECT_EQ(mg::linspace(0.5, 10.7, 4, mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{0, 3, 6, 10}));
  // torch.linspace(-3.7, 3.7, 5, dtype=torch.int64).tolist() == [-3, -1, 0, 1, 3]
  EXPECT_EQ(mg::linspace(-3.7, 3.7, 5, mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-3, -1, 0, 1, 3}));
}

TEST(Creation, Eye) {
  // torch.eye(3)
  mg::Tensor i3 = mg::eye(3);
  EXPECT_EQ(i3.shape(), (mg::Shape{3, 3}));
  EXPECT_EQ(i3.to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  // torch.eye(2, 3).tolist() == [[1., 0., 0.], [0., 1., 0.]]
  EXPECT_EQ(mg::eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  // torch.eye(3, 2).tolist() == [[1., 0.], [0., 1.], [0., 0.]]
  mg::Tensor i32 = mg::eye(3, 2, mg::kInt64);
  EXPECT_EQ(i32.shape(), (mg::Shape{3, 2}));
  EXPECT_EQ(i32.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 0, 0, 1, 0, 0}));
}

TEST(Creation, ScalarTensor) {
  // torch.scalar_tensor(3): 0-dim float32 holding 3.0
  mg::Tensor s = mg::scalar_tensor(3);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.shape(), mg::Shape{});
  EXPECT_EQ(s.dtype(), mg::kFloat32);
  EXPECT_EQ(s.item<double>(), 3.0);
  // torch.tensor(3.7).item() == 3.700000047683716
  EXPECT_EQ(mg::scalar_tensor(3.7).item<double>(), 3.700000047683716);
  // torch.scalar_tensor(2**62 + 1, dtype=torch.int64).item() == 4611686018427387905
  EXPECT_EQ(mg::scalar_tensor(4611686018427387905LL, mg::kInt64).item<std::int64_t>(),
            4611686018427387905LL);
}

TEST(Creation, DtypeInference) {
  // torch.arange(3).dtype == torch.int64; torch.arange(3.).dtype == torch.float32
  EXPECT_EQ(mg::arange(3).dtype(), mg::kInt64);
  EXPECT_EQ(mg::arange(3.0).dtype(), mg::kFloat32);
  // torch.arange(0, 3, 0.5).dtype == torch.float32
  EXPECT_EQ(mg::arange(0, 3, 0.5).dtype(), mg::kFloat32);
  // torch.promote_types(torch.int64, torch.float32) == torch.float32
  EXPECT_EQ(mg::promote_types(mg::kInt64, mg::kFloat32), mg::kFloat32);
  // torch.promote_types(torch.bool, torch.int64) == torch.int64
  EXPECT_EQ(mg::promote_types(mg::kBool, mg::kInt64), mg::kInt64);
  // torch.promote_types(torch.float32, torch.float64) == torch.float64
  EXPECT_EQ(mg::promote_types(mg::kFloat32, mg::kFloat64), mg::kFloat64);
  // (torch.arange(3) + 1.5).dtype == torch.float32; (torch.arange(3) + 1).dtype == torch.int64
  EXPECT_EQ((mg::arange(3) + 1.5).dtype(), mg::kFloat32);
  EXPECT_EQ((mg::arange(3) + 1).dtype(), mg::kInt64);
  // (torch.arange(3) * torch.ones(3)).dtype == torch.float32
  EXPECT_EQ((mg::arange(3) * mg::ones({3})).dtype(), mg::kFloat32);
  // (torch.ones(3) + torch.tensor(1., dtype=torch.float64)).dtype == torch.float32
  EXPECT_EQ((mg::ones({3}) + mg::scalar_tensor(1.0, mg::kFloat64)).dtype(), mg::kFloat32);
  // (torch.arange(3) / 2).dtype == torch.float32
  EXPECT_EQ((mg::arange(3) / 2).dtype(), mg::kFloat32);
}

TEST(Creation, Errors) {
  // torch.tensor([1., 2., 3.]).reshape(2, 2) has the wrong element count
  expect_error([] { mg::tensor(std::vector<double>{1, 2, 3}, {2, 2}); }, "tensor");
  // torch.tensor([[1., 2.], [3.]]): "expected sequence of length 2 at dim 1 (got 1)"
  expect_error([] { mg::tensor({{1., 2.}, {3.}}); }, "tensor");
  expect_error([] { mg::tensor({{{1., 2.}}, {{3., 4.}, {5., 6.}}}); }, "tensor");
  expect_error([] { mg::tensor({{{1., 2.}}, {{3.}}}); }, "tensor");
  // torch.zeros(-1): "Trying to create tensor with negative dimension -1"
  expect_error([] { mg::zeros({-1}); }, "zeros");
  expect_error([] { mg::ones({2, -3}); }, "ones");
  expect_error([] { mg::full({-2}, 1.0); }, "full");
  expect_error([] { mg::empty({-1, 2}); }, "empty");
  expect_error([] { mg::tensor(std::vector<double>{}, {-1}); }, "tensor");
  // torch.tensor([float('nan')], dtype=torch.int64) and torch.tensor([1e30], dtype=torch.int64):
  // "value cannot be converted to type int64 without overflow"
  expect_error([] { mg::tensor({std::nan("")}, mg::kInt64); }, "tensor");
  expect_error([] { mg::tensor({1e30}, mg::kInt64); }, "tensor");
  // torch.full((2,), float('nan'), dtype=torch.int64)
  expect_error([] { mg::full({2}, std::nan(""), mg::kInt64); }, "full");
  expect_error([] { mg::scalar_tensor(INFINITY, mg::kInt64); }, "scalar_tensor");
  // torch.arange(0, 3, 0): "step must be nonzero"
  expect_error([] { mg::arange(0, 3, 0); }, "arange");
  // torch.arange(5, 1, 1): "upper bound and larger bound inconsistent with step sign"
  expect_error([] { mg::arange(5, 1, 1); }, "arange");
  expect_error([] { mg::arange(0.0, 1.0, -0.5); }, "arange");
  // torch.arange(0.5, 3, 0.5, dtype=torch.int64): "step must be nonzero" (0.5 truncates to 0)
  expect_error([] { mg::arange(0.5, 3, 0.5, mg::kInt64); }, "arange");
  // torch.arange(0, 1e300, 1e-300): "invalid size, possible overflow?"
  expect_error([] { mg::arange(0.0, 1e300, 1e-300); }, "arange");
  expect_error([] { mg::arange(0.0, INFINITY, 1.0); }, "arange");
  // torch.linspace(0, 1, -1): "number of steps must be non-negative"
  expect_error([] { mg::linspace(0, 1, -1); }, "linspace");
  // torch.eye(-1): "n must be greater or equal to 0, got -1"
  expect_error([] { mg::eye(-1); }, "eye");
  expect_error([] { mg::eye(2, -1); }, "eye");
}

// =============================================================================== metadata

TEST(TensorMeta, ShapeSizesStrides) {
  mg::Tensor x = mg::zeros({2, 3, 4});
  // torch.zeros(2, 3, 4): shape (2, 3, 4), dim 3, numel 24, stride (12, 4, 1)
  EXPECT_EQ(x.shape(), (mg::Shape{2, 3, 4}));
  EXPECT_EQ(x.sizes(), (mg::Shape{2, 3, 4}));
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.size(-1), 4);
  EXPECT_EQ(x.size(-3), 2);
  EXPECT_EQ(x.dim(), 3);
  EXPECT_EQ(x.numel(), 24);
  EXPECT_EQ(x.dtype(), mg::kFloat32);
  EXPECT_EQ(x.strides(), (mg::Shape{12, 4, 1}));
  EXPECT_EQ(x.stride(-1), 1);
  EXPECT_EQ(x.stride(0), 12);
  EXPECT_EQ(x.storage_offset(), 0);
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_TRUE(x.is_floating_point());
  EXPECT_FALSE(mg::zeros({2}, mg::kInt64).is_floating_point());
  // torch.zeros(()): dim 0, numel 1
  EXPECT_EQ(mg::zeros({}).dim(), 0);
  EXPECT_EQ(mg::zeros({}).numel(), 1);
  // torch.zeros(3, 0).numel() == 0
  EXPECT_EQ(mg::zeros({3, 0}).numel(), 0);
  EXPECT_FALSE(mg::Tensor().defined());
  EXPECT_TRUE(x.defined());
  EXPECT_EQ(std::string(mg::dtype_name(mg::kFloat64)), "float64");
  EXPECT_EQ(mg::element_size(mg::kInt64), 8u);
}

TEST(TensorMeta, Errors) {
  mg::Tensor x = mg::zeros({2, 3});
  // torch.zeros(2, 3).size(2): "Dimension out of range (expected to be in range of [-2, 1], but
  // got 2)"
  expect_error([&] { x.size(2); }, "size");
  expect_error([&] { x.size(-3); }, "size");
  expect_error([&] { x.stride(5); }, "stride");
  expect_error([&] { x.transpose(0, 2); }, "transpose");
  expect_error([&] { x.unsqueeze(3); }, "unsqueeze");
  expect_error([&] { x.squeeze(-3); }, "squeeze");
  expect_error([&] { x.flatten(2); }, "flatten");
  expect_error([&] { x.permute({0, 0}); }, "permute");
  expect_error([&] { x.permute({0}); }, "permute");
  expect_error([] { mg::zeros({2, 2, 2}).t(); }, "t");
}

// =============================================================================== views

TEST(TensorView, TransposeSharesStorage) {
  mg::Tensor b = mg::arange(6.0).reshape({2, 3});
  // torch.arange(6.).reshape(2, 3).t(): shape (3, 2), stride (1, 3), not contiguous
  mg::Tensor t = b.t();
  EXPECT_EQ(t.shape(), (mg::Shape{3, 2}));
  EXPECT_EQ(t.strides(), (mg::Shape{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.data_ptr<float>(), b.data_ptr<float>());
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(b.transpose(0, 1).strides(), (mg::Shape{1, 3}));
  EXPECT_EQ(b.transpose(-1, -2).to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // Writing through the view changes the base: x.t()[2, 1] = 9 -> x[1, 2] == 9
  t.select(0, 2).select(0, 1).fill_(9.0);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 9}));
  // torch.ones(1, 3).t().is_contiguous() == True (size-1 dims do not count)
  EXPECT_TRUE(mg::ones({1, 3}).t().is_contiguous());
  // A 1-D t() is itself
  EXPECT_EQ(mg::arange(3).t().to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2}));
}

TEST(TensorView, Permute) {
  mg::Tensor c = mg::arange(24.0).reshape({2, 3, 4});
  // torch.arange(24.).reshape(2, 3, 4).permute(2, 0, 1): shape (4, 2, 3), stride (1, 12, 4)
  mg::Tensor p = c.permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (mg::Shape{4, 2, 3}));
  EXPECT_EQ(p.strides(), (mg::Shape{1, 12, 4}));
  EXPECT_EQ(p.data_ptr<float>(), c.data_ptr<float>());
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
                                                      2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(c.permute({-1, 0, 1}).strides(), (mg::Shape{1, 12, 4}));
}

TEST(TensorView, ExpandHasStrideZero) {
  mg::Tensor v = mg::tensor({1., 2., 3.});
  // torch.tensor([1., 2., 3.]).expand(4, 3): stride (0, 1)
  mg::Tensor e = v.expand({4, 3});
  EXPECT_EQ(e.shape(), (mg::Shape{4, 3}));
  EXPECT_EQ(e.strides(), (mg::Shape{0, 1}));
  EXPECT_EQ(e.data_ptr<float>(), v.data_ptr<float>());
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  // torch.ones(2, 1).expand(-1, 3): shape (2, 3), stride (1, 0)
  mg::Tensor col = mg::ones({2, 1});
  mg::Tensor ec = col.expand({-1, 3});
  EXPECT_EQ(ec.shape(), (mg::Shape{2, 3}));
  EXPECT_EQ(ec.strides(), (mg::Shape{1, 0}));
  EXPECT_EQ(v.expand_as(mg::zeros({2, 3})).shape(), (mg::Shape{2, 3}));
}

TEST(TensorView, UnsqueezeSqueeze) {
  mg::Tensor b = mg::arange(6.0).reshape({2, 3});
  // torch.arange(6.).reshape(2, 3).unsqueeze(1): shape (2, 1, 3), stride (3, 3, 1)
  EXPECT_EQ(b.unsqueeze(1).shape(), (mg::Shape{2, 1, 3}));
  EXPECT_EQ(b.unsqueeze(1).strides(), (mg::Shape{3, 3, 1}));
  // .unsqueeze(0): (1, 2, 3), stride (6, 3, 1); .unsqueeze(-1): (2, 3, 1), stride (3, 1, 1)
  EXPECT_EQ(b.unsqueeze(0).strides(), (mg::Shape{6, 3, 1}));
  EXPECT_EQ(b.unsqueeze(-1).shape(), (mg::Shape{2, 3, 1}));
  EXPECT_EQ(b.unsqueeze(-1).strides(), (mg::Shape{3, 1, 1}));
  EXPECT_EQ(b.unsqueeze(1).data_ptr<float>(), b.data_ptr<float>());
  mg::Tensor o = mg::ones({1, 3, 1});
  // torch.ones(1, 3, 1).squeeze(): (3,); .squeeze(0): (3, 1); .squeeze(1): (1, 3, 1)
  EXPECT_EQ(o.squeeze().shape(), (mg::Shape{3}));
  EXPECT_EQ(o.squeeze().strides(), (mg::Shape{1}));
  EXPECT_EQ(o.squeeze(0).shape(), (mg::Shape{3, 1}));
  EXPECT_EQ(o.squeeze(1).shape(), (mg::Shape{1, 3, 1}));
  EXPECT_EQ(o.squeeze(-1).shape(), (mg::Shape{1, 3}));
  EXPECT_EQ(o.squeeze().data_ptr<float>(), o.data_ptr<float>());
}

TEST(TensorView, SelectAndNarrow) {
  mg::Tensor b = mg::arange(6.0).reshape({2, 3});
  // torch.arange(6.).reshape(2, 3).select(1, 2): shape (2,), stride (3,), offset 2, [2., 5.]
  mg::Tensor s = b.select(1, 2);
  EXPECT_EQ(s.shape(), (mg::Shape{2}));
  EXPECT_EQ(s.strides(), (mg::Shape{3}));
  EXPECT_EQ(s.storage_offset(), 2);
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_EQ(base_ptr<float>(s), b.data_ptr<float>());
  // .select(0, -1): shape (3,), offset 3, [3., 4., 5.]
  mg::Tensor last = b.select(0, -1);
  EXPECT_EQ(last.storage_offset(), 3);
  EXPECT_EQ(last.to_vector<float>(), (std::vector<float>{3, 4, 5}));
  // .narrow(1, 1, 2): shape (2, 2), stride (3, 1), offset 1, [[1., 2.], [4., 5.]]
  mg::Tensor n = b.narrow(1, 1, 2);
  EXPECT_EQ(n.shape(), (mg::Shape{2, 2}));
  EXPECT_EQ(n.strides(), (mg::Shape{3, 1}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(base_ptr<float>(n), b.data_ptr<float>());
  // x.narrow(1, 1, 1).fill_(5) on torch.zeros(2, 3) -> [[0., 5., 0.], [0., 5., 0.]]
  mg::Tensor z = mg::zeros({2, 3});
  z.narrow(1, 1, 1).fill_(5);
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{0, 5, 0, 0, 5, 0}));
}

TEST(TensorView, ReshapeViewOrCopy) {
  mg::Tensor b = mg::arange(6.0).reshape({2, 3});
  // torch.arange(6.).reshape(2, 3).reshape(3, 2): a view, stride (2, 1)
  mg::Tensor r = b.reshape({3, 2});
  EXPECT_EQ(r.strides(), (mg::Shape{2, 1}));
  EXPECT_EQ(r.data_ptr<float>(), b.data_ptr<float>());
  EXPECT_EQ(b.reshape({-1}).shape(), (mg::Shape{6}));
  // .t().reshape(6): a copy, [0., 3., 1., 4., 2., 5.]
  mg::Tensor t = b.t();
  mg::Tensor rc = t.reshape({6});
  EXPECT_EQ(rc.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_NE(base_ptr<float>(rc), b.data_ptr<float>());
  rc.fill_(-1);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  // torch.arange(24.).reshape(2, 3, 4).view(6, 4) and .view(-1, 8): views
  mg::Tensor c = mg::arange(24.0).reshape({2, 3, 4});
  EXPECT_EQ(c.view({6, 4}).strides(), (mg::Shape{4, 1}));
  EXPECT_EQ(c.view({-1, 8}).shape(), (mg::Shape{3, 8}));
  EXPECT_EQ(c.view({6, 4}).data_ptr<float>(), c.data_ptr<float>());
  // x.t().view(6): "view size is not compatible with input tensor's size and stride ..."
  expect_error([&] { t.view({6}); }, "view");
}

TEST(TensorView, Flatten) {
  mg::Tensor c = mg::arange(24.0).reshape({2, 3, 4});
  // torch.arange(24.).reshape(2, 3, 4).flatten(): (24,); .flatten(1): (2, 12)
  EXPECT_EQ(c.flatten().shape(), (mg::Shape{24}));
  EXPECT_EQ(c.flatten(1).shape(), (mg::Shape{2, 12}));
  EXPECT_EQ(c.flatten(0, 1).shape(), (mg::Shape{6, 4}));
  EXPECT_EQ(c.flatten().data_ptr<float>(), c.data_ptr<float>());
  // torch.tensor(5.).flatten().shape == (1,)
  EXPECT_EQ(mg::scalar_tensor(5.0).flatten().shape(), (mg::Shape{1}));
}

TEST(TensorView, Contiguous) {
  mg::Tensor b = mg::arange(6.0).reshape({2, 3});
  // Already contiguous: the same tensor, no copy
  mg::Tensor same = b.contiguous();
  EXPECT_TRUE(same.is_same(b));
  EXPECT_EQ(same.data_ptr<float>(), b.data_ptr<float>());
  // torch.arange(6.).reshape(2, 3).t().contiguous(): stride (2, 1), [0., 3., 1., 4., 2., 5.]
  mg::Tensor c = b.t().contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.strides(), (mg::Shape{2, 1}));
  EXPECT_NE(c.data_ptr<float>(), b.data_ptr<float>());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorView, Errors) {
  mg::Tensor x = mg::zeros({2, 3});
  // torch.zeros(2, 3).reshape(4, 2): "shape '[4, 2]' is invalid for input of size 6"
  expect_error([&] { x.reshape({4, 2}); }, "reshape");
  expect_error([&] { x.reshape({-1, 4}); }, "reshape");
  expect_error([&] { x.reshape({-1, -1}); }, "reshape");
  expect_error([&] { x.view({7}); }, "view");
  // torch.zeros(2, 3).expand(4, 3): "The expanded size of the tensor (4) must match the existing
  // size (2) at non-singleton dimension 0"
  expect_error([&] { x.expand({4, 3}); }, "expand");
  expect_error([&] { x.expand({3}); }, "expand");
  // torch.zeros(2, 3).select(0, 2): "index 2 is out of bounds for dimension 0 with size 2"
  expect_error([&] { x.select(0, 2); }, "select");
  expect_error([&] { x.select(1, -4); }, "select");
  expect_error([&] { x.select(2, 0); }, "select");
  expect_error([] { mg::scalar_tensor(1.0).select(0, 0); }, "select");
  // torch.zeros(2, 3).narrow(1, 2, 2): "start (2) + length (2) exceeds dimension size (3)"
  expect_error([&] { x.narrow(1, 2, 2); }, "narrow");
  expect_error([&] { x.narrow(1, 4, 0); }, "narrow");
  expect_error([&] { x.narrow(0, 0, -1); }, "narrow");
}

// =============================================================================== data access

TEST(TensorData, ItemToVectorDataPtr) {
  // torch.tensor([2.5]).item() == 2.5
  EXPECT_EQ(mg::tensor({2.5}).item<double>(), 2.5);
  EXPECT_EQ(mg::tensor({2.5}).item<float>(), 2.5f);
  // int(torch.tensor(2.5)) == 2
  EXPECT_EQ(mg::tensor({2.5}).item<std::int64_t>(), 2);
  // torch.tensor([[7]]).item() == 7: any one-element tensor
  EXPECT_EQ(mg::tensor(std::vector<double>{7.0}, {1, 1}, mg::kInt64).item<std::int64_t>(), 7);
  EXPECT_TRUE(mg::scalar_tensor(true, mg::kBool).item<bool>());
  // torch.tensor([[1., 2.], [3., 4.]]).t().tolist() == [[1., 3.], [2., 4.]]
  EXPECT_EQ(mg::tensor({{1., 2.}, {3., 4.}}).t().to_vector<double>(),
            (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(mg::tensor({1.9, -1.9}).to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, -1}));
  mg::Tensor x = mg::tensor({1., 2., 3.}, mg::kFloat64);
  double* p = x.data_ptr<double>();
  p[1] = 20.0;
  EXPECT_EQ(x.to_vector<double>(), (std::vector<double>{1, 20, 3}));
  EXPECT_EQ(x.select(0, 2).data_ptr<double>(), p + 2);
  // item() of a many-element tensor: "a Tensor with 2 elements cannot be converted to Scalar"
  expect_error([] { mg::tensor({1., 2.}).item<float>(); }, "item");
  expect_error([] { mg::zeros({0}).item<float>(); }, "item");
  expect_error([&] { x.data_ptr<float>(); }, "data_ptr");
  expect_error([] { mg::arange(3).data_ptr<double>(); }, "data_ptr");
  expect_error([] { mg::zeros({2}).data_ptr<std::int64_t>(); }, "data_ptr");
}

TEST(TensorData, CloneIsIndependent) {
  mg::Tensor a = mg::tensor({{1., 2.}, {3., 4.}});
  mg::Tensor t = a.t();
  mg::Tensor c = t.clone();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), (mg::Shape{2, 2}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  c.fill_(0);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  a.fill_(9);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
  // Copying a handle aliases
  mg::Tensor alias = a;
  alias.fill_(1);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
}

TEST(TensorData, ToDtype) {
  // torch.tensor([1.5, 2.5]).to(torch.int64).tolist() == [1, 2]
  mg::Tensor i = mg::tensor({1.5, 2.5}).to(mg::kInt64);
  EXPECT_EQ(i.dtype(), mg::kInt64);
  EXPECT_EQ(i.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 2}));
  // torch.tensor([-1.5, -2.7]).to(torch.int64).tolist() == [-1, -2]
  EXPECT_EQ(mg::tensor({-1.5, -2.7}).to(mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-1, -2}));
  // torch.tensor([0., 2., -0.5]).to(torch.bool).tolist() == [False, True, True]
  EXPECT_EQ(mg::tensor({0., 2., -0.5}).to(mg::kBool).to_vector<bool>(),
            (std::vector<bool>{false, true, true}));
  // torch.tensor([True, False]).to(torch.float32).tolist() == [1.0, 0.0]
  EXPECT_EQ(mg::tensor({1, 0}, mg::kBool).to(mg::kFloat32).to_vector<float>(),
            (std::vector<float>{1, 0}));
  // torch.tensor([0.1]).to(torch.float64).tolist() == [0.10000000149011612]
  EXPECT_EQ(mg::tensor({0.1}).to(mg::kFloat64).to_vector<double>(),
            (std::vector<double>{0.10000000149011612}));
  // torch.tensor([0.1], dtype=torch.float64).to(torch.float32).tolist() == [0.10000000149011612]
  EXPECT_EQ(mg::tensor({0.1}, mg::kFloat64).to(mg::kFloat32).to_vector<double>(),
            (std::vector<double>{0.10000000149011612}));
  // Same dtype: the same tensor
  mg::Tensor f = mg::zeros({2});
  EXPECT_TRUE(f.to(mg::kFloat32).is_same(f));
  // A non-contiguous source converts element by element
  EXPECT_EQ(mg::tensor({{1., 2.}, {3., 4.}}).t().to(mg::kInt64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{1, 3, 2, 4}));
}

TEST(TensorData, FillZeroCopy) {
  mg::Tensor x = mg::zeros({2, 3});
  x.fill_(2.5);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>(6, 2.5f)));
  x.zero_();
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>(6, 0.0f)));
  // x = torch.zeros(2, 3); x.copy_(torch.tensor([1., 2., 3.])) -> [[1., 2., 3.], [1., 2., 3.]]
  x.copy_(mg::tensor({1., 2., 3.}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  // x = torch.zeros(2, 3, dtype=torch.int64); x.copy_(torch.tensor([[1.7], [-2.5]]))
  //   -> [[1, 1, 1], [-2, -2, -2]]
  mg::Tensor xi = mg::zeros({2, 3}, mg::kInt64);
  xi.copy_(mg::tensor(std::vector<double>{1.7, -2.5}, {2, 1}));
  EXPECT_EQ(xi.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 1, 1, -2, -2, -2}));
  // x = torch.ones(2, 2); x.t().copy_(torch.tensor([[1., 2.], [3., 4.]])) -> [[1., 3.], [2., 4.]]
  mg::Tensor o = mg::ones({2, 2});
  o.t().copy_(mg::tensor({{1., 2.}, {3., 4.}}));
  EXPECT_EQ(o.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  // Overlapping source and destination: x.copy_(x.t()) on [[1, 2], [3, 4]] -> [[1, 3], [2, 4]]
  mg::Tensor ov = mg::tensor({{1., 2.}, {3., 4.}});
  ov.copy_(ov.t());
  EXPECT_EQ(ov.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  // torch.zeros(3, dtype=torch.int64).fill_(7)
  EXPECT_EQ(mg::zeros({3}, mg::kInt64).fill_(7).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{7, 7, 7}));
  // torch.zeros(2, 3).copy_(torch.zeros(4)):
  // "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
  expect_error([&] { x.copy_(mg::zeros({4})); }, "copy_");
  // copy_ cannot broadcast the destination: torch.zeros(3).copy_(torch.zeros(2, 3)) fails
  expect_error([] { mg::zeros({3}).copy_(mg::zeros({2, 3})); }, "copy_");
  // In place on a leaf that requires grad: "a leaf Variable that requires grad is being used in
  // an in-place operation."
  mg::Tensor leaf = mg::zeros({2});
  leaf.requires_grad_();
  expect_error([&] { leaf.fill_(1); }, "fill_");
  expect_error([&] { leaf.copy_(mg::ones({2})); }, "copy_");
  {
    mg::NoGradGuard guard;
    leaf.fill_(1);
  }
  EXPECT_EQ(leaf.to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(TensorData, RequiresGrad) {
  mg::Tensor x = mg::zeros({2});
  EXPECT_FALSE(x.requires_grad());
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  x.requires_grad_(false);
  EXPECT_FALSE(x.requires_grad());
  // torch.zeros(2, dtype=torch.int64).requires_grad_(): "only Tensors of floating point dtype can
  // require gradients"
  expect_error([] { mg::zeros({2}, mg::kInt64).requires_grad_(); }, "requires_grad_");
  expect_error([] { mg::zeros({2}, mg::kBool).requires_grad_(); }, "requires_grad_");
  // requires_grad_(False) on an int tensor is fine, as in PyTorch
  mg::Tensor i = mg::zeros({2}, mg::kInt64);
  EXPECT_NO_THROW(i.requires_grad_(false));
}
