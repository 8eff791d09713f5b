// A ~60-line training script, the one whose compile time scripts/bench.sh measures against the
// same script written with libtorch (train_script_torch.cpp): single-head attention with learned
// q, k, v projections fitted to a random target with mse_loss and SGD.
#include <cmath>
#include <cstdio>

#include <minigrad/minigrad.h>

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;

struct Attention : nn::Module {
  nn::Linear W_q, W_k, W_v;
  double scale;

  Attention(std::int64_t d_model, std::int64_t d_k)
      : nn::Module("Attention"),
        W_q(d_model, d_k, false),
        W_k(d_model, d_k, false),
        W_v(d_model, d_k, false),
        scale(1.0 / std::sqrt(static_cast<double>(d_k))) {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
    register_module("W_v", W_v);
  }

  mg::Tensor forward(const mg::Tensor& x) const {
    mg::Tensor q = W_q(x), k = W_k(x), v = W_v(x);
    mg::Tensor scores = mg::matmul(q, k.transpose(-2, -1)) * scale;
    mg::Tensor weights = mg::softmax(scores, -1);
    return mg::matmul(weights, v);
  }
};

int main() {
  mg::manual_seed(0);
  const std::int64_t batch = 2, seq = 5, d_model = 16, d_k = 8;
  Attention model(d_model, d_k);
  mg::Tensor x = mg::randn({batch, seq, d_model});
  mg::Tensor target = mg::randn({batch, seq, d_k});
  mg::optim::SGD opt(model.parameters(), mg::optim::SGDOptions(0.5));

  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    mg::Tensor out = model.forward(x);
    mg::Tensor loss = F::mse_loss(out, target);
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
