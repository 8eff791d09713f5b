#pragma once
// Samplers: which indices each batch takes (torch::data::samplers). A DataLoader calls reset()
// at the start of every epoch and next(batch_size) for each batch until it returns nullopt.
#include <cstddef>
#include <optional>
#include <vector>

#include "minigrad/generator.h"
#include "minigrad/tensor.h"

namespace minigrad::data::samplers {

/// The interface of libtorch's torch::data::samplers::Sampler<>.
class Sampler {
 public:
  virtual ~Sampler() = default;
  /// Starts a new epoch (new_size: a new dataset size, if it changed).
  virtual void reset(std::optional<std::size_t> new_size = std::nullopt) = 0;
  /// The next batch_size indices (fewer at the end of the epoch), or nullopt when none are left.
  virtual std::optional<std::vector<std::size_t>> next(std::size_t batch_size) = 0;
  /// How many indices an epoch gives (Python's len(sampler)), or nullopt if unknown.
  virtual std::optional<std::size_t> num_samples() const { return std::nullopt; }
};

/// 0, 1, ..., size - 1 in order (torch::data::samplers::SequentialSampler).
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(std::size_t size) : size_(size) {}
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  std::optional<std::size_t> num_samples() const override { return size_; }

 private:
  std::size_t size_;
  std::size_t index_ = 0;
};

/// A fresh permutation every epoch, as libtorch's torch::data::samplers::RandomSampler: the
/// constructor and every reset() draw randperm(size) from the default generator, so a seeded
/// libtorch program and its minigrad port visit the same orders.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(std::size_t size);
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  std::optional<std::size_t> num_samples() const override {
    return static_cast<std::size_t>(indices_.numel());
  }

 private:
  Tensor indices_;
  std::size_t index_ = 0;
};

/// torch.utils.data.RandomSampler's order (what DataLoader(shuffle=True) uses): each epoch,
/// without a generator, one int64 drawn from the default generator seeds a fresh generator whose
/// randperm(size) is the order; with a generator, randperm(size) comes from it directly.
class TorchRandomSampler : public Sampler {
 public:
  explicit TorchRandomSampler(std::size_t size, std::optional<Generator> generator = std::nullopt)
      : size_(size), generator_(std::move(generator)) {}
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  std::optional<std::size_t> num_samples() const override { return size_; }

 private:
  std::size_t size_;
  std::optional<Generator> generator_;
  std::vector<std::size_t> order_;
  std::size_t index_ = 0;
};

}  // namespace minigrad::data::samplers
