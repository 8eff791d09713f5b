// The activations of nn/activation.h: the functional forms forward to core's ops (or compose
// them, softsign and softmin, as PyTorch), and the modules call the functional forms.
#include "minigrad/nn/activation.h"

#include <cmath>
#include <string>

#include "minigrad/error.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/math.h"
#include "repr.h"

namespace minigrad::nn {

namespace functional {

Tensor elu(Tensor x, const ELUFuncOptions& options) {
  return options.inplace() ? minigrad::elu_(x, options.alpha()) : minigrad::elu(x, options.alpha());
}
Tensor selu(Tensor x, const SELUFuncOptions& options) {
  return options.inplace() ? minigrad::selu_(x) : minigrad::selu(x);
}
Tensor celu(Tensor x, const CELUFuncOptions& options) {
  return options.inplace() ? minigrad::celu_(x, options.alpha())
                           : minigrad::celu(x, options.alpha());
}
Tensor leaky_relu(Tensor x, const LeakyReLUFuncOptions& options) {
  return options.inplace() ? minigrad::leaky_relu_(x, options.negative_slope())
                           : minigrad::leaky_relu(x, options.negative_slope());
}
Tensor hardtanh(Tensor x, const HardtanhFuncOptions& options) {
  return options.inplace() ? minigrad::hardtanh_(x, options.min_val(), options.max_val())
                           : minigrad::hardtanh(x, options.min_val(), options.max_val());
}
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options) {
  return minigrad::softplus(x, options.beta(), options.threshold());
}
Tensor hardsigmoid(Tensor x, bool inplace) {
  return inplace ? minigrad::hardsigmoid_(x) : minigrad::hardsigmoid(x);
}
Tensor hardswish(Tensor x, bool inplace) {
  return inplace ? minigrad::hardswish_(x) : minigrad::hardswish(x);
}
Tensor logsigmoid(const Tensor& x) { return minigrad::log_sigmoid(x); }
Tensor softsign(const Tensor& x) {
  MG_CHECK(x.defined(), "softsign",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return x / (1 + minigrad::abs(x));
}
Tensor softmin(const Tensor& x, const SoftminFuncOptions& options) {
  MG_CHECK(x.defined(), "softmin",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return minigrad::softmax(-x, options.dim());
}

}  // namespace functional

namespace F = functional;

namespace {
std::string inplace_suffix(bool inplace) { return inplace ? ", inplace=True" : ""; }
}  // namespace

Tensor ELUImpl::forward(const Tensor& x) const { return F::elu(x, options); }
std::string ELUImpl::extra_repr() const {
  return "alpha=" + python_float_repr(options.alpha()) + inplace_suffix(options.inplace());
}
Tensor SELUImpl::forward(const Tensor& x) const { return F::selu(x, options); }
std::string SELUImpl::extra_repr() const { return options.inplace() ? "inplace=True" : ""; }
Tensor CELUImpl::forward(const Tensor& x) const { return F::celu(x, options); }
std::string CELUImpl::extra_repr() const {
  return "alpha=" + python_float_repr(options.alpha()) + inplace_suffix(options.inplace());
}
Tensor LeakyReLUImpl::forward(const Tensor& x) const { return F::leaky_relu(x, options); }
std::string LeakyReLUImpl::extra_repr() const {
  return "negative_slope=" + python_float_repr(options.negative_slope()) +
         inplace_suffix(options.inplace());
}
HardtanhImpl::HardtanhImpl(const HardtanhOptions& options_)
    : CopyCloneable("Hardtanh"), options(options_) {
  MG_CHECK(
      options.max_val() > options.min_val(), "Hardtanh",
      "max_val must be greater than min_val, got min_val=", python_float_repr(options.min_val()),
      " and max_val=", python_float_repr(options.max_val()));
}
Tensor HardtanhImpl::forward(const Tensor& x) const { return F::hardtanh(x, options); }
std::string HardtanhImpl::extra_repr() const {
  return "min_val=" + python_float_repr(options.min_val()) +
         ", max_val=" + python_float_repr(options.max_val()) + inplace_suffix(options.inplace());
}
namespace {
/// A whole number without ".0" (Python prints Softplus's int defaults as "beta=1"), else repr.
std::string number_repr(double v) {
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<long long>(v));
  return python_float_repr(v);
}
}  // namespace

Tensor SoftplusImpl::forward(const Tensor& x) const { return F::softplus(x, options); }
std::string SoftplusImpl::extra_repr() const {
  return "beta=" + number_repr(options.beta()) + ", threshold=" + number_repr(options.threshold());
}
Tensor HardsigmoidImpl::forward(const Tensor& x) const { return F::hardsigmoid(x, inplace); }
Tensor HardswishImpl::forward(const Tensor& x) const { return F::hardswish(x, inplace); }
Tensor LogSigmoidImpl::forward(const Tensor& x) const { return F::logsigmoid(x); }
Tensor SoftsignImpl::forward(const Tensor& x) const { return F::softsign(x); }
Tensor SoftminImpl::forward(const Tensor& x) const { return F::softmin(x, options); }
std::string SoftminImpl::extra_repr() const { return "dim=" + std::to_string(options.dim()); }
}  // namespace minigrad::nn
