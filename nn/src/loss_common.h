#pragma once
// What the functional losses (loss.cpp, loss_more.cpp, functional.cpp, aten.cpp) and their modules
// share: the reduction, ATen's code mg::Reduction (minigrad/nn/options.h) named, parsed and applied
// in one place, the pointwise checks, and the modules' optional tensor options.
#include <string>

#include "minigrad/dtype.h"
#include "minigrad/error.h"
#include "minigrad/nn/module.h"
#include "minigrad/nn/options.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::detail {

/// Each reduction's name as the functional losses take it, by its code (PyTorch's
/// _Reduction.get_enum, the other way).
inline constexpr const char* kReductionNames[Reduction::END] = {"none", "mean", "sum"};

/// "mean", "sum" or "none" as its code; anything else throws naming op.
inline Reduction::Reduction parse_reduction(const std::string& r, const char* op) {
  for (int code = Reduction::None; code < Reduction::END; ++code)
    if (r == kReductionNames[code]) return static_cast<Reduction::Reduction>(code);
  MG_ERROR(op, "reduction must be \"mean\", \"sum\" or \"none\", got \"", r, "\"");
}

/// The elementwise loss reduced as asked (PyTorch's apply_loss_reduction).
inline Tensor reduce(const Tensor& loss, Reduction::Reduction red) {
  if (red == Reduction::Sum) return loss.sum();
  if (red == Reduction::Mean) return loss.mean();
  return loss;
}

/// A defined tensor, or throws naming op and which argument.
inline void check_defined(const Tensor& t, const char* op, const char* name) {
  MG_CHECK(t.defined(), op, name,
           " is an undefined tensor (a default-constructed Tensor, or one moved from)");
}

/// A floating-point tensor, or throws naming op and which argument.
inline void check_floating(const Tensor& t, const char* op, const char* name) {
  check_defined(t, op, name);
  MG_CHECK(t.is_floating_point(), op, name, " must be floating point, got ", dtype_name(t.dtype()));
}

/// An optional tensor option, copied for a clone (which must not share its buffers).
inline Tensor clone_if_defined(const Tensor& t) { return t.defined() ? t.clone() : Tensor(); }

/// Registers a defined optional tensor as a buffer, as PyTorch's register_buffer(name, None)
/// (which lists only defined ones); returns it.
inline Tensor register_optional_buffer(Module& m, const std::string& name, const Tensor& t) {
  return t.defined() ? m.register_buffer(name, t) : Tensor();
}

}  // namespace minigrad::nn::detail
