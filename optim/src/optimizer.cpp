#include "minigrad/optim/optimizer.h"

#include <unordered_set>

namespace minigrad::optim {

void Optimizer::zero_grad(bool set_to_none) {
  for (std::size_t i = 0; i < num_param_groups(); ++i) {
    for (const Tensor& p : params(i)) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
        continue;
      }
      // PyTorch detaches a grad that has history (create_graph) before zeroing it in place.
      if (g.requires_grad()) {
        g = g.detach();
        p.set_grad(g);
      }
      NoGradGuard no_grad;
      g.zero_();
    }
  }
}

void Optimizer::check_new_params(const std::vector<Tensor>& new_params) const {
  std::unordered_set<const TensorImpl*> seen;
  for (std::size_t i = 0; i < num_param_groups(); ++i) {
    for (const Tensor& p : params(i)) seen.insert(p.impl());
  }
  for (const Tensor& p : new_params) {
    MG_CHECK(p.defined(), name_.c_str(), "optimizer got an undefined tensor as a parameter");
    MG_CHECK(p.is_leaf(), name_.c_str(), "can't optimize a non-leaf Tensor");
    MG_CHECK(p.is_floating_point(), name_.c_str(), "can only optimize floating-point tensors, got ",
             dtype_name(p.dtype()));
    // NOTE: PyTorch only warns about a duplicate inside one group; we refuse it, since a
    // duplicate would be stepped twice.
    MG_CHECK(seen.insert(p.impl()).second, name_.c_str(),
             "some parameters appear more than once in the parameter groups");
  }
}

}  // namespace minigrad::optim
