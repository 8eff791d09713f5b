// DistributedSampler: torch.utils.data.distributed.DistributedSampler's index algorithm.
#include <algorithm>
#include <memory>

#include "minigrad/data/distributed_sampler.h"
#include "minigrad/distributed.h"
#include "minigrad/error.h"
#include "minigrad/generator.h"
#include "minigrad/ops.h"

namespace minigrad::data {
namespace {
constexpr const char* kOp = "DistributedSampler";
}

DistributedSampler::DistributedSampler(std::int64_t dataset_size, std::optional<int> num_replicas,
                                       std::optional<int> rank, bool shuffle, std::uint64_t seed,
                                       bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas ? *num_replicas : distributed::world_size()),
      rank_(rank ? *rank : distributed::rank()),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  MG_CHECK(dataset_size >= 0, kOp, "dataset_size must be non-negative, got ", dataset_size);
  MG_CHECK(num_replicas_ >= 1, kOp, "num_replicas must be at least 1, got ", num_replicas_);
  MG_CHECK(rank_ >= 0 && rank_ < num_replicas_, kOp, "invalid rank ", rank_,
           ", rank should be in the interval [0, ", num_replicas_ - 1, "]");
  const std::int64_t n = num_replicas_;
  // PyTorch: with drop_last the tail that would need padding is dropped, else the list is padded
  // up to a multiple of num_replicas (ceil divisions).
  if (drop_last_ && dataset_size % n != 0) {
    num_samples_ = (dataset_size - n + n - 1) / n;
  } else {
    num_samples_ = (dataset_size + n - 1) / n;
  }
}

std::vector<std::int64_t> DistributedSampler::indices() const {
  std::vector<std::int64_t> all;
  if (shuffle_) {
    Generator g;
    g.manual_seed(seed_ + static_cast<std::uint64_t>(epoch_));
    all = randperm(dataset_size_, g).to_vector<std::int64_t>();
  } else {
    for (std::int64_t i = 0; i < dataset_size_; ++i) all.push_back(i);
  }
  const auto total = static_cast<std::size_t>(num_samples_ * num_replicas_);
  if (all.size() < total) {
    // Pad by repeating the list from its start, as often as needed.
    const std::size_t original = all.size();
    for (std::size_t i = 0; all.size() < total; ++i) all.push_back(all[i % original]);
  }
  all.resize(total);
  std::vector<std::int64_t> mine;
  for (std::size_t i = static_cast<std::size_t>(rank_); i < total;
       i += static_cast<std::size_t>(num_replicas_))
    mine.push_back(all[i]);
  return mine;
}

DistributedSampler::Iterator DistributedSampler::begin() const {
  Iterator it;
  it.indices_ = std::make_shared<const std::vector<std::int64_t>>(indices());
  return it;
}
DistributedSampler::Iterator DistributedSampler::end() const { return Iterator(); }

void DistributedSampler::reset(std::optional<std::size_t> new_size) {
  MG_CHECK(!new_size || static_cast<std::int64_t>(*new_size) == dataset_size_, kOp,
           "the dataset has ", new_size ? static_cast<std::int64_t>(*new_size) : 0,
           " examples but the sampler was made for ", dataset_size_);
  epoch_indices_ = indices();
  next_ = 0;
}

std::optional<std::vector<std::size_t>> DistributedSampler::next(std::size_t batch_size) {
  if (next_ >= epoch_indices_.size()) return std::nullopt;
  const std::size_t n = std::min(batch_size, epoch_indices_.size() - next_);
  std::vector<std::size_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::size_t>(epoch_indices_[next_ + i]);
  next_ += n;
  return out;
}

}  // namespace minigrad::data
