#pragma once
// Names of parameters, for messages that name them (Note [Parameter names for optimizers]): nn's
// Module records the dotted names, optim reads them, and neither depends on the other.
#include <string>
#include <utility>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad {

/// Records each tensor's name ("W_k.weight"). A record never keeps a tensor alive; a name
/// recorded for a submodule ("weight") does not replace its parent's fuller one.
void record_parameter_names(const std::vector<std::pair<std::string, Tensor>>& params);
/// The recorded name of p, or "" when none was recorded.
std::string parameter_name(const Tensor& p);

}  // namespace minigrad
