// gradcheck and gradgradcheck: analytic Jacobians (one backward per output element) against
// central finite differences, in float64.
#include <cmath>
#include <random>
#include <sstream>

#include "kernels/dispatch.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/shape.h"
#include "tensor_impl.h"

namespace minigrad::autograd {

namespace {

/// Row-major position `flat` of t, as an element offset into its storage.
std::int64_t storage_index(const Tensor& t, std::int64_t flat) {
  std::int64_t off = t.storage_offset();
  for (auto d = t.dim() - 1; d >= 0; --d) {
    std::int64_t size = t.shape()[d];
    off += (flat % size) * t.strides()[d];
    flat /= size;
  }
  return off;
}

std::vector<double> evaluate(const GradcheckFn& fn, const std::vector<Tensor>& inputs) {
  // Grad mode stays on: gradgradcheck's function differentiates inside.
  Tensor out = fn(inputs);
  MG_CHECK(out.defined(), "gradcheck", "the function returned an undefined tensor");
  return out.to_vector<double>();
}

}  // namespace

GradcheckResult gradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                 const GradcheckOptions& options) {
  GradcheckResult result;
  std::vector<std::size_t> diff;  // positions of inputs that require grad
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    MG_CHECK(x.defined(), "gradcheck", "input ", i, " is undefined");
    if (!x.requires_grad()) continue;
    MG_CHECK(x.dtype() == kFloat64, "gradcheck", "input ", i, " requires grad but is ",
             dtype_name(x.dtype()),
             "; gradcheck needs float64 inputs (finite differences in float32 are too coarse)");
    MG_CHECK(x.is_leaf(), "gradcheck", "input ", i, " must be a leaf tensor");
    for (std::int64_t d = 0; d < x.dim(); ++d)
      MG_CHECK(x.strides()[d] != 0 || x.shape()[d] <= 1, "gradcheck", "input ", i,
               " has stride 0 (an expanded view); perturbing one element would change several. "
               "Pass a contiguous input and expand inside the function");
    diff.push_back(i);
  }
  MG_CHECK(!diff.empty(), "gradcheck", "no input requires grad");

  Tensor out = fn(inputs);
  MG_CHECK(out.defined(), "gradcheck", "the function returned an undefined tensor");
  MG_CHECK(out.dtype() == kFloat64, "gradcheck", "the function's output is ",
           dtype_name(out.dtype()), "; it must be float64");
  const std::int64_t n_out = out.numel();

  // Analytic Jacobian, one row per output element: analytic[k][j] = d out_j / d input_k (flat).
  std::vector<std::vector<double>> analytic(diff.size());
  for (std::size_t k = 0; k < diff.size(); ++k)
    analytic[k].assign(static_cast<std::size_t>(inputs[diff[k]].numel() * n_out), 0.0);
  if (out.requires_grad()) {
    std::vector<Tensor> wrt;
    for (auto i : diff) wrt.push_back(inputs[i]);
    for (std::int64_t j = 0; j < n_out; ++j) {
      Tensor seed = zeros(out.shape(), kFloat64);
      seed.data_ptr<double>()[j] = 1.0;
      std::vector<Tensor> g = grad({out}, wrt, {seed}, /*retain_graph=*/true,
                                   /*create_graph=*/false, /*allow_unused=*/true);
      for (std::size_t k = 0; k < diff.size(); ++k) {
        if (!g[k].defined()) continue;
        MG_CHECK(g[k].shape() == inputs[diff[k]].shape(), "gradcheck", "the gradient for input ",
                 diff[k], " has shape ", g[k].shape(), " but the input has shape ",
                 inputs[diff[k]].shape());
        std::vector<double> v = g[k].to_vector<double>();
        for (std::size_t e = 0; e < v.size(); ++e)
          analytic[k][e * static_cast<std::size_t>(n_out) + static_cast<std::size_t>(j)] = v[e];
      }
    }
  }

  // Numeric Jacobian by central differences, perturbing each input element in place.
  for (std::size_t k = 0; k < diff.size(); ++k) {
    const Tensor& x = inputs[diff[k]];
    double* data = static_cast<double*>(x.impl()->storage->data);
    for (std::int64_t e = 0; e < x.numel(); ++e) {
      std::int64_t at = storage_index(x, e);
      double orig = data[at];
      data[at] = orig + options.eps;
      std::vector<double> plus = evaluate(fn, inputs);
      data[at] = orig - options.eps;
      std::vector<double> minus = evaluate(fn, inputs);
      data[at] = orig;
      for (std::int64_t j = 0; j < n_out; ++j) {
        double numeric = (plus[j] - minus[j]) / (2 * options.eps);
        double a = analytic[k][static_cast<std::size_t>(e * n_out + j)];
        ++result.checked;
        bool close = std::fabs(a - numeric) <= options.atol + options.rtol * std::fabs(numeric);
        if (std::isnan(a) != std::isnan(numeric)) close = false;
        if (std::isnan(a) && std::isnan(numeric)) close = true;
        if (!close && result.ok) {
          std::ostringstream os;
          os << "[gradcheck] Jacobian mismatch for output 0 with respect to input " << diff[k]
             << " (shape " << detail::shape_str(x.shape()) << "), input element " << e
             << ", output element " << j << ": analytic " << a << " vs numeric " << numeric
             << " (atol " << options.atol << ", rtol " << options.rtol << ")";
          result.ok = false;
          result.message = os.str();
        }
      }
    }
  }
  if (!result.ok && options.raise_exception) throw Error(result.message);
  return result;
}

bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& options) {
  return gradcheck_report(fn, inputs, options).ok;
}

GradcheckResult gradgradcheck_report(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                                     const GradcheckOptions& options) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = fn(inputs);
  }
  MG_CHECK(out.defined(), "gradgradcheck", "the function returned an undefined tensor");
  // A fixed random grad_output v (its own generator: the user's random stream is untouched).
  std::mt19937 gen(20240611u);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> vals(static_cast<std::size_t>(out.numel()));
  for (auto& v : vals) v = u(gen);
  Tensor v = tensor(vals, out.shape(), kFloat64).requires_grad_();

  std::vector<Tensor> all = inputs;
  all.push_back(v);
  const std::size_t n = inputs.size();
  GradcheckFn first_derivative = [&fn, n](const std::vector<Tensor>& xs) {
    std::vector<Tensor> in(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(n));
    Tensor o = fn(in);
    std::vector<Tensor> wrt;
    for (const auto& x : in)
      if (x.requires_grad()) wrt.push_back(x);
    std::vector<Tensor> parts;
    if (o.requires_grad()) {
      std::vector<Tensor> g = grad({o}, wrt, {xs[n]}, true, /*create_graph=*/true, true);
      for (std::size_t k = 0; k < wrt.size(); ++k)
        parts.push_back((g[k].defined() ? g[k] : zeros_like(wrt[k])).reshape({-1}));
    } else {
      for (const auto& w : wrt) parts.push_back(zeros_like(w).reshape({-1}));
    }
    return cat(parts, 0);
  };
  return gradcheck_report(first_derivative, all, options);
}

bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& options) {
  return gradgradcheck_report(fn, inputs, options).ok;
}

}  // namespace minigrad::autograd
