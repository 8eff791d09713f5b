// viz::draw_graph renders to_dot through Graphviz's library.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "minigrad/minigrad.h"
#include "minigrad/viz.h"

namespace mg = minigrad;

namespace {
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("minigrad_viz_" + std::to_string(::getpid()) + "_" + name))
      .string();
}
}  // namespace

TEST(Viz, DrawGraphWritesPngSvgAndDot) {
  mg::Tensor W = mg::ones({3, 3}).requires_grad_();
  mg::Tensor loss = mg::softmax(mg::matmul(mg::eye(3), W), -1).sum();
  const std::string png = temp_path("graph.png"), svg = temp_path("graph.svg"),
                    dot = temp_path("graph.dot");
  mg::viz::draw_graph(loss, png, {.names = {{"W_q", W}}});
  const std::string bytes = read_file(png);
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  mg::viz::draw_graph(loss, svg, {.names = {{"W_q", W}}});
  const std::string text = read_file(svg);
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("MmBackward0"), std::string::npos);
  EXPECT_NE(text.find("W_q"), std::string::npos);
  mg::viz::draw_graph(loss, dot);
  EXPECT_EQ(read_file(dot), mg::autograd::to_dot(loss));
  for (const auto& p : {png, svg, dot}) std::filesystem::remove(p);
}

TEST(Viz, Errors) {
  mg::Tensor loss = (mg::ones({2}).requires_grad_() * 2.0).sum();
  try {
    mg::viz::draw_graph(loss, "graph.jpeg");
    FAIL() << "no error";
  } catch (const mg::Error& e) {
    EXPECT_STREQ(e.what(),
                 "[draw_graph] graph.jpeg: the file name must end in .png, .svg, .pdf or .dot, got "
                 "\"jpeg\"");
  }
  try {
    mg::viz::draw_graph(loss, "/nonexistent-dir/graph.png");
    FAIL() << "no error";
  } catch (const mg::Error& e) {
    EXPECT_STREQ(e.what(),
                 "[draw_graph] /nonexistent-dir/graph.png: cannot open the file for writing (No "
                 "such file or directory)");
  }
  try {
    mg::viz::render_dot("digraph { a -> ", temp_path("bad.png"));
    FAIL() << "no error";
  } catch (const mg::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Graphviz could not parse the DOT text"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------- collapsed graphs
// Note [Module scopes] (nn/module.h), Note [Collapsed graphs] (autograd/dot.cpp).

namespace {
namespace nn = mg::nn;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

// fc2(relu(fc1(x))): each Linear is t(weight) and addmm with the bias (2 nodes, 2 leaves).
struct MlpImpl : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  MlpImpl() : nn::Module("Mlp") {
    fc1 = register_module("fc1", nn::Linear(3, 4));
    fc2 = register_module("fc2", nn::Linear(4, 2));
  }
  mg::Tensor forward(const mg::Tensor& x) const { return fc2(mg::relu(fc1(x))); }
};
MG_MODULE(Mlp);

// x + fc(x), called directly (block->forward): its own guard names the call.
struct ResidualImpl : nn::Module {
  nn::Linear fc{nullptr};
  ResidualImpl() : nn::Module("Residual") { fc = register_module("fc", nn::Linear(3, 3)); }
  mg::Tensor forward(const mg::Tensor& x) const {
    nn::ModuleScope scope(*this);
    return x + fc(x);
  }
};
MG_MODULE(Residual);
}  // namespace

TEST(CollapsedGraph, OneBoxPerLinearOfAnMlp) {
  Mlp model;
  mg::Tensor loss;
  {
    nn::RecordModuleScopes scopes(*model);
    loss = model(mg::ones({5, 3})).sum();
  }
  EXPECT_EQ(mg::autograd::to_dot(loss, {.show_saved = false, .collapse_modules = true}),
            "digraph autograd {\n"
            "  graph [rankdir=TB];\n"
            "  node [shape=box, style=\"filled,rounded\", fontname=\"Helvetica\", fontsize=11, "
            "fillcolor=lightgrey];\n"
            "  m0 [label=\"fc2\\nLinear: 2 nodes, 2 leaves\\n(5, 2) float32\", shape=box3d, "
            "style=filled, fillcolor=lightyellow];\n"
            "  m1 [label=\"fc1\\nLinear: 2 nodes, 2 leaves\\n(5, 4) float32\", shape=box3d, "
            "style=filled, fillcolor=lightyellow];\n"
            "  n0 [label=\"SumBackward0\\n() float32\"];\n"
            "  n1 [label=\"ReluBackward0\\n(5, 4) float32\"];\n"
            "  out0 [label=\"output\\n() float32\", fillcolor=darkolivegreen1];\n"
            "  out0 -> n0;\n"
            "  n0 -> m0;\n"
            "  m0 -> n1;\n"
            "  n1 -> m1;\n"
            "}\n");
  // The same graph uncollapsed: 6 nodes (Sum, Relu, 2 per Linear) and 4 leaves.
  const std::string plain = mg::autograd::to_dot(loss, {.show_saved = false});
  EXPECT_EQ(count(plain, "Backward0"), 6u);
  EXPECT_EQ(count(plain, "fillcolor=lightblue"), 4u);
  EXPECT_EQ(count(plain, "box3d"), 0u);
}

TEST(CollapsedGraph, NestedModulesCollapseAtTheChosenDepth) {
  // Sequential(Residual, Residual): scopes "0", "0.fc", "1", "1.fc". x requires grad and is used
  // inside block 0 and by the loose multiply: it stays a leaf of its own.
  nn::Sequential model{Residual(), Residual()};
  mg::Tensor x = mg::ones({2, 3}).requires_grad_();
  mg::Tensor loss;
  {
    nn::RecordModuleScopes scopes(*model);
    loss = (model->forward(x) * x).sum();
  }
  const std::string depth1 =
      mg::autograd::to_dot(loss, {.names = {{"x", x}}, .collapse_modules = true});
  EXPECT_EQ(count(depth1, "box3d"), 2u);
  EXPECT_EQ(count(depth1, "[label=\"1\\nResidual: 3 nodes, 2 leaves\\n(2, 3) float32\""), 1u);
  EXPECT_EQ(count(depth1, "[label=\"0\\nResidual: 3 nodes, 2 leaves\\n(2, 3) float32\""), 1u);
  EXPECT_EQ(count(depth1, "[label=\"x\\n(2, 3) float32\", fillcolor=lightblue]"), 1u);
  EXPECT_EQ(count(depth1, "fillcolor=lightblue"), 1u);
  EXPECT_EQ(count(depth1, "SumBackward0"), 1u);
  EXPECT_EQ(count(depth1, "MulBackward0"), 1u);
  EXPECT_EQ(count(depth1, "AddBackward0"), 0u);
  const std::string depth2 = mg::autograd::to_dot(
      loss, {.show_saved = false, .collapse_modules = true, .collapse_depth = 2});
  EXPECT_EQ(count(depth2, "box3d"), 2u);
  EXPECT_EQ(count(depth2, "[label=\"1.fc\\nLinear: 2 nodes, 2 leaves\\n(2, 3) float32\""), 1u);
  EXPECT_EQ(count(depth2, "[label=\"0.fc\\nLinear: 2 nodes, 2 leaves\\n(2, 3) float32\""), 1u);
  EXPECT_EQ(count(depth2, "AddBackward0"), 2u);  // the residual adds are drawn one by one
  // Deeper than any call: nothing collapses.
  const std::string depth3 = mg::autograd::to_dot(
      loss, {.show_saved = false, .collapse_modules = true, .collapse_depth = 3});
  EXPECT_EQ(depth3,
            mg::autograd::to_dot(
                loss, {.show_saved = false, .collapse_modules = true, .collapse_depth = 4}));
  EXPECT_EQ(count(depth3, "box3d"), 0u);
  EXPECT_EQ(count(depth3, "Backward0"), 8u);  // Sum, Mul, 2 x (Add + T, Addmm)
}

TEST(CollapsedGraph, EachCallOfAModuleIsItsOwnBox) {
  // One module registered twice is named once ("0") but called twice: two boxes.
  Residual block;
  nn::Sequential model(block, block);
  mg::Tensor loss;
  {
    nn::RecordModuleScopes scopes(*model);
    loss = model->forward(mg::ones({2, 3})).sum();
  }
  model->named_parameters();  // names the leaves (parameter_name)
  const std::string dot = mg::autograd::to_dot(loss, {.collapse_modules = true});
  EXPECT_EQ(count(dot, "[label=\"0\\nResidual: 3 nodes"), 2u);
  // Both calls use fc's weight and bias: used by two boxes, they are drawn as leaves.
  EXPECT_EQ(count(dot, "[label=\"0\\nResidual: 3 nodes\\n(2, 3) float32\""), 2u);
  EXPECT_EQ(count(dot, "fillcolor=lightblue"), 2u);
  EXPECT_EQ(count(dot, "fc.weight\\n(3, 3) float32\", fillcolor=lightblue]"), 1u);
  EXPECT_EQ(count(dot, "fc.bias\\n(3,) float32\", fillcolor=lightblue]"), 1u);
}

TEST(CollapsedGraph, ScopesAreRecordedOnlyWhenAsked) {
  Mlp model;
  mg::Tensor y = model(mg::ones({1, 3}));
  EXPECT_EQ(y.grad_fn()->module_scope(), nullptr);
  {
    nn::RecordModuleScopes scopes(*model);
    mg::Tensor z = model(mg::ones({1, 3}));
    ASSERT_NE(z.grad_fn()->module_scope(), nullptr);
    EXPECT_EQ(z.grad_fn()->module_scope()->name, "fc2");
    EXPECT_EQ(z.grad_fn()->module_scope()->type_name, "Linear");
    EXPECT_EQ(z.grad_fn()->module_scope()->depth, 1);
    // The root's own nodes are loose.
    EXPECT_EQ(mg::relu(z).grad_fn()->module_scope(), nullptr);
  }
  EXPECT_EQ(model(mg::ones({1, 3})).grad_fn()->module_scope(), nullptr);
  // A module outside the recorded root is named by its class.
  nn::Linear other(3, 3);
  nn::RecordModuleScopes scopes(*model);
  EXPECT_EQ(other(mg::ones({1, 3})).grad_fn()->module_scope()->name, "Linear");
}

TEST(CollapsedGraph, DrawGraphRendersTheBoxes) {
  Mlp model;
  mg::Tensor loss;
  {
    nn::RecordModuleScopes scopes(*model);
    loss = model(mg::ones({5, 3})).sum();
  }
  const std::string svg = temp_path("collapsed.svg");
  mg::viz::draw_graph(loss, svg, {.collapse_modules = true});
  const std::string text = read_file(svg);
  EXPECT_EQ(count(text, "<title>m0</title>"), 1u);  // the two boxes, by their node ids
  EXPECT_EQ(count(text, "<title>m1</title>"), 1u);
  EXPECT_EQ(count(text, "<title>m2</title>"), 0u);
  EXPECT_NE(text.find("fc1"), std::string::npos);
  EXPECT_EQ(text.find("MmBackward0"), std::string::npos);
  std::filesystem::remove(svg);
}
