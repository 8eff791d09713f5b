#pragma once
// Helpers of the module tests (test_containers.cpp, test_small_modules.cpp): the message of the
// minigrad::Error a call throws, a module's printed form, and an element-wise comparison.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::testing {

/// The message of the minigrad::Error fn throws, or "(no error)".
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// What `std::cout << m` prints.
template <typename M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

/// Every element of t within tol of expected (t's elements in row-major order).
inline void expect_near_all(const Tensor& t, const std::vector<double>& expected, double tol) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

}  // namespace minigrad::testing
