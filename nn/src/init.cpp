// nn::init with torch.nn.init's formulas, drawing from the default generator in PyTorch's order.
#include "minigrad/nn/init.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"

#include <cmath>

namespace minigrad::nn::init {

namespace {

void check_float(const Tensor& t, const char* op) {
  MG_CHECK(t.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(t.is_floating_point(), op, "expected a floating-point tensor, got ",
           dtype_name(t.dtype()));
}

std::int64_t fan(const Tensor& t, const std::string& mode, const char* op) {
  MG_CHECK(mode == "fan_in" || mode == "fan_out", op,
           "mode must be \"fan_in\" or \"fan_out\", got \"", mode, "\"");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return mode == "fan_in" ? fan_in : fan_out;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  MG_CHECK(t.defined() && t.dim() >= 2, "calculate_fan_in_and_fan_out",
           "fan in and fan out can not be computed for a tensor with fewer than 2 dims (shape ",
           t.defined() ? t.shape() : Shape{}, ")");
  std::int64_t receptive = 1;
  for (std::int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

double calculate_gain(const std::string& nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity.rfind("conv", 0) == 0)
    return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1 + std::pow(slope, 2.0)));
  }
  if (nonlinearity == "selu") return 3.0 / 4;
  MG_ERROR("calculate_gain", "unsupported nonlinearity \"", nonlinearity, "\"");
}

Tensor uniform_(Tensor t, double a, double b) {
  check_float(t, "uniform_");
  NoGradGuard no_grad;
  t.uniform_(a, b);
  return t;
}

Tensor normal_(Tensor t, double mean, double std) {
  check_float(t, "normal_");
  NoGradGuard no_grad;
  t.normal_(mean, std);
  return t;
}

Tensor constant_(Tensor t, double value) {
  MG_CHECK(t.defined(), "constant_",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  NoGradGuard no_grad;
  t.fill_(value);
  return t;
}
Tensor zeros_(Tensor t) { return constant_(t, 0.0); }
Tensor ones_(Tensor t) { return constant_(t, 1.0); }

Tensor xavier_uniform_(Tensor t, double gain) {
  check_float(t, "xavier_uniform_");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double std = gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  double a = std::sqrt(3.0) * std;
  return uniform_(t, -a, a);
}

Tensor xavier_normal_(Tensor t, double gain) {
  check_float(t, "xavier_normal_");
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(t, 0.0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  check_float(t, "kaiming_uniform_");
  double gain = calculate_gain(nonlinearity, a);
  double std = gain / std::sqrt(static_cast<double>(fan(t, mode, "kaiming_uniform_")));
  double bound = std::sqrt(3.0) * std;
  return uniform_(t, -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, const std::string& mode,
                       const std::string& nonlinearity) {
  check_float(t, "kaiming_normal_");
  double gain = calculate_gain(nonlinearity, a);
  return normal_(t, 0.0, gain / std::sqrt(static_cast<double>(fan(t, mode, "kaiming_normal_"))));
}

}  // namespace minigrad::nn::init
