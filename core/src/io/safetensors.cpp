// The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, optional
// "__metadata__": {str: str}}, then the tensors' raw little-endian bytes. Offsets count from the
// start of the data section; the tensors tile it exactly, with no gap and no overlap.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "io/file_io.h"
#include "minigrad/io.h"
#include "tensor_impl.h"

namespace minigrad {
namespace {

// The writer writes the header in the tensors' order; the reader keeps it in its own list and
// parses each value into a plain json (std::map: no linear-time insertion).
using Json = nlohmann::json;

constexpr const char* kSave = "save_safetensors";
constexpr const char* kLoad = "load_safetensors";
// The reference implementation refuses headers over 100 MB; so do we (a bound before allocating).
constexpr std::uint64_t kMaxHeader = 100'000'000;
// Limits on what a header may hold, each a clear error rather than a crash or a long wait:
// nesting (a few levels are needed: header, tensor, shape), tensors (far more than any model has)
// and dims per shape (NumPy's NPY_MAXDIMS; PyTorch prints and indexes recursively over dims).
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxTensors = 1'000'000;
constexpr std::size_t kMaxDims = 64;

const char* safetensors_dtype(Dtype dtype) {
  switch (dtype) {
    case kBool:
      return "BOOL";
    case kInt64:
      return "I64";
    case kFloat32:
      return "F32";
    case kFloat64:
      return "F64";
  }
  return "?";
}

bool parse_dtype(const std::string& s, Dtype& out) {
  if (s == "F32")
    out = kFloat32;
  else if (s == "F64")
    out = kFloat64;
  else if (s == "I64")
    out = kInt64;
  else if (s == "BOOL")
    out = kBool;
  else
    return false;
  return true;
}

std::string list_str(std::uint64_t a, std::uint64_t b) {
  std::ostringstream os;  // (string concatenation here trips GCC 12's false -Wrestrict)
  os << '[' << a << ", " << b << ']';
  return os.str();
}

// A JSON number that is a non-negative integer, or false.
bool as_uint(const Json& j, std::uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<std::uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<std::int64_t>() >= 0) {
    out = static_cast<std::uint64_t>(j.get<std::int64_t>());
    return true;
  }
  return false;
}

// A SAX handler for the header object: it refuses duplicate and too many top-level keys as they
// come (a DOM parser would silently keep the last of two), builds each top-level value as a Json
// and hands it to on_entry(key, value), and turns nlohmann's parse errors (syntax, and numbers
// such as 1e400 that overflow a double) into minigrad::Error. The header starts with '{', so the
// top-level value is an object.
template <typename OnEntry>
class HeaderReader {
 public:
  HeaderReader(const std::string& path, OnEntry& on_entry) : path_(path), on_entry_(on_entry) {}

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(Json::number_integer_t v) { return value(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
  bool number_float(Json::number_float_t v, const std::string&) { return value(v); }
  bool string(std::string& v) { return value(std::move(v)); }
  bool binary(Json::binary_t& v) { return value(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (depth_ == 1) {
      MG_CHECK(keys_.insert(k).second, kLoad, path_, ": the header names \"", k, "\" twice");
      MG_CHECK(k == "__metadata__" || ++tensors_ <= kMaxTensors, kLoad, path_,
               ": the header lists more than the limit of ", kMaxTensors, " tensors");
      key_ = std::move(k);
    } else {
      slot_ = &(*stack_.back())[k];
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    MG_ERROR(kLoad, path_, ": invalid JSON header: ", e.what());
  }

 private:
  // A scalar: a whole top-level value, an element of the array being built or the value of the
  // last key of the object being built.
  template <typename V>
  bool value(V&& v) {
    if (depth_ == 1) {
      on_entry_(key_, Json(std::forward<V>(v)));
    } else if (stack_.back()->is_array()) {
      stack_.back()->emplace_back(std::forward<V>(v));
    } else {
      *slot_ = Json(std::forward<V>(v));
    }
    return true;
  }
  bool open(Json container) {
    ++depth_;
    if (depth_ == 1) return true;  // the header object itself is not built
    Json* where = nullptr;
    if (depth_ == 2) {
      entry_ = std::move(container);
      where = &entry_;
    } else if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(container));
      where = &stack_.back()->back();
    } else {
      *slot_ = std::move(container);
      where = slot_;
    }
    // Pointers into the containers stay valid: only the innermost one (stack_.back()) grows.
    stack_.push_back(where);
    return true;
  }
  bool close() {
    --depth_;
    if (depth_ == 0) return true;
    stack_.pop_back();
    if (depth_ == 1) on_entry_(key_, std::move(entry_));
    return true;
  }

  const std::string& path_;
  OnEntry& on_entry_;
  int depth_ = 0;
  std::size_t tensors_ = 0;
  std::unordered_set<std::string> keys_;
  std::string key_;           // the top-level key whose value is being built
  Json entry_;                // that value, when it is an array or an object
  std::vector<Json*> stack_;  // the arrays and objects being built, innermost last
  Json* slot_ = nullptr;      // where the value of the last key of an object goes
};

struct Entry {
  std::string name;
  Shape shape;
  Dtype dtype = kFloat32;
  std::uint64_t begin = 0, end = 0;
};

}  // namespace

const Tensor& SafetensorsFile::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  MG_ERROR("SafetensorsFile.at", "no tensor named \"", name, "\" (the file has ", tensors.size(),
           " tensors)");
}

bool SafetensorsFile::contains(const std::string& name) const {
  return std::any_of(tensors.begin(), tensors.end(),
                     [&](const auto& p) { return p.first == name; });
}

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const Metadata& metadata) {
  // The header is written member by member (linear in the number of tensors; an ordered_json's
  // operator[] searches its members, which made saving many tensors quadratic). Keys and strings
  // are escaped by nlohmann's dump(), which throws for invalid UTF-8.
  std::string text = "{";
  auto quoted = [&](const std::string& s) {
    try {
      return Json(s).dump();
    } catch (const Json::exception& e) {
      MG_ERROR(kSave, path, ": a name or metadata string is not valid UTF-8 (", e.what(), ")");
    }
  };
  auto member = [&](const std::string& key, const std::string& value) {
    if (text.size() > 1) text += ',';
    text += quoted(key);
    text += ':';
    text += value;
  };
  if (!metadata.empty()) {
    std::string meta = "{";
    for (const auto& [k, v] : metadata) {
      if (meta.size() > 1) meta += ',';
      meta.append(quoted(k)).push_back(':');
      meta.append(quoted(v));
    }
    meta.push_back('}');
    member("__metadata__", meta);
  }
  std::unordered_set<std::string> seen;
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    MG_CHECK(!name.empty(), kSave, path, ": a tensor has an empty name");
    MG_CHECK(name != "__metadata__", kSave, path,
             ": \"__metadata__\" is reserved and cannot name a tensor");
    MG_CHECK(seen.insert(name).second, kSave, path, ": the name \"", name,
             "\" appears more than once");
    MG_CHECK(t.defined(), kSave, path, ": tensor \"", name, "\" is undefined");
    std::uint64_t nbytes = 0;
    detail::checked_nbytes(t.shape(), t.dtype(), nbytes);
    std::string entry = "{\"dtype\":\"";
    entry.append(safetensors_dtype(t.dtype())).append("\",\"shape\":[");
    for (std::int64_t d = 0; d < t.dim(); ++d) {
      if (d) entry.push_back(',');
      entry.append(std::to_string(t.size(d)));
    }
    entry.append("],\"data_offsets\":[").append(std::to_string(offset)).push_back(',');
    entry.append(std::to_string(offset + nbytes)).append("]}");
    member(name, entry);
    offset += nbytes;
  }
  text += '}';
  // Pad with spaces so the data section starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char len[8];
  std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));

  detail::AtomicOutputFile file(path, kSave);
  file.write(len, 8);
  file.write(text.data(), text.size());
  for (const auto& [name, t] : tensors) detail::write_tensor_data(file, t);
  file.commit();
}

SafetensorsFile load_safetensors(const std::string& path) {
  detail::InputFile file(path, kLoad);
  const std::uint64_t size = file.size();
  MG_CHECK(size >= 8, kLoad, path, ": file has ", size,
           " bytes, too short for the 8-byte header length");
  unsigned char len[8];
  file.read(0, len, 8);
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(len[i]) << (8 * i);
  MG_CHECK(n <= size - 8, kLoad, path, ": header length ", n, " exceeds file size ", size);
  MG_CHECK(n <= kMaxHeader, kLoad, path, ": header length ", n, " exceeds the limit of ",
           kMaxHeader, " bytes");
  MG_CHECK(n >= 2, kLoad, path, ": header length ", n, " is too short for a JSON object");
  std::string text(n, '\0');
  file.read(8, text.data(), n);
  MG_CHECK(text[0] == '{', kLoad, path, ": the header does not start with '{'");

  // Bound the nesting before parsing: the parser is iterative, but printing a value in an error
  // message (dump()) and destroying it recurse once per level. The tensor count is bounded here
  // too (the members, less "__metadata__"), and exactly while parsing.
  const detail::JsonScan scan = detail::scan_json(text);
  MG_CHECK(scan.depth <= kMaxDepth, kLoad, path,
           ": the header nests JSON arrays and objects deeper than the limit of ", kMaxDepth,
           " levels");
  MG_CHECK(scan.members <= kMaxTensors + 1, kLoad, path,
           ": the header lists more than the limit of ", kMaxTensors, " tensors");

  const std::uint64_t data_size = size - 8 - n;
  SafetensorsFile out;
  std::vector<Entry> entries;
  // Each top-level value is checked as soon as it is parsed, then dropped: memory and time stay
  // linear in the header (a DOM of the whole header with ordered_json, or nlohmann's parse
  // callback, costs time quadratic in the number of tensors).
  auto on_entry = [&](const std::string& key, const Json& value) {
    if (key == "__metadata__") {
      MG_CHECK(value.is_object(), kLoad, path, ": \"__metadata__\" must be an object of strings");
      for (const auto& [mk, mv] : value.items()) {
        MG_CHECK(mv.is_string(), kLoad, path, ": metadata \"", mk, "\" must be a string, got ",
                 mv.dump());
        out.metadata[mk] = mv.get<std::string>();
      }
      return;
    }
    const std::string what = "tensor \"" + key + "\"";
    MG_CHECK(value.is_object(), kLoad, path, ": ", what, " must be an object, got ", value.dump());
    for (const auto& [field, unused] : value.items()) {
      (void)unused;
      MG_CHECK(field == "dtype" || field == "shape" || field == "data_offsets", kLoad, path, ": ",
               what, " has an unknown field \"", field, "\"");
    }
    for (const char* field : {"dtype", "shape", "data_offsets"})
      MG_CHECK(value.contains(field), kLoad, path, ": ", what, " has no \"", field, "\"");

    Entry e;
    e.name = key;
    const Json& dt = value["dtype"];
    MG_CHECK(dt.is_string(), kLoad, path, ": ", what, ": dtype must be a string, got ", dt.dump());
    MG_CHECK(parse_dtype(dt.get<std::string>(), e.dtype), kLoad, path, ": ", what,
             ": unsupported dtype \"", dt.get<std::string>(),
             "\" (minigrad reads F32, F64, I64 and BOOL)");
    const Json& sh = value["shape"];
    MG_CHECK(sh.is_array(), kLoad, path, ": ", what, ": shape must be a list, got ", sh.dump());
    MG_CHECK(sh.size() <= kMaxDims, kLoad, path, ": ", what, ": shape has ", sh.size(),
             " dims, more than the limit of ", kMaxDims);
    for (const Json& d : sh) {
      std::uint64_t s = 0;
      MG_CHECK(as_uint(d, s) && s <= static_cast<std::uint64_t>(INT64_MAX), kLoad, path, ": ", what,
               ": shape ", sh.dump(), " must hold non-negative integers");
      e.shape.push_back(static_cast<std::int64_t>(s));
    }
    const Json& off = value["data_offsets"];
    MG_CHECK(
        off.is_array() && off.size() == 2 && as_uint(off[0], e.begin) && as_uint(off[1], e.end),
        kLoad, path, ": ", what, ": data_offsets must be two non-negative integers, got ",
        off.dump());
    MG_CHECK(e.begin <= e.end, kLoad, path, ": ", what, ": data_offsets ", list_str(e.begin, e.end),
             " end before they begin");
    MG_CHECK(e.end <= data_size, kLoad, path, ": ", what, ": data_offsets ",
             list_str(e.begin, e.end), " lie outside the data section (", data_size, " bytes)");
    std::uint64_t nbytes = 0;
    MG_CHECK(detail::checked_nbytes(e.shape, e.dtype, nbytes), kLoad, path, ": ", what, ": shape ",
             e.shape, " is too large");
    MG_CHECK(nbytes == e.end - e.begin, kLoad, path, ": ", what, ": shape ", e.shape, " ",
             dt.get<std::string>(), " needs ", nbytes, " bytes but data_offsets ",
             list_str(e.begin, e.end), " hold ", e.end - e.begin);
    entries.push_back(std::move(e));
  };
  HeaderReader reader(path, on_entry);
  try {
    // strict: one JSON value and nothing after it but whitespace.
    Json::sax_parse(text, &reader);
  } catch (const Json::exception& e) {
    // The reader turns parse errors into minigrad::Error; this catches anything else nlohmann
    // throws, so none of its exceptions escapes.
    MG_ERROR(kLoad, path, ": invalid JSON header: ", e.what());
  }

  // The tensors must tile the data section: sorted by offset, each starts where the last ended.
  std::vector<const Entry*> sorted;
  for (const Entry& e : entries) sorted.push_back(&e);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (const Entry* e : sorted) {
    MG_CHECK(e->begin >= pos, kLoad, path, ": tensors \"", prev ? prev->name : "", "\" ",
             list_str(prev ? prev->begin : 0, pos), " and \"", e->name, "\" ",
             list_str(e->begin, e->end), " overlap");
    MG_CHECK(e->begin == pos, kLoad, path, ": bytes [", pos, ", ", e->begin,
             ") of the data section belong to no tensor");
    pos = e->end;
    prev = e;
  }
  MG_CHECK(pos == data_size, kLoad, path, ": the data section has ", data_size,
           " bytes but the tensors cover ", pos, " (bytes after ", pos, " belong to no tensor)");

  for (const Entry& e : entries)
    out.tensors.emplace_back(e.name,
                             detail::read_tensor_data(file, 8 + n + e.begin, e.shape, e.dtype,
                                                      "tensor \"" + e.name + "\"", path, kLoad));
  return out;
}

}  // namespace minigrad
