// minigrad::Error: where it was thrown, and what an uncaught one prints.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "autograd/function.h"
#include "minigrad/error.h"
#include "minigrad/warning.h"

namespace minigrad {

Error::Error(const std::string& message)
    : std::invalid_argument(message), trace_(detail::capture_trace()) {}
Error::Error(const char* message)
    : std::invalid_argument(message), trace_(detail::capture_trace()) {}

namespace {

std::terminate_handler previous_handler = nullptr;

/// An uncaught minigrad::Error: its message and the user's line that threw it, then abort.
[[noreturn]] void on_terminate() {
  // What the program printed must survive the abort: with stdout redirected to a file or a pipe
  // it sits in a buffer, and a learner's last "step N loss" lines vanish exactly when they
  // matter. std::cout first (its own buffer after sync_with_stdio(false)), then every C stream.
  std::cout.flush();
  std::clog.flush();
  std::fflush(nullptr);
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const Error& err) {
      // "thrown at train.cpp:42, in main" with debug information; without it the site is the
      // function alone ("thrown in main; build with -g for the file and line").
      const std::string site = detail::creation_site(err.trace());
      const char* how = site.rfind("in ", 0) == 0 ? "thrown" : "thrown at";
      std::fprintf(stderr, "terminate called after throwing minigrad::Error:\n  %s\n  (%s %s)\n",
                   err.what(), how, site.c_str());
      std::fflush(stderr);
      std::abort();
    } catch (...) {
    }
  }
  if (previous_handler) previous_handler();
  std::abort();
}

// Installed when the library is loaded; this file is linked into every program that can throw an
// Error (the constructors live here).
[[maybe_unused]] const bool installed = [] {
  previous_handler = std::set_terminate(on_terminate);
  return true;
}();

}  // namespace
}  // namespace minigrad

// ---------------------------------------------------------------- warnings (minigrad/warning.h)

namespace minigrad {
namespace {
WarningHandler& default_handler() {
  static WarningHandler handler;
  return handler;
}
// Per thread, as c10's ThreadWarningHandler; null means the default one.
thread_local WarningHandler* t_handler = nullptr;
}  // namespace

void WarningHandler::process(const Warning& warning) {
  process(warning.source_location(), warning.msg(), warning.verbatim());
}

void WarningHandler::process(const SourceLocation& /*source_location*/, const std::string& msg,
                             bool /*verbatim*/) {
  // One write, so lines from two threads do not interleave.
  std::cerr << ("minigrad warning: " + msg + "\n");
}

void set_warning_handler(WarningHandler* handler) noexcept { t_handler = handler; }
WarningHandler* get_warning_handler() noexcept {
  return t_handler ? t_handler : &default_handler();
}

void Warning::warn(const Warning& warning) { get_warning_handler()->process(warning); }
void Warning::warn(const SourceLocation& source_location, const std::string& msg, bool verbatim) {
  warn(Warning(UserWarning{}, source_location, msg, verbatim));
}

void warn(const std::string& message, const SourceLocation& where) {
  Warning::warn(where, message, false);
}

}  // namespace minigrad
