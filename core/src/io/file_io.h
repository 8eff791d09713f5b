#pragma once
// Private: the file plumbing shared by the safetensors and .npy readers and writers.
#include <cstdint>
#include <string>

#include "minigrad/tensor.h"

namespace minigrad::detail {

/// A file opened for reading whose size is known up front, so every length read from it can be
/// checked against that size before anything is allocated. Errors name `op` and the path.
class InputFile {
 public:
  InputFile(const std::string& path, const char* op);
  /// Bytes already in memory (a stream's, read by serialize::InputArchive::load_from), checked
  /// as a file's; `name` stands for the path in errors ("<stream>").
  InputFile(const char* op, std::string name, std::string bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::uint64_t size() const { return size_; }
  /// Reads exactly n bytes at offset; throws "... file is truncated" if the file is shorter.
  void read(std::uint64_t offset, void* out, std::uint64_t n) const;

 private:
  std::string path_;
  const char* op_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string memory_;  // the bytes when fd_ is -1
};

/// A file written atomically: the bytes go to a new temporary file `path.tmp.<pid>.<16 hex
/// digits>` (created with O_EXCL | O_NOFOLLOW, a name no other save, thread or process, uses),
/// commit() flushes it with fsync, renames it over path and fsyncs the directory. Destroyed
/// without commit() (an error), it removes the temporary file and leaves path untouched.
class AtomicOutputFile {
 public:
  AtomicOutputFile(const std::string& path, const char* op);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  void write(const void* data, std::uint64_t n);
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what);
  std::string path_;
  std::string tmp_path_;
  const char* op_;
  int fd_ = -1;
};

/// Writes the elements of t (any strides) in C order as raw little-endian bytes.
void write_tensor_data(AtomicOutputFile& file, const Tensor& t);
/// A new contiguous tensor of shape and dtype filled with n bytes read at offset; bool bytes must
/// be 0 or 1 (`what` names the tensor in that error).
Tensor read_tensor_data(const InputFile& file, std::uint64_t offset, const Shape& shape,
                        Dtype dtype, const std::string& what, const std::string& path,
                        const char* op);
/// numel(shape) * element_size(dtype) in bytes, or false on overflow (the shape is from a file).
bool checked_nbytes(const Shape& shape, Dtype dtype, std::uint64_t& nbytes);

/// What a scan of JSON text from a file finds before it is parsed (nlohmann's recursive dump()
/// and destructor must never see deeper nesting than a reader allows): the deepest nesting of
/// arrays and objects, and the number of members of the top-level object (its ':' at depth 1),
/// brackets and colons inside strings not counted. Exact for valid JSON; for invalid JSON, bounds
/// on what the parser reaches before it fails. Used by the safetensors header and the optimizer
/// metadata (Note [Bounded optimizer metadata]).
struct JsonScan {
  int depth = 0;
  std::size_t members = 0;
};
JsonScan scan_json(const std::string& text);

}  // namespace minigrad::detail
