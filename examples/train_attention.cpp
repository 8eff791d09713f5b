// Training by gradient descent with plain tensors: learn query and key projections so that the
// adjective "warm" attends to the nouns "jacket" and "winter" (the lesson's hand-built W_Q, found
// by training instead). With nn::Linear and an optimizer this becomes examples/learn_projections.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>

#include <minigrad/minigrad.h>

namespace mg = minigrad;

int main(int argc, char** argv) {
  CLI::App app{
      "Train query and key projections with plain tensors until \"warm\" attends to the nouns."};
  CLI11_PARSE(app, argc, argv);  // --help; no options
  mg::manual_seed(0);
  mg::Tensor X = mg::tensor({{1.0, 0.0, 0.0},            // warm   (adjective)
                             {0.0, 1.0, 0.0},            // jacket (noun)
                             {0.0, 0.0, 1.0},            // for    (neither)
                             {0.0, 1.0, 0.0}});          // winter (noun)
  mg::Tensor target = mg::tensor({0.0, 0.5, 0.0, 0.5});  // warm's attention: the two nouns
  mg::Tensor W_q = (mg::randn({3, 3}) * 0.5).requires_grad_();
  mg::Tensor W_k = (mg::randn({3, 3}) * 0.5).requires_grad_();
  const double lr = 2.0;

  for (int step = 0; step <= 300; ++step) {
    mg::Tensor scores = mg::matmul(mg::matmul(X, W_q), mg::matmul(X, W_k).transpose(-2, -1));
    mg::Tensor weights = mg::softmax(scores, -1);
    mg::Tensor loss = (weights.select(0, 0) - target).pow(2).sum();
    loss.backward();
    {
      mg::NoGradGuard no_grad;  // the update itself is not part of the graph
      W_q.copy_(W_q - W_q.grad() * lr);
      W_k.copy_(W_k - W_k.grad() * lr);
    }
    W_q.set_grad({});
    W_k.set_grad({});
    if (step % 50 == 0) std::printf("step %3d  loss %.6f\n", step, loss.item<double>());
    if (step == 300) std::cout << "warm attends to: " << weights.select(0, 0).detach() << "\n";
  }
  return 0;
}
