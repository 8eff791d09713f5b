#pragma once
// TensorOptions and Device, as libtorch's: what the creation functions accept besides a Dtype.
//
//   mg::zeros({2, 3}, mg::TensorOptions().dtype(mg::kFloat64).requires_grad(true));
//   mg::randn({4}, mg::dtype(mg::kFloat64));
//   mg::Device device(mg::cuda::is_available() ? mg::kCUDA : mg::kCPU);  // always the CPU
//
// minigrad runs on the CPU only: Device exists so that libtorch code which picks a device
// compiles and runs unchanged; asking for a CUDA tensor throws.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "minigrad/dtype.h"

namespace minigrad {

enum class DeviceType : std::int8_t { CPU = 0, CUDA = 1 };
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

/// A device as libtorch's torch::Device: Device(kCPU), Device("cpu"), Device(kCUDA, 0).
class Device {
 public:
  Device(DeviceType type = kCPU, std::int8_t index = -1)  // NOLINT: implicit, as libtorch's
      : type_(type), index_(index) {}
  /// "cpu", "cuda" or "cuda:N"; anything else throws "[Device] ...".
  Device(const std::string& name);                         // NOLINT
  Device(const char* name) : Device(std::string(name)) {}  // NOLINT
  DeviceType type() const { return type_; }
  std::int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  /// "cpu" or "cuda:0".
  std::string str() const;
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }

 private:
  DeviceType type_;
  std::int8_t index_;
};

/// How a tensor's elements are laid out, as libtorch's Layout. minigrad tensors are always dense
/// and strided, so kStrided is the only one: x.layout() and TensorOptions().layout() give it, and
/// code that passes torch::kStrided compiles unchanged (there is no kSparse to ask for).
enum class Layout : std::int8_t { Strided = 0 };
inline constexpr Layout kStrided = Layout::Strided;
/// Prints "Strided", as libtorch.
std::ostream& operator<<(std::ostream& os, Layout layout);

namespace cuda {
/// Always false: minigrad has no GPU backend (torch::cuda::is_available()).
inline bool is_available() { return false; }
inline std::int64_t device_count() { return 0; }
}  // namespace cuda

/// Throws "[op] CUDA is not available: minigrad runs on the CPU (...)" unless device is the CPU.
void check_cpu(const Device& device, const char* op);

/// Options for a new tensor, as libtorch's TensorOptions; each setter returns a new copy:
/// TensorOptions().dtype(kFloat64).requires_grad(true). A Dtype or a Device converts to one.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(Dtype dtype) : dtype_(dtype) {}                  // NOLINT: implicit by design
  TensorOptions(Device device) : device_(device) {}              // NOLINT
  TensorOptions(DeviceType device) : device_(Device(device)) {}  // NOLINT
  TensorOptions(Layout) {}                                       // NOLINT: kStrided only

  TensorOptions dtype(Dtype dtype) const {
    TensorOptions o = *this;
    o.dtype_ = dtype;
    return o;
  }
  TensorOptions requires_grad(bool requires_grad) const {
    TensorOptions o = *this;
    o.requires_grad_ = requires_grad;
    return o;
  }
  TensorOptions device(Device device) const {
    TensorOptions o = *this;
    o.device_ = device;
    return o;
  }
  /// Always kStrided (the only layout there is): accepted so that libtorch code compiles.
  TensorOptions layout(Layout) const { return *this; }
  Layout layout() const { return kStrided; }
  /// The dtype, or the default dtype (get_default_dtype()) when none was set.
  Dtype dtype() const { return dtype_.value_or(get_default_dtype()); }
  /// The dtype set, or fallback when none was (creation functions whose default is not the
  /// default floating dtype, e.g. randint's int64).
  Dtype dtype_or(Dtype fallback) const { return dtype_.value_or(fallback); }
  bool has_dtype() const { return dtype_.has_value(); }
  bool requires_grad() const { return requires_grad_; }
  Device device() const { return device_; }

 private:
  std::optional<Dtype> dtype_;
  bool requires_grad_ = false;
  Device device_{};
};

/// TensorOptions().dtype(d), as torch::dtype(d).
inline TensorOptions dtype(Dtype d) { return TensorOptions().dtype(d); }
/// TensorOptions().requires_grad(r), as torch::requires_grad(r).
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }
/// TensorOptions().layout(l), as torch::layout(l).
inline TensorOptions layout(Layout l) { return TensorOptions().layout(l); }
/// TensorOptions().device(d), as torch::device(d).
inline TensorOptions device(Device d) { return TensorOptions().device(d); }

}  // namespace minigrad
