// Module semantics ported from libtorch 1.13's test/cpp/api/module.cpp and modulelist.cpp
// (torch:: renamed to minigrad::): names derived from the C++ type, the apply overloads, a
// pretty_print override, ModuleList from shared pointers. Where PyTorch and libtorch differ
// (apply's order, the printout of an empty module) the expectation is PyTorch 1.13's, with the
// Python that printed it.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

// At namespace scope, as libtorch's test: the name is the C++ class's.
struct AGIUnit : nn::Module {};
namespace test {
struct AGIUnit : nn::Module {};
struct AGIUnit2 : nn::Module {
  AGIUnit2() : nn::Module("Foo") {}
};
}  // namespace test
struct EmptyModule : nn::Module {};

namespace {

// libtorch's ModuleTest.CanGetName.
TEST(ModuleNames, DerivedFromTheCppType) {
  AGIUnit agi;
  EXPECT_EQ(agi.name(), "AGIUnit");
  EXPECT_EQ(agi.name(), "AGIUnit");  // twice: the lazily derived name stays
  EXPECT_EQ(test::AGIUnit().name(), "test::AGIUnit");
  EXPECT_EQ(test::AGIUnit2().name(), "Foo");
  EXPECT_EQ(nn::Linear(3, 4)->name(), "Linear");
  EXPECT_EQ(agi.type_name(), "AGIUnit");
}

// libtorch's ModuleTest.PrettyPrint, with PyTorch's printout of an empty module:
// class EmptyModule(nn.Module): pass
// repr(EmptyModule()) -> 'EmptyModule()' (libtorch prints "EmptyModule")
struct PrintedModule : nn::Module {
  PrintedModule(int x, float y) : x_(x), y_(y) {}
  void pretty_print(std::ostream& stream) const override {
    stream << "TestModule(x=" << x_ << ", y=" << y_ << ")";
  }
  int x_;
  float y_;
};

std::string str(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

TEST(ModuleNames, PrettyPrintOverride) {
  EXPECT_EQ(str(EmptyModule{}), "EmptyModule()");
  EXPECT_EQ(str(PrintedModule(1, 3.14f)), "TestModule(x=1, y=3.14)");
  // Children follow an override in parentheses, one a line, as libtorch's pretty_print_recursive.
  PrintedModule outer(2, 0.5f);
  nn::Identity inner;
  outer.register_module("inner", inner);
  EXPECT_EQ(str(outer), "TestModule(x=2, y=0.5)(\n  (inner): Identity()\n)");
}

// libtorch's TestContainer tree, built with shared pointers (modules are not copyable here):
// 0 [1 [2, 3], 4, 5 [6, 7 [8, 9]]]
struct TestContainer : nn::Module {
  explicit TestContainer(std::int64_t number,
                         std::vector<std::shared_ptr<TestContainer>> modules = {})
      : tensor(mg::tensor({static_cast<double>(number)}, {1}, mg::kInt64)) {
    for (std::size_t i = 0; i < modules.size(); ++i)
      register_module(std::to_string(i), std::move(modules[i]));
  }
  mg::Tensor tensor;
};

std::int64_t item(const nn::Module& m) {
  return m.as<TestContainer>()->tensor.item<std::int64_t>();
}

std::shared_ptr<TestContainer> make_tree() {
  auto leaf = [](std::int64_t n) { return std::make_shared<TestContainer>(n); };
  auto node = [](std::int64_t n, std::vector<std::shared_ptr<TestContainer>> m) {
    return std::make_shared<TestContainer>(n, std::move(m));
  };
  auto one = node(1, {leaf(2), leaf(3)});
  auto four = leaf(4);
  auto seven = node(7, {leaf(8), leaf(9)});
  auto five = node(5, {leaf(6), seven});
  return node(0, {one, four, five});
}

// PyTorch's order, children before their parent (libtorch visits the parent first):
// m = C(0, [C(1, [C(2), C(3)]), C(4), C(5, [C(6), C(7, [C(8), C(9)])])])
// out = []; m.apply(lambda x: out.append(x.n)) -> [2, 3, 1, 4, 6, 8, 9, 7, 5, 0]
const std::vector<std::int64_t> kOrder = {2, 3, 1, 4, 6, 8, 9, 7, 5, 0};
const std::vector<std::string> kNames = {
    "test_prefix.0.0",   "test_prefix.0.1",   "test_prefix.0",   "test_prefix.1", "test_prefix.2.0",
    "test_prefix.2.1.0", "test_prefix.2.1.1", "test_prefix.2.1", "test_prefix.2", "test_prefix"};

// libtorch's ModuleApply, ConstModuleApply, NamedModuleApply, ConstNamedModuleApply,
// ModulePointerApply and NamedModulePointerApply ...IteratesCorreclty, in PyTorch's order.
TEST(ModuleNames, ApplyOverloads) {
  auto model = make_tree();
  std::shared_ptr<const TestContainer> constant = model;
  std::vector<std::int64_t> seen;
  std::vector<std::string> names;
  auto record = [&](const std::string& name, const nn::Module& m) {
    names.push_back(name);
    seen.push_back(item(m));
  };
  auto expect_visits = [&](bool named) {
    EXPECT_EQ(seen, kOrder);
    if (named) {
      EXPECT_EQ(names, kNames);
    }
    seen.clear();
    names.clear();
  };
  model->apply([&](nn::Module& m) { record("", m); });
  expect_visits(false);
  constant->apply([&](const nn::Module& m) { record("", m); });
  expect_visits(false);
  model->apply([&](const std::string& name, nn::Module& m) { record(name, m); }, "test_prefix");
  expect_visits(true);
  constant->apply([&](const std::string& name, const nn::Module& m) { record(name, m); },
                  "test_prefix");
  expect_visits(true);
  const nn::Module* last = nullptr;
  model->apply([&](const std::shared_ptr<nn::Module>& m) {
    record("", *m);
    last = m.get();
  });
  expect_visits(false);
  EXPECT_EQ(last, model.get());
  EXPECT_EQ(model.use_count(), 2);  // model and constant: apply kept no pointer
  model->apply(
      [&](const std::string& name, const std::shared_ptr<nn::Module>& m) { record(name, *m); },
      "test_prefix");
  expect_visits(true);
}

// libtorch's ModuleListTest.ConstructsFromSharedPointer: shared pointers already built go in
// parentheses; built in the call, in braces (Note [Braces for module lists]).
TEST(ModuleNames, ModuleListFromSharedPointers) {
  struct M : nn::Module {
    explicit M(int value_) : value(value_) {}
    int value;
  };
  auto a = std::make_shared<M>(1), b = std::make_shared<M>(2), c = std::make_shared<M>(3);
  nn::ModuleList list(a, b, c);
  ASSERT_EQ(list->size(), 3u);
  EXPECT_EQ(list->ptr<M>(1)->value, 2);
  nn::ModuleList braced{std::make_shared<M>(1), std::make_shared<M>(2), std::make_shared<M>(3)};
  ASSERT_EQ(braced->size(), 3u);
  EXPECT_EQ(braced->ptr<M>(2)->value, 3);
}

}  // namespace
