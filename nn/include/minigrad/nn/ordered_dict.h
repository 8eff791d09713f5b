#pragma once
// OrderedDict: what named_parameters(), named_buffers(), named_children() and named_modules()
// return, as libtorch's torch::OrderedDict: insertion order, lookup by key, iteration.
//
//   auto params = model.named_parameters();
//   params["fc.weight"]                    // the tensor; throws naming the keys if absent
//   if (auto* b = params.find("fc.bias"))  // nullptr if absent
//   for (const auto& [name, p] : params)   // (key, value) in order; also item.key(), .value()
#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "minigrad/error.h"

namespace minigrad {

template <typename Key, typename Value>
class OrderedDict {
 public:
  /// A (key, value) pair: `item.key()`, `item.value()`, or `auto& [key, value] = item`.
  class Item : public std::pair<Key, Value> {
   public:
    Item(Key key, Value value) : std::pair<Key, Value>(std::move(key), std::move(value)) {}
    const Key& key() const { return this->first; }
    Value& value() { return this->second; }
    const Value& value() const { return this->second; }
    const std::pair<Key, Value>& pair() const { return *this; }
  };
  using Iterator = typename std::vector<Item>::iterator;
  using ConstIterator = typename std::vector<Item>::const_iterator;

  /// key_description names the keys in errors: "[OrderedDict] no parameter named 'fc.w'".
  explicit OrderedDict(std::string key_description = "key")
      : description_(std::move(key_description)) {}

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
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }

  /// Appends (key, value); throws if key is already there.
  Value& insert(Key key, Value value) {
    MG_CHECK(!contains(key), "OrderedDict", description_, " '", key, "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  /// Removes key; throws if absent.
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) throw_missing(key);
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(it->second));
    index_.clear();
    for (std::size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const Item& i : items_) out.push_back(i.first);
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    for (const Item& i : items_) out.push_back(i.second);
    return out;
  }
  const std::vector<Item>& items() const { return items_; }
  std::size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  bool empty() const { return items_.empty(); }
  Item& front() { return items_[checked(0)]; }
  const Item& front() const { return items_[checked(0)]; }
  Item& back() { return items_[checked(items_.size() - 1)]; }
  const Item& back() const { return items_[checked(items_.size() - 1)]; }
  Iterator begin() { return items_.begin(); }
  Iterator end() { return items_.end(); }
  ConstIterator begin() const { return items_.begin(); }
  ConstIterator end() const { return items_.end(); }

 private:
  std::size_t checked(std::size_t index) const {
    MG_CHECK(index < items_.size(), "OrderedDict", "index ", index, " is out of range for ",
             items_.size(), " items");
    return index;
  }
  [[noreturn]] void throw_missing(const Key& key) const {
    std::string known;
    for (std::size_t i = 0; i < items_.size() && i < 20; ++i)
      known += (i ? ", " : "") + std::string(items_[i].first);
    if (items_.size() > 20) known += ", ...";
    MG_ERROR("OrderedDict", "no ", description_, " named '", key, "'",
             items_.empty() ? std::string(" (there are none)") : "; there are: " + known);
  }

  std::string description_;
  std::vector<Item> items_;
  std::unordered_map<Key, std::size_t> index_;
};

}  // namespace minigrad
