#pragma once
// Shape: a tensor's sizes or strides, a vector of int64 that keeps up to six of them inline.
//
// Note [Inline shapes]
// Every tensor has a shape and strides, and every op makes a few more (the output's, broadcast
// shapes, a node's output shape). As std::vector each one was a malloc and a free: a quarter of a
// small training step's time. Shape keeps up to kInline dims in place and only goes to the heap
// above that (PyTorch's SizesAndStrides and DimVector do the same with five). It has the parts of
// std::vector<std::int64_t>'s interface that code uses on shapes, converts to and from it, and
// compares equal to a Shape with the same elements, so `Shape s = {2, 3}`, `t.shape()[0]`,
// `s.push_back(4)` and passing a std::vector<std::int64_t> all read as before.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace minigrad {
namespace detail {
/// Throws "[Shape.at] index 5 is out of range for a shape of 2 dims" (a minigrad::Error).
[[noreturn]] void throw_shape_index(std::size_t i, std::size_t size);
/// ceil(n / d) for n >= 0 and d > 0: what (n + d - 1) / d means, without its overflow when d is
/// near the type's maximum (a slice with step INT64_MAX, chunk(x, INT64_MAX), a DataLoader with a
/// huge batch size). Every "how many pieces" count in minigrad goes through it.
template <std::integral T>
constexpr T ceil_div(T n, T d) {
  return static_cast<T>(n / d + (n % d != 0 ? 1 : 0));
}
}  // namespace detail

/// An integer given where libtorch takes an IntArrayRef of one size (`torch::randn(5)` is a
/// tensor of shape [5]): the factories' one-int overloads accept it. A template, so that `{}` and
/// `{5}` still mean a Shape (0-dim and [5]); not bool.
template <typename I>
concept SizeInteger = std::integral<I> && !std::same_as<std::remove_cv_t<I>, bool>;

class Shape {
 public:
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = value_type&;
  using const_reference = const value_type&;
  using pointer = value_type*;
  using const_pointer = const value_type*;
  using iterator = value_type*;
  using const_iterator = const value_type*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  /// Dims kept without a heap allocation.
  static constexpr size_type kInline = 6;

  Shape() noexcept = default;
  Shape(size_type n, value_type value) { assign(n, value); }
  explicit Shape(size_type n) { assign(n, 0); }
  Shape(std::initializer_list<value_type> values) { assign(values.begin(), values.end()); }
  template <typename It>
  requires(!std::is_integral_v<It>) Shape(It first, It last) { assign(first, last); }
  Shape(const std::vector<value_type>& values) {  // NOLINT: implicit, as the vector it replaces
    assign(values.begin(), values.end());
  }
  Shape(const Shape& other) { assign(other.begin(), other.end()); }
  Shape(Shape&& other) noexcept { take(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<value_type> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<value_type>() const { return {begin(), end()}; }  // NOLINT: implicit

  // Size and capacity.
  size_type size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_type capacity() const noexcept { return capacity_; }
  void reserve(size_type n) {
    if (n > capacity_) grow(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_type n, value_type value = 0) {
    reserve(n);
    for (size_type i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }

  // Elements.
  value_type* data() noexcept { return data_; }
  const value_type* data() const noexcept { return data_; }
  value_type& operator[](size_type i) noexcept { return data_[i]; }
  const value_type& operator[](size_type i) const noexcept { return data_[i]; }
  value_type& at(size_type i) {
    if (i >= size_) detail::throw_shape_index(i, size_);
    return data_[i];
  }
  const value_type& at(size_type i) const {
    if (i >= size_) detail::throw_shape_index(i, size_);
    return data_[i];
  }
  value_type& front() noexcept { return data_[0]; }
  const value_type& front() const noexcept { return data_[0]; }
  value_type& back() noexcept { return data_[size_ - 1]; }
  const value_type& back() const noexcept { return data_[size_ - 1]; }

  iterator begin() noexcept { return data_; }
  iterator end() noexcept { return data_ + size_; }
  const_iterator begin() const noexcept { return data_; }
  const_iterator end() const noexcept { return data_ + size_; }
  const_iterator cbegin() const noexcept { return data_; }
  const_iterator cend() const noexcept { return data_ + size_; }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }

  // Modifiers.
  void assign(size_type n, value_type value) {
    size_ = 0;
    resize(n, value);
  }
  template <typename It>
  requires(!std::is_integral_v<It>) void assign(It first, It last) {
    size_ = 0;
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<It>::iterator_category>) {
      reserve(static_cast<size_type>(std::distance(first, last)));
    }
    for (; first != last; ++first) push_back(static_cast<value_type>(*first));
  }
  void push_back(value_type value) {
    if (size_ == capacity_) grow(capacity_ * 2);
    data_[size_++] = value;
  }
  value_type& emplace_back(value_type value) {
    push_back(value);
    return back();
  }
  void pop_back() noexcept { --size_; }
  iterator insert(const_iterator pos, value_type value) { return insert(pos, 1, value); }
  iterator insert(const_iterator pos, size_type n, value_type value) {
    auto at = static_cast<size_type>(pos - data_);
    reserve(size_ + n);
    for (size_type i = size_; i-- > at;) data_[i + n] = data_[i];
    for (size_type i = at; i < at + n; ++i) data_[i] = value;
    size_ += n;
    return data_ + at;
  }
  template <typename It>
  requires(!std::is_integral_v<It>) iterator insert(const_iterator pos, It first, It last) {
    auto at = static_cast<size_type>(pos - data_);
    Shape inserted(first, last);  // first copy: [first, last) may point into *this
    Shape tail(data_ + at, data_ + size_);
    size_ = at;
    reserve(at + inserted.size() + tail.size());
    for (value_type v : inserted) push_back(v);
    for (value_type v : tail) push_back(v);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<value_type> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    auto at = static_cast<size_type>(first - data_);
    auto n = static_cast<size_type>(last - first);
    for (size_type i = at + n; i < size_; ++i) data_[i - n] = data_[i];
    size_ -= n;
    return data_ + at;
  }
  void swap(Shape& other) noexcept {
    Shape tmp(static_cast<Shape&&>(other));
    other = static_cast<Shape&&>(*this);
    *this = static_cast<Shape&&>(tmp);
  }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    if (a.size_ != b.size_) return false;
    for (size_type i = 0; i < a.size_; ++i)
      if (a.data_[i] != b.data_[i]) return false;
    return true;
  }
  friend bool operator<(const Shape& a, const Shape& b) noexcept {
    for (size_type i = 0; i < a.size_ && i < b.size_; ++i)
      if (a.data_[i] != b.data_[i]) return a.data_[i] < b.data_[i];
    return a.size_ < b.size_;
  }
  friend bool operator>(const Shape& a, const Shape& b) noexcept { return b < a; }
  friend bool operator<=(const Shape& a, const Shape& b) noexcept { return !(b < a); }
  friend bool operator>=(const Shape& a, const Shape& b) noexcept { return !(a < b); }

 private:
  bool on_heap() const noexcept { return data_ != inline_; }
  void grow(size_type n) {
    if (n < 2 * kInline) n = 2 * kInline;
    auto* bigger = new value_type[n];
    for (size_type i = 0; i < size_; ++i) bigger[i] = data_[i];
    release();
    data_ = bigger;
    capacity_ = n;
  }
  void release() noexcept {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
  }
  // Takes other's elements (its heap block if it has one) and leaves it empty; *this is empty.
  void take(Shape& other) noexcept {
    if (other.on_heap()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
      other.data_ = other.inline_;
      other.capacity_ = kInline;
    } else {
      for (size_type i = 0; i < other.size_; ++i) inline_[i] = other.data_[i];
    }
    size_ = other.size_;
    other.size_ = 0;
  }

  value_type* data_ = inline_;
  size_type size_ = 0;
  size_type capacity_ = kInline;
  value_type inline_[kInline];  // not zeroed: only [0, size_) is ever read
};

inline void swap(Shape& a, Shape& b) noexcept { a.swap(b); }

/// Prints a shape as libtorch prints its IntArrayRef (`std::cout << x.sizes()`): `[2, 3]`, `[]`
/// for a 0-d tensor. (Error messages write shapes as Python does, `(2, 3)`.)
std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace minigrad
