// Reading with known sizes, atomic writing (temporary file, fsync, rename), raw tensor data.
#include "io/file_io.h"

#include <fcntl.h>
#include <signal.h>
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
  // O_NONBLOCK: opening a FIFO nobody writes (or a device) must not block before the check that
  // refuses anything but a regular file; a regular file's reads ignore the flag, but it is
  // cleared all the same.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  MG_CHECK(fd_ >= 0, op_, path_, ": cannot open for reading: ", errno_text());
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    MG_ERROR(op_, path_, ": not a regular file");
  }
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::InputFile(const char* op, std::string name, std::string bytes)
    : path_(std::move(name)), op_(op), size_(bytes.size()), memory_(std::move(bytes)) {}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read(std::uint64_t offset, void* out, std::uint64_t n) const {
  if (fd_ < 0) {
    MG_CHECK(offset <= size_ && n <= size_ - offset, op_, path_,
             ": file is truncated (it ended at byte ", size_, ", a read wanted ", n, " bytes at ",
             offset, ")");
    if (n) std::memcpy(out, memory_.data() + offset, n);
    return;
  }
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

// Note [Temporary files of a save]
// A save writes a temporary file in the target's directory and renames it over the target. Its
// name is short whatever the target's length (a target of up to NAME_MAX bytes saves, as
// torch.save's): ".mg-<16 hex of the target's name>-<pid>-<16 hex>.tmp". A save killed with
// kill -9 leaves its temporary behind; the next save of the same target removes those of its
// target whose process is gone (never a live process's, which may be saving right now).
namespace {
constexpr const char* kTmpPrefix = ".mg-";
constexpr const char* kTmpSuffix = ".tmp";

std::string name_hash(const std::string& name) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/// Removes the temporaries of earlier saves of the target `base` (in dir) whose process is gone.
void remove_stale_temporaries(const std::filesystem::path& dir, const std::string& base) {
  const std::string prefix = kTmpPrefix + name_hash(base) + "-";
  std::error_code ec;
  std::filesystem::directory_iterator it(dir.empty() ? "." : dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || name.size() < prefix.size() + 4 ||
        name.compare(name.size() - 4, 4, kTmpSuffix) != 0)
      continue;
    const std::size_t dash = name.find('-', prefix.size());
    if (dash == std::string::npos) continue;
    const std::string digits = name.substr(prefix.size(), dash - prefix.size());
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    std::filesystem::remove(it->path(), ignored);
  }
}
}  // namespace

AtomicOutputFile::AtomicOutputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  MG_CHECK(!path.empty(), op_, "the path is empty");
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.parent_path();
  const std::string base = target.filename().string();
  MG_CHECK(!base.empty(), op_, path_, ": the path names a directory, not a file");
  remove_stale_temporaries(dir, base);
  // A new file of a name no other save uses, in the target's directory (rename stays on one file
  // system). O_EXCL | O_NOFOLLOW: never an existing file, nor the target of a symlink planted at
  // the name; such a name is skipped. Mode 0644 less the umask, as open(2) creates files.
  const std::string stem = kTmpPrefix + name_hash(base) + "-" + std::to_string(::getpid()) + "-";
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_path_ = (dir / (stem + unique_suffix() + kTmpSuffix)).string();
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

// scan_json: see file_io.h.
JsonScan scan_json(const std::string& text) {
  JsonScan out;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      out.depth = std::max(out.depth, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ':' && depth == 1) {
      ++out.members;
    }
  }
  return out;
}

}  // namespace minigrad::detail
