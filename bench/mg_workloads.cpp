// minigrad's side of the benchmark workloads (see workloads.h), and the raw cblas_sgemm floor.
#include <cblas.h>

#include <cmath>
#include <memory>
#include <string>

#include <minigrad/minigrad.h>

#include "workloads.h"

namespace bench::mg_side {

namespace mg = minigrad;
namespace nn = minigrad::nn;
namespace F = minigrad::nn::functional;

namespace {

/// The model and data of one attention training step; Modules cannot move, so it lives on the
/// heap and the returned function shares it.
struct AttentionModel {
  explicit AttentionModel(AttentionSize s)
      : W_q(s.d_model, s.d_k, false),
        W_k(s.d_model, s.d_k, false),
        W_v(s.d_model, s.d_k, false),
        x(mg::randn({s.batch, s.seq, s.d_model})),
        target(mg::randn({s.batch, s.seq, s.d_k})),
        opt({W_q->weight, W_k->weight, W_v->weight}, mg::optim::SGDOptions(0.01)),
        scale(1.0 / std::sqrt(static_cast<double>(s.d_k))) {}
  nn::Linear W_q, W_k, W_v;
  mg::Tensor x, target;
  mg::optim::SGD opt;
  double scale;

  void step() {
    mg::Tensor q = W_q(x), k = W_k(x), v = W_v(x);
    mg::Tensor scores = mg::matmul(q, k.transpose(-2, -1)) * scale;
    mg::Tensor weights = mg::softmax(scores, -1);
    mg::Tensor out = mg::matmul(weights, v);
    mg::Tensor loss = F::mse_loss(out, target);
    loss.backward();
    opt.step();
    opt.zero_grad();
  }
};

Run binary_op(mg::Tensor (*op)(const mg::Tensor&, const mg::Tensor&), std::int64_t n,
              bool with_grad) {
  mg::manual_seed(0);
  mg::Tensor a = mg::randn({n, n}), b = mg::randn({n, n});
  if (with_grad) {
    a.requires_grad_();
    b.requires_grad_();
  }
  return [a, b, op, with_grad](std::int64_t iters) {
    mg::GradModeGuard mode(with_grad);
    for (std::int64_t i = 0; i < iters; ++i) mg::Tensor c = op(a, b);
  };
}

}  // namespace

void set_num_threads(int n) { mg::set_num_threads(n); }

Run attention_step(AttentionSize size) {
  mg::manual_seed(0);
  auto model = std::make_shared<AttentionModel>(size);
  return [model](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) model->step();
  };
}

Run add_2x2(bool with_grad) {
  return binary_op([](const mg::Tensor& a, const mg::Tensor& b) { return mg::add(a, b); }, 2,
                   with_grad);
}

Run profiler_scope_off(bool with_scope) {
  return [with_scope](std::int64_t iters) {
    static volatile std::int64_t sink = 0;
    if (with_scope) {
      for (std::int64_t i = 0; i < iters; ++i) {
        MG_PROFILE_OP("bench_scope");
        sink = sink + 1;
      }
    } else {
      for (std::int64_t i = 0; i < iters; ++i) sink = sink + 1;
    }
  };
}

Run add_2x2_profiled(bool profiled) {
  Run run = add_2x2(false);
  return [run, profiled](std::int64_t iters) {
    if (!profiled) return run(iters);
    minigrad::profiler::Profile prof;
    run(iters);
  };
}

Run matmul_4x4(bool with_grad) {
  return binary_op([](const mg::Tensor& a, const mg::Tensor& b) { return mg::matmul(a, b); }, 4,
                   with_grad);
}

Run softmax_fwd_bwd(std::vector<std::int64_t> shape) {
  mg::manual_seed(0);
  mg::Tensor x = mg::randn(shape).requires_grad_();
  mg::Tensor g = mg::randn(shape);
  return [x, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      mg::Tensor y = mg::softmax(x, -1);
      auto grads = mg::autograd::grad({y}, {x}, {g});
    }
  };
}

Run randn(std::int64_t n) {
  mg::manual_seed(0);
  return [n](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) mg::Tensor x = mg::randn({n});
  };
}

Run dropout_fwd_bwd(std::vector<std::int64_t> shape) {
  mg::manual_seed(0);
  mg::Tensor x = mg::randn(shape).requires_grad_();
  mg::Tensor g = mg::randn(shape);
  return [x, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      mg::Tensor y = F::dropout(x, 0.1, true);
      auto grads = mg::autograd::grad({y}, {x}, {g});
    }
  };
}

Run bmm_fwd_bwd(std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n) {
  mg::manual_seed(0);
  mg::Tensor a = mg::randn({batch, m, k}).requires_grad_();
  mg::Tensor b = mg::randn({batch, k, n}).requires_grad_();
  mg::Tensor g = mg::randn({batch, m, n});
  return [a, b, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      mg::Tensor c = mg::bmm(a, b);
      auto grads = mg::autograd::grad({c}, {a, b}, {g});
    }
  };
}

Run layer_norm_fwd_bwd() {
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({64, 128, 256}).requires_grad_();
  mg::Tensor w = mg::randn({256}).requires_grad_(), b = mg::randn({256}).requires_grad_();
  mg::Tensor g = mg::randn({64, 128, 256});
  return [x, w, b, g](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      mg::Tensor y = F::layer_norm(x, {256}, w, b);
      auto grads = mg::autograd::grad({y}, {x, w, b}, {g});
    }
  };
}

Run cross_entropy_fwd_bwd() {
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({2048, 1000}).requires_grad_();
  mg::Tensor target = mg::randint(0, 1000, {2048});
  return [x, target](std::int64_t iters) {
    for (std::int64_t i = 0; i < iters; ++i) {
      mg::Tensor loss = F::cross_entropy(x, target);
      auto grads = mg::autograd::grad({loss}, {x});
    }
  };
}

Run reduce_1024(const char* which) {
  mg::manual_seed(0);
  mg::Tensor x = mg::randn({1024, 1024});
  std::string w = which;
  return [x, w](std::int64_t iters) {
    mg::NoGradGuard no_grad;
    for (std::int64_t i = 0; i < iters; ++i) {
      mg::Tensor y = w == "sum dim 1"   ? mg::sum(x, {1})
                     : w == "sum dim 0" ? mg::sum(x, {0})
                                        : x.mean();
    }
  };
}

Run matmul_square(std::int64_t n) {
  mg::manual_seed(0);
  mg::Tensor a = mg::randn({n, n}), b = mg::randn({n, n});
  return [a, b](std::int64_t iters) {
    mg::NoGradGuard no_grad;
    for (std::int64_t i = 0; i < iters; ++i) mg::Tensor c = mg::matmul(a, b);
  };
}

Run cblas_sgemm_square(std::int64_t n) {
  mg::manual_seed(0);
  auto a = std::make_shared<std::vector<float>>(mg::randn({n, n}).to_vector<float>());
  auto b = std::make_shared<std::vector<float>>(mg::randn({n, n}).to_vector<float>());
  auto c = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n * n));
  return [a, b, c, n](std::int64_t iters) {
    const int m = static_cast<int>(n);
    for (std::int64_t i = 0; i < iters; ++i)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, a->data(), m, b->data(),
                  m, 0.0f, c->data(), m);
  };
}

}  // namespace bench::mg_side
