// The lesson's second program: plain similarity against hand-built projections.
// Expected (from the lesson): plain similarity puts 0.48 on the diagonal; with the projections
// warm's row is 0.02 0.48 0.02 0.48 and every other row is 0.25.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include <minigrad/minigrad.h>

namespace mg = minigrad;

namespace {

mg::Tensor attention(const mg::Tensor& Q, const mg::Tensor& K) {
  mg::Tensor s = mg::matmul(Q, K.t());
  mg::Tensor e = mg::exp(s - std::get<0>(s.max(1, /*keepdim=*/true)));
  return e / e.sum(1, /*keepdim=*/true);
}

/// Prints like the lesson's print(np.round(table, 2)).
void print_rounded(const mg::Tensor& t) {
  auto v = t.to_vector<double>();
  auto rows = t.size(0), cols = t.size(1);
  for (std::int64_t i = 0; i < rows; ++i) {
    std::printf(i == 0 ? "[[" : " [");
    for (std::int64_t j = 0; j < cols; ++j)
      std::printf(j + 1 < cols ? "%.2f " : "%.2f", v[static_cast<std::size_t>(i * cols + j)]);
    std::printf(i + 1 < rows ? "]\n" : "]]\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The lesson's second program: plain similarity against hand-built projections."};
  CLI11_PARSE(app, argc, argv);  // --help; no options
  // words: warm, jacket, for, winter; features: adjective, noun, neither
  mg::Tensor X = mg::tensor({{1.0, 0.0, 0.0},    // adjective
                             {0.0, 1.0, 0.0},    // noun
                             {0.0, 0.0, 1.0},    // neither
                             {0.0, 1.0, 0.0}});  // noun

  std::printf("plain similarity (Q = K = X):\n");
  print_rounded(attention(X, X));

  mg::Tensor W_Q = mg::tensor({{0.0, 3.0, 0.0},  // an adjective's query asks for "noun"
                               {0.0, 0.0, 0.0},  // nouns and other words ask for nothing
                               {0.0, 0.0, 0.0}});
  mg::Tensor W_K = mg::eye(3);  // keys simply advertise each word's type
  std::printf("\nwith projections (Q = X W_Q, K = X W_K):\n");
  print_rounded(attention(mg::matmul(X, W_Q), mg::matmul(X, W_K)));
  return 0;
}
