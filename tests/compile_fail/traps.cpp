// Ports that would compile and silently differ from PyTorch, and must not compile (issue 35):
// tests/compile_fail/check.cmake builds this file (the EXCLUDE_FROM_ALL object library
// nn_compile_errors, one compiler run) and expects it to fail with every message below, each the
// static_assert of one function. tests/nn/test_traps.cpp checks what is still allowed.
#include "minigrad/minigrad.h"
#include "minigrad/nn/nn.h"

namespace mg = minigrad;
namespace nn = minigrad::nn;

// Note [Braces for module lists]: the Linears would be built right to left.
// expect: nn::Sequential(a, b, ...) with two or more modules built in the call builds them in an
// unspecified order (g++: right to left), so their initial weights differ from PyTorch's for the
// same seed: write nn::Sequential{a, b, ...} (braces build left to right, as PyTorch)
nn::Sequential sequential_of_temporaries() {
  return nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
}

// expect: nn::ModuleList(a, b, ...) with two or more modules built in the call builds them in an
// unspecified order (g++: right to left), so their initial weights differ from PyTorch's for the
// same seed: write nn::ModuleList{a, b, ...} (braces build left to right, as PyTorch)
nn::ModuleList module_list_of_temporaries() { return nn::ModuleList(nn::Linear(2, 2), nn::Tanh()); }

// The order before PyTorch 2's: true would become dropout_p = 1.0.
// expect: scaled_dot_product_attention takes PyTorch's order (q, k, v, attn_mask, dropout_p,
// is_causal, scale): write (q, k, v, {}, 0.0, true) for causal attention
mg::Tensor old_sdpa_order(const mg::Tensor& q) {
  return nn::functional::scaled_dot_product_attention(q, q, q, {}, true);
}
