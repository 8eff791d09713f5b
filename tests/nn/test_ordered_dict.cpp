// OrderedDict as libtorch's: the cases of libtorch 1.13's test/cpp/api/ordered_dict.cpp, ported
// by renaming torch:: -> minigrad:: (ASSERT_THROWS_WITH -> a substring check of the message),
// then what libtorch has beyond its tests: update(&&), pairs(), reserve(), operator==, Item's
// operator* / operator->, and ours: a repeated key in a brace list throws, structured bindings.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"
#include "nn/module_test_helpers.h"

namespace {

template <typename T>
using OrderedDict = minigrad::OrderedDict<std::string, T>;
using minigrad::testing::error_of;

// libtorch's ASSERT_THROWS_WITH: the statement throws an error whose message contains substring.
#define ASSERT_THROWS_WITH(statement, substring)                                     \
  ASSERT_NE(error_of([&] { (void)(statement); }).find(substring), std::string::npos) \
      << error_of([&] { (void)(statement); })

TEST(OrderedDictTest, IsEmptyAfterDefaultConstruction) {
  OrderedDict<int> dict;
  ASSERT_EQ(dict.key_description(), "Key");
  ASSERT_TRUE(dict.is_empty());
  ASSERT_EQ(dict.size(), 0);
}

TEST(OrderedDictTest, InsertAddsElementsWhenTheyAreYetNotPresent) {
  OrderedDict<int> dict;
  dict.insert("a", 1);
  dict.insert("b", 2);
  ASSERT_EQ(dict.size(), 2);
}

TEST(OrderedDictTest, GetReturnsValuesWhenTheyArePresent) {
  OrderedDict<int> dict;
  dict.insert("a", 1);
  dict.insert("b", 2);
  ASSERT_EQ(dict["a"], 1);
  ASSERT_EQ(dict["b"], 2);
}

TEST(OrderedDictTest, GetThrowsWhenPassedKeysThatAreNotPresent) {
  OrderedDict<int> dict;
  dict.insert("a", 1);
  dict.insert("b", 2);
  ASSERT_THROWS_WITH(dict["foo"], "Key 'foo' is not defined");
  ASSERT_THROWS_WITH(dict[""], "Key '' is not defined");
}

TEST(OrderedDictTest, CanInitializeFromList) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict.size(), 2);
  ASSERT_EQ(dict["a"], 1);
  ASSERT_EQ(dict["b"], 2);
}

TEST(OrderedDictTest, InsertThrowsWhenPassedElementsThatArePresent) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_THROWS_WITH(dict.insert("a", 1), "Key 'a' already defined");
  ASSERT_THROWS_WITH(dict.insert("b", 1), "Key 'b' already defined");
}

TEST(OrderedDictTest, FrontReturnsTheFirstItem) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict.front().key(), "a");
  ASSERT_EQ(dict.front().value(), 1);
}

TEST(OrderedDictTest, FrontThrowsWhenEmpty) {
  OrderedDict<int> dict;
  ASSERT_THROWS_WITH(dict.front(), "Called front() on an empty OrderedDict");
}

TEST(OrderedDictTest, BackReturnsTheLastItem) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict.back().key(), "b");
  ASSERT_EQ(dict.back().value(), 2);
}

TEST(OrderedDictTest, BackThrowsWhenEmpty) {
  OrderedDict<int> dict;
  ASSERT_THROWS_WITH(dict.back(), "Called back() on an empty OrderedDict");
}

TEST(OrderedDictTest, FindReturnsPointersToValuesWhenPresent) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_NE(dict.find("a"), nullptr);
  ASSERT_EQ(*dict.find("a"), 1);
  ASSERT_NE(dict.find("b"), nullptr);
  ASSERT_EQ(*dict.find("b"), 2);
}

TEST(OrderedDictTest, FindReturnsNullPointersWhenPasesdKeysThatAreNotPresent) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict.find("bar"), nullptr);
  ASSERT_EQ(dict.find(""), nullptr);
}

TEST(OrderedDictTest, SubscriptOperatorThrowsWhenPassedKeysThatAreNotPresent) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict["a"], 1);
  ASSERT_EQ(dict["b"], 2);
}

TEST(OrderedDictTest, SubscriptOperatorReturnsItemsPositionallyWhenPassedIntegers) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict[0].key(), "a");
  ASSERT_EQ(dict[0].value(), 1);
  ASSERT_EQ(dict[1].key(), "b");
  ASSERT_EQ(dict[1].value(), 2);
}

TEST(OrderedDictTest, SubscriptOperatorsThrowswhenPassedKeysThatAreNotPresent) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_THROWS_WITH(dict["foo"], "Key 'foo' is not defined");
  ASSERT_THROWS_WITH(dict[""], "Key '' is not defined");
}

TEST(OrderedDictTest, UpdateInsertsAllItemsFromAnotherOrderedDict) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  OrderedDict<int> dict2 = {{"c", 3}};
  dict2.update(dict);
  ASSERT_EQ(dict2.size(), 3);
  ASSERT_NE(dict2.find("a"), nullptr);
  ASSERT_NE(dict2.find("b"), nullptr);
  ASSERT_NE(dict2.find("c"), nullptr);
}

TEST(OrderedDictTest, UpdateAlsoChecksForDuplicates) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  OrderedDict<int> dict2 = {{"a", 1}};
  ASSERT_THROWS_WITH(dict2.update(dict), "Key 'a' already defined");
}

TEST(OrderedDictTest, CanIterateItems) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  auto iterator = dict.begin();
  ASSERT_NE(iterator, dict.end());
  ASSERT_EQ(iterator->key(), "a");
  ASSERT_EQ(iterator->value(), 1);
  ++iterator;
  ASSERT_NE(iterator, dict.end());
  ASSERT_EQ(iterator->key(), "b");
  ASSERT_EQ(iterator->value(), 2);
  ++iterator;
  ASSERT_EQ(iterator, dict.end());
}

TEST(OrderedDictTest, ClearMakesTheDictEmpty) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_FALSE(dict.is_empty());
  dict.clear();
  ASSERT_TRUE(dict.is_empty());
}

TEST(OrderedDictTest, CanCopyConstruct) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  OrderedDict<int> copy = dict;
  ASSERT_EQ(copy.size(), 2);
  ASSERT_EQ(*copy[0], 1);
  ASSERT_EQ(*copy[1], 2);
}

TEST(OrderedDictTest, CanCopyAssign) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  OrderedDict<int> copy = {{"c", 1}};
  ASSERT_NE(copy.find("c"), nullptr);
  copy = dict;
  ASSERT_EQ(copy.size(), 2);
  ASSERT_EQ(*copy[0], 1);
  ASSERT_EQ(*copy[1], 2);
  ASSERT_EQ(copy.find("c"), nullptr);
}

TEST(OrderedDictTest, CanMoveConstruct) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  OrderedDict<int> copy = std::move(dict);
  ASSERT_EQ(copy.size(), 2);
  ASSERT_EQ(*copy[0], 1);
  ASSERT_EQ(*copy[1], 2);
}

TEST(OrderedDictTest, CanMoveAssign) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  OrderedDict<int> copy = {{"c", 1}};
  ASSERT_NE(copy.find("c"), nullptr);
  copy = std::move(dict);
  ASSERT_EQ(copy.size(), 2);
  ASSERT_EQ(*copy[0], 1);
  ASSERT_EQ(*copy[1], 2);
  ASSERT_EQ(copy.find("c"), nullptr);
}

TEST(OrderedDictTest, CanInsertWithBraces) {
  OrderedDict<std::pair<int, int>> dict;
  dict.insert("a", {1, 2});
  ASSERT_FALSE(dict.is_empty());
  ASSERT_EQ(dict["a"].first, 1);
  ASSERT_EQ(dict["a"].second, 2);
}

TEST(OrderedDictTest, ErrorMessagesIncludeTheKeyDescription) {
  OrderedDict<int> dict("Penguin");
  ASSERT_EQ(dict.key_description(), "Penguin");
  dict.insert("a", 1);
  ASSERT_FALSE(dict.is_empty());
  ASSERT_THROWS_WITH(dict["b"], "Penguin 'b' is not defined");
  ASSERT_THROWS_WITH(dict.insert("a", 1), "Penguin 'a' already defined");
}

TEST(OrderedDictTest, KeysReturnsAllKeys) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict.keys(), std::vector<std::string>({"a", "b"}));
}

TEST(OrderedDictTest, ValuesReturnsAllValues) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  ASSERT_EQ(dict.values(), std::vector<int>({1, 2}));
}

TEST(OrderedDictTest, ItemsReturnsAllItems) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}};
  std::vector<OrderedDict<int>::Item> items = dict.items();
  ASSERT_EQ(items.size(), 2);
  ASSERT_EQ(items[0].key(), "a");
  ASSERT_EQ(items[0].value(), 1);
  ASSERT_EQ(items[1].key(), "b");
  ASSERT_EQ(items[1].value(), 2);
}

// Beyond libtorch's test file: the rest of libtorch's header, and ours.

TEST(OrderedDictMore, ARepeatedKeyInABraceListThrows) {
  // libtorch keeps both items and indexes the first (a silently inconsistent dict); we refuse.
  EXPECT_EQ(error_of([] {
              OrderedDict<int> d = {{"a", 1}, {"b", 2}, {"a", 3}};
            }),
            "[OrderedDict] Key 'a' already defined");
}

TEST(OrderedDictMore, UpdateFromATemporaryMovesItsItems) {
  OrderedDict<std::vector<int>> dict = {{"a", {1}}};
  OrderedDict<std::vector<int>> other = {{"b", {2, 3}}, {"c", {}}};
  dict.update(std::move(other));
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(dict["b"], (std::vector<int>{2, 3}));
  // The items before a repeated key stay inserted, as libtorch's.
  EXPECT_EQ(error_of([&] {
              dict.update(OrderedDict<std::vector<int>>{{"d", {}}, {"a", {}}});
            }),
            "[OrderedDict] Key 'a' already defined");
  EXPECT_EQ(dict.size(), 4u);
}

TEST(OrderedDictMore, ItemDereferencesToItsValue) {
  OrderedDict<std::string> dict = {{"a", "xy"}};
  auto& item = dict[0];
  EXPECT_EQ(*item, "xy");
  EXPECT_EQ(item->size(), 2u);
  *item = "z";
  EXPECT_EQ(dict["a"], "z");
  const auto& citem = dict.items()[0];
  EXPECT_EQ(citem->size(), 1u);
  EXPECT_EQ(citem.pair(), (std::pair<std::string, std::string>{"a", "z"}));
  // Structured bindings still see (key, value).
  for (auto& [key, value] : dict) value += key;
  EXPECT_EQ(dict["a"], "za");
}

TEST(OrderedDictMore, PairsReserveEqualityAndErase) {
  OrderedDict<int> dict = {{"a", 1}, {"b", 2}, {"c", 3}};
  EXPECT_EQ(dict.pairs(), (std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 2}, {"c", 3}}));
  OrderedDict<int> same("Other");
  same.reserve(3);
  same.insert("a", 1);
  same.insert("b", 2);
  same.insert("c", 3);
  EXPECT_TRUE(dict == same);  // the key description is not compared, as libtorch's
  same["c"] = 4;
  EXPECT_FALSE(dict == same);
  EXPECT_TRUE((dict != OrderedDict<int>{{"b", 2}, {"a", 1}, {"c", 3}}));  // order counts
  dict.erase("b");
  EXPECT_EQ(dict.keys(), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(dict["c"], 3);  // the index after the erased item moved down
  EXPECT_EQ(dict[1].key(), "c");
  EXPECT_EQ(error_of([&] { dict.erase("b"); }),
            "[OrderedDict] Key 'b' is not defined; there are: a, c");
  EXPECT_EQ(error_of([&] { dict[std::size_t{2}]; }),
            "[OrderedDict] Index 2 is out of bounds (2 items)");
}

}  // namespace
