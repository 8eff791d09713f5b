// Vector and matrix helpers (minigrad/ops/matrix.h): outer, cross, diag, trace. Each is a short
// composition of differentiable public ops (as PyTorch's CompositeImplicitAutograd outer and
// cross), so their backwards, and the backwards of those, come from the ops they use.
#include <algorithm>
#include <cstdlib>

#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/matrix.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

namespace {

void check_defined(const char* op, const Tensor& x) {
  MG_CHECK(x.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
}

Tensor cross_impl(const char* op, const Tensor& a, const Tensor& b,
                  std::optional<std::int64_t> dim) {
  check_defined(op, a);
  check_defined(op, b);
  MG_CHECK(a.dim() == b.dim(), op, "inputs must have the same number of dimensions, got ", a.dim(),
           " and ", b.dim());
  Shape s = detail::broadcast_shapes(a.shape(), b.shape(), op);
  std::int64_t d = 0;
  if (dim) {
    d = detail::wrap_dim(*dim, static_cast<std::int64_t>(s.size()), op);
  } else {
    // NOTE: torch.cross without dim takes the first dim of size 3 (deprecated in PyTorch).
    auto it = std::find(s.begin(), s.end(), 3);
    MG_CHECK(it != s.end(), op, "no dimension of size 3 in input of shape ", s);
    d = it - s.begin();
  }
  MG_CHECK(s.empty() ? false : a.size(d) == 3 && b.size(d) == 3, op, "inputs dimension ", d,
           " must have length 3. Got ", s.empty() ? 0 : a.size(d), " and ",
           s.empty() ? 0 : b.size(d));
  Tensor ae = a.expand(s), be = b.expand(s);
  auto c = [d](const Tensor& t, std::int64_t i) { return t.narrow(d, i, 1); };
  return cat({c(ae, 1) * c(be, 2) - c(ae, 2) * c(be, 1), c(ae, 2) * c(be, 0) - c(ae, 0) * c(be, 2),
              c(ae, 0) * c(be, 1) - c(ae, 1) * c(be, 0)},
             d);
}

}  // namespace

Tensor outer(const Tensor& a, const Tensor& b) {
  MG_PROFILE_OP("outer");
  check_defined("outer", a);
  check_defined("outer", b);
  MG_CHECK(a.dim() == 1, "outer", "expected 1-D argument self, but got ", a.dim(), "-D");
  MG_CHECK(b.dim() == 1, "outer", "expected 1-D argument vec2, but got ", b.dim(), "-D");
  return a.reshape({a.size(0), 1}) * b;
}

Tensor cross(const Tensor& a, const Tensor& b, std::optional<std::int64_t> dim) {
  MG_PROFILE_OP("cross");
  return cross_impl("cross", a, b, dim);
}

Tensor linalg_cross(const Tensor& a, const Tensor& b, std::int64_t dim) {
  MG_PROFILE_OP("linalg_cross");
  return cross_impl("linalg_cross", a, b, dim);
}

Tensor diag(const Tensor& x, std::int64_t diagonal) {
  MG_PROFILE_OP("diag");
  check_defined("diag", x);
  MG_CHECK(x.dim() == 1 || x.dim() == 2, "diag",
           "expected a matrix or a vector (1 or 2 dims), got a tensor of ", x.dim(), " dims");
  std::int64_t k = diagonal;
  if (x.dim() == 1) {
    // The flat positions of diagonal k in an n x n matrix, and x scattered there.
    std::int64_t len = x.size(0), n = len + std::abs(k);
    Tensor pos =
        arange(0.0, static_cast<double>(len), 1.0, kInt64) * (n + 1) + (k >= 0 ? k : -k * n);
    return scatter_add(zeros({n * n}, x.dtype()), 0, pos, x).reshape({n, n});
  }
  std::int64_t r = x.size(0), c = x.size(1);
  std::int64_t len = k >= 0 ? std::min(r, c - k) : std::min(r + k, c);
  len = std::max<std::int64_t>(len, 0);
  Tensor pos = arange(0.0, static_cast<double>(len), 1.0, kInt64) * (c + 1) +
               (len == 0 ? 0 : (k >= 0 ? k : -k * c));
  return index_select(x.reshape({-1}), 0, pos);
}

Tensor trace(const Tensor& x) {
  MG_PROFILE_OP("trace");
  check_defined("trace", x);
  MG_CHECK(x.dim() == 2, "trace", "expected a matrix, but got a tensor with dim ", x.dim());
  return sum(diag(x));
}

Tensor Tensor::outer(const Tensor& vec2) const { return minigrad::outer(*this, vec2); }
Tensor Tensor::cross(const Tensor& other, std::optional<std::int64_t> dim) const {
  return minigrad::cross(*this, other, dim);
}
Tensor Tensor::diag(std::int64_t diagonal) const { return minigrad::diag(*this, diagonal); }
Tensor Tensor::trace() const { return minigrad::trace(*this); }

}  // namespace minigrad
