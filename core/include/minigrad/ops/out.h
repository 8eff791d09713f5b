#pragma once
// out= variants, as libtorch 1.13's at::*_out functions (the out tensor first):
//
//   Tensor out = mg::empty({0});
//   mg::add_out(out, a, b);          // out now holds a + b, resized to their broadcast shape
//   mg::sum_out(out, x, {1});
//
// Each computes the op, then writes the result into `out` and returns it, as ATen does:
//  - `out` is resized to the result's shape (resize_). A non-empty out of another shape is
//    resized with ATen's deprecation warning (through the WarningHandler, minigrad/warning.h);
//    an empty one (numel 0) silently.
//  - dtypes as ATen's: the result is converted to out's dtype when it may be cast to it (same or
//    higher category: float64 into float32 is fine) and throws otherwise ("result type Float
//    can't be cast to the desired output type Long"); mm_out, bmm_out, matmul_out and addmm_out
//    want out's dtype exactly ("Expected out tensor to have dtype float, but got double
//    instead"); sum_out sums in out's dtype (the input converted first), as ATen's.
//  - they are not differentiable: with grad mode on, an input or out that requires grad throws
//    ("add(): functions with out=... arguments don't support automatic differentiation, but one
//    of the arguments requires grad"). Under NoGradGuard they run.
//  - out may be one of the inputs (add_out(a, a, b)); the write bumps out's _version().
// Also here: libtorch's other ATen-level spellings (tensor(ArrayRef), set_num_interop_threads).
#include <cstdint>
#include <optional>
#include <vector>

#include "minigrad/array_ref.h"
#include "minigrad/ops/creation.h"
#include "minigrad/tensor.h"

namespace minigrad {

// ---- elementwise, one input: at::exp_out(out, self) ... (clang-format 14 re-indents the list)
// clang-format off
#define MG_OUT_UNARY_OPS(X) \
  X(neg) X(exp) X(log) X(sqrt) X(rsqrt) X(abs) X(sign) X(tanh) X(sigmoid) X(erf) X(silu) \
  X(mish) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(asinh) X(acosh) \
  X(atanh) X(log1p) X(log2) X(log10) X(expm1) X(exp2) X(floor) X(ceil) X(round) X(trunc) \
  X(frac) X(reciprocal) X(square) X(hardsigmoid) X(hardswish) X(relu)
// clang-format on
#define MG_DECLARE_UNARY_OUT(name) Tensor& name##_out(Tensor& out, const Tensor& self);
MG_OUT_UNARY_OPS(MG_DECLARE_UNARY_OUT)
#undef MG_DECLARE_UNARY_OUT
Tensor& log_sigmoid_out(Tensor& out, const Tensor& self);

// ---- elementwise, two inputs (broadcast)
/// out = self + alpha * other.
Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, Scalar alpha = 1);
Tensor& add_out(Tensor& out, const Tensor& self, Scalar other, Scalar alpha = 1);
/// out = self - alpha * other.
Tensor& sub_out(Tensor& out, const Tensor& self, const Tensor& other, Scalar alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& self, Scalar other, Scalar alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& mul_out(Tensor& out, const Tensor& self, Scalar other);
Tensor& div_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& div_out(Tensor& out, const Tensor& self, Scalar other);
Tensor& pow_out(Tensor& out, const Tensor& self, const Tensor& exponent);
Tensor& pow_out(Tensor& out, const Tensor& self, Scalar exponent);
Tensor& pow_out(Tensor& out, Scalar self, const Tensor& exponent);
Tensor& maximum_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& minimum_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& atan2_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& remainder_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& remainder_out(Tensor& out, const Tensor& self, Scalar other);
Tensor& fmod_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& fmod_out(Tensor& out, const Tensor& self, Scalar other);
Tensor& hypot_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& logaddexp_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& xlogy_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& xlogy_out(Tensor& out, const Tensor& self, Scalar other);
Tensor& clamp_out(Tensor& out, const Tensor& self, std::optional<double> min,
                  std::optional<double> max = std::nullopt);
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other);

// ---- matrix products (out's dtype must be the result's)
Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2);
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other);
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  Scalar beta = 1, Scalar alpha = 1);
Tensor& outer_out(Tensor& out, const Tensor& self, const Tensor& vec2);

// ---- reductions
/// Sums in out's dtype (self converted to it first), as ATen's sum_out without a dtype.
Tensor& sum_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim = false);
Tensor& sum_out(Tensor& out, const Tensor& self, std::int64_t dim, bool keepdim = false);
Tensor& mean_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim = false);
Tensor& mean_out(Tensor& out, const Tensor& self, std::int64_t dim, bool keepdim = false);
Tensor& amax_out(Tensor& out, const Tensor& self, const Shape& dim = {}, bool keepdim = false);
Tensor& amin_out(Tensor& out, const Tensor& self, const Shape& dim = {}, bool keepdim = false);
Tensor& logsumexp_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim = false);
Tensor& cumsum_out(Tensor& out, const Tensor& self, std::int64_t dim);
Tensor& cumprod_out(Tensor& out, const Tensor& self, std::int64_t dim);
Tensor& prod_out(Tensor& out, const Tensor& self, std::int64_t dim, bool keepdim = false);

// ---- joining
Tensor& cat_out(Tensor& out, TensorList tensors, std::int64_t dim = 0);
Tensor& stack_out(Tensor& out, TensorList tensors, std::int64_t dim = 0);

// ---- libtorch's other ATen-level spellings

/// A 1-D tensor of the values an ArrayRef views (torch::tensor(at::ArrayRef<T>)), its dtype as
/// tensor(std::vector<T>)'s.
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
Tensor tensor(ArrayRef<T> values, const TensorOptions& options = {}) {
  return tensor(values.vec(), options);
}

/// libtorch's at::set_num_interop_threads: the size of the pool that runs independent ops
/// concurrently. minigrad has no such pool (ops run one after another on the calling thread, and
/// set_num_threads sets the threads inside one op), so this only records n, with libtorch's
/// checks: n >= 1 ("Expected positive number of threads"), and one call per process ("cannot set
/// number of interop threads after parallel work has started or set_num_interop_threads
/// called").
void set_num_interop_threads(int n);
/// What set_num_interop_threads recorded, else the number of cores (libtorch's default).
int get_num_interop_threads();

}  // namespace minigrad
