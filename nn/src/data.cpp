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

void RandomSampler::reset(std::optional<std::size_t> new_size) {
  const auto n = new_size ? static_cast<std::int64_t>(*new_size) : indices_.numel();
  indices_ = randperm(n);
  index_ = 0;
}

std::optional<std::vector<std::size_t>> RandomSampler::next(std::size_t batch_size) {
  const auto n = static_cast<std::size_t>(indices_.numel());
  if (index_ >= n) return std::nullopt;
  const std::size_t count = std::min(batch_size, n - index_);
  const auto* p = indices_.data_ptr<std::int64_t>();
  std::vector<std::size_t> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::size_t>(p[index_ + i]);
  index_ += count;
  return out;
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
