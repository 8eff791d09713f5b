#pragma once
// data::DistributedSampler: each rank's share of a dataset's indices, with exactly the indices of
// torch.utils.data.distributed.DistributedSampler (same seed, epoch and sizes, same lists):
//
//   mg::data::DistributedSampler sampler(dataset_size);   // world size and rank from
//   for (int epoch = 0; epoch < epochs; ++epoch) {        // minigrad::distributed
//     sampler.set_epoch(epoch);                           // a new shuffle each epoch
//     for (std::int64_t i : sampler) { ... dataset[i] ... }
//   }
//
// With shuffle, the epoch's order is randperm(dataset_size) from a generator seeded with
// seed + epoch (the same on every rank); then the list is padded by repeating its start to a
// multiple of num_replicas (or, with drop_last, its tail is dropped), and rank r takes the
// elements r, r + num_replicas, r + 2 * num_replicas, ...
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "minigrad/data/sampler.h"

namespace minigrad::data {

/// Also a samplers::Sampler, so a DataLoader can take it (keep a shared_ptr to call set_epoch):
///   auto sampler = std::make_shared<mg::data::DistributedSampler>(ds.size().value());
///   mg::data::DataLoader loader(ds, mg::data::DataLoaderOptions(32), sampler);
///   for (epoch ...) { sampler->set_epoch(epoch); for (auto& batch : loader) ... }
class DistributedSampler : public samplers::Sampler {
 public:
  /// num_replicas and rank default to minigrad::distributed's world_size() and rank() (which
  /// need init()). Throws for a rank outside [0, num_replicas) or a negative size.
  explicit DistributedSampler(std::int64_t dataset_size,
                              std::optional<int> num_replicas = std::nullopt,
                              std::optional<int> rank = std::nullopt, bool shuffle = true,
                              std::uint64_t seed = 0, bool drop_last = false);

  /// The epoch mixed into the shuffle's seed; call it before each epoch.
  void set_epoch(std::int64_t epoch) { epoch_ = epoch; }
  std::int64_t epoch() const { return epoch_; }
  /// This rank's indices for the current epoch (size() of them).
  std::vector<std::int64_t> indices() const;
  /// How many indices each rank gets per epoch (PyTorch's len(sampler)).
  std::int64_t size() const { return num_samples_; }
  /// Iteration over indices(): the list is made when begin() is called.
  class Iterator;
  Iterator begin() const;
  Iterator end() const;

  /// samplers::Sampler: a DataLoader's epoch starts with reset() (this epoch's indices) and takes
  /// them batch by batch with next(). A new size must equal the dataset size given here.
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  std::optional<std::size_t> num_samples() const override {
    return static_cast<std::size_t>(num_samples_);
  }

 private:
  std::int64_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  std::uint64_t seed_;
  bool drop_last_;
  std::int64_t epoch_ = 0;
  std::int64_t num_samples_;
  std::vector<std::int64_t> epoch_indices_;
  std::size_t next_ = 0;
};

class DistributedSampler::Iterator {
 public:
  Iterator() = default;
  std::int64_t operator*() const { return (*indices_)[pos_]; }
  Iterator& operator++() {
    ++pos_;
    return *this;
  }
  bool operator==(const Iterator& other) const { return remaining() == other.remaining(); }

 private:
  friend class DistributedSampler;
  std::size_t remaining() const { return indices_ ? indices_->size() - pos_ : 0; }
  std::shared_ptr<const std::vector<std::int64_t>> indices_;
  std::size_t pos_ = 0;
};

}  // namespace minigrad::data
