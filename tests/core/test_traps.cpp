// The register of traps, core half (issue 35, "nothing silent"; the nn half is
// tests/nn/test_traps.cpp): code brought from PyTorch or libtorch that compiled and silently did
// something else. Each test holds one case; what PyTorch 1.13 does is quoted above it, with the
// Python that printed it (run with /usr/bin/python3).
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/op_table.h"
#include "core/test_util.h"

namespace mg = minigrad;
using mg::Tensor;
using mg::autograd::AutogradContext;
using mg::indexing::Slice;
using mg::testing::error_of;

namespace {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// ---------------------------------------------------------------- 1. assigning into an index

// x = torch.zeros(3, 4); x[1] = torch.tensor([1., 2, 3, 4]); x.select(0, 2).fill_(0)...
// libtorch: `x[1] = t` calls Tensor::operator=(const Tensor&) && (copy_); `x.narrow(0, 0, 1) =
// 4.0` calls operator=(Scalar) && (fill_). Python: x[1] = t; x[2] = t * 10; x[0:1] = 7; then
// x.narrow(0, 0, 1)[...] = 4 gives [[4,4,4,4],[1,2,3,4],[10,20,30,40]].
TEST(Traps, AssigningToAnIndexedTensorWritesIt) {
  Tensor x = mg::zeros({3, 4});
  Tensor t = mg::tensor({1.0, 2.0, 3.0, 4.0});
  x[1] = t;
  x.select(0, 2) = t * 10;
  x.index({Slice(0, 1)}) = 7;
  EXPECT_EQ(values(x), (std::vector<double>{7, 7, 7, 7, 1, 2, 3, 4, 10, 20, 30, 40}));
  x.narrow(0, 0, 1) = 4.0;
  EXPECT_EQ(values(x[0]), (std::vector<double>{4, 4, 4, 4}));
  x.index({Slice(), 0}) = mg::tensor({-1.0, -2.0, -3.0});  // broadcast and converted, as copy_
  EXPECT_EQ(values(x.index({Slice(), 0})), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(x._version(), 5);  // one in-place write each
}

// A named handle still rebinds, as in Python (`y = x[1]; y = t` leaves x alone) and libtorch.
TEST(Traps, AssigningToANamedHandleRebindsIt) {
  Tensor x = mg::zeros({2, 2});
  Tensor y = x[1];
  Tensor t = mg::ones({2});
  y = t;
  EXPECT_TRUE(y.is_same(t));
  EXPECT_EQ(values(x), (std::vector<double>{0, 0, 0, 0}));
}

// w = torch.tensor([1., 2.], requires_grad=True); x = torch.zeros(3, 2); x[1] = w * 3
// x.sum().backward(); w.grad -> tensor([3., 3.]); x.grad_fn -> CopySlices
TEST(Traps, AssigningToAnIndexRecordsHistoryAsCopy) {
  Tensor w = mg::tensor({1.0, 2.0}).requires_grad_();
  Tensor x = mg::zeros({3, 2});
  x[1] = w * 3;
  ASSERT_TRUE(x.requires_grad());
  EXPECT_EQ(x.grad_fn()->name(), "CopySlices");
  x.sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{3, 3}));
}

// x = torch.zeros(3); x[torch.tensor([True, False, True])] would be index_put_ in Python, but in
// C++ `x.index({mask}) = v` assigns to the copy advanced indexing returns: libtorch writes nothing.
// minigrad refuses and names index_put_.
TEST(Traps, AssigningToACopyIsAnError) {
  Tensor x = mg::zeros({3});
  Tensor mask = mg::tensor({true, false, true});
  std::string e = error_of([&] { x.index({mask}) = mg::ones({2}); });
  EXPECT_NE(e.find("[Tensor::operator=]"), std::string::npos) << e;
  EXPECT_NE(e.find("index_put_"), std::string::npos) << e;
  EXPECT_EQ(values(x), (std::vector<double>{0, 0, 0}));
  x.index_put_({mask}, mg::ones({2}));
  EXPECT_EQ(values(x), (std::vector<double>{1, 0, 1}));
  // A leaf that requires grad refuses the write, as copy_ does.
  Tensor p = mg::zeros({2, 2}).requires_grad_();
  EXPECT_NE(error_of([&] { p[0] = mg::ones({2}); }).find("leaf"), std::string::npos);
}

// ---------------------------------------------------------------- 2. version counters

// A custom Function that writes its input (mark_dirty):
//   class F(torch.autograd.Function):
//     @staticmethod
//     def forward(ctx, b): b.mul_(2); ctx.mark_dirty(b); return b
//     @staticmethod
//     def backward(ctx, g): return g * 2
//   a = torch.tensor([1., 2, 3], requires_grad=True); b = a.clone(); c = b * b
//   v0 = b._version; F.apply(b); b._version - v0 -> 2
//   c.sum().backward() -> RuntimeError: one of the variables needed for gradient computation has
//   been modified by an inplace operation (without the error: a.grad would be 4 8 12, not 2 4 6)
struct DoubleInPlace : mg::autograd::Function<DoubleInPlace> {
  static Tensor forward(AutogradContext* ctx, Tensor b) {
    b.mul_(2);
    ctx->mark_dirty({b});
    return b;
  }
  static std::vector<Tensor> backward(AutogradContext*, std::vector<Tensor> grads) {
    return {grads[0] * 2};
  }
};

// The same write through data_ptr, which no op sees: mark_dirty alone must count it.
struct DoubleThroughPointer : mg::autograd::Function<DoubleThroughPointer> {
  static Tensor forward(AutogradContext* ctx, Tensor b) {
    float* p = b.data_ptr<float>();
    for (std::int64_t i = 0; i < b.numel(); ++i) p[i] *= 2;
    ctx->mark_dirty({b});
    return b;
  }
  static std::vector<Tensor> backward(AutogradContext*, std::vector<Tensor> grads) {
    return {grads[0] * 2};
  }
};

TEST(Traps, MarkDirtyBumpsTheVersion) {
  Tensor a = mg::tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor b = a.clone();
  Tensor c = b * b;
  const std::int64_t v0 = b._version();
  DoubleInPlace::apply(b);
  EXPECT_EQ(b._version() - v0, 2);
  std::string e = error_of([&] { c.sum().backward(); });
  EXPECT_NE(e.find("modified in place"), std::string::npos) << e;
  EXPECT_FALSE(a.grad().defined());

  Tensor b2 = a.clone();
  Tensor c2 = b2 * b2;
  DoubleThroughPointer::apply(b2);
  EXPECT_NE(error_of([&] { c2.sum().backward(); }).find("modified in place"), std::string::npos);

  // Without a graph (no_grad in Python: _version moves by 2 there too).
  mg::NoGradGuard no_grad;
  Tensor d = mg::tensor({1.0, 2.0, 3.0});
  DoubleInPlace::apply(d);
  EXPECT_EQ(d._version(), 2);
  DoubleThroughPointer::apply(d);
  EXPECT_EQ(d._version(), 3);
}

// A leaf saved for backward and then given new data (PyTorch: `w.data = ...` silently
// differentiates the new values; minigrad refuses, as for an in-place write).
TEST(Traps, SetDataOnASavedLeafIsRefused) {
  Tensor w = mg::tensor({1.0, 2.0}).requires_grad_();
  Tensor x = mg::tensor({3.0, 4.0}).requires_grad_();
  Tensor y = (w * x).sum();
  w.set_data(mg::tensor({10.0, 20.0}));
  std::string e = error_of([&] { y.backward(); });
  EXPECT_NE(e.find("set_data"), std::string::npos) << e;
  // A fresh forward after set_data is fine.
  (w * x).sum().backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{10, 20}));
}

// torch.nn.utils.clip_grad_value_ and zero_grad(set_to_none=False) write the gradient in place:
// a handle on it sees the change.
TEST(Traps, GradientUtilitiesWriteInPlace) {
  mg::nn::Linear fc(2, 1);
  fc(mg::ones({1, 2})).sum().backward();
  Tensor g = fc->weight.grad();
  mg::nn::utils::clip_grad_value_(fc->parameters(), 0.5);
  EXPECT_TRUE(fc->weight.grad().is_same(g));
  EXPECT_EQ(values(g), (std::vector<double>{0.5, 0.5}));
  fc->zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(fc->weight.grad().is_same(g));
  EXPECT_EQ(values(g), (std::vector<double>{0, 0}));
}

// ---------------------------------------------------------------- 3. the default dtype

// libtorch 1.13: torch::tensor(std::vector<double>{1, 2}) and std::vector<float> have the
// default dtype (TensorDataContainer's compute_desired_dtype): float32, or float64 after
// torch::set_default_dtype(caffe2::TypeMeta::Make<double>()).
TEST(Traps, TensorFromAVectorHasTheDefaultDtype) {
  EXPECT_EQ(mg::tensor(std::vector<double>{1.0, 2.0}).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor(std::vector<float>{1.0f, 2.0f}).dtype(), mg::kFloat32);
  EXPECT_EQ(mg::tensor(std::vector<std::int64_t>{1, 2}).dtype(), mg::kInt64);
  EXPECT_EQ(mg::tensor(std::vector<double>{1.0, 2.0}, mg::kFloat64).dtype(), mg::kFloat64);
  mg::set_default_dtype(mg::kFloat64);
  Tensor a = mg::tensor(std::vector<double>{1.0, 2.0});
  Tensor b = mg::tensor(std::vector<float>{1.0f, 2.0f});
  mg::set_default_dtype(mg::kFloat32);
  EXPECT_EQ(a.dtype(), mg::kFloat64);
  EXPECT_EQ(b.dtype(), mg::kFloat64);
}

// ---------------------------------------------------------------- 7. small lies

// torch.allclose(torch.ones(2, 3), torch.ones(3)) -> True
// torch.allclose(torch.ones(2, 3), torch.ones(4)) -> RuntimeError: The size of tensor a (3) must
// match the size of tensor b (4) at non-singleton dimension 1
TEST(Traps, AllcloseBroadcasts) {
  EXPECT_TRUE(mg::allclose(mg::ones({2, 3}), mg::ones({3})));
  EXPECT_FALSE(mg::allclose(mg::ones({2, 3}), mg::tensor({1.0, 1.0, 2.0})));
  std::string e = error_of([] { (void)mg::allclose(mg::ones({2, 3}), mg::ones({4})); });
  EXPECT_NE(e.find("[allclose]"), std::string::npos) << e;
}

// numpy.arange(12.).reshape(3, 4)[0:2**63-1:2**63-1] -> shape (1, 4), sum 6.0 (Python's slicing;
// torch 1.13 overflows there too and raises "as_strided: Negative strides are not supported").
// torch.chunk(torch.arange(3.), 2**62) -> three chunks of 1 (with 2**63-1 torch 1.13 overflows:
// "split expects split_size be non-negative").
TEST(Traps, HugeStepsAndCountsDoNotOverflow) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Tensor x = mg::arange(12.0).reshape({3, 4});
  Tensor y = x.index({Slice(0, kMax, kMax)});
  EXPECT_EQ(y.shape(), (mg::Shape{1, 4}));
  EXPECT_EQ(y.sum().item<double>(), 6.0);
  EXPECT_EQ(x.slice(1, 1, kMax, kMax).shape(), (mg::Shape{3, 1}));
  EXPECT_EQ(values(x.slice(1, 1, kMax, kMax)), (std::vector<double>{1, 5, 9}));
  std::vector<Tensor> pieces = mg::arange(3.0).chunk(kMax);
  ASSERT_EQ(pieces.size(), 3u);
  for (const Tensor& p : pieces) EXPECT_EQ(p.numel(), 1);
  EXPECT_EQ(mg::detail::ceil_div<std::int64_t>(kMax, kMax), 1);
  EXPECT_EQ(mg::detail::ceil_div<std::int64_t>(kMax - 1, kMax), 1);
  EXPECT_EQ(mg::detail::ceil_div<std::int64_t>(0, kMax), 0);
  EXPECT_EQ(mg::detail::ceil_div<std::size_t>(5, std::numeric_limits<std::size_t>::max()), 1u);
}

// x = torch.arange(6.).reshape(2, 3).requires_grad_()   # a leaf that is a view
// x[0] = torch.ones(3); x.index_put_((torch.tensor([0]),), torch.ones(3)); x[0].add_(1)
// -> RuntimeError: a view of a leaf Variable that requires grad is being used in an in-place
// operation.
TEST(Traps, WritingIntoALeafViewIsRefused) {
  Tensor x = mg::arange(6.0).reshape({2, 3}).requires_grad_();
  for (const auto& write : std::vector<std::function<void()>>{
           [&] { x.index_put_({0}, mg::ones({3})); },
           [&] {
             x.index_put_({mg::tensor({std::int64_t{0}})}, mg::ones({1, 3}));
           },
           [&] { x[0] = mg::ones({3}); }, [&] { x[0].add_(1); }, [&] { x.add_(1); }}) {
    std::string e = error_of(write);
    EXPECT_NE(e.find("leaf tensor that requires grad"), std::string::npos) << e;
  }
  EXPECT_EQ(values(x), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  mg::NoGradGuard no_grad;  // as an optimizer writes it
  x.index_put_({0}, mg::ones({3}));
  EXPECT_EQ(values(x[0]), (std::vector<double>{1, 1, 1}));
}

// torch.autograd.grad runs only what reaches its inputs:
//   class Probe(torch.autograd.Function): forward returns x * 1; backward counts its calls
//   x, y = leaves; out = x * 2 + Probe.apply(y); torch.autograd.grad(out, x) -> Probe's backward
//   is not called (count 0), and y's branch can still be differentiated afterwards.
int g_probe_calls = 0;
struct Probe : mg::autograd::Function<Probe> {
  static Tensor forward(AutogradContext*, const Tensor& x) { return x * 1; }
  static std::vector<Tensor> backward(AutogradContext*, std::vector<Tensor> grads) {
    ++g_probe_calls;
    return {grads[0]};
  }
};

TEST(Traps, GradRunsOnlyWhatReachesItsInputs) {
  g_probe_calls = 0;
  Tensor x = mg::tensor({1.0, 2.0}).requires_grad_();
  Tensor y = mg::tensor({3.0, 4.0}).requires_grad_();
  Tensor out = (x * 2 + Probe::apply(y) * y).sum();
  std::vector<Tensor> g = mg::autograd::grad({out}, {x});
  EXPECT_EQ(values(g[0]), (std::vector<double>{2, 2}));
  EXPECT_EQ(g_probe_calls, 0);
  EXPECT_FALSE(y.grad().defined());
  std::vector<Tensor> gy = mg::autograd::grad({out}, {y});
  EXPECT_EQ(g_probe_calls, 1);
  EXPECT_EQ(values(gy[0]), (std::vector<double>{6, 8}));
}

// with torch.inference_mode(): t = torch.ones(3)
// t * 2 -> requires_grad False, is_inference False; t + w (w requires grad) -> requires grad;
// t * w -> RuntimeError: Inference tensors cannot be saved for backward.
TEST(Traps, InferenceTensorsOutsideInferenceMode) {
  Tensor t;
  {
    mg::InferenceMode guard;
    t = mg::ones({3});
  }
  Tensor r = t * 2;
  EXPECT_FALSE(r.requires_grad());
  EXPECT_FALSE(r.is_inference());
  EXPECT_EQ(values(t.exp()), values(mg::ones({3}).exp()));
  Tensor w = mg::ones({3}).requires_grad_();
  Tensor s = t + w;
  EXPECT_TRUE(s.requires_grad());
  s.sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1, 1, 1}));
  std::string e = error_of([&] { (void)(t * w); });
  EXPECT_NE(e.find("inference tensors cannot be saved for backward"), std::string::npos) << e;
}

// The same for every op of the op table: each sample run outside InferenceMode on inputs made
// inside it (none requires grad) gives a result that does not require grad, as PyTorch's.
TEST(Traps, EveryOpReadsInferenceTensorsOutsideInferenceMode) {
  int ran = 0;
  std::vector<std::string> failures;
  for (const mg::testing::OpInfo& op : mg::testing::op_table()) {
    for (const mg::testing::Sample& sample : op.samples) {
      std::vector<Tensor> inputs;
      {
        mg::InferenceMode guard;
        for (const Tensor& t : sample.inputs) inputs.push_back(t.defined() ? t.clone() : t);
      }
      const auto& fn = sample.fn ? sample.fn : op.fn;
      try {
        Tensor out = fn(inputs);
        if (out.requires_grad())
          failures.push_back(op.name + " (" + sample.desc + "): requires grad");
        ++ran;
      } catch (const mg::Error& e) {
        failures.push_back(op.name + " (" + sample.desc + "): " + e.what());
      }
    }
  }
  EXPECT_GT(ran, 300);
  std::string all;
  for (const std::string& f : failures) all += f + "\n";
  EXPECT_TRUE(failures.empty()) << failures.size() << " samples failed:\n" << all;
}

// An uncaught minigrad::Error flushes what the program printed before it aborts: with stdout
// redirected to a file, the last lines must be in it.
TEST(TrapsDeathTest, UncaughtErrorKeepsWhatWasPrinted) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = ::testing::TempDir() + "minigrad_traps_stdout.txt";
  std::remove(path.c_str());
  EXPECT_DEATH(
      {
        if (std::freopen(path.c_str(), "w", stdout) == nullptr) std::abort();
        std::cout << "step 9 loss 1.2345\n";
        std::printf("step 10 loss 1.2000\n");
        [&]() noexcept { (void)mg::matmul(mg::ones({2, 3}), mg::ones({4, 5})); }();
      },
      "terminate called after throwing minigrad::Error");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "step 9 loss 1.2345\nstep 10 loss 1.2000\n");
}

// This file is built without -g in the Release build (-g1 under the sanitizers): an uncaught
// Error names the user's function then ("thrown in ...; build with -g for the file and line"),
// or with line tables the file and line; never "thrown at in main".
TEST(TrapsDeathTest, UncaughtErrorNamesTheFunctionWithoutDebugInformation) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      { [&]() noexcept {
          (void)mg::matmul(mg::ones({2, 3}), mg::ones({4, 5}));
        }(); },
      "terminate called after throwing minigrad::Error:\n  \\[matmul\\].*\n  \\(thrown "
      "(at test_traps\\.cpp:[0-9]+, in |in [^;]*TestBody[^;]*; build with -g for the file and "
      "line\\))");
}

}  // namespace
