// In-place ops with autograd: add_, mul_, exp_, ..., fill_, zero_, copy_, the compound operators,
// and what an in-place op on a view does to its base's history.
//
// Note [In-place ops]
// `self.op_(args)` computes op(self, args) as the out-of-place op does (so it records the same
// node, MulBackward0 for mul_, with the same saved tensors), then writes the result into self's
// elements and bumps self's version (Note [Version counters]). self keeps its identity (the same
// handle, storage and views) and takes the new node as its grad_fn: y = x * 2; y.add_(1) gives y
// an AddBackward0 whose input is y's old history. Before the write, the node's saved tensors that
// share self's storage are replaced by clones: they hold values the write is about to destroy
// (mul_ keeps self for other's gradient; log_ keeps self), which is what PyTorch does with
// `original_self`. A saved output (exp_, sigmoid_) is re-pointed at self, whose elements now hold
// it. Without grad mode, or when nothing involved requires grad, the op is only the write.
// As PyTorch: a leaf that requires grad (or a view of one) cannot be written in grad mode; a
// tensor with a stride-0 dim (expand) cannot be written at all; the result must keep self's shape
// and be castable to self's dtype.
//
// Note [In-place on views]
// A view op's result remembers its base, the tensor whose storage it views (view_base). An
// in-place op on a view V of base B with history changes B's elements too, so it rewrites B's
// history, as PyTorch's CopySlices: B's new grad_fn is a CopySlices node over B's old history and
// the op's node N. Given B's gradient g, it sends g to B's old history with V's region replaced
// by N's gradient for V's old value, and N's other gradients to N's other inputs. The geometry of
// V within B (sizes, strides, offset) is all it needs: a base is always contiguous (only view ops
// make non-contiguous tensors, and their results are views). Every view of B, V included, then
// gets a new grad_fn, AsStridedBackward0 of B's new history; that happens lazily, when a view is
// next used by autograd and sees that B's history count moved on (refresh_view).
#include <utility>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

using detail::FunctionNode;
using Grads = std::vector<Tensor>;

namespace {

/// Where a view sits in its (contiguous) base: offset relative to the base's.
struct Geometry {
  Shape shape;
  Shape strides;
  std::int64_t offset = 0;
};

Geometry geometry_in_base(const TensorImpl& view) {
  return Geometry{view.shape, view.strides, view.offset - view.view_base->offset};
}

Tensor as_strided_scatter(const Tensor& g, const Shape& base_shape, const Geometry& geo);

/// The view of contiguous x (base-shaped) at geo; differentiable (its backward scatters).
Tensor as_strided_view(const Tensor& x, const Shape& base_shape, const Geometry& geo) {
  Tensor xc = x.contiguous();
  Tensor out = detail::make_view(xc, geo.shape, geo.strides, xc.storage_offset() + geo.offset);
  detail::record("AsStridedBackward0", out, {&xc},
                 [base_shape, geo](const Tensor& g, FunctionNode&) {
                   return Grads{as_strided_scatter(g, base_shape, geo)};
                 });
  return out;
}

/// zeros of base_shape with g written at geo: as_strided's backward; differentiable.
Tensor as_strided_scatter(const Tensor& g, const Shape& base_shape, const Geometry& geo) {
  Tensor out = zeros(base_shape, g.dtype());
  detail::copy_into(detail::make_view(out, geo.shape, geo.strides, geo.offset), g);
  detail::record("AsStridedScatterBackward0", out, {&g},
                 [base_shape, geo](const Tensor& gg, FunctionNode&) {
                   return Grads{as_strided_view(gg, base_shape, geo)};
                 });
  return out;
}

/// The grad_fn of a view whose base's history was rewritten: AsStridedBackward0 of base_edge.
std::shared_ptr<Node> as_strided_node(Edge base_edge, const Shape& base_shape, const Geometry& geo,
                                      const Shape& shape, Dtype dtype) {
  auto node = detail::make_function_node<0>("AsStridedBackward0",
                                            [base_shape, geo](const Tensor& g, FunctionNode&) {
                                              return Grads{as_strided_scatter(g, base_shape, geo)};
                                            });
  detail::NodeAccess::edges(*node).push_back(std::move(base_edge));
  detail::NodeAccess::set_output_meta(*node, shape, dtype);
  return node;
}

/// A base's new grad_fn after an in-place op on one of its views (Note [In-place on views]).
class CopySlices final : public Node {
 public:
  CopySlices(Edge base_edge, const Shape& base_shape, Dtype dtype, Geometry view,
             std::shared_ptr<FunctionNode> fn)
      : view_(std::move(view)), fn_(std::move(fn)) {
    set_output_meta(base_shape, dtype);
    std::vector<Edge>& edges = mutable_next_edges();
    edges.push_back(std::move(base_edge));
    const std::vector<Edge>& fn_edges = fn_->next_edges();
    for (std::size_t i = 1; i < fn_edges.size(); ++i) edges.push_back(fn_edges[i]);
    // fn's gradient for the view's old value is needed exactly when the old base needed one.
    detail::NodeAccess::edges(*fn_)[0] = next_edges()[0];
  }
  std::string name() const override { return "CopySlices"; }
  void release() override { fn_->release(); }

  std::vector<Tensor> apply(const Tensor& grad) override {
    const Shape& base_shape = output_shape();
    Tensor g = grad.contiguous();
    // A clone: fn's gradients may alias its incoming gradient (add returns it twice).
    std::vector<Tensor> res = fn_->apply(as_strided_view(g, base_shape, view_).clone());
    Tensor slice_grad = res.empty() ? Tensor() : res[0];
    if (slice_grad.defined()) {
      if (slice_grad.shape() != view_.shape) slice_grad = detail::sum_to(slice_grad, view_.shape);
      if (slice_grad.dtype() != g.dtype()) slice_grad = slice_grad.to(g.dtype());
    }
    Tensor result;
    if (!is_grad_enabled()) {
      result = g.detach().clone();
      Tensor region = detail::make_view(result, view_.shape, view_.strides, view_.offset);
      if (slice_grad.defined())
        detail::copy_into(region, slice_grad);
      else
        detail::copy_into(region, zeros({}, g.dtype()));
    } else {  // create_graph: the same, with differentiable ops
      result = g - as_strided_scatter(as_strided_view(g, base_shape, view_), base_shape, view_);
      if (slice_grad.defined()) result = result + as_strided_scatter(slice_grad, base_shape, view_);
    }
    Grads out{result};
    for (std::size_t i = 1; i < res.size(); ++i) out.push_back(res[i]);
    out.resize(next_edges().size());
    return out;
  }

 private:
  Geometry view_;
  std::shared_ptr<FunctionNode> fn_;
};

void check_writable(const Tensor& self, const char* op) {
  MG_CHECK(self.defined(), op, "called on an undefined tensor");
  for (std::int64_t d = 0; d < self.dim(); ++d)
    MG_CHECK(self.stride(d) != 0 || self.size(d) <= 1, op,
             "unsupported operation: more than one element of the written-to tensor refers to a "
             "single memory location (dim ",
             d, " of shape ", self.shape(), " has stride 0); clone() the tensor first");
  MG_CHECK(!self.impl()->is_inference || InferenceMode::is_enabled(), op,
           "in-place update to an inference tensor outside InferenceMode is not allowed; clone() "
           "it to get a normal tensor first");
  if (!is_grad_enabled()) return;
  detail::refresh_view(self.impl());
  const TensorImpl* impl = self.impl();
  using ViewCreation = TensorImpl::ViewCreation;
  MG_CHECK(impl->view_creation != ViewCreation::kNoGrad, op,
           "a view was created in no-grad mode and is being modified in place with grad mode "
           "enabled; do both under NoGradGuard (not tracked) or both outside it (tracked)");
  MG_CHECK(impl->view_creation != ViewCreation::kInference, op,
           "a view was created in inference mode and is being modified in place in normal mode; "
           "do both inside InferenceMode (not tracked) or both outside it (tracked)");
  MG_CHECK(impl->view_creation != ViewCreation::kMultiOutput, op, "output ", impl->output_nr,
           " of ", impl->grad_fn ? impl->grad_fn->name() : std::string("split"),
           " is a view and is being modified in place; split and chunk return several views, "
           "which may not be modified in place: use an out-of-place op (or clone() the piece)");
  MG_CHECK(!(impl->requires_grad && impl->grad_fn == nullptr), op,
           impl->view_base ? "a view of a leaf tensor that requires grad cannot be modified in "
                             "place; use it under NoGradGuard"
                           : "a leaf tensor that requires grad cannot be modified in place; use "
                             "it under NoGradGuard");
  // As PyTorch's check_inplace: a view that requires grad whose base is a leaf (that base
  // requires grad, or the view is itself a leaf made with requires_grad_(), as
  // arange(6.0).reshape({2, 3}).requires_grad_(), and this is a view of it).
  const TensorImpl* base = impl->view_base.get();
  MG_CHECK(!(base && base->grad_fn == nullptr && (base->requires_grad || impl->requires_grad)), op,
           "a view of a leaf tensor that requires grad cannot be modified in place; use it under "
           "NoGradGuard");
}

/// Whether values of dtype `from` may be written into a tensor of dtype `to` (PyTorch's canCast).
bool can_cast(Dtype from, Dtype to) {
  if (is_floating_point(from) && !is_floating_point(to)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

void check_result(const Tensor& self, const Tensor& r, const char* op) {
  MG_CHECK(r.shape() == self.shape(), op, "output with shape ", self.shape(),
           " doesn't match the broadcast shape ", r.shape());
  MG_CHECK(can_cast(r.dtype(), self.dtype()), op, "result type ", dtype_name(r.dtype()),
           " can't be cast to the desired output type ", dtype_name(self.dtype()));
}

/// Writes r's values into self's elements (Note [In-place ops]).
void write(const Tensor& self, const Tensor& r) {
  detail::copy_into(self, r);
  detail::bump_version(self);
}

/// Gives self the history of r's node after r was written into it (Note [In-place ops]).
void take_history(Tensor& self, const std::shared_ptr<FunctionNode>& node) {
  TensorImpl* impl = self.impl();
  detail::NodeAccess::set_output_meta(*node, impl->shape, impl->dtype);
  if (!impl->view_base) {
    impl->grad_fn = node;
    impl->output_nr = 0;
    impl->requires_grad = true;
    ++impl->history;  // views of self remake their grad_fn from it
    return;
  }
  // Note [In-place on views]
  TensorImpl* base = impl->view_base.get();
  MG_CHECK(base->strides == detail::contiguous_strides(base->shape), node->name(),
           "internal error: the base of a view is not contiguous");
  Tensor base_t(impl->view_base);
  Edge old = detail::gradient_edge(base_t);
  auto copy_slices = std::make_shared<CopySlices>(std::move(old), base->shape, base->dtype,
                                                  geometry_in_base(*impl), node);
  // A saved output (exp_ on a view) is the view's new value: its history goes through the base.
  std::weak_ptr<Node> weak_base_fn = copy_slices;
  node->set_output_history([weak_base_fn, base_shape = base->shape, geo = geometry_in_base(*impl),
                            shape = impl->shape, dtype = impl->dtype]() -> std::shared_ptr<Node> {
    std::shared_ptr<Node> base_fn = weak_base_fn.lock();
    MG_CHECK(base_fn != nullptr, "backward", "internal error: CopySlices is being destroyed");
    return as_strided_node(Edge{std::move(base_fn)}, base_shape, geo, shape, dtype);
  });
  base->grad_fn = std::move(copy_slices);
  base->output_nr = 0;
  base->requires_grad = true;
  ++base->history;
  detail::refresh_view(impl);
}

/// Runs an in-place op: `compute(self)` is the out-of-place op; `others` its other tensors.
template <typename Compute>
Tensor& inplace(Tensor& self, const char* op, std::initializer_list<const Tensor*> others,
                Compute&& compute) {
  MG_PROFILE_INPLACE_OP(op);
  check_writable(self, op);
  detail::refresh_view(self.impl());
  bool autograd = self.requires_grad();
  if (self.impl()->view_base) autograd |= self.impl()->view_base->requires_grad;
  for (const Tensor* t : others) autograd |= t->defined() && t->requires_grad();
  autograd &= is_grad_enabled();
  if (!autograd) {
    Tensor r;
    {
      NoGradGuard no_grad;
      r = compute(self);
    }
    check_result(self, r, op);
    write(self, r);
    return self;
  }
  Tensor r = compute(self);
  check_result(self, r, op);
  auto node = std::dynamic_pointer_cast<FunctionNode>(r.impl()->grad_fn);
  MG_CHECK(node != nullptr, op, "internal error: the op recorded no node");
  node->clone_saved_sharing(self.impl()->storage.get());
  write(self, r.detach());
  node->rebind_saved_output(self);
  take_history(self, node);
  return self;
}

}  // namespace

namespace detail {
Tensor& inplace_op(Tensor& self, const char* op, std::initializer_list<const Tensor*> others,
                   const std::function<Tensor(const Tensor&)>& compute) {
  return inplace(self, op, others, compute);
}
void check_writable(const Tensor& self, const char* op) { minigrad::check_writable(self, op); }
}  // namespace detail

namespace {

/// other * alpha, skipping the multiply for alpha == 1.
Tensor scaled(const Tensor& other, Scalar alpha) {
  if (alpha.kind() != Scalar::Kind::Float && alpha.to_int() == 1) return other;
  if (alpha.kind() == Scalar::Kind::Float && alpha.to_double() == 1.0) return other;
  return mul(other, alpha);
}

void check_broadcast_into(const Tensor& self, const Tensor& other, const char* op) {
  MG_CHECK(self.defined() && other.defined(), op, "called with an undefined tensor");
  Shape b = detail::broadcast_shapes(self.shape(), other.shape(), op);
  MG_CHECK(b == self.shape(), op, "output with shape ", self.shape(),
           " doesn't match the broadcast shape ", b);
}

}  // namespace

namespace detail {

void regenerate_view_history(TensorImpl* view) {
  TensorImpl* base = view->view_base.get();
  // A piece of split (Note [Split as one node]) cannot follow its base's new history: refused
  // whenever it is used, as PyTorch does.
  MG_CHECK(view->view_creation != TensorImpl::ViewCreation::kMultiOutput || !view->grad_fn,
           view->grad_fn ? view->grad_fn->name().c_str() : "split", "output ", view->output_nr,
           " is a view and its base or another view of its base has been modified in place; "
           "split and chunk return several views, whose base may not be modified in place while "
           "they are used: use an out-of-place op (or clone() the pieces)");
  view->history = base->history;
  if (!base->requires_grad || view->view_creation != TensorImpl::ViewCreation::kNormal) return;
  view->grad_fn = as_strided_node(gradient_edge(Tensor(view->view_base)), base->shape,
                                  geometry_in_base(*view), view->shape, view->dtype);
  view->output_nr = 0;
  view->requires_grad = true;
}

}  // namespace detail

// ---------------------------------------------------------------- arithmetic

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  check_broadcast_into(*this, other, "add_");
  return inplace(*this, "add_", {&other},
                 [&](const Tensor& s) { return add(s, scaled(other, alpha)); });
}
Tensor& Tensor::add_(Scalar other, Scalar alpha) {
  MG_CHECK(defined(), "add_", "called on an undefined tensor");
  return inplace(*this, "add_", {}, [&](const Tensor& s) {
    return add(s, scaled(scalar_tensor(other, detail::result_type(s, other)), alpha));
  });
}
Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) {
  check_broadcast_into(*this, other, "sub_");
  return inplace(*this, "sub_", {&other},
                 [&](const Tensor& s) { return sub(s, scaled(other, alpha)); });
}
Tensor& Tensor::sub_(Scalar other, Scalar alpha) {
  MG_CHECK(defined(), "sub_", "called on an undefined tensor");
  return inplace(*this, "sub_", {}, [&](const Tensor& s) {
    return sub(s, scaled(scalar_tensor(other, detail::result_type(s, other)), alpha));
  });
}
Tensor& Tensor::mul_(const Tensor& other) {
  check_broadcast_into(*this, other, "mul_");
  return inplace(*this, "mul_", {&other}, [&](const Tensor& s) { return mul(s, other); });
}
Tensor& Tensor::mul_(Scalar other) {
  return inplace(*this, "mul_", {}, [&](const Tensor& s) { return mul(s, other); });
}
Tensor& Tensor::div_(const Tensor& other) {
  check_broadcast_into(*this, other, "div_");
  return inplace(*this, "div_", {&other}, [&](const Tensor& s) { return div(s, other); });
}
Tensor& Tensor::div_(Scalar other) {
  return inplace(*this, "div_", {}, [&](const Tensor& s) { return div(s, other); });
}
Tensor& Tensor::pow_(Scalar exponent) {
  return inplace(*this, "pow_", {}, [&](const Tensor& s) { return minigrad::pow(s, exponent); });
}
Tensor& Tensor::pow_(const Tensor& exponent) {
  check_broadcast_into(*this, exponent, "pow_");
  return inplace(*this, "pow_", {&exponent},
                 [&](const Tensor& s) { return minigrad::pow(s, exponent); });
}

// Note [Assigning to a temporary] (tensor.h).
namespace {
void check_assignable(const Tensor& self, const char* what) {
  MG_CHECK(self.defined(), "Tensor::operator=", "assigning ", what,
           " to an undefined temporary tensor");
  const TensorImpl& impl = *self.impl();
  MG_CHECK(!(self.impl_ptr().use_count() == 1 && impl.storage.use_count() == 1 &&
             impl.view_base == nullptr),
           "Tensor::operator=", "assigning ", what, " to a temporary of shape ", impl.shape,
           " that shares its storage with no other tensor would write nothing (advanced "
           "indexing, x.index({mask}) or x.index({idx_tensor}), returns a copy): write "
           "x.index_put_({...}, value) instead");
}
}  // namespace

Tensor& Tensor::operator=(const Tensor& src) && {
  check_assignable(*this, "a tensor");
  return copy_(src);
}
Tensor& Tensor::operator=(Tensor&& src) && {
  check_assignable(*this, "a tensor");
  return copy_(src);
}
Tensor& Tensor::operator=(Scalar value) && {
  check_assignable(*this, "a value");
  return fill_(value);
}

Tensor& Tensor::operator+=(const Tensor& other) { return add_(other); }
Tensor& Tensor::operator-=(const Tensor& other) { return sub_(other); }
Tensor& Tensor::operator*=(const Tensor& other) { return mul_(other); }
Tensor& Tensor::operator/=(const Tensor& other) { return div_(other); }
Tensor& Tensor::operator+=(Scalar other) { return add_(other); }
Tensor& Tensor::operator-=(Scalar other) { return sub_(other); }
Tensor& Tensor::operator*=(Scalar other) { return mul_(other); }
Tensor& Tensor::operator/=(Scalar other) { return div_(other); }

// ---------------------------------------------------------------- unary

#define MG_INPLACE_UNARY(name, fn)                                                     \
  Tensor& Tensor::name() {                                                             \
    return inplace(*this, #name, {}, [](const Tensor& s) { return minigrad::fn(s); }); \
  }
MG_INPLACE_UNARY(neg_, neg)
MG_INPLACE_UNARY(exp_, exp)
MG_INPLACE_UNARY(log_, log)
MG_INPLACE_UNARY(sqrt_, sqrt)
MG_INPLACE_UNARY(abs_, abs)
MG_INPLACE_UNARY(relu_, relu)
MG_INPLACE_UNARY(sigmoid_, sigmoid)
MG_INPLACE_UNARY(tanh_, tanh)
#undef MG_INPLACE_UNARY

Tensor& Tensor::clamp_(std::optional<double> min, std::optional<double> max) {
  return inplace(*this, "clamp_", {},
                 [&](const Tensor& s) { return minigrad::clamp(s, min, max); });
}

Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  MG_CHECK(defined() && mask.defined(), "masked_fill_", "called with an undefined tensor");
  return inplace(*this, "masked_fill_", {},
                 [&](const Tensor& s) { return minigrad::masked_fill(s, mask, value); });
}

// ---------------------------------------------------------------- fill_, zero_, copy_

namespace {
/// value in dtype, with fill_'s int64 range check.
void check_fill_value(Dtype dtype, Scalar value) {
  if (dtype == kInt64 && value.kind() == Scalar::Kind::Float) {
    double d = value.to_double();
    MG_CHECK(d >= -9223372036854775808.0 && d < 9223372036854775808.0, "fill_", "value ", d,
             " cannot be converted to int64 without overflow");
  }
}

/// A node whose output does not depend on its input's old value: gradient zeros (FillBackward2,
/// ZeroBackward0), as PyTorch.
Tensor overwrite(const Tensor& self, Tensor values, const char* node) {
  detail::record(node, values, {&self},
                 [](const Tensor& g, FunctionNode&) { return Grads{zeros_like(g)}; });
  return values;
}
}  // namespace

Tensor& Tensor::fill_(Scalar value) {
  check_writable(*this, "fill_");
  check_fill_value(dtype(), value);
  return inplace(*this, "fill_", {}, [&](const Tensor& s) {
    return overwrite(s, full(s.shape(), value, s.dtype()), "FillBackward2");
  });
}

Tensor& Tensor::zero_() {
  return inplace(*this, "zero_", {}, [](const Tensor& s) {
    return overwrite(s, zeros(s.shape(), s.dtype()), "ZeroBackward0");
  });
}

Tensor& Tensor::copy_(const Tensor& src) {
  MG_PROFILE_INPLACE_OP("copy_");
  MG_CHECK(defined() && src.defined(), "copy_", "called with an undefined tensor");
  Shape b = detail::broadcast_shapes(shape(), src.shape(), "copy_");
  MG_CHECK(b == shape(), "copy_", "source of shape ", src.shape(),
           " cannot be broadcast to the destination's shape ", shape());
  check_writable(*this, "copy_");
  if (!(is_grad_enabled() && (requires_grad() || src.requires_grad() ||
                              (impl_->view_base && impl_->view_base->requires_grad)))) {
    // The plain copy: through a temporary when the two overlap in memory.
    Tensor s = src.impl()->storage == impl_->storage ? src.detach().clone() : src;
    detail::copy_into(*this, s);
    detail::bump_version(*this);
    return *this;
  }
  return inplace(*this, "copy_", {&src}, [&](const Tensor& s) {
    Tensor values = detail::make_tensor(s.shape(), s.dtype());
    detail::copy_into(values, src);
    // d copy / d self = 0; d copy / d src = g (the engine sums a broadcast src and converts the
    // dtype back).
    detail::record("CopyBackwards", values, {&s, &src}, [](const Tensor& g, FunctionNode& n) {
      return Grads{n.needs_input_grad(0) ? zeros_like(g) : Tensor(), g};
    });
    return values;
  });
}

}  // namespace minigrad
