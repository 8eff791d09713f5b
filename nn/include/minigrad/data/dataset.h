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
#include <iosfwd>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "minigrad/data/example.h"
#include "minigrad/data/transforms.h"
#include "minigrad/error.h"
#include "minigrad/ops/shape.h"
#include "minigrad/serialize.h"
#include "minigrad/tensor.h"

namespace minigrad {
/// libtorch's torch::optional (what Dataset::size() returns there) is std::optional here.
template <typename T>
using optional = std::optional<T>;
using std::nullopt;
}  // namespace minigrad

namespace minigrad::data {

namespace datasets {

template <typename Source, typename Transform>
class MapDataset;

namespace detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
/// How get_batch takes its request: a size (a stateful dataset's batch size) by value, a list of
/// indices by const reference.
template <typename Request>
using request_arg = std::conditional_t<std::is_scalar_v<Request>, Request, const Request&>;
template <typename T>
struct unwrap_optional {
  using type = T;
};
template <typename T>
struct unwrap_optional<std::optional<T>> {
  using type = T;
};
/// What transform.apply_batch returns for one of source's batches (unwrapped when stateful).
template <typename Source, typename Transform>
using mapped_batch_t = decltype(std::declval<Transform&>().apply_batch(
    std::declval<typename unwrap_optional<decltype(std::declval<Source&>().get_batch(
        std::declval<request_arg<typename Source::BatchRequestType>>()))>::type>()));
}  // namespace detail

/// A dataset of whole batches (torch::data::datasets::BatchDataset<Self, Batch, BatchRequest>):
/// get_batch(request) and size(). A stateful dataset's Batch is a std::optional (nullopt: the
/// epoch is over) and its request the batch size.
template <typename Self, typename Batch, typename BatchRequest = std::vector<std::size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  static constexpr bool is_stateful = detail::is_optional<Batch>::value;
  virtual ~BatchDataset() = default;
  /// The batch for request.
  virtual Batch get_batch(detail::request_arg<BatchRequest> request) = 0;
  /// The number of examples (std::nullopt: unknown, which a sampler cannot use).
  virtual std::optional<std::size_t> size() const = 0;
  /// This dataset with transform applied to each batch: `ds.map(transforms::Stack<>())`. An
  /// lvalue is copied into the result, a temporary moved.
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) & {
    return MapDataset<Self, Transform>(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return MapDataset<Self, Transform>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

/// A dataset of examples by index (torch::data::datasets::Dataset<Self, SingleExample>): define
/// get(index) and size(); get_batch(indices) gives a std::vector of examples.
template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;
  /// The example at index.
  virtual ExampleType get(std::size_t index) = 0;
  /// The examples at indices, in that order.
  std::vector<SingleExample> get_batch(const std::vector<std::size_t>& indices) override {
    std::vector<SingleExample> batch;
    batch.reserve(indices.size());
    for (std::size_t i : indices) batch.push_back(get(i));
    return batch;
  }
  /// The batch of the one example at index (libtorch's get_batch(i), an ArrayRef of one).
  std::vector<SingleExample> get_batch(std::size_t index) {
    return get_batch(std::vector<std::size_t>{index});
  }
};

/// A dataset whose batches are transform.apply_batch(source.get_batch(request)) (libtorch's
/// MapDataset); for a stateful source, nullopt stays nullopt. map() chains another transform.
template <typename Source, typename Transform>
class MapDataset : public BatchDataset<
                       MapDataset<Source, Transform>,
                       std::conditional_t<Source::is_stateful,
                                          std::optional<detail::mapped_batch_t<Source, Transform>>,
                                          detail::mapped_batch_t<Source, Transform>>,
                       typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = Transform;
  using BatchRequestType = typename Source::BatchRequestType;
  using OutputBatchType = detail::mapped_batch_t<Source, Transform>;
  using BatchType =
      std::conditional_t<Source::is_stateful, std::optional<OutputBatchType>, OutputBatchType>;
  MapDataset(Source source, Transform transform)
      : source_(std::move(source)), transform_(std::move(transform)) {}
  /// The transformed batch of the source's batch for request.
  BatchType get_batch(detail::request_arg<BatchRequestType> request) override {
    if constexpr (Source::is_stateful) {
      auto batch = source_.get_batch(request);
      if (!batch) return std::nullopt;
      return transform_.apply_batch(std::move(*batch));
    } else {
      return transform_.apply_batch(source_.get_batch(request));
    }
  }
  /// The transformed batch of the one example at index.
  template <typename Index>
  requires(std::is_integral_v<Index>&& std::is_same_v<BatchRequestType, std::vector<std::size_t>>)
      BatchType get_batch(Index index) {
    return get_batch(std::vector<std::size_t>{static_cast<std::size_t>(index)});
  }
  /// The source's size.
  std::optional<std::size_t> size() const override { return source_.size(); }
  /// Starts a new epoch of a stateful source.
  void reset() requires Source::is_stateful { source_.reset(); }
  Source& dataset() { return source_; }
  const Source& dataset() const { return source_; }
  Transform& transform() { return transform_; }
  const Transform& transform() const { return transform_; }

 private:
  Source source_;
  Transform transform_;
};

/// A dataset with state that decides its batches (torch::data::datasets::StatefulDataset):
/// get_batch (batch_size) returns a batch or nullopt when the epoch is over; reset() starts a new
/// epoch. A DataLoader asks it for batch_size-sized batches until nullopt (no sampler). With
/// workers, get_batch runs on several threads at once: lock your state (libtorch's test does).
template <typename Self, typename Batch = std::vector<Example<>>,
          typename BatchRequest = std::size_t>
class StatefulDataset : public BatchDataset<Self, std::optional<Batch>, BatchRequest> {
 public:
  /// Starts a new epoch.
  virtual void reset() = 0;
  /// Saves / loads the dataset's state: libtorch's save(serialize::OutputArchive&) /
  /// load(serialize::InputArchive&), which a libtorch dataset overrides, or the same on streams.
  /// Each default throws: override the pair you use.
  virtual void save(serialize::OutputArchive& /*archive*/) const;
  virtual void load(serialize::InputArchive& /*archive*/);
  virtual void save(std::ostream& /*stream*/) const;
  virtual void load(std::istream& /*stream*/);
};

/// A dataset of batches of a requested size, with no indices (torch::data::datasets::
/// StreamDataset): a DataLoader gives it a samplers::StreamSampler.
template <typename Self, typename Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, /*BatchRequest=*/std::size_t>;

/// A dataset shared by its copies (torch::data::datasets::SharedBatchDataset): a loader and its
/// workers then use one dataset, never a copy; * and -> reach it.
template <typename UnderlyingDataset>
class SharedBatchDataset : public BatchDataset<SharedBatchDataset<UnderlyingDataset>,
                                               typename UnderlyingDataset::BatchType,
                                               typename UnderlyingDataset::BatchRequestType> {
 public:
  using BatchType = typename UnderlyingDataset::BatchType;
  using BatchRequestType = typename UnderlyingDataset::BatchRequestType;
  /* implicit */ SharedBatchDataset(std::shared_ptr<UnderlyingDataset> shared_dataset)  // NOLINT
      : dataset_(std::move(shared_dataset)) {
    MG_CHECK(dataset_ != nullptr, "SharedBatchDataset", "the dataset is null");
  }
  BatchType get_batch(detail::request_arg<BatchRequestType> request) override {
    return dataset_->get_batch(request);
  }
  std::optional<std::size_t> size() const override { return dataset_->size(); }
  UnderlyingDataset& operator*() { return *dataset_; }
  const UnderlyingDataset& operator*() const { return *dataset_; }
  UnderlyingDataset* operator->() { return dataset_.get(); }
  const UnderlyingDataset* operator->() const { return dataset_.get(); }
  /// Starts a new epoch of a stateful dataset.
  void reset() requires UnderlyingDataset::is_stateful { dataset_->reset(); }

 private:
  std::shared_ptr<UnderlyingDataset> dataset_;
};

/// A SharedBatchDataset of UnderlyingDataset(args...), built once (make_shared_dataset).
template <typename UnderlyingDataset, typename... Args>
SharedBatchDataset<UnderlyingDataset> make_shared_dataset(Args&&... args) {
  return std::make_shared<UnderlyingDataset>(std::forward<Args>(args)...);
}

namespace detail {
[[noreturn]] void stateful_not_serializable(const char* what, const char* overload);
}  // namespace detail

template <typename Self, typename Batch, typename BatchRequest>
void StatefulDataset<Self, Batch, BatchRequest>::save(serialize::OutputArchive& /*archive*/) const {
  detail::stateful_not_serializable("save", "save(serialize::OutputArchive&)");
}
template <typename Self, typename Batch, typename BatchRequest>
void StatefulDataset<Self, Batch, BatchRequest>::load(serialize::InputArchive& /*archive*/) {
  detail::stateful_not_serializable("load", "load(serialize::InputArchive&)");
}
template <typename Self, typename Batch, typename BatchRequest>
void StatefulDataset<Self, Batch, BatchRequest>::save(std::ostream& /*stream*/) const {
  detail::stateful_not_serializable("save", "save(std::ostream&)");
}
template <typename Self, typename Batch, typename BatchRequest>
void StatefulDataset<Self, Batch, BatchRequest>::load(std::istream& /*stream*/) {
  detail::stateful_not_serializable("load", "load(std::istream&)");
}

/// libtorch's TensorDataset: example i is tensor[i], with no target (a TensorExample); from
/// several tensors, their stack.
struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  /// stack(tensors): example i is tensors[i].
  explicit TensorDataset(const std::vector<Tensor>& tensors);
  /// Example i is tensor[i]; throws for an undefined or 0-d tensor.
  explicit TensorDataset(Tensor tensor);
  /// tensor[index]; throws when index is out of range.
  TensorExample get(std::size_t index) override;
  /// tensor.size(0).
  std::optional<std::size_t> size() const override;
  Tensor tensor;
};

}  // namespace datasets

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
