#include "minigrad/dtype.h"

#include <atomic>
#include <ostream>

#include "minigrad/error.h"

namespace minigrad {

namespace {
std::atomic<Dtype> default_dtype{Dtype::Float32};
}

Dtype get_default_dtype() { return default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(Dtype dtype) {
  MG_CHECK(is_floating_point(dtype), "set_default_dtype",
           "only floating-point types are supported as the default type, got ", dtype_name(dtype));
  default_dtype.store(dtype, std::memory_order_relaxed);
}

std::size_t element_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bool:
      return sizeof(bool);
    case Dtype::Int64:
      return sizeof(std::int64_t);
    case Dtype::Float32:
      return sizeof(float);
    case Dtype::Float64:
      return sizeof(double);
  }
  MG_ERROR("element_size", "unknown dtype ", static_cast<int>(dtype));
}

const char* dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::Bool:
      return "bool";
    case Dtype::Int64:
      return "int64";
    case Dtype::Float32:
      return "float32";
    case Dtype::Float64:
      return "float64";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, Dtype dtype) {
  // libtorch's TypeMeta names (what `std::cout << x.dtype()` prints in libtorch 1.13).
  switch (dtype) {
    case Dtype::Bool:
      return os << "bool";
    case Dtype::Int64:
      return os << "long int";
    case Dtype::Float32:
      return os << "float";
    case Dtype::Float64:
      return os << "double";
  }
  return os << "unknown";
}

}  // namespace minigrad
