// minigrad::data: saving and loading samplers, StreamSampler, libtorch's distributed samplers and
// ChunkDataset's options.
#include <algorithm>
#include <istream>
#include <numeric>
#include <ostream>
#include <random>
#include <string>

#include "minigrad/data.h"
#include "minigrad/ops/creation.h"

namespace minigrad::data {

namespace datasets::detail {
void stateful_not_serializable(const char* what, const char* overload) {
  throw Error(std::string("[StatefulDataset] this dataset cannot ") + what +
              " its state: it does not override " + overload);
}
void check_chunk_options(std::size_t preloader_count, std::size_t batch_size,
                         std::size_t cache_size, std::size_t cross_chunk_shuffle_count) {
  // libtorch's messages (torch/data/datasets/chunk.h).
  MG_CHECK(preloader_count > 0, "ChunkDatasetOptions",
           "Preloader count is 0. At least one preloader needs to be specified.");
  MG_CHECK(batch_size > 0, "ChunkDatasetOptions",
           "Batch size is 0. A positive batch size needs to be specified.");
  MG_CHECK(cache_size > 0, "ChunkDatasetOptions",
           "Cache size is 0. A positive cache size needs to be specified.");
  MG_CHECK(cache_size >= batch_size, "ChunkDatasetOptions",
           "Cache size is less than batch size. Cache needs to be large enough to hold at least "
           "one batch.");
  MG_CHECK(cross_chunk_shuffle_count > 0, "ChunkDatasetOptions",
           "cross_chunk_shuffle_count needs to be greater than 0.");
}
}  // namespace datasets::detail

namespace samplers {

// ---------------------------------------------------------------- the saved state

namespace detail {

void write_state(std::ostream& stream, const char* kind, const std::vector<std::size_t>& values) {
  stream << "minigrad.sampler " << kind << ' ' << values.size();
  for (std::size_t v : values) stream << ' ' << v;
  stream << '\n';
  MG_CHECK(stream.good(), kind, "could not write the sampler's state to the stream");
}

std::vector<std::size_t> read_state(std::istream& stream, const char* kind) {
  std::string magic, saved_kind;
  std::size_t count = 0;
  stream >> magic >> saved_kind >> count;
  MG_CHECK(stream.good() && magic == "minigrad.sampler", kind,
           "the stream holds no saved sampler (expected what save() writes)");
  MG_CHECK(saved_kind == kind, kind, "the stream holds a saved ", saved_kind, ", not a ", kind);
  MG_CHECK(count <= (std::size_t{1} << 32), kind, "malformed saved state: ", count, " values");
  std::vector<std::size_t> values(count);
  for (std::size_t& v : values) stream >> v;
  MG_CHECK(!stream.fail(), kind, "malformed saved state: fewer than ", count, " values");
  return values;
}

// One integer under key, as libtorch writes it (torch::tensor(int64_t), is_buffer).
void write_count(serialize::OutputArchive& archive, const char* key, std::size_t value) {
  archive.write(key, scalar_tensor(static_cast<double>(value), kInt64), /*is_buffer=*/true);
}

// The integers of the tensor under key (one if `one`), each >= 0.
std::vector<std::size_t> read_counts(serialize::InputArchive& archive, const char* key,
                                     const char* kind, bool one) {
  Tensor t;
  archive.read(key, t, /*is_buffer=*/true);
  MG_CHECK(!t.is_floating_point() && t.dtype() != kBool && (!one || t.numel() == 1), kind,
           "the archive's \"", key, "\" must be ", one ? "one integer" : "integers", ", got shape ",
           t.shape(), " ", dtype_name(t.dtype()));
  std::vector<std::size_t> out;
  for (std::int64_t v : t.to(kInt64).contiguous().to_vector<std::int64_t>()) {
    MG_CHECK(v >= 0, kind, "the archive's \"", key, "\" holds ", v, ", which is negative");
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

std::size_t read_count(serialize::InputArchive& archive, const char* key, const char* kind) {
  return read_counts(archive, key, kind, /*one=*/true)[0];
}

}  // namespace detail

void Sampler::save(serialize::OutputArchive& /*archive*/) const {
  throw Error(
      "[Sampler] this sampler cannot be saved: it does not override "
      "save(serialize::OutputArchive&)");
}

void Sampler::load(serialize::InputArchive& /*archive*/) {
  throw Error(
      "[Sampler] this sampler cannot be loaded: it does not override "
      "load(serialize::InputArchive&)");
}

void Sampler::save(std::ostream& /*stream*/) const {
  throw Error("[Sampler] this sampler cannot be saved: it does not override save(std::ostream&)");
}

void Sampler::load(std::istream& /*stream*/) {
  throw Error("[Sampler] this sampler cannot be loaded: it does not override load(std::istream&)");
}

void SequentialSampler::save(std::ostream& stream) const {
  detail::write_state(stream, "SequentialSampler", {index_});
}

void SequentialSampler::load(std::istream& stream) {
  restore(detail::read_state(stream, "SequentialSampler"));
}

void SequentialSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "index", index_);
}

void SequentialSampler::load(serialize::InputArchive& archive) {
  restore({detail::read_count(archive, "index", "SequentialSampler")});
}

void SequentialSampler::restore(const std::vector<std::size_t>& v) {
  MG_CHECK(v.size() == 1 && v[0] <= size_, "SequentialSampler", "the saved index ",
           v.empty() ? 0 : v[0], " does not fit a sampler of ", size_, " indices");
  index_ = v[0];
}

void RandomSampler::save(std::ostream& stream) const {
  MG_CHECK(!python_, "RandomSampler",
           "a RandomSampler made with RandomSamplerOptions (Python's) cannot be saved");
  std::vector<std::size_t> v{index_};
  const auto* p = indices_.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < indices_.numel(); ++i) v.push_back(static_cast<std::size_t>(p[i]));
  detail::write_state(stream, "RandomSampler", v);
}

void RandomSampler::load(std::istream& stream) {
  MG_CHECK(!python_, "RandomSampler",
           "a RandomSampler made with RandomSamplerOptions (Python's) cannot be loaded");
  restore(detail::read_state(stream, "RandomSampler"));
}

void RandomSampler::save(serialize::OutputArchive& archive) const {
  MG_CHECK(!python_, "RandomSampler",
           "a RandomSampler made with RandomSamplerOptions (Python's) cannot be saved");
  detail::write_count(archive, "index", index_);
  archive.write("indices", indices_, /*is_buffer=*/true);
}

void RandomSampler::load(serialize::InputArchive& archive) {
  MG_CHECK(!python_, "RandomSampler",
           "a RandomSampler made with RandomSamplerOptions (Python's) cannot be loaded");
  std::vector<std::size_t> v{detail::read_count(archive, "index", "RandomSampler")};
  const auto indices = detail::read_counts(archive, "indices", "RandomSampler", /*one=*/false);
  v.insert(v.end(), indices.begin(), indices.end());
  restore(v);
}

void RandomSampler::restore(const std::vector<std::size_t>& v) {
  MG_CHECK(!v.empty() && v[0] <= v.size() - 1, "RandomSampler",
           "malformed saved state: index past the saved permutation");
  std::vector<std::int64_t> perm;
  perm.reserve(v.size() - 1);
  for (std::size_t i = 1; i < v.size(); ++i) perm.push_back(static_cast<std::int64_t>(v[i]));
  indices_ = tensor(perm, kInt64);
  index_ = v[0];
}

// ---------------------------------------------------------------- StreamSampler

void StreamSampler::reset(std::optional<std::size_t> new_size) {
  if (new_size) epoch_size_ = *new_size;
  examples_retrieved_so_far_ = 0;
}

std::optional<BatchSize> StreamSampler::next(std::size_t batch_size) {
  if (examples_retrieved_so_far_ >= epoch_size_) return std::nullopt;
  const std::size_t n = std::min(batch_size, epoch_size_ - examples_retrieved_so_far_);
  examples_retrieved_so_far_ += n;
  return BatchSize(n);
}

void StreamSampler::save(std::ostream& stream) const {
  detail::write_state(stream, "StreamSampler", {examples_retrieved_so_far_});
}

void StreamSampler::load(std::istream& stream) {
  restore(detail::read_state(stream, "StreamSampler"));
}

void StreamSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "examples_retrieved_so_far", examples_retrieved_so_far_);
}

void StreamSampler::load(serialize::InputArchive& archive) {
  restore({detail::read_count(archive, "examples_retrieved_so_far", "StreamSampler")});
}

void StreamSampler::restore(const std::vector<std::size_t>& v) {
  MG_CHECK(v.size() == 1, "StreamSampler", "malformed saved state");
  examples_retrieved_so_far_ = v[0];
}

// ---------------------------------------------------------------- distributed samplers

DistributedSamplerBase::DistributedSamplerBase(std::size_t size, std::size_t num_replicas,
                                               std::size_t rank, bool allow_duplicates)
    : size_(size), num_replicas_(num_replicas), rank_(rank), allow_duplicates_(allow_duplicates) {
  MG_CHECK(num_replicas > 0, "DistributedSampler", "num_replicas must be positive, got 0");
  MG_CHECK(rank < num_replicas, "DistributedSampler", "rank ", rank,
           " is out of range for num_replicas ", num_replicas, " (expected 0 <= rank < ",
           num_replicas, ")");
}

std::size_t DistributedSamplerBase::local_sample_count() const {
  return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
}

DistributedRandomSampler::DistributedRandomSampler(std::size_t size, std::size_t num_replicas,
                                                   std::size_t rank, bool allow_duplicates)
    : DistributedSamplerBase(size, num_replicas, rank, allow_duplicates) {
  DistributedRandomSampler::reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  const std::size_t local = local_sample_count();
  const std::size_t count = num_replicas_ == 1 ? size_ : local * num_replicas_;
  all_indices_.resize(count);
  std::iota(all_indices_.begin(), all_indices_.end(), std::size_t{0});
  for (std::size_t i = size_; i < count; ++i) all_indices_[i] = i - size_;  // the padding
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(std::optional<std::size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  // libtorch's shuffle: the same generator and algorithm (libstdc++'s std::shuffle), so the
  // same order as a libtorch program built with the same standard library.
  std::mt19937 rand(static_cast<std::mt19937::result_type>(epoch_));
  std::shuffle(all_indices_.begin(), all_indices_.end(), rand);
  sample_index_ = begin_index_;
}

std::optional<std::vector<std::size_t>> DistributedRandomSampler::next(std::size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const std::size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<std::size_t> out(all_indices_.begin() + static_cast<std::ptrdiff_t>(sample_index_),
                               all_indices_.begin() + static_cast<std::ptrdiff_t>(end));
  sample_index_ = end;
  return out;
}

void DistributedRandomSampler::save(std::ostream& stream) const {
  detail::write_state(stream, "DistributedRandomSampler", {epoch_, sample_index_});
}

void DistributedRandomSampler::load(std::istream& stream) {
  restore(detail::read_state(stream, "DistributedRandomSampler"));
}

void DistributedRandomSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "sample_index_", sample_index_);
  detail::write_count(archive, "epoch_", epoch_);
}

// As libtorch's: the epoch first (reset() reshuffles with it), then the position.
void DistributedRandomSampler::load(serialize::InputArchive& archive) {
  const std::size_t epoch = detail::read_count(archive, "epoch_", "DistributedRandomSampler");
  restore({epoch, detail::read_count(archive, "sample_index_", "DistributedRandomSampler")});
}

void DistributedRandomSampler::restore(const std::vector<std::size_t>& v) {
  MG_CHECK(v.size() == 2, "DistributedRandomSampler", "malformed saved state");
  epoch_ = v[0];
  reset(size_);
  MG_CHECK(v[1] >= begin_index_ && v[1] <= end_index_, "DistributedRandomSampler",
           "the saved index ", v[1], " is outside this replica's share [", begin_index_, ", ",
           end_index_, "]");
  sample_index_ = v[1];
}

DistributedSequentialSampler::DistributedSequentialSampler(std::size_t size,
                                                           std::size_t num_replicas,
                                                           std::size_t rank, bool allow_duplicates)
    : DistributedSamplerBase(size, num_replicas, rank, allow_duplicates) {
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(std::optional<std::size_t> new_size) {
  const std::size_t size = new_size.value_or(size_);
  if (size != size_) {
    size_ = size;
    populate_indices();
  } else {
    sample_index_ = begin_index_;
  }
}

std::optional<std::vector<std::size_t>> DistributedSequentialSampler::next(std::size_t batch_size) {
  if (sample_index_ == end_index_) return std::nullopt;
  const std::size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<std::size_t> out(end - sample_index_);
  std::iota(out.begin(), out.end(), sample_index_);
  if (end >= size_)
    for (std::size_t& i : out) i %= size_;
  sample_index_ = end;
  return out;
}

void DistributedSequentialSampler::save(std::ostream& stream) const {
  detail::write_state(stream, "DistributedSequentialSampler", {sample_index_});
}

void DistributedSequentialSampler::load(std::istream& stream) {
  restore(detail::read_state(stream, "DistributedSequentialSampler"));
}

void DistributedSequentialSampler::save(serialize::OutputArchive& archive) const {
  detail::write_count(archive, "sample_index_", sample_index_);
}

void DistributedSequentialSampler::load(serialize::InputArchive& archive) {
  restore({detail::read_count(archive, "sample_index_", "DistributedSequentialSampler")});
}

void DistributedSequentialSampler::restore(const std::vector<std::size_t>& v) {
  MG_CHECK(v.size() == 1 && v[0] >= begin_index_ && v[0] <= end_index_,
           "DistributedSequentialSampler", "the saved index is outside this replica's share [",
           begin_index_, ", ", end_index_, "]");
  sample_index_ = v[0];
}

}  // namespace samplers
}  // namespace minigrad::data
