#include "minigrad/dtype.h"

#include "minigrad/error.h"

namespace minigrad {

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

}  // namespace minigrad
