#pragma once
// Samplers: which indices each batch takes (torch::data::samplers). A DataLoader calls reset()
// at the start of every epoch and next(batch_size) for each batch until it returns nullopt.
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "minigrad/generator.h"
#include "minigrad/serialize.h"
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
  /// Writes where the sampler is in its epoch (libtorch's save(OutputArchive&); a stream here
  /// until minigrad has archives), so that load() on a sampler of the same kind continues from
  /// there. Throws for a sampler that cannot be saved.
  virtual void save(std::ostream& stream) const;
  /// Reads what save() wrote; throws when it was written by another kind of sampler or is
  /// malformed.
  virtual void load(std::istream& stream);
  /// The same state in an archive, as libtorch's save(serialize::OutputArchive&): under
  /// libtorch's keys, each an int64 tensor ("index" and "indices" for RandomSampler, "index" for
  /// SequentialSampler, "sample_index_" and "epoch_" for the distributed ones), so
  /// `mg::save(sampler, "sampler.pt")` and `mg::load(sampler, "sampler.pt")` work. Throws for a
  /// sampler that cannot be saved.
  virtual void save(serialize::OutputArchive& archive) const;
  /// Reads what save(archive) wrote; throws for a missing key ("No such serialized tensor"), a
  /// value that is not one integer, or a position that does not fit the sampler.
  virtual void load(serialize::InputArchive& archive);
};

namespace detail {
/// save()'s format: a line "minigrad.sampler <kind> <count>" and count integers.
void write_state(std::ostream& stream, const char* kind, const std::vector<std::size_t>& values);
std::vector<std::size_t> read_state(std::istream& stream, const char* kind);
}  // namespace detail

/// 0, 1, ..., size - 1 in order (torch::data::samplers::SequentialSampler).
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(std::size_t size) : size_(size) {}
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  std::optional<std::size_t> num_samples() const override { return size_; }
  /// How many indices this epoch has given.
  std::size_t index() const { return index_; }
  void save(std::ostream& stream) const override;
  void load(std::istream& stream) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  // Applies a saved state (the stream's values, or the archive's in the same order), checked.
  void restore(const std::vector<std::size_t>& state);
  std::size_t size_;
  std::size_t index_ = 0;
};

/// Python's torch.utils.data.RandomSampler(data_source, replacement, num_samples, generator)
/// arguments, for RandomSampler(size, options). libtorch's RandomSampler has none of them.
class RandomSamplerOptions {
 public:
  /// Draws each index independently (uniform over [0, size)), so indices repeat.
  RandomSamplerOptions& replacement(bool on) {
    replacement_ = on;
    return *this;
  }
  /// Indices per epoch (default: the dataset size); with replacement it may be far larger (minGPT
  /// asks for 1e10: indices are drawn 32 at a time, as needed).
  RandomSamplerOptions& num_samples(std::size_t n) {
    num_samples_ = n;
    return *this;
  }
  /// The generator to draw from (default: each epoch, a fresh one seeded from the default
  /// generator, as PyTorch).
  RandomSamplerOptions& generator(Generator g) {
    generator_ = std::move(g);
    has_generator_ = true;
    return *this;
  }
  bool replacement() const { return replacement_; }
  std::optional<std::size_t> num_samples() const { return num_samples_; }
  std::optional<Generator> generator() const {
    if (!has_generator_) return std::nullopt;
    return generator_;
  }

 private:
  bool replacement_ = false;
  std::optional<std::size_t> num_samples_;
  // A Generator and a flag, not std::optional<Generator>: g++ 12 at -O1 (the sanitizer builds)
  // warns that a copied optional's shared_ptr "may be used uninitialized" (a false positive), as
  // DataLoaderOptions' generator does.
  Generator generator_ = default_generator();
  bool has_generator_ = false;
};

/// A fresh permutation every epoch, as libtorch's torch::data::samplers::RandomSampler: the
/// constructor and every reset() draw randperm(size) from the default generator, so a seeded
/// libtorch program and its minigrad port visit the same orders.
///
/// RandomSampler(size, RandomSamplerOptions()...) is Python's RandomSampler instead, with the
/// same indices for the same seed: each reset() takes the generator given, or seeds a fresh one
/// with one int64 from the default generator; then, with replacement, indices come from
/// randint(size, {32}) draws (the last one num_samples % 32), without, from randperm(size)
/// draws (the last cut to num_samples % size). Indices are drawn when next() needs them, as
/// Python's generator does.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(std::size_t size);
  /// Python's RandomSampler(range(size), replacement, num_samples, generator); throws when
  /// num_samples is 0 or size is 0.
  RandomSampler(std::size_t size, RandomSamplerOptions options);
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  std::optional<std::size_t> num_samples() const override {
    if (python_) return python_->num_samples;
    return static_cast<std::size_t>(indices_.numel());
  }
  /// How many indices this epoch has given (libtorch's index()).
  std::size_t index() const { return python_ ? python_->taken : index_; }
  /// The epoch's permutation and position (libtorch's RandomSampler; one made with
  /// RandomSamplerOptions cannot be saved: it throws).
  void save(std::ostream& stream) const override;
  void load(std::istream& stream) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  // Applies a saved state (the stream's values, or the archive's in the same order), checked.
  void restore(const std::vector<std::size_t>& state);
  // Python's sampler: its options and this epoch's generator and drawn-but-unused indices.
  struct Python {
    std::size_t size;
    std::size_t num_samples;
    RandomSamplerOptions options;
    Generator generator;
    std::vector<std::size_t> drawn;
    std::size_t used = 0;    // of drawn
    std::size_t taken = 0;   // this epoch
    std::size_t chunks = 0;  // draws made this epoch
    bool started = false;    // reset() (or the first next()) has chosen this epoch's generator
  };
  void start_python_epoch();
  std::optional<std::vector<std::size_t>> take_permuted(std::size_t batch_size);
  void draw_python();
  Tensor indices_;
  std::size_t index_ = 0;
  std::optional<Python> python_;
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

/// The request a StreamSampler makes: a batch size (torch::data::samplers::BatchSize).
struct BatchSize {
  explicit BatchSize(std::size_t size) : size_(size) {}
  std::size_t size() const noexcept { return size_; }
  operator std::size_t() const noexcept { return size_; }  // NOLINT
  std::size_t size_;
};

/// Batch sizes for a StreamDataset, epoch_size examples per epoch (torch::data::samplers::
/// StreamSampler): next(n) gives min(n, what is left of the epoch), then nullopt.
class StreamSampler {
 public:
  explicit StreamSampler(std::size_t epoch_size) : epoch_size_(epoch_size) {}
  /// Starts a new epoch (new_size: a new epoch size).
  void reset(std::optional<std::size_t> new_size = std::nullopt);
  std::optional<BatchSize> next(std::size_t batch_size);
  /// How many examples this epoch has given.
  std::size_t index() const { return examples_retrieved_so_far_; }
  void save(std::ostream& stream) const;
  void load(std::istream& stream);
  /// Its position under libtorch's key "examples_retrieved_so_far" (an int64 tensor).
  void save(serialize::OutputArchive& archive) const;
  void load(serialize::InputArchive& archive);

 private:
  // Applies a saved state (the stream's values, or the archive's in the same order), checked.
  void restore(const std::vector<std::size_t>& state);
  std::size_t examples_retrieved_so_far_ = 0;
  std::size_t epoch_size_;
};

/// The part of a dataset one of num_replicas processes samples (libtorch's
/// DistributedRandomSampler, DistributedSequentialSampler): the rank-th of num_replicas equal
/// shares, ceil(size / num_replicas) indices each with allow_duplicates (the last share repeats
/// the first indices), floor(size / num_replicas) without.
class DistributedSamplerBase : public Sampler {
 public:
  /// Throws when num_replicas is 0 or rank is not below it.
  DistributedSamplerBase(std::size_t size, std::size_t num_replicas, std::size_t rank,
                         bool allow_duplicates);
  /// The epoch (DistributedRandomSampler's shuffle seed); set it before reset().
  void set_epoch(std::size_t epoch) { epoch_ = epoch; }
  std::size_t epoch() const { return epoch_; }
  std::optional<std::size_t> num_samples() const override { return local_sample_count(); }
  /// Where the sampler is in the replicas' list (libtorch's index()).
  std::size_t index() const noexcept { return sample_index_; }

 protected:
  std::size_t local_sample_count() const;
  std::size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;  // this replica's share
  std::size_t size_;
  std::size_t num_replicas_;
  std::size_t rank_;
  std::size_t epoch_ = 0;
  bool allow_duplicates_;
};

/// libtorch's DistributedRandomSampler: every replica shuffles the same list (0 .. padded to
/// num_replicas shares) with std::shuffle and std::mt19937(epoch), and takes its share; call
/// set_epoch(e) then reset() for a new order.
class DistributedRandomSampler : public DistributedSamplerBase {
 public:
  explicit DistributedRandomSampler(std::size_t size, std::size_t num_replicas = 1,
                                    std::size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  void save(std::ostream& stream) const override;
  void load(std::istream& stream) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  // Applies a saved state (the stream's values, or the archive's in the same order), checked.
  void restore(const std::vector<std::size_t>& state);
  void populate_indices();
  std::vector<std::size_t> all_indices_;
};

/// libtorch's DistributedSequentialSampler: this replica's share in order (indices past the end,
/// with allow_duplicates, wrap around to the start).
class DistributedSequentialSampler : public DistributedSamplerBase {
 public:
  explicit DistributedSequentialSampler(std::size_t size, std::size_t num_replicas = 1,
                                        std::size_t rank = 0, bool allow_duplicates = true);
  void reset(std::optional<std::size_t> new_size = std::nullopt) override;
  std::optional<std::vector<std::size_t>> next(std::size_t batch_size) override;
  void save(std::ostream& stream) const override;
  void load(std::istream& stream) override;
  void save(serialize::OutputArchive& archive) const override;
  void load(serialize::InputArchive& archive) override;

 private:
  // Applies a saved state (the stream's values, or the archive's in the same order), checked.
  void restore(const std::vector<std::size_t>& state);
  void populate_indices();
};

}  // namespace minigrad::data::samplers

namespace minigrad::serialize {
/// `archive << sampler` / `archive >> sampler`: the sampler's save / load, so that
/// mg::save(sampler, path) and mg::load(sampler, path) work, as libtorch's torch::save.
inline OutputArchive& operator<<(OutputArchive& archive, const data::samplers::Sampler& sampler) {
  sampler.save(archive);
  return archive;
}
inline InputArchive& operator>>(InputArchive& archive, data::samplers::Sampler& sampler) {
  sampler.load(archive);
  return archive;
}
inline OutputArchive& operator<<(OutputArchive& archive,
                                 const data::samplers::StreamSampler& sampler) {
  sampler.save(archive);
  return archive;
}
inline InputArchive& operator>>(InputArchive& archive, data::samplers::StreamSampler& sampler) {
  sampler.load(archive);
  return archive;
}
}  // namespace minigrad::serialize
