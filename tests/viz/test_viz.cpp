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
