// Indexing: Tensor::index / index_put_ with TensorIndex lists, slice, advanced indexing (index,
// index_put), nonzero, masked_select.
//
// Note [Indexing]
// x.index({...}) works as PyTorch's get_item (torch/csrc/autograd/python_variable_indexing.cpp,
// ATen's TensorIndexing.h), in two passes. The first walks the list and applies the basic
// indices as views of x: an integer selects (the dim goes away), a Slice slices (strides times
// the step), None unsqueezes, Ellipsis skips the dims no other entry names, and a bool scalar
// unsqueezes and indexes the new dim with [0] (true) or [] (false). Tensors are set aside, each
// at the dim it stands at after the views. If there are none, the view is the answer (a new
// view even for x.index({"..."}), as PyTorch's alias). Otherwise the second pass, index(), is
// advanced indexing on that view: a bool mask of k dims becomes its k nonzero() columns; the
// index tensors broadcast to a shape B; the result is pre + B + post, where pre and post are the
// un-indexed dims before and after the indexed ones when those are adjacent, and B + (all
// un-indexed dims) when they are not. One kernel serves index and index_put: an IndexPlan holds
// the wrapped, broadcast index values and which dims of the source go before and after B; the
// element at (p, b, q) of the result is the source at offset pre[p] + adv[b] + post[q], computed
// from the strides of whatever tensor the plan is applied to. index's backward puts the
// gradient into zeros with the same plan (accumulating duplicates), index_put's backward gathers
// with it, so both are differentiable any number of times.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>

#include "autograd/function.h"
#include "minigrad/dispatch.h"
#include "minigrad/indexing.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::needs_grad;
using detail::record;
using Grads = std::vector<Tensor>;

// ---------------------------------------------------------------- TensorIndex

namespace indexing {

Slice::Slice(std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
             std::optional<std::int64_t> step)
    : start_(start.value_or(0)),
      stop_(stop.value_or(std::numeric_limits<std::int64_t>::max())),
      step_(step.value_or(1)) {
  MG_CHECK(step_ != 0, "index", "slice step cannot be zero");
  // Python's defaults for a negative step; the step is refused later, as PyTorch, but the
  // object itself stays what the user wrote.
  if (step_ < 0 && !start) start_ = std::numeric_limits<std::int64_t>::max();
  if (step_ < 0 && !stop) stop_ = std::numeric_limits<std::int64_t>::min();
}

TensorIndex::TensorIndex(const char* str) : kind_(Kind::kEllipsis) {
  MG_CHECK(str != nullptr && std::string(str) == "...", "index", "expected \"...\" to stand for ",
           "Ellipsis, but got the string \"", str ? str : "(null)", "\"");
}

TensorIndex::TensorIndex(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {
  MG_CHECK(tensor_.defined(), "index", "an index tensor is undefined");
}

std::ostream& operator<<(std::ostream& os, const TensorIndex& index) {
  auto end = [&](std::int64_t v) -> std::ostream& {
    if (v == std::numeric_limits<std::int64_t>::max() ||
        v == std::numeric_limits<std::int64_t>::min())
      return os << "None";
    return os << v;
  };
  switch (index.kind()) {
    case TensorIndex::Kind::kNone:
      return os << "None";
    case TensorIndex::Kind::kEllipsis:
      return os << "...";
    case TensorIndex::Kind::kInteger:
      return os << index.integer();
    case TensorIndex::Kind::kBoolean:
      return os << (index.boolean() ? "True" : "False");
    case TensorIndex::Kind::kSlice:
      end(index.slice().start()) << ":";
      end(index.slice().stop()) << ":";
      return os << index.slice().step();
    case TensorIndex::Kind::kTensor:
      return os << "tensor of shape " << detail::shape_str(index.tensor().shape()) << " ("
                << dtype_name(index.tensor().dtype()) << ")";
  }
  return os;
}

}  // namespace indexing

// ---------------------------------------------------------------- slice

Tensor Tensor::slice(std::int64_t dim_, std::optional<std::int64_t> start,
                     std::optional<std::int64_t> end, std::int64_t step) const {
  MG_CHECK(defined(), "slice", "called on an undefined tensor");
  MG_CHECK(dim() > 0, "slice", "cannot slice a 0-dim tensor");
  MG_CHECK(step > 0, "slice", "step must be greater than zero, got ", step);
  std::int64_t d = detail::wrap_dim(dim_, dim(), "slice");
  std::int64_t n = shape()[d];
  // Python's clamping: negative ends count from the back, then both are clamped to [0, n].
  auto clamp_end = [n](std::int64_t v) {
    if (v < 0) v = v < -n ? 0 : v + n;
    return std::min(v, n);
  };
  std::int64_t s = clamp_end(start.value_or(0));
  std::int64_t e = std::max(s, clamp_end(end.value_or(n)));
  if (step == 1) return narrow(d, s, e - s);
  std::int64_t len = detail::ceil_div(e - s, step);
  Shape sh = shape(), st = strides();
  sh[d] = len;
  std::int64_t offset = storage_offset() + s * st[d];
  // PyTorch's stride * step; with a huge step (at most one element along d, so the stride is
  // never used) that product may overflow, and the dim keeps its stride.
  std::int64_t stepped = 0;
  if (!__builtin_mul_overflow(st[d], step, &stepped)) st[d] = stepped;
  Tensor out = detail::make_view_of(*this, sh, st, offset);
  Shape in_shape = shape();
  record("SliceBackward0", out, {this}, [in_shape, d, s, e, step](const Tensor& g, FunctionNode&) {
    // Written with a differentiable copy_ into a view of zeros, so create_graph works.
    Tensor z = zeros(in_shape, g.dtype());
    z.slice(d, s, e, step).copy_(g);
    return Grads{z};
  });
  return out;
}

// ---------------------------------------------------------------- the plan and its kernels

namespace {

/// Where advanced indexing reads or writes (Note [Indexing]). Independent of strides.
struct IndexPlan {
  Shape src_shape;
  std::vector<std::int64_t> adv_dims;             // source dims indexed by tensors, ascending
  std::vector<std::vector<std::int64_t>> idx;     // per adv dim: the wrapped values, one per b
  Shape b_shape;                                  // the broadcast shape of the index tensors
  std::vector<std::int64_t> pre_dims, post_dims;  // source dims placed before and after B
  Shape out_shape;
  std::int64_t nb() const { return detail::shape_numel(b_shape); }
};
using PlanPtr = std::shared_ptr<const IndexPlan>;

/// Whether shapes a and b broadcast together (numpy's rule, aligned at the last dim).
bool broadcastable(const Shape& a, const Shape& b) {
  for (std::size_t k = 1; k <= std::min(a.size(), b.size()); ++k) {
    std::int64_t x = a[a.size() - k], y = b[b.size() - k];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

/// Whether a tensor of shape from can be expanded to shape to.
bool broadcastable_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (std::size_t k = 1; k <= from.size(); ++k) {
    std::int64_t x = from[from.size() - k];
    if (x != 1 && x != to[to.size() - k]) return false;
  }
  return true;
}

/// The offsets (in elements) of every position of the given dims of t, row-major.
std::vector<std::int64_t> offsets_of(const Tensor& t, const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> off{0};
  for (std::int64_t d : dims) {
    std::vector<std::int64_t> next;
    next.reserve(off.size() * static_cast<std::size_t>(t.size(d)));
    for (std::int64_t o : off)
      for (std::int64_t i = 0; i < t.size(d); ++i) next.push_back(o + i * t.stride(d));
    off = std::move(next);
  }
  return off;
}

/// Calls fn(out_position, src_offset) for every element of the plan's result, in row-major
/// order of the result, with offsets into t (relative to t's first element).
template <typename F>
void for_each_element(const IndexPlan& plan, const Tensor& t, F&& fn) {
  std::vector<std::int64_t> pre = offsets_of(t, plan.pre_dims);
  std::vector<std::int64_t> post = offsets_of(t, plan.post_dims);
  std::int64_t nb = plan.nb();
  std::vector<std::int64_t> adv(static_cast<std::size_t>(nb), 0);
  for (std::size_t j = 0; j < plan.adv_dims.size(); ++j) {
    std::int64_t stride = t.stride(plan.adv_dims[j]);
    for (std::int64_t b = 0; b < nb; ++b) adv[b] += plan.idx[j][b] * stride;
  }
  std::int64_t pos = 0;
  for (std::int64_t p : pre)
    for (std::int64_t b = 0; b < nb; ++b)
      for (std::int64_t q : post) fn(pos++, p + adv[b] + q);
}

/// The plan's result read from src, as a new contiguous tensor.
Tensor gather_plan(const Tensor& src, const IndexPlan& plan) {
  Tensor out = detail::make_tensor(plan.out_shape, src.dtype());
  dispatch(src.dtype(), [&]<typename T>() {
    const T* s = src.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for_each_element(plan, src, [&](std::int64_t pos, std::int64_t off) { o[pos] = s[off]; });
  });
  return out;
}

/// Writes (or adds) values, broadcast to the plan's result shape, into dst's elements.
void scatter_plan(const Tensor& dst, const IndexPlan& plan, const Tensor& values, bool accumulate) {
  Tensor v = values.detach().expand(plan.out_shape).contiguous();
  if (v.impl()->storage == dst.impl()->storage) v = v.clone();
  dispatch(dst.dtype(), [&]<typename T>() {
    T* d = dst.data_ptr<T>();
    const T* s = v.data_ptr<T>();
    if (accumulate) {
      for_each_element(plan, dst, [&](std::int64_t pos, std::int64_t off) {
        if constexpr (std::is_same_v<T, bool>)
          d[off] = d[off] || s[pos];
        else
          d[off] += s[pos];
      });
    } else {
      for_each_element(plan, dst, [&](std::int64_t pos, std::int64_t off) { d[off] = s[pos]; });
    }
  });
}

Tensor put_plan(const Tensor& self, const PlanPtr& plan, const Tensor& values, bool accumulate);

/// index with a ready plan: records IndexBackward0.
Tensor index_plan(const Tensor& x, const PlanPtr& plan) {
  Tensor out = gather_plan(x, *plan);
  record("IndexBackward0", out, {&x}, [plan](const Tensor& g, FunctionNode&) {
    return Grads{put_plan(zeros(plan->src_shape, g.dtype()), plan, g, /*accumulate=*/true)};
  });
  return out;
}

/// index_put with a ready plan: records IndexPutBackward0.
Tensor put_plan(const Tensor& self, const PlanPtr& plan, const Tensor& values, bool accumulate) {
  Tensor out = self.detach().clone();
  scatter_plan(out, *plan, values, accumulate);
  Shape values_shape = values.shape();
  record("IndexPutBackward0", out, {&self, &values},
         [plan, accumulate, values_shape](const Tensor& g, FunctionNode& n) {
           Tensor gs, gv;
           if (n.needs_input_grad(0))
             gs = accumulate ? g : put_plan(g, plan, zeros({}, g.dtype()), false);
           if (n.needs_input_grad(1)) gv = detail::sum_to(index_plan(g, plan), values_shape);
           return Grads{gs, gv};
         });
  return out;
}

/// Checks the index list against x and builds the plan (Note [Indexing]).
PlanPtr make_plan(const Tensor& x, const std::vector<std::optional<Tensor>>& indices,
                  const char* op) {
  MG_CHECK(x.defined(), op, "called on an undefined tensor");
  // Bool masks become their nonzero() columns, one per dim they cover.
  std::vector<std::optional<Tensor>> list;
  for (const auto& t : indices) {
    if (!t || !t->defined()) {
      list.emplace_back(std::nullopt);
      continue;
    }
    MG_CHECK(t->dtype() == kInt64 || t->dtype() == kBool, op,
             "tensors used as indices must be int64 or bool tensors, but got ",
             dtype_name(t->dtype()));
    if (t->dtype() == kInt64) {
      list.emplace_back(*t);
      continue;
    }
    std::int64_t at = static_cast<std::int64_t>(list.size());
    for (std::int64_t k = 0; k < t->dim(); ++k) {
      MG_CHECK(at + k < x.dim() && t->size(k) == x.size(at + k), op, "the shape of the mask ",
               t->shape(), " at index ", k, " does not match the shape of the indexed tensor ",
               x.shape(), " at index ", at + k);
    }
    Tensor nz = nonzero(*t);
    for (std::int64_t k = 0; k < t->dim(); ++k) list.emplace_back(nz.select(1, k));
  }
  MG_CHECK(static_cast<std::int64_t>(list.size()) <= x.dim(), op,
           "too many indices for tensor of dimension ", x.dim(), " (got ", list.size(), ")");
  auto plan = std::make_shared<IndexPlan>();
  plan->src_shape = x.shape();
  std::vector<Tensor> tensors;
  for (std::size_t d = 0; d < list.size(); ++d) {
    if (!list[d]) continue;
    if (tensors.empty()) {
      plan->b_shape = list[d]->shape();
    } else {
      MG_CHECK(broadcastable(plan->b_shape, list[d]->shape()), op,
               "shape mismatch: indexing tensors could not be broadcast together with shapes ",
               plan->b_shape, " and ", list[d]->shape());
      plan->b_shape = detail::broadcast_shapes(plan->b_shape, list[d]->shape(), op);
    }
    plan->adv_dims.push_back(static_cast<std::int64_t>(d));
    tensors.push_back(*list[d]);
  }
  MG_CHECK(!tensors.empty(), op, "internal error: no index tensor");
  for (std::size_t j = 0; j < tensors.size(); ++j) {
    std::int64_t d = plan->adv_dims[j];
    std::int64_t n = x.size(d);
    std::vector<std::int64_t> v =
        tensors[j].expand(plan->b_shape).contiguous().to_vector<std::int64_t>();
    for (std::int64_t& i : v) {
      MG_CHECK(i >= -n && i < n, op, "index ", i, " is out of bounds for dimension ", d,
               " with size ", n);
      if (i < 0) i += n;
    }
    plan->idx.push_back(std::move(v));
  }
  std::int64_t first = plan->adv_dims.front(), last = plan->adv_dims.back();
  bool adjacent = last - first + 1 == static_cast<std::int64_t>(plan->adv_dims.size());
  for (std::int64_t d = 0; d < x.dim(); ++d) {
    if (d >= first && d <= last &&
        std::find(plan->adv_dims.begin(), plan->adv_dims.end(), d) != plan->adv_dims.end())
      continue;
    (adjacent && d < first ? plan->pre_dims : plan->post_dims).push_back(d);
  }
  for (std::int64_t d : plan->pre_dims) plan->out_shape.push_back(x.size(d));
  for (std::int64_t s : plan->b_shape) plan->out_shape.push_back(s);
  for (std::int64_t d : plan->post_dims) plan->out_shape.push_back(x.size(d));
  return plan;
}

/// Whether a and b share storage and their element ranges intersect (PyTorch's partial or full
/// overlap, which index_put_ refuses).
bool overlaps(const Tensor& a, const Tensor& b) {
  if (a.impl()->storage != b.impl()->storage || a.numel() == 0 || b.numel() == 0) return false;
  auto range = [](const Tensor& t) {
    std::int64_t lo = t.storage_offset(), hi = lo;
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      std::int64_t span = (t.size(d) - 1) * t.stride(d);
      (span < 0 ? lo : hi) += span;
    }
    return std::pair{lo, hi};
  };
  auto [alo, ahi] = range(a);
  auto [blo, bhi] = range(b);
  return alo <= bhi && blo <= ahi;
}

bool has_tensor(const std::vector<std::optional<Tensor>>& indices) {
  return std::any_of(indices.begin(), indices.end(),
                     [](const auto& t) { return t && t->defined(); });
}

}  // namespace

// ---------------------------------------------------------------- advanced indexing

Tensor index(const Tensor& x, const std::vector<std::optional<Tensor>>& indices) {
  MG_PROFILE_OP("index");
  MG_CHECK(x.defined(), "index", "called on an undefined tensor");
  if (!has_tensor(indices)) return x.index({"..."});
  return index_plan(x, make_plan(x, indices, "index"));
}

Tensor index_put(const Tensor& x, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate) {
  MG_PROFILE_OP("index_put");
  MG_CHECK(x.defined() && values.defined(), "index_put", "called with an undefined tensor");
  MG_CHECK(values.dtype() == x.dtype(), "index_put",
           "index put requires the source and destination dtypes match, got ",
           dtype_name(x.dtype()), " for the destination and ", dtype_name(values.dtype()),
           " for the source");
  if (!has_tensor(indices)) {
    // No index tensor: every element is indexed.
    Tensor v = values.expand(x.shape());
    return accumulate ? x + v : v.clone();
  }
  PlanPtr plan = make_plan(x, indices, "index_put");
  MG_CHECK(broadcastable_to(values.shape(), plan->out_shape), "index_put",
           "shape mismatch: value tensor of shape ", values.shape(),
           " cannot be broadcast to indexing result of shape ", plan->out_shape);
  return put_plan(x, plan, values, accumulate);
}

Tensor nonzero(const Tensor& x) {
  MG_PROFILE_OP("nonzero");
  MG_CHECK(x.defined(), "nonzero", "called on an undefined tensor");
  Tensor c = x.detach().contiguous();
  std::vector<std::int64_t> hits;
  dispatch(c.dtype(), [&]<typename T>() {
    const T* p = c.data_ptr<T>();
    for (std::int64_t i = 0; i < c.numel(); ++i)
      if (p[i] != T(0)) hits.push_back(i);
  });
  std::int64_t nd = x.dim();
  Tensor out = detail::make_tensor({static_cast<std::int64_t>(hits.size()), nd}, kInt64);
  std::int64_t* o = out.data_ptr<std::int64_t>();
  for (std::size_t h = 0; h < hits.size(); ++h) {
    std::int64_t rem = hits[h];
    for (std::int64_t d = nd - 1; d >= 0; --d) {
      o[static_cast<std::int64_t>(h) * nd + d] = rem % x.size(d);
      rem /= x.size(d);
    }
  }
  return out;
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  MG_PROFILE_OP("masked_select");
  MG_CHECK(x.defined() && mask.defined(), "masked_select", "called with an undefined tensor");
  MG_CHECK(mask.dtype() == kBool, "masked_select", "mask must be a bool tensor, got ",
           dtype_name(mask.dtype()));
  Shape shape = detail::broadcast_shapes(x.shape(), mask.shape(), "masked_select");
  return index(x.expand(shape), {mask.expand(shape)});
}

// ---------------------------------------------------------------- TensorIndex lists

namespace {

using indexing::TensorIndex;

/// How many dims of the source the list names (ints, slices, tensors; a bool mask its dims).
std::int64_t specified_dims(const TensorIndex* begin, const TensorIndex* end) {
  std::int64_t n = 0;
  for (const TensorIndex* i = begin; i != end; ++i) {
    if (i->is_integer() || i->is_slice()) ++n;
    if (i->is_tensor()) n += i->tensor().dtype() == kBool ? i->tensor().dim() : 1;
  }
  return n;
}

/// An index tensor standing for a bool scalar on a new size-1 dim: [0] or [].
Tensor bool_index(bool b) { return b ? zeros({1}, kInt64) : zeros({0}, kInt64); }

/// The first pass of Note [Indexing]: the basic indices as views; the tensors set aside.
Tensor apply_slicing(const Tensor& self, const TensorIndex* begin, const TensorIndex* end,
                     std::vector<std::optional<Tensor>>& tensors, const char* op) {
  MG_CHECK(self.defined(), op, "called on an undefined tensor");
  // As PyTorch, an integer into a 0-dim tensor is named before "too many indices".
  MG_CHECK(self.dim() > 0 ||
               std::none_of(begin, end, [](const TensorIndex& i) { return i.is_integer(); }),
           op,
           "invalid index of a 0-dim tensor; use item<T>() to convert a 0-dim tensor to a "
           "number");
  std::int64_t specified = specified_dims(begin, end);
  MG_CHECK(specified <= self.dim(), op, "too many indices for tensor of dimension ", self.dim(),
           " (got ", specified, ")");
  MG_CHECK(std::count_if(begin, end, [](const TensorIndex& i) { return i.is_ellipsis(); }) <= 1, op,
           "an index can only have a single ellipsis ('...')");
  Tensor result = self;
  std::int64_t dim = 0, real_dim = 0;
  auto record_tensor = [&](const Tensor& t) {
    tensors.resize(static_cast<std::size_t>(dim + 1));
    tensors[static_cast<std::size_t>(dim)] = t;
    ++dim;
  };
  auto select = [&](std::int64_t i) {
    MG_CHECK(result.dim() > 0, op,
             "invalid index of a 0-dim tensor; use item<T>() to convert a 0-dim tensor to a "
             "number");
    std::int64_t n = result.size(dim);
    MG_CHECK(i >= -n && i < n, op, "index ", i, " is out of bounds for dimension ", real_dim,
             " with size ", n);
    result = result.select(dim, i);
    ++real_dim;
  };
  for (const TensorIndex* it = begin; it != end; ++it) {
    switch (it->kind()) {
      case TensorIndex::Kind::kInteger:
        select(it->integer());
        break;
      case TensorIndex::Kind::kSlice: {
        MG_CHECK(result.dim() > 0, op, "invalid index of a 0-dim tensor (a slice)");
        MG_CHECK(it->slice().step() > 0, op, "step must be greater than zero, got ",
                 it->slice().step());
        result = result.slice(dim, it->slice().start(), it->slice().stop(), it->slice().step());
        ++dim;
        ++real_dim;
        break;
      }
      case TensorIndex::Kind::kEllipsis:
        dim += self.dim() - specified;
        real_dim += self.dim() - specified;
        break;
      case TensorIndex::Kind::kNone:
        result = result.unsqueeze(dim);
        ++dim;
        break;
      case TensorIndex::Kind::kBoolean:
        result = result.unsqueeze(dim);
        record_tensor(bool_index(it->boolean()));
        break;
      case TensorIndex::Kind::kTensor: {
        const Tensor& t = it->tensor();
        if (t.dim() == 0 && t.dtype() == kInt64) {
          select(t.item<std::int64_t>());
        } else if (t.dim() == 0 && t.dtype() == kBool) {
          result = result.unsqueeze(dim);
          record_tensor(bool_index(t.item<bool>()));
        } else {
          MG_CHECK(t.dtype() == kInt64 || t.dtype() == kBool, op,
                   "tensors used as indices must be int64 or bool tensors, but got ",
                   dtype_name(t.dtype()));
          record_tensor(t);
          real_dim += t.dtype() == kBool ? t.dim() : 1;
        }
        break;
      }
    }
  }
  return result;
}

/// A new view of x with the same geometry (PyTorch's alias), so x.index({"..."}) is not x.
Tensor alias(const Tensor& x) {
  Tensor out = detail::make_view_of(x, x.shape(), x.strides(), x.storage_offset());
  record("AliasBackward0", out, {&x}, [](const Tensor& g, FunctionNode&) { return Grads{g}; });
  return out;
}

/// values with its leading size-1 dims removed (PyTorch's slicePrefix1sSize), so a (1, 3) value
/// can be written into a (3,) region.
Tensor strip_leading_ones(const Tensor& v) {
  std::int64_t k = 0;
  while (k < v.dim() && v.size(k) == 1) ++k;
  if (k == 0) return v;
  Shape s(v.shape().begin() + k, v.shape().end());
  return v.reshape(s);
}

Tensor get_item(const Tensor& self, const TensorIndex* begin, const TensorIndex* end) {
  std::vector<std::optional<Tensor>> tensors;
  Tensor sliced = apply_slicing(self, begin, end, tensors, "index");
  if (!has_tensor(tensors)) return sliced.is_same(self) ? alias(self) : sliced;
  return index_plan(sliced, make_plan(sliced, tensors, "index"));
}

void set_item(Tensor& self, const TensorIndex* begin, const TensorIndex* end,
              const Tensor& values) {
  MG_CHECK(values.defined(), "index_put_", "the values tensor is undefined");
  std::vector<std::optional<Tensor>> tensors;
  Tensor sliced = apply_slicing(self, begin, end, tensors, "index_put_");
  Tensor v = strip_leading_ones(values);
  if (!has_tensor(tensors)) {
    sliced.copy_(v);
    return;
  }
  sliced.index_put_(tensors, v, false);
}

}  // namespace

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return get_item(*this, indices.begin(), indices.end());
}
Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  return get_item(*this, indices.data(), indices.data() + indices.size());
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices,
                           const Tensor& values) {
  set_item(*this, indices.begin(), indices.end(), values);
  return *this;
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value) {
  MG_CHECK(defined(), "index_put_", "called on an undefined tensor");
  set_item(*this, indices.begin(), indices.end(), scalar_tensor(value, dtype()));
  return *this;
}
Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices,
                           const Tensor& values) {
  set_item(*this, indices.data(), indices.data() + indices.size(), values);
  return *this;
}
Tensor& Tensor::index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value) {
  MG_CHECK(defined(), "index_put_", "called on an undefined tensor");
  set_item(*this, indices.data(), indices.data() + indices.size(), scalar_tensor(value, dtype()));
  return *this;
}

Tensor& Tensor::index_put_(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                           bool accumulate) {
  MG_CHECK(defined() && values.defined(), "index_put_", "called with an undefined tensor");
  MG_CHECK(values.dtype() == dtype(), "index_put_",
           "index put requires the source and destination dtypes match, got ", dtype_name(dtype()),
           " for the destination and ", dtype_name(values.dtype()), " for the source");
  if (!has_tensor(indices)) return accumulate ? add_(values) : copy_(values);
  PlanPtr plan = make_plan(*this, indices, "index_put_");
  MG_CHECK(broadcastable_to(values.shape(), plan->out_shape), "index_put_",
           "shape mismatch: value tensor of shape ", values.shape(),
           " cannot be broadcast to indexing result of shape ", plan->out_shape);
  MG_CHECK(!overlaps(*this, values), "index_put_",
           "unsupported operation: some elements of the input tensor and the written-to tensor "
           "refer to a single memory location; clone() the values first");
  const TensorImpl* base = impl()->view_base.get();
  bool autograd = is_grad_enabled() &&
                  (requires_grad() || values.requires_grad() || (base && base->requires_grad));
  if (!autograd) {
    // The plain write, straight into this tensor's elements.
    detail::check_writable(*this, "index_put_");
    scatter_plan(*this, *plan, values, accumulate);
    detail::bump_version(*this);
    return *this;
  }
  return detail::inplace_op(*this, "index_put_", {&values},
                            [&](const Tensor& s) { return put_plan(s, plan, values, accumulate); });
}

Tensor Tensor::operator[](std::int64_t i) const { return select(0, i); }
Tensor Tensor::operator[](const Tensor& idx) const { return index({idx}); }
Tensor Tensor::nonzero() const { return minigrad::nonzero(*this); }
Tensor Tensor::masked_select(const Tensor& mask) const {
  return minigrad::masked_select(*this, mask);
}

}  // namespace minigrad
