#pragma once
// datasets::ChunkDataset, as libtorch's (torch/data/datasets/chunk.h): a stateful dataset of data
// stored in chunks (files, shards). A ChunkDataReader reads one chunk; the chunk sampler picks
// which chunks to read next (cross_chunk_shuffle_count at a time, their examples concatenated),
// the example sampler shuffles the examples of what was read, and batches of batch_size are cut
// from them in that order (the last of an epoch may be smaller; empty chunks are skipped).
//
//   auto ds = mg::data::datasets::make_shared_dataset<
//       mg::data::datasets::ChunkDataset<Reader, mg::data::samplers::SequentialSampler,
//                                        mg::data::samplers::RandomSampler>>(
//       Reader(), chunk_sampler, example_sampler, mg::data::datasets::ChunkDatasetOptions(1, 32));
//   auto loader = mg::data::make_data_loader(ds, mg::data::DataLoaderOptions(32));
//
// The difference from libtorch: chunks are read on the thread that asks for a batch, when the
// batches read so far run out, not by preloader_count background threads; the batches are those
// libtorch gives with preloader_count 1 (with more preloaders libtorch's order depends on which
// thread finishes first). get_batch is locked, so a DataLoader's workers may share the dataset.
#include <cstddef>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "minigrad/data/dataset.h"
#include "minigrad/data/sampler.h"
#include "minigrad/error.h"

namespace minigrad::data::datasets {

/// Reads whole chunks (torch::data::datasets::ChunkDataReader<ExampleType, ChunkType>).
template <typename ExampleType_, typename ChunkType_ = std::vector<ExampleType_>>
class ChunkDataReader {
 public:
  virtual ~ChunkDataReader() = default;
  using ChunkType = ChunkType_;
  using ExampleType = ExampleType_;
  /// What a ChunkDataset's batches are (a reader may name another BatchType of its own).
  using BatchType = ChunkType_;
  /// The examples of chunk chunk_index.
  virtual ChunkType read_chunk(std::size_t chunk_index) = 0;
  /// How many chunks there are.
  virtual std::size_t chunk_count() = 0;
  /// Called at the start of every epoch.
  virtual void reset() = 0;
};

namespace detail {
void check_chunk_options(std::size_t preloader_count, std::size_t batch_size,
                         std::size_t cache_size, std::size_t cross_chunk_shuffle_count);
}  // namespace detail

/// ChunkDataset's options (libtorch's ChunkDatasetOptions; throws libtorch's messages for a 0
/// count or a cache smaller than a batch).
class ChunkDatasetOptions {
 public:
  ChunkDatasetOptions(std::size_t preloader_count, std::size_t batch_size,
                      std::size_t cache_size = 2048, std::size_t cross_chunk_shuffle_count = 1)
      : preloader_count_(preloader_count),
        batch_size_(batch_size),
        cache_size_(cache_size),
        cross_chunk_shuffle_count_(cross_chunk_shuffle_count) {
    detail::check_chunk_options(preloader_count, batch_size, cache_size, cross_chunk_shuffle_count);
  }
  std::size_t preloader_count() const { return preloader_count_; }
  std::size_t batch_size() const { return batch_size_; }
  std::size_t cache_size() const { return cache_size_; }
  std::size_t cross_chunk_shuffle_count() const { return cross_chunk_shuffle_count_; }

 private:
  std::size_t preloader_count_, batch_size_, cache_size_, cross_chunk_shuffle_count_;
};

/// libtorch's ChunkDataset<ChunkReader, ChunkSampler = RandomSampler, ExampleSampler =
/// RandomSampler>: call reset() (a DataLoader does at each epoch) before get_batch(batch_size).
template <typename ChunkReader, typename ChunkSampler = samplers::RandomSampler,
          typename ExampleSampler = samplers::RandomSampler>
class ChunkDataset final
    : public StatefulDataset<ChunkDataset<ChunkReader, ChunkSampler, ExampleSampler>,
                             typename ChunkReader::BatchType, std::size_t> {
 public:
  using UnwrappedBatchType = typename ChunkReader::BatchType;
  using BatchType = std::optional<UnwrappedBatchType>;
  using BatchRequestType = std::size_t;
  using ChunkSamplerType = ChunkSampler;
  using ExampleSamplerType = ExampleSampler;

  ChunkDataset(ChunkReader chunk_reader, ChunkSampler chunk_sampler, ExampleSampler example_sampler,
               ChunkDatasetOptions options,
               std::function<void(UnwrappedBatchType&)> preprocessing_policy = {})
      : chunk_reader_(std::move(chunk_reader)),
        chunk_sampler_(std::move(chunk_sampler)),
        example_sampler_(std::move(example_sampler)),
        options_(options),
        preprocessing_policy_(std::move(preprocessing_policy)) {}

  /// The next batch_size examples (fewer at the end of the epoch), or nullopt when the epoch is
  /// over; batch_size must be the options' batch_size.
  BatchType get_batch(std::size_t batch_size) override {
    std::lock_guard<std::mutex> lock(mutex_);
    MG_CHECK(started_, "ChunkDataset", "Dataset needs to call reset() before calling get_batch().");
    MG_CHECK(batch_size == options_.batch_size(), "ChunkDataset",
             "The requested batch size does not match with the initialized batch size.\n The "
             "requested batch size is ",
             batch_size, ", while the dataset is created with batch size equal to ",
             options_.batch_size());
    while (buffer_.size() < batch_size && !exhausted_) read_chunks();
    if (buffer_.empty()) return std::nullopt;
    const auto n = static_cast<std::ptrdiff_t>(std::min(batch_size, buffer_.size()));
    UnwrappedBatchType batch(std::make_move_iterator(buffer_.begin()),
                             std::make_move_iterator(buffer_.begin() + n));
    buffer_.erase(buffer_.begin(), buffer_.begin() + n);
    return batch;
  }
  BatchType get_batch() { return get_batch(options_.batch_size()); }

  /// Starts an epoch: resets the reader and the chunk sampler (unless load() just restored it).
  void reset() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!load_checkpoint_) {
      chunk_reader_.reset();
      chunk_sampler_.reset(chunk_reader_.chunk_count());
    }
    load_checkpoint_ = false;
    buffer_.clear();
    exhausted_ = false;
    started_ = true;
  }
  /// Unknown (a stateful dataset).
  std::optional<std::size_t> size() const override { return std::nullopt; }
  ChunkSamplerType& chunk_sampler() { return chunk_sampler_; }
  /// The chunk sampler's place (libtorch's save/load, on streams); load() makes the next reset()
  /// continue from there.
  void save(std::ostream& stream) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    chunk_sampler_.save(stream);
  }
  void load(std::istream& stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    chunk_sampler_.load(stream);
    load_checkpoint_ = true;
  }

 private:
  // Reads the next cross_chunk_shuffle_count chunks into the buffer in the example sampler's
  // order (libtorch's preloader and BatchDataBuffer::add_chunk_data, on this thread).
  void read_chunks() {
    auto chunks = chunk_sampler_.next(options_.cross_chunk_shuffle_count());
    if (!chunks || chunks->empty()) {
      exhausted_ = true;
      return;
    }
    UnwrappedBatchType data = chunk_reader_.read_chunk((*chunks)[0]);
    for (std::size_t i = 1; i < chunks->size(); ++i) {
      auto more = chunk_reader_.read_chunk((*chunks)[i]);
      std::move(more.begin(), more.end(), std::back_inserter(data));
    }
    if (preprocessing_policy_) preprocessing_policy_(data);
    if (data.empty()) return;  // empty chunks are skipped
    example_sampler_.reset(data.size());
    auto order = example_sampler_.next(data.size());
    MG_CHECK(order && order->size() == data.size(), "ChunkDataset", "the example sampler gave ",
             order ? order->size() : 0, " indices for a chunk of ", data.size(), " examples");
    for (std::size_t i : *order) {
      MG_CHECK(i < data.size(), "ChunkDataset", "Index out of range: the example sampler gave ", i,
               " for a chunk of ", data.size(), " examples");
      buffer_.push_back(std::move(data[i]));
    }
  }

  ChunkReader chunk_reader_;
  ChunkSamplerType chunk_sampler_;
  ExampleSamplerType example_sampler_;
  ChunkDatasetOptions options_;
  std::function<void(UnwrappedBatchType&)> preprocessing_policy_;
  UnwrappedBatchType buffer_;  // examples read and not yet given, in order
  bool exhausted_ = false, started_ = false, load_checkpoint_ = false;
  mutable std::mutex mutex_;
};

}  // namespace minigrad::data::datasets
