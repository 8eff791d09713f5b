#pragma once
// ArrayRef<T>: a non-owning view of a contiguous run of T, as libtorch's c10::ArrayRef (what
// at::TensorList and the `ArrayRef<double>` of torch::tensor are). It converts implicitly from a
// std::vector, a std::array, a C array, a braced list and one element, and explicitly from a
// pointer and a length (or two pointers). It never owns: the values must outlive it (a braced
// list lives until the end of the full expression, so pass it straight to a call).
//
//   std::vector<double> v{1, 2, 3};
//   mg::ArrayRef<double> r(v);                 // r.size() == 3, r[0] == 1
//   Tensor t = mg::tensor(r);                  // (minigrad/ops/out.h) a 1-D tensor of v
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <type_traits>
#include <vector>

#include "minigrad/error.h"

namespace minigrad {

template <typename T>
class ArrayRef {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;
  using size_type = std::size_t;

  constexpr ArrayRef() = default;
  /// One element (libtorch's ArrayRef(const T&)).
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT: implicit, as c10's
  constexpr ArrayRef(const T* data, std::size_t length) : data_(data), size_(length) {}
  constexpr ArrayRef(const T* begin, const T* end)
      : data_(begin), size_(static_cast<std::size_t>(end - begin)) {}
  template <typename A>
  ArrayRef(const std::vector<T, A>& v)  // NOLINT: implicit, as c10's
      : data_(v.data()), size_(v.size()) {
    static_assert(!std::is_same_v<T, bool>,
                  "ArrayRef<bool> cannot be constructed from a std::vector<bool> bitfield");
  }
  template <std::size_t N>
  constexpr ArrayRef(const std::array<T, N>& a) : data_(a.data()), size_(N) {}  // NOLINT
  template <std::size_t N>
  constexpr ArrayRef(const T (&a)[N]) : data_(a), size_(N) {}  // NOLINT
  constexpr ArrayRef(const std::initializer_list<T>& list)     // NOLINT
      : data_(first(list)), size_(list.size()) {}
  /// A Shape's dims (`IntArrayRef sizes = x.sizes()`).
  template <typename U = T>
  requires std::is_same_v<U, std::int64_t> ArrayRef(const Shape& shape)  // NOLINT: implicit
      : data_(shape.data()), size_(shape.size()) {}

  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& operator[](std::size_t i) const { return data_[i]; }
  /// Bounds-checked element: "[ArrayRef] invalid index 3 for a list of 2".
  const T& at(std::size_t i) const {
    MG_CHECK(i < size_, "ArrayRef", "invalid index ", i, " for a list of ", size_);
    return data_[i];
  }
  const T& front() const {
    MG_CHECK(!empty(), "ArrayRef", "attempted to access front() of an empty list");
    return data_[0];
  }
  const T& back() const {
    MG_CHECK(!empty(), "ArrayRef", "attempted to access back() of an empty list");
    return data_[size_ - 1];
  }
  /// The m elements from n on; slice(n): from n to the end.
  ArrayRef slice(std::size_t n, std::size_t m) const {
    MG_CHECK(n + m <= size_, "ArrayRef", "invalid slice, N = ", n, "; M = ", m, "; size = ", size_);
    return ArrayRef(data_ + n, m);
  }
  ArrayRef slice(std::size_t n) const {
    MG_CHECK(n <= size_, "ArrayRef", "invalid slice, N = ", n, "; size = ", size_);
    return slice(n, size_ - n);
  }
  bool equals(ArrayRef other) const {
    if (size_ != other.size_) return false;
    for (std::size_t i = 0; i < size_; ++i)
      if (!(data_[i] == other.data_[i])) return false;
    return true;
  }
  /// A copy of the elements.
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

 private:
  /// The list's first element (it lives until the end of the full expression that made it).
  static constexpr const T* first(const std::initializer_list<T>& list) {
    return list.size() == 0 ? nullptr : list.begin();
  }
  const T* data_ = nullptr;
  std::size_t size_ = 0;
};

template <typename T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  return a.equals(b);
}
template <typename T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
  return !a.equals(b);
}
template <typename T>
bool operator==(ArrayRef<T> a, const std::vector<T>& b) {
  return a.equals(b);
}
template <typename T>
bool operator==(const std::vector<T>& a, ArrayRef<T> b) {
  return b.equals(a);
}

/// Prints as c10's: [1, 2, 3].
template <typename T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> list) {
  os << '[';
  for (std::size_t i = 0; i < list.size(); ++i) os << (i ? ", " : "") << list[i];
  return os << ']';
}

/// libtorch's IntArrayRef: sizes as a list (`ASSERT_EQ(y.sizes(), IntArrayRef({2, 3}))`).
using IntArrayRef = ArrayRef<std::int64_t>;
/// A Shape against an IntArrayRef (and, C++20's rewriting, the other way round and !=); a
/// template, so that a std::vector still compares as a Shape does.
template <typename A>
requires std::same_as<A, IntArrayRef>
bool operator==(const Shape& a, const A& b) { return IntArrayRef(a).equals(b); }

template <typename T>
ArrayRef<T> makeArrayRef(const std::vector<T>& v) {
  return v;
}
template <typename T>
ArrayRef<T> makeArrayRef(const T* data, std::size_t length) {
  return ArrayRef<T>(data, length);
}

}  // namespace minigrad
