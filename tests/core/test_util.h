#pragma once
// Small helpers shared by the test files.
#include <functional>
#include <string>

#include "minigrad/error.h"

namespace minigrad::testing {

/// The message of the minigrad::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace minigrad::testing
