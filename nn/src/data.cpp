// minigrad::data: TensorDataset, the samplers and the DataLoader's checks.
#include <algorithm>
#include <string>

#include "minigrad/data.h"
#include "minigrad/ops/creation.h"
#include "minigrad/ops/elementwise.h"
#include "minigrad/ops/index.h"
#include "minigrad/ops/random.h"

namespace minigrad::data {

// ---------------------------------------------------------------- TensorDataset

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  MG_CHECK(!tensors_.empty(), "TensorDataset", "needs at least one tensor");
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    MG_CHECK(tensors_[i].defined(), "TensorDataset", "tensor ", i, " is undefined");
    MG_CHECK(tensors_[i].dim() >= 1, "TensorDataset", "tensor ", i,
             " is a scalar (0-d); every tensor needs a first dim that indexes the examples");
    MG_CHECK(tensors_[i].size(0) == tensors_[0].size(0), "TensorDataset",
             "size mismatch between tensors: tensor ", i, " has shape ", tensors_[i].shape(),
             " but tensor 0 has shape ", tensors_[0].shape(), " (their first dims must match)");
  }
  size_ = static_cast<std::size_t>(tensors_[0].size(0));
}

std::vector<Tensor> TensorDataset::get(std::size_t index) const {
  MG_CHECK(index < size_, "TensorDataset", "index ", index, " is out of range for ", size_,
           " examples");
  std::vector<Tensor> out;
  out.reserve(tensors_.size());
  for (const Tensor& t : tensors_) out.push_back(t.select(0, static_cast<std::int64_t>(index)));
  return out;
}

std::vector<Tensor> TensorDataset::get_batch(const std::vector<std::size_t>& indices) const {
  std::vector<std::int64_t> idx;
  idx.reserve(indices.size());
  for (std::size_t i : indices) {
    MG_CHECK(i < size_, "TensorDataset", "index ", i, " is out of range for ", size_, " examples");
    idx.push_back(static_cast<std::int64_t>(i));
  }
  const Tensor index = tensor(idx);
  std::vector<Tensor> out;
  out.reserve(tensors_.size());
  for (const Tensor& t : tensors_) out.push_back(index_select(t, 0, index));
  return out;
}

// ---------------------------------------------------------------- datasets::TensorDataset

namespace datasets {

TensorDataset::TensorDataset(const std::vector<Tensor>& tensors)
    : TensorDataset(stack(tensors, 0)) {}

TensorDataset::TensorDataset(Tensor t) : tensor(std::move(t)) {
  MG_CHECK(tensor.defined(), "TensorDataset", "the tensor is undefined");
  MG_CHECK(tensor.dim() >= 1, "TensorDataset",
           "the tensor is a scalar (0-d); it needs a first dim that indexes the examples");
}

TensorExample TensorDataset::get(std::size_t index) {
  const auto n = static_cast<std::size_t>(tensor.size(0));
  MG_CHECK(index < n, "TensorDataset", "index ", index, " is out of range for ", n, " examples");
  return tensor.select(0, static_cast<std::int64_t>(index));
}

std::optional<std::size_t> TensorDataset::size() const {
  return static_cast<std::size_t>(tensor.size(0));
}

}  // namespace datasets

// ---------------------------------------------------------------- transforms

namespace transforms::detail {

void check_normalize(const std::vector<double>& mean, const std::vector<double>& stddev) {
  MG_CHECK(!mean.empty() && mean.size() == stddev.size(), "Normalize",
           "mean and stddev need one value each, or one per channel (the same number), got ",
           mean.size(), " means and ", stddev.size(), " stddevs");
  for (std::size_t i = 0; i < stddev.size(); ++i)
    MG_CHECK(stddev[i] != 0.0, "Normalize", "stddev ", i, " is 0, leading to division by zero");
}

Tensor normalize_moments(const std::vector<double>& values) {
  return tensor(values, kFloat32).unsqueeze(1).unsqueeze(2);
}

}  // namespace transforms::detail

// ---------------------------------------------------------------- samplers

namespace samplers {
namespace {

std::optional<std::vector<std::size_t>> take(const std::vector<std::size_t>& order,
                                             std::size_t& index, std::size_t batch_size) {
  if (index >= order.size()) return std::nullopt;
  const std::size_t n = std::min(batch_size, order.size() - index);
  std::vector<std::size_t> out(order.begin() + static_cast<std::ptrdiff_t>(index),
                               order.begin() + static_cast<std::ptrdiff_t>(index + n));
  index += n;
  return out;
}

std::vector<std::size_t> to_indices(const Tensor& perm) {
  std::vector<std::size_t> out;
  for (std::int64_t v : perm.to_vector<std::int64_t>()) out.push_back(static_cast<std::size_t>(v));
  return out;
}

}  // namespace

void SequentialSampler::reset(std::optional<std::size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

std::optional<std::vector<std::size_t>> SequentialSampler::next(std::size_t batch_size) {
  if (index_ >= size_) return std::nullopt;
  const std::size_t n = std::min(batch_size, size_ - index_);
  std::vector<std::size_t> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = index_ + i;
  index_ += n;
  return out;
}

RandomSampler::RandomSampler(std::size_t size)
    : indices_(randperm(static_cast<std::int64_t>(size))) {}

std::optional<std::vector<std::size_t>> RandomSampler::take_permuted(std::size_t batch_size) {
  const auto n = static_cast<std::size_t>(indices_.numel());
  if (index_ >= n) return std::nullopt;
  const std::size_t count = std::min(batch_size, n - index_);
  const auto* p = indices_.data_ptr<std::int64_t>();
  std::vector<std::size_t> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::size_t>(p[index_ + i]);
  index_ += count;
  return out;
}

RandomSampler::RandomSampler(std::size_t size, RandomSamplerOptions options) {
  const std::size_t num_samples = options.num_samples().value_or(size);
  // PyTorch's messages (torch/utils/data/sampler.py).
  MG_CHECK(num_samples > 0, "RandomSampler",
           "num_samples should be a positive integer value, but got num_samples=", num_samples);
  MG_CHECK(size > 0, "RandomSampler", "cannot sample from an empty dataset (size 0)");
  python_ = Python{size, num_samples, std::move(options), default_generator(), {}, 0, 0, 0, false};
}

void RandomSampler::start_python_epoch() {
  Python& p = *python_;
  if (p.options.generator()) {
    p.generator = *p.options.generator();
  } else {
    Tensor seed = zeros({}, kInt64);
    seed.random_();
    p.generator = Generator();
    p.generator.manual_seed(static_cast<std::uint64_t>(seed.item<std::int64_t>()));
  }
  p.drawn.clear();
  p.used = p.taken = p.chunks = 0;
  p.started = true;
}

// The next draw of PyTorch's RandomSampler.__iter__: with replacement, num_samples / 32 draws of
// randint(size, {32}) then one of num_samples % 32; without, num_samples / size draws of
// randperm(size) then one more cut to num_samples % size.
void RandomSampler::draw_python() {
  Python& p = *python_;
  const auto n = static_cast<std::int64_t>(p.size);
  if (p.options.replacement()) {
    const std::size_t full = p.num_samples / 32;
    const std::size_t count = p.chunks < full ? 32 : p.num_samples % 32;
    p.drawn = to_indices(randint(0, n, {static_cast<std::int64_t>(count)}, p.generator));
  } else {
    const std::size_t full = p.num_samples / p.size;
    p.drawn = to_indices(randperm(n, p.generator));
    if (p.chunks >= full) p.drawn.resize(p.num_samples % p.size);
  }
  p.used = 0;
  ++p.chunks;
}

void RandomSampler::reset(std::optional<std::size_t> new_size) {
  if (python_) {
    if (new_size) {
      MG_CHECK(*new_size > 0, "RandomSampler", "cannot sample from an empty dataset (size 0)");
      if (!python_->options.num_samples()) python_->num_samples = *new_size;
      python_->size = *new_size;
    }
    start_python_epoch();
    return;
  }
  const auto n = new_size ? static_cast<std::int64_t>(*new_size) : indices_.numel();
  indices_ = randperm(n);
  index_ = 0;
}

std::optional<std::vector<std::size_t>> RandomSampler::next(std::size_t batch_size) {
  if (python_) {
    if (!python_->started) start_python_epoch();
    Python& p = *python_;
    std::vector<std::size_t> out;
    while (out.size() < batch_size && p.taken < p.num_samples) {
      if (p.used == p.drawn.size()) draw_python();
      const std::size_t k = std::min(batch_size - out.size(), p.drawn.size() - p.used);
      out.insert(out.end(), p.drawn.begin() + static_cast<std::ptrdiff_t>(p.used),
                 p.drawn.begin() + static_cast<std::ptrdiff_t>(p.used + k));
      p.used += k;
      p.taken += k;
    }
    // PyTorch's loop ends with a last draw (num_samples % 32 or % size of it kept, maybe none),
    // made when its generator is asked past the last full draw: here too, so that the generator
    // ends the epoch where PyTorch's does.
    const std::size_t full = p.num_samples / (p.options.replacement() ? 32 : p.size);
    if (p.taken == p.num_samples && out.size() < batch_size && p.chunks == full) draw_python();
    if (out.empty()) return std::nullopt;
    return out;
  }
  return take_permuted(batch_size);
}

void TorchRandomSampler::reset(std::optional<std::size_t> new_size) {
  if (new_size) size_ = *new_size;
  const auto n = static_cast<std::int64_t>(size_);
  if (generator_) {
    Generator g = *generator_;
    order_ = to_indices(randperm(n, g));
    // PyTorch's __iter__ ends with randperm(n, generator)[:num_samples % n], an empty slice that
    // still draws: drawn here so that the generator ends the epoch where PyTorch's does.
    randperm(n, g);
  } else {
    Tensor seed = zeros({}, kInt64);
    seed.random_();
    Generator g;
    g.manual_seed(static_cast<std::uint64_t>(seed.item<std::int64_t>()));
    order_ = to_indices(randperm(n, g));
  }
  index_ = 0;
}

std::optional<std::vector<std::size_t>> TorchRandomSampler::next(std::size_t batch_size) {
  return take(order_, index_, batch_size);
}

}  // namespace samplers

// ---------------------------------------------------------------- DataLoader

namespace {
std::string worker_message(const std::exception_ptr& original) {
  std::string message = "Caught exception in DataLoader worker thread.";
  try {
    std::rethrow_exception(original);
  } catch (const std::exception& e) {
    message += " Original message: ";
    message += e.what();
  } catch (...) {
    message += " (not a std::exception)";
  }
  return message;
}
}  // namespace

WorkerException::WorkerException(std::exception_ptr original)
    : Error(worker_message(original)), original_exception(std::move(original)), message(what()) {}

namespace detail {

std::size_t sized(std::optional<std::size_t> size) {
  MG_CHECK(size.has_value(), "DataLoader",
           "the dataset's size() is unknown (nullopt), so no sampler can index it");
  return *size;
}

void check_options(const DataLoaderOptions& options) {
  MG_CHECK(options.batch_size() > 0, "DataLoader", "batch_size must be positive, got ",
           options.batch_size());
}

void throw_timeout(std::chrono::milliseconds timeout) {
  throw Error(
      "[DataLoader] Timeout in DataLoader queue while waiting for next batch (timeout was " +
      std::to_string(timeout.count()) + " ms)");
}

void draw_base_seed(const std::optional<Generator>& generator) {
  Tensor seed = zeros({}, kInt64);
  if (generator) {
    Generator g = *generator;
    seed.random_(g);
  } else {
    seed.random_();
  }
}

}  // namespace detail
}  // namespace minigrad::data
