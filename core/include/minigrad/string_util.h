#pragma once
// Small utilities libtorch programs and tests reach for, under c10's names: `str(parts...)`
// (c10::str: the parts streamed into one string, a Shape as `[2, 3]`) and `irange(n)` /
// `irange(begin, end)` (c10::irange: the integers of [begin, end) for a range-for; none when
// end <= begin).
#include <concepts>
#include <sstream>
#include <string>

namespace minigrad {

/// c10::str: every part written with operator<< into one string.
template <typename... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

/// The integers of [begin, end) in order, for `for (auto i : irange(n))`.
template <std::integral I>
class IntegerRange {
 public:
  class iterator {
   public:
    explicit iterator(I value) : value_(value) {}
    I operator*() const { return value_; }
    iterator& operator++() {
      ++value_;
      return *this;
    }
    bool operator==(const iterator& other) const { return value_ == other.value_; }

   private:
    I value_;
  };
  IntegerRange(I begin, I end) : begin_(begin), end_(end < begin ? begin : end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  I begin_, end_;
};

/// c10::irange(end): 0, 1, ..., end - 1 (nothing when end <= 0), of end's type.
template <std::integral I>
IntegerRange<I> irange(I end) {
  return IntegerRange<I>(I{0}, end);
}
/// c10::irange(begin, end): begin, ..., end - 1, of end's type.
template <std::integral I1, std::integral I2>
IntegerRange<I2> irange(I1 begin, I2 end) {
  return IntegerRange<I2>(static_cast<I2>(begin), end);
}

}  // namespace minigrad
