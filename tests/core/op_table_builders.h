#pragma once
// The builders the op table's family files share (defined in op_table.cpp): samples, error
// inputs and entries. docs/adding_an_op.md shows them in use.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/op_table.h"

namespace minigrad::testing {

using V = std::vector<Tensor>;
using Maker = Tensor (*)(const Shape&, std::int64_t);
using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);

/// A sample: its description, inputs and (for other arguments) its own fn.
Sample s(std::string desc, V inputs, autograd::GradcheckFn fn = {});
/// An error input: `call` must throw an Error starting with "[op]" and containing `message`.
ErrorInput e(std::string op, std::string desc, std::string message, std::function<void()> call);
/// Samples of a broadcasting binary op; `ma` and `mb` make the two operands (arg or arg_pos).
std::vector<Sample> binary_samples(Maker ma, Maker mb, BinaryOp op);
/// Samples of a unary op on inputs made by m.
std::vector<Sample> unary_samples(Maker m);
/// An entry: float64 samples, error inputs, and whether gradgradcheck runs on it.
OpInfo entry(std::string name, autograd::GradcheckFn fn, std::vector<Sample> samples,
             std::vector<ErrorInput> errors = {}, bool gradgrad = true);
using InplaceBinary = void (*)(Tensor&, const Tensor&);
using InplaceUnary = void (*)(Tensor&);
/// An in-place op's entry: op writes a clone of the first input (samples on views too, and the
/// errors of writing a leaf and of a shape that does not broadcast); name ends in "_".
OpInfo inplace_binary(std::string name, Maker ma, Maker mb, InplaceBinary op);
/// An in-place unary op's entry, as inplace_binary.
OpInfo inplace_unary(std::string name, Maker m, InplaceUnary op);
/// A default-constructed (undefined) Tensor.
Tensor undefined();

// The family files' parts of the table (op_table.cpp's build() calls them).
/// Unary and binary math (op_table_math.cpp).
void add_math(std::vector<OpInfo>& t);
/// prod, cumprod, median, nansum (op_table_reduce_more.cpp).
void add_reduce_more(std::vector<OpInfo>& t);
/// outer, cross, diag, trace (op_table_reduce_more.cpp).
void add_matrix(std::vector<OpInfo>& t);
/// pairwise_distance and the losses of minigrad/nn/loss_more.h (op_table_loss_more.cpp).
void add_loss_more(std::vector<OpInfo>& t);
/// tanh_backward, sigmoid_backward, gelu_backward (op_table_backward.cpp).
void add_backward(std::vector<OpInfo>& t);

}  // namespace minigrad::testing
