#pragma once
// Warnings, as c10's: every warning minigrad emits goes to the current WarningHandler, which by
// default writes "minigrad warning: <message>" to stderr in one write. A program (or a test) that
// wants to see, count, log or silence warnings installs its own:
//
//   struct Collect : mg::WarningHandler {
//     std::vector<std::string> messages;
//     void process(const mg::Warning& w) override { messages.push_back(w.msg()); }
//   };
//   Collect collect;
//   {
//     mg::WarningHandlerGuard guard(&collect);  // this thread, until the guard ends
//     ... code that warns ...
//   }
//
// As c10's, the handler is per thread (a guard on one thread does not see another's warnings)
// and is not owned: it must outlive its installation. Both of libtorch's spellings compile:
// 1.13's (`mg::Warning::WarningHandlerGuard`, `mg::Warning::set_warning_handler`, a handler
// overriding process(source_location, msg, verbatim)) and 2.x's (`mg::WarningUtils::...`, a
// handler overriding process(const Warning&)). Library code warns with MG_WARN(parts...).
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace minigrad {

/// Where a warning was issued (c10::SourceLocation).
struct SourceLocation {
  const char* function = "";
  const char* file = "";
  std::uint32_t line = 0;
};

class Warning;

/// Receives every warning issued on the threads it is installed on (c10::WarningHandler).
/// Override either process(): the default of the first calls the second, whose default prints.
class WarningHandler {
 public:
  virtual ~WarningHandler() = default;
  /// libtorch 2.x's signature.
  virtual void process(const Warning& warning);
  /// libtorch 1.13's signature. The default writes "minigrad warning: <msg>\n" to stderr.
  virtual void process(const SourceLocation& source_location, const std::string& msg,
                       bool verbatim);
};

/// Installs handler for this thread (nullptr: the default one); returns nothing, as c10's.
void set_warning_handler(WarningHandler* handler) noexcept;
/// This thread's handler (the default one unless another was installed).
WarningHandler* get_warning_handler() noexcept;

/// Installs a handler for this thread while alive; restores the previous one.
class WarningHandlerGuard {
 public:
  explicit WarningHandlerGuard(WarningHandler* handler) : previous_(get_warning_handler()) {
    set_warning_handler(handler);
  }
  ~WarningHandlerGuard() { set_warning_handler(previous_); }
  WarningHandlerGuard(const WarningHandlerGuard&) = delete;
  WarningHandlerGuard& operator=(const WarningHandlerGuard&) = delete;

 private:
  WarningHandler* previous_;
};

/// One warning (c10::Warning): its kind, where it was issued, and its message.
class Warning {
 public:
  struct UserWarning {};
  struct DeprecationWarning {};
  using warning_variant_t = std::variant<UserWarning, DeprecationWarning>;

  Warning(warning_variant_t type, const SourceLocation& source_location, std::string msg,
          bool verbatim)
      : type_(type), source_location_(source_location), msg_(std::move(msg)), verbatim_(verbatim) {}
  const warning_variant_t& type() const { return type_; }
  const SourceLocation& source_location() const { return source_location_; }
  const std::string& msg() const { return msg_; }
  bool verbatim() const { return verbatim_; }

  // libtorch 1.13 has a namespace c10::Warning holding these: the same spellings compile here.
  using WarningHandlerGuard = ::minigrad::WarningHandlerGuard;
  static void set_warning_handler(WarningHandler* handler) noexcept {
    ::minigrad::set_warning_handler(handler);
  }
  static WarningHandler* get_warning_handler() noexcept {
    return ::minigrad::get_warning_handler();
  }
  /// Sends a warning to this thread's handler.
  static void warn(const Warning& warning);
  static void warn(const SourceLocation& source_location, const std::string& msg,
                   bool verbatim = false);

 private:
  warning_variant_t type_;
  SourceLocation source_location_;
  std::string msg_;
  bool verbatim_;
};

/// libtorch 2.x's spellings.
namespace WarningUtils {
using ::minigrad::get_warning_handler;
using ::minigrad::set_warning_handler;
using ::minigrad::WarningHandlerGuard;
}  // namespace WarningUtils

/// Issues a user warning with this message (what MG_WARN calls).
void warn(const std::string& message, const SourceLocation& where = {});

namespace detail {
template <typename... Parts>
std::string warning_message(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}
}  // namespace detail

}  // namespace minigrad

/// MG_WARN(parts...) sends the parts, concatenated, to the current WarningHandler (TORCH_WARN).
#define MG_WARN(...)                                    \
  ::minigrad::warn(                                     \
      ::minigrad::detail::warning_message(__VA_ARGS__), \
      ::minigrad::SourceLocation{__func__, __FILE__, static_cast<std::uint32_t>(__LINE__)})
