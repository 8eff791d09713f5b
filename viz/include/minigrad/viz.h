#pragma once
// minigrad::viz: pictures of what a script computes (library minigrad::viz, on Graphviz).
//
//   mg::Tensor loss = ...;
//   mg::viz::draw_graph(loss, "graph.png");   // the autograd graph, as torchviz's make_dot
#include <string>

#include "minigrad/autograd.h"
#include "minigrad/tensor.h"

namespace minigrad::viz {

/// Renders autograd::to_dot(output, options) with Graphviz's dot layout into path; the format
/// comes from the extension: .png, .svg, .pdf or .dot (the DOT text itself). Throws
/// minigrad::Error for another extension or when Graphviz cannot write the file.
void draw_graph(const Tensor& output, const std::string& path,
                const autograd::DotOptions& options = {});
/// Renders DOT text (from to_dot, or your own) into path, as draw_graph does.
void render_dot(const std::string& dot, const std::string& path);

}  // namespace minigrad::viz
