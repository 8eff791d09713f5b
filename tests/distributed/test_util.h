#pragma once
// Helpers shared by the distributed tests.
#include <functional>
#include <string>

#include <minigrad/error.h>

namespace minigrad::testing_util {

/// The message of the minigrad::Error that f throws, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const minigrad::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace minigrad::testing_util
