// The safetensors format (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length N, N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, optional
// "__metadata__": {str: str}}, then the tensors' raw little-endian bytes. Offsets count from the
// start of the data section; the tensors tile it exactly, with no gap and no overlap.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "io/file_io.h"
#include "minigrad/io.h"
#include "tensor_impl.h"

namespace minigrad {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kSave = "save_safetensors";
constexpr const char* kLoad = "load_safetensors";
// The reference implementation refuses headers over 100 MB; so do we (a bound before allocating).
constexpr std::uint64_t kMaxHeader = 100'000'000;

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
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::set<std::string> seen;
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
    header[name] = Json{{"dtype", safetensors_dtype(t.dtype())},
                        {"shape", t.shape()},
                        {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const Json::exception& e) {
    MG_ERROR(kSave, path, ": a name or metadata string is not valid UTF-8 (", e.what(), ")");
  }
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

  // Parse, refusing duplicate top-level keys (JSON parsers would silently keep the last one).
  std::set<std::string> keys;
  std::string duplicate;
  Json header;
  try {
    header = Json::parse(text, [&](int depth, Json::parse_event_t event, Json& parsed) {
      if (depth == 1 && event == Json::parse_event_t::key && parsed.is_string() &&
          !keys.insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
      return true;
    });
  } catch (const Json::parse_error& e) {
    MG_ERROR(kLoad, path, ": invalid JSON header: ", e.what());
  }
  MG_CHECK(header.is_object(), kLoad, path, ": the header is not a JSON object");
  MG_CHECK(duplicate.empty(), kLoad, path, ": the header names \"", duplicate, "\" twice");

  const std::uint64_t data_size = size - 8 - n;
  SafetensorsFile out;
  std::vector<Entry> entries;
  for (const auto& [key, value] : header.items()) {
    if (key == "__metadata__") {
      MG_CHECK(value.is_object(), kLoad, path, ": \"__metadata__\" must be an object of strings");
      for (const auto& [mk, mv] : value.items()) {
        MG_CHECK(mv.is_string(), kLoad, path, ": metadata \"", mk, "\" must be a string, got ",
                 mv.dump());
        out.metadata[mk] = mv.get<std::string>();
      }
      continue;
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
