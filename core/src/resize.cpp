// Tensor::resize_, as libtorch's (ATen's resize_impl_cpu_ and autograd's "cannot resize").
#include <cstring>
#include <limits>

#include "alloc.h"
#include "minigrad/profiler.h"
#include "tensor_impl.h"

namespace minigrad {

// Note [resize_]
// As ATen: the same sizes change nothing (a transposed tensor keeps its strides); other sizes make
// the tensor contiguous from its current offset, and the storage grows (the old bytes are kept, the
// new ones are uninitialised) when offset + numel elements do not fit. The Storage object itself
// grows, so every tensor that shares it (views, detach()) sees the new buffer, as in PyTorch; the
// storage never shrinks. External memory (from_blob) cannot grow. A tensor that requires grad is
// refused, as PyTorch's autograd does. Unlike PyTorch, resize_ bumps the version counter, so a
// tensor saved for backward and then resized makes backward throw instead of computing with the
// new geometry; and the resized tensor stops being a view of its base for in-place autograd.
Tensor& Tensor::resize_(const Shape& sizes) {
  const char* op = "resize_";
  MG_CHECK(impl_ != nullptr, op,
           "got an undefined tensor (a default-constructed Tensor, or one moved from)");
  MG_CHECK(!requires_grad(), op, "cannot resize variables that require grad (a tensor of shape ",
           shape(), "); resize a detach()ed alias instead");
  std::int64_t numel = 1;
  for (std::int64_t s : sizes) {
    MG_CHECK(s >= 0, op, "sizes ", sizes, " have a negative size ", s);
    MG_CHECK(s == 0 || numel <= std::numeric_limits<std::int64_t>::max() / s, op, "sizes ", sizes,
             " have more elements than an int64 can count");
    numel *= s;
  }
  TensorImpl& impl = *impl_;
  if (impl.shape == sizes) return *this;
  auto element = static_cast<std::int64_t>(element_size(impl.dtype));
  MG_CHECK(numel == 0 || impl.offset + numel <= std::numeric_limits<std::int64_t>::max() / element,
           op, "sizes ", sizes, " need more bytes than an int64 can count");
  auto needed = static_cast<std::size_t>(numel == 0 ? 0 : (impl.offset + numel) * element);
  Storage& storage = *impl.storage;
  if (needed > storage.nbytes) {
    MG_CHECK(!storage.external, op, "cannot grow a tensor over external memory (from_blob) from ",
             storage.nbytes, " to ", needed,
             " bytes: trying to resize storage that is not resizable");
    void* grown = detail::cached_alloc(needed);
    MG_CHECK(grown != nullptr, op, "out of memory: could not allocate ", needed, " bytes");
    if (storage.nbytes > 0) std::memcpy(grown, storage.data, storage.nbytes);
    detail::cached_free(storage.data, std::max<std::size_t>(storage.nbytes, 1));
    if (profiler::detail::is_on())
      profiler::detail::add_bytes(static_cast<std::int64_t>(needed - storage.nbytes));
    storage.data = grown;
    storage.nbytes = needed;
  }
  impl.shape = sizes;
  impl.strides = detail::contiguous_strides(sizes);
  impl.numel = numel;
  impl.view_base = nullptr;
  detail::bump_version(*this);
  return *this;
}

}  // namespace minigrad
