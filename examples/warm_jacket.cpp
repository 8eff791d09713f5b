// The lesson's first program: "warm" looks at "jacket".
// warm's query [0, 2] scores each key, softmax turns the scores into weights, and the output
// mixes the values by those weights. Expected (from the lesson): scores 0 and 2, weights 0.12 and
// 0.88, output [0.12, 0.88]; "jacket", with a blank query, splits its attention 0.5 / 0.5.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include <minigrad/minigrad.h>

namespace mg = minigrad;

int main(int argc, char** argv) {
  CLI::App app{
      "The lesson's first program: \"warm\" looks at \"jacket\" (scores, softmax weights, "
      "output)."};
  CLI11_PARSE(app, argc, argv);                // --help; no options
  mg::Tensor q_warm = mg::tensor({0.0, 2.0});  // warm's query: "I want a noun"
  mg::Tensor keys = mg::tensor({{1.0, 0.0},    // warm
                                {0.0, 1.0}});  // jacket
  mg::Tensor values = mg::tensor({{1.0, 0.0}, {0.0, 1.0}});

  mg::Tensor scores = mg::matmul(keys, q_warm);  // one dot product per key
  mg::Tensor weights = mg::softmax(scores, -1);  // shares that add up to 1
  mg::Tensor out = mg::matmul(weights, values);  // blend of the values

  auto s = scores.to_vector<double>();
  auto w = weights.to_vector<double>();
  auto o = out.to_vector<double>();
  std::printf("scores:  {'warm': %g, 'jacket': %g}\n", s[0], s[1]);
  std::printf("weights: {'warm': %.2f, 'jacket': %.2f}\n", w[0], w[1]);
  std::printf("output:  [%.2f, %.2f]\n", o[0], o[1]);

  mg::Tensor q_jacket = mg::tensor({0.0, 0.0});  // a blank query
  auto wj = mg::softmax(mg::matmul(keys, q_jacket), -1).to_vector<double>();
  std::printf("jacket's weights: {'warm': %.2f, 'jacket': %.2f}\n", wj[0], wj[1]);

  std::cout << "\nas tensors:\nweights = " << weights << "\nout     = " << out << "\n";
  return 0;
}
