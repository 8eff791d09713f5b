#pragma once
// The op table (PyTorch's OpInfo idea): the single list of differentiable ops. Each entry carries
// its float64 sample inputs, its error inputs (with a fragment of the expected message, as
// PyTorch's error_regex), its tolerances, its PyTorch call (the Python expression
// tests/parity/compare.py evaluates) and reference values from PyTorch. test_op_table.cpp runs
// gradcheck over every sample, gradgradcheck over the entries marked gradgrad, every error input
// and every reference value, and checks that every node name core and nn can create is produced
// by some sample (Note [Op table coverage] in test_op_table.cpp). parity_dump writes the samples
// and the PyTorch calls for compare.py. docs/adding_an_op.md says how to add an entry.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"

namespace minigrad::testing {

/// One set of inputs for an op. Inputs that require grad are float64 leaves (never stride-0:
/// an expanded input is expanded inside `fn`). `fn`, when set, replaces the entry's fn (for ops
/// taking dims, sizes or other non-tensor arguments); `torch` is then its PyTorch call.
struct Sample {
  std::string desc;
  std::vector<Tensor> inputs;
  autograd::GradcheckFn fn;
  /// The PyTorch call of a sample with its own fn: a Python expression over `x`, the list of
  /// input tensors (see OpInfo::torch).
  std::string torch = {};
};

/// A call that must throw minigrad::Error whose message starts with "[op]" and contains
/// `message` (PyTorch's ErrorInput error_regex, as a plain fragment).
struct ErrorInput {
  std::string desc;
  std::string op;
  std::string message;
  std::function<void()> call;
};

/// A forward value from PyTorch 1.13: `fn()` must give `expected` (row-major, float64) of shape
/// `shape`. `torch` is the Python expression that printed them (with make() as below,
/// torch.set_default_dtype(torch.float64) and F = torch.nn.functional).
struct Reference {
  std::string torch;
  std::function<Tensor()> fn;
  Shape shape;
  std::vector<double> expected;
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
  /// The PyTorch call of the samples without their own fn: a Python expression over `x`, the
  /// list of input tensors (with their strides and requires_grad), evaluated by
  /// tests/parity/compare.py with torch, F (torch.nn.functional), math and its helpers in scope.
  std::string torch;
  /// Why the PyTorch call is a documented convention rather than the PyTorch function itself
  /// (empty when it is the function); compare.py prints it.
  std::string torch_note;
  /// Forward values from PyTorch.
  std::vector<Reference> references;

  /// Sets the PyTorch calls: `call` for the samples without their own fn and, for those with
  /// one, the call of the sample with each desc (throws std::logic_error for an unknown desc).
  OpInfo&& py(std::string call,
              const std::vector<std::pair<std::string, std::string>>& by_desc = {},
              std::string note = {}) &&;
  /// Adds a reference value.
  OpInfo&& ref(std::string torch_expr, std::function<Tensor()> f, Shape out_shape,
               std::vector<double> values) &&;
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
