#pragma once
// GoogleTest helpers: check your own function's gradients in one line.
//
//   auto f = [](const std::vector<mg::Tensor>& in) { return (in[0] * in[1]).sum(); };
//   EXPECT_GRADCHECK(f, {a, b});      // a, b: float64 tensors with requires_grad
//   EXPECT_GRADGRADCHECK(f, {a, b});
//
// On failure the test prints gradcheck's report: the input, the element, the analytic and the
// numeric value. Include <gtest/gtest.h> before this header; link GTest::gtest.
#include <gtest/gtest.h>

#include "minigrad/autograd.h"

namespace minigrad::testing {

/// gradcheck as a GoogleTest assertion result (with the report as its message).
inline ::testing::AssertionResult gradcheck_passes(const autograd::GradcheckFn& fn,
                                                   const std::vector<Tensor>& inputs,
                                                   const autograd::GradcheckOptions& options = {}) {
  auto r = autograd::gradcheck_report(fn, inputs, options);
  if (r.ok) return ::testing::AssertionSuccess() << r.checked << " Jacobian entries agree";
  return ::testing::AssertionFailure() << r.message;
}

/// gradgradcheck as a GoogleTest assertion result.
inline ::testing::AssertionResult gradgradcheck_passes(
    const autograd::GradcheckFn& fn, const std::vector<Tensor>& inputs,
    const autograd::GradcheckOptions& options = {}) {
  auto r = autograd::gradgradcheck_report(fn, inputs, options);
  if (r.ok) return ::testing::AssertionSuccess() << r.checked << " Jacobian entries agree";
  return ::testing::AssertionFailure() << r.message;
}

}  // namespace minigrad::testing

#define EXPECT_GRADCHECK(fn, ...) \
  EXPECT_TRUE(::minigrad::testing::gradcheck_passes(fn, __VA_ARGS__))
#define ASSERT_GRADCHECK(fn, ...) \
  ASSERT_TRUE(::minigrad::testing::gradcheck_passes(fn, __VA_ARGS__))
#define EXPECT_GRADGRADCHECK(fn, ...) \
  EXPECT_TRUE(::minigrad::testing::gradgradcheck_passes(fn, __VA_ARGS__))
