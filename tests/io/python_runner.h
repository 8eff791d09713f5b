#pragma once
// Running Debian's python3-torch from the io tests (tests/io/test_io.cpp, test_archive.cpp);
// MINIGRAD_TEST_PYTHON overrides the interpreter (e.g. a missing path, to see the skip).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace minigrad_test {

inline const std::string& python() {
  static const std::string path = [] {
    const char* env = std::getenv("MINIGRAD_TEST_PYTHON");
    return std::string(env && *env ? env : "/usr/bin/python3");
  }();
  return path;
}

// Runs a command, returning its exit status and output (stdout and stderr).
inline int run(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* pipe = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
  return ::pclose(pipe);
}

// Why the PyTorch tests cannot run, or "" if they can.
inline std::string torch_missing() {
  if (::access(python().c_str(), X_OK) != 0) return python() + " is missing";
  std::string out;
  if (run(python() + " -c 'import torch, numpy'", out) != 0)
    return python() + " cannot import torch and numpy (install python3-torch): " + out;
  return "";
}

}  // namespace minigrad_test
