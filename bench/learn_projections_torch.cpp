// examples/learn_projections.cpp's training written with libtorch, without the picture: the
// reference for the whole-process figures in scripts/bench.sh (peak memory, binary and library
// size). Same seed, same initial weights (minigrad's Linear init is PyTorch's), same loss and
// stopping rule, so both programs print the same tables and stop after the same step.
//
//   learn_projections_torch [--seed 0] [--steps 1000] [--lr 2] [--optimizer sgd|adam]
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kWords = {"warm", "jacket", "for", "winter"};

struct Attention : torch::nn::Module {
  torch::nn::Linear W_q{torch::nn::LinearOptions(3, 3).bias(false)};
  torch::nn::Linear W_k{torch::nn::LinearOptions(3, 3).bias(false)};
  Attention() {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
  }
  torch::Tensor scores(const torch::Tensor& X) { return torch::matmul(W_q(X), W_k(X).t()); }
};

void print_table(const char* title, const torch::Tensor& table) {
  std::printf("%s\n%8s", title, "");
  for (const auto& w : kWords) std::printf("%8s", w.c_str());
  std::printf("\n");
  auto t = table.to(torch::kDouble).contiguous();
  const double* v = t.data_ptr<double>();
  for (std::size_t i = 0; i < kWords.size(); ++i) {
    std::printf("%8s", kWords[i].c_str());
    for (std::size_t j = 0; j < kWords.size(); ++j) std::printf("%8.2f", v[i * 4 + j]);
    std::printf("\n");
  }
}

bool reached(const torch::Tensor& table) {
  auto t = table.to(torch::kDouble).contiguous();
  const double* v = t.data_ptr<double>();
  bool warm = v[1] >= 0.45 && v[3] >= 0.45 && v[0] <= 0.05;
  bool even = true;
  for (std::size_t i = 4; i < 16; ++i) even &= std::fabs(v[i] - 0.25) <= 0.02;
  return warm && even;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 0;
  int steps = 1000;
  double lr = 0;
  std::string optimizer = "sgd";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seed"))
      seed = std::stoull(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps"))
      steps = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--lr"))
      lr = std::stod(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--optimizer"))
      optimizer = argv[i + 1];
  }
  if (lr == 0) lr = optimizer == "adam" ? 0.1 : 2.0;
  torch::manual_seed(seed);
  torch::Tensor X =
      torch::tensor({1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 1.f, 0.f}).reshape({4, 3});
  torch::Tensor target = torch::tensor({0.f, .5f, 0.f, .5f, .25f, .25f, .25f, .25f, .25f, .25f,
                                        .25f, .25f, .25f, .25f, .25f, .25f})
                             .reshape({4, 4});
  auto model = std::make_shared<Attention>();
  std::cout << *model << "\n\n";

  torch::Tensor before;
  {
    torch::NoGradGuard no_grad;
    before = torch::softmax(model->scores(X), -1);
  }
  print_table("attention before training:", before);

  std::unique_ptr<torch::optim::Optimizer> opt;
  if (optimizer == "adam")
    opt = std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(lr));
  else
    opt = std::make_unique<torch::optim::SGD>(model->parameters(), torch::optim::SGDOptions(lr));
  const double target_entropy = -(0.5 * std::log(0.5) * 2 + 3 * 4 * 0.25 * std::log(0.25)) / 4;

  torch::Tensor table;
  int step = 0;
  for (;; ++step) {
    torch::Tensor logp = torch::log_softmax(model->scores(X), -1);
    torch::Tensor loss = -(target * logp).sum(-1).mean();
    table = logp.detach().exp();
    bool done = reached(table) || step == steps;
    if (step % 10 == 0 || done)
      std::printf("\rstep %4d  loss %.5f (KL to target %.5f)", step, loss.item<double>(),
                  loss.item<double>() - target_entropy);
    if (done) break;
    opt->zero_grad();
    loss.backward();
    opt->step();
  }
  std::printf("\n\n");
  print_table("attention after training:", table);
  std::cout << "\nW_q.weight = " << model->W_q->weight << "\nW_k.weight = " << model->W_k->weight
            << "\n";
  bool ok = reached(table);
  std::printf("\n%s after %d steps (%s, lr %g, seed %llu)\n",
              ok ? "target reached" : "target NOT reached", step, optimizer.c_str(), lr,
              static_cast<unsigned long long>(seed));
  return ok ? 0 : 1;
}
