#pragma once
// The depth limit of module trees (private to nn/src).
#include <string>

#include "minigrad/error.h"

namespace minigrad::nn::depth {

// Note [Module depth]
// Module trees are walked recursively (named_parameters, state_dict, train, to, apply, print, a
// Sequential's forward, clone); a Sequential nested 100,000 deep would overflow the stack. As
// Python's recursion limit stops PyTorch there, minigrad stops at kMaxModuleDepth with an Error.
constexpr int kMaxModuleDepth = 1000;
inline thread_local int module_depth = 0;

struct DepthGuard {
  DepthGuard(const char* op, const std::string& type) {
    MG_CHECK(module_depth < kMaxModuleDepth, op, type, ": modules are nested more than ",
             kMaxModuleDepth, " levels deep");
    ++module_depth;
  }
  ~DepthGuard() { --module_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

}  // namespace minigrad::nn::depth
