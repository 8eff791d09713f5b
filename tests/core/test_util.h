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

// Whether this build runs under AddressSanitizer or ThreadSanitizer (gcc defines
// __SANITIZE_*__, clang answers __has_feature): tests of memory figures or address-space caps skip.
#if defined(__SANITIZE_ADDRESS__)
#define MG_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MG_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define MG_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MG_TEST_UNDER_TSAN 1
#endif
#endif
#ifdef MG_TEST_UNDER_ASAN
inline constexpr bool kUnderAsan = true;
#else
inline constexpr bool kUnderAsan = false;
#endif
#ifdef MG_TEST_UNDER_TSAN
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif

}  // namespace minigrad::testing
