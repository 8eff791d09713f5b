// train_script_minigrad.cpp written with libtorch, line for line: the compile-time reference.
#include <torch/torch.h>

#include <cmath>
#include <cstdio>

namespace F = torch::nn::functional;

struct Attention : torch::nn::Module {
  torch::nn::Linear W_q, W_k, W_v;
  double scale;

  Attention(std::int64_t d_model, std::int64_t d_k)
      : W_q(torch::nn::LinearOptions(d_model, d_k).bias(false)),
        W_k(torch::nn::LinearOptions(d_model, d_k).bias(false)),
        W_v(torch::nn::LinearOptions(d_model, d_k).bias(false)),
        scale(1.0 / std::sqrt(static_cast<double>(d_k))) {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
    register_module("W_v", W_v);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor q = W_q(x), k = W_k(x), v = W_v(x);
    torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
    torch::Tensor weights = torch::softmax(scores, -1);
    return torch::matmul(weights, v);
  }
};

int main() {
  torch::manual_seed(0);
  const std::int64_t batch = 2, seq = 5, d_model = 16, d_k = 8;
  Attention model(d_model, d_k);
  torch::Tensor x = torch::randn({batch, seq, d_model});
  torch::Tensor target = torch::randn({batch, seq, d_k});
  torch::optim::SGD opt(model.parameters(), torch::optim::SGDOptions(0.5));

  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    torch::Tensor out = model.forward(x);
    torch::Tensor loss = F::mse_loss(out, target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    last = loss.item<double>();
    if (step == 0) first = last;
    if (step % 50 == 0) std::printf("step %3d  loss %.5f\n", step, last);
  }
  std::printf("loss %.5f -> %.5f\n", first, last);
  return last < first ? 0 : 1;
}
