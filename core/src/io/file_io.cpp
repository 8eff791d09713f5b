// Reading with known sizes, atomic writing (temporary file, fsync, rename), raw tensor data.
#include "io/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "tensor_impl.h"

namespace minigrad::detail {

static_assert(std::endian::native == std::endian::little,
              "minigrad's file formats store little-endian data and assume a little-endian host");

namespace {
std::string errno_text() { return std::strerror(errno); }

// 16 hex digits that differ between the saves of a process (threads included) and between
// processes: a counter mixed with a random seed (splitmix64), like mkstemp's random letters.
std::string unique_suffix() {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t seed = [] {
    std::random_device rd;
    return (std::uint64_t{rd()} << 32) ^ rd() ^
           static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  std::uint64_t x = seed + 0x9e3779b97f4a7c15ULL * (counter.fetch_add(1) + 1);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}
}  // namespace

InputFile::InputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  MG_CHECK(fd_ >= 0, op_, path_, ": cannot open for reading: ", errno_text());
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    MG_ERROR(op_, path_, ": not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read(std::uint64_t offset, void* out, std::uint64_t n) const {
  auto* dst = static_cast<char*>(out);
  while (n > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n, 1u << 30));
    const ssize_t got = ::pread(fd_, dst, chunk, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    MG_CHECK(got >= 0, op_, path_, ": read error: ", errno_text());
    MG_CHECK(got > 0, op_, path_, ": file is truncated (it ended at byte ", offset, " of ", size_,
             " while reading)");
    dst += got;
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::uint64_t>(got);
  }
}

AtomicOutputFile::AtomicOutputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  MG_CHECK(!path.empty(), op_, "the path is empty");
  // A new file of a name no other save uses, in the target's directory (rename stays on one file
  // system). O_EXCL | O_NOFOLLOW: never an existing file, nor the target of a symlink planted at
  // the name; such a name is skipped. Mode 0644 less the umask, as open(2) creates files.
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_path_ = path + ".tmp." + std::to_string(::getpid()) + "." + unique_suffix();
    fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  MG_CHECK(fd_ >= 0, op_, path_, ": cannot create ", tmp_path_, ": ", errno_text());
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

void AtomicOutputFile::fail(const std::string& what) {
  const std::string reason = errno_text();
  ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_path_.c_str());
  MG_ERROR(op_, path_, ": ", what, ": ", reason);
}

void AtomicOutputFile::write(const void* data, std::uint64_t n) {
  MG_CHECK(fd_ >= 0, op_, path_, ": file already closed");
  const auto* src = static_cast<const char*>(data);
  while (n > 0) {
    const std::size_t chunk = static_cast<std::size_t>(std::min<std::uint64_t>(n, 1u << 30));
    const ssize_t put = ::write(fd_, src, chunk);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) fail("write error");
    src += put;
    n -= static_cast<std::uint64_t>(put);
  }
}

void AtomicOutputFile::commit() {
  MG_CHECK(fd_ >= 0, op_, path_, ": file already closed");
  if (::fsync(fd_) != 0) fail("fsync failed");
  if (::close(fd_) != 0) {
    fd_ = -1;
    const std::string reason = errno_text();
    ::unlink(tmp_path_.c_str());
    MG_ERROR(op_, path_, ": close failed: ", reason);
  }
  fd_ = -1;
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string reason = errno_text();
    ::unlink(tmp_path_.c_str());
    MG_ERROR(op_, path_, ": cannot rename ", tmp_path_, " to it: ", reason);
  }
  // Make the rename itself durable; a failure here leaves a complete file, so it is not an error.
  std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

bool checked_nbytes(const Shape& shape, Dtype dtype, std::uint64_t& nbytes) {
  std::uint64_t n = element_size(dtype);
  for (std::int64_t s : shape) {
    if (s < 0 || __builtin_mul_overflow(n, static_cast<std::uint64_t>(s), &n)) return false;
  }
  // Tensors count elements in int64_t.
  if (n > (std::uint64_t{1} << 62)) return false;
  nbytes = n;
  return true;
}

void write_tensor_data(AtomicOutputFile& file, const Tensor& t) {
  const Tensor c = t.detach().contiguous();
  file.write(c.impl()->bytes(), static_cast<std::uint64_t>(c.numel()) *
                                    static_cast<std::uint64_t>(element_size(c.dtype())));
}

Tensor read_tensor_data(const InputFile& file, std::uint64_t offset, const Shape& shape,
                        Dtype dtype, const std::string& what, const std::string& path,
                        const char* op) {
  std::uint64_t nbytes = 0;
  MG_CHECK(checked_nbytes(shape, dtype, nbytes), op, path, ": ", what, ": shape ", shape,
           " is too large");
  Tensor t = make_tensor(shape, dtype);
  if (nbytes == 0) return t;
  if (dtype != kBool) {
    file.read(offset, t.impl()->bytes(), nbytes);
    return t;
  }
  // A bool byte other than 0 or 1 would be undefined behaviour to read as bool: read raw bytes.
  std::vector<unsigned char> raw(nbytes);
  file.read(offset, raw.data(), nbytes);
  bool* out = t.impl()->data<bool>();
  for (std::uint64_t i = 0; i < nbytes; ++i) {
    MG_CHECK(raw[i] <= 1, op, path, ": ", what, ": bool element ", i, " has the byte ",
             static_cast<int>(raw[i]), " (must be 0 or 1)");
    out[i] = raw[i] == 1;
  }
  return t;
}

}  // namespace minigrad::detail
