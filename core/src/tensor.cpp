// Tensor: storage, metadata, data access, conversions, autograd accessors and grad mode.
#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <ostream>

#include "autograd/function.h"
#include "kernels/dispatch.h"
#include "kernels/loops.h"
#include "live_count.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/linalg.h"
#include "minigrad/ops/random.h"
#include "minigrad/ops/reduce.h"
#include "minigrad/ops/shape.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

// ---------------------------------------------------------------- storage

std::int64_t live_storage_count() { return detail::live_total(detail::LiveKind::kStorage); }

Storage::Storage(std::size_t n) : nbytes(n) {
  // 64-byte alignment suits AVX-512 loads and OpenBLAS (Note [Caching allocator]).
  data = detail::cached_alloc(std::max<std::size_t>(n, 1));
  if (data == nullptr) detail::throw_out_of_memory(n);
  detail::live_add(detail::LiveKind::kStorage, 1);
  if (profiler::detail::is_on()) profiler::detail::add_bytes(static_cast<std::int64_t>(n));
}
Storage::Storage(void* external_data, std::size_t n, std::nullptr_t)
    : data(external_data), nbytes(n), external(true) {
  detail::live_add(detail::LiveKind::kStorage, 1);
}
Storage::~Storage() {
  if (external) {
    if (deleter && *deleter) (*deleter)(data);
  } else {
    detail::cached_free(data, std::max<std::size_t>(nbytes, 1));
  }
  detail::live_add(detail::LiveKind::kStorage, -1);
}

namespace detail {

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  std::int64_t s = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto s : shape)
    MG_CHECK(!__builtin_mul_overflow(n, s, &n), "shape", "shape ", shape,
             " has more elements than int64 can count");
  return n;
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, const char* op) {
  // A 0-dim tensor accepts dims 0 and -1, as PyTorch.
  std::int64_t n = std::max<std::int64_t>(ndim, 1);
  MG_CHECK(dim >= -n && dim < n, op, "dim ", dim, " is out of range for a tensor with ", ndim,
           " dims (expected a dim in [", -n, ", ", n - 1, "])");
  return dim < 0 ? dim + n : dim;
}

Tensor make_tensor(const Shape& shape, Dtype dtype) {
  std::int64_t numel = 1;
  for (auto s : shape) {
    MG_CHECK(s >= 0, "empty", "negative size in shape ", shape);
    MG_CHECK(!__builtin_mul_overflow(numel, s, &numel) &&
                 numel <= (std::int64_t{1} << 62) / static_cast<std::int64_t>(element_size(dtype)),
             "empty", "shape ", shape, " has too many elements to allocate");
  }
  // The strides multiply the sizes as if empty dims had size 1: check that product too.
  std::int64_t span = 1;
  for (auto s : shape)
    MG_CHECK(!__builtin_mul_overflow(span, std::max<std::int64_t>(s, 1), &span), "empty", "shape ",
             shape, " is too large: its strides overflow int64");
  auto impl = new_tensor_impl();
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->numel = numel;
  impl->dtype = dtype;
  impl->storage = std::allocate_shared<Storage>(
      CachingAllocator<Storage>{}, static_cast<std::size_t>(numel) * element_size(dtype));
  return Tensor(std::move(impl));
}

void throw_shape_index(std::size_t i, std::size_t size) {
  MG_ERROR("Shape.at", "index ", i, " is out of range for a shape of ", size, " dims");
}

Tensor make_view_of(const Tensor& x, const Shape& shape, const Shape& strides,
                    std::int64_t offset) {
  Tensor out = make_view(x, shape, strides, offset);
  TensorImpl* impl = out.impl();
  impl->view_base = x.impl()->view_base ? x.impl()->view_base : x.impl_ptr();
  impl->history = impl->view_base->history;
  if (!is_grad_enabled() && x.requires_grad()) {
    impl->requires_grad = true;
    impl->view_creation = InferenceMode::is_enabled() ? TensorImpl::ViewCreation::kInference
                                                      : TensorImpl::ViewCreation::kNoGrad;
  }
  return out;
}

Tensor make_tensor_on(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides,
                      Dtype dtype) {
  auto impl = new_tensor_impl();
  impl->storage = std::move(storage);
  impl->shape = shape;
  impl->strides = strides;
  impl->numel = shape_numel(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides,
                 std::int64_t offset) {
  auto impl = new_impl();
  impl->storage = base.impl()->storage;
  impl->offset = offset;
  impl->shape = shape;
  impl->strides = strides;
  impl->numel = shape_numel(shape);
  impl->dtype = base.dtype();
  impl->is_inference = base.impl()->is_inference;
  return Tensor(std::move(impl));
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    MG_CHECK(da == db || da == 1 || db == 1, op, "shapes ", a, " and ", b,
             " cannot be broadcast: size ", da, " and size ", db, " differ at dim ", i,
             " and neither is 1");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_strides(const Tensor& t, const Shape& shape) {
  const Shape& ts = t.shape();
  const Shape& tst = t.strides();
  Shape out(shape.size(), 0);
  std::size_t lead = shape.size() - ts.size();
  for (std::size_t i = 0; i < ts.size(); ++i) out[lead + i] = ts[i] == 1 ? 0 : tst[i];
  return out;
}

namespace {
// PyTorch's categories for result_type: bool < integer < floating.
int category(Dtype d) { return d == kBool ? 0 : (d == kInt64 ? 1 : 2); }
}  // namespace

Dtype result_type(const Tensor& a, const Tensor& b) {
  bool a0 = a.dim() == 0, b0 = b.dim() == 0;
  if (a0 == b0) return promote_types(a.dtype(), b.dtype());
  // A dimensioned tensor decides unless the 0-dim one is of a higher category.
  Dtype dimd = a0 ? b.dtype() : a.dtype();
  Dtype zero = a0 ? a.dtype() : b.dtype();
  return category(zero) > category(dimd) ? zero : dimd;
}

Dtype result_type(const Tensor& a, Scalar b) {
  Dtype s = b.default_dtype();
  return category(s) > category(a.dtype()) ? s : a.dtype();
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const Shape& gs = grad.shape();
  std::size_t lead = gs.size() - shape.size();
  Shape dims;
  for (std::size_t i = 0; i < gs.size(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && gs[i] != 1))
      dims.push_back(static_cast<std::int64_t>(i));
  }
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return r.reshape(shape);
}

bool any_requires_grad(std::initializer_list<const Tensor*> tensors) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : tensors)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

/// Copies src (broadcast to dst's shape) into dst, converting the dtype.
void copy_into(const Tensor& dst, const Tensor& src) {
  const Shape& shape = dst.shape();
  Shape ss = broadcast_strides(src, shape);
  dispatch(dst.dtype(), [&]<typename D>() {
    dispatch(src.dtype(), [&]<typename S>() {
      unary_loop<S, D>(shape, src.impl()->data<S>(), ss, dst.impl()->data<D>(), dst.strides(),
                       [](S v) { return convert_value<D>(v); });
    });
  });
}

}  // namespace detail

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  os << '[';
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  return os << ']';
}

using detail::wrap_dim;

// ---------------------------------------------------------------- grad mode

namespace {
thread_local bool grad_enabled = true;
}
bool is_grad_enabled() { return grad_enabled; }
void set_grad_enabled(bool enabled) { grad_enabled = enabled; }
NoGradGuard::NoGradGuard() : prev_(grad_enabled) { grad_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_enabled = prev_; }
GradModeGuard::GradModeGuard(bool enabled) : prev_(grad_enabled) { grad_enabled = enabled; }
GradModeGuard::~GradModeGuard() { grad_enabled = prev_; }

// Note [Inference mode]
// InferenceMode is libtorch's c10::InferenceMode: grad mode off, and every tensor made while it
// is on is an inference tensor (is_inference()), which autograd may never need: saving one for
// backward, writing one in place outside InferenceMode, turning on its requires_grad outside it
// and reading its _version() all throw PyTorch's errors. Ops outside InferenceMode may read
// inference tensors; their results are normal tensors. A view made inside InferenceMode of a
// normal tensor that requires grad is a normal tensor that refuses tracked in-place writes, as a
// view made under NoGradGuard (Note [In-place on views]). What PyTorch saves with it (no version
// counter, no view tracking) minigrad does not need: a version bump costs one increment.
namespace {
thread_local bool inference_enabled = false;
}
InferenceMode::InferenceMode(bool enabled) : prev_(inference_enabled), prev_grad_(grad_enabled) {
  inference_enabled = enabled;
  grad_enabled = !enabled;
}
InferenceMode::~InferenceMode() {
  inference_enabled = prev_;
  grad_enabled = prev_grad_;
}
bool InferenceMode::is_enabled() { return inference_enabled; }

// ---------------------------------------------------------------- metadata

namespace {
const TensorImpl& checked(const TensorImpl* impl, const char* what) {
  MG_CHECK(impl != nullptr, what, "called on an undefined tensor");
  return *impl;
}
}  // namespace

const Shape& Tensor::shape() const { return checked(impl_.get(), "shape").shape; }
const Shape& Tensor::strides() const { return checked(impl_.get(), "strides").strides; }
std::int64_t Tensor::size(std::int64_t d) const {
  const auto& s = checked(impl_.get(), "size").shape;
  MG_CHECK(!s.empty(), "size", "a 0-dim tensor has no dim ", d);
  return s[wrap_dim(d, dim(), "size")];
}
std::int64_t Tensor::stride(std::int64_t d) const {
  const auto& s = checked(impl_.get(), "stride").strides;
  MG_CHECK(!s.empty(), "stride", "a 0-dim tensor has no dim ", d);
  return s[wrap_dim(d, dim(), "stride")];
}
std::int64_t Tensor::storage_offset() const {
  return checked(impl_.get(), "storage_offset").offset;
}
std::int64_t Tensor::dim() const {
  return static_cast<std::int64_t>(checked(impl_.get(), "dim").shape.size());
}
std::int64_t Tensor::numel() const { return checked(impl_.get(), "numel").numel; }
Dtype Tensor::dtype() const { return checked(impl_.get(), "dtype").dtype; }

bool Tensor::is_contiguous() const {
  const auto& impl = checked(impl_.get(), "is_contiguous");
  if (impl.numel == 0) return true;  // as PyTorch: no element is out of place
  std::int64_t expected = 1;
  for (std::size_t i = impl.shape.size(); i-- > 0;) {
    if (impl.shape[i] == 1) continue;
    if (impl.strides[i] != expected) return false;
    expected *= impl.shape[i];
  }
  return true;
}

// ---------------------------------------------------------------- data access

namespace {
/// v as T; a floating value that an integer T cannot hold (NaN, 1e30) throws, as libtorch's
/// checked conversion does, instead of silently giving INT64_MIN.
template <typename T, typename S>
T checked_value(S v, const char* op) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_floating_point_v<S>) {
    const double d = static_cast<double>(v);
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = -lo;  // 2^63 (or 2^31): the first value beyond the type
    MG_CHECK(d >= lo && d < hi, op, "value ", d, " cannot be converted to type ",
             sizeof(T) == 8 ? "int64_t" : "int32_t", " without overflow");
  }
  return detail::convert_value<T>(v);
}
}  // namespace

template <typename T>
T Tensor::item() const {
  MG_CHECK(defined(), "item", "called on an undefined tensor");
  MG_CHECK(numel() == 1, "item", "a Tensor with ", numel(), " elements (shape ", shape(),
           ") cannot be converted to a scalar; only one-element tensors can");
  return detail::dispatch(
      dtype(), [&]<typename S>() { return checked_value<T>(*impl_->data<S>(), "item"); });
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  MG_CHECK(defined(), "to_vector", "called on an undefined tensor");
  // std::vector<bool> has no data(): collect into a plain buffer of U, then copy.
  using U = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;
  std::vector<U> buf(static_cast<std::size_t>(numel()));
  const Shape& shape = impl_->shape;
  Shape so = detail::contiguous_strides(shape);
  detail::dispatch(dtype(), [&]<typename S>() {
    detail::unary_loop<S, U>(shape, impl_->data<S>(), impl_->strides, buf.data(), so,
                             [](S v) { return static_cast<U>(checked_value<T>(v, "to_vector")); });
  });
  if constexpr (std::is_same_v<T, U>)
    return buf;
  else
    return std::vector<T>(buf.begin(), buf.end());
}

template <typename T>
T* Tensor::data_ptr() const {
  MG_CHECK(defined(), "data_ptr", "called on an undefined tensor");
  MG_CHECK(detail::dtype_of<T>() == dtype(), "data_ptr", "requested ",
           dtype_name(detail::dtype_of<T>()), " but the tensor's dtype is ", dtype_name(dtype()));
  return impl_->data<T>();
}

#define MG_INSTANTIATE_ACCESS(T)      \
  template T Tensor::item<T>() const; \
  template std::vector<T> Tensor::to_vector<T>() const;
MG_INSTANTIATE_ACCESS(float)
MG_INSTANTIATE_ACCESS(double)
MG_INSTANTIATE_ACCESS(std::int64_t)
MG_INSTANTIATE_ACCESS(std::int32_t)
MG_INSTANTIATE_ACCESS(bool)
#undef MG_INSTANTIATE_ACCESS
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template std::int64_t* Tensor::data_ptr<std::int64_t>() const;
template bool* Tensor::data_ptr<bool>() const;

// ---------------------------------------------------------------- copies and conversions

Tensor Tensor::clone() const {
  MG_PROFILE_OP("clone");
  MG_CHECK(defined(), "clone", "called on an undefined tensor");
  Tensor out = detail::make_tensor(shape(), dtype());
  detail::copy_into(out, *this);
  detail::record("CloneBackward0", out, {this},
                 [](const Tensor& g, detail::FunctionNode&) { return std::vector<Tensor>{g}; });
  return out;
}

Tensor Tensor::contiguous() const {
  MG_PROFILE_OP("contiguous");
  MG_CHECK(defined(), "contiguous", "called on an undefined tensor");
  return is_contiguous() ? *this : clone();
}

Tensor Tensor::to(Device target) const {
  MG_CHECK(defined(), "to", "called on an undefined tensor");
  check_cpu(target, "to");
  return *this;
}
Tensor Tensor::to(Device target, Dtype dtype) const { return to(target).to(dtype); }
Device Tensor::device() const { return Device(kCPU); }
TensorOptions Tensor::options() const { return TensorOptions(dtype()); }

std::ostream& operator<<(std::ostream& os, Layout) { return os << "Strided"; }

Tensor Tensor::to(const TensorOptions& options, bool /*non_blocking*/, bool copy) const {
  MG_CHECK(defined(), "to", "called on an undefined tensor");
  MG_CHECK(!options.requires_grad(), "to",
           "Operators taking TensorOptions cannot take a TensorOptions with "
           "options.requires_grad set as true (use requires_grad_() on the result)");
  check_cpu(options.device(), "to");
  Tensor out = options.has_dtype() ? to(options.dtype()) : *this;
  return copy && out.is_same(*this) ? clone() : out;
}

Tensor Tensor::to(Dtype target) const {
  MG_PROFILE_OP("to");
  MG_CHECK(defined(), "to", "called on an undefined tensor");
  if (target == dtype()) return *this;
  Tensor out = detail::make_tensor(shape(), target);
  detail::copy_into(out, *this);
  if (minigrad::is_floating_point(target)) {
    Dtype from = dtype();
    detail::record("ToCopyBackward0", out, {this}, [from](const Tensor& g, detail::FunctionNode&) {
      return std::vector<Tensor>{g.to(from)};
    });
  }
  return out;
}

Tensor Tensor::detach() const {
  MG_PROFILE_OP("detach");
  MG_CHECK(defined(), "detach", "called on an undefined tensor");
  return detail::make_view(*this, shape(), strides(), storage_offset());
}

Tensor Tensor::tensor_data() const {
  MG_CHECK(defined(), "tensor_data", "called on an undefined tensor");
  return detach();
}

Tensor Tensor::variable_data() const {
  MG_CHECK(defined(), "variable_data", "called on an undefined tensor");
  return detach();
}

// ---------------------------------------------------------------- autograd accessors

bool Tensor::requires_grad() const {
  checked(impl_.get(), "requires_grad");
  // A piece of split already requires grad; its refresh would refuse (regenerate_view_history).
  if (impl_->view_creation != TensorImpl::ViewCreation::kMultiOutput)
    detail::refresh_view(impl_.get());
  return impl_->requires_grad;
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  MG_CHECK(defined(), "requires_grad_", "called on an undefined tensor");
  MG_CHECK(is_leaf() || requires_grad, "requires_grad_",
           "requires_grad cannot be turned off on a non-leaf tensor; use detach()");
  MG_CHECK(!(requires_grad && impl_->is_inference && !InferenceMode::is_enabled()),
           "requires_grad_",
           "setting requires_grad=true on an inference tensor outside InferenceMode is not "
           "allowed; clone() it outside InferenceMode first");
  MG_CHECK(!requires_grad || is_floating_point(), "requires_grad_",
           "only floating-point tensors can require gradients, but this tensor is ",
           dtype_name(dtype()));
  impl_->requires_grad = requires_grad;
  return *this;
}

Tensor Tensor::grad() const {
  const TensorImpl& impl = checked(impl_.get(), "grad");
  return impl.meta ? impl.meta->grad : Tensor();
}

void Tensor::set_grad(const Tensor& g) const {
  MG_CHECK(defined(), "set_grad", "called on an undefined tensor");
  if (g.defined()) {
    MG_CHECK(g.shape() == shape(), "set_grad", "gradient of shape ", g.shape(),
             " does not match the tensor's shape ", shape());
    MG_CHECK(g.dtype() == dtype(), "set_grad", "gradient of dtype ", dtype_name(g.dtype()),
             " does not match the tensor's dtype ", dtype_name(dtype()));
  }
  if (g.defined() || impl_->meta) impl_->autograd_meta().grad = g;
}

bool Tensor::is_alias_of(const Tensor& other) const {
  MG_CHECK(defined() && other.defined(), "is_alias_of", "called with an undefined tensor");
  return impl_->storage == other.impl_->storage;
}

void Tensor::set_data(const Tensor& new_data) const {
  MG_CHECK(defined() && new_data.defined(), "set_data", "called with an undefined tensor");
  MG_CHECK(!impl_->view_base, "set_data", "cannot change the data of a view");
  TensorImpl* impl = impl_.get();
  const TensorImpl* src = new_data.impl();
  impl->storage = src->storage;
  impl->offset = src->offset;
  impl->shape = src->shape;
  impl->strides = src->strides;
  impl->numel = src->numel;
  if (impl->meta && impl->meta->grad.defined() && impl->meta->grad.dtype() != src->dtype)
    impl->meta->grad = Tensor();
  impl->dtype = src->dtype;
}

std::int64_t Tensor::_version() const {
  const TensorImpl& impl = checked(impl_.get(), "_version");
  MG_CHECK(!impl.is_inference, "_version", "inference tensors do not track version counter");
  return impl.storage->version;
}

bool Tensor::is_inference() const { return checked(impl_.get(), "is_inference").is_inference; }

namespace autograd {
void increment_version(const Tensor& t) {
  MG_CHECK(t.defined(), "increment_version", "called on an undefined tensor");
  detail::bump_version(t);
}
}  // namespace autograd

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

Tensor& Tensor::detach_() {
  checked(impl_.get(), "detach_");
  MG_CHECK(!impl_->view_base, "detach_",
           "can't detach views in-place: use detach() instead (this tensor is a view of another)");
  impl_->grad_fn = nullptr;
  impl_->output_nr = 0;
  impl_->requires_grad = false;
  if (impl_->meta) {
    impl_->meta->retains_grad = false;
    impl_->meta->grad_accumulator.reset();
  }
  return *this;
}

bool Tensor::is_view() const {
  checked(impl_.get(), "is_view");
  return impl_->view_base != nullptr;
}

std::int64_t Tensor::output_nr() const {
  checked(impl_.get(), "output_nr");
  detail::refresh_view(impl_.get());
  return impl_->output_nr;
}
std::shared_ptr<Node> Tensor::grad_fn() const {
  checked(impl_.get(), "grad_fn");
  detail::refresh_view(impl_.get());
  return impl_->grad_fn;
}

void Tensor::retain_grad() const {
  MG_CHECK(defined(), "retain_grad", "called on an undefined tensor");
  MG_CHECK(requires_grad(), "retain_grad",
           "can't retain_grad on a tensor that has requires_grad=False");
  if (is_leaf() || retains_grad()) return;  // leaves keep their grad anyway
  impl_->autograd_meta().retains_grad = true;
  detail::NodeAccess::retained(*impl_->grad_fn).push_back(impl_);
}

bool Tensor::retains_grad() const {
  const TensorImpl& impl = checked(impl_.get(), "retains_grad");
  return impl.meta && impl.meta->retains_grad;
}

std::size_t Tensor::register_hook(TensorHook hook) const {
  MG_CHECK(defined(), "register_hook", "called on an undefined tensor");
  MG_CHECK(requires_grad(), "register_hook",
           "cannot register a hook on a tensor that doesn't require gradient");
  if (!is_leaf()) {
    return impl_->grad_fn->register_prehook(std::move(hook), impl_->output_nr);
  }
  // A leaf keeps its hooks for every graph it will take part in; a graph alive now (its
  // AccumulateGrad node exists) gets the hook too.
  AutogradMeta& meta = impl_->autograd_meta();
  if (auto acc = meta.grad_accumulator.lock()) acc->register_prehook(hook);
  meta.leaf_hooks.push_back(PreHook{0, std::move(hook), detail::hook_trace()});
  return meta.leaf_hooks.size() - 1;
}

std::size_t Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  MG_CHECK(defined(), "register_post_accumulate_grad_hook", "called on an undefined tensor");
  MG_CHECK(requires_grad(), "register_post_accumulate_grad_hook",
           "cannot register a hook on a tensor that doesn't require gradient");
  MG_CHECK(is_leaf(), "register_post_accumulate_grad_hook",
           "post accumulate grad hooks cannot be registered on non-leaf tensors");
  MG_CHECK(hook != nullptr, "register_post_accumulate_grad_hook", "the hook is empty");
  AutogradMeta& meta = impl_->autograd_meta();
  meta.post_accumulate_hooks.push_back(std::move(hook));
  return meta.post_accumulate_hooks.size() - 1;
}

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph,
                      std::optional<TensorList> inputs) const {
  MG_CHECK(defined(), "backward", "called on an undefined tensor");
  MG_CHECK(!inputs || !inputs->empty(), "backward",
           "'inputs' argument to backward() cannot be empty (leave it out to accumulate into "
           "every leaf)");
  std::vector<Tensor> grads;
  if (gradient.defined()) grads.push_back(gradient);
  autograd::backward({*this}, grads, retain_graph, create_graph,
                     inputs ? inputs->vec() : std::vector<Tensor>{});
}

// ---------------------------------------------------------------- methods forwarding to ops

Tensor Tensor::transpose(std::int64_t d0, std::int64_t d1) const {
  return minigrad::transpose(*this, d0, d1);
}
Tensor Tensor::permute(const Shape& dims) const { return minigrad::permute(*this, dims); }
Tensor Tensor::unsqueeze(std::int64_t d) const { return minigrad::unsqueeze(*this, d); }
Tensor Tensor::squeeze() const { return minigrad::squeeze(*this); }
Tensor Tensor::squeeze(std::int64_t d) const { return minigrad::squeeze(*this, d); }
Tensor Tensor::reshape(const Shape& s) const { return minigrad::reshape(*this, s); }
Tensor Tensor::flatten(std::int64_t s, std::int64_t e) const {
  return minigrad::flatten(*this, s, e);
}
Tensor Tensor::matmul(const Tensor& o) const { return minigrad::matmul(*this, o); }
Tensor Tensor::mm(const Tensor& o) const { return minigrad::mm(*this, o); }
Tensor Tensor::bmm(const Tensor& o) const { return minigrad::bmm(*this, o); }
Tensor Tensor::softmax(std::int64_t d) const { return minigrad::softmax(*this, d); }
Tensor Tensor::log_softmax(std::int64_t d) const { return minigrad::log_softmax(*this, d); }
Tensor Tensor::sum() const { return minigrad::sum(*this); }
Tensor Tensor::sum(const Shape& dims, bool k) const { return minigrad::sum(*this, dims, k); }
Tensor Tensor::mean() const { return minigrad::mean(*this); }
Tensor Tensor::mean(const Shape& dims, bool k) const { return minigrad::mean(*this, dims, k); }
Tensor Tensor::max() const { return minigrad::max(*this); }
std::tuple<Tensor, Tensor> Tensor::max(std::int64_t d, bool k) const {
  return minigrad::max(*this, d, k);
}
Tensor Tensor::min() const { return minigrad::min(*this); }
std::tuple<Tensor, Tensor> Tensor::min(std::int64_t d, bool k) const {
  return minigrad::min(*this, d, k);
}
Tensor Tensor::amax(const Shape& dims, bool k) const { return minigrad::amax(*this, dims, k); }
Tensor Tensor::amin(const Shape& dims, bool k) const { return minigrad::amin(*this, dims, k); }
Tensor Tensor::eq(const Tensor& other) const { return minigrad::eq(*this, other); }
Tensor Tensor::eq(Scalar other) const { return *this == other; }
Tensor Tensor::ne(const Tensor& other) const { return minigrad::ne(*this, other); }
Tensor Tensor::ne(Scalar other) const { return *this != other; }
Tensor Tensor::lt(const Tensor& other) const { return minigrad::lt(*this, other); }
Tensor Tensor::lt(Scalar other) const { return *this < other; }
Tensor Tensor::le(const Tensor& other) const { return minigrad::le(*this, other); }
Tensor Tensor::le(Scalar other) const { return *this <= other; }
Tensor Tensor::gt(const Tensor& other) const { return minigrad::gt(*this, other); }
Tensor Tensor::gt(Scalar other) const { return *this > other; }
Tensor Tensor::ge(const Tensor& other) const { return minigrad::ge(*this, other); }
Tensor Tensor::ge(Scalar other) const { return *this >= other; }
bool Tensor::equal(const Tensor& other) const { return minigrad::equal(*this, other); }
bool Tensor::allclose(const Tensor& other, double rtol, double atol) const {
  return minigrad::allclose(*this, other, rtol, atol);
}

Tensor Tensor::argmax(std::optional<std::int64_t> d, bool k) const {
  return minigrad::argmax(*this, d, k);
}
Tensor Tensor::argmin(std::optional<std::int64_t> d, bool k) const {
  return minigrad::argmin(*this, d, k);
}
Tensor Tensor::var(const Shape& dims, double c, bool k) const {
  return minigrad::var(*this, dims, c, k);
}
Tensor Tensor::std(const Shape& dims, double c, bool k) const {
  return minigrad::std(*this, dims, c, k);
}
Tensor Tensor::logsumexp(const Shape& dims, bool k) const {
  return minigrad::logsumexp(*this, dims, k);
}
Tensor Tensor::norm(double p, const Shape& dims, bool k) const {
  return minigrad::norm(*this, p, dims, k);
}
Tensor Tensor::neg() const { return minigrad::neg(*this); }
Tensor Tensor::exp() const { return minigrad::exp(*this); }
Tensor Tensor::log() const { return minigrad::log(*this); }
Tensor Tensor::sqrt() const { return minigrad::sqrt(*this); }
Tensor Tensor::rsqrt() const { return minigrad::rsqrt(*this); }
Tensor Tensor::pow(Scalar e) const { return minigrad::pow(*this, e); }
Tensor Tensor::pow(const Tensor& e) const { return minigrad::pow(*this, e); }
Tensor Tensor::abs() const { return minigrad::abs(*this); }
Tensor Tensor::tanh() const { return minigrad::tanh(*this); }
Tensor Tensor::sigmoid() const { return minigrad::sigmoid(*this); }
Tensor Tensor::relu() const { return minigrad::relu(*this); }
Tensor Tensor::clamp(std::optional<double> lo, std::optional<double> hi) const {
  return minigrad::clamp(*this, lo, hi);
}
Tensor Tensor::masked_fill(const Tensor& m, Scalar v) const {
  return minigrad::masked_fill(*this, m, v);
}
Tensor Tensor::index_select(std::int64_t d, const Tensor& i) const {
  return minigrad::index_select(*this, d, i);
}
Tensor Tensor::gather(std::int64_t d, const Tensor& i) const {
  return minigrad::gather(*this, d, i);
}
std::vector<Tensor> Tensor::split(std::int64_t s, std::int64_t d) const {
  return minigrad::split(*this, s, d);
}
std::vector<Tensor> Tensor::split(const Shape& s, std::int64_t d) const {
  return minigrad::split(*this, s, d);
}
std::vector<Tensor> Tensor::chunk(std::int64_t c, std::int64_t d) const {
  return minigrad::chunk(*this, c, d);
}
Tensor Tensor::tril(std::int64_t d) const { return minigrad::tril(*this, d); }
Tensor Tensor::triu(std::int64_t d) const { return minigrad::triu(*this, d); }
Tensor Tensor::all() const { return minigrad::all(*this); }
Tensor Tensor::all(std::int64_t d, bool k) const { return minigrad::all(*this, d, k); }
Tensor Tensor::any() const { return minigrad::any(*this); }
Tensor Tensor::any(std::int64_t d, bool k) const { return minigrad::any(*this, d, k); }
Tensor Tensor::isnan() const { return minigrad::isnan(*this); }
Tensor Tensor::isinf() const { return minigrad::isinf(*this); }
Tensor Tensor::isfinite() const { return minigrad::isfinite(*this); }
Tensor Tensor::cumsum(std::int64_t d) const { return minigrad::cumsum(*this, d); }
Tensor Tensor::flip(const Shape& dims) const { return minigrad::flip(*this, dims); }
Tensor Tensor::roll(const Shape& shifts, const Shape& dims) const {
  return minigrad::roll(*this, shifts, dims);
}
Tensor Tensor::repeat(const Shape& r) const { return minigrad::repeat(*this, r); }
Tensor Tensor::repeat_interleave(std::int64_t r, std::optional<std::int64_t> d) const {
  return minigrad::repeat_interleave(*this, r, d);
}
std::tuple<Tensor, Tensor> Tensor::sort(std::int64_t d, bool desc) const {
  return minigrad::sort(*this, d, desc);
}
Tensor Tensor::argsort(std::int64_t d, bool desc) const {
  return minigrad::argsort(*this, d, desc);
}
std::tuple<Tensor, Tensor> Tensor::topk(std::int64_t k, std::int64_t d, bool largest,
                                        bool sorted) const {
  return minigrad::topk(*this, k, d, largest, sorted);
}
Tensor Tensor::lerp(const Tensor& e, Scalar w) const { return minigrad::lerp(*this, e, w); }
Tensor Tensor::lerp(const Tensor& e, const Tensor& w) const { return minigrad::lerp(*this, e, w); }
Tensor Tensor::addmm(const Tensor& m1, const Tensor& m2, Scalar beta, Scalar alpha) const {
  return minigrad::addmm(*this, m1, m2, beta, alpha);
}
Tensor Tensor::take_along_dim(const Tensor& i, std::optional<std::int64_t> d) const {
  return minigrad::take_along_dim(*this, i, d);
}
Tensor Tensor::scatter(std::int64_t d, const Tensor& i, const Tensor& src) const {
  return minigrad::scatter(*this, d, i, src);
}
Tensor Tensor::scatter(std::int64_t d, const Tensor& i, Scalar v) const {
  return minigrad::scatter(*this, d, i, v);
}
Tensor Tensor::scatter_add(std::int64_t d, const Tensor& i, const Tensor& src) const {
  return minigrad::scatter_add(*this, d, i, src);
}
Tensor Tensor::scatter_reduce(std::int64_t d, const Tensor& i, const Tensor& src,
                              const std::string& reduce, bool include_self) const {
  return minigrad::scatter_reduce(*this, d, i, src, reduce, include_self);
}
Tensor Tensor::masked_scatter(const Tensor& m, const Tensor& src) const {
  return minigrad::masked_scatter(*this, m, src);
}
Tensor Tensor::multinomial(std::int64_t n, bool replacement) const {
  return minigrad::multinomial(*this, n, replacement);
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  return detail::broadcast_shapes(a, b, op);
}

}  // namespace minigrad
