// libtorch's side of the benchmark workloads (see workloads.h): the same computations, written as
// a libtorch user would.
#include <torch/torch.h>

#include <cmath>
#include <memory>

#include "workloads.h"

namespace bench::torch_side {

namespace {

struct AttentionModel {
  explicit AttentionModel(AttentionSize s)
      : W_q(torch::nn::LinearOptions(s.d_model, s.d_k).bias(false)),
        W_k(torch::nn::LinearOptions(s.d_model, s.d_k).bias(false)),
        W_v(torch::nn::LinearOptions(s.d_model, s.d_k).bias(false)),
        x(torch::randn({s.batch, s.seq, s.d_model})),
        target(torch::randn({s.batch, s.seq, s.d_k})),
        opt({W_q->weight, W_k->weight, W_v->weight}, torch::optim::SGDOptions(0.01)),
        scale(1.0 / std::sqrt(static_cast<double>(s.d_k))) {}
  torch::nn::Linear W_q, W_k, W_v;
  torch::Tensor x, target;
  torch::optim::SGD opt;
  double scale;

  void step() {
    torch::Tensor q = W_q(x), k = W_k(x), v = W_v(x);
    torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) * scale;
    torch::Tensor weights = torch::softmax(scores, -1);
    torch::Tensor out = torch::matmul(weights, v);
    torch::Tensor loss = torch::nn::functional::mse_loss(out, target);
    loss.backward();
    opt.step();
    opt.zero_grad();
  }
};

Run binary_op(torch::Tensor (*op)(const torch::Tensor&, const torch::Tensor&), std::int64_t n,
              bool with_grad) {
  torch::manual_seed(0);
  torch::Tensor a = torch::randn({n, n}), b = torch::randn({n, n});
  if (with_grad) {
    a.requires_grad_();
    b.requires_grad_();
  }
  return [a, b, op, with_grad](std::int64_t iters) {
    torch::AutoGradMode mode(with_grad);
    for (std::int64_t i = 0; i < iters; ++i) torch::Tensor c = op(a, b);
  };
}

}  // namespace

bool available() { return true; }

const char* version() { return TORCH_VERSION; }

void set_num_threads(int n) { torch::set_num_threads(n); }

Run attention_step(AttentionSize size) {
  torch::manual_seed(0);
  auto model = std::make_shared<AttentionModel>(size);
  return [model](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) model->step();
  };
}

Run add_2x2(bool with_grad) {
  return binary_op([](const torch::Tensor& a, const torch::Tensor& b) { return torch::add(a, b); },
                   2, with_grad);
}

Run matmul_4x4(bool with_grad) {
  return binary_op(
      [](const torch::Tensor& a, const torch::Tensor& b) { return torch::matmul(a, b); }, 4,
      with_grad);
}

Run softmax_fwd_bwd(std::vector<std::int64_t> shape) {
  torch::manual_seed(0);
  torch::Tensor x = torch::randn(shape).requires_grad_();
  torch::Tensor g = torch::randn(shape);
  return [x, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      torch::Tensor y = torch::softmax(x, -1);
      auto grads = torch::autograd::grad({y}, {x}, {g});
    }
  };
}

Run randn(std::int64_t n) {
  torch::manual_seed(0);
  return [n](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) torch::Tensor x = torch::randn({n});
  };
}

Run dropout_fwd_bwd(std::vector<std::int64_t> shape) {
  torch::manual_seed(0);
  torch::Tensor x = torch::randn(shape).requires_grad_();
  torch::Tensor g = torch::randn(shape);
  return [x, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      torch::Tensor y = torch::dropout(x, 0.1, true);
      auto grads = torch::autograd::grad({y}, {x}, {g});
    }
  };
}

Run bmm_fwd_bwd(std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n) {
  torch::manual_seed(0);
  torch::Tensor a = torch::randn({batch, m, k}).requires_grad_();
  torch::Tensor b = torch::randn({batch, k, n}).requires_grad_();
  torch::Tensor g = torch::randn({batch, m, n});
  return [a, b, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      torch::Tensor c = torch::bmm(a, b);
      auto grads = torch::autograd::grad({c}, {a, b}, {g});
    }
  };
}

}  // namespace bench::torch_side
