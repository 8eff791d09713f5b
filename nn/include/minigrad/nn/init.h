#pragma once
// nn::init: in-place initialisers with PyTorch's formulas and random streams (torch.nn.init).
// Each runs without recording history and returns its argument.
#include <string>

#include "minigrad/autograd.h"
#include "minigrad/tensor.h"

namespace minigrad::nn::init {

/// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (needs >= 2 dims).
std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& t);
/// The recommended gain: linear/sigmoid 1, tanh 5/3, relu sqrt(2), leaky_relu
/// sqrt(2 / (1 + slope^2)) (slope defaults to 0.01), selu 3/4.
double calculate_gain(const std::string& nonlinearity, std::optional<double> param = std::nullopt);

Tensor uniform_(Tensor t, double a = 0.0, double b = 1.0);
Tensor normal_(Tensor t, double mean = 0.0, double std = 1.0);
Tensor constant_(Tensor t, double value);
Tensor zeros_(Tensor t);
Tensor ones_(Tensor t);
/// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor t, double gain = 1.0);
/// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor t, double gain = 1.0);
/// U(-bound, bound) with bound = gain * sqrt(3 / fan); mode "fan_in" or "fan_out".
Tensor kaiming_uniform_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
/// N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor t, double a = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu");

}  // namespace minigrad::nn::init
