// Joining and indexing: cat, stack, split, chunk, index_select, gather, scatter_add, index_add,
// scatter, take_along_dim, masked_scatter, tril, triu; the rearranging copies flip, roll, repeat,
// repeat_interleave; sort, argsort, topk.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/loops.h"
#include "kernels/wrapping.h"
#include "minigrad/indexing.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using detail::needs_grad;
using detail::record;
using Grads = std::vector<Tensor>;

// ---------------------------------------------------------------- cat, stack, split, chunk

Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
  MG_PROFILE_OP("cat");
  MG_CHECK(!tensors.empty(), "cat", "expected a non-empty list of tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i)
    MG_CHECK(tensors[i].defined(), "cat", "tensor ", i, " is undefined");
  const Tensor& first = tensors[0];
  MG_CHECK(first.dim() > 0, "cat",
           "zero-dimensional tensor (at position 0) cannot be concatenated");
  std::int64_t d = detail::wrap_dim(dim, first.dim(), "cat");
  Dtype dt = first.dtype();
  std::int64_t total = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    MG_CHECK(t.dim() == first.dim(), "cat", "tensors must have the same number of dims: tensor 0 ",
             "has shape ", first.shape(), " and tensor ", i, " has shape ", t.shape());
    for (std::int64_t k = 0; k < t.dim(); ++k)
      MG_CHECK(k == d || t.shape()[k] == first.shape()[k], "cat", "sizes of tensors must match ",
               "except in dim ", d, ": tensor 0 has shape ", first.shape(), " and tensor ", i,
               " has shape ", t.shape());
    dt = promote_types(dt, t.dtype());
    total += t.shape()[d];
  }
  Shape shape = first.shape();
  shape[d] = total;
  Tensor out = detail::make_tensor(shape, dt);
  std::int64_t start = 0;
  Shape sizes;
  for (const Tensor& t : tensors) {
    std::int64_t len = t.shape()[d];
    if (len > 0) detail::copy_into(out.detach().narrow(d, start, len), t);
    sizes.push_back(len);
    start += len;
  }
  record("CatBackward0", out, tensors, [d, sizes](const Tensor& g, FunctionNode& n) {
    Grads r(sizes.size());
    std::int64_t s = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (n.needs_input_grad(i)) r[i] = g.narrow(d, s, sizes[i]);
      s += sizes[i];
    }
    return r;
  });
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
  MG_PROFILE_OP("stack");
  MG_CHECK(!tensors.empty(), "stack", "expected a non-empty list of tensors");
  MG_CHECK(tensors[0].defined(), "stack", "tensor 0 is undefined");
  std::int64_t d = detail::wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    MG_CHECK(tensors[i].defined(), "stack", "tensor ", i, " is undefined");
    MG_CHECK(tensors[i].shape() == tensors[0].shape(), "stack",
             "stack expects each tensor to be equal size, but got ", tensors[0].shape(),
             " at entry 0 and ", tensors[i].shape(), " at entry ", i);
    parts.push_back(tensors[i].unsqueeze(d));
  }
  return cat(parts, d);
}

// Note [Split as one node]
// split and chunk return views of x, one per piece, and, as PyTorch, one backward node for all of
// them (SplitBackward0; SplitWithSizesBackward0 for a list of sizes): it receives one gradient
// per piece and returns their concatenation, zeros for a piece no gradient reached. A node per
// piece (SliceBackward0) gave each piece's gradient a full-size zeros tensor of x, and the engine
// summed them: three full-size zeros and two sums for MultiheadAttention's chunk(3) of q, k, v.
// The pieces are the outputs of a function that returns several views (PyTorch's
// MULTI_OUTPUT_NODE): an in-place op on one of them with grad mode on is refused, and so is the
// use of a piece after its base (or another view of it) was modified in place, since the node
// could not route such a piece's gradient through the base's new history.
namespace {

class SplitNode final : public Node {
 public:
  SplitNode(const char* name, std::int64_t dim) : name_(name), dim_(dim) {}
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(const Tensor& grad) override { return apply_outputs({grad}); }
  std::vector<Tensor> apply_outputs(std::vector<Tensor> grads) override {
    for (std::size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined()) grads[i] = zeros(output_shape(i), output_dtype(i));
    return {cat(grads, dim_)};
  }

 private:
  const char* name_;
  std::int64_t dim_;
};

std::vector<Tensor> split_impl(const Tensor& x, const Shape& split_sizes, std::int64_t dim,
                               const char* node_name) {
  MG_PROFILE_OP("split");
  MG_CHECK(x.defined(), "split",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.dim() > 0, "split", "cannot split a 0-dim tensor");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "split");
  std::int64_t total = 0;
  for (auto s : split_sizes) {
    MG_CHECK(s >= 0, "split", "split sizes must be non-negative, got ", split_sizes);
    // A sum past int64 cannot equal the dim's size (fuzz finding F10).
    MG_CHECK(!__builtin_add_overflow(total, s, &total), "split", "split sizes ", split_sizes,
             " add up to more than int64 holds but dim ", d, " has size ", x.shape()[d]);
  }
  MG_CHECK(total == x.shape()[d], "split", "split sizes ", split_sizes, " add up to ", total,
           " but dim ", d, " has size ", x.shape()[d]);
  std::vector<Tensor> out;
  std::int64_t start = 0;
  for (auto s : split_sizes) {
    Shape sh = x.shape();
    sh[d] = s;
    out.push_back(
        detail::make_view_of(x, sh, x.strides(), x.storage_offset() + start * x.strides()[d]));
    start += s;
  }
  if (is_grad_enabled() && x.requires_grad()) {
    auto node = std::make_shared<SplitNode>(node_name, d);
    detail::NodeAccess::edges(*node).push_back(detail::gradient_edge(x));
    std::vector<std::pair<Shape, Dtype>> outputs;
    for (const Tensor& piece : out) outputs.emplace_back(piece.shape(), piece.dtype());
    detail::NodeAccess::set_outputs_meta(*node, outputs);
    for (std::size_t i = 0; i < out.size(); ++i) {
      TensorImpl* impl = out[i].impl();
      impl->requires_grad = true;
      impl->grad_fn = node;
      impl->output_nr = static_cast<std::uint32_t>(i);
      impl->view_creation = TensorImpl::ViewCreation::kMultiOutput;
    }
  }
  return out;
}

}  // namespace

std::vector<Tensor> split(const Tensor& x, const Shape& split_sizes, std::int64_t dim) {
  return split_impl(x, split_sizes, dim, "SplitWithSizesBackward0");
}

std::vector<Tensor> split(const Tensor& x, std::int64_t split_size, std::int64_t dim) {
  MG_CHECK(x.defined(), "split",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.dim() > 0, "split", "cannot split a 0-dim tensor");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "split");
  std::int64_t n = x.shape()[d];
  MG_CHECK(split_size > 0 || (split_size == 0 && n == 0), "split",
           "split_size must be positive, got ", split_size);
  Shape sizes;
  if (n == 0) sizes.push_back(0);
  for (std::int64_t s = 0; s < n; s += split_size) sizes.push_back(std::min(split_size, n - s));
  return split_impl(x, sizes, d, "SplitBackward0");
}

std::vector<Tensor> chunk(const Tensor& x, std::int64_t chunks, std::int64_t dim) {
  MG_PROFILE_OP("chunk");
  MG_CHECK(x.defined(), "chunk",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(chunks > 0, "chunk", "number of chunks must be positive, got ", chunks);
  MG_CHECK(x.dim() > 0, "chunk", "cannot chunk a 0-dim tensor");
  std::int64_t n = x.shape()[detail::wrap_dim(dim, x.dim(), "chunk")];
  std::int64_t size = detail::ceil_div(n, chunks);
  return split(x, std::max<std::int64_t>(size, n == 0 ? 0 : 1), dim);
}

// ---------------------------------------------------------------- index_select, index_add

namespace {

void check_index_tensor(const Tensor& index, const char* op) {
  MG_CHECK(index.defined(), op, "index is undefined");
  MG_CHECK(index.dtype() == kInt64, op, "index must be an int64 tensor, got ",
           dtype_name(index.dtype()));
}

/// The index values, each checked against [-n, n) and wrapped.
std::vector<std::int64_t> checked_indices(const Tensor& index, std::int64_t n, const char* op) {
  std::vector<std::int64_t> idx = index.to_vector<std::int64_t>();
  for (std::size_t i = 0; i < idx.size(); ++i) {
    MG_CHECK(idx[i] >= -n && idx[i] < n, op, "index ", idx[i], " (at position ", i,
             ") is out of range for a dim of size ", n);
    if (idx[i] < 0) idx[i] += n;
  }
  return idx;
}

}  // namespace

Tensor index_select(const Tensor& x, std::int64_t dim, const Tensor& index) {
  MG_PROFILE_OP("index_select");
  MG_CHECK(x.defined(), "index_select",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(index, "index_select");
  MG_CHECK(index.dim() <= 1, "index_select", "index must be 0-D or 1-D, got shape ", index.shape());
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "index_select");
  std::int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
  MG_CHECK(x.dim() > 0 || index.numel() == 1, "index_select",
           "an index into a 0-dim tensor must have exactly 1 value, got ", index.numel());
  std::vector<std::int64_t> idx = checked_indices(index, n, "index_select");
  Shape shape = x.shape();
  if (x.dim() > 0) shape[d] = static_cast<std::int64_t>(idx.size());
  Tensor out = detail::make_tensor(shape, x.dtype());
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (x.dim() == 0) {
      detail::copy_into(out, x);
      break;
    }
    detail::copy_into(out.detach().select(d, static_cast<std::int64_t>(i)),
                      x.detach().select(d, idx[i]));
  }
  Shape in_shape = x.shape();
  record("IndexSelectBackward0", out, {&x}, {&index},
         [in_shape, d](const Tensor& g, FunctionNode& node) {
           return Grads{index_add(zeros(in_shape, g.dtype()), d, node.saved(0), g)};
         });
  return out;
}

Tensor index_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& source) {
  MG_PROFILE_OP("index_add");
  MG_CHECK(self.defined() && source.defined(), "index_add",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(index, "index_add");
  MG_CHECK(index.dim() <= 1, "index_add", "index must be 0-D or 1-D, got shape ", index.shape());
  MG_CHECK(self.dim() == source.dim(), "index_add", "self (shape ", self.shape(),
           ") and source (shape ", source.shape(), ") must have the same number of dims");
  std::int64_t d = detail::wrap_dim(dim, self.dim(), "index_add");
  std::int64_t size_d = self.dim() == 0 ? 1 : self.shape()[d];
  MG_CHECK(self.dim() > 0 || index.numel() == 1, "index_add",
           "an index into a 0-dim tensor must have exactly 1 value, got ", index.numel());
  std::vector<std::int64_t> idx = checked_indices(index, size_d, "index_add");
  Shape expect = self.shape();
  if (self.dim() > 0) expect[d] = static_cast<std::int64_t>(idx.size());
  MG_CHECK(source.shape() == expect, "index_add", "source has shape ", source.shape(),
           " but self (", self.shape(), ") with ", idx.size(), " indices along dim ", d,
           " needs shape ", expect);
  Tensor out = self.detach().clone().contiguous();
  if (self.dim() > 0 && source.dtype() == self.dtype()) {
    // One pass over contiguous rows: out[o, idx[i], :] += src[o, i, :], each element's additions
    // in the order of i, as the per-index loop below (the embedding's backward calls this with
    // one index per token, so a select and a copy_ per index cost more than the adds).
    Tensor src = source.detach().contiguous();
    const Shape& shape = out.shape();
    std::int64_t outer = 1, inner = 1;
    for (std::int64_t k = 0; k < d; ++k) outer *= shape[k];
    for (std::int64_t k = d + 1; k < out.dim(); ++k) inner *= shape[k];
    const auto n = static_cast<std::int64_t>(idx.size());
    detail::dispatch(out.dtype(), [&]<typename T>() {
      const T* ps = src.impl()->data<T>();
      T* po = out.impl()->data<T>();
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < n; ++i) {
          T* dst = po + (o * size_d + idx[static_cast<std::size_t>(i)]) * inner;
          const T* row = ps + (o * n + i) * inner;
          for (std::int64_t j = 0; j < inner; ++j) dst[j] = detail::wrapping_add(dst[j], row[j]);
        }
    });
  } else {
    NoGradGuard no_grad;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      if (self.dim() == 0) {
        out.copy_(out + source.detach());
        continue;
      }
      Tensor dst = out.select(d, idx[i]);
      dst.copy_(dst + source.detach().select(d, static_cast<std::int64_t>(i)));
    }
  }
  record("IndexAddBackward0", out, {&self, &source}, {needs_grad(source) ? &index : nullptr},
         [d](const Tensor& g, FunctionNode& n) {
           return Grads{n.needs_input_grad(0) ? g : Tensor(),
                        n.needs_input_grad(1) ? index_select(g, d, n.saved(0)) : Tensor()};
         });
  return out;
}

// ---------------------------------------------------------------- gather, scatter_add

namespace {

/// Checks gather/scatter index geometry: same rank as x and index.size(k) <= x.size(k) for k !=
/// dim.
void check_gather_shapes(const Tensor& x, const Tensor& index, std::int64_t d, const char* op) {
  MG_CHECK(index.dim() == x.dim(), op, "index (shape ", index.shape(),
           ") must have the same number of dims as the input (shape ", x.shape(), ")");
  for (std::int64_t k = 0; k < x.dim(); ++k)
    MG_CHECK(k == d || index.shape()[k] <= x.shape()[k], op, "index has shape ", index.shape(),
             " but the input has shape ", x.shape(), ": size ", index.shape()[k], " at dim ", k,
             " exceeds ", x.shape()[k]);
}

/// Calls fn(position in `of` (the index-shaped tensor), position in `x` with the index applied).
template <typename Fn>
void for_each_gather(const Tensor& x, const Tensor& index, std::int64_t d, const Tensor& of,
                     const char* op, Fn fn) {
  Tensor idx = index.contiguous();
  const std::int64_t* pi = idx.impl()->data<std::int64_t>();
  const Shape& shape = index.shape();
  std::int64_t n = idx.numel();
  std::vector<std::int64_t> pos(shape.size(), 0);
  std::int64_t size_d = x.dim() == 0 ? 1 : x.shape()[d];
  for (std::int64_t e = 0; e < n; ++e) {
    std::int64_t v = pi[e];
    MG_CHECK(v >= -size_d && v < size_d, op, "index ", v, " is out of bounds for dim ", d,
             " with size ", size_d);
    if (v < 0) v += size_d;
    std::int64_t off_x = x.storage_offset(), off_o = of.storage_offset();
    for (std::size_t k = 0; k < shape.size(); ++k) {
      off_x += (static_cast<std::int64_t>(k) == d ? v : pos[k]) * x.strides()[k];
      off_o += pos[k] * of.strides()[k];
    }
    if (shape.empty()) off_x = x.storage_offset() + 0;
    fn(off_o, off_x);
    for (auto k = static_cast<std::int64_t>(shape.size()) - 1; k >= 0; --k) {
      if (++pos[k] < shape[k]) break;
      pos[k] = 0;
    }
  }
}

/// gs (index-shaped) padded with zeros at the end of each dim to shape: the gradient of a src
/// larger than index (differentiable).
Tensor zero_padded(Tensor gs, const Shape& shape) {
  for (std::int64_t k = 0; k < gs.dim(); ++k) {
    if (gs.size(k) == shape[k]) continue;
    Shape padded = gs.shape();
    padded[k] = shape[k];
    gs = detail::narrow_backward(gs, padded, k, 0);
  }
  return gs;
}

/// scatter's and scatter_add's checks of src against index.
void check_src(const Tensor& src, const Tensor& index, const char* op) {
  MG_CHECK(src.dim() == index.dim(), op, "src (shape ", src.shape(),
           ") must have the same number of dims as index (shape ", index.shape(), ")");
  for (std::int64_t k = 0; k < index.dim(); ++k)
    MG_CHECK(index.shape()[k] <= src.shape()[k], op, "index has shape ", index.shape(),
             " which exceeds src's shape ", src.shape(), " at dim ", k);
}

}  // namespace

namespace {
/// gather, its errors naming op (gather or take_along_dim).
Tensor gather_as(const Tensor& x, std::int64_t dim, const Tensor& index, const char* op) {
  MG_CHECK(x.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(index, op);
  std::int64_t d = detail::wrap_dim(dim, x.dim(), op);
  check_gather_shapes(x, index, d, op);
  Tensor out = detail::make_tensor(index.shape(), x.dtype());
  detail::dispatch(x.dtype(), [&]<typename T>() {
    // Offsets from for_each_gather include storage offsets; index raw storage.
    const T* px = static_cast<const T*>(x.impl()->storage->data);
    T* po = static_cast<T*>(out.impl()->storage->data);
    for_each_gather(x, index, d, out, op, [&](std::int64_t o, std::int64_t i) { po[o] = px[i]; });
  });
  Shape in_shape = x.shape();
  record("GatherBackward0", out, {&x}, {&index}, [in_shape, d](const Tensor& g, FunctionNode& n) {
    return Grads{scatter_add(zeros(in_shape, g.dtype()), d, n.saved(0), g)};
  });
  return out;
}
}  // namespace

Tensor gather(const Tensor& x, std::int64_t dim, const Tensor& index) {
  MG_PROFILE_OP("gather");
  return gather_as(x, dim, index, "gather");
}

Tensor scatter_add(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  MG_PROFILE_OP("scatter_add");
  MG_CHECK(self.defined() && src.defined(), "scatter_add",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(index, "scatter_add");
  std::int64_t d = detail::wrap_dim(dim, self.dim(), "scatter_add");
  check_gather_shapes(self, index, d, "scatter_add");
  check_src(src, index, "scatter_add");
  Tensor out = self.detach().clone();
  Tensor s = src.detach().to(self.dtype());
  detail::dispatch(self.dtype(), [&]<typename T>() {
    const T* ps = static_cast<const T*>(s.impl()->storage->data);
    T* po = static_cast<T*>(out.impl()->storage->data);
    for_each_gather(out, index, d, s, "scatter_add", [&](std::int64_t si, std::int64_t oi) {
      po[oi] = detail::wrapping_add(po[oi], ps[si]);
    });
  });
  Shape src_shape = src.shape();
  record("ScatterAddBackward0", out, {&self, &src}, {needs_grad(src) ? &index : nullptr},
         [d, src_shape](const Tensor& g, FunctionNode& n) {
           Grads r{n.needs_input_grad(0) ? g : Tensor(), Tensor()};
           if (n.needs_input_grad(1)) {
             Tensor idx = n.saved(0);
             // NOTE: src entries beyond index's shape are unused: their gradient is zero (PyTorch
             // implements this backward only for src.shape == index.shape).
             r[1] = zero_padded(gather(g, d, idx), src_shape);
           }
           return r;
         });
  return out;
}

// ---------------------------------------------------------------- scatter, take_along_dim

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src) {
  MG_PROFILE_OP("scatter");
  MG_CHECK(self.defined() && src.defined(), "scatter",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(index, "scatter");
  std::int64_t d = detail::wrap_dim(dim, self.dim(), "scatter");
  check_gather_shapes(self, index, d, "scatter");
  check_src(src, index, "scatter");
  MG_CHECK(src.dtype() == self.dtype(), "scatter", "self and src must have the same dtype, got ",
           dtype_name(self.dtype()), " and ", dtype_name(src.dtype()));
  Tensor out = self.detach().clone();
  detail::dispatch(self.dtype(), [&]<typename T>() {
    const T* ps = static_cast<const T*>(src.impl()->storage->data);
    T* po = static_cast<T*>(out.impl()->storage->data);
    for_each_gather(out, index, d, src, "scatter",
                    [&](std::int64_t si, std::int64_t oi) { po[oi] = ps[si]; });
  });
  Shape src_shape = src.shape();
  // NOTE: with duplicate indices the value written is unspecified (as PyTorch), and so is which
  // src entry gets the gradient: every one of them does here.
  record("ScatterBackward0", out, {&self, &src}, {&index},
         [d, src_shape](const Tensor& g, FunctionNode& n) {
           Tensor idx = n.saved(0);
           return Grads{
               n.needs_input_grad(0) ? scatter(g, d, idx, 0.0) : Tensor(),
               n.needs_input_grad(1) ? zero_padded(gather(g, d, idx), src_shape) : Tensor()};
         });
  return out;
}

Tensor scatter(const Tensor& self, std::int64_t dim, const Tensor& index, Scalar value) {
  MG_PROFILE_OP("scatter");
  MG_CHECK(self.defined(), "scatter",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(index, "scatter");
  std::int64_t d = detail::wrap_dim(dim, self.dim(), "scatter");
  check_gather_shapes(self, index, d, "scatter");
  Tensor out = self.detach().clone();
  Tensor idx = index.contiguous();
  detail::dispatch(self.dtype(), [&]<typename T>() {
    T v = std::is_floating_point_v<T> ? static_cast<T>(value.to_double())
                                      : static_cast<T>(value.to_int());
    T* po = static_cast<T*>(out.impl()->storage->data);
    for_each_gather(out, idx, d, idx, "scatter",
                    [&](std::int64_t, std::int64_t oi) { po[oi] = v; });
  });
  record("ScatterBackward1", out, {&self}, {&index},
         [d](const Tensor& g, FunctionNode& n) { return Grads{scatter(g, d, n.saved(0), 0.0)}; });
  return out;
}

// ---------------------------------------------------------------- scatter_reduce

namespace {

enum class ScatterReduce { kSum, kProd, kMean, kAmax, kAmin };

ScatterReduce parse_scatter_reduce(const std::string& reduce) {
  if (reduce == "sum") return ScatterReduce::kSum;
  if (reduce == "prod") return ScatterReduce::kProd;
  if (reduce == "mean") return ScatterReduce::kMean;
  if (reduce == "amax") return ScatterReduce::kAmax;
  MG_CHECK(reduce == "amin", "scatter_reduce",
           "reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"", reduce,
           "\"");
  return ScatterReduce::kAmin;
}

/// x for the first backward; differentiating it again throws `message` (PyTorch's DelayedError).
Tensor delayed_error(const Tensor& x, const char* message) {
  Tensor out = x.detach().clone();
  record("DelayedError", out, {&x},
         [message](const Tensor&, FunctionNode&) -> Grads { MG_ERROR("scatter_reduce", message); });
  return out;
}

/// x narrowed to the leading `shape` of each dim (src cut to index's shape).
Tensor cut_to(Tensor x, const Shape& shape) {
  for (std::int64_t k = 0; k < x.dim(); ++k)
    if (x.size(k) != shape[k]) x = x.narrow(k, 0, shape[k]);
  return x;
}

}  // namespace

Tensor scatter_reduce(const Tensor& self, std::int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self) {
  MG_PROFILE_OP("scatter_reduce");
  const char* op = "scatter_reduce";
  MG_CHECK(self.defined() && src.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  const ScatterReduce r = parse_scatter_reduce(reduce);
  check_index_tensor(index, op);
  std::int64_t d = detail::wrap_dim(dim, self.dim(), op);
  check_gather_shapes(self, index, d, op);
  check_src(src, index, op);
  MG_CHECK(src.dtype() == self.dtype(), op, "self and src must have the same dtype, got ",
           dtype_name(self.dtype()), " and ", dtype_name(src.dtype()));
  MG_CHECK(self.dtype() != kBool, op, "self and src have dtype bool, which is not supported");
  Tensor out = self.detach().clone().contiguous();
  detail::dispatch(self.dtype(), [&]<typename T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      const T* ps = static_cast<const T*>(src.impl()->storage->data);
      T* po = static_cast<T*>(out.impl()->storage->data);
      const std::int64_t base = out.storage_offset();
      constexpr bool floating = std::is_floating_point_v<T>;
      if (!include_self) {
        // Positions that receive src start from the reduction's identity instead of self.
        T identity = r == ScatterReduce::kProd   ? T(1)
                     : r == ScatterReduce::kAmax ? (floating ? -std::numeric_limits<T>::infinity()
                                                             : std::numeric_limits<T>::lowest())
                     : r == ScatterReduce::kAmin ? (floating ? std::numeric_limits<T>::infinity()
                                                             : std::numeric_limits<T>::max())
                                                 : T(0);
        for_each_gather(out, index, d, src, op,
                        [&](std::int64_t, std::int64_t oi) { po[oi] = identity; });
      }
      std::vector<std::int64_t> count;
      if (r == ScatterReduce::kMean) count.assign(out.numel(), include_self ? 1 : 0);
      for_each_gather(out, index, d, src, op, [&](std::int64_t si, std::int64_t oi) {
        const T v = ps[si];
        T& o = po[oi];
        switch (r) {
          case ScatterReduce::kSum:
          case ScatterReduce::kMean:
            o = detail::wrapping_add(o, v);
            if (r == ScatterReduce::kMean) ++count[oi - base];
            break;
          case ScatterReduce::kProd:
            o = detail::wrapping_mul(o, v);
            break;
          // NOTE: a NaN in src wins, as PyTorch's ReduceMaximum/ReduceMinimum (std::max keeps
          // a NaN already in self).
          case ScatterReduce::kAmax:
            o = (floating && v != v) ? v : std::max(o, v);
            break;
          case ScatterReduce::kAmin:
            o = (floating && v != v) ? v : std::min(o, v);
            break;
        }
      });
      if (r == ScatterReduce::kMean) {
        // NOTE: integer means round down (PyTorch divides with rounding_mode="floor").
        for (std::int64_t i = 0; i < out.numel(); ++i) {
          const std::int64_t c = count[i] == 0 ? 1 : count[i];
          T& o = po[base + i];
          if constexpr (floating) {
            o = o / static_cast<T>(c);
          } else {
            T q = o / c;
            if ((o % c != 0) && ((o < 0) != (c < 0))) --q;
            o = q;
          }
        }
      }
    }
  });
  Shape src_shape = src.shape();
  // PyTorch 1.13's scatter_reduce_backward (torch/csrc/autograd/FunctionsManual.cpp), with
  // public ops so that it can be differentiated again. g, self and result [self's shape]; src
  // is cut to index's shape, and its gradient padded back with zeros.
  record("ScatterReduceBackward0", out, {&self, &src}, {&self, &index, &src, detail::kOutput},
         [d, r, reduce, include_self, src_shape](const Tensor& g, FunctionNode& n) {
           Tensor x = n.saved(0), idx = n.saved(1), result = n.saved(3);
           Tensor s = cut_to(n.saved(2), idx.shape());
           Tensor gx, gs;
           switch (r) {
             case ScatterReduce::kSum:
               gx = g;
               gs = gather(g, d, idx);
               break;
             case ScatterReduce::kMean: {
               // Each output is divided by the number N of values it averaged.
               Tensor count =
                   scatter_add(include_self ? ones_like(g) : zeros_like(g), d, idx, ones_like(s));
               count = masked_fill(count, count == 0, 1);
               gx = g / count;
               gs = gather(g, d, idx) / gather(count, d, idx);
               break;
             }
             case ScatterReduce::kProd: {
               // The product of the others, computed without dividing by a zero: a zero in self
               // is replaced by 1, and so is a src zero that is alone at its position.
               Tensor masked_self = masked_fill(x, x == 0, 1);
               gx = g * scatter_reduce(masked_self, d, idx, s, reduce, include_self) / masked_self;
               Tensor src_zero = s == 0;
               Tensor zeros_at =
                   gather(scatter_add(zeros_like(x), d, idx, src_zero.to(x.dtype())), d, idx);
               Tensor single_zero = logical_and(src_zero, zeros_at == 1);
               Tensor masked_src_result =
                   scatter_reduce(x, d, idx, masked_fill(s, single_zero, 1), reduce, include_self);
               gs = where(single_zero, gather(g * masked_src_result, d, idx),
                          gather(g * result, d, idx) / masked_fill(s, src_zero, 1));
               if (any(zeros_at > 1).item<bool>())
                 gs = delayed_error(gs,
                                    "double backward is unsupported for src when more than one "
                                    "zero in src is scattered to the same position (as PyTorch)");
               break;
             }
             case ScatterReduce::kAmax:
             case ScatterReduce::kAmin: {
               // NOTE: ties share the gradient evenly: every self or src value equal to the
               // result gets grad / (number of them), as PyTorch 1.13.
               Tensor value = gather(result, d, idx);
               Tensor self_is = (x == result).to(x.dtype());
               Tensor src_is = (s == value).to(x.dtype());
               Tensor share = g / scatter_add(self_is, d, idx, src_is);
               gx = self_is * share;
               gs = src_is * gather(share, d, idx);
               break;
             }
           }
           // Without include_self, self's values at scattered positions took no part.
           if (!include_self) gx = scatter(gx, d, idx, 0.0);
           return Grads{n.needs_input_grad(0) ? gx : Tensor(),
                        n.needs_input_grad(1) ? zero_padded(gs, src_shape) : Tensor()};
         });
  return out;
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<std::int64_t> dim) {
  MG_PROFILE_OP("take_along_dim");
  MG_CHECK(x.defined(), "take_along_dim",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  check_index_tensor(indices, "take_along_dim");
  if (!dim) return gather_as(x.reshape({-1}), 0, indices.reshape({-1}), "take_along_dim");
  MG_CHECK(x.dim() == indices.dim(), "take_along_dim", "input (shape ", x.shape(),
           ") and indices (shape ", indices.shape(), ") must have the same number of dims");
  std::int64_t d = detail::wrap_dim(*dim, x.dim(), "take_along_dim");
  if (x.dim() == 0) return gather_as(x, d, indices, "take_along_dim");
  // Broadcast all dims but d (ATen's _take_along_dim_helper).
  Shape xs = x.shape();
  xs[d] = indices.shape()[d];
  Shape b = detail::broadcast_shapes(xs, indices.shape(), "take_along_dim");
  Shape xb = b;
  xb[d] = x.shape()[d];
  return gather_as(x.expand(xb), d, indices.expand(b), "take_along_dim");
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  MG_PROFILE_OP("masked_scatter");
  MG_CHECK(self.defined() && mask.defined() && source.defined(), "masked_scatter",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(mask.dtype() == kBool, "masked_scatter", "mask must be a bool tensor, got ",
           dtype_name(mask.dtype()));
  MG_CHECK(source.dtype() == self.dtype(), "masked_scatter",
           "self and source must have the same dtype, got ", dtype_name(self.dtype()), " and ",
           dtype_name(source.dtype()));
  Shape b = detail::broadcast_shapes(self.shape(), mask.shape(), "masked_scatter");
  Tensor m = mask.expand(b).contiguous();
  std::vector<bool> bits = m.to_vector<bool>();
  auto count = static_cast<std::int64_t>(std::count(bits.begin(), bits.end(), true));
  MG_CHECK(source.numel() >= count, "masked_scatter", "source has ", source.numel(),
           " elements (shape ", source.shape(), ") but the mask has ", count, " true entries");
  // Composed of index_put with the mask (IndexPutBackward0 gives both gradients).
  return index_put(self.expand(b), {m}, source.reshape({-1}).narrow(0, 0, count));
}

// ---------------------------------------------------------------- flip, roll, repeat

namespace {
/// dims wrapped, each at most once.
Shape unique_dims(const Shape& dims, std::int64_t nd, const char* op) {
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(nd, 1)), false);
  Shape out;
  for (auto d0 : dims) {
    std::int64_t d = detail::wrap_dim(d0, nd, op);
    MG_CHECK(!seen[d], op, "dim ", d0, " appears multiple times in the list of dims ", dims);
    seen[d] = true;
    out.push_back(d);
  }
  return out;
}
}  // namespace

Tensor flip(const Tensor& x, const Shape& dims) {
  MG_PROFILE_OP("flip");
  MG_CHECK(x.defined(), "flip",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  Shape ds = unique_dims(dims, x.dim(), "flip");
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x.detach().clone();
    for (auto d : ds) {
      if (x.dim() == 0) continue;
      std::vector<std::int64_t> rev(static_cast<std::size_t>(x.shape()[d]));
      std::iota(rev.rbegin(), rev.rend(), 0);
      out = index_select(out, d, tensor(rev));
    }
  }
  record("FlipBackward0", out, {&x},
         [ds](const Tensor& g, FunctionNode&) { return Grads{flip(g, ds)}; });
  return out;
}

Tensor roll(const Tensor& x, const Shape& shifts, const Shape& dims) {
  MG_PROFILE_OP("roll");
  MG_CHECK(x.defined(), "roll",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  if (dims.empty()) {
    MG_CHECK(shifts.size() == 1, "roll", "without dims, shifts must have one entry (the shift of ",
             "the flattened tensor), got ", shifts);
    return roll(x.flatten(), shifts, {0}).reshape(x.shape());
  }
  MG_CHECK(shifts.size() == dims.size(), "roll", "shifts ", shifts, " and dims ", dims,
           " must have the same length");
  Shape ds;
  for (auto d : dims) ds.push_back(detail::wrap_dim(d, x.dim(), "roll"));
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x.detach().clone();
    for (std::size_t i = 0; i < ds.size() && x.dim() > 0; ++i) {
      std::int64_t n = out.shape()[ds[i]];
      if (n == 0) continue;
      std::int64_t sh = ((shifts[i] % n) + n) % n;
      if (sh != 0) out = cat({out.narrow(ds[i], n - sh, sh), out.narrow(ds[i], 0, n - sh)}, ds[i]);
    }
  }
  Shape back;
  for (auto sh : shifts) back.push_back(-sh);
  record("RollBackward0", out, {&x},
         [back, ds](const Tensor& g, FunctionNode&) { return Grads{roll(g, back, ds)}; });
  return out;
}

Tensor repeat(const Tensor& x, const Shape& repeats) {
  MG_PROFILE_OP("repeat");
  MG_CHECK(x.defined(), "repeat",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  auto nr = static_cast<std::int64_t>(repeats.size());
  MG_CHECK(nr >= x.dim(), "repeat", "repeats ", repeats,
           " must have at least as many entries as the tensor has dims (shape ", x.shape(), ")");
  for (auto r : repeats) MG_CHECK(r >= 0, "repeat", "repeats must be non-negative, got ", repeats);
  // x as (1, s0, 1, s1, ...) expanded to (r0, s0, r1, s1, ...), then (r0 * s0, r1 * s1, ...).
  Shape inter, expanded, target, sum_dims;
  for (std::int64_t i = 0; i < nr; ++i) {
    std::int64_t s = i < nr - x.dim() ? 1 : x.shape()[i - (nr - x.dim())];
    inter.push_back(1);
    inter.push_back(s);
    expanded.push_back(repeats[i]);
    expanded.push_back(s);
    target.push_back(repeats[i] * s);
    sum_dims.push_back(2 * i);
  }
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x.detach().reshape(inter).expand(expanded).clone().reshape(target);
  }
  Shape in_shape = x.shape();
  record("RepeatBackward0", out, {&x},
         [expanded, sum_dims, in_shape](const Tensor& g, FunctionNode&) {
           if (sum_dims.empty()) return Grads{g};
           return Grads{g.reshape(expanded).sum(sum_dims).reshape(in_shape)};
         });
  return out;
}

Tensor repeat_interleave(const Tensor& x, std::int64_t repeats, std::optional<std::int64_t> dim) {
  MG_PROFILE_OP("repeat_interleave");
  MG_CHECK(x.defined(), "repeat_interleave",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(repeats >= 0, "repeat_interleave", "repeats must be non-negative, got ", repeats);
  if (!dim) return repeat_interleave(x.flatten(), repeats, 0);
  std::int64_t d = detail::wrap_dim(*dim, x.dim(), "repeat_interleave");
  if (x.dim() == 0) return repeat_interleave(x.reshape({1}), repeats, 0);
  // Composed of views and a reshape: x.unsqueeze(d + 1) expanded to `repeats` along the new dim.
  Shape e = x.shape(), t = x.shape();
  e.insert(e.begin() + d + 1, repeats);
  t[d] *= repeats;
  return x.unsqueeze(d + 1).expand(e).reshape(t);
}

// ---------------------------------------------------------------- sort, argsort, topk

namespace {

/// The stable sorting permutation of each row of x along d (int64, x's shape). NOTE: NaN sorts
/// as larger than every number, as PyTorch.
Tensor sort_indices(const Tensor& x, std::int64_t d, bool descending) {
  Tensor xc = x.detach().contiguous();
  Tensor idx = detail::make_tensor(x.shape(), kInt64);
  std::int64_t n = x.dim() == 0 ? 1 : x.shape()[d], inner = 1;
  for (std::int64_t k = d + 1; k < x.dim(); ++k) inner *= x.shape()[k];
  std::int64_t outer = n * inner == 0 ? 0 : x.numel() / (n * inner);
  std::int64_t* pi = idx.impl()->data<std::int64_t>();
  detail::dispatch(x.dtype(), [&]<typename T>() {
    const T* px = xc.impl()->data<T>();
    std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        const T* row = px + o * n * inner + i;
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](std::int64_t a, std::int64_t b) {
          T va = row[a * inner], vb = row[b * inner];
          if constexpr (std::is_floating_point_v<T>) {
            bool na = va != va, nb = vb != vb;
            if (na || nb) return descending ? na && !nb : !na && nb;
          }
          return descending ? va > vb : va < vb;
        });
        for (std::int64_t k = 0; k < n; ++k)
          pi[(o * n + k) * inner + i] = perm[static_cast<std::size_t>(k)];
      }
  });
  return idx;
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, std::int64_t dim, bool descending) {
  MG_PROFILE_OP("sort");
  MG_CHECK(x.defined(), "sort",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "sort");
  Tensor idx = sort_indices(x, d, descending);
  // The values are gather(x, idx): their gradient goes to the indices (GatherBackward0).
  if (x.dim() == 0) return {x.clone(), idx};
  return {gather(x, d, idx), idx};
}

Tensor argsort(const Tensor& x, std::int64_t dim, bool descending) {
  MG_PROFILE_OP("argsort");
  MG_CHECK(x.defined(), "argsort",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  return sort_indices(x, detail::wrap_dim(dim, x.dim(), "argsort"), descending);
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, std::int64_t k, std::int64_t dim, bool largest,
                                bool /*sorted*/) {
  MG_PROFILE_OP("topk");
  MG_CHECK(x.defined(), "topk",
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  std::int64_t d = detail::wrap_dim(dim, x.dim(), "topk");
  std::int64_t n = x.dim() == 0 ? 1 : x.shape()[d];
  MG_CHECK(k >= 0 && k <= n, "topk", "k (", k, ") is out of range for dim ", dim, " of size ", n,
           " (shape ", x.shape(), ")");
  // NOTE: the values come in sorted order also when sorted is false (PyTorch leaves it open).
  Tensor x1 = x.dim() == 0 ? x.reshape({1}) : x;
  Tensor idx = sort_indices(x1, d, largest).narrow(d, 0, k).contiguous();
  Tensor values = gather(x1, d, idx);
  if (x.dim() == 0 && k == 1) return {values.reshape({}), idx.reshape({})};
  return {values, idx};
}

// ---------------------------------------------------------------- tril, triu

namespace {
template <bool kLower>
Tensor triangle(const Tensor& x, std::int64_t diagonal, const char* op, const char* node) {
  MG_CHECK(x.defined(), op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(x.dim() >= 2, op, "input must have at least 2 dims, got shape ", x.shape());
  Tensor out = x.detach().clone();
  std::int64_t rows = x.shape()[x.dim() - 2], cols = x.shape()[x.dim() - 1];
  std::int64_t batch = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  detail::dispatch(x.dtype(), [&]<typename T>() {
    T* p = out.impl()->data<T>();
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
          bool keep = kLower ? j - i <= diagonal : j - i >= diagonal;
          if (!keep) p[(b * rows + i) * cols + j] = T(0);
        }
  });
  record(node, out, {&x}, [diagonal](const Tensor& g, FunctionNode&) {
    return Grads{kLower ? tril(g, diagonal) : triu(g, diagonal)};
  });
  return out;
}
}  // namespace

Tensor tril(const Tensor& x, std::int64_t diagonal) {
  MG_PROFILE_OP("tril");
  return triangle<true>(x, diagonal, "tril", "TrilBackward0");
}
Tensor triu(const Tensor& x, std::int64_t diagonal) {
  MG_PROFILE_OP("triu");
  return triangle<false>(x, diagonal, "triu", "TriuBackward0");
}

}  // namespace minigrad
