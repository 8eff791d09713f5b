#pragma once
// Datasets, as torch::data::datasets (libtorch) and torch.utils.data (Python):
//
//   struct Phrases : mg::data::datasets::Dataset<Phrases> {        // libtorch's way
//     mg::data::Example<> get(std::size_t i) override { return {x[i], y[i]}; }
//     std::optional<std::size_t> size() const override { return n; }
//   };
//   auto batched = Phrases().map(mg::data::transforms::Stack<>());   // batches of stacked examples
//
//   mg::data::TensorDataset ds({X, Y});                              // Python's TensorDataset
//
// A dataset gives one example for an index (get) and a batch for a list of indices (get_batch,
// by default get() of each). A DataLoader (dataloader.h) asks its sampler for the indices of each
// batch and returns get_batch(indices).
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "minigrad/ops/shape.h"
#include "minigrad/tensor.h"

namespace minigrad {
/// libtorch's torch::optional (what Dataset::size() returns there) is std::optional here.
template <typename T>
using optional = std::optional<T>;
using std::nullopt;
}  // namespace minigrad

namespace minigrad::data {

/// One example: an input and its target, as torch::data::Example.
template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  Data data;
  Target target;
};

namespace datasets {

template <typename Source, typename Transform>
class MapDataset;

/// A dataset of examples by index (torch::data::datasets::Dataset<Self, SingleExample>): define
/// get(index) and size(); get_batch(indices) gives a std::vector of examples.
template <typename Self, typename SingleExample = Example<>>
class Dataset {
 public:
  using ExampleType = SingleExample;
  using BatchType = std::vector<SingleExample>;
  virtual ~Dataset() = default;
  /// The example at index.
  virtual ExampleType get(std::size_t index) = 0;
  /// The number of examples (std::nullopt: unknown, which a sampler cannot use).
  virtual std::optional<std::size_t> size() const = 0;
  /// The examples at indices, in that order.
  virtual BatchType get_batch(const std::vector<std::size_t>& indices) {
    BatchType batch;
    batch.reserve(indices.size());
    for (std::size_t i : indices) batch.push_back(get(i));
    return batch;
  }
  /// This dataset with transform applied to each batch: `ds.map(transforms::Stack<>())`.
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return MapDataset<Self, Transform>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A dataset whose batches are transform.apply_batch(source.get_batch(indices)) (libtorch's
/// MapDataset).
template <typename Source, typename Transform>
class MapDataset {
 public:
  using BatchType = decltype(std::declval<Transform&>().apply_batch(
      std::declval<Source&>().get_batch(std::declval<const std::vector<std::size_t>&>())));
  MapDataset(Source source, Transform transform)
      : source_(std::move(source)), transform_(std::move(transform)) {}
  /// The transformed batch of the source's examples at indices.
  BatchType get_batch(const std::vector<std::size_t>& indices) {
    return transform_.apply_batch(source_.get_batch(indices));
  }
  /// The source's size.
  std::optional<std::size_t> size() const { return source_.size(); }
  Source& dataset() { return source_; }
  const Transform& transform() const { return transform_; }

 private:
  Source source_;
  Transform transform_;
};

}  // namespace datasets

namespace transforms {

/// Stacks a batch of examples into one example of batched tensors (torch::data::transforms::
/// Stack): data [B, ...] and target [B, ...].
template <typename ExampleT = Example<>>
struct Stack {
  ExampleT apply_batch(const std::vector<ExampleT>& batch) const {
    std::vector<Tensor> data, target;
    data.reserve(batch.size());
    target.reserve(batch.size());
    for (const ExampleT& e : batch) {
      data.push_back(e.data);
      target.push_back(e.target);
    }
    return {stack(data, 0), stack(target, 0)};
  }
};

/// Stacks a batch of tensors into one [B, ...] tensor.
template <>
struct Stack<Tensor> {
  Tensor apply_batch(const std::vector<Tensor>& batch) const { return stack(batch, 0); }
};

}  // namespace transforms

/// torch.utils.data.TensorDataset: example i is (t[i] for each tensor); all tensors have the same
/// first dim. A batch is one index_select per tensor (no per-example copies).
class TensorDataset {
 public:
  using ExampleType = std::vector<Tensor>;
  using BatchType = std::vector<Tensor>;
  /// Throws unless there is at least one tensor, each has a dim, and their first dims match.
  explicit TensorDataset(std::vector<Tensor> tensors);
  /// (t[index] for t in tensors); throws when index is out of range.
  std::vector<Tensor> get(std::size_t index) const;
  /// (t[indices] for t in tensors), each [indices.size(), ...].
  std::vector<Tensor> get_batch(const std::vector<std::size_t>& indices) const;
  /// The first dim of the tensors.
  std::optional<std::size_t> size() const { return size_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  std::size_t size_;
};

}  // namespace minigrad::data
