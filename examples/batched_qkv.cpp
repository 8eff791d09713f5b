// The lesson's third program: every token and several texts at once, with nn::Linear(bias=false)
// projections. B = 2 texts, T = 5 tokens, d_model = 16 features, d_k = 8.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include <minigrad/minigrad.h>

namespace mg = minigrad;
namespace nn = minigrad::nn;

namespace {
std::string shape_str(const mg::Tensor& t) {
  std::string s = "(";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + ")";
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The lesson's third program: attention over every token of two texts at once."};
  CLI11_PARSE(app, argc, argv);  // --help; no options
  mg::manual_seed(0);
  const std::int64_t B = 2, T = 5, d_model = 16, d_k = 8;
  mg::Tensor x = mg::randn({B, T, d_model});

  nn::Linear W_q(d_model, d_k, /*bias=*/false);
  nn::Linear W_k(d_model, d_k, /*bias=*/false);
  nn::Linear W_v(d_model, d_k, /*bias=*/false);
  mg::Tensor q = W_q(x), k = W_k(x), v = W_v(x);  // each (2, 5, 8)

  mg::Tensor scores = mg::matmul(q, k.transpose(-2, -1));  // (2, 5, 5): every query vs every key
  mg::Tensor weights = mg::softmax(scores, -1);            // each row sums to 1
  mg::Tensor out = mg::matmul(weights, v);                 // (2, 5, 8)
  std::printf("q, k, v: %s   scores: %s   out: %s\n", shape_str(q).c_str(),
              shape_str(scores).c_str(), shape_str(out).c_str());
  std::printf("rows sum to 1: %s\n",
              mg::allclose(weights.sum(-1), mg::ones({B, T})) ? "true" : "false");
  std::printf("parameters in the three projections: %lld\n",
              static_cast<long long>(3 * d_model * d_k));
  std::cout << "out[0, 0] = " << out.select(0, 0).select(0, 0) << "\n";
  return 0;
}
