#pragma once
// Tensor indexing as libtorch's Tensor::index / index_put_ (torch::indexing):
//
//   using namespace mg::indexing;
//   x.index({Slice(), 0})                  // x[:, 0]        a view
//   x.index({Slice(1, None, 2), "..."})    // x[1::2, ...]   a view (stride 2)
//   x.index({None, Ellipsis, -1})          // x[None, ..., -1]
//   x.index({idx})                         // x[idx]         int64 tensor: a copy
//   x.index({mask})                        // x[mask]        bool tensor: a copy
//   x.index_put_({Slice(), 0}, 1.5);       // x[:, 0] = 1.5
//   x.index_put_({idx}, v);                // x[idx] = v
//
// Integers, slices, None and Ellipsis give views (Note [Indexing], ops/indexing.cpp); int64 and
// bool tensors (advanced indexing) copy, with PyTorch's rules for where the indexed dims go.
#include <cstdint>
#include <optional>
#include <ostream>
#include <type_traits>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad::indexing {

/// An omitted slice end, and a new axis when used as an index (torch::indexing::None).
inline constexpr std::nullopt_t None = std::nullopt;

struct EllipsisIndexType {
  explicit EllipsisIndexType() = default;
};
/// Every dim not otherwise indexed (Python's `...`); also written "..." in an index list.
inline const EllipsisIndexType Ellipsis;

/// start:stop:step, each end optional (None). Ends are clamped to the dim as in Python; the step
/// must be positive (throws "[index] slice step cannot be zero" for 0).
class Slice {
 public:
  Slice(std::optional<std::int64_t> start = std::nullopt,
        std::optional<std::int64_t> stop = std::nullopt,
        std::optional<std::int64_t> step = std::nullopt);
  std::int64_t start() const { return start_; }
  std::int64_t stop() const { return stop_; }
  std::int64_t step() const { return step_; }

 private:
  std::int64_t start_, stop_, step_;
};

/// One entry of an index list: an integer, a Slice, None, Ellipsis (or "..."), a bool, or a
/// tensor (int64 indices or a bool mask).
class TensorIndex {
 public:
  enum class Kind { kNone, kEllipsis, kInteger, kBoolean, kSlice, kTensor };

  TensorIndex(std::nullopt_t) : kind_(Kind::kNone) {}                  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::kEllipsis) {}           // NOLINT
  TensorIndex(const char* str);                                        // NOLINT: "..." only
  TensorIndex(std::int64_t i) : kind_(Kind::kInteger), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::kInteger), integer_(i) {}           // NOLINT
  template <class T>
  requires std::is_same_v<T, bool> TensorIndex(T b)
      : kind_(Kind::kBoolean), boolean_(b) {}               // NOLINT
  TensorIndex(Slice s) : kind_(Kind::kSlice), slice_(s) {}  // NOLINT
  TensorIndex(Tensor t);                                    // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_ellipsis() const { return kind_ == Kind::kEllipsis; }
  bool is_integer() const { return kind_ == Kind::kInteger; }
  bool is_boolean() const { return kind_ == Kind::kBoolean; }
  bool is_slice() const { return kind_ == Kind::kSlice; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  std::int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  std::int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

/// Prints an index as Python writes it: `0`, `1:None:2`, `None`, `...`, `True`, a tensor's shape.
std::ostream& operator<<(std::ostream& os, const TensorIndex& index);

}  // namespace minigrad::indexing

namespace minigrad {

/// Advanced indexing with one optional index tensor per leading dim (ATen's index, what
/// x.index({...}) calls after the integers and slices): an undefined entry (nullopt) takes the
/// whole dim. Index tensors are int64 (negative counts from the end) or bool masks (a mask of k
/// dims stands for its k nonzero() columns) and broadcast together to a shape B. The result
/// holds B where the indexed dims were when they are adjacent, otherwise B comes first (as
/// NumPy and PyTorch). Always a copy; differentiable (IndexBackward0).
Tensor index(const Tensor& x, const std::vector<std::optional<Tensor>>& indices);
/// x with the indexed elements replaced by values (broadcast to the indexed shape), or added to
/// when accumulate (duplicates add up then). Out of place; Tensor::index_put_ is the in-place form.
Tensor index_put(const Tensor& x, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate = false);
/// The indices of the nonzero (true) elements, shape (count, x.dim()), int64, in row-major order.
Tensor nonzero(const Tensor& x);
/// The elements of x where mask (broadcast with x) is true, as a 1-D tensor (x[mask]).
Tensor masked_select(const Tensor& x, const Tensor& mask);

}  // namespace minigrad
