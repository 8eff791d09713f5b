// More reductions (minigrad/ops/reduce_more.h): prod, cumprod, median, nansum, count_nonzero,
// unique and bincount. Each forward is a plain loop over rows (the reduced dim moved last and
// made contiguous); each backward, directly under its forward, is a formula of public ops, so it
// can be differentiated again.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/reduce_more.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::kOutput;
using detail::record;
using Grads = std::vector<Tensor>;

namespace {

void check_defined(const char* op, const Tensor& x) {
  MG_CHECK(x.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
}

/// The dtype of a product or a sum: floating dtypes stay, integers and bool give int64.
Dtype acc_dtype(const Tensor& x) { return x.is_floating_point() ? x.dtype() : kInt64; }

/// x without history, dim d moved last, contiguous, in dtype dt: rows of x.size(d) elements.
/// A 0-dim x is one row of one element.
Tensor rows_last(const Tensor& x, std::int64_t d, Dtype dt) {
  Tensor xd = x.detach();
  if (xd.dim() == 0) return xd.reshape({1}).to(dt).contiguous();
  Shape perm;
  for (std::int64_t k = 0; k < xd.dim(); ++k)
    if (k != d) perm.push_back(k);
  perm.push_back(d);
  return xd.permute(perm).to(dt).contiguous();
}

/// A reduction's or scan's input along one dim: the wrapped dim d (0 for a 0-dim x), its size n
/// and x's rows (rows_last) in dtype dt: acc_dtype(x) for a product, else x's.
struct Rows {
  std::int64_t d = 0, n = 1;
  Dtype dt = kFloat32;
  Tensor rows;
};
Rows rows_along(const char* op, const Tensor& x, std::int64_t dim, bool product) {
  check_defined(op, x);
  Rows rw;
  rw.d = detail::wrap_dim(dim, x.dim(), op);
  if (x.dim() == 0) rw.d = 0;
  rw.n = x.dim() == 0 ? 1 : x.size(rw.d);
  rw.dt = product ? acc_dtype(x) : x.dtype();
  rw.rows = rows_last(x, rw.d, rw.dt);
  return rw;
}

/// The inverse of rows_last for a result of the same shape (dim d back in its place).
Tensor rows_back(const Tensor& r, std::int64_t d, const Shape& shape) {
  if (shape.empty()) return r.reshape({});
  Shape perm;
  std::int64_t nd = static_cast<std::int64_t>(shape.size());
  for (std::int64_t k = 0; k < nd; ++k) perm.push_back(k < d ? k : (k == d ? nd - 1 : k - 1));
  return r.permute(perm).contiguous();
}

/// The shape of a reduction of x over dim d.
Shape reduced_shape(const Tensor& x, std::int64_t d, bool keepdim) {
  Shape s = x.shape();
  if (s.empty()) return s;
  if (keepdim)
    s[static_cast<std::size_t>(d)] = 1;
  else
    s.erase(s.begin() + d);
  return s;
}

/// The wrapped dims of a reduction (all of x's when dims is empty), checked as sum's are.
Shape wrap_dims(const char* op, const Tensor& x, const Shape& dims) {
  Shape out;
  std::int64_t nd = x.dim();
  if (dims.empty()) {
    for (std::int64_t k = 0; k < nd; ++k) out.push_back(k);
    return out;
  }
  std::vector<bool> seen(static_cast<std::size_t>(nd), false);
  for (auto d : dims) {
    std::int64_t w = detail::wrap_dim(d, nd, op);
    if (nd == 0) continue;
    MG_CHECK(!seen[static_cast<std::size_t>(w)], op, "dim ", d,
             " appears multiple times in the list of dims ", dims);
    seen[static_cast<std::size_t>(w)] = true;
    out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// g, the gradient of a reduction over the sorted dims `dims`, expanded back to `shape`.
Tensor expand_back(const Tensor& g, const Shape& shape, const Shape& dims, bool keepdim) {
  Tensor gk = g;
  if (!keepdim && !shape.empty())
    for (auto d : dims) gk = gk.unsqueeze(d);
  return gk.expand(shape);
}

/// How many zeros x has (read without history).
std::int64_t zero_count(const Tensor& x) {
  NoGradGuard ng;
  return x.numel() == 0 ? 0 : x.detach().eq(0).sum().item<std::int64_t>();
}
bool has_zero(const Tensor& x) { return zero_count(x) > 0; }

/// prod_{j != i} x[j] along dim d, for every i, as a formula of public ops (right with zeros in
/// x): each row is repeated n times with its i-th element replaced by 1, then multiplied out.
Tensor prod_others(const Tensor& x, std::int64_t d) {
  Tensor xm = x.transpose(d, -1);
  std::int64_t n = xm.size(-1);
  Shape s = xm.shape();
  s.insert(s.end() - 1, n);
  Tensor y = where(eye(n, n, kBool), Scalar(1), xm.unsqueeze(-2).expand(s));
  return prod(y, -1).transpose(d, -1);
}

/// The gradient of a product over dim d: gk and yk are the gradient and the result with d kept.
Tensor prod_grad(const Tensor& x, const Tensor& gk, const Tensor& yk, std::int64_t d) {
  // NOTE: as PyTorch's prod_backward: without zeros grad * prod / x; with zeros the product of
  // the other elements (so one zero gets the product of the rest, and two zeros give 0).
  if (!has_zero(x)) return gk * yk / x;
  return gk * prod_others(x, d);
}

}  // namespace

// ---------------------------------------------------------------- prod, cumprod

Tensor prod(const Tensor& x) {
  MG_PROFILE_OP("prod");
  check_defined("prod", x);
  Dtype dt = acc_dtype(x);
  Tensor flat = x.detach().reshape({-1}).to(dt).contiguous();
  Tensor out = detail::make_tensor({}, dt);
  detail::dispatch(dt, [&]<typename T>() {
    const T* p = flat.impl()->data<T>();
    T acc = T(1);
    for (std::int64_t i = 0; i < flat.numel(); ++i) acc = static_cast<T>(acc * p[i]);
    *out.impl()->data<T>() = acc;
  });
  record("ProdBackward0", out, {&x}, {&x, kOutput}, [](const Tensor& g, FunctionNode& n) {
    Tensor self = n.saved(0), y = n.saved(1);
    if (self.dim() == 0) return Grads{g};
    // NOTE: as PyTorch, two zeros or more give a zero gradient without computing it, unless the
    // gradient is to be differentiated again (create_graph), whose derivative is not zero.
    if (!is_grad_enabled() && zero_count(self) > 1) return Grads{zeros_like(self)};
    Tensor flat_x = self.reshape({-1});
    return Grads{prod_grad(flat_x, g.reshape({1}), y.reshape({1}), 0).reshape(self.shape())};
  });
  return out;
}

Tensor prod(const Tensor& x, std::int64_t dim, bool keepdim) {
  MG_PROFILE_OP("prod");
  Rows rw = rows_along("prod", x, dim, true);
  std::int64_t d = rw.d, n = rw.n;
  Dtype dt = rw.dt;
  Tensor rows = rw.rows;
  Tensor out = detail::make_tensor(reduced_shape(x, d, keepdim), dt);
  detail::dispatch(dt, [&]<typename T>() {
    const T* p = rows.impl()->data<T>();
    T* o = out.impl()->data<T>();
    for (std::int64_t r = 0; r < out.numel(); ++r) {
      T acc = T(1);
      for (std::int64_t i = 0; i < n; ++i) acc = static_cast<T>(acc * p[r * n + i]);
      o[r] = acc;
    }
  });
  record("ProdBackward1", out, {&x}, {&x, kOutput},
         [d, keepdim](const Tensor& g, FunctionNode& nd) {
           Tensor self = nd.saved(0), y = nd.saved(1);
           if (self.dim() == 0) return Grads{g};
           Tensor gk = keepdim ? g : g.unsqueeze(d), yk = keepdim ? y : y.unsqueeze(d);
           return Grads{prod_grad(self, gk, yk, d)};
         });
  return out;
}

Tensor cumprod(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("cumprod");
  Rows rw = rows_along("cumprod", x, dim, true);
  std::int64_t d = rw.d, n = rw.n;
  Dtype dt = rw.dt;
  Tensor rows = rw.rows;
  Tensor res = detail::make_tensor(rows.shape(), dt);
  detail::dispatch(dt, [&]<typename T>() {
    const T* p = rows.impl()->data<T>();
    T* o = res.impl()->data<T>();
    for (std::int64_t r = 0; n > 0 && r < rows.numel() / n; ++r) {
      T acc = T(1);
      for (std::int64_t i = 0; i < n; ++i) o[r * n + i] = acc = static_cast<T>(acc * p[r * n + i]);
    }
  });
  Tensor out = rows_back(res, d, x.shape());
  record("CumprodBackward0", out, {&x}, {&x, kOutput}, [d](const Tensor& g, FunctionNode& nd) {
    Tensor self = nd.saved(0), y = nd.saved(1);
    if (self.dim() == 0) return Grads{g};
    // NOTE: without zeros, grad_x[i] = sum_{k >= i} g[k] y[k] / x[i] (a reversed cumsum), as
    // PyTorch's cumprod_backward. With zeros, grad_x[i] = sum_{k >= i} g[k] prod_{j <= k, j != i}
    // x[j]: each row repeated n times with its i-th element replaced by 1, cumprod'ed, masked to
    // k >= i and summed (n^2 memory per row, only when the input has a zero).
    auto rev_cumsum = [d](const Tensor& t) { return flip(cumsum(flip(t, {d}), d), {d}); };
    if (!has_zero(self)) return Grads{rev_cumsum(g * y) / self};
    // As PyTorch's: the first formula before a row's first zero (x there is never 0; the zeros
    // are replaced by 1 so that no 0/0 reaches a second backward), the second at the first
    // zero, and 0 after it (the second formula there too under create_graph: its value is 0,
    // its derivative is not).
    Tensor is_zero = eq(self.detach(), zeros_like(self.detach()));
    Tensor zeros_so_far = cumsum(is_zero, d);
    Tensor before = eq(zeros_so_far, zeros_like(zeros_so_far));
    Tensor at_first = logical_and(is_zero, eq(zeros_so_far, ones_like(zeros_so_far)));
    Tensor simple = rev_cumsum(g * y) / where(is_zero, Scalar(1), self);
    Tensor xm = self.transpose(d, -1), gm = g.transpose(d, -1);
    std::int64_t len = xm.size(-1);
    Shape s = xm.shape();
    s.insert(s.end() - 1, len);
    Tensor rep = where(eye(len, len, kBool), Scalar(1), xm.unsqueeze(-2).expand(s));
    Tensor upper = triu(ones({len, len}, self.dtype()));
    Tensor exact = sum(cumprod(rep, -1) * upper * gm.unsqueeze(-2), {-1}).transpose(d, -1);
    if (is_grad_enabled()) return Grads{where(before, simple, exact)};
    return Grads{where(before, simple, where(at_first, exact, Scalar(0)))};
  });
  return out;
}

// ---------------------------------------------------------------- median

Tensor median(const Tensor& x) {
  MG_PROFILE_OP("median");
  check_defined("median", x);
  MG_CHECK(x.dtype() != kBool, "median", "not implemented for bool tensors");
  MG_CHECK(x.numel() > 0 || x.is_floating_point(), "median",
           "cannot compute the median of an empty ", dtype_name(x.dtype()), " tensor");
  Tensor flat = x.detach().reshape({-1}).contiguous();
  Tensor out = detail::make_tensor({}, x.dtype());
  detail::dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      std::vector<T> v(flat.impl()->data<T>(), flat.impl()->data<T>() + flat.numel());
      T* o = out.impl()->data<T>();
      bool nan = false;
      if constexpr (std::is_floating_point_v<T>)
        nan = v.empty() || std::any_of(v.begin(), v.end(), [](T a) { return std::isnan(a); });
      if (nan) {
        *o = std::numeric_limits<T>::quiet_NaN();
        return;
      }
      // NOTE: the lower of the two middle values for an even count, as torch.median.
      auto mid = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
      std::nth_element(v.begin(), mid, v.end());
      *o = *mid;
    }
  });
  record("MedianBackward0", out, {&x}, {&x, kOutput}, [](const Tensor& g, FunctionNode& n) {
    // NOTE: as PyTorch (evenly_distribute_backward): the gradient is shared evenly among the
    // elements equal to the median (the NaNs when it is NaN).
    Tensor self = n.saved(0), y = n.saved(1);
    bool nan;
    {
      NoGradGuard ng;
      nan = isnan(y.detach()).item<bool>();
    }
    Tensor m = (nan ? isnan(self.detach()) : eq(self.detach(), y.detach())).to(g.dtype());
    return Grads{g * m / m.sum()};
  });
  return out;
}

std::tuple<Tensor, Tensor> median(const Tensor& x, std::int64_t dim, bool keepdim) {
  MG_PROFILE_OP("median");
  Rows rw = rows_along("median", x, dim, false);
  std::int64_t d = rw.d, n = rw.n;
  Tensor rows = rw.rows;
  MG_CHECK(x.dtype() != kBool, "median", "not implemented for bool tensors");
  MG_CHECK(n > 0, "median", "expected reduction dim ", dim, " to have non-zero size (input shape ",
           x.shape(), ")");
  Shape shape = reduced_shape(x, d, keepdim);
  Tensor values = detail::make_tensor(shape, x.dtype());
  Tensor indices = detail::make_tensor(shape, kInt64);
  detail::dispatch(x.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* p = rows.impl()->data<T>();
      T* ov = values.impl()->data<T>();
      std::int64_t* oi = indices.impl()->data<std::int64_t>();
      std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
      for (std::int64_t r = 0; r < values.numel(); ++r) {
        const T* row = p + r * n;
        std::int64_t pick = -1;
        if constexpr (std::is_floating_point_v<T>)
          for (std::int64_t i = 0; i < n && pick < 0; ++i)
            if (std::isnan(row[i])) pick = i;  // a NaN row's median is its first NaN
        if (pick < 0) {
          std::iota(idx.begin(), idx.end(), 0);
          std::stable_sort(idx.begin(), idx.end(),
                           [row](std::int64_t a, std::int64_t b) { return row[a] < row[b]; });
          pick = idx[static_cast<std::size_t>((n - 1) / 2)];
        }
        ov[r] = row[pick];
        oi[r] = pick;
      }
    }
  });
  Shape in_shape = x.shape();
  Tensor idx_k = keepdim || in_shape.empty() ? indices : indices.unsqueeze(d);
  record("MedianBackward1", values, {&x}, {&idx_k},
         [in_shape, d, keepdim](const Tensor& g, FunctionNode& nd) {
           // The gradient goes to the index returned.
           if (in_shape.empty()) return Grads{g.reshape(in_shape)};
           Tensor gk = keepdim ? g : g.unsqueeze(d);
           return Grads{scatter_add(zeros(in_shape, g.dtype()), d, nd.saved(0), gk)};
         });
  return {values, indices};
}

// ---------------------------------------------------------------- nansum, count_nonzero

Tensor nansum(const Tensor& x, const Shape& dims, bool keepdim) {
  MG_PROFILE_OP("nansum");
  check_defined("nansum", x);
  Shape wrapped = wrap_dims("nansum", x, dims);
  Tensor out;
  {
    NoGradGuard ng;
    Tensor xd = x.detach();
    if (xd.is_floating_point()) xd = masked_fill(xd, isnan(xd), 0);
    out = sum(xd, dims, keepdim);
  }
  if (!x.is_floating_point()) return out;
  Shape shape = x.shape();
  record("NansumBackward0", out, {&x}, {&x},
         [wrapped, shape, keepdim](const Tensor& g, FunctionNode& n) {
           // NOTE: a NaN element's gradient is 0, the others get the sum's.
           Tensor self = n.saved(0);
           return Grads{masked_fill(expand_back(g, shape, wrapped, keepdim), isnan(self), 0)};
         });
  return out;
}

Tensor count_nonzero(const Tensor& x, const Shape& dims) {
  MG_PROFILE_OP("count_nonzero");
  check_defined("count_nonzero", x);
  wrap_dims("count_nonzero", x, dims);
  NoGradGuard ng;
  return sum(x.detach().ne(0), dims);
}

Tensor count_nonzero(const Tensor& x, std::optional<std::int64_t> dim) {
  return dim ? count_nonzero(x, Shape{*dim}) : count_nonzero(x, Shape{});
}

// ---------------------------------------------------------------- unique, bincount

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted, bool return_inverse,
                                            bool return_counts) {
  MG_PROFILE_OP("unique");
  check_defined("unique", x);
  // NOTE: always sorted: with sorted=false PyTorch's CPU kernel returns its hash set's order,
  // which the documentation leaves unspecified; the sorted order is one such order.
  (void)sorted;
  Tensor flat = x.detach().reshape({-1}).contiguous();
  std::int64_t n = flat.numel();
  Tensor inverse = detail::make_tensor(return_inverse ? x.shape() : Shape{0}, kInt64);
  Tensor values, counts;
  detail::dispatch(x.dtype(), [&]<typename T>() {
    const T* p = flat.impl()->data<T>();
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    // NaN sorts last; NaNs are never equal, so each is its own value (as PyTorch's sort-based
    // kernel).
    auto less = [p](std::int64_t a, std::int64_t b) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(p[a])) return false;
        if (std::isnan(p[b])) return true;
      }
      return p[a] < p[b];
    };
    std::stable_sort(order.begin(), order.end(), less);
    std::vector<T> uniq;
    std::vector<std::int64_t> cnt;
    std::int64_t* inv = inverse.impl()->data<std::int64_t>();
    for (std::int64_t k = 0; k < n; ++k) {
      T v = p[order[static_cast<std::size_t>(k)]];
      if (uniq.empty() || !(uniq.back() == v)) {
        uniq.push_back(v);
        cnt.push_back(0);
      }
      ++cnt.back();
      if (return_inverse)
        inv[order[static_cast<std::size_t>(k)]] = static_cast<std::int64_t>(uniq.size()) - 1;
    }
    auto u = static_cast<std::int64_t>(uniq.size());
    values = detail::make_tensor({u}, x.dtype());
    std::copy(uniq.begin(), uniq.end(), values.impl()->data<T>());
    counts = detail::make_tensor({return_counts ? u : 0}, kInt64);
    if (return_counts) std::copy(cnt.begin(), cnt.end(), counts.impl()->data<std::int64_t>());
  });
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted, bool return_inverse) {
  auto [values, inverse, counts] = _unique2(x, sorted, return_inverse, false);
  return {values, inverse};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, std::int64_t dim, bool sorted,
                                              bool return_inverse, bool return_counts) {
  MG_PROFILE_OP("unique_dim");
  check_defined("unique_dim", x);
  MG_CHECK(x.dim() > 0, "unique_dim", "expected a tensor of at least 1 dim, got a 0-dim tensor");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "unique_dim");
  (void)sorted;
  (void)return_inverse;
  (void)return_counts;  // NOTE: as at::unique_dim, the inverse and the counts always come back.
  Tensor xm = x.detach().transpose(0, d).contiguous();
  std::int64_t n = xm.size(0), m = n == 0 ? 0 : xm.numel() / n;
  Tensor inverse = detail::make_tensor({n}, kInt64);
  std::vector<std::int64_t> firsts, cnt;
  detail::dispatch(x.dtype(), [&]<typename T>() {
    const T* p = xm.impl()->data<T>();
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto less = [p, m](std::int64_t a, std::int64_t b) {
      return std::lexicographical_compare(p + a * m, p + a * m + m, p + b * m, p + b * m + m);
    };
    auto same = [p, m](std::int64_t a, std::int64_t b) {
      return std::equal(p + a * m, p + a * m + m, p + b * m);
    };
    std::stable_sort(order.begin(), order.end(), less);
    std::int64_t* inv = inverse.impl()->data<std::int64_t>();
    for (std::int64_t r : order) {
      if (firsts.empty() || !same(firsts.back(), r)) {
        firsts.push_back(r);
        cnt.push_back(0);
      }
      ++cnt.back();
      inv[r] = static_cast<std::int64_t>(firsts.size()) - 1;
    }
  });
  auto u = static_cast<std::int64_t>(firsts.size());
  Tensor pick = detail::make_tensor({u}, kInt64);
  std::copy(firsts.begin(), firsts.end(), pick.impl()->data<std::int64_t>());
  Tensor counts = detail::make_tensor({u}, kInt64);
  std::copy(cnt.begin(), cnt.end(), counts.impl()->data<std::int64_t>());
  Tensor values = index_select(xm, 0, pick).transpose(0, d).contiguous();
  return {values, inverse, counts};
}

Tensor bincount(const Tensor& x, const std::optional<Tensor>& weights, std::int64_t minlength) {
  MG_PROFILE_OP("bincount");
  check_defined("bincount", x);
  MG_CHECK(x.dim() == 1 && !x.is_floating_point() && x.dtype() != kBool, "bincount",
           "only supports 1-d non-negative integral inputs: got a ", dtype_name(x.dtype()),
           " tensor of shape ", x.shape());
  MG_CHECK(minlength >= 0, "bincount", "minlength should be >= 0, got ", minlength);
  bool weighted = weights && weights->defined();
  if (weighted)
    MG_CHECK(weights->dim() == 1 && weights->size(0) == x.size(0), "bincount",
             "weights should be 1-d and have the same length as input: got weights of shape ",
             weights->shape(), " for an input of shape ", x.shape());
  Tensor xi = x.detach().to(kInt64).contiguous();
  const std::int64_t* p = xi.impl()->data<std::int64_t>();
  std::int64_t bins = minlength;
  for (std::int64_t i = 0; i < xi.numel(); ++i) {
    MG_CHECK(p[i] >= 0, "bincount",
             "only supports 1-d non-negative integral inputs: got the value ", p[i]);
    bins = std::max(bins, p[i] + 1);
  }
  // NOTE: float32 and float64 weights keep their dtype; other weights give float64 (PyTorch).
  Dtype dt = !weighted ? kInt64 : weights->is_floating_point() ? weights->dtype() : kFloat64;
  Tensor out = zeros({bins}, dt);
  Tensor w = weighted ? weights->detach().to(dt).contiguous() : Tensor();
  detail::dispatch(dt, [&]<typename T>() {
    T* o = out.impl()->data<T>();
    const T* pw = weighted ? w.impl()->data<T>() : nullptr;
    for (std::int64_t i = 0; i < xi.numel(); ++i)
      o[p[i]] = static_cast<T>(o[p[i]] + (pw ? pw[i] : T(1)));
  });
  return out;
}

// ---------------------------------------------------------------- Tensor methods

Tensor Tensor::prod() const { return minigrad::prod(*this); }
Tensor Tensor::prod(std::int64_t dim, bool keepdim) const {
  return minigrad::prod(*this, dim, keepdim);
}
Tensor Tensor::cumprod(std::int64_t dim) const { return minigrad::cumprod(*this, dim); }
Tensor Tensor::median() const { return minigrad::median(*this); }
std::tuple<Tensor, Tensor> Tensor::median(std::int64_t dim, bool keepdim) const {
  return minigrad::median(*this, dim, keepdim);
}
Tensor Tensor::nansum(const Shape& dims, bool keepdim) const {
  return minigrad::nansum(*this, dims, keepdim);
}
Tensor Tensor::count_nonzero(const Shape& dims) const {
  return minigrad::count_nonzero(*this, dims);
}
Tensor Tensor::count_nonzero(std::optional<std::int64_t> dim) const {
  return minigrad::count_nonzero(*this, dim);
}
Tensor Tensor::bincount(const std::optional<Tensor>& weights, std::int64_t minlength) const {
  return minigrad::bincount(*this, weights, minlength);
}

}  // namespace minigrad
