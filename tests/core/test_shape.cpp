// Shape (Note [Inline shapes], shape.h): behaves as the std::vector<int64_t> it replaced, inline
// up to six dims and on the heap above that.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"

namespace mg = minigrad;
using mg::Shape;

namespace {

std::vector<std::int64_t> vec(const Shape& s) { return s; }

TEST(Shape, ConstructsAsAVector) {
  EXPECT_TRUE(Shape().empty());
  EXPECT_EQ(vec(Shape{2, 3}), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(vec(Shape(3, 7)), (std::vector<std::int64_t>{7, 7, 7}));
  EXPECT_EQ(vec(Shape(2)), (std::vector<std::int64_t>{0, 0}));
  std::vector<std::int64_t> v{1, 2, 3, 4, 5, 6, 7, 8};
  Shape from_vector = v;
  EXPECT_EQ(vec(from_vector), v);
  EXPECT_EQ(vec(Shape(v.begin() + 1, v.end() - 1)), (std::vector<std::int64_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Shape({1, 2}), Shape({1, 2}));
  EXPECT_NE(Shape({1, 2}), Shape({1, 2, 3}));
  EXPECT_NE(Shape({1, 2}), Shape({1, 3}));
  EXPECT_LT(Shape({1, 2}), Shape({1, 3}));
  EXPECT_LT(Shape({1, 2}), Shape({1, 2, 0}));
}

TEST(Shape, GrowsOntoTheHeapAndBack) {
  Shape s;
  for (std::int64_t i = 0; i < 20; ++i) s.push_back(i);
  ASSERT_EQ(s.size(), 20u);
  EXPECT_GE(s.capacity(), 20u);
  for (std::int64_t i = 0; i < 20; ++i) EXPECT_EQ(s[static_cast<std::size_t>(i)], i);
  EXPECT_EQ(s.front(), 0);
  EXPECT_EQ(s.back(), 19);
  EXPECT_EQ(s.at(19), 19);
  EXPECT_THROW((void)s.at(20), minigrad::Error);  // a minigrad::Error, not std::out_of_range

  // Copies and moves, inline and on the heap, in every combination.
  Shape small{4, 5};
  Shape big = s;
  EXPECT_EQ(big, s);
  Shape moved_big = std::move(big);
  EXPECT_EQ(moved_big, s);
  EXPECT_TRUE(big.empty());  // NOLINT(bugprone-use-after-move): a moved-from Shape is empty
  Shape moved_small = std::move(small);
  EXPECT_EQ(moved_small, Shape({4, 5}));
  moved_small = s;
  EXPECT_EQ(moved_small, s);
  moved_big = Shape{9};
  EXPECT_EQ(moved_big, Shape({9}));
  swap(moved_big, moved_small);
  EXPECT_EQ(moved_big, s);
  EXPECT_EQ(moved_small, Shape({9}));
  moved_small = moved_small;  // NOLINT: self-assignment keeps the value
  EXPECT_EQ(moved_small, Shape({9}));
}

TEST(Shape, InsertEraseResizeAsAVector) {
  Shape s{1, 2, 3};
  s.insert(s.begin() + 1, 9);
  EXPECT_EQ(s, Shape({1, 9, 2, 3}));
  s.insert(s.end(), 2, 7);
  EXPECT_EQ(s, Shape({1, 9, 2, 3, 7, 7}));
  s.insert(s.begin(), {5, 6});  // now 8 dims: onto the heap
  EXPECT_EQ(s, Shape({5, 6, 1, 9, 2, 3, 7, 7}));
  s.insert(s.begin() + 2, s.begin(), s.begin() + 3);  // a range of itself
  EXPECT_EQ(s, Shape({5, 6, 5, 6, 1, 1, 9, 2, 3, 7, 7}));
  s.erase(s.begin() + 2, s.begin() + 5);
  EXPECT_EQ(s, Shape({5, 6, 1, 9, 2, 3, 7, 7}));
  s.erase(s.begin());
  EXPECT_EQ(s, Shape({6, 1, 9, 2, 3, 7, 7}));
  s.pop_back();
  s.resize(8, -1);
  EXPECT_EQ(s, Shape({6, 1, 9, 2, 3, 7, -1, -1}));
  s.resize(2);
  EXPECT_EQ(s, Shape({6, 1}));
  s.assign(3, 4);
  EXPECT_EQ(s, Shape({4, 4, 4}));
  EXPECT_EQ(std::vector<std::int64_t>(s.rbegin(), s.rend()), (std::vector<std::int64_t>{4, 4, 4}));
  s.clear();
  EXPECT_TRUE(s.empty());
}

TEST(Shape, WorksAsAMapKeyAndInMessages) {
  std::map<Shape, int> seen{{Shape{2, 3}, 1}, {Shape{2}, 2}};
  EXPECT_EQ(seen.at(Shape({2, 3})), 1);
  EXPECT_EQ(mg::detail::shape_str(Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(mg::detail::shape_str(Shape{5}), "(5,)");
  EXPECT_EQ(mg::detail::shape_str(Shape{}), "()");
}

TEST(Shape, PrintsAsLibtorchPrintsSizesAndDtypes) {
  // libtorch 1.13: std::cout << t.sizes() prints [2, 3], [] for a 0-d tensor; << t.dtype()
  // prints float, double, long int, bool (tests/port checks the same against libtorch itself).
  auto printed = [](const auto& v) {
    std::ostringstream os;
    os << v;
    return os.str();
  };
  EXPECT_EQ(printed(Shape{2, 3}), "[2, 3]");
  EXPECT_EQ(printed(Shape{5}), "[5]");
  EXPECT_EQ(printed(Shape{}), "[]");
  EXPECT_EQ(printed(Shape{1, 2, 3, 4, 5, 6, 7, 8}), "[1, 2, 3, 4, 5, 6, 7, 8]");  // on the heap
  mg::Tensor x = mg::zeros({2, 3});
  EXPECT_EQ(printed(x.sizes()), "[2, 3]");
  EXPECT_EQ(printed(x.shape()), "[2, 3]");
  EXPECT_EQ(printed(x.t().strides()), "[1, 3]");
  EXPECT_EQ(printed(x.sum().sizes()), "[]");
  EXPECT_EQ(printed(x.dtype()), "float");
  EXPECT_EQ(printed(mg::kFloat64), "double");
  EXPECT_EQ(printed(mg::kInt64), "long int");
  EXPECT_EQ(printed(mg::kBool), "bool");
}

TEST(Shape, TensorsOfManyDims) {
  // Eight dims: shape and strides on the heap; views, reductions and backward as usual.
  mg::Tensor x = mg::ones({1, 2, 1, 2, 1, 2, 1, 2}).requires_grad_();
  mg::Tensor y = (x.permute({7, 6, 5, 4, 3, 2, 1, 0}) * 3.0).sum({0, 2});
  EXPECT_EQ(y.shape(), Shape({1, 1, 2, 1, 2, 1}));  // (2,1,2,1,2,1,2,1) without dims 0, 2
  y.sum().backward();
  EXPECT_EQ(x.grad().shape(), x.shape());
  EXPECT_EQ(x.grad().sum().item<double>(), 48.0);
}

}  // namespace
