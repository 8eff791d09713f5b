// Views: transpose, permute, expand, (un)squeeze, select, narrow, reshape/view, flatten.
// Each shares the input's storage (Note [Tensor layout]) and only computes new shape/strides.
#include <algorithm>
#include <optional>

#include "autograd/function.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::record;
using Grads = std::vector<Tensor>;

namespace {

void check_defined(const char* op, const Tensor& t) {
  MG_CHECK(t.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
}

/// Strides that view (old_shape, old_strides) as new_shape without copying, if any exist
/// (the algorithm of ATen's computeStride).
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides,
                                  const Shape& new_shape) {
  if (detail::shape_numel(old_shape) == 0 || old_shape.empty())
    return detail::contiguous_strides(new_shape);
  Shape new_strides(new_shape.size());
  auto view_d = static_cast<std::int64_t>(new_shape.size()) - 1;
  std::int64_t chunk_base_stride = old_strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (auto tensor_d = static_cast<std::int64_t>(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_shape[tensor_d];
    if (tensor_d == 0 || (old_shape[tensor_d - 1] != 1 &&
                          old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

/// Resolves one -1 entry and checks the element count.
Shape infer_shape(const Shape& shape, std::int64_t numel, const Shape& from, const char* op) {
  Shape out = shape;
  std::int64_t known = 1;
  std::optional<std::size_t> infer;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      MG_CHECK(!infer, op, "only one dimension can be inferred (-1), got shape ", shape);
      infer = i;
    } else {
      MG_CHECK(out[i] >= 0, op, "invalid shape dimension ", out[i], " in ", shape);
      // A product past int64 cannot equal the input's element count.
      MG_CHECK(!__builtin_mul_overflow(known, out[i], &known), op, "shape ", shape,
               " is invalid for input of size ", numel, " (shape ", from, ")");
    }
  }
  if (infer) {
    MG_CHECK(known != 0 && numel % known == 0, op, "shape ", shape,
             " is invalid for input of size ", numel, " (shape ", from, ")");
    out[*infer] = numel / known;
  } else {
    MG_CHECK(known == numel, op, "shape ", shape, " is invalid for input of size ", numel,
             " (shape ", from, ")");
  }
  return out;
}

Tensor reshape_impl(const Tensor& x, const Shape& shape, bool allow_copy, const char* op) {
  check_defined(op, x);
  Shape target = infer_shape(shape, x.numel(), x.shape(), op);
  auto strides = view_strides(x.shape(), x.strides(), target);
  Tensor out;
  if (strides) {
    out = detail::make_view_of(x, target, *strides, x.storage_offset());
  } else {
    MG_CHECK(allow_copy, op, "view size is not compatible with the input's size and stride (shape ",
             x.shape(), ", strides ", x.strides(),
             "): at least one dimension spans two contiguous subspaces; use reshape() instead");
    Tensor c = x.detach().contiguous();
    out = detail::make_view(c, target, detail::contiguous_strides(target), c.storage_offset());
  }
  Shape in_shape = x.shape();
  record(strides ? "ViewBackward0" : "UnsafeViewBackward0", out, {&x},
         [in_shape](const Tensor& g, FunctionNode&) { return Grads{g.reshape(in_shape)}; });
  return out;
}

}  // namespace

namespace detail {

/// zeros of in_shape with g written at [start, start + g.size(dim)) along dim: the backward of
/// narrow and select. Differentiable (its own backward narrows again).
Tensor narrow_backward(const Tensor& g, const Shape& in_shape, std::int64_t dim,
                       std::int64_t start) {
  Tensor out = zeros(in_shape, g.dtype());
  Tensor region = out.detach().narrow(dim, start, g.size(dim));
  copy_into(region, g);
  std::int64_t len = g.size(dim);
  record("SliceBackwardBackward0", out, {&g}, [dim, start, len](const Tensor& gg, FunctionNode&) {
    return Grads{gg.narrow(dim, start, len)};
  });
  return out;
}

}  // namespace detail

Tensor transpose(const Tensor& x, std::int64_t dim0, std::int64_t dim1) {
  MG_PROFILE_OP("transpose");
  check_defined("transpose", x);
  std::int64_t d0 = detail::wrap_dim(dim0, x.dim(), "transpose");
  std::int64_t d1 = detail::wrap_dim(dim1, x.dim(), "transpose");
  Shape shape = x.shape(), strides = x.strides();
  if (x.dim() > 0) {
    std::swap(shape[d0], shape[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  Tensor out = detail::make_view_of(x, shape, strides, x.storage_offset());
  record("TransposeBackward0", out, {&x},
         [d0, d1](const Tensor& g, FunctionNode&) { return Grads{g.transpose(d0, d1)}; });
  return out;
}

Tensor Tensor::t() const {
  MG_PROFILE_OP("t");
  MG_CHECK(defined(), "t", "called on an undefined tensor");
  MG_CHECK(dim() <= 2, "t", "expects a tensor with <= 2 dims, but got ", dim(), " dims (shape ",
           shape(), "); use transpose(-2, -1) for batches");
  return dim() < 2 ? minigrad::transpose(*this, 0, 0) : minigrad::transpose(*this, 0, 1);
}

Tensor permute(const Tensor& x, const Shape& dims) {
  MG_PROFILE_OP("permute");
  check_defined("permute", x);
  MG_CHECK(static_cast<std::int64_t>(dims.size()) == x.dim(), "permute", "number of dims ",
           dims.size(), " in ", dims, " does not match the tensor's ", x.dim(), " dims");
  Shape wrapped(dims.size()), shape(dims.size()), strides(dims.size());
  std::vector<bool> used(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    std::int64_t d = detail::wrap_dim(dims[i], x.dim(), "permute");
    MG_CHECK(!used[d], "permute", "dim ", dims[i], " repeats in ", dims);
    used[d] = true;
    wrapped[i] = d;
    shape[i] = x.shape()[d];
    strides[i] = x.strides()[d];
  }
  Tensor out = detail::make_view_of(x, shape, strides, x.storage_offset());
  Shape inverse(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) inverse[wrapped[i]] = static_cast<std::int64_t>(i);
  record("PermuteBackward0", out, {&x},
         [inverse](const Tensor& g, FunctionNode&) { return Grads{g.permute(inverse)}; });
  return out;
}

Tensor Tensor::expand(const Shape& target) const {
  MG_PROFILE_OP("expand");
  MG_CHECK(defined(), "expand", "called on an undefined tensor");
  const Shape& s = shape();
  MG_CHECK(target.size() >= s.size(), "expand", "the number of sizes provided (", target.size(),
           ") must be greater or equal to the number of dims in the tensor (", s.size(), ")");
  std::size_t lead = target.size() - s.size();
  Shape shape_out(target.size()), strides_out(target.size());
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      MG_CHECK(target[i] >= 0, "expand", "size ", target[i], " at new leading dim ", i,
               " must be non-negative");
      shape_out[i] = target[i];
      strides_out[i] = 0;
      continue;
    }
    std::int64_t cur = s[i - lead];
    MG_CHECK(target[i] >= -1, "expand", "size ", target[i], " at dim ", i,
             " is invalid: sizes must be non-negative, or -1 to keep the existing size");
    std::int64_t want = target[i] == -1 ? cur : target[i];
    MG_CHECK(cur == want || cur == 1, "expand", "the expanded size of the tensor (", want,
             ") must match the existing size (", cur, ") at non-singleton dim ", i,
             ": target sizes ", target, ", tensor sizes ", s);
    shape_out[i] = want;
    strides_out[i] = cur == want ? strides()[i - lead] : 0;
  }
  Tensor out = detail::make_view_of(*this, shape_out, strides_out, storage_offset());
  // The engine sums the gradient back to this tensor's shape (Note [The engine]).
  detail::record("ExpandBackward0", out, {this},
                 [](const Tensor& g, FunctionNode&) { return Grads{g}; });
  return out;
}

Tensor unsqueeze(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("unsqueeze");
  check_defined("unsqueeze", x);
  std::int64_t d = detail::wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape(), strides = x.strides();
  std::int64_t st = d < x.dim() ? shape[d] * strides[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  Tensor out = detail::make_view_of(x, shape, strides, x.storage_offset());
  record("UnsqueezeBackward0", out, {&x},
         [d](const Tensor& g, FunctionNode&) { return Grads{g.squeeze(d)}; });
  return out;
}

Tensor squeeze(const Tensor& x) {
  MG_PROFILE_OP("squeeze");
  check_defined("squeeze", x);
  Shape shape, strides;
  for (std::int64_t i = 0; i < x.dim(); ++i) {
    if (x.shape()[i] == 1) continue;
    shape.push_back(x.shape()[i]);
    strides.push_back(x.strides()[i]);
  }
  Tensor out = detail::make_view_of(x, shape, strides, x.storage_offset());
  Shape in_shape = x.shape();
  record("SqueezeBackward0", out, {&x},
         [in_shape](const Tensor& g, FunctionNode&) { return Grads{g.reshape(in_shape)}; });
  return out;
}

Tensor squeeze(const Tensor& x, std::int64_t dim) {
  MG_PROFILE_OP("squeeze");
  check_defined("squeeze", x);
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "squeeze");
  Shape shape = x.shape(), strides = x.strides();
  if (x.dim() > 0 && shape[d] == 1) {
    shape.erase(shape.begin() + d);
    strides.erase(strides.begin() + d);
  }
  Tensor out = detail::make_view_of(x, shape, strides, x.storage_offset());
  Shape in_shape = x.shape();
  record("SqueezeBackward1", out, {&x},
         [in_shape](const Tensor& g, FunctionNode&) { return Grads{g.reshape(in_shape)}; });
  return out;
}

Tensor Tensor::select(std::int64_t dim_, std::int64_t index) const {
  MG_PROFILE_OP("select");
  MG_CHECK(defined(), "select", "called on an undefined tensor");
  MG_CHECK(dim() > 0, "select", "cannot select from a 0-dim tensor");
  std::int64_t d = detail::wrap_dim(dim_, dim(), "select");
  std::int64_t n = shape()[d];
  MG_CHECK(index >= -n && index < n, "select", "index ", index, " is out of range for dim ", d,
           " of size ", n);
  std::int64_t i = index < 0 ? index + n : index;
  Shape sh = shape(), st = strides();
  std::int64_t offset = storage_offset() + i * st[d];
  sh.erase(sh.begin() + d);
  st.erase(st.begin() + d);
  Tensor out = detail::make_view_of(*this, sh, st, offset);
  Shape in_shape = shape();
  detail::record("SelectBackward0", out, {this}, [in_shape, d, i](const Tensor& g, FunctionNode&) {
    return Grads{detail::narrow_backward(g.unsqueeze(d), in_shape, d, i)};
  });
  return out;
}

Tensor Tensor::narrow(std::int64_t dim_, std::int64_t start, std::int64_t length) const {
  MG_PROFILE_OP("narrow");
  MG_CHECK(defined(), "narrow", "called on an undefined tensor");
  MG_CHECK(dim() > 0, "narrow", "cannot narrow a 0-dim tensor");
  std::int64_t d = detail::wrap_dim(dim_, dim(), "narrow");
  std::int64_t n = shape()[d];
  MG_CHECK(start >= -n && start <= n, "narrow", "start ", start, " is out of range for dim ", d,
           " of size ", n);
  std::int64_t s = start < 0 ? start + n : start;
  // NOTE: length <= n - s, not s + length <= n: a huge length would overflow the sum.
  MG_CHECK(length >= 0 && length <= n - s, "narrow", "start (", s, ") + length (", length,
           ") exceeds the size of dim ", d, " (", n, ")");
  Shape sh = shape();
  sh[d] = length;
  Tensor out = detail::make_view_of(*this, sh, strides(), storage_offset() + s * strides()[d]);
  Shape in_shape = shape();
  detail::record("SliceBackward0", out, {this}, [in_shape, d, s](const Tensor& g, FunctionNode&) {
    return Grads{detail::narrow_backward(g, in_shape, d, s)};
  });
  return out;
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  MG_PROFILE_OP("reshape");
  return reshape_impl(x, shape, /*allow_copy=*/true, "reshape");
}

Tensor Tensor::view(const Shape& shape) const {
  MG_PROFILE_OP("view");
  return reshape_impl(*this, shape, /*allow_copy=*/false, "view");
}

Tensor flatten(const Tensor& x, std::int64_t start_dim, std::int64_t end_dim) {
  MG_PROFILE_OP("flatten");
  check_defined("flatten", x);
  if (x.dim() == 0) return x.reshape({1});
  std::int64_t s = detail::wrap_dim(start_dim, x.dim(), "flatten");
  std::int64_t e = detail::wrap_dim(end_dim, x.dim(), "flatten");
  MG_CHECK(s <= e, "flatten", "start_dim (", start_dim, ") cannot come after end_dim (", end_dim,
           ")");
  Shape shape;
  for (std::int64_t i = 0; i < s; ++i) shape.push_back(x.shape()[i]);
  std::int64_t m = 1;
  for (std::int64_t i = s; i <= e; ++i) m *= x.shape()[i];
  shape.push_back(m);
  for (std::int64_t i = e + 1; i < x.dim(); ++i) shape.push_back(x.shape()[i]);
  return x.reshape(shape);
}

Tensor view_as(const Tensor& x, const Tensor& other) {
  MG_PROFILE_OP("view_as");
  check_defined("view_as", x);
  check_defined("view_as", other);
  return x.view(other.shape());
}

}  // namespace minigrad
