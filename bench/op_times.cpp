// The float32 kernels of the SIMD levels timed alone, minigrad only, 1 thread: exp, tanh, sigmoid,
// GELU and softmax over 2^20 floats, and layer_norm on GPT-2's and tiny_lm's rows. Best of 7
// rounds of 30 calls each. Run it at each level as the library picks them:
//   MINIGRAD_CPU_CAPABILITY=default build/bench/op_times   (and avx2, avx512)
// The figures of docs/performance.md's sections on exp and layer_norm (2026-12-06) come from it.
#include <minigrad/minigrad.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace mg = minigrad;
namespace F = minigrad::nn::functional;

namespace {

template <class Fn>
void time(const char* name, double elements, Fn&& f) {
  for (int i = 0; i < 5; ++i) f();
  double best = 1e30;
  for (int round = 0; round < 7; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 30; ++i) f();
    const std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, dt.count() / 30);
  }
  std::printf("%-36s %9.1f us  %6.3f ns an element\n", name, best, best * 1e3 / elements);
}

}  // namespace

int main() {
  mg::set_num_threads(1);
  mg::manual_seed(0);
  const char* level = std::getenv("MINIGRAD_CPU_CAPABILITY");
  std::printf("MINIGRAD_CPU_CAPABILITY=%s\n", level ? level : "(unset: the best this CPU has)");
  {
    const std::int64_t n = 1 << 20;
    mg::Tensor x = mg::randn({n / 1024, 1024}) * 3.0;
    mg::NoGradGuard no_grad;
    time("exp (2^20)", n, [&] { mg::Tensor y = mg::exp(x); });
    time("tanh (2^20)", n, [&] { mg::Tensor y = mg::tanh(x); });
    time("sigmoid (2^20)", n, [&] { mg::Tensor y = mg::sigmoid(x); });
    time("gelu erf (2^20)", n, [&] { mg::Tensor y = F::gelu(x); });
    time("gelu tanh (2^20)", n, [&] { mg::Tensor y = F::gelu(x, "tanh"); });
    time("softmax rows of 1024 (2^20)", n, [&] { mg::Tensor y = mg::softmax(x, -1); });
    time("log_softmax rows of 1024 (2^20)", n, [&] { mg::Tensor y = mg::log_softmax(x, -1); });
  }
  for (const auto& [rows, cols] : {std::pair<std::int64_t, std::int64_t>{256, 768}, {768, 64}}) {
    mg::Tensor x = mg::randn({rows, cols}).requires_grad_();
    mg::Tensor w = mg::randn({cols}).requires_grad_(), b = mg::randn({cols}).requires_grad_();
    mg::Tensor g = mg::randn({rows, cols});
    char name[64];
    std::snprintf(name, sizeof name, "layer_norm [%lld, %lld] forward",
                  static_cast<long long>(rows), static_cast<long long>(cols));
    time(name, static_cast<double>(rows * cols), [&] {
      mg::NoGradGuard no_grad;
      mg::Tensor y = F::layer_norm(x, {cols}, w, b);
    });
    std::snprintf(name, sizeof name, "layer_norm [%lld, %lld] fwd+bwd",
                  static_cast<long long>(rows), static_cast<long long>(cols));
    time(name, static_cast<double>(rows * cols), [&] {
      mg::Tensor y = F::layer_norm(x, {cols}, w, b);
      auto grads = mg::autograd::grad({y}, {x, w, b}, {g});
    });
  }
}
