#pragma once
// nn::Linear: y = x W^T + b, as torch.nn.Linear.
#include "minigrad/nn/module.h"

namespace minigrad::nn {

class LinearImpl : public Cloneable<LinearImpl> {
 public:
  /// weight [out_features, in_features] and, if bias, bias [out_features], initialised as
  /// PyTorch does: kaiming_uniform_(weight, a = sqrt(5)), bias U(-1/sqrt(in), 1/sqrt(in)).
  LinearImpl(std::int64_t in_features, std::int64_t out_features, bool bias = true,
             Dtype dtype = get_default_dtype());

  /// x [..., in_features] -> [..., out_features]; any number of leading dims.
  Tensor forward(const Tensor& x) const;
  /// forward(x) through the module's hooks (Note [Forward hooks]).
  Tensor operator()(const Tensor& x) const {
    return call_with_hooks([this](const Tensor& a) { return forward(a); }, x);
  }
  /// Registers new weight and bias tensors and initialises them (libtorch's reset(); clone()
  /// calls it, Note [Cloning]).
  void reset() override;
  /// Draws new initial values (PyTorch's reset_parameters).
  void reset_parameters();
  std::string extra_repr() const override;

  std::int64_t in_features;
  std::int64_t out_features;
  Tensor weight;
  Tensor bias;  // undefined when bias = false

 private:
  bool with_bias_;
  Dtype dtype_;  // the dtype reset() makes the parameters in
};
MG_MODULE(Linear);

}  // namespace minigrad::nn
