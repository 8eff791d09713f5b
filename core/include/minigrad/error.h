#pragma once
// minigrad::Error and the MG_CHECK macro that builds "[op] what is wrong, with the values".
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "minigrad/shape.h"

namespace minigrad {

/// Thrown for every user error: bad shapes, dims, dtypes, indices, autograd misuse.
/// The message starts with the op's name in brackets: "[matmul] a has shape (2, 3) ...".
/// An uncaught one ends the program with its message and where it was thrown (the first frame
/// outside minigrad: "train.cpp:42, in main" with -g, the function without), not only "terminate
/// called after throwing an instance of 'minigrad::Error'".
class Error : public std::invalid_argument {
 public:
  explicit Error(const std::string& message);
  explicit Error(const char* message);
  /// The return addresses of the call stack where the error was made (symbolised only if the
  /// error ends the program).
  const std::vector<void*>& trace() const { return trace_; }
  /// The message (libtorch's c10::Error::what_without_backtrace: what() carries no trace here).
  const char* what_without_backtrace() const noexcept { return what(); }

 private:
  std::vector<void*> trace_;
};

namespace detail {

/// Formats a shape as PyTorch prints sizes in messages: (2, 3), (5,), ().
std::string shape_str(const Shape& shape);

inline void append(std::ostringstream& os, const Shape& v) { os << shape_str(v); }
inline void append(std::ostringstream& os, const std::vector<std::int64_t>& v) {
  os << shape_str(v);
}
template <typename T>
void append(std::ostringstream& os, const T& v) {
  os << v;
}

template <typename... Parts>
std::string error_message(std::string_view op, const Parts&... parts) {
  std::ostringstream os;
  os << '[' << op << "] ";
  (append(os, parts), ...);
  return os.str();
}

}  // namespace detail
}  // namespace minigrad

/// MG_CHECK(cond, "op", parts...) throws minigrad::Error("[op] parts...") when cond is false.
/// Shapes (Shape or std::vector<int64_t>) among the parts print as (2, 3).
#define MG_CHECK(cond, op, ...)                                                               \
  do {                                                                                        \
    if (!(cond)) throw ::minigrad::Error(::minigrad::detail::error_message(op, __VA_ARGS__)); \
  } while (0)

#define MG_ERROR(op, ...) \
  throw ::minigrad::Error(::minigrad::detail::error_message(op, __VA_ARGS__))
