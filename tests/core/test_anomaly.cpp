// Anomaly mode (Note [Anomaly mode], autograd.h): off by default; when on, a nan or inf an op
// produces in forward or backward raises an Error naming the op and the line that created it.
// This file is compiled with -g (tests/CMakeLists.txt) so that the line can be checked.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <thread>

#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const mg::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Anomaly, OffByDefault) {
  EXPECT_FALSE(mg::autograd::is_anomaly_enabled());
  mg::Tensor x = mg::tensor({100.0f}).requires_grad_();
  mg::Tensor y = mg::exp(x);  // inf, silently, as in PyTorch
  EXPECT_TRUE(std::isinf(y.item<float>()));
}

TEST(Anomaly, ForwardInfNamesTheOpAndTheLine) {
  mg::autograd::DetectAnomalyGuard guard;
  mg::Tensor x = mg::tensor({1.0f, 100.0f}).requires_grad_();
  int line = 0;
  std::string msg;
  // clang-format off
  try { line = __LINE__; mg::Tensor y = mg::exp(x); } catch (const mg::Error& e) { msg = e.what(); }
  // clang-format on
  EXPECT_EQ(msg.rfind("[exp] produced inf in forward (created at test_anomaly.cpp:" +
                          std::to_string(line) + ", in ",
                      0),
            0u)
      << msg;
}

TEST(Anomaly, ForwardNanFromFiniteInputs) {
  mg::autograd::DetectAnomalyGuard guard;
  mg::Tensor x = mg::tensor({-1.0f}).requires_grad_();
  std::string msg = message_of([&] { mg::sqrt(x); });
  EXPECT_EQ(msg.rfind("[sqrt] produced nan in forward (created at ", 0), 0u) << msg;
}

TEST(Anomaly, BackwardInfNamesTheBackwardFunction) {
  mg::autograd::DetectAnomalyGuard guard;
  mg::Tensor x = mg::tensor({0.0f, 4.0f}).requires_grad_();
  mg::Tensor y = mg::sqrt(x).sum();  // finite forward; d sqrt(x)/dx at 0 is inf
  std::string msg = message_of([&] { y.backward(); });
  EXPECT_EQ(msg.rfind("[sqrt] produced inf in backward: SqrtBackward0's gradient for input 0 "
                      "(created at test_anomaly.cpp:",
                      0),
            0u)
      << msg;
}

// A nan a hook returns is the hook's, reported with the line that registered it (before, the
// engine skipped a node whose incoming gradient held nan, and nothing was reported).
TEST(Anomaly, AHookReturningNanNamesTheLineThatRegisteredIt) {
  mg::autograd::DetectAnomalyGuard guard;
  auto nan_hook = [](const mg::Tensor& g) { return g * std::nanf(""); };
  mg::Tensor x = mg::tensor({1.0f, 2.0f}).requires_grad_();
  mg::Tensor y = x * 2;
  int line = __LINE__ + 1;
  y.register_hook(nan_hook);
  std::string msg = message_of([&] { y.sum().backward(); });
  EXPECT_EQ(msg.rfind("[hook] a hook on the gradient of MulBackward0's output 0 returned nan in "
                      "backward (registered at test_anomaly.cpp:" +
                          std::to_string(line) + ", in ",
                      0),
            0u)
      << msg;

  mg::Tensor leaf = mg::tensor({1.0f, 2.0f}).requires_grad_();
  line = __LINE__ + 1;
  leaf.register_hook(nan_hook);
  msg = message_of([&] { (leaf * 2).sum().backward(); });
  EXPECT_EQ(msg.rfind("[hook] a hook on the gradient of a leaf tensor returned nan in backward "
                      "(registered at test_anomaly.cpp:" +
                          std::to_string(line) + ", in ",
                      0),
            0u)
      << msg;
  // A hook that passes a nan on (the gradient held it already) is not the culprit.
  mg::Tensor z = mg::tensor({1.0f}).requires_grad_();
  z.register_hook([](const mg::Tensor& g) { return g + 1; });
  EXPECT_NO_THROW(z.backward(mg::tensor({std::nanf("")})));
}

// In a std::thread the creation site is the user's line (a lambda is inlined into the thread's
// runner, which libbacktrace names), not glibc's start_thread.
TEST(Anomaly, InAThreadTheCreationSiteIsTheUsersLine) {
  std::string msg;
  int line = 0;
  std::thread worker([&] {
    mg::autograd::DetectAnomalyGuard guard;
    mg::Tensor x = mg::tensor({1.0f, 100.0f}).requires_grad_();
    // clang-format off
    try { line = __LINE__; mg::Tensor y = mg::exp(x); } catch (const mg::Error& e) { msg = e.what(); }
    // clang-format on
  });
  worker.join();
  EXPECT_EQ(
      msg.rfind(
          "[exp] produced inf in forward (created at test_anomaly.cpp:" + std::to_string(line), 0),
      0u)
      << msg;
  EXPECT_EQ(msg.find("start_thread"), std::string::npos) << msg;
}

TEST(Anomaly, MaskingWithMinusInfinityIsNotAnAnomaly) {
  mg::autograd::DetectAnomalyGuard guard;
  mg::Tensor scores = mg::randn({3, 3}).requires_grad_();
  mg::Tensor mask = mg::ones({3, 3}, mg::kBool).triu(1);
  mg::Tensor w =
      mg::softmax(mg::masked_fill(scores, mask, -std::numeric_limits<double>::infinity()), -1);
  EXPECT_NO_THROW((w * mg::randn({3, 3})).sum().backward());
  EXPECT_TRUE(scores.grad().defined());
}

TEST(Anomaly, GuardRestoresThePreviousSetting) {
  {
    mg::autograd::DetectAnomalyGuard on;
    EXPECT_TRUE(mg::autograd::is_anomaly_enabled());
    {
      mg::autograd::DetectAnomalyGuard off(false);
      EXPECT_FALSE(mg::autograd::is_anomaly_enabled());
    }
    EXPECT_TRUE(mg::autograd::is_anomaly_enabled());
  }
  EXPECT_FALSE(mg::autograd::is_anomaly_enabled());
  mg::autograd::set_detect_anomaly(true);
  EXPECT_TRUE(mg::autograd::is_anomaly_enabled());
  mg::autograd::set_detect_anomaly(false);
}

TEST(Anomaly, ATrainingStepWithAnomalyModeGivesTheSameResult) {
  auto step = [](bool anomaly) {
    mg::autograd::DetectAnomalyGuard guard(anomaly);
    mg::manual_seed(0);
    mg::nn::Linear l(4, 3);
    mg::Tensor x = mg::randn({5, 4});
    mg::nn::functional::cross_entropy(l(x), mg::tensor({0, 1, 2, 0, 1}, mg::kInt64)).backward();
    return l->weight.grad().to_vector<float>();
  };
  EXPECT_EQ(step(true), step(false));
}

}  // namespace

// An uncaught minigrad::Error ends the program with its message and the line that threw it (this
// file is compiled with -g), not only "terminate called after throwing an instance of ...".
TEST(UncaughtError, NamesTheMessageAndTheUsersLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        // noexcept: the error escapes to std::terminate, as from main() (GoogleTest would catch
        // it).
        []() noexcept {
          auto a = mg::ones({2, 3});
          auto b = mg::ones({4, 5});
          mg::matmul(a, b);
        }();
      },
      "terminate called after throwing minigrad::Error:\n  \\[matmul\\] a has shape \\(2, 3\\) "
      "and b has shape \\(4, 5\\).*\n  \\(thrown at test_anomaly.cpp:[0-9]+, in ");
}
