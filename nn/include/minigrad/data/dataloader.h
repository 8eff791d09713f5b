#pragma once
// DataLoader: batches of a dataset, epoch after epoch, with range-for.
//
// Python's torch.utils.data.DataLoader, with the same batches for the same seed:
//
//   mg::data::TensorDataset ds({X, Y});
//   mg::data::DataLoader loader(ds, mg::data::DataLoaderOptions(32).shuffle(true));
//   for (const std::vector<mg::Tensor>& batch : loader) { batch[0] ...; batch[1] ...; }
//
// libtorch's torch::data::make_data_loader, with the same batches for the same seed:
//
//   auto loader = mg::data::make_data_loader(
//       Phrases().map(mg::data::transforms::Stack<>()),
//       mg::data::DataLoaderOptions().batch_size(64));
//   for (auto& batch : *loader) { batch.data ...; batch.target ...; }
//
// Every begin() starts an epoch: the sampler is reset (a new permutation when shuffling) and
// batches come one by one from dataset.get_batch(indices), on the calling thread, or, with
// DataLoaderOptions().workers(n), on n background threads (Note [DataLoader workers]).
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "minigrad/data/dataset.h"
#include "minigrad/data/sampler.h"
#include "minigrad/error.h"
#include "minigrad/generator.h"
#include "minigrad/shape.h"

namespace minigrad::data {

/// Options as libtorch's DataLoaderOptions (chained setters) plus Python's shuffle and generator.
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  /// DataLoaderOptions(32): batch_size 32; implicit, as libtorch's (make_data_loader(ds, 32)).
  /* implicit */ DataLoaderOptions(std::size_t batch_size)  // NOLINT
      : batch_size_(batch_size) {}
  DataLoaderOptions& batch_size(std::size_t n) {
    batch_size_ = n;
    return *this;
  }
  /// Drops the last batch of an epoch when it is smaller than batch_size.
  DataLoaderOptions& drop_last(bool on) {
    drop_last_ = on;
    return *this;
  }
  /// A new order every epoch, as torch.utils.data.RandomSampler (DataLoader only;
  /// make_data_loader takes its sampler as a template argument, as libtorch).
  DataLoaderOptions& shuffle(bool on) {
    shuffle_ = on;
    return *this;
  }
  /// The generator the shuffle and the per-epoch base seed draw from (default: the default one).
  DataLoaderOptions& generator(Generator g) {
    generator_ = std::move(g);
    has_generator_ = true;
    return *this;
  }
  /// Loads batches on n background threads (libtorch's workers, Python's num_workers); 0 (the
  /// default) loads them on the calling thread. The batches and their order do not change (Note
  /// [DataLoader workers]).
  DataLoaderOptions& workers(std::size_t n) {
    workers_ = n;
    return *this;
  }
  /// Python's DataLoader(ds, sampler=s): batches in the order of s (e.g. a RandomSampler with
  /// RandomSamplerOptions, or a DistributedSampler), with Python's per-epoch draws; shared, so
  /// set_epoch() on it stays possible. Mutually exclusive with shuffle(true), as in PyTorch.
  DataLoaderOptions& sampler(std::shared_ptr<samplers::Sampler> s) {
    sampler_ = std::move(s);
    return *this;
  }
  /// With workers: how long the loop waits for a batch before it throws (libtorch's timeout);
  /// unset (the default): forever.
  DataLoaderOptions& timeout(std::chrono::milliseconds t) {
    timeout_ = t;
    return *this;
  }
  /// With workers: batches in the sampler's order (true, the default, as libtorch's), or in the
  /// order the workers finish them (false: no wait behind a slow batch, order not reproducible).
  DataLoaderOptions& enforce_ordering(bool on) {
    enforce_ordering_ = on;
    return *this;
  }
  /// Python's name for workers(n).
  DataLoaderOptions& num_workers(std::size_t n) { return workers(n); }
  /// How many batches may be requested ahead of the one the loop uses (libtorch's max_jobs); 0
  /// (the default) means 2 * workers.
  DataLoaderOptions& max_jobs(std::size_t n) {
    max_jobs_ = n;
    return *this;
  }
  std::size_t batch_size() const { return batch_size_; }
  const std::shared_ptr<samplers::Sampler>& sampler() const { return sampler_; }
  std::size_t workers() const { return workers_; }
  std::size_t num_workers() const { return workers_; }
  std::size_t max_jobs() const { return max_jobs_ != 0 ? max_jobs_ : 2 * workers_; }
  bool drop_last() const { return drop_last_; }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }
  bool enforce_ordering() const { return enforce_ordering_; }
  bool shuffle() const { return shuffle_; }
  /// The generator given, or nullopt (the default generator).
  std::optional<Generator> generator() const {
    if (!has_generator_) return std::nullopt;
    return generator_;
  }

 private:
  std::size_t batch_size_ = 1;
  std::size_t workers_ = 0;
  std::size_t max_jobs_ = 0;
  bool drop_last_ = false;
  bool shuffle_ = false;
  // A plain member and a flag, not a std::optional<Generator>: GCC 12 warns falsely
  // (-Wmaybe-uninitialized) on copies of an optional shared handle under ThreadSanitizer.
  Generator generator_ = default_generator();
  bool has_generator_ = false;
  std::shared_ptr<samplers::Sampler> sampler_;
  std::optional<std::chrono::milliseconds> timeout_;
  bool enforce_ordering_ = true;
};

/// libtorch's FullDataLoaderOptions: every option with its default filled in.
struct FullDataLoaderOptions {
  explicit FullDataLoaderOptions(const DataLoaderOptions& options)
      : batch_size(options.batch_size()),
        workers(options.workers()),
        max_jobs(options.max_jobs()),
        timeout(options.timeout()),
        enforce_ordering(options.enforce_ordering()),
        drop_last(options.drop_last()) {}
  std::size_t batch_size;
  std::size_t workers;
  std::size_t max_jobs;
  std::optional<std::chrono::milliseconds> timeout;
  bool enforce_ordering;
  bool drop_last;
};

/// What the loop throws when a worker's get_batch threw (torch::data::WorkerException): what()
/// is "Caught exception in DataLoader worker thread. Original message: <the worker's what()>",
/// original_exception the worker's exception. A minigrad::Error, so `catch (const mg::Error&)`
/// catches it too.
struct WorkerException : public Error {
  explicit WorkerException(std::exception_ptr original);
  std::exception_ptr original_exception;
  std::string message;
};

namespace detail {
/// The dataset's size, or an error naming why a sampler cannot use it.
std::size_t sized(std::optional<std::size_t> size);
void check_options(const DataLoaderOptions& options);
/// torch.utils.data's per-epoch `_base_seed` draw (one int64 from the loader's generator), made
/// so that the random numbers after an epoch are PyTorch's.
void draw_base_seed(const std::optional<Generator>& generator);

// Note [DataLoader workers]
// With workers(n), n threads call dataset.get_batch(indices) while the loop trains, and the
// calling thread still does everything that decides what a batch holds: it resets the sampler,
// draws the random numbers, and asks the sampler for the indices of each batch, a few batches
// ahead (max_jobs). The batches are handed back in the sampler's order, so a loader with workers
// gives the same batches, in the same order, as one without, for the same seed; only get_batch
// runs elsewhere, so it must be safe to call from several threads at once (TensorDataset and
// Stack are; a get() that draws random numbers is not reproducible with workers). An exception a
// worker throws is rethrown by the loop at that batch's place (the same minigrad::Error). A new
// epoch (begin()) or the loader's destruction stops the threads: breaking out of the loop early
// leaves them idle until then, with at most max_jobs batches loaded for nothing. The threads read
// the loader's dataset: move a loader only between epochs (make_data_loader's is on the heap).

/// Thrown by OrderedLoader::take when a timeout passes (libtorch's message).
[[noreturn]] void throw_timeout(std::chrono::milliseconds timeout);

/// Runs load(request) on worker threads and returns the results in submission order (or, with
/// ordered false, in the order they finish).
template <typename Batch, typename Request = std::vector<std::size_t>>
class OrderedLoader {
 public:
  using Load = std::function<Batch(const Request&)>;
  OrderedLoader(std::size_t workers, Load load) : load_(std::move(load)) {
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { run(); });
  }
  OrderedLoader(const OrderedLoader&) = delete;
  OrderedLoader& operator=(const OrderedLoader&) = delete;
  ~OrderedLoader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  /// Queues the request of the next batch.
  void submit(Request request) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.emplace(submitted_++, std::move(request));
    }
    work_ready_.notify_one();
  }
  /// Batches submitted and not yet taken.
  std::size_t pending() const { return submitted_ - taken_; }
  /// Waits for the oldest batch not yet taken (ordered) or any finished one; throws a
  /// WorkerException for what its load threw, an Error when timeout passes first.
  Batch take(std::optional<std::chrono::milliseconds> timeout = std::nullopt, bool ordered = true) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = done_.end();
    auto ready = [&] {
      it = ordered ? done_.find(taken_) : done_.begin();
      return it != done_.end();
    };
    if (timeout) {
      if (!result_ready_.wait_for(lock, *timeout, ready)) throw_timeout(*timeout);
    } else {
      result_ready_.wait(lock, ready);
    }
    Result result = std::move(it->second);
    done_.erase(it);
    ++taken_;
    lock.unlock();
    if (result.error) throw WorkerException(result.error);
    return std::move(*result.batch);
  }

 private:
  struct Result {
    std::optional<Batch> batch;
    std::exception_ptr error;
  };
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      work_ready_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (stop_) return;
      auto job = jobs_.extract(jobs_.begin());
      lock.unlock();
      Result result;
      try {
        result.batch.emplace(load_(job.mapped()));
      } catch (...) {
        result.error = std::current_exception();
      }
      lock.lock();
      done_.emplace(job.key(), std::move(result));
      result_ready_.notify_all();
    }
  }

  Load load_;
  std::mutex mutex_;
  std::condition_variable work_ready_, result_ready_;
  std::map<std::size_t, Request> jobs_;  // by sequence number, oldest first
  std::map<std::size_t, Result> done_;
  std::size_t submitted_ = 0, taken_ = 0;  // touched by the calling thread only (and under lock)
  bool stop_ = false;
  std::vector<std::thread> threads_;
};
template <typename D>
struct request_of {
  using type = std::vector<std::size_t>;
};
template <typename D>
requires requires { typename D::BatchRequestType; }
struct request_of<D> {
  using type = typename D::BatchRequestType;
};
template <typename D>
constexpr bool is_stateful() {
  if constexpr (requires { D::is_stateful; })
    return D::is_stateful;
  else
    return false;
}
}  // namespace detail

/// Batches of a Dataset (anything with get_batch(indices) and size()), chosen by a sampler; of a
/// StreamDataset, sized by a StreamSampler; or of a StatefulDataset, until it returns nullopt.
template <typename DatasetT>
class DataLoader {
 public:
  /// What get_batch takes: indices, or a batch size (stream and stateful datasets).
  using Request = typename detail::request_of<DatasetT>::type;
  static constexpr bool kStateful = detail::is_stateful<DatasetT>();
  static constexpr bool kIndexed = std::is_same_v<Request, std::vector<std::size_t>>;
  using RawBatch = decltype(std::declval<DatasetT&>().get_batch(std::declval<const Request&>()));
  /// A batch: what get_batch returns (a stateful dataset's without its std::optional).
  using BatchType = typename datasets::detail::unwrap_optional<RawBatch>::type;

  /// Python's DataLoader(dataset, batch_size, shuffle, drop_last, generator): shuffles as
  /// torch.utils.data.RandomSampler, or visits the examples in order. For a StatefulDataset,
  /// libtorch's loader: batches until get_batch returns nullopt, no sampler.
  DataLoader(DatasetT dataset, DataLoaderOptions options) requires(kIndexed || kStateful)
      : dataset_(std::move(dataset)), options_(std::move(options)), python_(!kStateful) {
    detail::check_options(options_);
    if constexpr (kStateful) {
      MG_CHECK(!options_.shuffle() && options_.sampler() == nullptr, "DataLoader",
               "a stateful dataset takes no sampler and no shuffle: it decides its batches");
    } else {
      const std::size_t n = detail::sized(dataset_.size());
      if (options_.sampler()) {
        MG_CHECK(!options_.shuffle(), "DataLoader",
                 "sampler option is mutually exclusive with shuffle (as in PyTorch)");
        sampler_ = options_.sampler();
      } else if (options_.shuffle()) {
        sampler_ = std::make_unique<samplers::TorchRandomSampler>(n, options_.generator());
      } else {
        sampler_ = std::make_unique<samplers::SequentialSampler>(n);
      }
    }
  }
  /// libtorch's loader: batches in the order of sampler (make_data_loader builds these). A
  /// shared sampler stays reachable, e.g. a DistributedSampler's set_epoch().
  DataLoader(DatasetT dataset, DataLoaderOptions options,
             std::shared_ptr<samplers::Sampler> sampler) requires kIndexed
      : dataset_(std::move(dataset)),
        options_(std::move(options)),
        sampler_(std::move(sampler)) {
    detail::check_options(options_);
    MG_CHECK(sampler_ != nullptr, "DataLoader", "the sampler is null");
    MG_CHECK(options_.sampler() == nullptr, "DataLoader",
             "a sampler is given both as an argument and in the options");
    MG_CHECK(!options_.shuffle(), "DataLoader",
             "shuffle(true) and a sampler are mutually exclusive (as in PyTorch): pass "
             "samplers::RandomSampler to shuffle");
  }
  /// libtorch's loader of a StreamDataset: each batch's size from sampler.
  DataLoader(DatasetT dataset, DataLoaderOptions options,
             samplers::StreamSampler sampler) requires(!kIndexed && !kStateful)
      : dataset_(std::move(dataset)), options_(std::move(options)), stream_(std::move(sampler)) {
    detail::check_options(options_);
    MG_CHECK(!options_.shuffle() && options_.sampler() == nullptr, "DataLoader",
             "a stream dataset takes a StreamSampler, no other sampler and no shuffle");
  }

  // Note [DataLoader iterators]
  // As libtorch's (torch/data/iterator.h): begin() is a valid iterator until the epoch runs out,
  // end() a sentinel. Incrementing or dereferencing the sentinel, or an iterator whose epoch ran
  // out, throws (libtorch's messages) instead of reading a batch that is not there. Copies of an
  // iterator share its state, as libtorch's (an input iterator: advancing one advances all), so
  // an iterator equals itself and its copies, and equals end() once exhausted. The first batch
  // loads when the iterator is first used, not in begin() (libtorch's lazy_initialize), so an
  // error in it surfaces at that use.
  class Iterator {
   public:
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    /// The current batch; throws for end() or an iterator past the last batch.
    BatchType& operator*() const {
      check_valid("Dereferencing the DataLoader's past-the-end iterator is not allowed",
                  "Attempted to dereference iterator that was past the end");
      return *state_->batch;
    }
    BatchType* operator->() const { return &**this; }
    /// Moves to the next batch (past the last one: equal to end()); throws for end() or an
    /// iterator already past the last batch.
    Iterator& operator++() {
      check_valid("Incrementing the DataLoader's past-the-end iterator is not allowed",
                  "Attempted to increment iterator past the end");
      state_->batch = state_->loader->next_batch();
      return *this;
    }
    /// Two valid iterators are equal when they are the same (or copies), without loading a
    /// batch; a valid one equals end() once exhausted; end() equals end() (libtorch's rules).
    bool operator==(const Iterator& other) const {
      if (state_ != nullptr && other.state_ != nullptr) return state_ == other.state_;
      if (state_ == nullptr && other.state_ == nullptr) return true;
      return state_ != nullptr ? exhausted() : other.exhausted();
    }

   private:
    friend class DataLoader;
    struct State {
      DataLoader* loader;
      std::optional<BatchType> batch;
      bool loaded = false;  // the first batch is loaded on first use, as libtorch's
    };
    explicit Iterator(DataLoader* loader)
        : state_(std::make_shared<State>(State{loader, std::nullopt, false})) {}
    void load_first() const {
      if (state_ != nullptr && !state_->loaded) {
        state_->loaded = true;
        state_->batch = state_->loader->next_batch();
      }
    }
    bool exhausted() const {
      load_first();
      return state_ == nullptr || !state_->batch.has_value();
    }
    void check_valid(const char* on_sentinel, const char* when_exhausted) const {
      MG_CHECK(state_ != nullptr, "DataLoader", on_sentinel,
               " (compare an iterator with loader.end() instead)");
      load_first();
      MG_CHECK(state_->batch.has_value(), "DataLoader", when_exhausted,
               " (the epoch has ended; compare with loader.end() first, or call begin() for the "
               "next epoch)");
    }
    std::shared_ptr<State> state_;  // null for end()
  };

  /// Starts an epoch (resets the sampler); its first batch is loaded when the iterator is first
  /// used (dereferenced, incremented or compared), as libtorch's, so that is where an error in it
  /// surfaces.
  Iterator begin() {
    workers_.reset();  // stops the previous epoch's threads, if any
    sampler_done_ = false;
    if (python_) detail::draw_base_seed(options_.generator());
    if constexpr (kStateful)
      dataset_.reset();
    else if constexpr (kIndexed)
      sampler_->reset(detail::sized(dataset_.size()));
    else
      stream_->reset();
    if (options_.workers() > 0) {
      workers_ = std::make_unique<detail::OrderedLoader<RawBatch, Request>>(
          options_.workers(),
          [this](const Request& request) { return dataset_.get_batch(request); });
    }
    return Iterator(this);
  }
  Iterator end() { return Iterator(); }

  /// Batches per epoch (Python's len(loader)): from the sampler's count when it knows it.
  std::size_t size() const requires kIndexed {
    const std::optional<std::size_t> counted = sampler_->num_samples();
    const std::size_t n = counted ? *counted : detail::sized(dataset_.size());
    const std::size_t b = options_.batch_size();
    return options_.drop_last() ? n / b : minigrad::detail::ceil_div(n, b);
  }
  const DataLoaderOptions& options() const { return options_; }
  DatasetT& dataset() { return dataset_; }

 private:
  // The next batch's request (indices or a size), or nullopt at the end of the epoch.
  std::optional<Request> next_request() {
    const std::size_t b = options_.batch_size();
    if constexpr (kStateful) {
      return b;  // the dataset ends the epoch
    } else if constexpr (kIndexed) {
      auto indices = sampler_->next(b);
      if (!indices || indices->empty() || (options_.drop_last() && indices->size() < b))
        return std::nullopt;
      return indices;
    } else {
      auto size = stream_->next(b);
      if (!size || size->size() == 0 || (options_.drop_last() && size->size() < b))
        return std::nullopt;
      return size->size();
    }
  }
  std::optional<BatchType> next_batch() {
    if (!workers_) {
      auto request = next_request();
      if (!request) return std::nullopt;
      return dataset_.get_batch(*request);  // a stateful dataset's nullopt ends the epoch
    }
    // Note [DataLoader workers]: keep max_jobs batches requested, take the oldest.
    while (true) {
      while (!sampler_done_ && workers_->pending() < options_.max_jobs()) {
        auto request = next_request();
        if (!request) {
          sampler_done_ = true;
          break;
        }
        workers_->submit(std::move(*request));
      }
      if (workers_->pending() == 0) {
        workers_.reset();
        return std::nullopt;
      }
      RawBatch batch = workers_->take(options_.timeout(), options_.enforce_ordering());
      if constexpr (kStateful) {
        // The dataset ran out: request no more, but keep the batches already requested.
        if (!batch) {
          sampler_done_ = true;
          continue;
        }
      }
      return batch;
    }
  }

  DatasetT dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<samplers::Sampler> sampler_;     // an indexed dataset's
  std::optional<samplers::StreamSampler> stream_;  // a stream dataset's
  bool python_ = false;
  // Declared last, so it is destroyed (its threads joined) before the dataset they read.
  std::unique_ptr<detail::OrderedLoader<RawBatch, Request>> workers_;
  bool sampler_done_ = false;
};

/// torch::data::make_data_loader<Sampler = RandomSampler>(dataset, options): a loader of
/// dataset (moved in) whose sampler is Sampler(dataset.size()).
/// A StatefulDataset's loader takes no sampler (libtorch's StatefulDataLoader).
template <typename SamplerT = samplers::RandomSampler, typename DatasetT>
std::unique_ptr<DataLoader<DatasetT>> make_data_loader(DatasetT dataset,
                                                       DataLoaderOptions options = {}) {
  if constexpr (detail::is_stateful<DatasetT>()) {
    return std::make_unique<DataLoader<DatasetT>>(std::move(dataset), std::move(options));
  } else {
    const std::size_t n = detail::sized(dataset.size());
    return std::make_unique<DataLoader<DatasetT>>(std::move(dataset), std::move(options),
                                                  std::make_unique<SamplerT>(n));
  }
}
/// make_data_loader(dataset, sampler, options) with a sampler of your own.
template <typename DatasetT, typename SamplerT>
requires std::derived_from<SamplerT, samplers::Sampler> std::unique_ptr<DataLoader<DatasetT>>
make_data_loader(DatasetT dataset, SamplerT sampler, DataLoaderOptions options = {}) {
  return std::make_unique<DataLoader<DatasetT>>(std::move(dataset), std::move(options),
                                                std::make_unique<SamplerT>(std::move(sampler)));
}
/// make_data_loader(stream_dataset, StreamSampler(epoch_size), options).
template <typename DatasetT>
std::unique_ptr<DataLoader<DatasetT>> make_data_loader(DatasetT dataset,
                                                       samplers::StreamSampler sampler,
                                                       DataLoaderOptions options = {}) {
  return std::make_unique<DataLoader<DatasetT>>(std::move(dataset), std::move(options),
                                                std::move(sampler));
}

}  // namespace minigrad::data
