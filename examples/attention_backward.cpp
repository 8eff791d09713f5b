// Write attention's backward yourself: a custom Function (attention_function.h), checked against
// finite differences and against the built-in scaled_dot_product_attention.
//   build/examples/attention_backward
#include <CLI/CLI.hpp>

#include <minigrad/minigrad.h>

#include <cstdio>

#include "attention_function.h"

namespace mg = minigrad;
namespace F = mg::nn::functional;

int main(int argc, char** argv) {
  CLI::App app{
      "Attention's backward as a custom Function, checked by gradcheck and against the built-in "
      "op."};
  CLI11_PARSE(app, argc, argv);  // --help; no options
  mg::manual_seed(0);
  // float64 for the finite differences: 2 sentences, 4 queries, 5 keys, d = 8, values of 3.
  auto q = mg::randn({2, 4, 8}, mg::kFloat64).requires_grad_();
  auto k = mg::randn({2, 5, 8}, mg::kFloat64).requires_grad_();
  auto v = mg::randn({2, 5, 3}, mg::kFloat64).requires_grad_();

  auto attention = [](const std::vector<mg::Tensor>& in) {
    return Attention::apply(in[0], in[1], in[2]);
  };
  auto first = mg::autograd::gradcheck_report(attention, {q, k, v});
  auto second = mg::autograd::gradgradcheck_report(attention, {q, k, v});
  std::printf("gradcheck: %s (%lld Jacobian entries)\n",
              first.ok ? "passed" : first.message.c_str(), static_cast<long long>(first.checked));
  std::printf("gradgradcheck: %s (%lld entries)\n", second.ok ? "passed" : second.message.c_str(),
              static_cast<long long>(second.checked));

  // The same numbers as the built-in op, forward and backward.
  auto g = mg::randn({2, 4, 3}, mg::kFloat64);
  auto mine = Attention::apply(q, k, v);
  auto grads_mine = mg::autograd::grad({mine}, {q, k, v}, {g});
  auto builtin = F::scaled_dot_product_attention(q, k, v);
  auto grads_builtin = mg::autograd::grad({builtin}, {q, k, v}, {g});
  auto max_diff = [](const mg::Tensor& a, const mg::Tensor& b) {
    return (a - b).abs().max().item<double>();
  };
  std::printf("grad_fn: %s\n", mine.grad_fn()->name().c_str());
  std::printf("max |mine - built-in|: out %.3g, dq %.3g, dk %.3g, dv %.3g\n",
              max_diff(mine, builtin), max_diff(grads_mine[0], grads_builtin[0]),
              max_diff(grads_mine[1], grads_builtin[1]), max_diff(grads_mine[2], grads_builtin[2]));
  bool same = max_diff(mine, builtin) < 1e-12 &&
              max_diff(grads_mine[0], grads_builtin[0]) < 1e-12 &&
              max_diff(grads_mine[1], grads_builtin[1]) < 1e-12 &&
              max_diff(grads_mine[2], grads_builtin[2]) < 1e-12;
  return first.ok && second.ok && same ? 0 : 1;
}
