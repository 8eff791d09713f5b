// serialize::OutputArchive and InputArchive (minigrad/serialize.h).
//
// Note [Archive files]
// An archive is saved in PyTorch's torch.save format (torch_format.cpp writes and reads it): the
// archive's entries become a Python dict in data.pkl, in the order written, each tensor a record
// of its own (C order, 64-byte aligned), ints, doubles, bools and strings Python's int, float,
// bool and str. A nested archive is flattened into its parent under dotted keys ("fc.weight"),
// so a module's archive (Module::save: own parameters, own buffers, then children) is exactly
// its state_dict(), which Python's model.load_state_dict(torch.load(path)) takes; reading a
// nested archive "fc" gathers the keys "fc.<rest>" (or takes a nested dict, when PyTorch wrote
// one). The price: a nested archive without entries leaves nothing in the file, so a child module
// without tensors (ReLU) has nothing to read, and Module::load skips it. A file torch.save wrote
// from a dict (of tensors, numbers, strings, None and dicts of them), a tensor or a list reads
// as an archive (a list's keys are "0", "1", ...; a lone tensor's "0"; an int key its decimal
// text). libtorch's own archives are
// TorchScript modules instead (torch.jit.load's format); minigrad reads and writes the format
// that Python's torch.load and torch.save share. Saving to a stream or a function builds the
// bytes in memory, then writes them; loading from a stream reads it to its end first, then
// reads the bytes as a file's, with the same bounds and checks.
#include <istream>
#include <iterator>
#include <ostream>
#include <utility>

#include "io/archive_format.h"
#include "minigrad/autograd.h"
#include "minigrad/error.h"
#include "minigrad/serialize.h"

namespace minigrad::serialize {
namespace {

using Kind = detail::Item::Kind;

const char* kind_text(Kind kind) {
  switch (kind) {
    case Kind::Tensor:
      return "a tensor";
    case Kind::Int:
      return "an int";
    case Kind::Double:
      return "a double";
    case Kind::Bool:
      return "a bool";
    case Kind::Str:
      return "a string";
    case Kind::Dict:
      return "an archive";
    case Kind::List:
      return "a list";
  }
  return "?";
}

// A List (a std::vector<Tensor>, or a list torch.save wrote) reads as a Dict keyed "0", "1", ...;
// a lone tensor as {"0": tensor}.
detail::Item as_dict(detail::Item item) {
  if (item.kind == Kind::Dict) return item;
  detail::Item dict;
  if (item.kind == Kind::List) {
    for (std::size_t k = 0; k < item.values.size(); ++k) dict.keys.push_back(std::to_string(k));
    dict.values = std::move(item.values);
  } else {
    dict.keys.push_back("0");
    dict.values.push_back(std::move(item));
  }
  return dict;
}

}  // namespace

// ------------------------------------------------------------------------------- OutputArchive

OutputArchive::OutputArchive() = default;

detail::Item& OutputArchive::add(const std::string& key, Kind kind) {
  for (const std::string& k : root_.keys)
    MG_CHECK(k != key, "OutputArchive.write", "key '", key, "' is already written");
  shape_ = Shape::Dict;
  root_.keys.push_back(key);
  root_.values.emplace_back();
  root_.values.back().kind = kind;
  return root_.values.back();
}

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool /*is_buffer*/) {
  add(key, Kind::Tensor).tensor = tensor.defined() ? tensor.detach() : Tensor();
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  MG_CHECK(&nested != this, "OutputArchive.write", "an archive cannot be written into itself ('",
           key, "')");
  const detail::Item item = nested.shape_ == Shape::Dict ? nested.root_ : as_dict(nested.root_);
  for (std::size_t k = 0; k < item.keys.size(); ++k)
    add(key + "." + item.keys[k], item.values[k].kind) = item.values[k];
}

void OutputArchive::write(const std::string& key, double value) {
  add(key, Kind::Double).f = value;
}
void OutputArchive::write(const std::string& key, bool value) { add(key, Kind::Bool).i = value; }
void OutputArchive::write(const std::string& key, const std::string& value) {
  add(key, Kind::Str).s = value;
}
void OutputArchive::write_int(const std::string& key, std::int64_t value) {
  add(key, Kind::Int).i = value;
}

std::vector<std::string> OutputArchive::keys() const { return root_.keys; }

void OutputArchive::write_bytes(const std::function<void(const void*, std::uint64_t)>& sink,
                                const std::string& name) const {
  if (shape_ == Shape::Tensor) {
    ::minigrad::detail::write_torch_object(sink, root_.values.at(0), name);
  } else if (shape_ == Shape::List) {
    detail::Item list;
    list.kind = Kind::List;
    list.values = root_.values;
    ::minigrad::detail::write_torch_object(sink, list, name);
  } else {
    ::minigrad::detail::write_torch_object(sink, root_, name);
  }
}

void OutputArchive::save_to(const std::string& filename) const {
  ::minigrad::detail::AtomicOutputFile file(filename, "OutputArchive.save_to");
  write_bytes([&](const void* p, std::uint64_t n) { file.write(p, n); }, filename);
  file.commit();
}

void OutputArchive::save_to(std::ostream& stream) const {
  std::uint64_t written = 0;
  write_bytes(
      [&](const void* p, std::uint64_t n) {
        stream.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
        MG_CHECK(static_cast<bool>(stream), "OutputArchive.save_to",
                 "writing to the stream failed after ", written, " bytes");
        written += n;
      },
      "<stream>");
}

void OutputArchive::save_to(
    const std::function<std::size_t(const void*, std::size_t)>& func) const {
  MG_CHECK(static_cast<bool>(func), "OutputArchive.save_to", "the writer function is empty");
  std::uint64_t written = 0;
  write_bytes(
      [&](const void* p, std::uint64_t n) {
        const std::size_t took = func(p, n);
        MG_CHECK(took == n, "OutputArchive.save_to", "the writer function took ", took, " of ", n,
                 " bytes at offset ", written);
        written += n;
      },
      "<writer>");
}

OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor) {
  archive.write("0", tensor);
  if (archive.root_.keys.size() == 1) archive.shape_ = OutputArchive::Shape::Tensor;
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors) {
  const bool fresh = archive.root_.keys.empty();
  for (std::size_t k = 0; k < tensors.size(); ++k) archive.write(std::to_string(k), tensors[k]);
  if (fresh) archive.shape_ = OutputArchive::Shape::List;
  return archive;
}

// -------------------------------------------------------------------------------- InputArchive

InputArchive::InputArchive() : root_(std::make_shared<const detail::Item>()), node_(root_.get()) {}

const detail::Item* InputArchive::find(const std::string& key, Kind kind) const {
  for (std::size_t k = 0; k < node_->keys.size(); ++k) {
    if (node_->keys[k] != key) continue;
    const detail::Item& v = node_->values[k];
    // An int is a double too (Python writes 1 for 1.0 rarely, but a user may).
    if (v.kind == kind || (kind == Kind::Double && v.kind == Kind::Int)) return &v;
    return nullptr;
  }
  return nullptr;
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  const detail::Item* item = find(key, Kind::Tensor);
  if (!item) return false;
  const Tensor& saved = item->tensor;
  MG_CHECK(saved.defined() || !tensor.defined(), "InputArchive.read", "tensor '", prefix_, key,
           "' is None in the archive; the tensor to read into is defined");
  if (tensor.defined()) {
    MG_CHECK(tensor.shape() == saved.shape(), "InputArchive.read", "tensor '", prefix_, key,
             "' has shape ", saved.shape(), " in the archive, the tensor to read into has ",
             tensor.shape());
    NoGradGuard guard;
    tensor.copy_(saved);
  } else {
    // (a tensor of its own: reading the archive twice gives two tensors)
    tensor = saved.defined() ? saved.clone() : Tensor();
  }
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  if (try_read(key, tensor, is_buffer)) return;
  MG_CHECK(false, "InputArchive.read", "No such serialized tensor '", prefix_, key, "'",
           node_->keys.empty() ? std::string(" (the archive is empty)") : std::string());
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested) {
  const detail::Item* item = find(key, Kind::Dict);
  if (!item) item = find(key, Kind::List);  // (a list reads as an archive keyed "0", "1", ...)
  std::shared_ptr<const detail::Item> root = root_;
  if (item && item->kind == Kind::List) {
    root = std::make_shared<const detail::Item>(as_dict(*item));
    item = root.get();
  } else if (!item) {
    // The flat layout (Note [Archive files]): the entries "key.<rest>" under the keys <rest>.
    detail::Item dict;
    const std::string dotted = key + ".";
    for (std::size_t k = 0; k < node_->keys.size(); ++k) {
      if (node_->keys[k].compare(0, dotted.size(), dotted) != 0) continue;
      dict.keys.push_back(node_->keys[k].substr(dotted.size()));
      dict.values.push_back(node_->values[k]);
    }
    if (dict.keys.empty()) return false;
    root = std::make_shared<const detail::Item>(std::move(dict));
    item = root.get();
  }
  nested.root_ = std::move(root);
  nested.node_ = item;
  nested.prefix_ = prefix_ + key + ".";
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& nested) {
  MG_CHECK(try_read(key, nested), "InputArchive.read", "No such serialized submodule: '", prefix_,
           key, "'");
}

void InputArchive::read_scalar(bool found, const std::string& key, const char* what) const {
  if (found) return;
  for (std::size_t k = 0; k < node_->keys.size(); ++k)
    MG_CHECK(node_->keys[k] != key, "InputArchive.read", "'", prefix_, key, "' is ",
             kind_text(node_->values[k].kind), " in the archive, not ", what);
  MG_ERROR("InputArchive.read", "No such serialized value '", prefix_, key, "' (to read as ", what,
           ")");
}

bool InputArchive::try_read(const std::string& key, std::int64_t& value) {
  const detail::Item* item = find(key, Kind::Int);
  if (item) value = item->i;
  return item != nullptr;
}
bool InputArchive::try_read(const std::string& key, double& value) {
  const detail::Item* item = find(key, Kind::Double);
  if (item) value = item->kind == Kind::Int ? static_cast<double>(item->i) : item->f;
  return item != nullptr;
}
bool InputArchive::try_read(const std::string& key, bool& value) {
  const detail::Item* item = find(key, Kind::Bool);
  if (item) value = item->i != 0;
  return item != nullptr;
}
bool InputArchive::try_read(const std::string& key, std::string& value) {
  const detail::Item* item = find(key, Kind::Str);
  if (item) value = item->s;
  return item != nullptr;
}
void InputArchive::read(const std::string& key, std::int64_t& value) {
  read_scalar(try_read(key, value), key, "an int");
}
void InputArchive::read(const std::string& key, double& value) {
  read_scalar(try_read(key, value), key, "a double");
}
void InputArchive::read(const std::string& key, bool& value) {
  read_scalar(try_read(key, value), key, "a bool");
}
void InputArchive::read(const std::string& key, std::string& value) {
  read_scalar(try_read(key, value), key, "a string");
}

std::vector<std::string> InputArchive::keys() const { return node_->keys; }

void InputArchive::load_file(const ::minigrad::detail::InputFile& file, const std::string& name) {
  // (everything is read and checked before the archive changes)
  auto root = std::make_shared<const detail::Item>(
      as_dict(::minigrad::detail::read_torch_object(file, name)));
  node_ = root.get();
  root_ = std::move(root);
  prefix_.clear();
}

void InputArchive::load_bytes(std::string bytes, const std::string& name) {
  load_file(::minigrad::detail::InputFile("InputArchive.load_from", name, std::move(bytes)), name);
}

void InputArchive::load_from(const std::string& filename) {
  load_file(::minigrad::detail::InputFile(filename, "InputArchive.load_from"), filename);
}

void InputArchive::load_from(std::istream& stream) {
  // From the stream's beginning when it can seek, as libtorch's (its reader reads at absolute
  // positions): one stream loads twice without a seekg in between.
  stream.clear(stream.rdstate() & ~std::ios::eofbit);
  if (stream.tellg() != std::streampos(-1)) stream.seekg(0, std::ios::beg);
  std::string bytes((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  MG_CHECK(!stream.bad(), "InputArchive.load_from", "reading the stream failed after ",
           bytes.size(), " bytes");
  load_bytes(std::move(bytes), "<stream>");
}

void InputArchive::load_from(const char* data, std::size_t size) {
  MG_CHECK(data != nullptr || size == 0, "InputArchive.load_from", "data is null");
  load_bytes(std::string(data ? data : "", size), "<memory>");
}

void InputArchive::load_from(
    const std::function<std::size_t(std::uint64_t, void*, std::size_t)>& read_func,
    const std::function<std::size_t()>& size_func) {
  MG_CHECK(read_func && size_func, "InputArchive.load_from", "a reader function is empty");
  const std::size_t size = size_func();
  std::string bytes;
  // (read in chunks, so a size_func that lies about a huge size fails at the first short read
  // rather than allocating it)
  constexpr std::size_t kChunk = 1 << 20;
  while (bytes.size() < size) {
    const std::size_t want = std::min(kChunk, size - bytes.size());
    const std::size_t at = bytes.size();
    bytes.resize(at + want);
    const std::size_t got = read_func(at, bytes.data() + at, want);
    MG_CHECK(got == want, "InputArchive.load_from", "the reader function gave ", got, " of ", want,
             " bytes at offset ", at, " (of the ", size, " size_func announced)");
  }
  load_bytes(std::move(bytes), "<reader>");
}

InputArchive& operator>>(InputArchive& archive, Tensor& tensor) {
  archive.read("0", tensor);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors) {
  Tensor value;
  for (std::size_t k = 0; archive.try_read(std::to_string(k), value); ++k) {
    tensors.push_back(std::move(value));
    value = Tensor();
  }
  return archive;
}

}  // namespace minigrad::serialize
