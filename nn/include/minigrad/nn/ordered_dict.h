#pragma once
// OrderedDict: what named_parameters(), named_buffers(), named_children() and named_modules()
// return, as libtorch's torch::OrderedDict: insertion order, lookup by key, iteration.
//
//   OrderedDict<std::string, int> d = {{"a", 1}, {"b", 2}};  // a repeated key throws
//   auto params = model.named_parameters();
//   params["fc.weight"]                    // the tensor; throws naming the keys if absent
//   if (auto* b = params.find("fc.bias"))  // nullptr if absent
//   for (const auto& [name, p] : params)   // (key, value) in order; also item.key(), .value(),
//                                          // *item and item-> (the value, as libtorch's)
//   d.update(other);                       // inserts other's items; a repeated key throws
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minigrad/error.h"

namespace minigrad {

template <typename Key, typename Value>
class OrderedDict {
 public:
  /// A (key, value) pair: `item.key()`, `item.value()`, `*item` / `item->` (the value, as
  /// libtorch's), or `auto& [key, value] = item`.
  class Item : public std::pair<Key, Value> {
   public:
    Item(Key key, Value value) : std::pair<Key, Value>(std::move(key), std::move(value)) {}
    const Key& key() const noexcept { return this->first; }
    Value& value() noexcept { return this->second; }
    const Value& value() const noexcept { return this->second; }
    Value& operator*() noexcept { return this->second; }
    const Value& operator*() const noexcept { return this->second; }
    Value* operator->() noexcept { return &this->second; }
    const Value* operator->() const noexcept { return &this->second; }
    const std::pair<Key, Value>& pair() const noexcept { return *this; }
  };
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  /// key_description names the keys in errors: "[OrderedDict] parameter 'fc.w' is not defined".
  explicit OrderedDict(std::string key_description = "Key")
      : description_(std::move(key_description)) {}
  /// `OrderedDict<K, V> d = {{k1, v1}, {k2, v2}}`, in that order; a repeated key throws.
  OrderedDict(std::initializer_list<Item> items) : OrderedDict() {
    reserve(items.size());
    for (const Item& item : items) insert(item.key(), item.value());
  }
  OrderedDict(const OrderedDict&) = default;
  OrderedDict(OrderedDict&&) noexcept = default;
  OrderedDict& operator=(const OrderedDict&) = default;
  OrderedDict& operator=(OrderedDict&&) noexcept = default;
  ~OrderedDict() = default;

  const std::string& key_description() const noexcept { return description_; }

  /// The value of key; throws naming the keys there are when it is absent.
  Value& operator[](const Key& key) { return at(key); }
  const Value& operator[](const Key& key) const { return at(key); }
  /// Item i in insertion order; throws when out of range.
  Item& operator[](std::size_t index) { return items_[checked(index)]; }
  const Item& operator[](std::size_t index) const { return items_[checked(index)]; }
  Value& at(const Key& key) {
    Value* v = find(key);
    if (!v) throw_missing(key);
    return *v;
  }
  const Value& at(const Key& key) const {
    const Value* v = find(key);
    if (!v) throw_missing(key);
    return *v;
  }
  /// The value of key, or nullptr.
  Value* find(const Key& key) noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const noexcept {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const Key& key) const noexcept { return index_.count(key) != 0; }

  /// Appends (key, value); throws if key is already there ("Key 'a' already defined").
  Value& insert(Key key, Value value) {
    MG_CHECK(!contains(key), "OrderedDict", description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  /// Inserts every item of other, in its order; throws at the first key already here (the items
  /// before it stay inserted, as libtorch's).
  void update(const OrderedDict& other) {
    reserve(size() + other.size());
    for (const Item& item : other) insert(item.key(), item.value());
  }
  void update(OrderedDict&& other) {
    reserve(size() + other.size());
    for (Item& item : other) insert(item.key(), std::move(item.second));
  }
  /// Removes key; throws if absent.
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) throw_missing(key);
    const std::size_t at = it->second;
    index_.erase(it);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(at));
    for (auto& entry : index_)
      if (entry.second > at) --entry.second;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }
  void reserve(std::size_t capacity) {
    index_.reserve(capacity);
    items_.reserve(capacity);
  }

  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(items_.size());
    for (const Item& i : items_) out.push_back(i.first);
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(items_.size());
    for (const Item& i : items_) out.push_back(i.second);
    return out;
  }
  std::vector<std::pair<Key, Value>> pairs() const {
    return std::vector<std::pair<Key, Value>>(items_.begin(), items_.end());
  }
  const std::vector<Item>& items() const noexcept { return items_; }
  std::size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  bool empty() const noexcept { return items_.empty(); }
  Item& front() { return items_[nonempty("front")]; }
  const Item& front() const { return items_[nonempty("front")]; }
  Item& back() { return items_[nonempty("back") + items_.size() - 1]; }
  const Item& back() const { return items_[nonempty("back") + items_.size() - 1]; }
  Iterator begin() { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator begin() const { return items_.begin(); }
  ConstIterator end() const { return items_.end(); }

  /// Equal keys in the same order and equal values (libtorch's operator==; the key description
  /// is not compared). Needs Value == Value to give a bool.
  friend bool operator==(const OrderedDict& a, const OrderedDict& b) {
    return a.items_.size() == b.items_.size() &&
           std::equal(a.items_.begin(), a.items_.end(), b.items_.begin(),
                      [](const Item& x, const Item& y) {
                        return x.first == y.first && static_cast<bool>(x.second == y.second);
                      });
  }
  friend bool operator!=(const OrderedDict& a, const OrderedDict& b) { return !(a == b); }

 private:
  std::size_t checked(std::size_t index) const {
    MG_CHECK(index < items_.size(), "OrderedDict", "Index ", index, " is out of bounds (",
             items_.size(), " items)");
    return index;
  }
  std::size_t nonempty(const char* what) const {
    MG_CHECK(!items_.empty(), "OrderedDict", "Called ", what, "() on an empty OrderedDict");
    return 0;
  }
  [[noreturn]] void throw_missing(const Key& key) const {
    std::ostringstream known;
    for (std::size_t i = 0; i < items_.size() && i < 20; ++i)
      known << (i ? ", " : "") << items_[i].first;
    if (items_.size() > 20) known << ", ...";
    MG_ERROR("OrderedDict", description_, " '", key, "' is not defined",
             items_.empty() ? std::string(" (there are none)") : "; there are: " + known.str());
  }

  std::string description_;
  std::vector<Item> items_;
  std::unordered_map<Key, std::size_t> index_;
};

}  // namespace minigrad
