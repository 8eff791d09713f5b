#pragma once
// Private: how an op records itself in the graph.
//
// Note [Backward next to forward]
// Each op records a FunctionNode whose backward is a lambda written directly under the op's
// forward code, as in micrograd. The lambda captures what backward needs (the inputs it reads, a
// dim, a scalar) and returns one gradient per input, in the inputs' order, possibly undefined for
// inputs that need none (check node.needs_input_grad(i)). It returns gradients shaped like the
// op's output where the input was broadcast: the engine reduces them (Note [The engine]).
// The op's own output must never be captured (that is a reference cycle output -> grad_fn ->
// output); pass SaveOutput::kYes and call node.output() inside the lambda instead.
// release() destroys the lambda, and with it the saved tensors, after a backward without
// retain_graph; a second backward through such a node throws.
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tensor_impl.h"

namespace minigrad::detail {

class FunctionNode;
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad, FunctionNode& node)>;

enum class SaveOutput { kNo, kYes };

class FunctionNode final : public Node {
 public:
  FunctionNode(const char* name, BackwardFn fn, bool saves_tensors)
      : name_(name), fn_(std::move(fn)), saves_tensors_(saves_tensors) {}
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(const Tensor& grad) override;
  void release() override;

  /// The op's output, re-attached to this node (for formulas like exp's grad * result).
  Tensor output();
  void save_output(const Tensor& out);

 private:
  const char* name_;
  BackwardFn fn_;
  bool saves_tensors_;
  bool released_ = false;
  // The output's data without its grad_fn (Note [Backward next to forward]).
  std::shared_ptr<TensorImpl> output_;
};

/// The node that adds incoming gradients into a leaf's grad().
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  std::string name() const override { return "AccumulateGrad"; }
  std::vector<Tensor> apply(const Tensor& grad) override;
  const std::shared_ptr<TensorImpl>& leaf() const { return leaf_; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

/// Anomaly mode (Note [Anomaly mode], autograd.h): throws if node n returned a nan or inf
/// gradient for a finite incoming gradient.
void check_backward_anomaly(const Node& n, const Tensor& grad, const std::vector<Tensor>& grads);

/// The edge a gradient for t flows along: its grad_fn, its leaf accumulator, or none.
Edge gradient_edge(const Tensor& t);

/// Makes `out` the result of a differentiable op on `inputs` if any input requires grad and grad
/// mode is on. `saves_tensors` says whether the lambda captured tensors (then a second backward
/// without retain_graph throws, as in PyTorch).
void record(const char* name, Tensor& out, std::initializer_list<const Tensor*> inputs,
            BackwardFn backward, bool saves_tensors = true,
            SaveOutput save_output = SaveOutput::kNo);
void record(const char* name, Tensor& out, const std::vector<Tensor>& inputs, BackwardFn backward,
            bool saves_tensors = true);

}  // namespace minigrad::detail
