// The autograd graph of the lesson's attention loss, drawn with minigrad::viz::draw_graph:
//   build/examples/attention_graph [attention_graph.png]   (docs/tutorial.md shows the picture)
// Backward runs from the loss at the top to W_q.weight and W_k.weight at the bottom; orange boxes
// are the tensors each node saved for its gradient.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include <minigrad/minigrad.h>
#include <minigrad/viz.h>

namespace mg = minigrad;
namespace nn = minigrad::nn;

struct Attention : nn::Module {
  nn::Linear W_q{3, 3, /*bias=*/false};
  nn::Linear W_k{3, 3, /*bias=*/false};
  Attention() : nn::Module("Attention") {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
  }
};

int main(int argc, char** argv) {
  CLI::App app{"Draw the autograd graph of the lesson's attention loss."};
  std::string path = "attention_graph.png";
  app.add_option("picture", path, "the file to write (.png, .svg, .pdf or .dot)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  mg::manual_seed(0);
  Attention model;
  mg::Tensor X = mg::tensor({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 0.0, 1.0}, {0.0, 1.0, 0.0}});
  // warm -> jacket and winter, half each; the other words attend evenly (learn_projections).
  mg::Tensor target = mg::tensor({{0.0, 0.5, 0.0, 0.5},
                                  {0.25, 0.25, 0.25, 0.25},
                                  {0.25, 0.25, 0.25, 0.25},
                                  {0.25, 0.25, 0.25, 0.25}});
  mg::Tensor scores = mg::matmul(model.W_q(X), model.W_k(X).transpose(-2, -1));
  mg::Tensor loss = -(target * mg::log_softmax(scores, -1)).sum(-1).mean();
  mg::autograd::DotOptions options;
  for (const auto& [name, p] : model.named_parameters()) options.names.emplace_back(name, p);
  try {
    mg::viz::draw_graph(loss, path, options);
  } catch (const mg::Error& e) {
    std::fprintf(stderr, "attention_graph: %s\n", e.what());
    return 2;
  }
  std::printf("wrote %s\n", path.c_str());
}
