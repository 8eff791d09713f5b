// PyTorch's own checkpoint format (what torch.save writes since 1.6), for state_dicts and
// optimizer state_dicts. A zip archive of stored (uncompressed) entries, all under one directory
// <name>/ (the file's stem when torch writes it; minigrad writes "archive"):
//   <name>/data.pkl     a protocol 2 pickle of the state_dict: an OrderedDict of tensors, each
//                       torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
//                       requires_grad, backward_hooks) whose storage is a persistent id
//                       ('storage', torch.FloatStorage, '<key>', 'cpu', numel)
//   <name>/data/<key>   each storage's raw little-endian bytes, 64-byte aligned in the file
//   <name>/version      "3\n"
// Note [Reading torch.save files]
// A .pt file is untrusted input, and Python's pickle is a program. The reader here is not an
// interpreter of that program: it knows the opcodes torch.save's pickles use (protocol 2) and
// the globals a state_dict needs (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter, torch.{Float,Double,Long,Bool}Storage), builds plain values from them and
// refuses everything else by name. Every count is bounded (zip entries, pickle bytes, objects,
// memo entries, nesting, dims), every zip offset and size is checked against the file and the
// central directory, every record's CRC-32 is verified, and every view's extent is checked
// against its storage before anything is read. The zip code is small and hand-written on
// purpose: torch.save writes only stored entries, and the checks a hostile checkpoint needs
// (local header against central directory, alignment-padding extras, zip64 fields, overlap) are
// the reader's own either way (docs/architecture.md, "Dependencies").
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "io/archive_format.h"
#include "io/file_io.h"
#include "minigrad/io.h"
#include "tensor_impl.h"

namespace minigrad {
namespace {

constexpr const char* kSave = "save_torch";
constexpr const char* kLoad = "load_torch";

// Limits (each a clear error, not a crash or an exhausted machine).
constexpr std::uint64_t kMaxEntries = 1'000'000;   // zip entries (safetensors' tensor limit)
constexpr std::uint64_t kMaxPickle = 100'000'000;  // data.pkl bytes (safetensors' header limit)
// Values the pickle may build (about 20 per tensor; each under 200 bytes, so at most a few
// hundred MB whatever the file says).
constexpr std::size_t kMaxObjects = 2'000'000;
// The tensors' bytes, at most this many times the file's: views of one storage may repeat it
// (tied weights, a few times), but not without bound.
constexpr std::uint64_t kMaxExpansion = 16;
constexpr int kMaxDepth = 32;                  // nesting of tuples, lists and dicts
constexpr std::size_t kMaxDims = 64;           // dims of a tensor (NumPy's)
constexpr std::size_t kMaxString = 1'000'000;  // bytes of one pickled string
constexpr std::uint64_t kAlign = 64;           // torch.save's record alignment

// ------------------------------------------------------------------------------------ CRC-32

std::uint32_t crc32(std::uint32_t crc, const unsigned char* p, std::uint64_t n) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::uint64_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// ------------------------------------------------------------------------ little-endian bytes

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::uint64_t get(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

// ---------------------------------------------------------------------------------- zip writer

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50,
                        kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr std::uint64_t k32 = 0xFFFFFFFFu;

// Stored entries, each 64-byte aligned as torch.save's (padding in an extra field "FB" filled
// with 'Z'), CRC and sizes in the local header; zip64 fields where a size, offset or count needs
// them.
class ZipWriter {
 public:
  explicit ZipWriter(detail::ByteSink sink) : sink_(std::move(sink)) {}

  void add(const std::string& name, const void* data, std::uint64_t n) {
    const std::uint32_t crc = crc32(0, static_cast<const unsigned char*>(data), n);
    const bool zip64 = n >= k32;
    std::string h;
    put(h, kLocalSig, 4);
    put(h, zip64 ? 45 : 20, 2);  // version needed
    put(h, 0, 2);                // flags
    put(h, 0, 2);                // method: stored
    put(h, 0, 4);                // time, date
    put(h, crc, 4);
    put(h, zip64 ? k32 : n, 4);
    put(h, zip64 ? k32 : n, 4);
    put(h, name.size(), 2);
    std::string extra;
    if (zip64) {
      put(extra, 0x0001, 2);
      put(extra, 16, 2);
      put(extra, n, 8);
      put(extra, n, 8);
    }
    const std::uint64_t before = pos_ + 30 + name.size() + extra.size() + 4;
    const std::uint64_t pad = (kAlign - before % kAlign) % kAlign;
    put(extra, 0x4246, 2);  // "FB"
    put(extra, pad, 2);
    extra.append(pad, 'Z');
    put(h, extra.size(), 2);
    entries_.push_back({name, pos_, n, crc});
    write(h.data(), h.size());
    write(name.data(), name.size());
    write(extra.data(), extra.size());
    write(data, n);
  }

  void finish() {
    const std::uint64_t cd_offset = pos_;
    for (const Entry& e : entries_) {
      const bool big_size = e.size >= k32, big_offset = e.offset >= k32;
      std::string extra;
      if (big_size || big_offset) {
        put(extra, 0x0001, 2);
        put(extra, (big_size ? 16 : 0) + (big_offset ? 8 : 0), 2);
        if (big_size) {
          put(extra, e.size, 8);
          put(extra, e.size, 8);
        }
        if (big_offset) put(extra, e.offset, 8);
      }
      std::string h;
      put(h, kCentralSig, 4);
      put(h, 45, 2);  // version made by
      put(h, extra.empty() ? 20 : 45, 2);
      put(h, 0, 2);
      put(h, 0, 2);
      put(h, 0, 4);
      put(h, e.crc, 4);
      put(h, big_size ? k32 : e.size, 4);
      put(h, big_size ? k32 : e.size, 4);
      put(h, e.name.size(), 2);
      put(h, extra.size(), 2);
      put(h, 0, 2);  // comment
      put(h, 0, 2);  // disk
      put(h, 0, 2);  // internal attributes
      put(h, 0, 4);  // external attributes
      put(h, big_offset ? k32 : e.offset, 4);
      write(h.data(), h.size());
      write(e.name.data(), e.name.size());
      write(extra.data(), extra.size());
    }
    const std::uint64_t cd_size = pos_ - cd_offset, count = entries_.size();
    const bool zip64 = cd_offset >= k32 || cd_size >= k32 || count >= 0xFFFF;
    std::string t;
    if (zip64) {
      const std::uint64_t end64 = pos_;
      put(t, kEnd64Sig, 4);
      put(t, 44, 8);
      put(t, 45, 2);
      put(t, 45, 2);
      put(t, 0, 4);
      put(t, 0, 4);
      put(t, count, 8);
      put(t, count, 8);
      put(t, cd_size, 8);
      put(t, cd_offset, 8);
      put(t, kLocator64Sig, 4);
      put(t, 0, 4);
      put(t, end64, 8);
      put(t, 1, 4);
    }
    put(t, kEndSig, 4);
    put(t, 0, 4);
    put(t, zip64 ? 0xFFFF : count, 2);
    put(t, zip64 ? 0xFFFF : count, 2);
    put(t, zip64 ? k32 : cd_size, 4);
    put(t, zip64 ? k32 : cd_offset, 4);
    put(t, 0, 2);
    write(t.data(), t.size());
  }

 private:
  struct Entry {
    std::string name;
    std::uint64_t offset, size;
    std::uint32_t crc;
  };
  void write(const void* p, std::uint64_t n) {
    sink_(p, n);
    pos_ += n;
  }
  detail::ByteSink sink_;
  std::uint64_t pos_ = 0;
  std::vector<Entry> entries_;
};

// ---------------------------------------------------------------------------------- zip reader

struct Record {
  std::uint64_t local = 0;  // the local header's offset
  std::uint64_t data = 0;   // the data's offset
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
};

class ZipReader {
 public:
  ZipReader(const detail::InputFile& file, const std::string& path) : file_(file), path_(path) {
    const std::uint64_t size = file.size();
    MG_CHECK(size >= 22, kLoad, path_, ": file has ", size,
             " bytes, too short for a zip archive (torch.save's format)");
    // The end of central directory record: in the last 22 + 65535 (comment) bytes.
    const std::uint64_t tail_size = std::min<std::uint64_t>(size, 22 + 0xFFFF);
    std::vector<unsigned char> tail(tail_size);
    file.read(size - tail_size, tail.data(), tail_size);
    std::uint64_t end = std::numeric_limits<std::uint64_t>::max();
    for (std::uint64_t i = tail_size - 22 + 1; i-- > 0;) {
      if (get(&tail[i], 4) == kEndSig && i + 22 + get(&tail[i + 20], 2) == tail_size) {
        end = i;
        break;
      }
    }
    MG_CHECK(end != std::numeric_limits<std::uint64_t>::max(), kLoad, path_,
             ": not a zip archive (no end of central directory record; truncated, or not written "
             "by torch.save)");
    const unsigned char* e = &tail[end];
    const std::uint64_t end_pos = size - tail_size + end;
    std::uint64_t count = get(e + 10, 2), cd_size = get(e + 12, 4), cd_offset = get(e + 16, 4);
    MG_CHECK(get(e + 4, 2) == 0 && get(e + 6, 2) == 0 && get(e + 8, 2) == count, kLoad, path_,
             ": the zip archive spans several disks");
    std::uint64_t cd_limit = end_pos;  // the central directory ends before this
    if (end_pos >= 20) {
      unsigned char loc[20];
      file.read(end_pos - 20, loc, 20);
      if (get(loc, 4) == kLocator64Sig) {
        const std::uint64_t end64 = get(loc + 8, 8);
        MG_CHECK(end64 <= end_pos - 20 && end_pos - 20 - end64 >= 56, kLoad, path_,
                 ": zip64 end of central directory offset ", end64, " lies outside the file");
        unsigned char z[56];
        file.read(end64, z, 56);
        MG_CHECK(get(z, 4) == kEnd64Sig, kLoad, path_,
                 ": no zip64 end of central directory record at offset ", end64);
        count = get(z + 32, 8);
        cd_size = get(z + 40, 8);
        cd_offset = get(z + 48, 8);
        cd_limit = end64;
      }
    }
    MG_CHECK(count <= kMaxEntries, kLoad, path_, ": the zip archive lists ", count,
             " entries, more than the limit of ", kMaxEntries);
    MG_CHECK(cd_offset <= cd_limit && cd_size <= cd_limit - cd_offset, kLoad, path_,
             ": the zip central directory [", cd_offset, ", +", cd_size,
             ") lies outside the file (", size, " bytes; truncated?)");
    MG_CHECK(count * 46 <= cd_size, kLoad, path_, ": the zip central directory (", cd_size,
             " bytes) is too short for its ", count, " entries");
    std::vector<unsigned char> cd(cd_size);
    file.read(cd_offset, cd.data(), cd_size);

    std::uint64_t p = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
      MG_CHECK(cd_size - p >= 46 && get(&cd[p], 4) == kCentralSig, kLoad, path_,
               ": zip central directory entry ", i, " is corrupt");
      const unsigned char* c = &cd[p];
      const std::uint64_t flags = get(c + 8, 2), method = get(c + 10, 2);
      Record r;
      r.crc = static_cast<std::uint32_t>(get(c + 16, 4));
      std::uint64_t csize = get(c + 20, 4), usize = get(c + 24, 4);
      const std::uint64_t nlen = get(c + 28, 2), xlen = get(c + 30, 2), clen = get(c + 32, 2);
      r.local = get(c + 42, 4);
      MG_CHECK(cd_size - p - 46 >= nlen + xlen + clen, kLoad, path_,
               ": zip central directory entry ", i, " is corrupt");
      const std::string name(reinterpret_cast<const char*>(c + 46), nlen);
      // zip64 extra field: the saturated fields, in this order.
      for (std::uint64_t x = 0; x + 4 <= xlen;) {
        const unsigned char* f = c + 46 + nlen + x;
        const std::uint64_t id = get(f, 2), len = get(f + 2, 2);
        MG_CHECK(x + 4 + len <= xlen, kLoad, path_, ": zip entry \"", name,
                 "\" has a corrupt extra field");
        if (id == 0x0001) {
          std::uint64_t at = 4;
          for (std::uint64_t* v : {&usize, &csize, &r.local}) {
            if (*v != k32) continue;
            MG_CHECK(at + 8 <= 4 + len, kLoad, path_, ": zip entry \"", name,
                     "\" has a corrupt zip64 extra field");
            *v = get(f + at, 8);
            at += 8;
          }
        }
        x += 4 + len;
      }
      MG_CHECK((flags & 1) == 0, kLoad, path_, ": zip entry \"", name, "\" is encrypted");
      MG_CHECK(method == 0 && csize == usize, kLoad, path_, ": zip entry \"", name,
               "\" is compressed (method ", method,
               "); torch.save stores its entries uncompressed, and so must a checkpoint minigrad "
               "reads");
      r.size = usize;
      MG_CHECK(records_.emplace(name, r).second, kLoad, path_, ": zip entry \"", name,
               "\" appears twice");
      if (i == 0) first_ = name;
      p += 46 + nlen + xlen + clen;
    }
    // Each local header: inside the file, the same name as the central directory's, its data
    // before the central directory; and no two entries overlap.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    for (auto& [name, r] : records_) {
      MG_CHECK(r.local <= cd_offset && cd_offset - r.local >= 30, kLoad, path_, ": zip entry \"",
               name, "\": local header offset ", r.local, " lies outside the file's entries");
      unsigned char h[30];
      file.read(r.local, h, 30);
      const std::uint64_t nlen = get(h + 26, 2), xlen = get(h + 28, 2);
      std::string local_name(nlen, '\0');
      if (r.local + 30 + nlen <= cd_offset) file.read(r.local + 30, local_name.data(), nlen);
      MG_CHECK(get(h, 4) == kLocalSig && get(h + 8, 2) == 0 && local_name == name, kLoad, path_,
               ": zip entry \"", name, "\": the local header at offset ", r.local,
               " does not match the central directory");
      r.data = r.local + 30 + nlen + xlen;
      MG_CHECK(r.data <= cd_offset && r.size <= cd_offset - r.data, kLoad, path_, ": zip entry \"",
               name, "\": its ", r.size, " bytes at offset ", r.data,
               " run past the entries (into the central directory or beyond the end of the "
               "file)");
      spans.emplace_back(r.local, r.data + r.size);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i)
      MG_CHECK(spans[i].first >= spans[i - 1].second, kLoad, path_, ": zip entries at offsets ",
               spans[i - 1].first, " and ", spans[i].first, " overlap");
  }

  const std::string& first_name() const { return first_; }
  const Record* find(const std::string& name) const {
    auto it = records_.find(name);
    return it == records_.end() ? nullptr : &it->second;
  }
  /// Reads a record's bytes into out (r.size bytes) and checks its CRC-32.
  void read(const std::string& name, const Record& r, void* out) const {
    file_.read(r.data, out, r.size);
    const std::uint32_t got = crc32(0, static_cast<const unsigned char*>(out), r.size);
    MG_CHECK(got == r.crc, kLoad, path_, ": zip entry \"", name, "\" fails its CRC-32 check (",
             hex(got), " computed, ", hex(r.crc), " recorded): the file is corrupt");
  }

 private:
  static std::string hex(std::uint32_t v) {
    char buf[11];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
  }
  const detail::InputFile& file_;
  const std::string& path_;
  std::map<std::string, Record> records_;
  std::string first_;
};

// -------------------------------------------------------------------------------- pickle values

enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor };
enum class Callable { OrderedDict, RebuildTensor, RebuildParameter, Storage };

// A value the pickle builds. Values live in the Unpickler's arena and point at each other with
// raw pointers: a hostile pickle may make a list contain itself, and neither a cycle nor deep
// nesting may leak or recurse when the arena is freed.
struct Obj {
  Kind kind = Kind::None;
  int depth = 0;  // nesting of containers below (and including) this one
  bool ordered = false;
  std::int64_t i = 0;  // Int, Bool; Storage: numel; Tensor: storage offset
  double f = 0;
  std::string s;            // Str; Global: "module.name"; Storage: the record's key
  std::vector<Obj*> items;  // Tuple, List; Dict: key, value, key, value, ...
  Callable callable = Callable::OrderedDict;
  Dtype dtype = kFloat32;  // Global storage class; Storage
  Obj* storage = nullptr;  // Tensor
  Shape shape, strides;    // Tensor
};

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return "a bool";
    case Kind::Int:
      return "an int";
    case Kind::Float:
      return "a float";
    case Kind::Str:
      return "a str";
    case Kind::Tuple:
      return "a tuple";
    case Kind::List:
      return "a list";
    case Kind::Dict:
      return "a dict";
    case Kind::Global:
      return "a class or function";
    case Kind::Storage:
      return "a storage";
    case Kind::Tensor:
      return "a tensor";
  }
  return "?";
}

const char* storage_class(Dtype dtype) {
  switch (dtype) {
    case kFloat32:
      return "FloatStorage";
    case kFloat64:
      return "DoubleStorage";
    case kInt64:
      return "LongStorage";
    case kBool:
      return "BoolStorage";
  }
  return "?";
}

class Unpickler {
 public:
  Unpickler(const std::vector<unsigned char>& bytes, const std::string& path)
      : b_(bytes), path_(path) {}

  Obj* run();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    MG_ERROR(kLoad, path_, ": data.pkl: ", what, " (opcode at byte ", op_pos_, ")");
  }
  const unsigned char* take(std::size_t n) {
    if (b_.size() - pos_ < n) fail("the pickle is truncated");
    const unsigned char* p = &b_[pos_];
    pos_ += n;
    return p;
  }
  Obj* make(Kind kind) {
    if (arena_.size() >= kMaxObjects)
      fail("the pickle builds more than the limit of " + std::to_string(kMaxObjects) + " values");
    arena_.emplace_back();
    arena_.back().kind = kind;
    return &arena_.back();
  }
  Obj* make_int(std::int64_t v) {
    Obj* o = make(Kind::Int);
    o->i = v;
    return o;
  }
  void push(Obj* o) {
    grow();
    stack_.push_back(o);
  }
  // BINGET and MARK add to the stack without building a value: bounded too.
  void grow() {
    if (stack_.size() + marks_.size() >= kMaxObjects)
      fail("the pickle's stack holds more than the limit of " + std::to_string(kMaxObjects) +
           " values and marks");
  }
  Obj* pop() {
    if (stack_.size() <= mark_base()) fail("the pickle pops an empty stack");
    Obj* o = stack_.back();
    stack_.pop_back();
    return o;
  }
  Obj* top() {
    if (stack_.size() <= mark_base()) fail("the pickle reads an empty stack");
    return stack_.back();
  }
  std::size_t mark_base() const { return marks_.empty() ? 0 : marks_.back(); }
  std::vector<Obj*> pop_mark() {
    if (marks_.empty()) fail("the pickle has no MARK to pop to");
    std::vector<Obj*> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()),
                            stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }
  void nest(Obj* container, const Obj* child) {
    container->depth = std::max(container->depth, child->depth + 1);
    if (container->depth > kMaxDepth)
      fail("the pickle nests tuples, lists and dicts deeper than the limit of " +
           std::to_string(kMaxDepth) + " levels");
  }
  Obj* tuple(std::vector<Obj*> items) {
    Obj* t = make(Kind::Tuple);
    t->depth = 1;
    for (Obj* o : items) nest(t, o);
    t->items = std::move(items);
    return t;
  }
  void memo_put(std::uint64_t index) {
    Obj* o = top();
    if (memo_.size() >= kMaxObjects && !memo_.contains(index))
      fail("the pickle's memo holds more than the limit of " + std::to_string(kMaxObjects) +
           " values");
    memo_[index] = o;
  }
  void memo_get(std::uint64_t index) {
    auto it = memo_.find(index);
    if (it == memo_.end())
      fail("the pickle reads memo entry " + std::to_string(index) + ", which was never stored");
    push(it->second);
  }
  std::string line() {
    std::string s;
    while (true) {
      const unsigned char c = *take(1);
      if (c == '\n') return s;
      if (s.size() >= 256) fail("a GLOBAL name is longer than 256 bytes");
      s.push_back(static_cast<char>(c));
    }
  }
  void global();
  void reduce();
  void persistent_id();
  void set_items(Obj* dict, const std::vector<Obj*>& items);
  void append(Obj* list, Obj* item);

  const std::vector<unsigned char>& b_;
  const std::string& path_;
  std::size_t pos_ = 0, op_pos_ = 0;
  std::deque<Obj> arena_;  // (a deque: pointers into it stay valid as it grows)
  std::vector<Obj*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Obj*> memo_;
  std::map<std::string, Obj*> storages_;  // by record key: one storage, however many tensors
};

void Unpickler::global() {
  const std::string module = line(), name = line();
  Obj* g = make(Kind::Global);
  g->s = module + "." + name;
  if (module == "collections" && name == "OrderedDict") {
    g->callable = Callable::OrderedDict;
  } else if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
    g->callable = Callable::RebuildTensor;
  } else if (module == "torch._utils" && name == "_rebuild_parameter") {
    g->callable = Callable::RebuildParameter;
  } else if (module == "torch" && name.size() > 7 && name.ends_with("Storage")) {
    g->callable = Callable::Storage;
    bool known = false;
    for (Dtype d : {kFloat32, kFloat64, kInt64, kBool}) {
      if (name == storage_class(d)) {
        g->dtype = d;
        known = true;
      }
    }
    if (!known)
      fail("storage type " + g->s +
           " is not supported (minigrad reads float32, float64, int64 and bool tensors)");
  } else {
    fail("refused the global " + g->s +
         " (a state_dict needs only collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
         "torch._utils._rebuild_parameter and torch's Float, Double, Long and Bool storages)");
  }
  push(g);
}

void Unpickler::persistent_id() {
  Obj* pid = pop();
  const auto& it = pid->items;
  if (pid->kind != Kind::Tuple || it.size() != 5 || it[0]->kind != Kind::Str ||
      it[0]->s != "storage" || it[1]->kind != Kind::Global ||
      it[1]->callable != Callable::Storage || it[2]->kind != Kind::Str ||
      it[3]->kind != Kind::Str || it[4]->kind != Kind::Int)
    fail("a persistent id is not ('storage', torch.<Type>Storage, key, location, numel)");
  const Dtype dtype = it[1]->dtype;
  const std::int64_t numel = it[4]->i;
  std::uint64_t nbytes = 0;
  if (numel < 0 || !detail::checked_nbytes({numel}, dtype, nbytes))
    fail("storage \"" + it[2]->s + "\" of " + std::to_string(numel) + " elements is too large");
  Obj*& s = storages_[it[2]->s];
  if (s == nullptr) {
    s = make(Kind::Storage);
    s->s = it[2]->s;
    s->dtype = dtype;
    s->i = numel;
  } else if (s->dtype != dtype || s->i != numel) {
    fail("storage \"" + it[2]->s + "\" is named twice with different types or sizes");
  }
  push(s);
}

// The tuple of non-negative ints of a size or stride, or fails.
Shape int_tuple(const Obj* o, bool& ok) {
  Shape out;
  ok = o->kind == Kind::Tuple && o->items.size() <= kMaxDims;
  if (!ok) return out;
  for (const Obj* v : o->items) {
    if (v->kind != Kind::Int || v->i < 0) {
      ok = false;
      return out;
    }
    out.push_back(v->i);
  }
  return out;
}

void Unpickler::reduce() {
  Obj* args = pop();
  Obj* f = pop();
  if (f->kind != Kind::Global) fail("REDUCE calls " + std::string(kind_name(f->kind)));
  if (args->kind != Kind::Tuple) fail("REDUCE's arguments are not a tuple");
  const auto& a = args->items;
  switch (f->callable) {
    case Callable::OrderedDict: {
      if (!a.empty()) fail("collections.OrderedDict is called with arguments");
      Obj* d = make(Kind::Dict);
      d->ordered = true;
      d->depth = 1;
      push(d);
      return;
    }
    case Callable::RebuildParameter: {
      if (a.size() != 3 || a[0]->kind != Kind::Tensor)
        fail("torch._utils._rebuild_parameter is not called with (tensor, requires_grad, hooks)");
      push(a[0]);
      return;
    }
    case Callable::Storage:
      fail("REDUCE calls " + f->s + ", which a state_dict never does");
    case Callable::RebuildTensor:
      break;
  }
  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[,
  // metadata])
  if ((a.size() != 6 && a.size() != 7) || a[0]->kind != Kind::Storage || a[1]->kind != Kind::Int ||
      a[4]->kind != Kind::Bool)
    fail(
        "torch._utils._rebuild_tensor_v2 is not called with (storage, offset, size, stride, "
        "requires_grad, hooks)");
  bool ok_size = false, ok_stride = false;
  Obj* t = make(Kind::Tensor);
  t->storage = a[0];
  t->i = a[1]->i;
  t->shape = int_tuple(a[2], ok_size);
  t->strides = int_tuple(a[3], ok_stride);
  if (!ok_size || !ok_stride || t->shape.size() != t->strides.size() || t->i < 0)
    fail("a tensor's size and stride must be tuples of as many non-negative ints (at most " +
         std::to_string(kMaxDims) + "), its offset a non-negative int");
  // The view must lie inside its storage (overflow-checked): offset + sum((size - 1) * stride).
  std::uint64_t numel = 1, last = static_cast<std::uint64_t>(t->i);
  bool overflow = false;
  for (std::size_t d = 0; d < t->shape.size(); ++d) {
    const auto size = static_cast<std::uint64_t>(t->shape[d]);
    overflow |= __builtin_mul_overflow(numel, size, &numel);
    if (size == 0) continue;
    std::uint64_t step = 0;
    overflow |= __builtin_mul_overflow(size - 1, static_cast<std::uint64_t>(t->strides[d]), &step);
    overflow |= __builtin_add_overflow(last, step, &last);
  }
  const auto storage_numel = static_cast<std::uint64_t>(t->storage->i);
  if (!overflow && numel > 0 && last >= storage_numel) overflow = true;
  if (overflow || numel > storage_numel)
    fail("a tensor of size " + detail::shape_str(t->shape) + ", stride " +
         detail::shape_str(t->strides) + " and offset " + std::to_string(t->i) +
         " does not fit in its storage \"" + t->storage->s + "\" of " +
         std::to_string(storage_numel) + " elements");
  push(t);
}

void Unpickler::set_items(Obj* dict, const std::vector<Obj*>& items) {
  if (dict->kind != Kind::Dict) fail("SETITEM(S) on " + std::string(kind_name(dict->kind)));
  if (items.size() % 2 != 0) fail("SETITEMS has a key without a value");
  for (Obj* o : items) {
    nest(dict, o);
    dict->items.push_back(o);
  }
}

void Unpickler::append(Obj* list, Obj* item) {
  if (list->kind != Kind::List) fail("APPEND(S) on " + std::string(kind_name(list->kind)));
  nest(list, item);
  list->items.push_back(item);
}

Obj* Unpickler::run() {
  while (true) {
    op_pos_ = pos_;
    const unsigned char op = *take(1);
    switch (op) {
      case 0x80: {  // PROTO
        const unsigned char v = *take(1);
        if (v < 2 || v > 5) fail("pickle protocol " + std::to_string(v) + " is not supported");
        break;
      }
      case '.':  // STOP
        if (stack_.size() != 1 || !marks_.empty())
          fail("the pickle stops with " + std::to_string(stack_.size()) + " values on its stack");
        return stack_.back();
      case 'c':
        global();
        break;
      case 'q':  // BINPUT
        memo_put(*take(1));
        break;
      case 'r':  // LONG_BINPUT
        memo_put(get(take(4), 4));
        break;
      case 0x94:  // MEMOIZE
        memo_put(memo_.size());
        break;
      case 'h':  // BINGET
        memo_get(*take(1));
        break;
      case 'j':  // LONG_BINGET
        memo_get(get(take(4), 4));
        break;
      case '(':  // MARK
        grow();
        marks_.push_back(stack_.size());
        break;
      case ')':  // EMPTY_TUPLE
        push(tuple({}));
        break;
      case 't':  // TUPLE
        push(tuple(pop_mark()));
        break;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        std::vector<Obj*> items(static_cast<std::size_t>(op - 0x84));
        for (std::size_t k = items.size(); k-- > 0;) items[k] = pop();
        push(tuple(std::move(items)));
        break;
      }
      case ']':    // EMPTY_LIST
      case '}': {  // EMPTY_DICT
        Obj* o = make(op == ']' ? Kind::List : Kind::Dict);
        o->depth = 1;
        push(o);
        break;
      }
      case 'a': {  // APPEND
        Obj* item = pop();
        append(top(), item);
        break;
      }
      case 'e': {  // APPENDS
        const std::vector<Obj*> items = pop_mark();
        Obj* list = top();
        for (Obj* o : items) append(list, o);
        break;
      }
      case 's': {  // SETITEM
        Obj* value = pop();
        Obj* key = pop();
        set_items(top(), {key, value});
        break;
      }
      case 'u': {  // SETITEMS
        const std::vector<Obj*> items = pop_mark();
        set_items(top(), items);
        break;
      }
      case 'R':
        reduce();
        break;
      case 'Q':
        persistent_id();
        break;
      case 'b': {  // BUILD: only an OrderedDict's state (its _metadata), which is dropped
        pop();
        Obj* o = top();
        if (o->kind != Kind::Dict || !o->ordered)
          fail("BUILD on " + std::string(kind_name(o->kind)) + " (only an OrderedDict's)");
        break;
      }
      case 'N':
        push(make(Kind::None));
        break;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        Obj* o = make(Kind::Bool);
        o->i = op == 0x88;
        push(o);
        break;
      }
      case 'K':  // BININT1
        push(make_int(*take(1)));
        break;
      case 'M':  // BININT2
        push(make_int(static_cast<std::int64_t>(get(take(2), 2))));
        break;
      case 'J':  // BININT (signed)
        push(make_int(static_cast<std::int32_t>(get(take(4), 4))));
        break;
      case 0x8a: {  // LONG1: n bytes, little-endian two's complement
        const unsigned char n = *take(1);
        if (n > 8) fail("an int of " + std::to_string(n) + " bytes does not fit in 64 bits");
        const unsigned char* p = take(n);
        std::uint64_t v = n ? get(p, n) : 0;
        if (n && n < 8 && (p[n - 1] & 0x80)) v |= ~std::uint64_t{0} << (8 * n);
        push(make_int(static_cast<std::int64_t>(v)));
        break;
      }
      case 'G': {  // BINFLOAT, big-endian
        const unsigned char* p = take(8);
        std::uint64_t v = 0;
        for (int k = 0; k < 8; ++k) v = (v << 8) | p[k];
        Obj* o = make(Kind::Float);
        std::memcpy(&o->f, &v, 8);
        push(o);
        break;
      }
      case 'X':     // BINUNICODE
      case 0x8c: {  // SHORT_BINUNICODE
        const std::uint64_t n = op == 'X' ? get(take(4), 4) : *take(1);
        if (n > kMaxString)
          fail("a string of " + std::to_string(n) + " bytes is longer than the limit of " +
               std::to_string(kMaxString));
        const unsigned char* p = take(n);
        Obj* o = make(Kind::Str);
        o->s.assign(reinterpret_cast<const char*>(p), n);
        push(o);
        break;
      }
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "0x%02x", op);
        fail(std::string("unsupported pickle opcode ") + buf +
             " (a state_dict needs only a few of protocol 2's)");
      }
    }
  }
}

// ---------------------------------------------------------------------- reading the archive

// What a .pt file holds once parsed: its top-level value (in the unpickler's arena) and the
// storages' records, read on demand.
class TorchArchive {
 public:
  TorchArchive(const detail::InputFile& file, const std::string& path)
      : path_(path), file_(file), zip_(file_, path_) {
    const std::string& first = zip_.first_name();
    const std::size_t slash = first.find('/');
    MG_CHECK(slash != std::string::npos && slash > 0, kLoad, path_,
             ": the zip archive's first entry \"", first,
             "\" is not <name>/...: not written by torch.save");
    prefix_ = first.substr(0, slash + 1);
    const Record* pkl = zip_.find(prefix_ + "data.pkl");
    MG_CHECK(pkl != nullptr, kLoad, path_, ": the archive has no ", prefix_,
             "data.pkl: not written by torch.save");
    MG_CHECK(pkl->size <= kMaxPickle, kLoad, path_, ": data.pkl has ", pkl->size,
             " bytes, more than the limit of ", kMaxPickle);
    pickle_.resize(pkl->size);
    zip_.read(prefix_ + "data.pkl", *pkl, pickle_.data());
    unpickler_ = std::make_unique<Unpickler>(pickle_, path_);
    root_ = unpickler_->run();
  }

  const Obj* root() const { return root_; }

  /// The tensor t as a new contiguous tensor (each storage record read and checked once).
  Tensor tensor(const Obj* t, const std::string& what) {
    const Obj* s = t->storage;
    // (an empty tensor's offset may lie anywhere: no view of the storage is made)
    if (detail::shape_numel(t->shape) == 0) return detail::make_tensor(t->shape, s->dtype);
    auto it = storages_.find(s);
    if (it == storages_.end()) {
      const std::string name = prefix_ + "data/" + s->s;
      const Record* r = zip_.find(name);
      MG_CHECK(r != nullptr, kLoad, path_, ": ", what, ": the archive has no record ", name,
               " for its storage");
      std::uint64_t nbytes = 0;
      detail::checked_nbytes({s->i}, s->dtype, nbytes);
      MG_CHECK(r->size == nbytes, kLoad, path_, ": record ", name, " has ", r->size,
               " bytes, but its storage holds ", s->i, " ", dtype_name(s->dtype), " elements (",
               nbytes, " bytes)");
      Tensor data = detail::make_tensor({s->i}, s->dtype);
      if (s->dtype != kBool) {
        zip_.read(name, *r, data.impl()->bytes());
      } else {
        std::vector<unsigned char> raw(nbytes);
        zip_.read(name, *r, raw.data());
        bool* out = data.impl()->data<bool>();
        for (std::uint64_t i = 0; i < nbytes; ++i) {
          MG_CHECK(raw[i] <= 1, kLoad, path_, ": record ", name, ": bool element ", i,
                   " has the byte ", static_cast<int>(raw[i]), " (must be 0 or 1)");
          out[i] = raw[i] == 1;
        }
      }
      it = storages_.emplace(s, data).first;
    }
    std::uint64_t nbytes = 0;
    detail::checked_nbytes(t->shape, s->dtype, nbytes);  // (fits: numel <= the storage's)
    total_ += nbytes;
    MG_CHECK(total_ <= kMaxExpansion * file_.size() + (1u << 20), kLoad, path_, ": ", what,
             ": the tensors read so far hold ", total_, " bytes, more than ", kMaxExpansion,
             " times the file's ", file_.size(), " (views repeating their storages)");
    // A copy of the view: every tensor gets its own contiguous storage, as load_safetensors'.
    return detail::make_view(it->second, t->shape, t->strides, t->i).clone();
  }

 private:
  std::string path_;
  const detail::InputFile& file_;
  ZipReader zip_;
  std::string prefix_;
  std::vector<unsigned char> pickle_;
  std::unique_ptr<Unpickler> unpickler_;
  const Obj* root_ = nullptr;
  std::map<const Obj*, Tensor> storages_;
  std::uint64_t total_ = 0;  // bytes of the tensors returned
};

// The items of a dict as (key, value) pairs, refusing a repeated key.
std::vector<std::pair<const Obj*, const Obj*>> dict_items(const Obj* d, const std::string& path,
                                                          const std::string& what) {
  std::vector<std::pair<const Obj*, const Obj*>> out;
  std::set<std::string> str_keys;
  std::set<std::int64_t> int_keys;
  for (std::size_t k = 0; k + 1 < d->items.size(); k += 2) {
    const Obj* key = d->items[k];
    const bool fresh = key->kind == Kind::Str   ? str_keys.insert(key->s).second
                       : key->kind == Kind::Int ? int_keys.insert(key->i).second
                                                : true;
    MG_CHECK(fresh, kLoad, path, ": ", what, " has the key ",
             key->kind == Kind::Str ? "\"" + key->s + "\"" : std::to_string(key->i), " twice");
    out.emplace_back(key, d->items[k + 1]);
  }
  return out;
}

// ------------------------------------------------------------------------- writing the pickle

class Pickler {
 public:
  std::string out;

  Pickler() {
    out += "\x80\x02";  // PROTO 2
  }
  void global(const std::string& module, const std::string& name) {
    const std::string key = module + "\n" + name + "\n";
    auto it = memo_.find(key);
    if (it != memo_.end()) {
      get(it->second);
      return;
    }
    out += 'c';
    out += key;
    put_memo(key);
  }
  void str(const std::string& s) {
    out += 'X';
    put(out, s.size(), 4);
    out += s;
  }
  void integer(std::int64_t v) {
    if (v >= 0 && v < 256) {
      out += 'K';
      put(out, static_cast<std::uint64_t>(v), 1);
    } else if (v >= 0 && v < 65536) {
      out += 'M';
      put(out, static_cast<std::uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out += 'J';
      put(out, static_cast<std::uint64_t>(v), 4);
    } else {
      out += "\x8a\x08";  // LONG1, 8 bytes
      put(out, static_cast<std::uint64_t>(v), 8);
    }
  }
  void real(double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, 8);
    out += 'G';
    for (int k = 7; k >= 0; --k) out.push_back(static_cast<char>((bits >> (8 * k)) & 0xFF));
  }
  void boolean(bool v) { out += v ? '\x88' : '\x89'; }
  void mark() { out += '('; }
  void op(char c) { out += c; }
  void int_tuple(const Shape& s) {
    mark();
    for (std::int64_t v : s) integer(v);
    op('t');
  }
  /// _rebuild_tensor_v2 of a contiguous tensor over the storage record `key`.
  void tensor(const Tensor& t, const std::string& key) {
    global("torch._utils", "_rebuild_tensor_v2");
    mark();
    mark();
    str("storage");
    global("torch", storage_class(t.dtype()));
    str(key);
    str("cpu");
    integer(t.numel());
    op('t');
    op('Q');  // BINPERSID
    integer(0);
    int_tuple(t.shape());
    int_tuple(detail::contiguous_strides(t.shape()));
    boolean(false);
    global("collections", "OrderedDict");
    op(')');
    op('R');
    op('t');
    op('R');
  }

 private:
  void get(std::uint32_t i) {
    out += 'j';
    put(out, i, 4);
  }
  void put_memo(const std::string& key) {
    const auto i = static_cast<std::uint32_t>(memo_.size());
    memo_[key] = i;
    out += 'r';
    put(out, i, 4);
  }
  std::map<std::string, std::uint32_t> memo_;
};

// Writes the archive through sink: data.pkl, the storages (one per tensor, C order) and version.
void write_archive(const detail::ByteSink& sink, const std::string& pickle,
                   const std::vector<Tensor>& storages) {
  ZipWriter zip(sink);
  zip.add("archive/data.pkl", pickle.data(), pickle.size());
  for (std::size_t k = 0; k < storages.size(); ++k) {
    const Tensor c = storages[k].detach().contiguous();
    zip.add("archive/data/" + std::to_string(k), c.numel() ? c.impl()->bytes() : "",
            static_cast<std::uint64_t>(c.numel()) * element_size(c.dtype()));
  }
  zip.add("archive/version", "3\n", 2);
  zip.finish();
}
void write_archive(const std::string& path, const std::string& pickle,
                   const std::vector<Tensor>& storages) {
  detail::AtomicOutputFile file(path, kSave);
  write_archive([&](const void* p, std::uint64_t n) { file.write(p, n); }, pickle, storages);
  file.commit();
}

// Whether s is UTF-8 as Python decodes it (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF): pickled names are decoded so on torch.load.
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0, min = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07, min = 0x10000;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n + 1;
  }
  return true;
}

void check_tensor(const Tensor& t, const std::string& name, const std::string& path) {
  MG_CHECK(valid_utf8(name), kSave, path, ": the name \"", name,
           "\" is not valid UTF-8, which torch.load could not read");
  MG_CHECK(t.defined(), kSave, path, ": tensor \"", name, "\" is undefined");
}

}  // namespace

bool is_torch_path(const std::string& path) {
  auto ends = [&](const char* ext) {
    const std::size_t n = std::strlen(ext);
    if (path.size() < n) return false;
    for (std::size_t k = 0; k < n; ++k)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - n + k])) != ext[k])
        return false;
    return true;
  };
  return ends(".pt") || ends(".pth");
}

void save_torch(const std::string& path, const NamedTensors& tensors) {
  Pickler p;
  p.global("collections", "OrderedDict");
  p.op(')');
  p.op('R');
  p.mark();
  std::set<std::string> seen;
  std::vector<Tensor> storages;
  for (const auto& [name, t] : tensors) {
    MG_CHECK(seen.insert(name).second, kSave, path, ": the name \"", name,
             "\" appears more than once");
    check_tensor(t, name, path);
    p.str(name);
    p.tensor(t, std::to_string(storages.size()));
    storages.push_back(t);
  }
  p.op('u');  // SETITEMS
  p.op('.');
  write_archive(path, p.out, storages);
}

NamedTensors load_torch(const std::string& path) {
  detail::InputFile file(path, kLoad);
  TorchArchive archive(file, path);
  const Obj* root = archive.root();
  MG_CHECK(root->kind == Kind::Dict, kLoad, path, ": the file holds ", kind_name(root->kind),
           ", not a state_dict (a dict of tensors)");
  NamedTensors out;
  for (const auto& [key, value] : dict_items(root, path, "the state_dict")) {
    MG_CHECK(key->kind == Kind::Str, kLoad, path, ": a state_dict key is ", kind_name(key->kind),
             ", not a str");
    MG_CHECK(value->kind == Kind::Tensor, kLoad, path, ": \"", key->s, "\" is ",
             kind_name(value->kind), ", not a tensor");
    out.emplace_back(key->s, archive.tensor(value, "tensor \"" + key->s + "\""));
  }
  return out;
}

// Optimizer state_dicts in PyTorch's layout: {"state": {position: {name: tensor}},
// "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), ..., "params": [0, 1]}]}.
void save_optimizer_state_torch(const std::string& path, const OptimizerStateDict& state) {
  Pickler p;
  p.op('}');
  p.mark();
  p.str("state");
  p.op('}');
  p.mark();
  std::vector<Tensor> storages;
  for (const auto& [position, param_state] : state.state) {
    MG_CHECK(position >= 0, kSave, path, ": parameter position ", position, " is negative");
    p.integer(position);
    p.op('}');
    p.mark();
    for (const auto& [name, t] : param_state) {
      check_tensor(t, name, path);
      p.str(name);
      p.tensor(t, std::to_string(storages.size()));
      storages.push_back(t);
    }
    p.op('u');
  }
  p.op('u');
  p.str("param_groups");
  p.op(']');
  p.mark();
  for (const ParamGroupState& g : state.param_groups) {
    p.op('}');
    p.mark();
    for (const auto& [name, value] : g.options) {
      MG_CHECK(name != "params", kSave, path, ": \"params\" cannot be an option name");
      p.str(name);
      if (const bool* b = std::get_if<bool>(&value)) {
        p.boolean(*b);
      } else if (const double* d = std::get_if<double>(&value)) {
        p.real(*d);
      } else {
        p.mark();  // a tuple, as PyTorch's betas
        for (double v : std::get<std::vector<double>>(value)) p.real(v);
        p.op('t');
      }
    }
    p.str("params");
    p.op(']');
    p.mark();
    for (std::int64_t i : g.params) p.integer(i);
    p.op('e');  // APPENDS
    p.op('u');
  }
  p.op('e');
  p.op('u');
  p.op('.');
  write_archive(path, p.out, storages);
}

OptimizerStateDict load_optimizer_state_torch(const std::string& path) {
  detail::InputFile file(path, kLoad);
  TorchArchive archive(file, path);
  const Obj* root = archive.root();
  const char* layout =
      " (PyTorch's optimizer layout: {\"state\": {0: {...}}, \"param_groups\": "
      "[{\"lr\": ..., \"params\": [0]}]})";
  MG_CHECK(root->kind == Kind::Dict, kLoad, path, ": the file holds ", kind_name(root->kind),
           ", not an optimizer state_dict", layout);
  const Obj* state = nullptr;
  const Obj* groups = nullptr;
  for (const auto& [key, value] : dict_items(root, path, "the optimizer state_dict")) {
    if (key->kind == Kind::Str && key->s == "state") state = value;
    if (key->kind == Kind::Str && key->s == "param_groups") groups = value;
  }
  MG_CHECK(state && state->kind == Kind::Dict && groups && groups->kind == Kind::List, kLoad, path,
           ": not an optimizer state_dict", layout);
  OptimizerStateDict out;
  for (const auto& [key, value] : dict_items(state, path, "\"state\"")) {
    MG_CHECK(key->kind == Kind::Int && key->i >= 0 && value->kind == Kind::Dict, kLoad, path,
             ": \"state\" must map parameter positions to dicts", layout);
    auto& param_state = out.state[key->i];
    for (const auto& [name, t] : dict_items(value, path, "a parameter's state")) {
      MG_CHECK(name->kind == Kind::Str, kLoad, path, ": the state of parameter ", key->i,
               " has a key that is not a str");
      if (t->kind == Kind::None) continue;  // SGD's momentum_buffer without momentum
      MG_CHECK(t->kind == Kind::Tensor, kLoad, path, ": state \"", name->s, "\" of parameter ",
               key->i, " is ", kind_name(t->kind), ", not a tensor");
      param_state[name->s] = archive.tensor(t, "state \"" + name->s + "\"");
    }
  }
  for (const Obj* group : groups->items) {
    MG_CHECK(group->kind == Kind::Dict, kLoad, path, ": a param group is ", kind_name(group->kind),
             ", not a dict", layout);
    ParamGroupState g;
    bool has_params = false;
    for (const auto& [name, value] : dict_items(group, path, "a param group")) {
      MG_CHECK(name->kind == Kind::Str, kLoad, path, ": a param group has a key that is not a str");
      const std::string& n = name->s;
      if (n == "params") {
        MG_CHECK(value->kind == Kind::List, kLoad, path, ": \"params\" must be a list");
        for (const Obj* i : value->items) {
          MG_CHECK(i->kind == Kind::Int && i->i >= 0, kLoad, path,
                   ": \"params\" must hold non-negative ints");
          g.params.push_back(i->i);
        }
        has_params = true;
      } else if (value->kind == Kind::None || n == "initial_lr") {
        // PyTorch's foreach=None is not an option minigrad has; initial_lr, which PyTorch's
        // schedulers add to the groups, minigrad keeps outside the options and never saves.
        continue;
      } else if (value->kind == Kind::Bool) {
        // PyTorch's implementation switches, off: minigrad has no such option.
        if (!value->i &&
            (n == "foreach" || n == "capturable" || n == "differentiable" || n == "fused"))
          continue;
        g.options.emplace_back(n, value->i != 0);
      } else if (value->kind == Kind::Int || value->kind == Kind::Float) {
        g.options.emplace_back(n,
                               value->kind == Kind::Int ? static_cast<double>(value->i) : value->f);
      } else if (value->kind == Kind::Tuple || value->kind == Kind::List) {
        std::vector<double> list;
        for (const Obj* v : value->items) {
          MG_CHECK(v->kind == Kind::Int || v->kind == Kind::Float, kLoad, path, ": option \"", n,
                   "\" must be a tuple of numbers");
          list.push_back(v->kind == Kind::Int ? static_cast<double>(v->i) : v->f);
        }
        g.options.emplace_back(n, std::move(list));
      } else {
        MG_ERROR(kLoad, path, ": option \"", n, "\" is ", kind_name(value->kind),
                 ", not a number, a bool or a tuple of numbers");
      }
    }
    MG_CHECK(has_params, kLoad, path, ": a param group has no \"params\"");
    out.param_groups.push_back(std::move(g));
  }
  return out;
}

// ---------------------------------------------------------------- serialization archives' trees

namespace {

using serialize::detail::Item;
constexpr int kMaxArchiveDepth = kMaxDepth - 2;  // (a tensor's arguments nest two more levels)

void pickle_item(Pickler& p, const Item& item, std::vector<Tensor>& storages,
                 const std::string& name, const std::string& where, int depth) {
  MG_CHECK(depth <= kMaxArchiveDepth, kSave, name, ": \"", where, "\" nests archives deeper than ",
           kMaxArchiveDepth, " levels, which a reader refuses");
  switch (item.kind) {
    case Item::Kind::Tensor:
      if (!item.tensor.defined()) {
        p.op('N');
      } else {
        p.tensor(item.tensor, std::to_string(storages.size()));
        storages.push_back(item.tensor);
      }
      return;
    case Item::Kind::Int:
      p.integer(item.i);
      return;
    case Item::Kind::Double:
      p.real(item.f);
      return;
    case Item::Kind::Bool:
      p.boolean(item.i != 0);
      return;
    case Item::Kind::Str:
      MG_CHECK(valid_utf8(item.s), kSave, name, ": the string under \"", where,
               "\" is not valid UTF-8, which torch.load could not read");
      p.str(item.s);
      return;
    case Item::Kind::Dict:
      p.op('}');
      p.mark();
      for (std::size_t k = 0; k < item.keys.size(); ++k) {
        const std::string key = where.empty() ? item.keys[k] : where + "." + item.keys[k];
        MG_CHECK(valid_utf8(item.keys[k]), kSave, name, ": the key \"", key,
                 "\" is not valid UTF-8, which torch.load could not read");
        p.str(item.keys[k]);
        pickle_item(p, item.values[k], storages, name, key, depth + 1);
      }
      p.op('u');  // SETITEMS
      return;
    case Item::Kind::List:
      p.op(']');
      p.mark();
      for (std::size_t k = 0; k < item.values.size(); ++k)
        pickle_item(p, item.values[k], storages, name,
                    where.empty() ? std::to_string(k) : where + "." + std::to_string(k), depth + 1);
      p.op('e');  // APPENDS
      return;
  }
}

// The pickle's value as a tree. A hostile pickle may share one list many times over or make a
// list contain itself: the visits are counted and the depth bounded.
// (path: the keys down to o, joined with '.' only for a message: a value may be visited millions
// of times)
std::string joined(const std::vector<std::string>& path) {
  std::string out;
  for (const std::string& k : path) out += (out.empty() ? "" : ".") + k;
  return out;
}

Item unpickle_item(TorchArchive& archive, const Obj* o, const std::string& name,
                   std::vector<std::string>& path, std::size_t& visits) {
  const int depth = static_cast<int>(path.size());
  MG_CHECK(depth <= kMaxDepth, kLoad, name, ": \"", joined(path), "\" nests deeper than ",
           kMaxDepth, " levels (a container that contains itself?)");
  MG_CHECK(++visits <= kMaxObjects, kLoad, name,
           ": the file's values, counted with repeats, are more than the limit of ", kMaxObjects);
  auto child = [&](std::string key, const Obj* value) {
    path.push_back(std::move(key));
    Item item = unpickle_item(archive, value, name, path, visits);
    path.pop_back();
    return item;
  };
  Item out;
  switch (o->kind) {
    case Kind::None:
      out.kind = Item::Kind::Tensor;  // an undefined tensor
      return out;
    case Kind::Tensor:
      out.kind = Item::Kind::Tensor;
      out.tensor = archive.tensor(o, "\"" + joined(path) + "\"");
      return out;
    case Kind::Bool:
    case Kind::Int:
      out.kind = o->kind == Kind::Bool ? Item::Kind::Bool : Item::Kind::Int;
      out.i = o->i;
      return out;
    case Kind::Float:
      out.kind = Item::Kind::Double;
      out.f = o->f;
      return out;
    case Kind::Str:
      out.kind = Item::Kind::Str;
      out.s = o->s;
      return out;
    case Kind::Dict: {
      out.kind = Item::Kind::Dict;
      std::set<std::string> seen;
      for (const auto& [key, value] :
           dict_items(o, name, path.empty() ? std::string("the archive") : joined(path))) {
        MG_CHECK(key->kind == Kind::Str || key->kind == Kind::Int, kLoad, name, ": a key of \"",
                 joined(path), "\" is ", kind_name(key->kind), ", not a str or an int");
        std::string k = key->kind == Kind::Str ? key->s : std::to_string(key->i);
        MG_CHECK(seen.insert(k).second, kLoad, name, ": \"", joined(path), "\" has the key \"", k,
                 "\" twice");
        out.values.push_back(child(k, value));
        out.keys.push_back(std::move(k));
      }
      return out;
    }
    case Kind::List:
    case Kind::Tuple:
      out.kind = Item::Kind::List;
      for (std::size_t k = 0; k < o->items.size(); ++k)
        out.values.push_back(child(std::to_string(k), o->items[k]));
      return out;
    case Kind::Global:
    case Kind::Storage:
      break;
  }
  MG_ERROR(kLoad, name, ": \"", joined(path), "\" is ", kind_name(o->kind),
           ", which an archive cannot hold (tensors, numbers, bools, strings, lists and dicts)");
}

}  // namespace

void detail::write_torch_object(const ByteSink& sink, const Item& root, const std::string& name) {
  Pickler p;
  std::vector<Tensor> storages;
  pickle_item(p, root, storages, name, "", 0);
  p.op('.');
  write_archive(sink, p.out, storages);
}

Item detail::read_torch_object(const InputFile& file, const std::string& name) {
  TorchArchive archive(file, name);
  std::size_t visits = 0;
  std::vector<std::string> path;
  return unpickle_item(archive, archive.root(), name, path, visits);
}

}  // namespace minigrad
