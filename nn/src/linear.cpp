// nn::Linear.
#include "minigrad/nn/linear.h"

#include <cmath>

#include "minigrad/nn/functional.h"
#include "minigrad/nn/init.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"

namespace minigrad::nn {

LinearImpl::LinearImpl(std::int64_t in, std::int64_t out, bool with_bias, Dtype dtype)
    : Cloneable("Linear"),
      in_features(in),
      out_features(out),
      with_bias_(with_bias),
      dtype_(dtype) {
  MG_CHECK(in >= 0 && out >= 0, "Linear", "in_features (", in, ") and out_features (", out,
           ") must be non-negative");
  reset();
}

void LinearImpl::reset() {
  weight = register_parameter("weight", empty({out_features, in_features}, dtype_));
  bias = with_bias_ ? register_parameter("bias", empty({out_features}, dtype_)) : Tensor();
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // PyTorch: kaiming_uniform_(weight, a=sqrt(5)); then bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = in_features > 0 ? 1.0 / std::sqrt(static_cast<double>(in_features)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) const {
  MG_CHECK(x.defined(), "Linear", "got an undefined input");
  MG_CHECK(x.dim() >= 1 && x.size(-1) == in_features, "Linear", "input of shape ", x.shape(),
           " does not end in in_features = ", in_features, " (weight has shape ", weight.shape(),
           ")");
  MG_CHECK(x.dtype() == weight.dtype(), "Linear", "input is ", dtype_name(x.dtype()),
           " but the weight is ", dtype_name(weight.dtype()), "; convert the module with .to(mg::k",
           x.dtype() == kFloat64 ? "Float64" : "Float32", ") or the input with .to(mg::k",
           weight.dtype() == kFloat64 ? "Float64" : "Float32", ")");
  return functional::linear(x, weight, bias);
}

std::string LinearImpl::extra_repr() const {
  return "in_features=" + std::to_string(in_features) +
         ", out_features=" + std::to_string(out_features) +
         ", bias=" + (bias.defined() ? "True" : "False");
}

}  // namespace minigrad::nn
