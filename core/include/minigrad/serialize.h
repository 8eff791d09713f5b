#pragma once
// Serialization archives as libtorch's (torch::serialize::OutputArchive / InputArchive,
// torch::save / torch::load), in PyTorch's torch.save file format.
//
//   mg::serialize::OutputArchive out;
//   out.write("weight", w);                 // tensors, nested archives, ints, doubles, bools,
//   out.write("epoch", 3);                  // strings, under string keys, in order
//   out.save_to("ckpt.pt");                 // or a std::ostream, or a writer function
//   mg::serialize::InputArchive in;
//   in.load_from("ckpt.pt");                // or a std::istream, or bytes in memory
//   in.read("weight", w);                   // copied into w (shapes must match), or assigned
//                                           // when w is undefined
//   mg::save(tensor, "x.pt");  mg::load(tensor, "x.pt");   // also a std::vector<Tensor>, a
//   mg::save(model, "m.pt");   mg::load(model, "m.pt");    // module, an optimizer
//
// The file is what torch.save(obj) writes (a zip of a protocol 2 pickle and one record per
// tensor; Note [Archive files] in core/src/io/archive.cpp): an archive is a Python dict of its
// entries, a nested archive's under dotted keys ("fc.weight"), so `torch.load(path)` in Python
// returns {"weight": tensor, "epoch": 3} and a module's archive is its state_dict(); mg::save of
// one tensor writes that tensor, and of a std::vector<Tensor> a list, as torch.save does. Reading
// takes the same from PyTorch: a file of torch.save(tensor), torch.save([tensors]) or
// torch.save({"name": tensor, ...}) (nested dicts too) loads. Reading is bounded and checked as
// load_torch's (minigrad/io.h): a truncated, corrupt or hostile file or stream throws
// minigrad::Error. Writing a file is atomic (as every saver in minigrad/io.h).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "minigrad/tensor.h"

namespace minigrad::detail {
class InputFile;  // (core/src/io/file_io.h)
}

namespace minigrad::serialize {

namespace detail {
/// One entry of an archive: a tensor (undefined: Python's None), a scalar, or a nested archive
/// (Dict: keys and values in order) or list (values).
struct Item {
  enum class Kind { Tensor, Int, Double, Bool, Str, Dict, List };
  Kind kind = Kind::Dict;
  Tensor tensor;
  std::int64_t i = 0;  // Int; Bool (0 or 1)
  double f = 0;
  std::string s;
  std::vector<std::string> keys;  // Dict
  std::vector<Item> values;       // Dict (one per key), List
};
}  // namespace detail

/// Collects named tensors, nested archives and scalars, then saves them (libtorch's
/// torch::serialize::OutputArchive).
class OutputArchive {
 public:
  OutputArchive();

  /// Writes tensor under key (its values, detached; requires_grad is not saved). is_buffer is
  /// accepted for libtorch's signature and not stored (PyTorch's state_dict does not either). A
  /// key written twice throws.
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  /// Writes a copy of nested's entries under "key.<their key>" (read(key, InputArchive&) reads).
  void write(const std::string& key, const OutputArchive& nested);
  void write(const std::string& key, double value);
  void write(const std::string& key, bool value);
  void write(const std::string& key, const std::string& value);
  void write(const std::string& key, const char* value) { write(key, std::string(value)); }
  template <std::integral T>
  requires(!std::same_as<T, bool>) void write(const std::string& key, T value) {
    write_int(key, static_cast<std::int64_t>(value));
  }

  /// Saves the archive to filename (atomically), to a stream, or through func, which is called
  /// with successive chunks and must return the number of bytes it took (fewer throws).
  void save_to(const std::string& filename) const;
  void save_to(std::ostream& stream) const;
  void save_to(const std::function<std::size_t(const void*, std::size_t)>& func) const;

  /// The keys written so far, in order.
  std::vector<std::string> keys() const;

 private:
  friend OutputArchive& operator<<(OutputArchive&, const Tensor&);
  friend OutputArchive& operator<<(OutputArchive&, const std::vector<Tensor>&);
  void write_int(const std::string& key, std::int64_t value);
  detail::Item& add(const std::string& key, detail::Item::Kind kind);
  void write_bytes(const std::function<void(const void*, std::uint64_t)>& sink,
                   const std::string& name) const;
  detail::Item root_;
  // `archive << tensor` / `<< vector` save the tensor / a list, as torch.save(tensor) /
  // torch.save([...]), instead of a dict {"0": ...}; any other write() turns this off.
  enum class Shape { Dict, Tensor, List } shape_ = Shape::Dict;
};

/// Reads what an OutputArchive (or torch.save) saved (libtorch's torch::serialize::InputArchive).
/// Keys of nested archives read through it print with their path in errors: "fc.weight".
class InputArchive {
 public:
  InputArchive();

  /// Reads the tensor under key. A defined tensor gets the values copied into it (in place,
  /// without recording gradients; its shape must be the saved one, its dtype is kept); an
  /// undefined one is assigned the saved tensor. A missing key throws "No such serialized tensor
  /// 'fc.weight'", as libtorch. is_buffer is accepted for libtorch's signature.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  /// As read(), but returns false when key is absent or not a tensor (libtorch's).
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  /// The nested archive under key; absent: "No such serialized submodule: 'a.x'" (libtorch's).
  void read(const std::string& key, InputArchive& nested);
  bool try_read(const std::string& key, InputArchive& nested);
  /// Scalars; an int reads into a double, not the reverse. Absent or another kind throws.
  void read(const std::string& key, std::int64_t& value);
  void read(const std::string& key, double& value);
  void read(const std::string& key, bool& value);
  void read(const std::string& key, std::string& value);
  bool try_read(const std::string& key, std::int64_t& value);
  bool try_read(const std::string& key, double& value);
  bool try_read(const std::string& key, bool& value);
  bool try_read(const std::string& key, std::string& value);

  /// The keys, in the saved order.
  std::vector<std::string> keys() const;

  /// Loads a file, a stream (read to its end), bytes in memory, or what read_func gives (libtorch's
  /// (pos, buf, nbytes) -> bytes read, with size_func giving the total), replacing what the
  /// archive held.
  void load_from(const std::string& filename);
  void load_from(std::istream& stream);
  void load_from(const char* data, std::size_t size);
  void load_from(const std::function<std::size_t(std::uint64_t, void*, std::size_t)>& read_func,
                 const std::function<std::size_t()>& size_func);

 private:
  const detail::Item* find(const std::string& key, detail::Item::Kind kind) const;
  void read_scalar(bool found, const std::string& key, const char* what) const;
  void load_bytes(std::string bytes, const std::string& name);
  void load_file(const ::minigrad::detail::InputFile& file, const std::string& name);
  std::shared_ptr<const detail::Item> root_;  // the whole file's tree, shared with nested ones
  const detail::Item* node_ = nullptr;        // this archive's dict within it
  std::string prefix_;                        // "fc." for a nested archive read under "fc"
};

/// `archive << tensor` writes it under "0" (libtorch's), saved as torch.save(tensor) saves it;
/// `archive >> tensor` reads "0".
OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor);
InputArchive& operator>>(InputArchive& archive, Tensor& tensor);
/// Writes the tensors under "0", "1", ... (saved as a list); reading appends them to the vector.
OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors);
InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors);

}  // namespace minigrad::serialize

namespace minigrad {

/// libtorch's torch::save: writes value (a Tensor, a std::vector<Tensor>, a module or holder
/// with <minigrad/nn/nn.h>, an optimizer with <minigrad/optim/optim.h>) with `archive << value`
/// and saves the archive: `mg::save(model, "model.pt")`, `mg::save(t, stream)`.
template <typename Value, typename... SaveToArgs>
void save(const Value& value, SaveToArgs&&... args) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(std::forward<SaveToArgs>(args)...);
}

/// libtorch's torch::load: loads the archive and reads value from it with `archive >> value`:
/// `mg::load(model, "model.pt")` (a module's tensors are copied into it), `mg::load(t, stream)`.
template <typename Value, typename... LoadFromArgs>
void load(Value& value, LoadFromArgs&&... args) {
  serialize::InputArchive archive;
  archive.load_from(std::forward<LoadFromArgs>(args)...);
  archive >> value;
}

}  // namespace minigrad
