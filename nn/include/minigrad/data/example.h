#pragma once
// data::Example, as torch::data::Example: an input and its target; Example<Data, NoTarget> (and
// TensorExample, one tensor) has only data.
#include <utility>

#include "minigrad/tensor.h"

namespace minigrad::data {

/// One example: an input and its target (torch::data::Example).
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;
  Example() = default;
  Example(Data data_, Target target_) : data(std::move(data_)), target(std::move(target_)) {}
  Data data;
  Target target;
};

namespace example {
/// The target type of an example that has none (torch::data::example::NoTarget).
using NoTarget = void;
}  // namespace example

/// An example with data and no target; converts to and from its data.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;
  Example() = default;
  /* implicit */ Example(Data data_) : data(std::move(data_)) {}  // NOLINT
  operator Data&() { return data; }
  operator const Data&() const { return data; }
  Data data;
};

/// One tensor and no target (torch::data::TensorExample).
using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace minigrad::data
