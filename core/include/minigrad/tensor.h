#pragma once
// Tensor: a cheap handle to a strided, reference-counted buffer, with reverse-mode autograd.
//
// Copying a Tensor aliases it (like a Python reference or a torch::Tensor): both handles see the
// same data, gradient and grad_fn. Use clone() for an independent copy.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "minigrad/array_ref.h"
#include "minigrad/dtype.h"
#include "minigrad/error.h"
#include "minigrad/shape.h"
#include "minigrad/tensor_options.h"
#include "minigrad/warning.h"

namespace minigrad {

struct TensorImpl;
class Node;
class Tensor;
class Generator;
namespace indexing {
class TensorIndex;
}

/// A list of tensors passed without copying, as libtorch's at::TensorList.
using TensorList = ArrayRef<Tensor>;

/// A gradient hook: receives the gradient flowing into a tensor and may return a replacement
/// (or an undefined Tensor to keep it unchanged).
using TensorHook = std::function<Tensor(const Tensor&)>;
/// A hook run after a leaf's gradient has been accumulated into grad() (it gets the leaf).
using PostAccumulateGradHook = std::function<void(const Tensor&)>;

class Tensor {
 public:
  /// An undefined tensor (defined() is false), like torch::Tensor().
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  ~Tensor() = default;

  // Note [Assigning to a temporary]
  // `y = x` on a named tensor rebinds the handle, as in Python and libtorch. Assigning to a
  // temporary (an rvalue: `x[1] = t`, `x.select(0, 2) = t`, `x.index({Slice(0, 1)}) = t`,
  // `x.narrow(0, 3, 1) = 4.0`) writes the elements it views instead, as libtorch's
  // `Tensor::operator=(...) &&`: copy_(src) (broadcast, converted, recorded for autograd) or
  // fill_(value). A temporary that shares its storage with no other tensor (what advanced
  // indexing, `x.index({mask})`, returns: a copy) would take the write and vanish with it, so
  // that is an error naming index_put_, never a silent no-op.
  /// Rebinds this handle to other's tensor (no data is copied).
  Tensor& operator=(const Tensor& other) & = default;
  Tensor& operator=(Tensor&& other) & noexcept = default;
  /// Copies src into the elements this temporary views: `x[1] = t` (copy_).
  Tensor& operator=(const Tensor& src) &&;
  Tensor& operator=(Tensor&& src) &&;
  /// Fills the elements this temporary views: `x.narrow(0, 3, 1) = 4.0` (fill_).
  Tensor& operator=(Scalar value) &&;

  // ---- metadata ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  const Shape& sizes() const { return shape(); }
  /// Size of dim d; negative d counts from the end.
  std::int64_t size(std::int64_t d) const;
  const Shape& strides() const;
  std::int64_t stride(std::int64_t d) const;
  std::int64_t storage_offset() const;
  std::int64_t dim() const;
  /// libtorch's other names for dim() and dtype().
  std::int64_t ndimension() const { return dim(); }
  Dtype scalar_type() const { return dtype(); }
  std::int64_t numel() const;
  Dtype dtype() const;
  bool is_contiguous() const;
  bool is_floating_point() const { return minigrad::is_floating_point(dtype()); }

  // ---- data access ----
  /// The single value of a one-element tensor, converted to T (float, double, int64_t, bool, ...).
  template <typename T>
  T item() const;
  /// All elements in row-major order, converted to T.
  template <typename T>
  std::vector<T> to_vector() const;
  /// Pointer to the first element; T must match dtype() exactly. Respect strides() when reading.
  template <typename T>
  T* data_ptr() const;

  /// A copy with its own contiguous storage (differentiable).
  Tensor clone() const;
  /// This tensor when already contiguous, otherwise a contiguous copy (differentiable).
  Tensor contiguous() const;
  /// Converts to dtype; returns this tensor unchanged when it already has it (differentiable).
  Tensor to(Dtype dtype) const;
  /// libtorch's x.to(device): minigrad's tensors live on the CPU, so this returns the tensor
  /// itself for the CPU and throws for CUDA (see mg::cuda::is_available()).
  Tensor to(Device device) const;
  Tensor to(Device device, Dtype dtype) const;
  Tensor to(DeviceType device) const { return to(Device(device)); }
  /// libtorch's x.to(options): the options' dtype (when set) and device (the CPU only); copy
  /// forces a new tensor even when nothing changes. non_blocking changes nothing on the CPU.
  /// Options with requires_grad(true) throw, as libtorch's.
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false) const;
  /// Always kStrided: minigrad tensors are dense.
  Layout layout() const { return kStrided; }
  /// Always the CPU.
  Device device() const;
  bool is_cuda() const { return false; }
  /// This tensor's dtype and requires_grad as TensorOptions (for zeros(shape, x.options())).
  TensorOptions options() const;
  /// A tensor sharing this one's data but cut from the graph (requires_grad() is false).
  Tensor detach() const;
  /// Whether the two tensors view the same storage (libtorch's is_alias_of).
  bool is_alias_of(const Tensor& other) const;
  /// Makes this tensor use new_data's storage, geometry and dtype, keeping its identity and
  /// autograd state (libtorch's set_data, Python's `p.data = new_data`): what Module::to does to
  /// parameters. The gradient is dropped when its dtype no longer matches.
  void set_data(const Tensor& new_data) const;
  /// libtorch's tensor_data(): a new tensor sharing this one's storage and geometry, with no
  /// autograd history (requires_grad() false). It shares the version counter, so an in-place
  /// write through it is seen by backward.
  Tensor tensor_data() const;
  /// libtorch's variable_data() (Python's x.data): the same, but in libtorch it gets a version
  /// counter of its own, so writes through it are hidden from backward. minigrad keeps one
  /// counter per storage: writes through it are seen (backward throws instead of silently using
  /// a changed value).
  Tensor variable_data() const;

  // ---- autograd ----
  bool requires_grad() const;
  /// Sets requires_grad on a leaf tensor and returns *this. Throws for integer or bool tensors.
  Tensor& requires_grad_(bool requires_grad = true);
  /// libtorch's spelling of requires_grad_.
  Tensor& set_requires_grad(bool requires_grad) { return requires_grad_(requires_grad); }
  /// The accumulated gradient; undefined until a backward reaches this tensor.
  Tensor grad() const;
  /// Replaces the gradient (an undefined Tensor clears it), as `p.grad = g` in PyTorch.
  void set_grad(const Tensor& grad) const;
  bool is_leaf() const;
  /// Cuts this tensor from the graph in place (libtorch's detach_): it becomes a leaf that does
  /// not require grad. Throws for a view made by a view op (PyTorch's "Can't detach views
  /// in-place").
  Tensor& detach_();
  /// Whether this tensor was made by a view op (view, slicing, transpose, ...) and so shares its
  /// base's storage and history (libtorch's is_view(); detach() is not a view).
  bool is_view() const;
  /// Which output of grad_fn() this tensor is: 0 for leaves and single-output ops (libtorch's
  /// output_nr()).
  std::int64_t output_nr() const;
  /// The node that created this tensor, or nullptr for leaves. grad_fn()->name() is e.g.
  /// "MulBackward0".
  std::shared_ptr<Node> grad_fn() const;
  /// How many in-place writes this tensor's storage has seen (shared with its views); backward
  /// compares it with the count at save time (PyTorch's _version).
  std::int64_t _version() const;
  /// Whether this tensor was made under InferenceMode (Note [Inference mode]).
  bool is_inference() const;
  /// Keeps the gradient of this non-leaf tensor in grad() after backward.
  void retain_grad() const;
  bool retains_grad() const;
  /// Calls hook with the gradient of this tensor during backward; the hook may return a
  /// replacement gradient. Returns the hook's index.
  std::size_t register_hook(TensorHook hook) const;
  /// A hook that returns nothing (it only reads the gradient), as libtorch accepts.
  template <typename F,
            typename = std::enable_if_t<std::is_void_v<std::invoke_result_t<F&, const Tensor&>>>>
  std::size_t register_hook(F&& hook) const {
    return register_hook(TensorHook([f = std::forward<F>(hook)](const Tensor& grad) mutable {
      f(grad);
      return Tensor();
    }));
  }
  /// Calls hook(leaf) each time backward has accumulated a gradient into this leaf's grad(), as
  /// PyTorch's register_post_accumulate_grad_hook (DistributedDataParallel starts a bucket's
  /// all-reduce from it). Only for leaves that require grad. Returns the hook's index.
  std::size_t register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const;
  /// Computes the gradient of this tensor with respect to the graph leaves and accumulates it into
  /// their grad(). A non-scalar tensor needs `gradient` (same shape). The graph's saved tensors are
  /// freed afterwards unless retain_graph (which defaults to create_graph); create_graph records
  /// the backward pass itself so that the gradients can be differentiated again. With `inputs`
  /// (libtorch's), only those tensors get a gradient: leaves into grad(), non-leaves too (they
  /// retain_grad() from then on, as PyTorch's); see autograd::backward.
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, std::optional<TensorList> inputs = std::nullopt) const;

  // ---- in-place ops: write this tensor's elements, as PyTorch ----
  // Each keeps this tensor's identity (same handle, storage and views) and, in grad mode, records
  // history: the tensor's grad_fn becomes the op's node (y = x * 2; y.add_(1) has AddBackward0),
  // and an in-place op on a view rewrites its base's history (CopySlices). Throws for a leaf that
  // requires grad (or a view of one) in grad mode (write it under NoGradGuard, as an optimizer
  // does), for a tensor with a stride-0 dim (expand), when the result would not keep this shape
  // or not fit this dtype. Every one bumps _version() (docs/architecture.md, in-place ops).
  /// this += alpha * other (other broadcasts to this shape).
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);
  /// this -= alpha * other.
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  /// True division; an integer tensor cannot hold the result.
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& pow_(Scalar exponent);
  Tensor& pow_(const Tensor& exponent);
  Tensor& neg_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& abs_();
  Tensor& relu_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  // In place, math (core/src/ops/math.cpp).
  Tensor& sin_();
  Tensor& cos_();
  Tensor& tan_();
  Tensor& asin_();
  Tensor& acos_();
  Tensor& atan_();
  Tensor& sinh_();
  Tensor& cosh_();
  Tensor& asinh_();
  Tensor& acosh_();
  Tensor& atanh_();
  Tensor& log1p_();
  Tensor& log2_();
  Tensor& log10_();
  Tensor& expm1_();
  Tensor& exp2_();
  Tensor& floor_();
  Tensor& ceil_();
  Tensor& round_();
  Tensor& trunc_();
  Tensor& frac_();
  Tensor& reciprocal_();
  Tensor& square_();
  Tensor& round_(std::int64_t decimals);
  Tensor& atan2_(const Tensor& other);
  Tensor& remainder_(const Tensor& other);
  Tensor& remainder_(Scalar other);
  Tensor& fmod_(const Tensor& other);
  Tensor& fmod_(Scalar other);
  Tensor& hypot_(const Tensor& other);
  Tensor& xlogy_(const Tensor& other);
  Tensor& xlogy_(Scalar other);
  Tensor& clamp_(std::optional<double> min, std::optional<double> max = std::nullopt);
  /// Sets the elements where mask (bool, broadcast to this shape) is true to value.
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  /// Fills every element with value (gradient to the old value: zero).
  Tensor& fill_(Scalar value);
  Tensor& zero_();
  /// Copies src (broadcast to this shape, converted to this dtype) into this tensor's elements;
  /// differentiable with respect to src.
  Tensor& copy_(const Tensor& src);
  /// Gives this tensor the shape sizes, as libtorch's resize_: the same sizes change nothing;
  /// others make it contiguous from its offset, growing the shared storage (old bytes kept, new
  /// elements uninitialised) when they need more; the storage never shrinks (Note [resize_]).
  /// Throws if it requires grad ("cannot resize variables that require grad"), for a negative
  /// size, or when memory from from_blob would have to grow.
  Tensor& resize_(const Shape& sizes);
  /// Random fills with PyTorch's streams: after the same manual_seed (or Generator), the same
  /// calls give PyTorch's values bit for bit. Elements are drawn in memory order, as PyTorch does
  /// (a transposed view gets its storage's order). The Generator& overloads draw from that
  /// generator instead of the default one. Throws if this tensor requires grad and grad mode is on.
  /// uniform_: U[from, to); floating-point tensors only.
  Tensor& uniform_(double from = 0.0, double to = 1.0);
  Tensor& uniform_(double from, double to, Generator& generator);
  /// normal_: N(mean, std^2); floating-point tensors only.
  Tensor& normal_(double mean = 0.0, double std = 1.0);
  Tensor& normal_(double mean, double std, Generator& generator);
  /// random_(from, to): integers in [from, to), stored in this tensor's dtype (floating-point
  /// bounds must lie within +-2^24 for float32, +-2^53 for float64; bool within [0, 2]).
  Tensor& random_(std::int64_t from, std::int64_t to);
  Tensor& random_(std::int64_t from, std::int64_t to, Generator& generator);
  /// random_(to): integers in [0, to).
  Tensor& random_(std::int64_t to);
  Tensor& random_(std::int64_t to, Generator& generator);
  /// random_(): integers in [0, 2^24] for float32, [0, 2^53] for float64, [0, 2^63 - 1] for int64,
  /// false/true for bool.
  Tensor& random_();
  Tensor& random_(Generator& generator);

  // ---- views: share storage, copy nothing ----
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  /// Transpose of a tensor with at most 2 dims.
  Tensor t() const;
  Tensor permute(const Shape& dims) const;
  /// Broadcasts size-1 dims to `shape` (-1 keeps a size) without copying.
  Tensor expand(const Shape& shape) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.shape()); }
  Tensor unsqueeze(std::int64_t dim) const;
  /// Removes all size-1 dims.
  Tensor squeeze() const;
  /// Removes dim if its size is 1 (otherwise returns the tensor unchanged, as PyTorch).
  Tensor squeeze(std::int64_t dim) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  /// A view when the strides allow it, otherwise a copy. One entry may be -1.
  Tensor reshape(const Shape& shape) const;
  /// Like reshape but never copies: throws when the strides do not allow a view.
  Tensor view(const Shape& shape) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  /// A view of elements start, start + step, ... below end along dim (x[start:end:step]); the
  /// ends are clamped to the dim as Python's, and step must be positive.
  Tensor slice(std::int64_t dim = 0, std::optional<std::int64_t> start = std::nullopt,
               std::optional<std::int64_t> end = std::nullopt, std::int64_t step = 1) const;

  // ---- indexing, as libtorch's (minigrad/indexing.h: Slice, None, Ellipsis) ----
  /// x.index({Slice(), 0, None, idx}) is Python's x[:, 0, None, idx]: integers, slices, None and
  /// Ellipsis make a view; int64 index tensors and bool masks (advanced indexing) a copy.
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  /// x.index_put_({...}, v) is Python's x[...] = v: v broadcasts to the indexed shape.
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& values);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, const Tensor& values);
  Tensor& index_put_(const std::vector<indexing::TensorIndex>& indices, Scalar value);
  /// ATen's form: one optional index tensor per leading dim; with accumulate, values are added
  /// (duplicate indices add up) instead of written.
  Tensor& index_put_(const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                     bool accumulate = false);
  /// x[i]: select(0, i), as libtorch's operator[].
  Tensor operator[](std::int64_t index) const;
  /// x[idx] for an int64 index tensor or a bool mask: index({idx}).
  Tensor operator[](const Tensor& index) const;
  Tensor nonzero() const;
  Tensor masked_select(const Tensor& mask) const;

  // ---- ops as methods (see ops.h for the documentation of each) ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor softmax(std::int64_t dim) const;
  Tensor log_softmax(std::int64_t dim) const;
  Tensor sum() const;
  Tensor sum(const Shape& dims, bool keepdim = false) const;
  Tensor sum(std::int64_t dim, bool keepdim = false) const { return sum(Shape{dim}, keepdim); }
  Tensor mean() const;
  Tensor mean(const Shape& dims, bool keepdim = false) const;
  Tensor mean(std::int64_t dim, bool keepdim = false) const { return mean(Shape{dim}, keepdim); }
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(std::int64_t dim, bool keepdim = false) const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(std::int64_t dim, bool keepdim = false) const;
  Tensor amax(const Shape& dims = {}, bool keepdim = false) const;
  Tensor amin(const Shape& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<std::int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(const Shape& dims = {}, double correction = 1, bool keepdim = false) const;
  Tensor std(const Shape& dims = {}, double correction = 1, bool keepdim = false) const;
  Tensor logsumexp(const Shape& dims, bool keepdim = false) const;
  Tensor norm(double p = 2, const Shape& dims = {}, bool keepdim = false) const;
  /// Comparisons as methods (libtorch's x.eq(y), x.gt(0)): bool tensors, not differentiable.
  Tensor eq(const Tensor& other) const;
  Tensor eq(Scalar other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(Scalar other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(Scalar other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(Scalar other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(Scalar other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(Scalar other) const;
  /// torch.equal(self, other): same shape and values.
  bool equal(const Tensor& other) const;
  /// torch.allclose(self, other, rtol, atol).
  bool allclose(const Tensor& other, double rtol = 1e-5, double atol = 1e-8) const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor pow(Scalar exponent) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor abs() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  // Math (minigrad/ops/math.h, defined in core/src/ops/math.cpp).
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor log1p() const;
  Tensor log2() const;
  Tensor log10() const;
  Tensor expm1() const;
  Tensor exp2() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor trunc() const;
  Tensor frac() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor round(std::int64_t decimals) const;
  Tensor atan2(const Tensor& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(Scalar other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(Scalar other) const;
  Tensor hypot(const Tensor& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor xlogy(const Tensor& other) const;
  Tensor xlogy(Scalar other) const;
  // More reductions and products (minigrad/ops/reduce_more.h, core/src/ops/reduce_more.cpp).
  Tensor prod() const;
  Tensor prod(std::int64_t dim, bool keepdim = false) const;
  Tensor cumprod(std::int64_t dim) const;
  Tensor median() const;
  std::tuple<Tensor, Tensor> median(std::int64_t dim, bool keepdim = false) const;
  Tensor nansum(const Shape& dims = {}, bool keepdim = false) const;
  Tensor nansum(std::int64_t dim, bool keepdim = false) const {
    return nansum(Shape{dim}, keepdim);
  }
  Tensor count_nonzero(const Shape& dims) const;
  Tensor count_nonzero(std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor bincount(const std::optional<Tensor>& weights = std::nullopt,
                  std::int64_t minlength = 0) const;
  Tensor outer(const Tensor& vec2) const;
  Tensor cross(const Tensor& other, std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor diag(std::int64_t diagonal = 0) const;
  Tensor trace() const;
  Tensor clamp(std::optional<double> min, std::optional<double> max = std::nullopt) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor index_select(std::int64_t dim, const Tensor& index) const;
  Tensor gather(std::int64_t dim, const Tensor& index) const;
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim = 0) const;
  std::vector<Tensor> split(const Shape& split_sizes, std::int64_t dim = 0) const;
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim = 0) const;
  Tensor tril(std::int64_t diagonal = 0) const;
  Tensor triu(std::int64_t diagonal = 0) const;
  Tensor all() const;
  Tensor all(std::int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(std::int64_t dim, bool keepdim = false) const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor cumsum(std::int64_t dim) const;
  Tensor flip(const Shape& dims) const;
  Tensor roll(const Shape& shifts, const Shape& dims = {}) const;
  Tensor repeat(const Shape& repeats) const;
  Tensor repeat_interleave(std::int64_t repeats,
                           std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor view_as(const Tensor& other) const { return view(other.shape()); }
  std::tuple<Tensor, Tensor> sort(std::int64_t dim = -1, bool descending = false) const;
  Tensor argsort(std::int64_t dim = -1, bool descending = false) const;
  std::tuple<Tensor, Tensor> topk(std::int64_t k, std::int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1) const;
  Tensor take_along_dim(const Tensor& indices,
                        std::optional<std::int64_t> dim = std::nullopt) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(std::int64_t dim, const Tensor& index, Scalar value) const;
  Tensor scatter_add(std::int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_reduce(std::int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true) const;
  Tensor masked_scatter(const Tensor& mask, const Tensor& source) const;
  Tensor multinomial(std::int64_t num_samples, bool replacement = false) const;

  /// In place, as in PyTorch and libtorch: add_, sub_, mul_, div_ (the handle is not rebound).
  Tensor& operator+=(const Tensor& other);
  Tensor& operator-=(const Tensor& other);
  Tensor& operator*=(const Tensor& other);
  Tensor& operator/=(const Tensor& other);
  Tensor& operator+=(Scalar other);
  Tensor& operator-=(Scalar other);
  Tensor& operator*=(Scalar other);
  Tensor& operator/=(Scalar other);

  /// Internal: the implementation object (shared by every alias of this tensor).
  TensorImpl* impl() const { return impl_.get(); }
  /// impl(), under libtorch's name (the key of an optimizer's state()).
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  /// True when both handles refer to the same tensor object.
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

/// Prints like PyTorch's repr: `tensor([[0.1192, 0.8808]], grad_fn=<SoftmaxBackward0>)`.
std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// Print options, as torch.set_printoptions.
struct PrintOptions {
  int precision = 4;
  std::int64_t threshold = 1000;
  std::int64_t edgeitems = 3;
  int linewidth = 80;
};
void set_printoptions(const PrintOptions& options);
const PrintOptions& get_printoptions();

/// The number of tensor buffers (storages, shared by a tensor and its views) alive in the
/// process: a test of "nothing saved for backward outlives it".
std::int64_t live_storage_count();

// ---- grad mode ----

/// While alive, operations on this thread record no autograd history (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// While alive (and enabled), no autograd at all on this thread, as libtorch's c10::InferenceMode:
/// grad mode is off and the tensors made are inference tensors, which cannot be saved for
/// backward or written in place outside InferenceMode later (Note [Inference mode]).
/// InferenceMode(false) turns it off again inside an enabled one (and grad mode back on).
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  /// Whether InferenceMode is on on this thread (torch.is_inference_mode_enabled()).
  static bool is_enabled();

 private:
  bool prev_, prev_grad_;
};

/// Sets grad mode for this thread while alive (torch.set_grad_enabled / enable_grad).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};

/// Whether operations on this thread record autograd history (thread-local; on by default).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace minigrad
