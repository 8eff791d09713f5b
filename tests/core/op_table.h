#pragma once
// The op table (PyTorch's OpInfo idea): one entry per differentiable op, with float64 sample
// inputs and error inputs. test_op_table.cpp runs gradcheck over every sample, gradgradcheck over
// the entries marked gradgrad, and checks that every error input throws an Error naming the op.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::testing {

/// One set of inputs for an op. Inputs that require grad are float64 leaves (never stride-0:
/// an expanded input is expanded inside `fn`). `fn`, when set, replaces the entry's fn (for ops
/// taking dims, sizes or other non-tensor arguments).
struct Sample {
  std::string desc;
  std::vector<Tensor> inputs;
  autograd::GradcheckFn fn;
};

/// A call that must throw minigrad::Error whose message starts with "[op]".
struct ErrorInput {
  std::string desc;
  std::string op;
  std::function<void()> call;
};

struct OpInfo {
  /// Unique entry name (a valid GoogleTest name): "add", "add_scalar", "pow_tensor", ...
  std::string name;
  autograd::GradcheckFn fn;
  std::vector<Sample> samples;
  std::vector<ErrorInput> error_inputs;
  /// Tolerances of gradcheck and gradgradcheck for this entry.
  autograd::GradcheckOptions tolerances{};
  /// Whether gradgradcheck runs on every sample too.
  bool gradgrad = false;
};

/// The table, built once on first use.
const std::vector<OpInfo>& op_table();

/// Deterministic sample values, the same in C++ and Python; element i (row-major) of make(shape,
/// seed) is, in Python:
///   t = (i + 1) * 0.6180339887498949 + seed * 0.4142135623730951; t = t - math.floor(t)
///   v = 3.6 * t - 2.0 if t < 0.5 else 3.6 * t - 1.6
/// so |v| is in [0.2, 2): no zeros (abs, relu, sign) and, in practice, no ties.
double sample_value(std::int64_t i, std::int64_t seed);
/// make(shape, seed) as a float64 tensor that does not require grad.
Tensor make(const Shape& shape, std::int64_t seed);
/// make(shape, seed) as a float64 leaf that requires grad.
Tensor arg(const Shape& shape, std::int64_t seed);
/// abs(make(shape, seed)) (values in [0.2, 2)) as a float64 leaf that requires grad.
Tensor arg_pos(const Shape& shape, std::int64_t seed);
/// make(base_shape, seed).transpose(0, 1) as a non-contiguous float64 leaf that requires grad.
Tensor arg_t(const Shape& base_shape, std::int64_t seed);
/// An int64 index tensor.
Tensor indices(const std::vector<double>& values, const Shape& shape);
/// A bool mask (non-zero values are true).
Tensor mask(const std::vector<double>& values, const Shape& shape);

}  // namespace minigrad::testing
