// out= variants (minigrad/ops/out.h): compute with the op, then check, resize and copy into out,
// as ATen's structured kernels and TensorIterator do for an out argument.
#include "minigrad/ops/out.h"

#include <atomic>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>

#include "minigrad/ops.h"
#include "minigrad/warning.h"

namespace minigrad {
namespace {

/// How out's dtype is checked against the result's.
enum class OutDtype {
  kCanCast,  // TensorIterator: the result may be cast to out's dtype (same or lower category)
  kExact,    // structured kernels that set their output's options (mm, bmm, addmm)
  kCat,      // cat and stack: TensorIterator's rule, with cat's message
};

/// c10's ScalarType name, which ATen's messages print: Float, Double, Long, Bool.
const char* scalar_type_name(Dtype d) {
  switch (d) {
    case Dtype::Bool:
      return "Bool";
    case Dtype::Int64:
      return "Long";
    case Dtype::Float32:
      return "Float";
    case Dtype::Float64:
      return "Double";
  }
  return "?";
}

/// c10::canCast: no floating point into an integer or bool, no integer into bool.
bool can_cast(Dtype from, Dtype to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

/// The name ATen's autograd message starts with: "add_out" -> "add".
std::string base_name(const std::string& op) { return op.substr(0, op.size() - 4); }

/// Refuses, as PyTorch, an out= call that autograd would have to record.
void check_no_grad(const std::string& op, const Tensor& out,
                   std::initializer_list<const Tensor*> inputs) {
  if (!is_grad_enabled()) return;
  bool any = out.requires_grad();
  for (const Tensor* t : inputs) any = any || (t->defined() && t->requires_grad());
  MG_CHECK(!any, op, base_name(op),
           "(): functions with out=... arguments don't support automatic differentiation, but "
           "one of the arguments requires grad (compute without out=, or under NoGradGuard)");
}

/// Writes `result` into `out` (ATen's resize_output, then a copy) after the dtype check.
Tensor& write_out(Tensor& out, const std::string& op, const Tensor& result, OutDtype rule) {
  switch (rule) {
    case OutDtype::kCanCast:
      MG_CHECK(can_cast(result.dtype(), out.dtype()), op, "result type ",
               scalar_type_name(result.dtype()), " can't be cast to the desired output type ",
               scalar_type_name(out.dtype()));
      break;
    case OutDtype::kExact:
      MG_CHECK(result.dtype() == out.dtype(), op, "Expected out tensor to have dtype ",
               result.dtype(), ", but got ", out.dtype(), " instead");
      break;
    case OutDtype::kCat:
      MG_CHECK(can_cast(result.dtype(), out.dtype()), op,
               "torch.cat(): input types can't be cast to the desired output type ",
               scalar_type_name(out.dtype()));
      break;
  }
  NoGradGuard no_grad;
  if (out.shape() != result.shape()) {
    if (out.numel() != 0) {
      MG_WARN("[", op, "] An output with one or more elements was resized since it had shape ",
              out.shape(), ", which does not match the required output shape ", result.shape(),
              ". This behavior is deprecated, and in a future PyTorch release outputs will not "
              "be resized unless they have zero elements. You can explicitly reuse an out "
              "tensor t by resizing it, inplace, to zero elements with t.resize_(0).");
    }
    out.resize_(result.shape());
  }
  out.copy_(result);
  return out;
}

/// The whole of an out= function: checks, computes, writes.
Tensor& run_out(Tensor& out, const char* op, std::initializer_list<const Tensor*> inputs,
                OutDtype rule, const std::function<Tensor()>& compute) {
  MG_CHECK(out.defined(), op, "out is an undefined tensor");
  check_no_grad(op, out, inputs);
  return write_out(out, op, compute(), rule);
}

std::vector<const Tensor*> pointers(TensorList tensors) {
  std::vector<const Tensor*> p;
  for (const Tensor& t : tensors) p.push_back(&t);
  return p;
}

}  // namespace

#define MG_DEFINE_UNARY_OUT(name)                                                               \
  Tensor& name##_out(Tensor& out, const Tensor& self) {                                         \
    return run_out(out, #name "_out", {&self}, OutDtype::kCanCast, [&] { return name(self); }); \
  }
MG_OUT_UNARY_OPS(MG_DEFINE_UNARY_OUT)
#undef MG_DEFINE_UNARY_OUT

Tensor& log_sigmoid_out(Tensor& out, const Tensor& self) {
  return run_out(out, "log_sigmoid_out", {&self}, OutDtype::kCanCast,
                 [&] { return log_sigmoid(self); });
}

namespace {
/// alpha * other, or other itself for alpha 1.
Tensor scaled(const Tensor& other, Scalar alpha) {
  return alpha.kind() != Scalar::Kind::Float && alpha.to_int() == 1 ? other : mul(other, alpha);
}
}  // namespace

// Two tensors (or a tensor and a number) and TensorIterator's dtype rule.
#define MG_DEFINE_BINARY_OUT(name, Other, expr)                                           \
  Tensor& name##_out(Tensor& out, const Tensor& self, Other other) {                      \
    return run_out(out, #name "_out", {&self}, OutDtype::kCanCast, [&] { return expr; }); \
  }
#define MG_DEFINE_BINARY_TENSOR_OUT(name)                                    \
  Tensor& name##_out(Tensor& out, const Tensor& self, const Tensor& other) { \
    return run_out(out, #name "_out", {&self, &other}, OutDtype::kCanCast,   \
                   [&] { return name(self, other); });                       \
  }
MG_DEFINE_BINARY_TENSOR_OUT(mul)
MG_DEFINE_BINARY_TENSOR_OUT(div)
MG_DEFINE_BINARY_TENSOR_OUT(maximum)
MG_DEFINE_BINARY_TENSOR_OUT(minimum)
MG_DEFINE_BINARY_TENSOR_OUT(atan2)
MG_DEFINE_BINARY_TENSOR_OUT(remainder)
MG_DEFINE_BINARY_TENSOR_OUT(fmod)
MG_DEFINE_BINARY_TENSOR_OUT(hypot)
MG_DEFINE_BINARY_TENSOR_OUT(logaddexp)
MG_DEFINE_BINARY_TENSOR_OUT(xlogy)
MG_DEFINE_BINARY_OUT(mul, Scalar, mul(self, other))
MG_DEFINE_BINARY_OUT(div, Scalar, div(self, other))
MG_DEFINE_BINARY_OUT(remainder, Scalar, remainder(self, other))
MG_DEFINE_BINARY_OUT(fmod, Scalar, fmod(self, other))
MG_DEFINE_BINARY_OUT(xlogy, Scalar, xlogy(self, other))
#undef MG_DEFINE_BINARY_TENSOR_OUT
#undef MG_DEFINE_BINARY_OUT

Tensor& add_out(Tensor& out, const Tensor& self, const Tensor& other, Scalar alpha) {
  return run_out(out, "add_out", {&self, &other}, OutDtype::kCanCast,
                 [&] { return add(self, scaled(other, alpha)); });
}
Tensor& add_out(Tensor& out, const Tensor& self, Scalar other, Scalar alpha) {
  return run_out(out, "add_out", {&self}, OutDtype::kCanCast, [&] {
    return add(self, scaled(scalar_tensor(other, other.default_dtype()), alpha));
  });
}
Tensor& sub_out(Tensor& out, const Tensor& self, const Tensor& other, Scalar alpha) {
  return run_out(out, "sub_out", {&self, &other}, OutDtype::kCanCast,
                 [&] { return sub(self, scaled(other, alpha)); });
}
Tensor& sub_out(Tensor& out, const Tensor& self, Scalar other, Scalar alpha) {
  return run_out(out, "sub_out", {&self}, OutDtype::kCanCast, [&] {
    return sub(self, scaled(scalar_tensor(other, other.default_dtype()), alpha));
  });
}
Tensor& pow_out(Tensor& out, const Tensor& self, const Tensor& exponent) {
  return run_out(out, "pow_out", {&self, &exponent}, OutDtype::kCanCast,
                 [&] { return pow(self, exponent); });
}
Tensor& pow_out(Tensor& out, const Tensor& self, Scalar exponent) {
  return run_out(out, "pow_out", {&self}, OutDtype::kCanCast, [&] { return pow(self, exponent); });
}
Tensor& pow_out(Tensor& out, Scalar self, const Tensor& exponent) {
  return run_out(out, "pow_out", {&exponent}, OutDtype::kCanCast,
                 [&] { return pow(self, exponent); });
}
Tensor& clamp_out(Tensor& out, const Tensor& self, std::optional<double> min,
                  std::optional<double> max) {
  return run_out(out, "clamp_out", {&self}, OutDtype::kCanCast,
                 [&] { return clamp(self, min, max); });
}
Tensor& where_out(Tensor& out, const Tensor& condition, const Tensor& self, const Tensor& other) {
  return run_out(out, "where_out", {&condition, &self, &other}, OutDtype::kCanCast,
                 [&] { return where(condition, self, other); });
}

Tensor& mm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  return run_out(out, "mm_out", {&self, &mat2}, OutDtype::kExact, [&] { return mm(self, mat2); });
}
Tensor& bmm_out(Tensor& out, const Tensor& self, const Tensor& mat2) {
  return run_out(out, "bmm_out", {&self, &mat2}, OutDtype::kExact, [&] { return bmm(self, mat2); });
}
Tensor& matmul_out(Tensor& out, const Tensor& self, const Tensor& other) {
  return run_out(out, "matmul_out", {&self, &other}, OutDtype::kExact,
                 [&] { return matmul(self, other); });
}
Tensor& addmm_out(Tensor& out, const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  Scalar beta, Scalar alpha) {
  return run_out(out, "addmm_out", {&self, &mat1, &mat2}, OutDtype::kExact,
                 [&] { return addmm(self, mat1, mat2, beta, alpha); });
}
Tensor& outer_out(Tensor& out, const Tensor& self, const Tensor& vec2) {
  return run_out(out, "outer_out", {&self, &vec2}, OutDtype::kCanCast,
                 [&] { return outer(self, vec2); });
}

Tensor& sum_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim) {
  // ATen's sum_out without a dtype sums in out's: the input is converted first (no cast check).
  return run_out(out, "sum_out", {&self}, OutDtype::kCanCast,
                 [&] { return sum(self.to(out.dtype()), dim, keepdim).to(out.dtype()); });
}
Tensor& sum_out(Tensor& out, const Tensor& self, std::int64_t dim, bool keepdim) {
  return sum_out(out, self, Shape{dim}, keepdim);
}
Tensor& mean_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim) {
  return run_out(out, "mean_out", {&self}, OutDtype::kCanCast,
                 [&] { return mean(self, dim, keepdim); });
}
Tensor& mean_out(Tensor& out, const Tensor& self, std::int64_t dim, bool keepdim) {
  return mean_out(out, self, Shape{dim}, keepdim);
}
Tensor& amax_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim) {
  return run_out(out, "amax_out", {&self}, OutDtype::kCanCast,
                 [&] { return amax(self, dim, keepdim); });
}
Tensor& amin_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim) {
  return run_out(out, "amin_out", {&self}, OutDtype::kCanCast,
                 [&] { return amin(self, dim, keepdim); });
}
Tensor& logsumexp_out(Tensor& out, const Tensor& self, const Shape& dim, bool keepdim) {
  return run_out(out, "logsumexp_out", {&self}, OutDtype::kCanCast,
                 [&] { return logsumexp(self, dim, keepdim); });
}
Tensor& cumsum_out(Tensor& out, const Tensor& self, std::int64_t dim) {
  return run_out(out, "cumsum_out", {&self}, OutDtype::kCanCast, [&] { return cumsum(self, dim); });
}
Tensor& cumprod_out(Tensor& out, const Tensor& self, std::int64_t dim) {
  return run_out(out, "cumprod_out", {&self}, OutDtype::kCanCast,
                 [&] { return cumprod(self, dim); });
}
Tensor& prod_out(Tensor& out, const Tensor& self, std::int64_t dim, bool keepdim) {
  return run_out(out, "prod_out", {&self}, OutDtype::kCanCast,
                 [&] { return prod(self, dim, keepdim); });
}

Tensor& cat_out(Tensor& out, TensorList tensors, std::int64_t dim) {
  MG_CHECK(out.defined(), "cat_out", "out is an undefined tensor");
  std::vector<const Tensor*> inputs = pointers(tensors);
  for (const Tensor* t : inputs) check_no_grad("cat_out", out, {t});
  return write_out(out, "cat_out", cat(tensors.vec(), dim), OutDtype::kCat);
}
Tensor& stack_out(Tensor& out, TensorList tensors, std::int64_t dim) {
  MG_CHECK(out.defined(), "stack_out", "out is an undefined tensor");
  std::vector<const Tensor*> inputs = pointers(tensors);
  for (const Tensor* t : inputs) check_no_grad("stack_out", out, {t});
  return write_out(out, "stack_out", stack(tensors.vec(), dim), OutDtype::kCat);
}

// ---------------------------------------------------------------- inter-op threads

namespace {
std::atomic<int> g_interop_threads{0};  // 0: not set
}  // namespace

void set_num_interop_threads(int n) {
  MG_CHECK(n > 0, "set_num_interop_threads", "Expected positive number of threads, got ", n);
  int unset = 0;
  MG_CHECK(g_interop_threads.compare_exchange_strong(unset, n), "set_num_interop_threads",
           "Error: cannot set number of interop threads after parallel work has started or "
           "set_num_interop_threads called (it was set to ",
           unset, ")");
}

int get_num_interop_threads() {
  const int n = g_interop_threads.load();
  if (n > 0) return n;
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? static_cast<int>(cores) : 1;
}

}  // namespace minigrad
