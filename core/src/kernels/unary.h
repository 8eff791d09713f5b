#pragma once
// Private: the floating-point unary ops (exp, log, sqrt, rsqrt, tanh, sigmoid, erf, gelu, silu,
// mish) and the fused backwards of tanh, sigmoid and gelu: one entry per op and direction, as
// MLX's unary_fp(in, out, Sigmoid()). The ops (ops/elementwise.cpp) allocate the output and call
// forward / backward; this layer alone chooses the code that runs: the AVX2 / AVX-512 kernels of
// the run-time table (Note [Runtime SIMD dispatch], simd.h) for contiguous float32 where the op
// has one, else an xtensor expression for contiguous float32, else a strided scalar loop
// (float64, strided input), and it splits large ranges across threads.
#include <cstdint>

#include "minigrad/shape.h"

namespace minigrad::detail::unary {

/// The op: kGelu is gelu with approximate "none", kGeluTanh with "tanh".
enum class Op { kExp, kLog, kSqrt, kRsqrt, kTanh, kSigmoid, kErf, kGelu, kGeluTanh, kSilu, kMish };

/// y = op(x) for T = float or double: x strided (sx, in elements) over shape, y contiguous of
/// that shape.
template <typename T>
void forward(Op op, const Shape& shape, const T* x, const Shape& sx, T* y);

/// gx = g * op'(v) for kTanh and kSigmoid (v their output) and kGelu, kGeluTanh (v their input);
/// g and v strided over shape (0 on broadcast dims), gx contiguous of that shape.
template <typename T>
void backward(Op op, const Shape& shape, const T* g, const Shape& sg, const T* v, const Shape& sv,
              T* gx);

}  // namespace minigrad::detail::unary
