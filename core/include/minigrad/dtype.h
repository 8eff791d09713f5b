#pragma once
// Element types and PyTorch's type promotion.
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace minigrad {

/// The element type of a tensor. Ordered by promotion category: bool < int64 < float32 < float64.
enum class Dtype : std::int8_t { Bool = 0, Int64 = 1, Float32 = 2, Float64 = 3 };

inline constexpr Dtype kBool = Dtype::Bool;
inline constexpr Dtype kInt64 = Dtype::Int64;
inline constexpr Dtype kLong = Dtype::Int64;
/// libtorch's name for the dtype enum (`x.scalar_type() == torch::kFloat`).
using ScalarType = Dtype;
inline constexpr Dtype kFloat32 = Dtype::Float32;
inline constexpr Dtype kFloat = Dtype::Float32;
inline constexpr Dtype kFloat64 = Dtype::Float64;
inline constexpr Dtype kDouble = Dtype::Float64;

/// The dtype of floating-point tensors made without one (torch.get_default_dtype(): float32
/// unless set_default_dtype changed it): tensor({1.5}), zeros, rand, arange(0.5), and
/// `int_tensor * 0.5`. Process-wide, as PyTorch's.
Dtype get_default_dtype();
/// Sets it (torch.set_default_dtype); only float32 and float64 are accepted.
void set_default_dtype(Dtype dtype);

/// Bytes per element.
std::size_t element_size(Dtype dtype);
/// "float32", "float64", "int64" or "bool".
const char* dtype_name(Dtype dtype);
/// Prints a dtype as libtorch prints `x.dtype()`: `float`, `double`, `long int` or `bool`.
/// (libtorch prints its ScalarType, `torch::kFloat`, as `Float`; minigrad has one type for both
/// and prints the one `std::cout << x.dtype()` shows. dtype_name gives Python's `float32`.)
std::ostream& operator<<(std::ostream& os, Dtype dtype);
/// True for float32 and float64.
inline bool is_floating_point(Dtype dtype) {
  return dtype == Dtype::Float32 || dtype == Dtype::Float64;
}
/// torch.promote_types: the smallest dtype both a and b convert to without losing their category.
inline Dtype promote_types(Dtype a, Dtype b) { return a > b ? a : b; }

/// A number passed where a tensor could be (`x + 2`, `x * 0.5`), remembering whether it was
/// written as a bool, an integer or a floating-point value, as c10::Scalar does: `int_tensor + 2`
/// stays int64 while `int_tensor + 2.0` becomes float32.
class Scalar {
 public:
  enum class Kind : std::int8_t { Bool, Int, Float };
  Scalar(bool v) : d_(v ? 1.0 : 0.0), i_(v ? 1 : 0), kind_(Kind::Bool) {}
  Scalar(double v) : d_(v), i_(static_cast<std::int64_t>(0)), kind_(Kind::Float) {}
  Scalar(float v) : Scalar(static_cast<double>(v)) {}
  Scalar(int v) : Scalar(static_cast<long long>(v)) {}
  Scalar(long v) : Scalar(static_cast<long long>(v)) {}
  Scalar(long long v)
      : d_(static_cast<double>(v)), i_(static_cast<std::int64_t>(v)), kind_(Kind::Int) {}
  Scalar(unsigned v) : Scalar(static_cast<long long>(v)) {}

  double to_double() const { return d_; }
  /// The value as an integer; a float is truncated (NaN and out-of-range give INT64_MIN).
  std::int64_t to_int() const {
    if (kind_ != Kind::Float) return i_;
    return d_ >= -9223372036854775808.0 && d_ < 9223372036854775808.0
               ? static_cast<std::int64_t>(d_)
               : INT64_MIN;
  }
  Kind kind() const { return kind_; }
  /// The dtype PyTorch gives this number when it meets a tensor: the default dtype (float32),
  /// int64 or bool.
  Dtype default_dtype() const {
    return kind_ == Kind::Float ? get_default_dtype() : (kind_ == Kind::Int ? kInt64 : kBool);
  }

 private:
  double d_;
  std::int64_t i_;
  Kind kind_;
};

}  // namespace minigrad
