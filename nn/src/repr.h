#pragma once
// How nn's modules print numbers (private to nn/src; defined in layers.cpp).
#include <string>

namespace minigrad::nn {

/// A double as Python's repr writes it: the shortest round-trip digits, positional for exponents
/// in [-4, 16) (with ".0" for whole numbers), scientific otherwise: 0.5, 0.1, 0.0001, 1e-05.
std::string python_float_repr(double v);

}  // namespace minigrad::nn
