// The program tests/viz/check_gdb_printers.sh runs under gdb: a tensor with a grad_fn, a leaf, an
// int64 tensor, an undefined one and a module, all alive where stop_here() is called.
#include <minigrad/minigrad.h>

// TensorImpl is private: naming it here puts its layout into this program's debug information,
// as building minigrad itself with -g would.
#include "tensor_impl.h"

namespace mg = minigrad;

struct Attention : mg::nn::Module {
  mg::nn::Linear W_q{3, 3, false};
  mg::nn::Linear W_k{3, 3, false};
  Attention() : mg::nn::Module("Attention") {
    register_module("W_q", W_q);
    register_module("W_k", W_k);
  }
};

__attribute__((noinline)) void stop_here() { asm volatile(""); }

int main() {
  mg::Tensor w = mg::tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}).requires_grad_();
  mg::Tensor y = w * 2.0;
  mg::Tensor ids = mg::arange(0.0, 8.0, 1.0, mg::kInt64);
  mg::Tensor none;
  Attention model;
  [[maybe_unused]] const mg::TensorImpl* impl = w.impl();
  stop_here();
  return static_cast<int>(y.numel() + ids.numel() + (none.defined() ? 1 : 0)) - 14;
}
