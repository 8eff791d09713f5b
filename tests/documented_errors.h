#pragma once
// The check behind docs/errors.md: every bad input must throw minigrad::Error with exactly its
// message, and the page must quote that message verbatim (tests/core/test_errors.cpp, and
// tests/viz/test_utils.cpp for minigrad::viz). Needs MINIGRAD_SOURCE_DIR.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "minigrad/error.h"

namespace minigrad_test {

struct BadInput {
  const char* category;
  const char* input;
  std::function<void()> call;
  const char* message;
};

inline std::string read_errors_md() {
  std::ifstream in(MINIGRAD_SOURCE_DIR "/docs/errors.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void expect_documented_messages(const std::vector<BadInput>& rows) {
  const std::string doc = read_errors_md();
  ASSERT_FALSE(doc.empty()) << "docs/errors.md is missing";
  for (const BadInput& row : rows) {
    SCOPED_TRACE(std::string(row.category) + ": " + row.input);
    std::string got;
    try {
      row.call();
      ADD_FAILURE() << "no error was thrown";
      continue;
    } catch (const minigrad::Error& e) {
      got = e.what();
    }
    EXPECT_EQ(got, row.message);
    EXPECT_NE(doc.find(std::string("`") + row.message + "`"), std::string::npos)
        << "docs/errors.md does not quote this message";
  }
}

}  // namespace minigrad_test
