#pragma once
// Helpers the optim tests share: the least-squares problem of test_optim.cpp's header comment,
// trajectories against PyTorch's values, and error checks.
#include <gtest/gtest.h>
#include <minigrad/minigrad.h>
#include <minigrad/optim/optim.h>

#include <cmath>
#include <string>
#include <vector>

namespace optim_test {

namespace mg = minigrad;
namespace optim = minigrad::optim;

using Rows = std::vector<std::vector<double>>;

struct LeastSquares {
  explicit LeastSquares(mg::Dtype dt = mg::kFloat64)
      : X(mg::tensor({{1., 2., 0.5}, {-1., 0.5, 2.}, {0.3, -0.7, 1.}, {2., 1., -1.}}, dt)),
        y(mg::tensor({1., -2., 0.5, 3.}, dt)),
        w(mg::tensor({0.5, -1., 2.}, dt).requires_grad_()),
        b(mg::tensor({0.1}, dt).requires_grad_()) {}
  std::vector<mg::Tensor> params() const { return {w, b}; }
  void backward() const { (X.matmul(w) + b - y).pow(2).mean().backward(); }

  mg::Tensor X, y, w, b;
};

// Steps opt and the scheduler s expected.size() - 1 times; after each (and before the first) the
// two groups' learning rates must be expected's row exactly, in s and in opt.
inline void expect_lrs(optim::lr_scheduler::LRScheduler& s, optim::Optimizer& opt,
                       const Rows& expected) {
  for (std::size_t e = 0; e < expected.size(); ++e) {
    if (e > 0) {
      opt.step();
      s.step();
    }
    ASSERT_EQ(s.get_last_lr().size(), 2u);
    for (std::size_t g = 0; g < 2; ++g) {
      EXPECT_EQ(s.get_last_lr()[g], expected[e][g]) << "epoch " << e << ", group " << g;
      EXPECT_EQ(opt.lr(g), s.get_last_lr()[g]);
    }
  }
}

// Runs expected.size() steps and compares [w, b] after each with PyTorch's values.
inline void expect_trajectory(optim::Optimizer& opt, const LeastSquares& p, const Rows& expected,
                              double rtol = 1e-10, double atol = 1e-12) {
  for (std::size_t s = 0; s < expected.size(); ++s) {
    opt.zero_grad();
    p.backward();
    opt.step();
    std::vector<double> got = p.w.to_vector<double>();
    got.push_back(p.b.item<double>());
    ASSERT_EQ(got.size(), expected[s].size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], expected[s][i], atol + rtol * std::abs(expected[s][i]))
          << "after step " << s + 1 << ", element " << i;
    }
  }
}

template <typename F>
void expect_error(F&& stmt, const std::string& op, const std::string& message = "") {
  try {
    stmt();
    ADD_FAILURE() << "expected minigrad::Error from [" << op << "]";
  } catch (const mg::Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("[" + op + "] ", 0), 0u) << what;
    EXPECT_NE(what.find(message), std::string::npos) << what;
  }
}

}  // namespace optim_test
