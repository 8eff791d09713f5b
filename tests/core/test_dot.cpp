// autograd::to_dot: the graph of backward in Graphviz's DOT language.
#include <gtest/gtest.h>

#include <string>

#include "minigrad/minigrad.h"

namespace mg = minigrad;

namespace {
std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}
}  // namespace

TEST(ToDot, TheLessonsScoresGraph) {
  // weights = softmax(X @ W_q, -1); loss = weights.sum(): backward runs Sum -> Softmax -> Mm ->
  // W_q; X needs no gradient, so it appears only as Mm's saved tensor.
  mg::Tensor X = mg::eye(3);
  mg::Tensor W = mg::ones({3, 3}).requires_grad_();
  mg::Tensor loss = mg::softmax(mg::matmul(X, W), -1).sum();
  EXPECT_EQ(mg::autograd::to_dot(loss, {.names = {{"W_q", W}}}),
            "digraph autograd {\n"
            "  graph [rankdir=TB];\n"
            "  node [shape=box, style=\"filled,rounded\", fontname=\"Helvetica\", fontsize=11, "
            "fillcolor=lightgrey];\n"
            "  out0 [label=\"output\\n() float32\", fillcolor=darkolivegreen1];\n"
            "  n0 [label=\"SumBackward0\\n() float32\"];\n"
            "  out0 -> n0;\n"
            "  n1 [label=\"SoftmaxBackward0\\n(3, 3) float32\"];\n"
            "  n0 -> n1;\n"
            "  n1_saved0 [label=\"saved 0\\n(3, 3) float32\", fillcolor=orange, fontsize=9];\n"
            "  n1_saved0 -> n1 [style=dashed, arrowhead=none];\n"
            "  n2 [label=\"MmBackward0\\n(3, 3) float32\"];\n"
            "  n1 -> n2;\n"
            "  n2_saved1 [label=\"saved 1\\n(3, 3) float32\", fillcolor=orange, fontsize=9];\n"
            "  n2_saved1 -> n2 [style=dashed, arrowhead=none];\n"
            "  leaf0 [label=\"W_q\\n(3, 3) float32\", fillcolor=lightblue];\n"
            "  n2 -> leaf0;\n"
            "}\n");
  const std::string plain = mg::autograd::to_dot(loss, {.names = {}, .show_saved = false});
  EXPECT_EQ(count(plain, "saved"), 0u);
  EXPECT_EQ(count(plain, "[label=\"(3, 3) float32\", fillcolor=lightblue]"), 1u);  // no name
}

// A saved input is a new handle on the tensor's data (Note [Saved inputs are snapshots]); it still
// takes the name given to that tensor: X (no gradient) and h (a non-leaf) are saved by the ops.
TEST(ToDot, SavedTensorsTakeTheNamesOfTheirTensors) {
  mg::Tensor X = mg::eye(3);
  mg::Tensor W = mg::ones({3, 3}).requires_grad_();
  mg::Tensor h = mg::matmul(X, W);
  mg::Tensor loss = (h * h).sum();
  const std::string dot = mg::autograd::to_dot(loss, {.names = {{"X", X}, {"h", h}}});
  EXPECT_EQ(count(dot, "[label=\"saved 1 (X)\\n(3, 3) float32\""), 1u);
  EXPECT_EQ(count(dot, "[label=\"saved 0 (h)\\n(3, 3) float32\""), 1u);
  EXPECT_EQ(count(dot, "[label=\"saved 1 (h)\\n(3, 3) float32\""), 1u);
  EXPECT_EQ(count(dot, "fillcolor=orange"), 3u);
}

TEST(ToDot, SharedNodesAppearOnceAndNamesComeFromModules) {
  mg::manual_seed(0);
  mg::nn::Linear fc(2, 2);
  fc->named_parameters();  // records "weight" and "bias" as the parameters' names
  mg::Tensor x = mg::ones({1, 2});
  mg::Tensor h = fc(x);
  mg::Tensor loss = (h * h + h).sum();  // h is used three times but drawn once
  const std::string dot = mg::autograd::to_dot(loss);
  EXPECT_EQ(count(dot, "label=\"weight\\n(2, 2) float32\""), 1u);
  EXPECT_EQ(count(dot, "label=\"bias\\n(2,) float32\""), 1u);
  EXPECT_EQ(count(dot, "MulBackward0"), 1u);
  EXPECT_EQ(count(dot, "AddBackward0"), 1u);  // h * h + h (Linear's bias is in its addmm)
  // Two outputs, and a leaf output.
  mg::Tensor w = mg::ones({2}).requires_grad_();
  const std::string two = mg::autograd::to_dot({loss, w});
  EXPECT_NE(two.find("out1 [label=\"output 1\\n(2,) float32\""), std::string::npos);
  EXPECT_NE(two.find("out1 -> leaf"), std::string::npos);
  EXPECT_THROW(mg::autograd::to_dot(mg::Tensor()), mg::Error);
}

TEST(ToDot, DeepGraphsDoNotOverflowTheStack) {
  mg::Tensor x = mg::ones({1}).requires_grad_();
  mg::Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  const std::string dot = mg::autograd::to_dot(y, {.names = {}, .show_saved = false});
  EXPECT_EQ(count(dot, "MulBackward0"), 100000u);
}
