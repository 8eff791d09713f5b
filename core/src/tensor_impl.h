#pragma once
// Private: TensorImpl, Storage, and the helpers every op file uses.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "alloc.h"
#include "minigrad/autograd.h"
#include "minigrad/tensor.h"

namespace minigrad {

/// A flat, 64-byte aligned buffer shared by a tensor and all of its views. The buffer comes from
/// the caching allocator (Note [Caching allocator], alloc.h).
struct Storage {
  explicit Storage(std::size_t nbytes);
  /// Memory the caller owns (from_blob): never freed here; deleter, if set, runs at the end.
  Storage(void* external, std::size_t nbytes, std::nullptr_t);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data = nullptr;
  std::size_t nbytes = 0;
  /// Bumped by every in-place write (Note [Version counters]).
  std::uint32_t version = 0;
  bool external = false;
  /// from_blob's deleter, if any (a pointer: most storages have none, and every tensor has a
  /// storage, so a 32-byte std::function here would cost each one 64 bytes of its allocation).
  std::unique_ptr<std::function<void(void*)>> deleter;
};

// Note [Version counters]
// Every in-place write (fill_, zero_, copy_, the random fills, add_ and the other in-place ops,
// an optimizer's step, load_state_dict) adds one to a counter shared by a tensor and all of its
// views, as PyTorch's (c10 Note [Version Counter Sharing]). A saved tensor remembers the counter
// at save time and backward compares (Note [Saved tensors]): a write in between would otherwise
// give a silently wrong gradient. The counter lives in Storage because exactly the tensors that
// share a storage share it (views and detach(), which PyTorch's counter also follows). One
// integer compare per saved tensor in backward, one increment per in-place op.

// Note [Tensor layout]
// A tensor is (storage, offset, shape, strides, dtype). Strides and offset count elements, not
// bytes. A view shares the storage and only changes offset/shape/strides; expand gives stride 0.
// Autograd metadata lives in the same object: requires_grad, grad, grad_fn (non-leaves) and a
// weak pointer to the leaf's AccumulateGrad node, so every use of a leaf feeds the same node.
// Note [Autograd meta]
// What only some tensors need (a gradient, a leaf's accumulator and hooks, retain_grad) lives in
// an AutogradMeta allocated the first time one of them is set, as PyTorch's AutogradMeta: the
// tensors a graph holds (saved outputs, intermediate results) never have one, and a TensorImpl
// without these fields takes 232 bytes instead of 312 (bench/graph_memory: a saved output's
// handle is a smaller allocation).
struct AutogradMeta {
  Tensor grad;
  bool retains_grad = false;
  std::weak_ptr<Node> grad_accumulator;
  /// Hooks registered on a leaf before its AccumulateGrad node exists.
  std::vector<PreHook> leaf_hooks;
  /// Run by AccumulateGrad after it has updated grad.
  std::vector<PostAccumulateGradHook> post_accumulate_hooks;
};

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  std::int64_t offset = 0;
  Shape shape;
  Shape strides;
  std::int64_t numel = 1;
  Dtype dtype = kFloat32;

  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;
  /// Which output of grad_fn this tensor is (custom Functions have several).
  std::uint32_t output_nr = 0;
  /// A leaf's gradient, accumulator and hooks (Note [Autograd meta]): null until one is set.
  std::unique_ptr<AutogradMeta> meta;
  /// The tensor's AutogradMeta, made on first use.
  AutogradMeta& autograd_meta() {
    if (!meta) meta = std::make_unique<AutogradMeta>();
    return *meta;
  }

  // Views and in-place history (Note [In-place on views], ops/inplace.cpp).
  /// For a view made by a view op: the tensor whose storage it views (never itself a view).
  std::shared_ptr<TensorImpl> view_base;
  /// For a base: bumped whenever an in-place op replaces its grad_fn. For a view: the base's
  /// count when this view's grad_fn was made; a different count means it must be remade.
  std::uint32_t history = 0;
  /// How a view of a base that requires grad was made (PyTorch's CreationMeta): under
  /// NoGradGuard or InferenceMode it requires grad as a leaf, and an in-place op on it with grad
  /// mode on (outside InferenceMode) is refused; kMultiOutput: one of the pieces of split or
  /// chunk (Note [Split as one node], ops/index.cpp), which may not be written in place with
  /// grad mode on, nor used once its base's history was rewritten.
  enum class ViewCreation : std::uint8_t { kNormal, kNoGrad, kInference, kMultiOutput };
  ViewCreation view_creation = ViewCreation::kNormal;
  /// Made under InferenceMode (Note [Inference mode], tensor.cpp): never saved for backward,
  /// never written in place outside InferenceMode.
  bool is_inference = false;

  template <typename T>
  T* data() const {
    return static_cast<T*>(storage->data) + offset;
  }
  char* bytes() const {
    return static_cast<char*>(storage->data) +
           offset * static_cast<std::int64_t>(element_size(dtype));
  }
};

namespace detail {

/// A new TensorImpl (arguments as for its constructor), allocated through the caching allocator.
template <typename... Args>
std::shared_ptr<TensorImpl> new_impl(Args&&... args) {
  return std::allocate_shared<TensorImpl>(CachingAllocator<TensorImpl>{},
                                          std::forward<Args>(args)...);
}
/// A new TensorImpl for a tensor made now: an inference tensor under InferenceMode.
inline std::shared_ptr<TensorImpl> new_tensor_impl() {
  auto impl = new_impl();
  impl->is_inference = InferenceMode::is_enabled();
  return impl;
}

/// Contiguous row-major strides for shape.
Shape contiguous_strides(const Shape& shape);
std::int64_t shape_numel(const Shape& shape);
/// Wraps a possibly negative dim into [0, ndim); throws "[op] dim d is out of range ...".
std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim, const char* op);
/// A fresh contiguous tensor (uninitialised).
Tensor make_tensor(const Shape& shape, Dtype dtype);
/// A tensor over an existing storage with the given geometry (offset 0).
Tensor make_tensor_on(std::shared_ptr<Storage> storage, const Shape& shape, const Shape& strides,
                      Dtype dtype);
/// A view of base's storage with the given geometry (no autograd history).
Tensor make_view(const Tensor& base, const Shape& shape, const Shape& strides, std::int64_t offset);
/// The same for a view op's result: the view also remembers x's base, so that an in-place op on
/// it rewrites the base's history (Note [In-place on views]).
Tensor make_view_of(const Tensor& x, const Shape& shape, const Shape& strides, std::int64_t offset);
/// Remakes the grad_fn of a view whose base's history an in-place op replaced.
void regenerate_view_history(TensorImpl* view);
inline void refresh_view(TensorImpl* impl) {
  if (impl->view_base && impl->view_base->history != impl->history) regenerate_view_history(impl);
}
/// Broadcast shape of a and b, or "[op] shapes (..) and (..) cannot be broadcast ...".
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// Strides that read t as if expanded to `shape` (0 on broadcast dims).
Shape broadcast_strides(const Tensor& t, const Shape& shape);
/// PyTorch's result_type over tensors: dimensioned tensors win over 0-dim ones within a category.
Dtype result_type(const Tensor& a, const Tensor& b);
Dtype result_type(const Tensor& a, Scalar b);
/// The grad of a non-scalar op output is reduced to `shape` by summing broadcast dims.
Tensor sum_to(const Tensor& grad, const Shape& shape);
/// Copies src (broadcast to dst's shape) into dst's elements, converting the dtype.
void copy_into(const Tensor& dst, const Tensor& src);
/// zeros of in_shape with g written from `start` along dim: the backward of narrow and select.
Tensor narrow_backward(const Tensor& g, const Shape& in_shape, std::int64_t dim,
                       std::int64_t start);
/// Whether nothing but this handle sees t's values: one handle, the only owner of its storage (no
/// view or base shares it), contiguous, no history. The engine sums into such a gradient in place
/// and AccumulateGrad takes it as .grad without a copy (as PyTorch's InputBuffer::accumulate and
/// AccumulateGrad's steal).
inline bool sole_owner(const Tensor& t) {
  const TensorImpl* i = t.impl();
  return t.impl_ptr().use_count() == 1 && i->storage.use_count() == 1 && !i->view_base &&
         t.is_contiguous() && !t.requires_grad();
}
/// Whether t is a contiguous view covering all of a storage whose only other owner is t's base,
/// which nothing else holds either (the transposed GEMM result of Note [Gradients in the operand's
/// layout] after TBackward0): its values are then as much t's alone as sole_owner's.
inline bool sole_view(const Tensor& t) {
  const TensorImpl* i = t.impl();
  return t.impl_ptr().use_count() == 1 && t.is_contiguous() && !t.requires_grad() && i->view_base &&
         i->view_base.use_count() == 1 && i->storage.use_count() == 2 &&
         i->view_base->storage == i->storage && i->offset == 0 &&
         static_cast<std::size_t>(t.numel()) * element_size(t.dtype()) == i->storage->nbytes;
}
/// Records an in-place write to t's elements (Note [Version counters]).
inline void bump_version(const Tensor& t) { ++t.impl()->storage->version; }
/// True when grad mode is on and any of the tensors requires grad.
bool any_requires_grad(std::initializer_list<const Tensor*> tensors);
/// Runs an in-place op whose out-of-place form is compute(self) (Note [In-place ops]).
Tensor& inplace_op(Tensor& self, const char* op, std::initializer_list<const Tensor*> others,
                   const std::function<Tensor(const Tensor&)>& compute);
/// Throws unless self may be written in place now (a leaf that requires grad, stride 0, ...).
void check_writable(const Tensor& self, const char* op);

}  // namespace detail
}  // namespace minigrad
